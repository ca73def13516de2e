"""Predicates as counters and the SME2 multi-vector memory forms (semantics/sve_counters.py): PTRUE of a
counter (``ptrue pn8.b``), WHILELT/LE/LO/LS/GE/GT/HS/HI into a counter (VLx2, VLx4) and into a predicate (the
LE, LS, GE, GT, HS, HI beside sve.py's LT and LO), CNTP of a predicate and of a counter, PSEL, and LD1B/H/W/D,
LDNT1*, ST1*, STNT1* of two or four registers, consecutive (``{z0.b - z3.b}``) or strided (``{z0.b, z4.b, z8.b,
z12.b}``), scalar plus scalar and scalar plus immediate."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

from ..encoding import Encoding
from ..operands import GReg, PReg
from ..operands.sve import (AnyGoverning, ConsecutiveList, IndexAddress, MultiVlAddress, PNGoverning, PNReg,
                            PselIndex, StridedList, VectorCount)
from ..semantics import sve_counters
from .base import A64Form, add

SIZES = {"b": ("00", 8), "h": ("01", 16), "s": ("10", 32), "d": ("11", 64)}
_WHILE = {"ge": ("0", "0", "0"), "gt": ("0", "0", "1"), "lt": ("0", "1", "0"), "le": ("0", "1", "1"),
          "hs": ("1", "0", "0"), "hi": ("1", "0", "1"), "lo": ("1", "1", "0"), "ls": ("1", "1", "1")}
_COMPARE = {"ge": "ge", "gt": "gt", "lt": "lt", "le": "le", "hs": "ge", "hi": "gt", "lo": "lt", "ls": "le"}


def _doc(function, **names):
    doc = (function.func if isinstance(function, partial) else function).__doc__
    for name, value in names.items():
        doc = doc.replace(name, str(value))
    return doc


for _t, (_sz, _esize) in SIZES.items():
    _T = _t.upper()
    add(A64Form(
        f"PTRUE_pn_{_t}", "ptrue", f"PTRUE <PNd>.{_T}", f"a predicate-as-counter with every {_esize}-bit element active",
        Encoding(f"00100101 size={_sz} 1 00000 01111000 00010 PNd:3"), (PNReg(_t, "PNd"),),
        partial(sve_counters.ptrue_counter, esize=_esize), feature="SME2",
        doc=_doc(sve_counters.ptrue_counter, esize=_esize), group="predicate"))
    for _cond, (_u, _lt, _eq) in _WHILE.items():
        _op, _unsigned = _COMPARE[_cond], _u == "1"
        add(A64Form(
            f"WHILE{_cond.upper()}_pn_{_t}", f"while{_cond}", f"WHILE{_cond.upper()} <PNd>.{_T}, <Xn>, <Xm>, <vl>",
            f"a counter of {_esize}-bit elements over two or four vectors: the elements while Xn {_cond.upper()} Xm "
            f"as Xn steps {'down' if _op in ('ge', 'gt') else 'up'}; sets NZCV",
            Encoding(f"00100101 size={_sz} 1 Rm:5 01 vl:1 0 U={_u} lt={_lt} Rn:5 1 eq={_eq} PNd:3"),
            (PNReg(_t, "PNd"), GReg("Rn"), GReg("Rm"), VectorCount()),
            partial(sve_counters.while_counter, esize=_esize, op=_op, unsigned=_unsigned), feature="SME2",
            doc=_doc(sve_counters.while_counter), group="predicate"))
        if _cond in ("lt", "lo"):
            continue  # sve.py's WHILELT/WHILELO
        for _width, _sf in ((64, "1"), (32, "0")):
            _r = "X" if _width == 64 else "W"
            add(A64Form(
                f"WHILE{_cond.upper()}_{_t}_{_r.lower()}", f"while{_cond}",
                f"WHILE{_cond.upper()} <Pd>.{_T}, <{_r}n>, <{_r}m>",
                f"a predicate of {_esize}-bit elements: the elements while {_r}n {_cond.upper()} {_r}m as {_r}n steps "
                f"{'down (from the last element)' if _op in ('ge', 'gt') else 'up'}; sets NZCV",
                Encoding(f"00100101 size={_sz} 1 Rm:5 000 sf={_sf} U={_u} lt={_lt} Rn:5 eq={_eq} Pd:4"),
                (PReg(_t, "Pd"), GReg("Rn", _width), GReg("Rm", _width)),
                partial(sve_counters.while_predicate, esize=_esize, width=_width, op=_op, unsigned=_unsigned),
                feature="SME", doc=_doc(sve_counters.while_predicate), group="predicate"))



@dataclass(frozen=True)
class _PselRegister(AnyGoverning):
    """PSEL's Pd and Pn: p0-p15, or pn0-pn15 (the same registers as counters: llvm prints them as p)."""

    def parse(self, text: str) -> dict:
        return super().parse(re.sub(r"^([ \t]*)pn(?=[0-9])", r"\1p", text.lower()))


