"""AdvSIMD (NEON) operands: V registers with an arrangement (``v3.4s``), lists of them for TBL/TBX
(``{ v1.16b, v2.16b }``), elements (``v1.s[3]``) whose index the form packs into its own fields, and
the modified immediates of MOVI/MVNI/ORR/BIC (``#127, lsl #8``, ``#0xff00ff00ff00ff00``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .common import REGISTER_NUMBER, OperandError, _shape, parse_int

_ARRANGEMENTS = ("8b", "16b", "4h", "8h", "2s", "4s", "1d", "2d", "1q")


def _vreg(text: str) -> tuple[int, str]:
    m = re.fullmatch(rf"v({REGISTER_NUMBER})\.([0-9]*[bhsdq])", text.strip().lower())
    if not m or int(m.group(1)) > 31:
        raise _shape(f"'{text.strip()[:40]}' is not a V register with an arrangement (v0.4s ... v31.16b)")
    return int(m.group(1)), m.group(2)


@dataclass(frozen=True)
class VReg:
    """``Vn.T``: a V register (the low 128 bits of Z<n>) read as the arrangement T (8b ... 2d)."""

    field: str
    arrangement: str
    kind = "v"

    def parse(self, text: str) -> dict:
        if "[" in text or "{" in text:
            raise _shape(f"{text.strip()} is not a plain V register")
        n, t = _vreg(text)
        if t != self.arrangement:
            raise _shape(f"{text.strip()} is .{t}, not this form's .{self.arrangement}")
        return {self.field: n}

    def text(self, fields: dict) -> str:
        return f"v{fields[self.field]}.{self.arrangement}"

    def value(self, fields: dict) -> int:
        return fields[self.field]


@dataclass(frozen=True)
class VList:
    """``{ Vn.T, ... }``: ``count`` consecutive V registers (modulo 32), as TBL/TBX's table."""

    field: str
    count: int
    arrangement: str = "16b"
    kind = "v_list"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\{(.*)\}", text.strip())
        if not m:
            raise _shape(f"'{text.strip()}' is not a register list {{...}}")
        body = m.group(1).strip()
        if "-" in body:
            first, last = (_vreg(part) for part in body.split("-", 1))
            regs = [((first[0] + i) % 32, first[1]) for i in range((last[0] - first[0]) % 32 + 1)]
        else:
            regs = [_vreg(part) for part in body.split(",")]
        if len(regs) != self.count:
            raise _shape(f"{text.strip()} has {len(regs)} registers, not {self.count}")
        if any(t != self.arrangement for _, t in regs):
            raise _shape(f"{text.strip()} is not a list of .{self.arrangement} registers")
        for (a, _), (b, _) in zip(regs, regs[1:]):
            if b != (a + 1) % 32:
                raise OperandError(f"the registers of {text.strip()} are not consecutive")
        return {self.field: regs[0][0]}

    def text(self, fields: dict) -> str:
        first = fields[self.field]
        return "{ " + ", ".join(f"v{(first + i) % 32}.{self.arrangement}" for i in range(self.count)) + " }"

    def value(self, fields: dict) -> int:
        return fields[self.field]


@dataclass(frozen=True)
class VElement:
    """``Vn.T[index]``: one element of a V register; ``get``/``put`` turn the form's index fields into the
    index and back (INS/UMOV/DUP pack it into imm5 above the size marker, FMLA into H:L:M)."""

    field: str
    letter: str
    limit: int  # the largest index
    get: Callable[[dict], int]
    put: Callable[[int], dict]
    kind = "v_element"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"(.*?)\[([^\]]+)\]", text.strip())
        if not m or "{" in text:
            raise _shape(f"'{text.strip()}' is not a V register element Vn.T[i]")
        n, t = _vreg(m.group(1))
        if t != self.letter:
            raise _shape(f"{text.strip()} is .{t}, not this form's .{self.letter}")
        index = parse_int(m.group(2), hash="forbidden")
        if index is None or not 0 <= index <= self.limit:
            raise OperandError(f"the index must be 0-{self.limit} here, not {m.group(2).strip()}")
        return {self.field: n, **self.put(index)}

    def text(self, fields: dict) -> str:
        return f"v{fields[self.field]}.{self.letter}[{self.get(fields)}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields[self.field], self.get(fields)


def _imm8(fields: dict) -> int:
    return fields["abc"] << 5 | fields["defgh"]


def _put_imm8(value: int) -> dict:
    return {"abc": value >> 5, "defgh": value & 31}


