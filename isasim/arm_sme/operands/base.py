"""The operands of the A64 base forms beyond the scalar subset: the FP/SIMD scalar registers of the loads and
stores (B, H, S, D, Q), the pair addresses of LDP/STP, the register-offset address with its extend, the
PC-relative targets of ADR, ADRP and LDR (literal), an inverted condition (CSET, CINC ...), and the system
register names of MRS/MSR.  Each prints what llvm-objdump prints and reads what clang reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .common import REGISTER_NUMBER, OperandError, _shape, parse_int
from .scalar import _ALIASES, CONDITION_SYNONYMS, CONDITIONS, BranchTarget, GReg, SImm

_MEMORY = re.compile(r"\[[ \t]*([a-z0-9_]+)[ \t]*(?:,[ \t]*(.+?))?[ \t]*\]", re.ASCII | re.DOTALL)


@dataclass(frozen=True)
class FpReg:
    """``B<t>``, ``H<t>``, ``S<t>``, ``D<t>`` or ``Q<t>`` (``letter``): the low 8 to 128 bits of Z<t>."""

    field: str = "Rt"
    letter: str = "d"
    kind = "fp"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(rf"([bhsdq])({REGISTER_NUMBER})", text.strip().lower())
        if not m or m.group(1) != self.letter:
            raise _shape(f"'{text.strip()[:40]}' is not a {self.letter.upper()} register ({self.letter}0-{self.letter}31)")
        if int(m.group(2)) > 31:
            raise OperandError(f"'{text.strip()}' is not a {self.letter.upper()} register ({self.letter}0-{self.letter}31)")
        return {self.field: int(m.group(2))}

    def text(self, fields: dict) -> str:
        return f"{self.letter}{fields[self.field]}"

    def value(self, fields: dict) -> int:
        return fields[self.field]


def _scaled(text: str, scale: int, bits: int) -> int:
    """A signed offset that is a multiple of ``scale``, as the field value (offset / scale) of ``bits``."""
    value = parse_int(text)
    if value is None:
        raise _shape(f"'{text.strip()[:40]}' is not an immediate")
    low, high = -(1 << (bits - 1)) * scale, ((1 << (bits - 1)) - 1) * scale
    if value % scale or not low <= value <= high:
        raise OperandError(f"the offset must be a multiple of {scale} in {low} to {high}, not {value}")
    return (value // scale) & ((1 << bits) - 1)


def _signed(raw: int, bits: int) -> int:
    return raw - (1 << bits) if raw >> (bits - 1) else raw


@dataclass(frozen=True)
class PairOffset:
    """LDP/STP's ``[<Xn|SP>{, #<imm>}]``: imm7, signed, times ``scale`` (the register size)."""

    scale: int = 8
    kind = "mem"

    def parse(self, text: str) -> dict:
        m = _MEMORY.fullmatch(text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not a memory operand [Xn{{, #imm}}]")
        offset = _scaled(m.group(2), self.scale, 7) if m.group(2) else 0
        return {**GReg("Rn", sp=True).parse(m.group(1)), "imm7": offset}

    def text(self, fields: dict) -> str:
        base, offset = GReg("Rn", sp=True).text(fields), _signed(fields["imm7"], 7) * self.scale
        return f"[{base}, #{offset}]" if offset else f"[{base}]"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields["Rn"], _signed(fields["imm7"], 7) * self.scale


@dataclass(frozen=True)
class PairPreIndex:
    """LDP/STP's ``[<Xn|SP>, #<imm>]!``: written back before the access."""

    scale: int = 8
    kind = "mem_pre"

    def parse(self, text: str) -> dict:
        m = re.fullmatch(r"\[[ \t]*([a-z0-9_]+)[ \t]*,[ \t]*(.+?)[ \t]*\][ \t]*!", text.strip().lower())
        if not m:
            raise _shape(f"'{text.strip()[:40]}' is not a pre-indexed memory operand [Xn, #imm]!")
        return {**GReg("Rn", sp=True).parse(m.group(1)), "imm7": _scaled(m.group(2), self.scale, 7)}

    def text(self, fields: dict) -> str:
        return f"[{GReg('Rn', sp=True).text(fields)}, #{_signed(fields['imm7'], 7) * self.scale}]!"

    def value(self, fields: dict) -> tuple[int, int]:
        return fields["Rn"], _signed(fields["imm7"], 7) * self.scale


@dataclass(frozen=True)
class ScaledSImm:
    """A post-indexed pair's ``#<imm>``: imm7, signed, times ``scale``."""

    scale: int = 8
    field: str = "imm7"
    bits: int = 7
    kind = "imm"

    def parse(self, text: str) -> dict:
        return {self.field: _scaled(text, self.scale, self.bits)}

    def text(self, fields: dict) -> str:
        return f"#{self.value(fields)}"

    def value(self, fields: dict) -> int:
        return _signed(fields[self.field], self.bits) * self.scale


_EXTENDS = {2: "uxtw", 3: "lsl", 6: "sxtw", 7: "sxtx"}  # option: the extend (LSL is UXTX); the others are reserved


@dataclass(frozen=True)
class RegisterOffset:
    """``[<Xn|SP>, (<Wm>|<Xm>){, <extend> {<amount>}}]`` (fields Rn, Rm, option, S): the index register, W for
    UXTW/SXTW and X for LSL/SXTX, shifted left by log2 of the access size when S is set.  llvm prints the
    amount only where S is set (``#0`` for a byte access), and LSL only with its amount."""

    shift: int = 3  # log2 of the access size in bytes
    kind = "mem_index"

    def parse(self, text: str) -> dict:
        m = _MEMORY.fullmatch(text.strip().lower())
        if not m or m.group(2) is None:
            raise _shape(f"'{text.strip()[:40]}' is not a memory operand [Xn, Xm{{, extend}}]")
        parts = [part.strip() for part in m.group(2).split(",")]
        if len(parts) > 2:
            raise _shape(f"'{text.strip()[:40]}' is not a memory operand [Xn, Xm{{, extend}}]")
        index = _ALIASES.get(parts[0], parts[0])  # fp and lr are x29 and x30
        if not re.fullmatch(r"[xw](\d+|zr)", index):
            raise _shape(f"'{index[:40]}' is not an index register")
        extend, amount = "lsl", None
        if len(parts) == 2:
            em = re.fullmatch(r"([a-z]+)(?:(?:[ \t]+|(?=#))(#?[ \t]*\S+))?", parts[1])
            if not em or em.group(1) not in _EXTENDS.values():
                raise OperandError(f"'{parts[1][:40]}' is not an index extend here (lsl, uxtw, sxtw, sxtx)")
            extend = em.group(1)
            if em.group(2) is not None:
                amount = parse_int(em.group(2), signed=False)
                if amount is None:
                    raise OperandError(f"'{em.group(2)[:40]}' is not a shift amount")
            elif extend == "lsl":
                raise OperandError("lsl needs its amount here")
        option = next(o for o, name in _EXTENDS.items() if name == extend)
        if amount is None:
            s = 0
        elif amount == self.shift:
            s = 1
        elif amount == 0:
            s = 0
        else:
            raise OperandError(f"the index shift must be #0 or #{self.shift} here, not #{amount}")
        width = 32 if option in (2, 6) else 64
        if index[0] != ("w" if width == 32 else "x"):
            raise OperandError(f"{index} is not a {width}-bit register: {extend} extends a{' W' if width == 32 else 'n X'} "
                               f"register")
        fields = {**GReg("Rn", sp=True).parse(m.group(1)), **GReg("Rm", width).parse(index)}
        return {**fields, "option": option, "S": s}

    def text(self, fields: dict) -> str:
        option = fields["option"]
        index = GReg("Rm", 32 if option in (2, 6) else 64).text(fields)
        base = GReg("Rn", sp=True).text(fields)
        extend = _EXTENDS.get(option, "?")
        if option == 3 and not fields["S"]:
            return f"[{base}, {index}]"
        amount = f" #{self.shift}" if fields["S"] else ""
        return f"[{base}, {index}, {extend}{amount}]"

    def value(self, fields: dict) -> tuple[int, int, int, int]:
        return fields["Rn"], fields["Rm"], fields["option"], self.shift if fields["S"] else 0


@dataclass(frozen=True)
class PcRelative(BranchTarget):
    """ADR's, ADRP's and LDR (literal)'s target: a label or ``#offset`` from the instruction.  ``unit`` is
    what the field counts (1 byte for ADR, 4096 for ADRP, whose target is a page: the label's page less
    this instruction's, 4 for a literal load); ADR and ADRP split their field in immhi:immlo."""

    unit: int = 1
    split: bool = False

    def _raw(self, fields: dict) -> int:
        return (fields["immhi"] << 2) | fields["immlo"] if self.split else fields[self.field]

    def parse(self, text: str, address: int = 0, labels: dict | None = None) -> dict:
        name = text.strip()
        if name.startswith("["):
            raise _shape(f"'{name[:40]}' is a memory operand, not a label or an #offset")
        if labels is not None and name in labels:
            offset = labels[name] - address
            if self.unit == 4096:
                offset = (labels[name] & ~0xFFF) - (address & ~0xFFF)
        elif re.fullmatch(r"[A-Za-z_.$][A-Za-z0-9_.$]*", name):
            raise OperandError(f"undefined label '{name[:60]}'")
        else:
            offset = parse_int(name)
            if offset is None:
                raise _shape(f"'{name[:40]}' is not a label or an #offset")
            if not name.startswith("#"):
                raise OperandError(f"a PC-relative target is a label or #offset (bytes from this instruction, as clang "
                                   f"reads it), not '{name[:40]}'")
        reach = (1 << (self.bits - 1)) * self.unit
        if offset % self.unit or not -reach <= offset < reach:
            raise OperandError(f"the offset must be a multiple of {self.unit} in {-reach} to {reach - self.unit}, "
                               f"not {offset}")
        raw = (offset // self.unit) & ((1 << self.bits) - 1)
        return {"immhi": raw >> 2, "immlo": raw & 3} if self.split else {self.field: raw}

    def offset(self, fields: dict) -> int:
        return _signed(self._raw(fields), self.bits) * self.unit

    def comment(self, fields: dict, address: int) -> str:
        if self.unit == 4096:
            return f"{(address & ~0xFFF) + self.offset(fields):#x}"
        return f"{address + self.offset(fields):#x}"


@dataclass(frozen=True)
class InvertedCondition:
    """CSET's, CINC's ... ``<cond>``: the form's field holds the inverse condition (cond EOR 1); AL and NV are
    not allowed (their inverses would be each other)."""

    kind = "cond"

    def parse(self, text: str) -> dict:
        name = CONDITION_SYNONYMS.get(text.strip().lower(), text.strip().lower())
        if name not in CONDITIONS:
            raise _shape(f"'{text.strip()[:40]}' is not a condition ({', '.join(CONDITIONS)})")
        if name in ("al", "nv"):
            raise OperandError("the conditions al and nv are not allowed here")
        return {"cond": CONDITIONS.index(name) ^ 1}

    def text(self, fields: dict) -> str:
        return CONDITIONS[fields["cond"] ^ 1]

    def value(self, fields: dict) -> int:
        return fields["cond"] ^ 1


@dataclass(frozen=True)
class SysRegName:
    """A system register named by MRS/MSR (``TPIDR2_EL0``): fixed by the form, printed in capitals as llvm
    prints it, read in any case."""

    name: str
    kind = "sysreg"

    def parse(self, text: str) -> dict:
        if text.strip().upper() != self.name:
            raise _shape(f"'{text.strip()[:40]}' is not a system register isasim models (NZCV, FPCR, FPSR, TPIDR2_EL0, "
                         f"SVCR)")
        return {}

    def text(self, fields: dict) -> str:
        return self.name

    def value(self, fields: dict) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class DefaultLinkRegister:
    """RET's ``{<Xn>}``: x30 when left out, and printed only when it is another register."""

    field: str = "Rn"
    kind = "gpr"
    default = "x30"

    def parse(self, text: str) -> dict:
        return GReg(self.field).parse(text)

    def text(self, fields: dict) -> str:
        return "" if fields[self.field] == 30 else GReg(self.field).text(fields)

    def value(self, fields: dict) -> int:
        return fields[self.field]


_PRF_TYPES, _PRF_TARGETS, _PRF_POLICIES = ("pld", "pli", "pst"), ("l1", "l2", "l3"), ("keep", "strm")


@dataclass(frozen=True)
class PrefetchOp:
    """PRFM's ``<prfop>`` (field Rt): ``<type><target><policy>`` (pldl1keep ... pstl3strm) where llvm names the
    value, else ``#<imm5>``."""

    field: str = "Rt"
    kind = "prfop"

    def parse(self, text: str) -> dict:
        name = text.strip().lower()
        m = re.fullmatch(r"(pld|pli|pst)(l[123])(keep|strm)", name)
        if m:
            value = (_PRF_TYPES.index(m.group(1)) << 3) | (_PRF_TARGETS.index(m.group(2)) << 1) \
                | _PRF_POLICIES.index(m.group(3))
            return {self.field: value}
        value = parse_int(name)  # clang takes the number with or without '#'
        if value is None:
            raise _shape(f"'{text.strip()[:40]}' is not a prefetch operation (pldl1keep ... pstl3strm, or #0-#31)")
        if not 0 <= value <= 31:
            raise OperandError(f"the prefetch operation must be #0-#31, not {value}")
        return {self.field: value}

    def text(self, fields: dict) -> str:
        value = fields[self.field]
        kind, target, policy = value >> 3, (value >> 1) & 3, value & 1
        if kind < 3 and target < 3:
            return f"{_PRF_TYPES[kind]}{_PRF_TARGETS[target]}{_PRF_POLICIES[policy]}"
        return f"#{value}"

    def value(self, fields: dict) -> int:
        return fields[self.field]


__all__ = ["PrefetchOp", "DefaultLinkRegister", "FpReg", "InvertedCondition", "PairOffset", "PairPreIndex", "PcRelative",
           "RegisterOffset", "ScaledSImm", "SImm", "SysRegName"]