# PSEL: the element size is the lowest set bit of tsz (tszh:tszl), the index i1 and tsz's bits above it
for _t, _esize, _middle, _imm in (
        ("b", 8, "tszh:1 1 tszl:2 1", (("i1", 1), ("tszh", 1), ("tszl", 2))),
        ("h", 16, "tszh:1 1 tszl:1 10", (("i1", 1), ("tszh", 1), ("tszl", 1))),
        ("s", 32, "tszh:1 1 100", (("i1", 1), ("tszh", 1))),
        ("d", 64, "1 1 000", (("i1", 1),))):
    add(A64Form(
        f"PSEL_{_t}", "psel", f"PSEL <Pd>, <Pn>, <Pm>.{_t.upper()}[<Wv>, <imm>]",
        f"Pn if the {_esize}-bit element (Wv + imm) of Pm is active, else all false",
        Encoding(f"00100101 i1:1 {_middle} Rv:2 01 Pn:4 0 Pm:4 0 Pd:4"),
        (_PselRegister("Pd"), _PselRegister("Pn"), PselIndex(_t, _imm)), partial(sve_counters.psel, esize=_esize),
        feature="SME2", doc=_doc(sve_counters.psel), group="predicate"))

for _t, (_sz, _esize) in SIZES.items():
    _T = _t.upper()
    add(A64Form(
        f"CNTP_{_t}", "cntp", f"CNTP <Xd>, <Pg>, <Pn>.{_T}",
        f"the number of {_esize}-bit elements active in both Pg and Pn",
        Encoding(f"00100101 size={_sz} 1 00000 10 Pg:4 0 Pn:4 Rd:5"),
        (GReg("Rd"), AnyGoverning("Pg"), PReg(_t, "Pn")), partial(sve_counters.cntp_predicate, esize=_esize),
        feature="SME", doc=_doc(sve_counters.cntp_predicate, esize=_esize), group="count"))
    add(A64Form(
        f"CNTP_pn_{_t}", "cntp", f"CNTP <Xd>, <PNn>.{_T}, <vl>",
        f"the number of {_esize}-bit elements a counter makes active over two or four vectors",
        Encoding(f"00100101 size={_sz} 1 00000 10000 vl:1 1 PNn:4 Rd:5"),
        (GReg("Rd"), PNReg(_t, "PNn", bits=4), VectorCount()), partial(sve_counters.cntp_counter, esize=_esize),
        feature="SME2", doc=_doc(sve_counters.cntp_counter), group="count"))

# LD1*/LDNT1*/ST1*/STNT1* of two or four vectors under a counter
for _letter, (_msz, _esize), _t in (("b", SIZES["b"], "b"), ("h", SIZES["h"], "h"), ("w", SIZES["s"], "s"),
                                     ("d", SIZES["d"], "d")):
    _shift = (_esize // 8).bit_length() - 1
    for _store in (False, True):
        for _n in ("0", "1"):
            _m = ("st" if _store else "ld") + ("nt1" if _n == "1" else "1") + _letter
            _function = sve_counters.st1_multi if _store else sve_counters.ld1_multi
            for _nreg in (2, 4):
                for _strided in (False, True):
                    if _strided:
                        _list = StridedList(_t, _nreg)
                        _low = f"T:1 N={_n} Zt:3" if _nreg == 2 else f"T:1 N={_n} 0 Zt:2"
                    else:
                        _list = ConsecutiveList(_t, _nreg)
                        _low = f"Zt:4 N={_n}" if _nreg == 2 else f"Zt:3 0 N={_n}"
                    for _mode, _addr, _address in (
                            ("ss", "0 L={} Rm:5", IndexAddress(_shift)), ("imm", "1 L={} 0 imm4:4", MultiVlAddress(_nreg))):
                        _x4 = "1" if _nreg == 4 else "0"
                        _syntax_list = (f"{{<Zt1>.{_t.upper()}, <Zt2>.{_t.upper()}{', <Zt3>, <Zt4>' if _nreg == 4 else ''}}}"
                                        if _strided else f"{{<Zt1>.{_t.upper()}-<Zt{_nreg}>.{_t.upper()}}}")
                        _syntax_address = ("[<Xn|SP>, <Xm>" + (f", LSL #{_shift}]" if _shift else "]")) if _mode == "ss" \
                            else "[<Xn|SP>{, #<imm>, MUL VL}]"
                        add(A64Form(
                            f"{_m.upper()}_{'strided' if _strided else 'multi'}_x{_nreg}_{_mode}", _m,
                            f"{_m.upper()} {_syntax_list}, <PNg>{'' if _store else '/Z'}, {_syntax_address}",
                            f"{'store' if _store else 'load'} {_nreg} {'strided' if _strided else 'consecutive'} Z "
                            f"registers of {_esize}-bit elements {'to' if _store else 'from'} consecutive memory under a "
                            f"counter" + (" (inactive elements zeroed)" if not _store else "")
                            + (", non-temporal" if _n == "1" else ""),
                            Encoding(f"1010000 {'1' if _strided else '0'} 0 {_addr.format('1' if _store else '0')} "
                                     f"{_x4} msz={_msz} PNg:3 Rn:5 {_low}"),
                            (_list, PNGoverning(zeroing=not _store), _address),
                            partial(_function, esize=_esize, mode=_mode), feature="SME2",
                            doc=_doc(_function), group="z_memory"))
