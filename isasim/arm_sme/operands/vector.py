"""SVE operands: Z registers and lists of them, indexed Z elements, predicates and patterns."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .common import REGISTER_NUMBER, SIZE_NOTE, SIZES_DISAGREE, OperandError, _shape, parse_int


def _zreg(text: str) -> tuple[int, str]:
    m = re.fullmatch(rf"z({REGISTER_NUMBER})\.([bhsdq])", text.strip().lower())
    if not m or int(m.group(1)) > 31:
        raise _shape(f"'{text.strip()[:40]}' is not a Z register with an element size (z0.h ... z31.h)")
    return int(m.group(1)), m.group(2)


def parse_list(text: str) -> list[tuple[int, str]]:
    """``{z0.h-z3.h}``, ``{ z0.h - z3.h }`` or ``{z31.h, z0.h}`` as [(number, suffix), ...]."""
    m = re.fullmatch(r"\{(.*)\}", text.strip())
    if not m:
        raise _shape(f"'{text.strip()}' is not a register list {{...}}")
    body = m.group(1).strip()
    names = body.split("-", 1) if "-" in body else body.split(",")
    regs = [_zreg(name) for name in names]
    # clang compares the size letters as written: {z0.h, z1.H} mixes sizes to it
    if len({name.strip()[-1] for name in names}) > 1:
        raise OperandError(f"the list {text.strip()} mixes element sizes (or the case of their letters)")
    if "-" in body:
        (a, ta), (b, _) = regs
        return [((a + i) % 32, ta) for i in range((b - a) % 32 + 1)]
    for (a, _), (b, _) in zip(regs, regs[1:]):
        if b != (a + 1) % 32:
            raise OperandError(f"the registers of {text.strip()} are not consecutive")
    return regs


@dataclass(frozen=True)
class ZList:
    """``{Zn1.T-Zn4.T}``: nreg consecutive Z registers.  ``align`` 1: any first register, the list
    wrapping from z31 to z0 (field holds it whole); 2 or 4: the first is a multiple of align
    (the field holds n / align)."""

    suffix: str
    nreg: int
    field: str
    align: int = 1
    any_size: bool = False  # any of .b/.h/.s/.d (printed as this form's suffix)
    kind = "z_list"
    conflict = SIZES_DISAGREE

    def parse(self, text: str) -> dict:
        if self.nreg == 1 and re.fullmatch(r"[ \t]*z[0-9]+\.[a-z][ \t]*", text.lower()):
            text = "{" + text + "}"  # a list of one may leave out its braces (ld1b z0.b, ...), as llvm allows
        regs = parse_list(text)
        if regs[0][1] != self.suffix and not (self.any_size and regs[0][1] in "bhsd"):
            raise _shape(f"{text.strip()} holds .{regs[0][1]} elements, not this form's .{self.suffix}")
        if len(regs) != self.nreg:
            raise _shape(f"{text.strip()} is {len(regs)} registers, not this form's {self.nreg}")
        first = regs[0][0]
        if first % self.align:
            raise OperandError(f"a list of {self.nreg} registers here must start at a multiple of {self.align}"
                               f" (z0, z{self.align}, ...), not z{first}")
        if self.any_size:  # the ZA group beside it must have the same size (SIZE_NOTE)
            return {self.field: first // self.align, SIZE_NOTE: regs[0][1]}
        return {self.field: first // self.align}

    def first(self, fields: dict) -> int:
        return fields[self.field] * self.align

    def text(self, fields: dict) -> str:
        first = self.first(fields)
        names = [f"z{(first + i) % 32}.{self.suffix}" for i in range(self.nreg)]
        if self.nreg > 2 and first + self.nreg <= 32:
            return f"{{ {names[0]} - {names[-1]} }}"
        return "{ " + ", ".join(names) + " }"

    def value(self, fields: dict) -> int:
        return self.first(fields)


@dataclass(frozen=True)
class ZReg:
    """``Zm.T`` with Zm limited to z0-z(2^bits - 1) (the dots' single Zm: z0-z15)."""

    suffix: str
    field: str
    bits: int = 5
    kind = "z"

    def parse(self, text: str) -> dict:
        if text.strip().startswith("{"):
            raise _shape(f"{text.strip()} is a list, not a single register")
        if "[" in text:
            raise _shape(f"{text.strip()} is an indexed register")
        n, t = _zreg(text)
        if t != self.suffix:
            raise _shape(f"{text.strip()} is .{t}, not this form's .{self.suffix}")
        if n >= 1 << self.bits:
            raise OperandError(f"Zm must be one of z0-z{(1 << self.bits) - 1} here, not z{n}")
        return {self.field: n}

    def text(self, fields: dict) -> str:
        return f"z{fields[self.field]}.{self.suffix}"

    def value(self, fields: dict) -> int:
        return fields[self.field]


@dataclass(frozen=True)
class ZIndexed:
    """``Zm.T[imm]``: Zm z0-z15 and an element-group index 0..(2^index_bits - 1).  Where the encoding splits
    the index (SMLAL's i3h:i3l), ``low_field`` holds its low ``low_bits`` bits and ``index_field`` the rest."""

    suffix: str
    field: str
    index_field: str
    index_bits: int
    low_field: str | None = None
    low_bits: int = 0
    kind = "z_indexed"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"(.*?)\[([^\]]+)\]", text.strip())
        if not m or text.strip().startswith("{"):
            raise _shape(f"'{text.strip()}' is not an indexed register Zm.T[i]")
        n, t = _zreg(m.group(1))
        if t != self.suffix:
            raise _shape(f"{text.strip()} is .{t}, not this form's .{self.suffix}")
        if n > 15:
            raise OperandError(f"Zm must be one of z0-z15 here, not z{n}")
        i = parse_int(m.group(2), hash="forbidden")  # clang: z4.h[1], never z4.h[#1]
        limit = (1 << self.index_bits) - 1
        if i is None or not 0 <= i <= limit:
            raise OperandError(f"the index must be 0-{limit} here, not {m.group(2).strip()}")
        if self.low_field is not None:
            return {self.field: n, self.index_field: i >> self.low_bits,
                    self.low_field: i & ((1 << self.low_bits) - 1)}
        return {self.field: n, self.index_field: i}

    def index(self, fields: dict) -> int:
        if self.low_field is None:
            return fields[self.index_field]
        return (fields[self.index_field] << self.low_bits) | fields[self.low_field]

    def text(self, fields: dict) -> str:
        return f"z{fields[self.field]}.{self.suffix}[{self.index(fields)}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields[self.field], self.index(fields)


