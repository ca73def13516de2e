"""The operands of A64 forms: how each reads its assembly text into encoding fields and back.

Each operand kind knows one piece of LLVM syntax and the fields it fills.  ``parse(text)``
returns the field values (or raises :class:`OperandError`: ``shape`` errors mean "this is
another form's operand", the others are rules the text breaks, which the assembler reports
first); ``text(fields)`` prints what llvm-objdump prints; ``value(fields)`` is what the
semantics receive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SUFFIX_BYTES = {"b": 1, "h": 2, "s": 4, "d": 8, "q": 16}


class OperandError(ValueError):
    def __init__(self, message: str, shape: bool = False):
        super().__init__(message)
        self.shape = shape  # the text is not this kind of operand at all (try another form)


def _shape(message: str) -> OperandError:
    return OperandError(message, shape=True)


_INT = r"#?\s*(-?(?:0x[0-9a-f]+|[0-9]+))"


def parse_int(text: str) -> int | None:
    m = re.fullmatch(_INT, text.strip().lower())
    return int(m.group(1), 0) if m else None


@dataclass(frozen=True)
class ZaVectorGroup:
    """``ZA.S[Wv, offs{, VGx2|VGx4}]``: Wv is W8-W11 (field Rv), offs 0-7 (field off3)."""

    esize: str  # "s" or "d"
    nreg: int
    any_size: bool = False  # .b/.h/.s/.d all name the same vectors (MOVA's array forms, printed as .d)
    kind = "za_group"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"za\.([a-z])\s*\[\s*(\w+)\s*,\s*([^,\]]+?)\s*(?:,\s*(\w+)\s*)?\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a ZA vector group ZA.{self.esize.upper()}[Wv, offs, VGxN]")
        suffix, reg, offset, vg = m.groups()
        if suffix != self.esize and not (self.any_size and suffix in "bhsd"):
            raise _shape(f"ZA.{suffix.upper()} is not this form's ZA.{self.esize.upper()}")
        if vg is not None and vg not in ("vgx2", "vgx4"):
            raise OperandError(f"'{vg}' is not a vector group size (vgx2 or vgx4)")
        if vg is not None and vg != f"vgx{self.nreg}":
            raise _shape(f"{vg} is not this form's vgx{self.nreg}")
        wm = re.fullmatch(r"w([0-9]+)", reg)
        if not wm or not 8 <= int(wm.group(1)) <= 11:
            raise OperandError(f"the vector select register must be one of w8-w11, not {reg}")
        off = parse_int(offset)
        if off is None:
            raise OperandError(f"'{offset}' is not an offset")
        if not 0 <= off <= 7:
            raise OperandError(f"the vector select offset must be 0-7, not {off}")
        return {"Rv": int(wm.group(1)) - 8, "off3": off}

    def text(self, fields: dict) -> str:
        return f"za.{self.esize}[w{8 + fields['Rv']}, {fields['off3']}, vgx{self.nreg}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return 8 + fields["Rv"], fields["off3"]


def _zreg(text: str) -> tuple[int, str]:
    m = re.fullmatch(r"z([0-9]+)\.([bhsdq])", text.strip().lower())
    if not m or int(m.group(1)) > 31:
        raise _shape(f"'{text.strip()}' is not a Z register with an element size (z0.h ... z31.h)")
    return int(m.group(1)), m.group(2)


def parse_list(text: str) -> list[tuple[int, str]]:
    """``{z0.h-z3.h}``, ``{ z0.h - z3.h }`` or ``{z31.h, z0.h}`` as [(number, suffix), ...]."""
    m = re.fullmatch(r"\{(.*)\}", text.strip())
    if not m:
        raise _shape(f"'{text.strip()}' is not a register list {{...}}")
    body = m.group(1).strip()
    if "-" in body:
        first, _, last = body.partition("-")
        (a, ta), (b, tb) = _zreg(first), _zreg(last)
        if ta != tb:
            raise OperandError(f"the list {text.strip()} mixes element sizes .{ta} and .{tb}")
        return [((a + i) % 32, ta) for i in range((b - a) % 32 + 1)]
    regs = [_zreg(part) for part in body.split(",")]
    if len({t for _, t in regs}) > 1:
        raise OperandError(f"the list {text.strip()} mixes element sizes")
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

    def parse(self, text: str) -> dict:
        if self.nreg == 1 and re.fullmatch(r"\s*z[0-9]+\.[a-z]\s*", text.lower()):
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
    """``Zm.T[imm]``: Zm z0-z15 and an element-group index 0..(2^index_bits - 1)."""

    suffix: str
    field: str
    index_field: str
    index_bits: int
    kind = "z_indexed"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"(.*?)\[\s*([^\]]+)\]", text.strip())
        if not m or text.strip().startswith("{"):
            raise _shape(f"'{text.strip()}' is not an indexed register Zm.T[i]")
        n, t = _zreg(m.group(1))
        if t != self.suffix:
            raise _shape(f"{text.strip()} is .{t}, not this form's .{self.suffix}")
        if n > 15:
            raise OperandError(f"Zm must be one of z0-z15 here, not z{n}")
        i = parse_int(m.group(2))
        limit = (1 << self.index_bits) - 1
        if i is None or not 0 <= i <= limit:
            raise OperandError(f"the index must be 0-{limit} here, not {m.group(2).strip()}")
        return {self.field: n, self.index_field: i}

    def text(self, fields: dict) -> str:
        return f"z{fields[self.field]}.{self.suffix}[{fields[self.index_field]}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields[self.field], fields[self.index_field]


# ---- general-purpose registers and immediates ----------------------------------------------------


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


# ---- SVE predicates and the element-count patterns ---------------------------------------------------


@dataclass(frozen=True)
class PReg:
    """``Pd.T``: a predicate register p0-p15 with this form's element size T."""

    suffix: str
    field: str
    kind = "p"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"p([0-9]+)\.([bhsdq])", text.strip().lower())
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
        m = re.fullmatch(r"([^,]+?)\s*(?:,\s*mul\s*#?\s*([^,]+))?", text.strip().lower())
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
            value = parse_int(multiplier)
            if value is None or not 1 <= value <= 16:
                raise OperandError(f"the multiplier must be mul #1-16, not mul {multiplier}")
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


