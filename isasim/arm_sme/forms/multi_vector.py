"""SME2's integer operations on groups of Z registers (semantics/multi_vector_integer.py): SMAX/SMIN/UMAX/UMIN,
SRSHL/URSHL and SQDMULH of a group of two or four and a single vector or a group; SCLAMP/UCLAMP of a group and
SVE2's of one vector; SEL of groups under a predicate-as-counter;
ZIP/UZP of two vectors into two and of four into four (``.q`` too); SUNPK/UUNPK into two or four; the saturating
narrows SQCVT/UQCVT/SQCVTU and SQCVTN/UQCVTN/SQCVTUN; the rounding shifts right SQRSHR/UQRSHR/SQRSHRU and
SQRSHRN/UQRSHRN/SQRSHRUN.  llvm prints a group of two as ``{ z0.h, z1.h }``, of four as ``{ z0.h - z3.h }``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

from ..encoding import Encoding
from ..operands import GReg, PredMerge, VectorRegister, ZList, ZReg
from ..operands.common import OperandError, _shape, parse_int
from ..operands.sve import PNGoverning
from ..semantics import multi_vector_integer as mvi
from .base import A64Form, add

SIZES = {"b": ("00", 8), "h": ("01", 16), "s": ("10", 32), "d": ("11", 64)}


@dataclass(frozen=True)
class NarrowShift:
    """``#<imm>`` of a narrowing shift right: 1 to ``total``, held as total - imm in the fields named (most
    significant first: SQRSHR's imm4, imm5, or i22 and imm5)."""

    total: int
    fields: tuple
    kind = "imm"

    def parse(self, text: str) -> dict:
        value = parse_int(text)  # the '#' may be left out, as clang allows
        if value is None:
            raise _shape(f"'{text.strip()[:40]}' is not an immediate")
        if not 1 <= value <= self.total:
            raise OperandError(f"the shift must be 1-{self.total}, not {value}")
        raw, out = self.total - value, {}
        for name, width in reversed(self.fields):
            out[name] = raw & ((1 << width) - 1)
            raw >>= width
        return out

    def value(self, fields: dict) -> int:
        raw = 0
        for name, width in self.fields:
            raw = (raw << width) | fields[name]
        return self.total - raw

    def text(self, fields: dict) -> str:
        return f"#{self.value(fields)}"


def _group(t, nreg, field):
    return ZList(t, nreg, field, align=nreg)


# ---- SMAX SMIN UMAX UMIN SRSHL URSHL SQDMULH: {Zdn}, {Zdn}, Zm or {Zm} ------------------------------------
_BINARY = {"smax": ("000", "000", "0"), "umax": ("000", "000", "1"), "smin": ("000", "001", "0"),
           "umin": ("000", "001", "1"), "srshl": ("010", "001", "0"), "urshl": ("010", "001", "1"),
           "sqdmulh": ("100", "000", "0")}
_WHAT = {"smax": "the signed maximum", "umax": "the unsigned maximum", "smin": "the signed minimum",
         "umin": "the unsigned minimum", "srshl": "a signed rounding shift left (right where negative)",
         "urshl": "an unsigned rounding shift left (right where negative)",
         "sqdmulh": "the high half of the doubled product, saturated"}
