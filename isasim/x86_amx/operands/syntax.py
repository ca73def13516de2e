"""x86 operands as the assembler parses them and the decoder produces them.

Printing follows ``objdump -M intel`` so that isasim's disassembly can be
compared with GNU binutils text for text: registers by name, immediates and
displacements in hex, memory as ``SIZE PTR [base+index*scale+disp]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .registers import GPR_VIEWS

SIZE_NAMES = {1: "BYTE", 2: "WORD", 4: "DWORD", 8: "QWORD", 16: "XMMWORD", 32: "YMMWORD", 64: "ZMMWORD"}


@dataclass(frozen=True)
class Reg:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Imm:
    value: int  # as written (may be negative); encoders reduce it to the field width
    bits: int = 0  # width of the encoded field once known (8, 16, 32, 64); 0 = not yet
    # The 1 that D0/D1 (SHL r/m, 1) imply: no immediate byte, and objdump prints it in decimal.
    implied: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        if self.implied:
            return str(self.value)
        if self.bits:
            return hex(self.value % (1 << self.bits))
        return hex(self.value) if self.value >= 0 else f"-{-self.value:#x}"


@dataclass(frozen=True)
class Mem:
    base: str | None = None
    index: str | None = None
    scale: int = 1
    disp: int = 0
    size: int | None = None  # operand size in bytes when written or implied (QWORD PTR -> 8)
    show_size: bool = field(default=True, compare=False)  # objdump omits it for LEA and AMX operands
    disp_size: int = field(default=0, compare=False)  # bytes of displacement in the encoding, if decoded
    # [rip+disp]: the address it names, next instruction + disp, known once the instruction is placed (decoded)
    rip_target: int | None = field(default=None, compare=False)
    # fs or gs: the address is relative to that segment's base (the thread pointer: fs_base, gs_base)
    segment: str | None = None
    # AVX-512's embedded broadcast: one element of ``size`` bytes read and repeated ``broadcast`` times
    # (objdump: DWORD BCST [rdi]); 0 for an ordinary operand, 1 while the row that gives the count is not known
    broadcast: int = 0

    def address_text(self) -> str:
        if self.segment:  # objdump: fs:0x28 (absolute), fs:[rax+0x8]
            plain = replace(self, segment=None).address_text()
            return f"{self.segment}:{plain[3:] if plain.startswith('ds:') else plain}"
        if not self.base and not self.index:
            return f"ds:{self.disp % (1 << 64):#x}"  # objdump's form for an absolute address
        parts = ""
        if self.base:
            parts = self.base
        if self.index:
            parts += ("+" if parts else "") + f"{self.index}*{self.scale}"
        if self.disp or self.disp_size:  # objdump shows an encoded zero displacement as +0x0
            if self.base == "rip":
                parts += f"+{self.disp % (1 << 64):#x}"  # objdump: [rip+0xffffffffffffffe0], never rip-0x20
            elif self.disp < 0:
                parts += f"-{-self.disp:#x}"
            else:
                parts += f"+{self.disp:#x}"
        return f"[{parts}]"

    def __str__(self) -> str:
        text = self.address_text()
        if self.show_size and self.size in SIZE_NAMES:
            text = f"{SIZE_NAMES[self.size]} {'BCST' if self.broadcast else 'PTR'} {text}"
        return text


@dataclass(frozen=True)
class Target:
    """A branch target: an absolute address, with the label it was written as."""

    address: int
    label: str | None = None

    def __str__(self) -> str:
        return self.label if self.label else hex(self.address)


Operand = Reg | Imm | Mem | Target


def memory_text(mem: Mem) -> str:
    """A memory operand as objdump prints it (``Mem.__str__``).

    objdump shows the displacement the encoding carries, even when it is 0
    (``[rbp+0x0]``, ``[rbx*4+0x0]``).  Decoded and canonical operands record its
    size in ``disp_size``; for an operand without it, GNU as's choice is assumed:
    a displacement only when the value is not 0, or the base is rbp/r13 (which
    cannot be encoded without one), or there is no base.
    """
    if not mem.disp_size and (not mem.base or mem.base in ("rbp", "r13")):
        mem = replace(mem, disp_size=4 if not mem.base else 1)
    return str(mem)


def operand_text(operand) -> str:
    if isinstance(operand, Mem):
        return memory_text(operand)
    return str(operand)


def width(operand) -> int:
    """Operand size in bits: a register's view, a memory operand's size, an immediate's width."""
    if isinstance(operand, Reg):
        return GPR_VIEWS[operand.name].bits
    if isinstance(operand, Mem):
        return operand.size * 8
    return operand.bits


def signed(value: int, bits: int) -> int:
    """``value`` (reduced to ``bits`` bits) read as a two's-complement number."""
    value %= 1 << bits
    return value - (1 << bits) if value >> (bits - 1) else value
