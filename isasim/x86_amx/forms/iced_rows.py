"""What an x86 form declared by iced-x86 opcode rows derives from its declaration alone.

The scalar subset (scalar.py) and the vector moves (vector.py) declare each form as its SDM
syntax line, the mnemonic objdump prints, its semantics and the iced-x86 ``Code`` rows (the SDM's
opcode-table rows) it owns; they differ in how they encode, decode and execute, not in this.  AMX
forms (amx.py) are declared by a parsed VEX opcode instead and derive these themselves.
"""

from __future__ import annotations

from typing import Callable, ClassVar

from ...core.program import syntax_id
from ..operands import operand_text


class IcedRowsForm:
    """The identity and the documentation of a form: ``id``, ``doc``, ``summary``, ``rows`` and ``format``.

    A subclass is a dataclass with ``syntax``, ``mnemonic``, ``semantics`` and ``codes`` (the iced Codes of
    its rows), and its own ``row_table`` (Code -> a row with ``op_code_string`` and ``instruction_string``),
    which its module fills as it reads iced's tables."""

    syntax: str
    mnemonic: str
    semantics: Callable
    codes: list[int]
    row_table: ClassVar[dict]

    @property
    def id(self) -> str:
        """Unique per form: its syntax line as an identifier, e.g. ``ADD_dest_src``, ``JE_rel``."""
        return syntax_id(self.syntax)

    @property
    def doc(self) -> str:
        """The semantics function's docstring: what ``explain`` and the reference pages print."""
        return (self.semantics.__doc__ or "").strip()

    @property
    def summary(self) -> str:
        return self.doc.split("\n")[0]

    @property
    def rows(self) -> list[str]:
        """The SDM opcode-table rows this form covers, e.g. ``o64 01 /r  ADD r/m64, r64``."""
        table = type(self).row_table
        return [f"{table[c].op_code_string}  {table[c].instruction_string}" for c in self.codes]

    def format(self, operands: tuple) -> str:
        """Canonical text, as ``objdump -M intel`` prints it (no column padding)."""
        if not operands:
            return self.mnemonic
        return f"{self.mnemonic} " + ",".join(operand_text(o) for o in operands)
