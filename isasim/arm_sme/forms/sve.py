"""The SVE instructions a streaming kernel needs: contiguous LD1*/ST1*, LDR/STR of Z and P,
PTRUE, WHILELT/WHILELO, CNT*, RDSVL, ADDVL, ADDSVL, ADDSPL."""

from __future__ import annotations

from functools import partial

from ..encoding import Encoding
from ..operands import (GReg, Governing, MulVlAddress, Pattern, PReg, ScalarPlusScalar, SImm, SplitVlAddress,
                        VectorRegister, ZList)
from ..semantics import predicates_and_counts, vector_memory
from .base import X_OR_SP, A64Form, add


# SVE LD1B/LD1H/LD1W/LD1D (zero-extending into wider elements) and ST1* (truncating), contiguous:
# (memory size, element size) -> the load's dtype and the store's msz:size
_CONTIGUOUS = [(m, e) for m in (8, 16, 32, 64) for e in (8, 16, 32, 64) if e >= m]
_LOAD_DTYPE = {(8, 8): "0000", (8, 16): "0001", (8, 32): "0010", (8, 64): "0011", (16, 16): "0101",
               (16, 32): "0110", (16, 64): "0111", (32, 32): "1010", (32, 64): "1011", (64, 64): "1111"}
_SIZE_BITS = {8: "00", 16: "01", 32: "10", 64: "11"}
_SUFFIX = {8: "b", 16: "h", 32: "s", 64: "d"}
for _msize, _esize in _CONTIGUOUS:
    _letter, _t = {8: "b", 16: "h", 32: "w", 64: "d"}[_msize], _SUFFIX[_esize]
    _shift = (_msize // 8).bit_length() - 1
    _how = "" if _msize == _esize else (" (each zero-extended)", " (each truncated)")
    for _m in ("ld1", "st1"):
        _load = _m == "ld1"
        _function = vector_memory.ld1_z if _load else vector_memory.st1_z
        _head = "1010010 dtype=" + _LOAD_DTYPE[_msize, _esize] if _load else \
            f"1110010 msz={_SIZE_BITS[_msize]} size={_SIZE_BITS[_esize]}"
        _p = "<Pg>/Z" if _load else "<Pg>"
        _what = (f"{'load' if _load else 'store'} the active {_esize}-bit elements of a Z register "
                 f"{'from' if _load else 'to'} consecutive {_msize}-bit memory elements"
                 + (_how[0 if _load else 1] if _how else "") + (", inactive ones zeroed" if _load else ""))
        for _mode, _tail, _address, _syntax in (
                ("imm", f"0 imm4:4 {'101' if _load else '111'} Pg:3 Rn:5 Zt:5", MulVlAddress("imm4", signed=True),
                 "[<Xn|SP>{, #<imm>, MUL VL}]"),
                ("ss", "Rm:5 010 Pg:3 Rn:5 Zt:5", ScalarPlusScalar(_shift),
                 "[<Xn|SP>, <Xm>" + (f", LSL #{_shift}]" if _shift else "]"))):
            add(A64Form(
                f"{_m.upper()}{_letter.upper()}_z_{_t}_{_mode}", f"{_m}{_letter}",
                f"{_m.upper()}{_letter.upper()} {{<Zt>.{_t.upper()}}}, {_p}, {_syntax}", _what + f" ({_mode} address)",
                Encoding(f"{_head} {_tail}"), (ZList(_t, 1, "Zt"), Governing(zeroing=_load), _address),
                partial(_function, msize=_msize, esize=_esize, mode=_mode), feature="SME",
                doc=_function.__doc__.replace("msize", str(_msize)).replace("esize", str(_esize)),
                group="z_memory", extra={"reserved": {"Rm": 31}} if _mode == "ss" else {}))


# SVE LDR/STR of a whole Z or P register: [Xn|SP{, #imm, MUL VL}], imm -256..255 (imm9h:imm9l)
for _m, _top in (("ldr", "10000101"), ("str", "11100101")):
    for _r, _bits, _tail in (("z", "010", "Zt:5"), ("p", "000", "0 Pt:4")):
        _function = getattr(vector_memory, f"{_m}_{_r}")
        add(A64Form(
            f"{_m.upper()}_{_r}", _m, f"{_m.upper()} <{_r.upper()}t>, [<Xn|SP>{{, #<imm>, MUL VL}}]",
            f"{'load' if _m == 'ldr' else 'store'} a whole {'Z' if _r == 'z' else 'predicate'} register "
            f"({'SVL/8' if _r == 'z' else 'SVL/64'} bytes; the offset in registers)",
            Encoding(f"{_top} 10 imm9h:6 {_bits} imm9l:3 Rn:5 {_tail}"),
            (VectorRegister(_r, "Zt" if _r == "z" else "Pt"), SplitVlAddress()), _function, feature="SME",
            doc=_function.__doc__, group="z_memory"))


# ---- SVE predicates, element counts and vector lengths (in streaming mode) -------------------------------
SIZES = {"b": ("00", 8), "h": ("01", 16), "s": ("10", 32), "d": ("11", 64)}  # the size field and esize in bits
for _t, (_sz, _esize) in SIZES.items():
    add(A64Form(
        f"PTRUE_{_t}", "ptrue", f"PTRUE <Pd>.{_t.upper()}{{, <pattern>}}",
        f"set the first elements a pattern counts of a predicate of {_esize}-bit elements (the rest clear)",
        Encoding(f"00100101 size={_sz} 011 000 111000 pattern:5 0 Pd:4"), (PReg(_t, "Pd"), Pattern()),
        partial(predicates_and_counts.ptrue, esize=_esize), feature="SME",
        doc=predicates_and_counts.ptrue.__doc__.replace("esize", str(_esize)),
        group="predicate"))
    for _width, _sf in ((64, "1"), (32, "0")):
        for _m, _u, _how in (("whilelt", "0", "signed"), ("whilelo", "1", "unsigned")):
            _r = "X" if _width == 64 else "W"
            add(A64Form(
                f"{_m.upper()}_{_t}_{_r.lower()}", _m, f"{_m.upper()} <Pd>.{_t.upper()}, <{_r}n>, <{_r}m>",
                f"a predicate of {_esize}-bit elements: element e active while {_r}n + e < {_r}m ({_how}); sets NZCV",
                Encoding(f"00100101 size={_sz} 1 Rm:5 000 sf={_sf} U={_u} 1 Rn:5 0 Pd:4"),
                (PReg(_t, "Pd"), GReg("Rn", _width), GReg("Rm", _width)),
                partial(predicates_and_counts.whilelt, esize=_esize, width=_width, unsigned=_u == "1"), feature="SME",
                doc=predicates_and_counts.whilelt.__doc__.replace("esize", str(_esize)).replace("rsize", str(_width)),
                group="predicate"))
    add(A64Form(
        f"CNT{'W' if _t == 's' else _t.upper()}", f"cnt{'w' if _t == 's' else _t}",
        f"CNT{'W' if _t == 's' else _t.upper()} <Xd>{{, <pattern>{{, MUL #<imm>}}}}",
        f"the number of {_esize}-bit elements a pattern counts, times a multiplier",
        Encoding(f"00000100 size={_sz} 10 imm4:4 11100 0 pattern:5 Rd:5"), (GReg("Rd"), Pattern(multiplier=True)),
        partial(predicates_and_counts.cnt, esize=_esize), feature="SME",
        doc=predicates_and_counts.cnt.__doc__.replace("esize", str(_esize)),
        group="count"))

for _form in (
    A64Form("RDSVL", "rdsvl", "RDSVL <Xd>, #<imm>", "the streaming vector length in bytes, times -32..31",
            Encoding("00000100 1 0 1 11111 01011 imm6:6 Rd:5"), (GReg("Rd"), SImm("imm6", 6)),
            predicates_and_counts.rdsvl,
            feature="SME", doc=predicates_and_counts.rdsvl.__doc__, group="count"),
    A64Form("ADDVL", "addvl", "ADDVL <Xd|SP>, <Xn|SP>, #<imm>", "add -32..31 times the vector length in bytes",
            Encoding("00000100 0 01 Rn:5 01010 imm6:6 Rd:5"), (X_OR_SP("Rd"), X_OR_SP("Rn"), SImm("imm6", 6)),
            predicates_and_counts.addvl, feature="SME", doc=predicates_and_counts.addvl.__doc__, group="count"),
    A64Form("ADDSVL", "addsvl", "ADDSVL <Xd|SP>, <Xn|SP>, #<imm>",
            "add -32..31 times the streaming vector length in bytes",
            Encoding("00000100 0 01 Rn:5 01011 imm6:6 Rd:5"), (X_OR_SP("Rd"), X_OR_SP("Rn"), SImm("imm6", 6)),
            predicates_and_counts.addsvl, feature="SME", doc=predicates_and_counts.addsvl.__doc__, group="count"),
    A64Form("ADDSPL", "addspl", "ADDSPL <Xd|SP>, <Xn|SP>, #<imm>",
            "add -32..31 times the streaming predicate length in bytes",
            Encoding("00000100 0 11 Rn:5 01011 imm6:6 Rd:5"), (X_OR_SP("Rd"), X_OR_SP("Rn"), SImm("imm6", 6)),
            predicates_and_counts.addspl, feature="SME", doc=predicates_and_counts.addspl.__doc__, group="count"),
):
    add(_form)