# ---- ZA tiles, their slices, and ZA array vectors ------------------------------------------------------

# the bits of a tile-slice field that name the tile (the rest are the slice offset), by element size
TILE_BITS = {"b": 0, "h": 1, "s": 2, "d": 3, "q": 4}


@dataclass(frozen=True)
class ZaSlice:
    """``ZA<t><H|V>.<T>[<Ws>, <offs>]``: a horizontal or vertical slice of a ZA tile (fields V, Rs for
    W12-W15, and the 4 bits ``field`` that hold the tile number above the slice offset)."""

    suffix: str
    field: str = "ZAn"
    kind = "za_slice"

    @property
    def tile_bits(self) -> int:
        return TILE_BITS[self.suffix]

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"za([0-9]+)([hv])\.([bhsdq])\s*\[\s*(\w+)\s*(?:,\s*([^\]]+?)\s*)?\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a ZA tile slice (za0h.s[w12, 0])")
        tile, direction, suffix, reg, offset = m.groups()
        if suffix != self.suffix:
            raise _shape(f"{text.strip()} is a .{suffix} slice, not this form's .{self.suffix}")
        tiles = 1 << self.tile_bits
        if int(tile) >= tiles:
            raise OperandError(f"the .{suffix} tiles are za0-za{tiles - 1}, not za{tile}")
        wm = re.fullmatch(r"w([0-9]+)", reg)
        if not wm or not 12 <= int(wm.group(1)) <= 15:
            raise OperandError(f"the slice index register must be one of w12-w15, not {reg}")
        limit = (1 << (4 - self.tile_bits)) - 1
        off = parse_int(offset) if offset is not None else None
        if off is None or not 0 <= off <= limit:
            raise OperandError(f"the slice offset of a .{suffix} tile must be {'0' if not limit else f'0-{limit}'}, "
                               f"not {offset}")
        return {"V": int(direction == "v"), "Rs": int(wm.group(1)) - 12,
                self.field: (int(tile) << (4 - self.tile_bits)) | off}

    def value(self, fields: dict) -> tuple[int, bool, int, int]:
        """(tile, vertical, Ws's register number, offset)"""
        raw = fields[self.field]
        offset_bits = 4 - self.tile_bits
        return raw >> offset_bits, bool(fields["V"]), 12 + fields["Rs"], raw & ((1 << offset_bits) - 1)

    def text(self, fields: dict) -> str:
        tile, vertical, s, offset = self.value(fields)
        return f"za{tile}{'hv'[vertical]}.{self.suffix}[w{s}, {offset}]"