def add_in_place_group_forms(op: str, t: str, sz: str, opc: str, u: str, what: str, execute, feature: str) -> None:
    """``OP {Zdn1-Zdnn}, {Zdn1-Zdnn}, Zm`` and ``..., {Zm1-Zmn}`` for two and four registers: the SME2 layout the
    integer (SMAX ... SQDMULH) and floating-point (FMAX ... BFMINNM) in-place group operations share.  ``opc`` is
    bits 7:5 and 4:1's upper part as the Arm ARM splits them, ``execute(nreg, single)`` the semantics bound."""
    T = t.upper()
    for nreg in (2, 4):
        x4 = "1" if nreg == 4 else "0"
        zdn = "Zdn:4" if nreg == 2 else "Zdn:3 0"
        group = f"{{<Zdn1>.{T}-<Zdn{nreg}>.{T}}}"
        for single in (True, False):
            zm = "10 Zm:4" if single else ("1 Zm:4 0" if nreg == 2 else "1 Zm:3 00")
            function = execute(nreg, single)
            add(A64Form(
                f"{op.upper()}_x{nreg}_{'single' if single else 'multi'}_{t}", op,
                f"{op.upper()} {group}, {group}, " + (f"<Zm>.{T}" if single else f"{{<Zm1>.{T}-<Zm{nreg}>.{T}}}"),
                f"{what} of {nreg} registers and " + ("one register" if single else f"{nreg} registers") + ", in place",
                Encoding(f"11000001 size={sz} {zm} 101{'0' if single else '1'} {x4} {opc} {zdn} U={u}"),
                (_group(t, nreg, "Zdn"), _group(t, nreg, "Zdn"), ZReg(t, "Zm", bits=4) if single else _group(t, nreg, "Zm")),
                function, feature=feature, doc=function.func.__doc__, group="z_data"))


for _op, (_a, _b, _u) in _BINARY.items():
    for _t, (_sz, _esize) in SIZES.items():
        add_in_place_group_forms(
            _op, _t, _sz, f"{_a} {_b}", _u, f"{_WHAT[_op]} of each {_esize}-bit element",
            lambda nreg, single, op=_op, esize=_esize: partial(mvi.binary, esize=esize, nreg=nreg, op=op, single=single),
            "SME2")

# ---- SCLAMP UCLAMP -------------------------------------------------------------------------------------
for _op, _u in (("sclamp", "0"), ("uclamp", "1")):
    _how = "signed" if _u == "0" else "unsigned"
    for _t, (_sz, _esize) in SIZES.items():
        _T = _t.upper()
        add(A64Form(
            f"{_op.upper()}_z_{_t}", _op, f"{_op.upper()} <Zd>.{_T}, <Zn>.{_T}, <Zm>.{_T}",
            f"each {_esize}-bit element of Zd clamped ({_how}) to between Zn's and Zm's",
            Encoding(f"01000100 size={_sz} 0 Zm:5 11000 U={_u} Zn:5 Zd:5"),
            (ZReg(_t, "Zd"), ZReg(_t, "Zn"), ZReg(_t, "Zm")),
            partial(mvi.clamp, esize=_esize, nreg=1, signed=_u == "0"), feature="SME",
            doc=mvi.clamp.__doc__, group="z_data"))
        for _nreg in (2, 4):
            add(A64Form(
                f"{_op.upper()}_x{_nreg}_{_t}", _op,
                f"{_op.upper()} {{<Zd1>.{_T}-<Zd{_nreg}>.{_T}}}, <Zn>.{_T}, <Zm>.{_T}",
                f"each {_esize}-bit element of {_nreg} registers clamped ({_how}) to between Zn's and Zm's",
                Encoding(f"11000001 size={_sz} 1 Zm:5 1100 {'1' if _nreg == 4 else '0'} 1 Zn:5 "
                         + ("Zd:4" if _nreg == 2 else "Zd:3 0") + f" U={_u}"),
                (_group(_t, _nreg, "Zd"), ZReg(_t, "Zn"), ZReg(_t, "Zm")),
                partial(mvi.clamp, esize=_esize, nreg=_nreg, signed=_u == "0"), feature="SME2",
                doc=mvi.clamp.__doc__, group="z_data"))

# MOVPRFX (unpredicated): llvm refuses the line after it unless it is its destructive partner (SCLAMP zd, ... here),
# so clang checks it in pairs (tests/arm_sme/semantics/test_multi_vector_vs_qemu.py), not line by line ("prefix")
add(A64Form(
    "MOVPRFX_z", "movprfx", "MOVPRFX <Zd>, <Zn>", "copy Zn to Zd (the unpredicated prefix of a destructive instruction)",
    Encoding("00000100 00100000 101111 Zn:5 Zd:5"), (VectorRegister("z", "Zd"), VectorRegister("z", "Zn")),
    mvi.movprfx, feature="SME", doc=mvi.movprfx.__doc__, group="z_data",
    extra={"prefix": True, "not_fuzzed": "clang refuses a MOVPRFX whose next instruction is not its partner"}))

