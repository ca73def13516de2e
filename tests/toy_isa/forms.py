"""The toy's instructions, one declaration each: syntax line, opcode, summary, semantics and faults.

The syntax line drives the assembler and the printer (its operand names say what each operand is, see
:mod:`.operands`), the opcode drives toy32's bytes (:mod:`.encoding`), and the semantics function
(:mod:`.semantics`) is what the machine runs; its docstring is the pseudocode ``isasim explain`` shows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from isasim.core.program import FormTable, syntax_id

from . import semantics
from .faults import MEMFAULT
from .semantics import HALT


@dataclass(frozen=True)
class ToyForm:
    """One instruction form of the toy (a core Form: id, mnemonic, syntax, summary)."""

    syntax: str  # "ADD rd, ra, rb"
    opcode: int  # toy32's first byte
    summary: str
    semantics: Callable
    faults: tuple[tuple[str, str], ...] = ()  # (kind, when)
    group: str = "arithmetic"

    @property
    def id(self) -> str:
        return syntax_id(self.syntax)

    def prepare(self, instruction):
        """The execute contract (isasim.core.isa): prepare -> bind(context) -> run() -> next pc or None.

        What the instruction names is found here, once; a real ISA checks its feature or chip rules in
        bind (once per machine); run() does only the semantics."""
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


_UNMAPPED = ((MEMFAULT, "the word's four bytes are not all in mapped memory"),)

FORMS = FormTable()
for _form in (
    ToyForm("LI rd, imm", 0x01, "load an immediate into a register", semantics.li),
    ToyForm("ADD rd, ra, rb", 0x02, "add two registers, wrapping at 32 bits", semantics.add),
    ToyForm("ADDI rd, ra, imm", 0x03, "add an immediate to a register, wrapping at 32 bits", semantics.addi),
    ToyForm("LD rd, [ra]", 0x04, "load a 32-bit word from memory", semantics.ld, _UNMAPPED, "memory"),
    ToyForm("ST rb, [ra]", 0x05, "store a 32-bit word to memory", semantics.st,
            _UNMAPPED + ((MEMFAULT, "the word's memory is read-only"),), "memory"),
    ToyForm("MAC acc[i], ra, rb", 0x06, "multiply two registers and add the product to an accumulator element",
            semantics.mac, group="accumulator"),
    ToyForm("MOVA rd, acc[i]", 0x07, "copy an accumulator element into a register", semantics.mova,
            group="accumulator"),
    ToyForm("BNZ ra, target", 0x08, "branch when a register is not zero", semantics.bnz, group="control"),
    ToyForm("HALT", 0x09, "end the program", semantics.halt, group="control"),
):
    FORMS.add(_form)
