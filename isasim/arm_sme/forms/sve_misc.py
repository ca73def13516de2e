"""More SVE forms compiled ACLE code holds (semantics/sve_misc.py): ADD/SUB/SUBR/SQADD/UQADD/SQSUB/UQSUB of an
immediate, EXT (destructive, and of a register pair), TBL (one and two table registers), INCP/DECP of a general
register, LD1RQB/H/W/D (scalar plus immediate, scalar plus scalar)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

from ..encoding import Encoding
from ..operands import GReg, Governing, PReg, ZList, ZReg
from ..operands.common import OperandError, _shape, parse_int
from ..operands.sve import IndexAddress
from ..semantics import sve_misc
from .base import A64Form, add

SIZES = {"b": ("00", 8), "h": ("01", 16), "s": ("10", 32), "d": ("11", 64)}


@dataclass(frozen=True)
class ShiftedUImm:
    """``#imm{, LSL #8}``: an unsigned imm8 and sh, printed as llvm prints it (the shifted value; ``#0, lsl #8``)."""

    esize: int
    kind = "imm"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"(.*?)(?:,[ \t]*lsl[ \t]*(#?[ \t]*[0-9a-fx]+))?", text.strip().lower())
        value = parse_int(m.group(1))
        if value is None:
            raise _shape(f"'{text.strip()[:40]}' is not an immediate")
        if m.group(2) is not None:
            if parse_int(m.group(2), hash="required") != 8 or self.esize == 8:
                raise OperandError(f"the shift is lsl #8 (not on .b elements), not {m.group(2)}")
            if not 0 <= value <= 255:
                raise OperandError(f"the immediate must be 0-255 before lsl #8, not {value}")
            return {"imm8": value, "sh": 1}
        if 0 <= value <= 255:
            return {"imm8": value, "sh": 0}
        if self.esize > 8 and value % 256 == 0 and 0 <= value // 256 <= 255:
            return {"imm8": value // 256, "sh": 1}
        raise OperandError(f"#{value} is no unsigned 8-bit immediate, optionally shifted by 8")

    def text(self, fields: dict) -> str:
        return "#0, lsl #8" if fields["imm8"] == 0 and fields["sh"] else f"#{self.value(fields)}"

    def value(self, fields: dict) -> int:
        return fields["imm8"] << (8 * fields["sh"])


@dataclass(frozen=True)
class QuadOffset:
    """``[<Xn|SP>{, #<imm>}]`` of LD1RQ*: imm a multiple of 16 in -128..112 (field imm4 = imm / 16)."""

    kind = "mem"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\[[ \t]*([a-z0-9_]+)[ \t]*(?:,([^\]]+))?\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a memory operand [Xn{{, #imm}}]")
        if m.group(2) is not None and parse_int(m.group(2)) is None:
            raise _shape(f"'{text.strip()}' has an index register, not an immediate")
        offset = parse_int(m.group(2), hash="required") if m.group(2) is not None else 0
        if offset % 16 or not -128 <= offset <= 112:
            raise OperandError(f"the offset must be a multiple of 16 in -128 to 112, not {offset}")
        return {**GReg("Rn", sp=True).parse(m.group(1)), "imm4": (offset // 16) & 0xF}

    def value(self, fields: dict) -> tuple[int, int]:
        raw = fields["imm4"] - 16 if fields["imm4"] >> 3 else fields["imm4"]
        return fields["Rn"], raw * 16

    def text(self, fields: dict) -> str:
        n, offset = self.value(fields)
        base = GReg("Rn", sp=True).text(fields)
        return f"[{base}, #{offset}]" if offset else f"[{base}]"


@dataclass(frozen=True)
class ExtImm:
    """``#<imm>`` of EXT: 0-255, in imm8h (high 5 bits) and imm8l (low 3)."""

    kind = "imm"

    def parse(self, text: str) -> dict:
        value = parse_int(text, hash="required")
        if value is None:
            raise _shape(f"'{text.strip()[:40]}' is not an immediate")
        if not 0 <= value <= 255:
            raise OperandError(f"the immediate must be in 0-255, not {value}")
        return {"imm8h": value >> 3, "imm8l": value & 7}

    def text(self, fields: dict) -> str:
        return f"#{self.value(fields)}"

    def value(self, fields: dict) -> int:
        return (fields["imm8h"] << 3) | fields["imm8l"]


for _t, (_sz, _esize) in SIZES.items():
    _T = _t.upper()
    for _op, _opc in (("add", "000"), ("sub", "001"), ("subr", "011"), ("sqadd", "100"), ("uqadd", "101"),
                      ("sqsub", "110"), ("uqsub", "111")):
        add(A64Form(
            f"{_op.upper()}_z_imm_{_t}", _op, f"{_op.upper()} <Zdn>.{_T}, <Zdn>.{_T}, #<imm>{{, <shift>}}",
            f"{_op.upper()} of an unsigned immediate (0-255, optionally shifted by 8) and each {_esize}-bit element",
            Encoding(f"00100101 size={_sz} 100 opc={_opc} 11 sh:1 imm8:8 Zdn:5"),
            (ZReg(_t, "Zdn"), ZReg(_t, "Zdn"), ShiftedUImm(_esize)),
            partial(sve_misc.arithmetic_immediate, esize=_esize, op=_op), feature="SME",
            doc=sve_misc.arithmetic_immediate.__doc__, group="z_data",
            extra={"reserved": {"sh": 1}} if _t == "b" else {}))
    add(A64Form(
        f"TBL_{_t}", "tbl", f"TBL <Zd>.{_T}, {{<Zn>.{_T}}}, <Zm>.{_T}",
        f"each {_esize}-bit element of Zm indexes Zn's elements (zero past the end)",
        Encoding(f"00000101 size={_sz} 1 Zm:5 001100 Zn:5 Zd:5"), (ZReg(_t, "Zd"), ZList(_t, 1, "Zn"), ZReg(_t, "Zm")),
        partial(sve_misc.tbl_single, esize=_esize), feature="SME", doc=sve_misc.tbl_single.__doc__, group="z_data"))
    add(A64Form(
        f"TBL_pair_{_t}", "tbl", f"TBL <Zd>.{_T}, {{<Zn1>.{_T}, <Zn2>.{_T}}}, <Zm>.{_T}",
        f"each {_esize}-bit element of Zm indexes the elements of Zn then Zn+1 (zero past the end)",
        Encoding(f"00000101 size={_sz} 1 Zm:5 001010 Zn:5 Zd:5"), (ZReg(_t, "Zd"), ZList(_t, 2, "Zn"), ZReg(_t, "Zm")),
        partial(sve_misc.tbl_pair, esize=_esize), feature="SME", doc=sve_misc.tbl.__doc__, group="z_data"))
    for _m, _d in (("incp", "0"), ("decp", "1")):
        add(A64Form(
            f"{_m.upper()}_x_{_t}", _m, f"{_m.upper()} <Xdn>, <Pm>.{_T}",
            f"{'add' if _d == '0' else 'subtract'} the number of active {_esize}-bit elements of Pm "
            f"{'to' if _d == '0' else 'from'} a 64-bit register",
            Encoding(f"00100101 size={_sz} 1011 0 D={_d} 10001 00 Pm:4 Rdn:5"), (GReg("Rdn"), PReg(_t, "Pm")),
            partial(sve_misc.count_predicate, esize=_esize, decrement=_d == "1"), feature="SME",
            doc=sve_misc.count_predicate.__doc__, group="z_data"))

add(A64Form(
    "EXT_z_destructive", "ext", "EXT <Zdn>.B, <Zdn>.B, <Zm>.B, #<imm>",
    "the bytes of Zm : Zdn from position imm (0-255; 0 past the vector)",
    Encoding("00000101 001 imm8h:5 000 imm8l:3 Zm:5 Zdn:5"),
    (ZReg("b", "Zdn"), ZReg("b", "Zdn"), ZReg("b", "Zm"), ExtImm()), sve_misc.ext_destructive, feature="SME",
    doc=sve_misc.ext.__doc__, group="z_data"))
add(A64Form(
    "EXT_z_pair", "ext", "EXT <Zd>.B, {<Zn1>.B, <Zn2>.B}, #<imm>",
    "the bytes of Zn+1 : Zn from position imm (0-255; 0 past the vector)",
    Encoding("00000101 011 imm8h:5 000 imm8l:3 Zn:5 Zd:5"),
    (ZReg("b", "Zd"), ZList("b", 2, "Zn"), ExtImm()), sve_misc.ext_pair, feature="SME",
    doc=sve_misc.ext_pair.__doc__, group="z_data"))

for _letter, (_msz, _esize), _t in (("b", SIZES["b"], "b"), ("h", SIZES["h"], "h"), ("w", SIZES["s"], "s"),
                                     ("d", SIZES["d"], "d")):
    _shift = (_esize // 8).bit_length() - 1
    for _mode, _low, _address in (("imm", "0 imm4:4 001", QuadOffset()), ("ss", "Rm:5 000", IndexAddress(_shift))):
        add(A64Form(
            f"LD1RQ{_letter.upper()}_{_mode}", f"ld1rq{_letter}",
            f"LD1RQ{_letter.upper()} {{<Zt>.{_t.upper()}}}, <Pg>/Z, " + ("[<Xn|SP>{, #<imm>}]" if _mode == "imm" else
                                                                     "[<Xn|SP>, <Xm>" + (f", LSL #{_shift}]" if _shift else "]")),
            f"load a quadword of {_esize}-bit elements (active ones; the rest zero) and repeat it along the vector",
            Encoding(f"1010010 msz={_msz} 00 {_low} Pg:3 Rn:5 Zt:5"), (ZList(_t, 1, "Zt"), Governing(zeroing=True), _address),
            partial(sve_misc.ld1rq, esize=_esize, mode=_mode), feature="SME", doc=sve_misc.ld1rq.__doc__,
            group="z_memory", extra={"reserved": {"Rm": 31}} if _mode == "ss" else {}))