# ---- SEL {Zd}, PNg, {Zn}, {Zm} -----------------------------------------------------------------------------
for _t, (_sz, _esize) in SIZES.items():
    _T = _t.upper()
    for _nreg, _pattern in ((2, "1 Zm:4 0 100 PNg:3 Zn:4 0 Zd:4 0"), (4, "1 Zm:3 01 100 PNg:3 Zn:3 00 Zd:3 00")):
        _l = "{<Z%s1>.%s-<Z%s%d>.%s}"
        add(A64Form(
            f"SEL_x{_nreg}_{_t}", "sel",
            f"SEL {_l % ('d', _T, 'd', _nreg, _T)}, <PNg>, {_l % ('n', _T, 'n', _nreg, _T)}, "
            f"{_l % ('m', _T, 'm', _nreg, _T)}",
            f"each {_esize}-bit element of {_nreg} registers from Zn's where the counter makes it active, else Zm's",
            Encoding(f"11000001 size={_sz} {_pattern}"),
            (_group(_t, _nreg, "Zd"), PNGoverning(zeroing=False), _group(_t, _nreg, "Zn"), _group(_t, _nreg, "Zm")),
            partial(mvi.sel, esize=_esize, nreg=_nreg), feature="SME2", doc=mvi.sel.__doc__, group="z_data"))

# ---- ZIP UZP ----------------------------------------------------------------------------------------------
for _op, _u in (("zip", "0"), ("uzp", "1")):
    _unzip = _u == "1"
    _how = ("the even-numbered then odd-numbered elements of the pair as one vector" if _unzip else
            "the elements of Zn and Zm interleaved")
    for _t, _sz, _esize, _q in (*((t, sz, e, "0") for t, (sz, e) in SIZES.items()), ("q", "00", 128, "1")):
        _T = _t.upper()
        add(A64Form(
            f"{_op.upper()}_x2_{_t}", _op, f"{_op.upper()} {{<Zd1>.{_T}-<Zd2>.{_T}}}, <Zn>.{_T}, <Zm>.{_T}",
            f"two registers of {_esize}-bit elements: {_how}",
            Encoding(f"11000001 size={_sz} 1 Zm:5 11010 {_q} Zn:5 Zd:4 U={_u}"),
            (_group(_t, 2, "Zd"), ZReg(_t, "Zn"), ZReg(_t, "Zm")),
            partial(mvi.zip_pair, esize=_esize, unzip=_unzip), feature="SME2", doc=mvi.zip_vectors.__doc__,
            group="z_data"))
        add(A64Form(
            f"{_op.upper()}_x4_{_t}", _op, f"{_op.upper()} {{<Zd1>.{_T}-<Zd4>.{_T}}}, {{<Zn1>.{_T}-<Zn4>.{_T}}}",
            f"four registers of {_esize}-bit elements: " + ("every fourth element of the group, from each of the "
                                                          "first four" if _unzip else "the four interleaved"),
            Encoding(f"11000001 size={_sz} 11011 {_q} 111000 Zn:3 00 Zd:3 U={_u} 0"),
            (_group(_t, 4, "Zd"), _group(_t, 4, "Zn")),
            partial(mvi.zip_four, esize=_esize, unzip=_unzip), feature="SME2", doc=mvi.zip_vectors.__doc__,
            group="z_data"))

