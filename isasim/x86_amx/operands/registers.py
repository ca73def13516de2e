"""x86-64 register names: which architectural register each name reads, and how wide.

The general-purpose registers are 16 64-bit registers; ``eax``/``ax``/``al``/``ah``
are views of ``rax``.  Writing a 32-bit view zero-extends into the full register;
writing an 8- or 16-bit view leaves the other bits alone (Intel SDM Vol. 1, 3.4.1.1).
"""

from __future__ import annotations

from dataclasses import dataclass

GPR64 = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
         "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")
_GPR32 = ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi") + tuple(f"r{i}d" for i in range(8, 16))
_GPR16 = ("ax", "cx", "dx", "bx", "sp", "bp", "si", "di") + tuple(f"r{i}w" for i in range(8, 16))
_GPR8 = ("al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil") + tuple(f"r{i}b" for i in range(8, 16))
_GPR8_HIGH = ("ah", "ch", "dh", "bh")

TILE_REGISTERS = tuple(f"tmm{i}" for i in range(8))


@dataclass(frozen=True)
class GprView:
    name: str
    number: int  # 0..15: which of the 16 GPRs
    bits: int  # 8, 16, 32, 64
    shift: int = 0  # 8 for ah/ch/dh/bh
    mask: int = 0  # the bits of the 64-bit register this view covers (derived)

    def __post_init__(self) -> None:
        object.__setattr__(self, "mask", ((1 << self.bits) - 1) << self.shift)


GPR_VIEWS: dict[str, GprView] = {}
for _n in range(16):
    GPR_VIEWS[GPR64[_n]] = GprView(GPR64[_n], _n, 64)
    GPR_VIEWS[_GPR32[_n]] = GprView(_GPR32[_n], _n, 32)
    GPR_VIEWS[_GPR16[_n]] = GprView(_GPR16[_n], _n, 16)
    GPR_VIEWS[_GPR8[_n]] = GprView(_GPR8[_n], _n, 8)
for _n, _name in enumerate(_GPR8_HIGH):
    GPR_VIEWS[_name] = GprView(_name, _n, 8, shift=8)


def gpr_name(number: int, bits: int) -> str:
    """The name of GPR ``number`` viewed at ``bits`` width (no high-byte names)."""
    table = {64: GPR64, 32: _GPR32, 16: _GPR16, 8: _GPR8}[bits]
    return table[number]


@dataclass(frozen=True)
class VectorRegister:
    """xmmN, ymmN, zmmN: the low 128, 256 or all 512 bits of vector register N (0..31)."""

    name: str
    number: int
    bits: int


VECTOR_REGISTERS: dict[str, VectorRegister] = {
    f"{prefix}{n}": VectorRegister(f"{prefix}{n}", n, bits)
    for prefix, bits in (("xmm", 128), ("ymm", 256), ("zmm", 512)) for n in range(32)}


def vector_register(name: str) -> VectorRegister | None:
    return VECTOR_REGISTERS.get(name)


def tile_number(name: str) -> int | None:
    if name in TILE_REGISTERS:
        return int(name[3:])
    return None
