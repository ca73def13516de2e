"""An instruction from a form and its field values: the operand values its semantics take and the text
llvm prints for it (an alias where llvm-objdump prefers one, a branch's target as a comment).

The assembler (text -> fields) and the decoder (word -> fields) both end here, so an instruction reads
the same whichever way it came; explain prints its examples with the same functions.
"""

from __future__ import annotations

from ..core.program import Instruction
from .forms import UNDEFINED_FORMS, A64Form
from .operands import BranchTarget


def operand_texts(form: A64Form, fields: dict) -> list[str]:
    return [kind.text(fields) for kind in form.operands]


def preferred_alias(form: A64Form, fields: dict):
    """The alias llvm prints for these fields of ``form`` (CMP for SUBS with Rd = 31), or None."""
    return next((alias for alias in form.extra.get("aliases", ()) if alias.preferred(fields)), None)


def instruction_text(form: A64Form, fields: dict, address: int, comment: bool = True) -> str:
    """The text llvm prints; after a branch (unless not ``comment``), its target's address as a comment
    (``b.ne #-24  // 0x1000c``), which the assembler, like clang, skips."""
    alias = preferred_alias(form, fields)
    shown = alias or form
    texts = [text for text in operand_texts(shown, fields) if text]  # a default pattern: nothing
    mnemonic = alias.mnemonic if alias else form.extra.get("alias", form.fixed_text)
    text = mnemonic + (" " + ", ".join(texts) if texts else "")
    target = next((kind for kind in shown.operands if isinstance(kind, BranchTarget)), None)
    return text if target is None or not comment else f"{text}  // {target.comment(fields, address)}"


def statement_text(instruction: Instruction) -> str:
    """An instruction's text without the comment a branch carries (``b.ne #-24``): for a title or a
    command line, where the target's address is given otherwise or not at all."""
    return instruction_text(instruction.form, instruction.extra["fields"], instruction.address, comment=False)


def operand_values(form: A64Form, fields: dict) -> tuple:
    return tuple(kind.value(fields) for kind in form.operands)


def make_instruction(form: A64Form, fields: dict, address: int, word: int, line: int | None = None) -> Instruction:
    return Instruction(form, operand_values(form, fields), address, word.to_bytes(4, "little"),
                       instruction_text(form, fields, address), line=line,
                       invalid=UNDEFINED_FORMS.get(form.id), extra={"fields": fields, "word": word})
