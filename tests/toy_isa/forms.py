"""The toy's instructions, one declaration each: syntax line, opcode, summary and semantics.

The syntax line drives the assembler and the printer (its operand names say what each
operand is), the opcode drives the encoded variant's bytes, and the semantics function,
written like a manual's pseudocode, is what the machine runs; its docstring is the
pseudocode ``isasim explain`` shows.  Operand names in a syntax line:

    rd, ra, rb   a register r0-r3 (rd written, ra and rb read)
    [ra]         the memory word at the address in ra
    acc[i]       element i (0-3) of the accumulator array
    imm          a 32-bit immediate (-2^31 .. 2^32-1, kept modulo 2^32)
    target       a label, or the address of an instruction of the program
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from isasim.core.faults import Fault, MemoryFault
from isasim.core.program import FormTable, syntax_id

from .state import WORD, ToyState

HALT = object()  # what a semantics function returns to end the program


def signed32(value: int) -> int:
    return value - WORD if value & (1 << 31) else value


class ToyCpu:
    """What a semantics function sees: the registers, the accumulator and memory, in the manual's words."""

    def __init__(self, state: ToyState, memory):
        self.state, self.memory = state, memory

    def R(self, n: int) -> int:
        return self.state.regs[n]

    def set_R(self, n: int, value: int) -> None:
        self.state.write_reg(n, value)

    def ACC(self, i: int) -> int:
        return self.state.acc[i]

    def set_ACC(self, i: int, value: int) -> None:
        self.state.write_acc(i, value)

    def load_word(self, address: int) -> int:
        try:
            return int.from_bytes(self.memory.read(address, 4), "little")
        except MemoryFault as fault:
            raise MEMFAULT(fault) from None

    def store_word(self, address: int, value: int) -> None:
        try:
            self.memory.write(address, value.to_bytes(4, "little"))
        except MemoryFault as fault:
            raise MEMFAULT(fault) from None


def MEMFAULT(fault: MemoryFault) -> Fault:
    """The toy's one architectural fault: an access to memory no init region maps (or a store to a read-only one)."""
    return Fault("MEMFAULT", fault.rule, address=fault.address, access=fault.access)


# ---- semantics ------------------------------------------------------------------------------


def li(cpu, rd, imm):
    """R[rd] = imm"""
    cpu.set_R(rd, imm)


def add(cpu, rd, ra, rb):
    """R[rd] = (R[ra] + R[rb]) MOD 2^32"""
    cpu.set_R(rd, (cpu.R(ra) + cpu.R(rb)) % WORD)


def addi(cpu, rd, ra, imm):
    """R[rd] = (R[ra] + imm) MOD 2^32"""
    cpu.set_R(rd, (cpu.R(ra) + imm) % WORD)


def ld(cpu, rd, ra):
    """R[rd] = MEM32[R[ra]]            (MEMFAULT if R[ra]..R[ra]+3 is not mapped)"""
    cpu.set_R(rd, cpu.load_word(cpu.R(ra)))


def st(cpu, rb, ra):
    """MEM32[R[ra]] = R[rb]            (MEMFAULT if R[ra]..R[ra]+3 is not mapped or read-only)"""
    cpu.store_word(cpu.R(ra), cpu.R(rb))


def mac(cpu, i, ra, rb):
    """ACC[i] = (ACC[i] + R[ra] * R[rb]) MOD 2^32      (signed or unsigned: the low 32 bits agree)"""
    cpu.set_ACC(i, (cpu.ACC(i) + cpu.R(ra) * cpu.R(rb)) % WORD)


def mova(cpu, rd, i):
    """R[rd] = ACC[i]"""
    cpu.set_R(rd, cpu.ACC(i))


def bnz(cpu, ra, target):
    """IF R[ra] != 0 THEN PC = target"""
    if cpu.R(ra) != 0:
        return target
    return None


def halt(cpu):
    """the program ends"""
    return HALT


# ---- the declarations ------------------------------------------------------------------------


@dataclass(frozen=True)
class ToyForm:
    """One instruction form of the toy (a core Form: id, mnemonic, syntax, summary)."""

    syntax: str  # "ADD rd, ra, rb"
    opcode: int  # the encoded variant's first byte
    summary: str
    semantics: Callable
    faults: tuple[tuple[str, str], ...] = ()  # (kind, when)
    group: str = "arithmetic"

    @property
    def id(self) -> str:
        return syntax_id(self.syntax)

    def prepare(self, instruction):
        """The execute contract (isasim.core.isa): nothing to check per machine."""
        semantics, operands, next_address = self.semantics, instruction.operands, instruction.next_address

        def bind(context):
            def run():
                target = semantics(context, *operands)
                if target is HALT:
                    return None
                return next_address if target is None else target

            return run

        return bind

    @property
    def mnemonic(self) -> str:
        return self.syntax.split()[0].lower()

    @property
    def operand_names(self) -> tuple[str, ...]:
        _, _, rest = self.syntax.partition(" ")
        return tuple(name.strip() for name in rest.split(",") if name.strip())

    @property
    def doc(self) -> str:
        """The pseudocode: the semantics function's docstring."""
        return self.semantics.__doc__.strip()


_MEMFAULT = (("MEMFAULT", "the word's four bytes are not all in mapped memory"),)

FORMS = FormTable()
for _form in (
    ToyForm("LI rd, imm", 0x01, "load an immediate into a register", li),
    ToyForm("ADD rd, ra, rb", 0x02, "add two registers, wrapping at 32 bits", add),
    ToyForm("ADDI rd, ra, imm", 0x03, "add an immediate to a register, wrapping at 32 bits", addi),
    ToyForm("LD rd, [ra]", 0x04, "load a 32-bit word from memory", ld, _MEMFAULT, "memory"),
    ToyForm("ST rb, [ra]", 0x05, "store a 32-bit word to memory", st,
            _MEMFAULT + (("MEMFAULT", "the word's memory is read-only"),), "memory"),
    ToyForm("MAC acc[i], ra, rb", 0x06, "multiply two registers and add the product to an accumulator element",
            mac, group="accumulator"),
    ToyForm("MOVA rd, acc[i]", 0x07, "copy an accumulator element into a register", mova, group="accumulator"),
    ToyForm("BNZ ra, target", 0x08, "branch when a register is not zero", bnz, group="control"),
    ToyForm("HALT", 0x09, "end the program", halt, group="control"),
):
    FORMS.add(_form)

BY_OPCODE = {form.opcode: form for form in FORMS}