@dataclass(frozen=True)
class PReg:
    """``Pd.T``: a predicate register p0-p15 with this form's element size T."""

    suffix: str
    field: str
    kind = "p"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"p({REGISTER_NUMBER})\.([bhsdq])", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a predicate register with an element size (p0.b ... p15.d)")
        if m.group(2) != self.suffix:
            raise _shape(f"{text.strip()} is .{m.group(2)}, not this form's .{self.suffix}")
        n = int(m.group(1))
        if n > 15:
            raise OperandError(f"there are 16 predicate registers (p0-p15), not p{n}")
        return {self.field: n}

    def text(self, fields: dict) -> str:
        return f"p{fields[self.field]}.{self.suffix}"

    def value(self, fields: dict) -> int:
        return fields[self.field]


# The SVE predicate-constraint patterns (Arm ARM, DecodePredCount): 14-28 have no name (#uimm5)
PATTERN_NAMES = {0: "pow2", **{n: f"vl{n}" for n in range(1, 9)}, 9: "vl16", 10: "vl32", 11: "vl64", 12: "vl128",
                 13: "vl256", 29: "mul4", 30: "mul3", 31: "all"}


PATTERN_NUMBERS = {name: number for number, name in PATTERN_NAMES.items()}


ALL = 31


@dataclass(frozen=True)
class Pattern:
    """``{<pattern>{, MUL #<imm>}}``: an element-count pattern (field pattern), by name or ``#uimm5``;
    with ``multiplier``, also ``mul #1-16`` (field imm4 = imm - 1).  Optional: left out it is ``all``
    (and mul #1), which is how llvm prints it."""

    multiplier: bool = False
    kind = "pattern"
    default = "all"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"([^,]+?)[ \t]*(?:,[ \t]*mul(?:[ \t]+|(?=#))([^,]+))?", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a pattern")
        name, multiplier = m.groups()
        if name in PATTERN_NUMBERS:
            pattern = PATTERN_NUMBERS[name]
        else:
            pattern = parse_int(name)
            if pattern is None:
                raise _shape(f"'{name}' is not a pattern (pow2, vl1-vl8, vl16-vl256, mul4, mul3, all or #0-31)")
            if not 0 <= pattern <= 31:
                raise OperandError(f"a pattern number must be 0-31, not {pattern}")
        fields = {"pattern": pattern}
        if multiplier is not None:
            if not self.multiplier:
                raise OperandError("this instruction takes a pattern without a multiplier")
            value = parse_int(multiplier, hash="required")  # clang: "mul #4", never "mul 4"
            if value is None or not 1 <= value <= 16:
                raise OperandError(f"the multiplier must be mul #1-16, not mul {multiplier.strip()[:40]}")
            fields["imm4"] = value - 1
        elif self.multiplier:
            fields["imm4"] = 0
        return fields

    def text(self, fields: dict) -> str:
        pattern, times = fields["pattern"], fields.get("imm4", 0) + 1
        name = PATTERN_NAMES.get(pattern, f"#{pattern}")
        if times > 1:
            return f"{name}, mul #{times}"
        return "" if pattern == ALL else name  # llvm leaves out the default

    def value(self, fields: dict) -> tuple[int, int]:
        return fields["pattern"], fields.get("imm4", 0) + 1