# ---- SUNPK UUNPK ------------------------------------------------------------------------------------------
for _op, _u in (("sunpk", "0"), ("uunpk", "1")):
    for _t, _half in (("h", "b"), ("s", "h"), ("d", "s")):
        _sz, _esize = SIZES[_t]
        _T, _H = _t.upper(), _half.upper()
        _how = "sign" if _u == "0" else "zero"
        add(A64Form(
            f"{_op.upper()}_x2_{_t}", _op, f"{_op.upper()} {{<Zd1>.{_T}-<Zd2>.{_T}}}, <Zn>.{_H}",
            f"the {_esize // 2}-bit elements of Zn {_how}-extended into two registers (low half, then high)",
            Encoding(f"11000001 size={_sz} 100101 111000 Zn:5 Zd:4 U={_u}"),
            (_group(_t, 2, "Zd"), ZReg(_half, "Zn")),
            partial(mvi.unpack, esize=_esize, nreg=2, signed=_u == "0"), feature="SME2", doc=mvi.unpack.__doc__,
            group="z_data"))
        add(A64Form(
            f"{_op.upper()}_x4_{_t}", _op, f"{_op.upper()} {{<Zd1>.{_T}-<Zd4>.{_T}}}, {{<Zn1>.{_H}-<Zn2>.{_H}}}",
            f"the {_esize // 2}-bit elements of two registers {_how}-extended into four",
            Encoding(f"11000001 size={_sz} 110101 111000 Zn:4 0 Zd:3 0 U={_u}"),
            (_group(_t, 4, "Zd"), _group(_half, 2, "Zn")),
            partial(mvi.unpack, esize=_esize, nreg=4, signed=_u == "0"), feature="SME2", doc=mvi.unpack.__doc__,
            group="z_data"))

# ---- SQCVT UQCVT SQCVTU (x2, x4) and SQCVTN UQCVTN SQCVTUN (x4) --------------------------------------------
_NARROW = {"sqcvt": ("0", "0", "0"), "uqcvt": ("0", "0", "1"), "sqcvtu": ("0", "1", "0"),
           "sqcvtn": ("1", "0", "0"), "uqcvtn": ("1", "0", "1"), "sqcvtun": ("1", "1", "0")}


def _narrowings(table: dict):
    """(op, N, op bit, U, signed, unsigned result, Zd size, Zn size, nreg, esize, order, saturation) for each
    saturating narrowing of ``table`` (name -> N, op, U) and each of its shapes: two .S to .H (not the
    interleaving N forms), four .S to .B, four .D to .H."""
    for op, (n, o, u) in table.items():
        signed, unsigned_result = u == "0", o == "1" or u == "1"
        for d, source, nreg in (("h", "s", 2), ("b", "s", 4), ("h", "d", 4)):
            if nreg == 2 and n == "1":
                continue
            yield (op, n, o, u, signed, unsigned_result, d, source, nreg, SIZES[source][1],
                   "interleaved" if n == "1" else "one register after another",
                   "unsigned" if unsigned_result else "signed")


for _op, _n, _o, _u, _signed, _unsigned_result, _d, _s, _nreg, _esize, _how, _sat in _narrowings(_NARROW):
    if _nreg == 2:
        _enc = f"11000001 0 op={_o} 100011 111000 Zn:4 U={_u} Zd:5"
    else:
        _enc = f"11000001 sz={'1' if _s == 'd' else '0'} op={_o} 110011 111000 Zn:3 N={_n} U={_u} Zd:5"
    add(A64Form(
        f"{_op.upper()}_x{_nreg}_{_d}", _op,
        f"{_op.upper()} <Zd>.{_d.upper()}, {{<Zn1>.{_s.upper()}-<Zn{_nreg}>.{_s.upper()}}}",
        f"the {_esize}-bit elements of {_nreg} registers saturated ({_sat}) to {_esize // _nreg} bits, {_how}",
        Encoding(_enc), (ZReg(_d, "Zd"), _group(_s, _nreg, "Zn")),
        partial(mvi.saturate_narrow, esize=_esize, nreg=_nreg, signed=_signed, unsigned_result=_unsigned_result,
                interleave=_n == "1"), feature="SME2", doc=mvi.saturate_narrow.__doc__, group="z_data"))

