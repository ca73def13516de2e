"""General-register operands and the scalar immediates (MOV, ADD, branches)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .common import OperandError, _shape, parse_int


@dataclass(frozen=True)
class GReg:
    """``Xn``/``Wn`` (``width`` 64/32); register 31 is ``zr`` or, where ``sp`` is set, SP."""

    field: str
    width: int = 64
    sp: bool = False
    kind = "gpr"

    def parse(self, text: str) -> dict:
        name = text.strip().lower()
        prefix = "x" if self.width == 64 else "w"
        if name == ("sp" if self.width == 64 else "wsp"):
            if not self.sp:
                raise OperandError(f"{name} is not allowed here")
            return {self.field: 31}
        if name == prefix + "zr":
            if self.sp:
                raise OperandError(f"{name} is not allowed here")
            return {self.field: 31}
        m = re.fullmatch(rf"{prefix}([0-9]+)", name)
        if not m:
            if re.fullmatch(r"[xw]([0-9]+|zr|sp)|sp", name):
                raise _shape(f"{name} is not a {self.width}-bit register here")
            raise _shape(f"'{text.strip()}' is not a register ({prefix}0-{prefix}30)")
        n = int(m.group(1))
        if n > 30:
            raise OperandError(f"'{name}' is not a register ({prefix}0-{prefix}30)")
        return {self.field: n}

    def text(self, fields: dict) -> str:
        n = fields[self.field]
        prefix = "x" if self.width == 64 else "w"
        if n == 31:
            return ("sp" if self.width == 64 else "wsp") if self.sp else prefix + "zr"
        return f"{prefix}{n}"

    def value(self, fields: dict) -> int:
        return fields[self.field]


@dataclass(frozen=True)
class Imm:
    """``#imm``: an unsigned field ``field`` of ``bits``, scaled by ``scale`` (LDR's #imm12 * 8)."""

    field: str
    bits: int
    scale: int = 1
    kind = "imm"

    def parse(self, text: str) -> dict:
        value = parse_int(text)
        if value is None:
            raise _shape(f"'{text.strip()}' is not an immediate")
        limit = ((1 << self.bits) - 1) * self.scale
        if value % self.scale or not 0 <= value <= limit:
            multiple = f" multiple of {self.scale}" if self.scale > 1 else ""
            raise OperandError(f"the immediate must be a{multiple} in 0-{limit}, not {value}")
        return {self.field: value // self.scale}

    def text(self, fields: dict) -> str:
        return f"#{fields[self.field] * self.scale}"

    def value(self, fields: dict) -> int:
        return fields[self.field] * self.scale


@dataclass(frozen=True)
class MovWideImm:
    """MOVZ's ``#imm`` as ``mov`` writes it: a 16-bit chunk imm16 shifted left by 16*hw."""

    width: int = 64
    kind = "imm"

    def parse(self, text: str) -> dict:
        value = parse_int(text)
        if value is None:
            raise _shape(f"'{text.strip()}' is not an immediate")
        if -(1 << (self.width - 1)) <= value < 0:
            value += 1 << self.width  # llvm writes a value with the top bit set as a negative number
        if value < 0 or value >= 1 << self.width:
            raise OperandError(f"#{value} is not a MOVZ immediate (isasim's mov takes 0-{(1 << self.width) - 1} "
                               f"with one non-zero 16-bit chunk)")
        for hw in range(self.width // 16):
            if value >> (16 * hw) << (16 * hw) == value and value >> (16 * hw) < 1 << 16:
                return {"imm16": value >> (16 * hw), "hw": hw}
        raise OperandError(f"#{value:#x} is not a MOVZ immediate (one non-zero 16-bit chunk, shifted by 0, 16, "
                           f"32 or 48)")

    def text(self, fields: dict) -> str:
        value = self.value(fields)
        return f"#{value - (1 << self.width) if value >> (self.width - 1) else value}"  # signed, as llvm prints it

    def value(self, fields: dict) -> int:
        return fields["imm16"] << (16 * fields["hw"])


@dataclass(frozen=True)
class AddImm:
    """ADD/SUB's ``#imm12{, lsl #12}`` (field sh says whether it is shifted)."""

    kind = "imm"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"(.+?)(?:,\s*lsl\s*#?\s*([0-9]+))?", text.strip().lower())
        value = parse_int(m.group(1))
        if value is None:
            raise _shape(f"'{text.strip()}' is not an immediate")
        shift = m.group(2)
        if shift is not None and shift not in ("0", "12"):
            raise OperandError(f"the immediate's shift must be lsl #0 or lsl #12, not lsl #{shift}")
        if not 0 <= value < 1 << 12:
            raise OperandError(f"the immediate must be 0-4095 (optionally lsl #12), not {value}")
        return {"imm12": value, "sh": 1 if shift == "12" else 0}

    def text(self, fields: dict) -> str:
        return f"#{fields['imm12']}" + (", lsl #12" if fields["sh"] else "")

    def value(self, fields: dict) -> int:
        return fields["imm12"] << (12 * fields["sh"])


@dataclass(frozen=True)
class BaseOffset:
    """``[Xn|SP{, #pimm}]``: an unsigned offset, a multiple of ``scale`` (field imm12 = pimm / scale)."""

    scale: int = 8
    kind = "mem"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\[\s*(\w+)\s*(?:,\s*([^\]]+?))?\s*\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a memory operand [Xn{{, #imm}}]")
        base = GReg("Rn", sp=True).parse(m.group(1))
        offset = Imm("imm12", 12, self.scale).parse(m.group(2)) if m.group(2) else {"imm12": 0}
        return {**base, **offset}

    def text(self, fields: dict) -> str:
        base = GReg("Rn", sp=True).text(fields)
        return f"[{base}, #{fields['imm12'] * self.scale}]" if fields["imm12"] else f"[{base}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields["Rn"], fields["imm12"] * self.scale


@dataclass(frozen=True)
class BranchTarget:
    """A label or address, encoded as a signed word offset from the instruction (field imm of bits)."""

    field: str
    bits: int
    kind = "target"

    def parse(self, text: str, address: int = 0, labels: dict | None = None) -> dict:
        name = text.strip()
        if labels is not None and name in labels:
            target = labels[name]
        else:
            target = parse_int(name)
            if target is None:
                if re.fullmatch(r"[A-Za-z_.$][\w.$]*", name):
                    raise OperandError(f"undefined label '{name}'")
                raise _shape(f"'{name}' is not a label or an address")
        offset = target - address
        if offset % 4 or not -(1 << (self.bits + 1)) <= offset < 1 << (self.bits + 1):
            raise OperandError(f"the branch target {target:#x} is out of reach of {address:#x}")
        return {self.field: (offset >> 2) & ((1 << self.bits) - 1)}

    def offset(self, fields: dict) -> int:
        raw = fields[self.field]
        return (raw - (1 << self.bits) if raw >> (self.bits - 1) else raw) * 4

    def text(self, fields: dict, address: int = 0) -> str:
        return f"{address + self.offset(fields):#x}"

    def value(self, fields: dict) -> int:
        return self.offset(fields)  # relative: translate adds the instruction's address


@dataclass(frozen=True)
class SImm:
    """``#imm``: a signed (two's complement) field ``field`` of ``bits`` (ADDVL's and RDSVL's -32..31)."""

    field: str
    bits: int
    kind = "imm"

    def parse(self, text: str) -> dict:
        value = parse_int(text)
        if value is None:
            raise _shape(f"'{text.strip()}' is not an immediate")
        low, high = -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        if not low <= value <= high:
            raise OperandError(f"the immediate must be in {low} to {high}, not {value}")
        return {self.field: value & ((1 << self.bits) - 1)}

    def text(self, fields: dict) -> str:
        return f"#{self.value(fields)}"

    def value(self, fields: dict) -> int:
        raw = fields[self.field]
        return raw - (1 << self.bits) if raw >> (self.bits - 1) else raw

