"""General-register operands and the scalar immediates (MOV, ADD, branches)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..numerics.integer_asl import DecodeBitMasks
from .common import REGISTER_NUMBER, OperandError, _shape, parse_int


# Other names LLVM gives general registers: x31 and w31 are the zero registers wherever those are
# allowed (never SP), fp and lr are x29 and x30.
_ALIASES = {"x31": "xzr", "w31": "wzr", "fp": "x29", "lr": "x30"}


@dataclass(frozen=True)
class GReg:
    """``Xn``/``Wn`` (``width`` 64/32); register 31 is ``zr`` or, where ``sp`` is set, SP."""

    field: str
    width: int = 64
    sp: bool = False
    kind = "gpr"

    def parse(self, text: str) -> dict:
        written = text.strip().lower()
        name = _ALIASES.get(written, written)
        prefix = "x" if self.width == 64 else "w"
        if name == ("sp" if self.width == 64 else "wsp"):
            if not self.sp:
                raise OperandError(f"{name} is not allowed here")
            return {self.field: 31}
        if name == prefix + "zr":
            if self.sp:
                raise OperandError(f"{written} is not allowed here (register 31 is {'sp' if self.width == 64 else 'wsp'}"
                                   f" here)")
            return {self.field: 31}
        m = re.fullmatch(rf"{prefix}({REGISTER_NUMBER})", name)
        if not m:
            if re.fullmatch(rf"[xw]({REGISTER_NUMBER}|zr|sp)|sp", name):
                raise _shape(f"{written} is not a {self.width}-bit register here")
            raise _shape(f"'{text.strip()[:40]}' is not a register ({prefix}0-{prefix}30)")
        n = int(m.group(1))
        if n > 30:
            raise OperandError(f"'{written}' is not a register ({prefix}0-{prefix}30)")
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
            multiple = f" a multiple of {self.scale}" if self.scale > 1 else ""
            raise OperandError(f"the immediate must be{multiple} in 0-{limit}, not {value}")
        return {self.field: value // self.scale}

    def text(self, fields: dict) -> str:
        return f"#{fields[self.field] * self.scale}"

    def value(self, fields: dict) -> int:
        return fields[self.field] * self.scale


def _signed(value: int, width: int) -> int:
    return value - (1 << width) if value >> (width - 1) else value


# ", lsl #12" after an immediate: the shift's name, then its amount (with or without '#')
_LSL = re.compile(r"(.+?)(?:,[ \t]*lsl(?:[ \t]+|(?=#))(.+))?", re.ASCII | re.DOTALL)


def _parse_shift(text: str) -> tuple[str, int | None]:
    """``#imm, lsl #s`` as (the immediate's text, s or None)."""
    m = _LSL.fullmatch(text.strip().lower())
    if m.group(2) is None:
        return m.group(1), None
    amount = parse_int(m.group(2), signed=False)
    if amount is None:
        raise OperandError(f"'lsl {m.group(2).strip()[:40]}' is not a shift (lsl #amount)")
    return m.group(1), amount