# ---- SQRSHR UQRSHR SQRSHRU (x2, x4) and SQRSHRN UQRSHRN SQRSHRUN (x4) ----------------------------------------
_SHIFTS = {name.replace("cvt", "rshr"): bits for name, bits in _NARROW.items()}  # the same N, op, U
for _op, _n, _o, _u, _signed, _unsigned_result, _d, _s, _nreg, _esize, _how, _sat in _narrowings(_SHIFTS):
    if _nreg == 2:
        _enc, _shift = f"11000001 111 op={_o} imm4:4 110101 Zn:4 U={_u} Zd:5", NarrowShift(16, (("imm4", 4),))
    elif _s == "s":
        _enc = f"11000001 011 imm5:5 11011 N={_n} Zn:3 op={_o} U={_u} Zd:5"
        _shift = NarrowShift(32, (("imm5", 5),))
    else:
        _enc = f"11000001 1 i22:1 1 imm5:5 11011 N={_n} Zn:3 op={_o} U={_u} Zd:5"
        _shift = NarrowShift(64, (("i22", 1), ("imm5", 5)))
    add(A64Form(
        f"{_op.upper()}_x{_nreg}_{_d}", _op,
        f"{_op.upper()} <Zd>.{_d.upper()}, {{<Zn1>.{_s.upper()}-<Zn{_nreg}>.{_s.upper()}}}, #<const>",
        f"the {_esize}-bit elements of {_nreg} registers shifted right with rounding, saturated ({_sat}) to "
        f"{_esize // _nreg} bits, {_how}",
        Encoding(_enc), (ZReg(_d, "Zd"), _group(_s, _nreg, "Zn"), _shift),
        partial(mvi.shift_narrow, esize=_esize, nreg=_nreg, signed=_signed, unsigned_result=_unsigned_result,
                interleave=_n == "1"), feature="SME2", doc=mvi.shift_narrow.__doc__, group="z_data"))


# ---- REVD, MOVT ---------------------------------------------------------------------------------------------
add(A64Form(
    "REVD_z", "revd", "REVD <Zd>.Q, <Pg>/M, <Zn>.Q",
    "the two 64-bit doublewords of each active 128-bit quadword of Zn swapped (inactive ones of Zd kept)",
    Encoding("00000101 00101110 100 Pg:3 Zn:5 Zd:5"), (ZReg("q", "Zd"), PredMerge("Pg"), ZReg("q", "Zn")),
    mvi.revd, feature="SME", doc=mvi.revd.__doc__, group="z_data"))


@dataclass(frozen=True)
class ZT0Offset:
    """``zt0[<offs>]`` of MOVT: a byte offset 0, 8, ... 56 into ZT0 (field off3 = offs / 8)."""

    kind = "zt0"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"zt0[ \t]*\[([^\]]+)\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not zt0[offset]")
        offset = parse_int(m.group(1), hash="forbidden")
        if offset is None or offset % 8 or not 0 <= offset <= 56:
            raise OperandError(f"the offset into zt0 is a multiple of 8 in 0-56, not {m.group(1).strip()}")
        return {"off3": offset // 8}

    def text(self, fields: dict) -> str:
        return f"zt0[{fields['off3'] * 8}]"

    def value(self, fields: dict) -> int:
        return fields["off3"] * 8


for _l, _operands, _function, _syntax, _what in (
        ("0", (GReg("Rt"), ZT0Offset()), mvi.movt_to_general, "MOVT <Xt>, ZT0[<offs>]", "a doubleword of ZT0 to Xt"),
        ("1", (ZT0Offset(), GReg("Rt")), mvi.movt_to_table, "MOVT ZT0[<offs>], <Xt>", "Xt into a doubleword of ZT0")):
    add(A64Form(
        f"MOVT_{'zt0' if _l == '1' else 'x'}", "movt", _syntax, f"move {_what} (offset 0, 8, ... 56 bytes)",
        Encoding(f"11000000 0100 11 {_l} 0 0 off3:3 0011111 Rt:5"), _operands, _function, feature="SME2",
        doc=_function.__doc__, group="za"))