@dataclass(frozen=True)
class PredMerge:
    """``<Pg>/M``: a governing predicate p0-p7 (field Pg), merging: inactive elements keep their value."""

    field: str = "Pg"
    kind = "p_governing"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"p([0-9]+)\s*/\s*([a-z])", text.strip().lower())
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
class ZaArrayVector:
    """``ZA[<Wv>, <offs>]``: one vector of the ZA array, Wv W12-W15 (field Rv), offs 0-15 (field off4)."""

    kind = "za_vector"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"za\s*\[\s*(\w+)\s*(?:,\s*([^\]]+?)\s*)?\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a ZA array vector za[Wv, offs]")
        wm = re.fullmatch(r"w([0-9]+)", m.group(1))
        if not wm or not 12 <= int(wm.group(1)) <= 15:
            raise OperandError(f"the vector select register must be one of w12-w15, not {m.group(1)}")
        off = parse_int(m.group(2)) if m.group(2) is not None else 0
        if off is None or not 0 <= off <= 15:
            raise OperandError(f"the vector select offset must be 0-15, not {m.group(2)}")
        return {"Rv": int(wm.group(1)) - 12, "off4": off}

    def text(self, fields: dict) -> str:
        return f"za[w{12 + fields['Rv']}, {fields['off4']}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return 12 + fields["Rv"], fields["off4"]


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
        m = re.fullmatch(r"\[\s*(\w+)\s*(?:,\s*(#?\s*-?\w+)\s*,\s*mul\s+vl\s*)?\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a memory operand [Xn{{, #imm, mul vl}}]")
        base = GReg("Rn", sp=True).parse(m.group(1))
        offset = parse_int(m.group(2)) if m.group(2) is not None else 0
        low, high = self._range()
        if offset is None or not low <= offset <= high:
            raise OperandError(f"the offset must be #{low} to #{high}, mul vl, not {m.group(2)}")
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
class ZaSliceList:
    """``{<ZAt><HV>.<T>[<Ws>, <offs>]}``: one tile slice in braces (the SME loads' and stores' list)."""

    suffix: str
    field: str = "ZAt"
    kind = "za_slice"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\{(.*)\}", text.strip())
        if not m:
            raise _shape(f"'{text.strip()}' is not a tile slice list {{za0h.s[w12, 0]}}")
        return ZaSlice(self.suffix, self.field).parse(m.group(1))

    def value(self, fields: dict) -> tuple[int, bool, int, int]:
        return ZaSlice(self.suffix, self.field).value(fields)

    def text(self, fields: dict) -> str:
        return "{" + ZaSlice(self.suffix, self.field).text(fields) + "}"


@dataclass(frozen=True)
class Governing:
    """``<Pg>/Z`` (``zeroing``: a load's inactive elements become zero) or ``<Pg>`` (a store's): p0-p7."""

    zeroing: bool
    field: str = "Pg"
    kind = "p_governing"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"p([0-9]+)\s*(?:/\s*([a-z]))?", text.strip().lower())
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
class ScalarPlusScalar:
    """``[<Xn|SP>, <Xm>{, LSL #<shift>}]``: base plus an index register scaled by the element size.
    ``xzr_is_none``: Xm = XZR is the form without an index, printed ``[Xn]`` (the SME tile loads);
    else XZR is not allowed (the SVE contiguous loads, where Rm = 31 is another instruction)."""

    shift: int
    xzr_is_none: bool = False
    kind = "mem_index"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\[\s*(\w+)\s*(?:,\s*(\w+)\s*(?:,\s*lsl\s*#?\s*(\w+)\s*)?)?\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a memory operand [Xn, Xm{{, lsl #{self.shift}}}]")
        base, index, shift = m.groups()
        fields = GReg("Rn", sp=True).parse(base)
        if index is None:
            if not self.xzr_is_none:
                raise _shape(f"'{text.strip()}' has no index register")
            return {**fields, "Rm": 31}
        if index == "xzr" and not self.xzr_is_none:
            raise OperandError("the index register must be one of x0-x30 here, not xzr")
        fields.update(GReg("Rm").parse(index))
        if (parse_int(shift) if shift is not None else 0) != self.shift:
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
class VectorRegister:
    """``Zt`` or ``Pt`` without an element size (LDR/STR of a whole register): z0-z31 or p0-p15."""

    prefix: str  # "z" or "p"
    field: str
    kind = "z"

    def parse(self, text: str) -> dict:
        count = 32 if self.prefix == "z" else 16
        m = re.fullmatch(rf"{self.prefix}([0-9]+)", text.strip().lower())
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