@dataclass(frozen=True)
class PredMerge:
    """``<Pg>/M``: a governing predicate p0-p7 (field Pg), merging: inactive elements keep their value."""

    field: str = "Pg"
    kind = "p_governing"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"p({REGISTER_NUMBER})[ \t]*/[ \t]*([a-z])", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a governing predicate (p0/m ... p7/m)")
        if m.group(2) != "m":
            raise OperandError(f"this form's predicate merges (p{m.group(1)}/m), not /{m.group(2)}")
        if int(m.group(1)) > 7:
            raise OperandError(f"the governing predicate must be one of p0-p7, not p{m.group(1)}")
        return {self.field: int(m.group(1))}

    def text(self, fields: dict) -> str:
        return f"p{fields[self.field]}/m"

    def value(self, fields: dict) -> int:
        return fields[self.field]


@dataclass(frozen=True)
class Governing:
    """``<Pg>/Z`` (``zeroing``: a load's inactive elements become zero) or ``<Pg>`` (a store's): p0-p7."""

    zeroing: bool
    field: str = "Pg"
    kind = "p_governing"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"p({REGISTER_NUMBER})[ \t]*(?:/[ \t]*([a-z]))?", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a governing predicate (p0-p7)")
        if self.zeroing and m.group(2) != "z":
            raise OperandError(f"a load's predicate zeroes: p{m.group(1)}/z, not {text.strip()}")
        if not self.zeroing and m.group(2) is not None:
            raise OperandError(f"a store's predicate is p{m.group(1)}, without /{m.group(2)}")
        if int(m.group(1)) > 7:
            raise OperandError(f"the governing predicate must be one of p0-p7, not p{m.group(1)}")
        return {self.field: int(m.group(1))}

    def text(self, fields: dict) -> str:
        return f"p{fields[self.field]}" + ("/z" if self.zeroing else "")

    def value(self, fields: dict) -> int:
        return fields[self.field]


@dataclass(frozen=True)
class VectorRegister:
    """``Zt`` or ``Pt`` without an element size (LDR/STR of a whole register): z0-z31 or p0-p15."""

    prefix: str  # "z" or "p"
    field: str
    kind = "z"

    def parse(self, text: str) -> dict:
        count = 32 if self.prefix == "z" else 16
        m = re.fullmatch(rf"{self.prefix}({REGISTER_NUMBER})", text.strip().lower())
        if not m:
            if re.fullmatch(rf"{self.prefix}[0-9]+\.[a-z]", text.strip().lower()):
                raise OperandError(f"LDR and STR take a whole register, without an element size: not {text.strip()}")
            raise _shape(f"'{text.strip()}' is not a register {self.prefix}0-{self.prefix}{count - 1}")
        if int(m.group(1)) >= count:
            raise OperandError(f"there are {count} of these registers ({self.prefix}0-{self.prefix}{count - 1}), "
                               f"not {self.prefix}{m.group(1)}")
        return {self.field: int(m.group(1))}

    def text(self, fields: dict) -> str:
        return f"{self.prefix}{fields[self.field]}"

    def value(self, fields: dict) -> int:
        return fields[self.field]