@dataclass(frozen=True)
class ShiftedImm8:
    """``#imm8{, lsl #amount}`` (``shift`` = "lsl", the amount 8 times the field ``sh``; or "msl", 8 or 16 from
    the one-bit field): the modified immediate of MOVI/MVNI/ORR/BIC for 8-, 16- and 32-bit elements."""

    shift: str = "lsl"
    shifts: int = 1  # how many shift amounts the field has (1: none, 2: 0/8, 4: 0/8/16/24)
    kind = "imm"

    def parse(self, text: str) -> dict:
        head, _, tail = text.partition(",")
        value = parse_int(head)
        if value is None:
            raise _shape(f"'{text.strip()}' is not an immediate")
        if not 0 <= value <= 255:
            raise OperandError(f"the immediate must be in 0-255, not {value}")
        amount = 0
        if tail.strip():
            m = re.fullmatch(r"(lsl|msl)\s*#?\s*(\d+)", tail.strip().lower())
            if not m or m.group(1) != self.shift:
                raise _shape(f"'{tail.strip()}' is not this form's shift ({self.shift})")
            amount = int(m.group(2))
        elif self.shift == "msl":
            raise _shape("MSL needs its shift")
        if self.shift == "msl":
            if amount not in (8, 16):
                raise OperandError(f"the msl shift must be 8 or 16, not {amount}")
            return {**_put_imm8(value), "sh": amount // 8 - 1}
        if amount % 8 or amount // 8 >= self.shifts:
            raise OperandError(f"the lsl shift must be one of {', '.join(str(8 * i) for i in range(self.shifts))}")
        return {**_put_imm8(value), **({"sh": amount // 8} if self.shifts > 1 else {})}

    def text(self, fields: dict) -> str:
        if self.shift == "msl":
            return f"#{_imm8(fields)}, msl #{8 * (fields['sh'] + 1)}"
        amount = 8 * fields.get("sh", 0)
        return f"#{_imm8(fields)}" + (f", lsl #{amount}" if amount else "")

    def value(self, fields: dict) -> tuple[int, int]:
        return _imm8(fields), (fields["sh"] + 1) * 8 if self.shift == "msl" else 8 * fields.get("sh", 0)


def expand_bytes(imm8: int) -> int:
    """MOVI's 64-bit form: each bit of imm8 a byte of ones or zeros (abcdefgh -> aaaaaaaabbbbbbbb...)."""
    return sum(0xFF << (8 * i) for i in range(8) if imm8 >> i & 1)


@dataclass(frozen=True)
class ByteMaskImm:
    """``#0xff00ff00ff00ff00``: MOVI's 64-bit immediate, every byte 0x00 or 0xff, printed as llvm prints it
    (C's ``%#016llx``: ``0x000000000000ff``, and ``0000000000000000`` for zero)."""

    kind = "imm"

    def parse(self, text: str) -> dict:
        value = parse_int(text, signed=False)
        if value is None:
            raise _shape(f"'{text.strip()}' is not an immediate")
        value &= (1 << 64) - 1
        imm8 = 0
        for i in range(8):
            byte = value >> (8 * i) & 0xFF
            if byte not in (0, 0xFF):
                raise OperandError(f"every byte of the immediate must be 0x00 or 0xff, not {text.strip()}")
            imm8 |= (byte == 0xFF) << i
        return _put_imm8(imm8)

    def text(self, fields: dict) -> str:
        value = expand_bytes(_imm8(fields))
        return "#" + (format(value, "#016x") if value else "0" * 16)

    def value(self, fields: dict) -> int:
        return expand_bytes(_imm8(fields))


@dataclass(frozen=True)
class ShiftImm:
    """``#shift`` of the shifts by an immediate, held in immh:immb: a left shift is immh:immb - esize, a right
    shift 2 * esize - immh:immb (the field ``immb`` holds the low bits; the form fixes immh's size marker)."""

    esize: int
    right: bool
    kind = "imm"

    def _raw(self, fields: dict) -> int:
        return self.esize | fields["imm"]  # immh:immb, the size marker bit included

    def parse(self, text: str) -> dict:
        value = parse_int(text)
        if value is None:
            raise _shape(f"'{text.strip()}' is not an immediate")
        low, high = (1, self.esize) if self.right else (0, self.esize - 1)
        if not low <= value <= high:
            raise OperandError(f"the shift must be in {low}-{high}, not {value}")
        raw = 2 * self.esize - value if self.right else self.esize + value
        return {"imm": raw - self.esize}

    def text(self, fields: dict) -> str:
        return f"#{self.value(fields)}"

    def value(self, fields: dict) -> int:
        raw = self._raw(fields)
        return 2 * self.esize - raw if self.right else raw - self.esize


@dataclass(frozen=True)
class ZeroImm:
    """``#0``: the zero the compares against zero (CMEQ Vd.T, Vn.T, #0) write."""

    kind = "imm"

    def parse(self, text: str) -> dict:
        if parse_int(text) != 0:
            raise _shape(f"'{text.strip()}' is not #0")
        return {}

    def text(self, fields: dict) -> str:
        return "#0"

    def value(self, fields: dict) -> int:
        return 0
