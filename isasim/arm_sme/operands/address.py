"""Memory addresses: [Xn{, #imm, MUL VL}], [Xn, Xm{, LSL #s}] and the split-immediate form."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .common import OperandError, _shape, parse_int
from .scalar import GReg


@dataclass(frozen=True)
class MulVlAddress:
    """``[<Xn|SP>{, #<imm>, MUL VL}]``: a base and an offset in vectors (field ``field``, 0 to
    2^bits - 1 or, ``signed``, -2^(bits-1) to 2^(bits-1) - 1)."""

    field: str
    bits: int = 4
    signed: bool = False
    kind = "mem_vl"
    conflict = "the memory offset must equal the vector select offset (ldr za[w12, 3], [x0, #3, mul vl])"

    def _range(self) -> tuple[int, int]:
        return (-(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1) if self.signed else (0, (1 << self.bits) - 1)

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\[[ \t]*([a-z0-9_]+)[ \t]*(?:,(.+?),[ \t]*mul[ \t]+vl[ \t]*)?\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a memory operand [Xn{{, #imm, mul vl}}]")
        base = GReg("Rn", sp=True).parse(m.group(1))
        offset = parse_int(m.group(2)) if m.group(2) is not None else 0
        low, high = self._range()
        if offset is None or not low <= offset <= high:
            raise OperandError(f"the offset must be #{low} to #{high}, mul vl, not {m.group(2).strip()[:40]}")
        return {**base, self.field: offset & ((1 << self.bits) - 1)}

    def value(self, fields: dict) -> tuple[int, int]:
        raw = fields[self.field]
        if self.signed and raw >> (self.bits - 1):
            raw -= 1 << self.bits
        return fields["Rn"], raw

    def text(self, fields: dict) -> str:
        n, offset = self.value(fields)
        base = GReg("Rn", sp=True).text(fields)
        return f"[{base}, #{offset}, mul vl]" if offset else f"[{base}]"


@dataclass(frozen=True)
class ScalarPlusScalar:
    """``[<Xn|SP>, <Xm>{, LSL #<shift>}]``: base plus an index register scaled by the element size.
    ``xzr_is_none``: Xm = XZR is the form without an index, printed ``[Xn]`` (the SME tile loads);
    else XZR is not allowed (the SVE contiguous loads, where Rm = 31 is another instruction)."""

    shift: int
    xzr_is_none: bool = False
    kind = "mem_index"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\[[ \t]*([a-z0-9_]+)[ \t]*(?:,[ \t]*([a-z0-9_]+)[ \t]*(?:,[ \t]*lsl(?:[ \t]+|(?=#))([^\]]+))?)?\]",
                         text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a memory operand [Xn, Xm{{, lsl #{self.shift}}}]")
        base, index, shift = m.groups()
        fields = GReg("Rn", sp=True).parse(base)
        if index is None:
            if not self.xzr_is_none:
                raise _shape(f"'{text.strip()}' has no index register")
            return {**fields, "Rm": 31}
        fields.update(GReg("Rm").parse(index))
        if fields["Rm"] == 31 and not self.xzr_is_none:
            raise OperandError(f"the index register must be one of x0-x30 here, not {index}")
        if (parse_int(shift, signed=False) if shift is not None else 0) != self.shift:
            want = f"lsl #{self.shift}" if self.shift else "no shift"
            raise OperandError(f"the index here is scaled by the element size: {want}, not "
                               f"{'lsl #' + shift if shift is not None else 'no shift'}")
        return fields

    def text(self, fields: dict) -> str:
        base = GReg("Rn", sp=True).text(fields)
        if fields["Rm"] == 31 and self.xzr_is_none:
            return f"[{base}]"
        shift = f", lsl #{self.shift}" if self.shift else ""
        return f"[{base}, {GReg('Rm').text(fields)}{shift}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields["Rn"], fields["Rm"]


@dataclass(frozen=True)
class SplitVlAddress:
    """``[<Xn|SP>{, #<imm>, MUL VL}]`` with a 9-bit signed imm split as the Arm ARM draws it: imm9h
    (its high 6 bits) and imm9l (its low 3)."""

    kind = "mem_vl"

    def parse(self, text: str) -> dict:
        fields = MulVlAddress("imm9", bits=9, signed=True).parse(text)
        raw = fields.pop("imm9")
        return {**fields, "imm9h": raw >> 3, "imm9l": raw & 7}

    def _joined(self, fields: dict) -> dict:
        return {"Rn": fields["Rn"], "imm9": (fields["imm9h"] << 3) | fields["imm9l"]}

    def text(self, fields: dict) -> str:
        return MulVlAddress("imm9", bits=9, signed=True).text(self._joined(fields))

    def value(self, fields: dict) -> tuple[int, int]:
        return MulVlAddress("imm9", bits=9, signed=True).value(self._joined(fields))