@dataclass(frozen=True)
class MovWideImm:
    """MOVZ/MOVN/MOVK's ``#<imm>{, LSL #<shift>}``: imm16 (0-65535) shifted left by 16 * hw (0 or 16 for
    a W register, up to 48 for an X)."""

    width: int = 64
    kind = "imm_wide"

    def parse(self, text: str) -> dict:
        number, shift = _parse_shift(text)
        value = parse_int(number)
        if value is None:
            raise _shape(f"'{text.strip()}' is not an immediate")
        shifts = list(range(0, self.width, 16))
        if shift is not None and shift not in shifts:
            raise OperandError(f"the shift must be lsl #{', #'.join(map(str, shifts))} here, not lsl #{shift}")
        if not 0 <= value < 1 << 16:
            raise OperandError(f"the immediate must be 0-65535 (shifted by lsl #16 steps), not {value}")
        return {"imm16": value, "hw": (shift or 0) // 16}

    def text(self, fields: dict) -> str:
        return f"#{fields['imm16']}" + (f", lsl #{16 * fields['hw']}" if fields["hw"] else "")

    def value(self, fields: dict) -> tuple[int, int]:
        return fields["imm16"], 16 * fields["hw"]


def register_immediate(text: str, width: int) -> int:
    """A MOV or logical immediate: the ``width``-bit value ``text`` gives a register.  A 64-bit value is
    any number (clang's numbers are 64-bit); for a W register, the value's upper 32 bits must be all
    zeros or all ones, as clang wants them (#-1 and #0xffffffff are both 0xffffffff).  clang keeps the
    low 32 bits of any other value for MOV, which isasim refuses."""
    value = parse_int(text)
    if value is None:
        raise _shape(f"'{text.strip()[:40]}' is not an immediate")
    if width == 32 and not -(1 << 32) <= value < 1 << 32:
        raise OperandError(f"#{value} does not fit a 32-bit register (its upper 32 bits are neither all zeros "
                           f"nor all ones)")
    return value & ((1 << width) - 1)


@dataclass(frozen=True)
class MovImm:
    """MOV's ``#<imm>``, the value as the instruction leaves it in a register of ``width`` bits, for the
    instruction ``via`` that makes it: "movz" (one 16-bit chunk), "movn" (the inverse of one) or "orr"
    (a bitmask immediate).  llvm prints the value as a signed decimal."""

    width: int = 64
    via: str = "movz"
    kind = "imm"

    def _value(self, text: str) -> int:
        return register_immediate(text, self.width)

    def parse(self, text: str) -> dict:
        value = self._value(text)
        mask = (1 << self.width) - 1
        if self.via == "orr":
            try:
                return BitmaskImm(self.width).encode(value)
            except OperandError:
                raise OperandError(f"#{text.strip().lstrip('#')} is not a MOV immediate: not a 16-bit chunk "
                                   f"(MOVZ), nor the inverse of one (MOVN), nor a bitmask immediate (ORR)") from None
        chunk = value if self.via == "movz" else ~value & mask
        for hw in range(self.width // 16):
            if chunk >> (16 * hw) << (16 * hw) == chunk and chunk >> (16 * hw) < 1 << 16:
                return {"imm16": chunk >> (16 * hw), "hw": hw}
        raise _shape(f"#{value:#x} is not a {self.via.upper()} immediate")

    def text(self, fields: dict) -> str:
        return f"#{_signed(self.value(fields), self.width)}"

    def value(self, fields: dict) -> int:
        if self.via == "orr":
            return BitmaskImm(self.width).value(fields)
        chunk = fields["imm16"] << (16 * fields["hw"])
        return chunk if self.via == "movz" else ~chunk & ((1 << self.width) - 1)


@dataclass(frozen=True)
class BitmaskImm:
    """A logical instruction's ``#<imm>``: a bitmask immediate (N, immr, imms: a run of ones rotated
    within an element of 2-64 bits, the element repeated), as DecodeBitMasks reads it.  A W form has no
    N field (it is 0)."""

    width: int = 64
    kind = "imm_bitmask"

    def encode(self, value: int) -> dict:
        """The fields that make ``value``; OperandError if no bitmask immediate is it."""
        size = 2
        while size <= self.width:
            element = value & ((1 << size) - 1)
            if all((value >> at) & ((1 << size) - 1) == element for at in range(0, self.width, size)):
                break
            size *= 2
        ones = (1 << size) - 1
        if size > self.width or element in (0, ones):
            raise OperandError(f"#{value:#x} is not a bitmask immediate (a rotated run of ones, repeated; never "
                               f"all zeros or all ones)")
        for rotation in range(size):  # element = ROR(Ones(S + 1), R): rotate it back left by R
            run = ((element << rotation) | (element >> (size - rotation))) & ones
            if run & (run + 1) == 0:
                imms = ((~(size - 1) << 1) & 0x3F) | (bin(run).count("1") - 1)
                fields = {"immr": rotation, "imms": imms}
                if self.width == 64:
                    fields["N"] = 1 if size == 64 else 0
                return fields
        raise OperandError(f"#{value:#x} is not a bitmask immediate (a rotated run of ones, repeated; never "
                           f"all zeros or all ones)")

    def parse(self, text: str) -> dict:
        return self.encode(register_immediate(text, self.width))

    def text(self, fields: dict) -> str:
        return f"#{self.value(fields):#x}"

    def value(self, fields: dict) -> int:
        wmask, _ = DecodeBitMasks(fields.get("N", 0), fields["imms"], fields["immr"], True, self.width)
        return wmask


SHIFTS = ("lsl", "lsr", "asr", "ror")
# "x2, asr #3" or "w2, uxtw 2" or "w2, uxtw": a register, then a shift's or extend's name, then maybe an
# amount (which is '#' and a number, or a number after a space: "lsl3" is one word, no shift)
_REGISTER_THEN_MODIFIER = re.compile(r"([a-z0-9_]+)[ \t]*(?:,[ \t]*([a-z]+)(?:[ \t]+|(?=#)|$)(.*))?",
                                     re.ASCII | re.DOTALL)
EXTENDS = ("uxtb", "uxth", "uxtw", "uxtx", "sxtb", "sxth", "sxtw", "sxtx")


@dataclass(frozen=True)
class ShiftedReg:
    """``<Xm>{, <shift> #<amount>}`` (fields Rm, shift, imm6): LSL, LSR, ASR, and ROR where ``ror`` (the
    logical instructions); the amount 0 to width - 1.  llvm leaves out ``lsl #0`` only."""

    width: int = 64
    ror: bool = False
    kind = "shifted_reg"

    def parse(self, text: str) -> dict:
        m = _REGISTER_THEN_MODIFIER.fullmatch(text.strip().lower())
        if not m or (m.group(2) is not None and not m.group(3)):
            raise _shape(f"'{text.strip()[:40]}' is not a register with an optional shift")
        fields = GReg("Rm", self.width).parse(m.group(1))
        if m.group(2) is None:
            return {**fields, "shift": 0, "imm6": 0}
        allowed = SHIFTS if self.ror else SHIFTS[:3]
        if m.group(2) not in allowed:
            error = OperandError if m.group(2) in SHIFTS else _shape  # ror in ADD: a rule; uxtw: another form
            raise error(f"'{m.group(2)}' is not a shift here ({', '.join(allowed)})")
        amount = parse_int(m.group(3), signed=False)
        if amount is None or not 0 <= amount < self.width:
            raise OperandError(f"the shift amount must be #0-#{self.width - 1} here, not {m.group(3)}")
        return {**fields, "shift": allowed.index(m.group(2)), "imm6": amount}

    def text(self, fields: dict) -> str:
        register = GReg("Rm", self.width).text(fields)
        if fields["shift"] == 0 and fields["imm6"] == 0:
            return register
        return f"{register}, {SHIFTS[fields['shift']]} #{fields['imm6']}"

    def value(self, fields: dict) -> tuple[int, int, int]:
        return fields["Rm"], fields["shift"], fields["imm6"]


@dataclass(frozen=True)
class ExtendedReg:
    """``<Wm|Xm>{, <extend> {#<amount>}}`` (fields Rm, option, imm3 0-4): the register is X for UXTX/SXTX
    in a 64-bit form, else W.  Where Rd (if ``rd_is_sp``) or Rn is SP, UXTX (UXTW in a 32-bit form)
    prints as LSL, and as nothing with amount 0, as llvm does."""

    width: int = 64
    rd_is_sp: bool = True
    kind = "extended_reg"

    def _register_width(self, option: int) -> int:
        return 64 if self.width == 64 and option & 3 == 3 else 32

    def parse(self, text: str) -> dict:
        m = _REGISTER_THEN_MODIFIER.fullmatch(text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not a register with an optional extend")
        name, extend, amount_text = m.groups()
        lsl = 3 if self.width == 64 else 2  # UXTX, or UXTW in a 32-bit form
        if extend is None or extend == "lsl":
            option = lsl
        elif extend in EXTENDS:
            option = EXTENDS.index(extend)
        else:
            raise _shape(f"'{extend}' is not an extend (uxtb ... sxtx, or lsl)")
        amount = parse_int(amount_text, signed=False) if amount_text else 0
        if amount is None or not 0 <= amount <= 4:
            raise OperandError(f"the extended register's shift must be #0-#4, not {amount_text}")
        try:
            return {**GReg("Rm", self._register_width(option)).parse(name), "option": option, "imm3": amount}
        except OperandError:
            pass
        # In a 64-bit ADDS, SUBS, CMP or CMN (not where Rd may be SP: ADD, SUB) clang also takes a W register
        # for an X one: "w2, uxtx" or "w2, sxtx" as the X register's word, and "w2, lsl #n" as "w2, uxtw #n"
        if self.width == 64 and not self.rd_is_sp and extend in ("uxtx", "sxtx", "lsl"):
            try:
                fields = GReg("Rm", 32).parse(name)
            except OperandError:
                pass
            else:
                return {**fields, "option": EXTENDS.index("uxtw") if extend == "lsl" else option, "imm3": amount}
        want = "an X" if self._register_width(option) == 64 else "a W"
        raise _shape(f"{EXTENDS[option]} here extends {want} register, not '{name[:40]}'")

    def text(self, fields: dict) -> str:
        option, amount = fields["option"], fields["imm3"]
        register = GReg("Rm", self._register_width(option)).text(fields)
        sp = fields["Rn"] == 31 or (self.rd_is_sp and fields["Rd"] == 31)
        if sp and option == (3 if self.width == 64 else 2):
            return register + (f", lsl #{amount}" if amount else "")
        return f"{register}, {EXTENDS[option]}" + (f" #{amount}" if amount else "")

    def value(self, fields: dict) -> tuple[int, int, int]:
        return fields["Rm"], fields["option"], fields["imm3"]


@dataclass(frozen=True)
class TestReg:
    """TBZ/TBNZ's ``<R><t>``: W when the bit number is below 32 (field b5 clear), else X; llvm prints W
    whenever b5 is clear, and accepts an X register with a low bit too."""

    kind = "gpr"

    def parse(self, text: str) -> dict:
        name = text.strip().lower()
        if name.startswith("w"):
            return {**GReg("Rt", 32).parse(name), "b5": 0}  # a W register has bits 0-31 only
        return GReg("Rt", 64).parse(name)

    def text(self, fields: dict) -> str:
        return GReg("Rt", 64 if fields["b5"] else 32).text(fields)

    def value(self, fields: dict) -> int:
        return fields["Rt"]


@dataclass(frozen=True)
class BitNumber:
    """TBZ/TBNZ's ``#<imm>``: the bit to test, 0-63, as b5:b40."""

    kind = "bit_number"
    conflict = "a W register has bits #0-#31 (use the X register for bits 32-63)"

    def parse(self, text: str) -> dict:
        value = parse_int(text)
        if value is None:
            raise _shape(f"'{text.strip()}' is not a bit number")
        if not 0 <= value <= 63:
            raise OperandError(f"the bit number must be #0-#63, not {value}")
        return {"b5": value >> 5, "b40": value & 31}

    def text(self, fields: dict) -> str:
        return f"#{self.value(fields)}"

    def value(self, fields: dict) -> int:
        return (fields["b5"] << 5) | fields["b40"]


@dataclass(frozen=True)
class BitfieldImm:
    """One immediate of a bitfield alias, printed from immr/imms and parsed into a working field
    (``name``: shift, lsb or width) that the alias's derive turns into immr and imms.  ``show`` is how
    the Arm ARM computes it from R = immr and S = imms: "lsl" (width - 1 - S), "lsb_ubfx" (R),
    "width_ubfx" (S - R + 1), "lsb_ubfiz" (-R MOD width), "width_ubfiz" (S + 1)."""

    name: str
    show: str
    width: int = 64
    kind = "imm"

    def parse(self, text: str) -> dict:
        value = parse_int(text)
        if value is None:
            raise _shape(f"'{text.strip()}' is not an immediate")
        low = 1 if self.name == "width" else 0
        high = self.width if self.name == "width" else self.width - 1
        if not low <= value <= high:
            raise OperandError(f"the {self.name} must be #{low}-#{high} here, not {value}")
        return {self.name: value}

    def value(self, fields: dict) -> int:
        r, s = fields["immr"], fields["imms"]
        return {"lsl": self.width - 1 - s, "lsb_ubfx": r, "width_ubfx": s - r + 1, "lsb_ubfiz": -r % self.width,
                "width_ubfiz": s + 1}[self.show]

    def text(self, fields: dict) -> str:
        return f"#{self.value(fields)}"


CONDITIONS = ("eq", "ne", "hs", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le", "al", "nv")
CONDITION_SYNONYMS = {"cs": "hs", "cc": "lo"}


@dataclass(frozen=True)
class Condition:
    """A condition code (field cond), as the B.cond mnemonics name them: eq ... nv (cs = hs, cc = lo)."""

    kind = "cond"

    def parse(self, text: str) -> dict:
        name = CONDITION_SYNONYMS.get(text.strip().lower(), text.strip().lower())
        if name not in CONDITIONS:
            raise _shape(f"'{text.strip()}' is not a condition ({', '.join(CONDITIONS)})")
        return {"cond": CONDITIONS.index(name)}

    def text(self, fields: dict) -> str:
        return CONDITIONS[fields["cond"]]

    def value(self, fields: dict) -> int:
        return fields["cond"]


@dataclass(frozen=True)
class QReg:
    """``Q<t>``: the low 128 bits of Z<t> (field ``field``)."""

    field: str = "Rt"
    kind = "q"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"q({REGISTER_NUMBER})", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a Q register (q0-q31)")
        if int(m.group(1)) > 31:
            raise OperandError(f"'{text.strip()}' is not a Q register (q0-q31)")
        return {self.field: int(m.group(1))}

    def text(self, fields: dict) -> str:
        return f"q{fields[self.field]}"

    def value(self, fields: dict) -> int:
        return fields[self.field]


@dataclass(frozen=True)
class AddImm:
    """ADD/SUB's ``#imm12{, lsl #12}`` (field sh says whether it is shifted).  As clang does, a multiple
    of 4096 up to 4095 * 4096 without a shift is taken as shifted, and with ``negated`` (the opposite
    instruction's alias: ``add x0, x1, #-1`` is SUB) only a negative value is taken, as its magnitude."""

    negated: bool = False
    kind = "imm"

    def parse(self, text: str) -> dict:
        number, shift = _parse_shift(text)
        value = parse_int(number)
        if value is None:
            raise _shape(f"'{text.strip()[:40]}' is not an immediate")
        if shift is not None and number.strip().startswith("-"):
            # clang reads a shifted immediate only after '#' or a digit: "-1, lsl #12" is two operands to it
            raise OperandError(f"a negative shifted immediate needs its '#': #{number.strip()[:40]}, lsl #{shift}")
        if self.negated:
            if value >= 0:
                raise _shape(f"#{value} is not negative")
            value = -value
        if shift is not None and shift not in (0, 12):
            raise OperandError(f"the immediate's shift must be lsl #0 or lsl #12, not lsl #{shift}")
        if shift is None and value >= 1 << 12 and value % (1 << 12) == 0 and value >> 12 < 1 << 12:
            return {"imm12": value >> 12, "sh": 1}  # clang: add x0, x1, #4096 is #1, lsl #12
        if not 0 <= value < 1 << 12:
            raise OperandError(f"the immediate must be 0-4095 (optionally lsl #12), not {value}")
        return {"imm12": value, "sh": 1 if shift == 12 else 0}

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
        m = re.fullmatch(r"\[[ \t]*([a-z0-9_]+)[ \t]*(?:,[ \t]*(.+?))?[ \t]*\]", text.strip().lower())
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
class PreIndex:
    """``[<Xn|SP>, #<simm>]!``: the base plus a signed 9-bit byte offset (field imm9), written back."""

    kind = "mem_pre"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\[[ \t]*([a-z0-9_]+)[ \t]*,[ \t]*(.+?)[ \t]*\][ \t]*!", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a pre-indexed memory operand [Xn, #imm]!")
        return {**GReg("Rn", sp=True).parse(m.group(1)), **SImm("imm9", 9).parse(m.group(2))}

    def text(self, fields: dict) -> str:
        return f"[{GReg('Rn', sp=True).text(fields)}, {SImm('imm9', 9).text(fields)}]!"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields["Rn"], SImm("imm9", 9).value(fields)


@dataclass(frozen=True)
class UnscaledOffset:
    """``[<Xn|SP>{, #<simm>}]``: the base plus a signed 9-bit byte offset (field imm9), not written back
    (LDUR/STUR; clang makes ``ldr x0, [x1, #3]`` one)."""

    kind = "mem"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\[[ \t]*([a-z0-9_]+)[ \t]*(?:,[ \t]*(.+?))?[ \t]*\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a memory operand [Xn{{, #imm}}]")
        offset = SImm("imm9", 9).parse(m.group(2)) if m.group(2) else {"imm9": 0}
        return {**GReg("Rn", sp=True).parse(m.group(1)), **offset}

    def text(self, fields: dict) -> str:
        base = GReg("Rn", sp=True).text(fields)
        return f"[{base}, {SImm('imm9', 9).text(fields)}]" if fields["imm9"] else f"[{base}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields["Rn"], SImm("imm9", 9).value(fields)


@dataclass(frozen=True)
class BaseOnly:
    """``[<Xn|SP>]``: a post-indexed access's base (its offset is the next operand)."""

    kind = "mem_post"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\[[ \t]*([a-z0-9_]+)[ \t]*\]", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()}' is not a post-indexed memory operand [Xn], #imm")
        return GReg("Rn", sp=True).parse(m.group(1))

    def text(self, fields: dict) -> str:
        return f"[{GReg('Rn', sp=True).text(fields)}]"

    def value(self, fields: dict) -> int:
        return fields["Rn"]


@dataclass(frozen=True)
class BranchTarget:
    """A label, or ``#offset``: the target's distance in bytes from the instruction, as clang reads a
    number here (``b #8`` branches 8 bytes forward, wherever it is).  The field ``field`` of ``bits``
    holds the distance in words, signed.

    isasim prints ``#offset`` (what clang prints, and reads back the same) with the target's address in
    a comment after the instruction (``b.ne #-24  // 0x1000c``).  A number without '#' is refused,
    although clang takes it as an offset too: isasim used to print and read a bare number as the
    target's address (``b.ne 0x1000c``), and a program or trace written that way must not silently
    branch somewhere else now."""

    field: str
    bits: int
    kind = "target"

    def parse(self, text: str, address: int = 0, labels: dict | None = None) -> dict:
        name = text.strip()
        if labels is not None and name in labels:
            offset = labels[name] - address
        elif re.fullmatch(r"[A-Za-z_.$][A-Za-z0-9_.$]*", name):
            raise OperandError(f"undefined label '{name[:60]}'")
        else:
            offset = parse_int(name)
            if offset is None:
                raise _shape(f"'{name[:40]}' is not a label or an #offset")
            if not name.startswith("#"):
                raise OperandError(f"a branch target is a label or #offset (bytes from this instruction, as clang "
                                   f"reads it), not '{name[:40]}': isasim once printed target addresses that way")
        reach = 1 << (self.bits + 1)
        if offset % 4 or not -reach <= offset < reach:
            raise OperandError(f"the branch offset must be a multiple of 4 in {-reach} to {reach - 4}, not {offset}"
                               f" (the target {(address + offset) & ((1 << 64) - 1):#x} from {address:#x})")
        return {self.field: (offset >> 2) & ((1 << self.bits) - 1)}

    def offset(self, fields: dict) -> int:
        raw = fields[self.field]
        return (raw - (1 << self.bits) if raw >> (self.bits - 1) else raw) * 4

    def text(self, fields: dict) -> str:
        return f"#{self.offset(fields)}"

    def comment(self, fields: dict, address: int) -> str:
        """What a reader wants beside the offset: the address it branches to."""
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

