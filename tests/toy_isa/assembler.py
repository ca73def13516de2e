"""Toy assembly text to a program: each instruction built from its parse, as a form and its operands.

A line is ``[label:] [mnemonic operands] [# comment]``; the operands are read by their names in the form's
syntax line (:mod:`.operands`), so the text, the operands and toy32's bytes (:mod:`.encoding`) all come from
one declaration.  ``.byte`` gives raw bytes (eight per instruction, toy32 only), so that a trace can hold an
encoding no assembly text makes: an element number past acc[3] decodes, and is UNDEFINED when executed.
"""

from __future__ import annotations

import re

from isasim.core.errors import AssemblyError, DecodeError
from isasim.core.program import Instruction, Program

from .decoder import decode_one
from .encoding import ENCODED_SIZE, encode
from .forms import FORMS
from .operands import instruction_text, integer, operand_value


def _split(line: str) -> tuple[str | None, str]:
    """A line as (its label or None, the instruction text), comments removed."""
    text = line.split("#", 1)[0].strip()
    label = None
    m = re.match(r"([A-Za-z_.][A-Za-z0-9_.]*)\s*:(.*)", text)
    if m:
        label, text = m.group(1), m.group(2).strip()
    return label, text


def assemble(text: str, isa: str, source: str, base: int, encoded: bool) -> Program:
    size = ENCODED_SIZE if encoded else 1
    labels: dict[str, int] = {}
    statements: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):  # first pass: where every label is
        label, body = _split(line)
        if label is not None:
            if label in labels:
                raise AssemblyError(f"label '{label}' is defined twice", source=source, line=number)
            labels[label] = base + size * len(statements)
        if body:
            statements.append((number, body))
    end = base + size * len(statements)
    instructions = []
    for k, (number, body) in enumerate(statements):
        mnemonic, _, rest = re.sub(r"\s+", " ", body).partition(" ")
        if mnemonic.lower() == ".byte":
            instructions.append(_raw_instruction(rest, base + size * k, encoded, source, number))
            continue
        forms = FORMS.of_mnemonic(mnemonic.lower())
        if not forms:
            raise AssemblyError(f"unknown instruction '{mnemonic}' (toy has {', '.join(FORMS.mnemonics())})",
                                source=source, line=number)
        form = forms[0]  # each toy mnemonic has one form
        given = rest.split(",") if rest.strip() else []
        if len(given) != len(form.operand_names):
            raise AssemblyError(f"{form.mnemonic} takes {len(form.operand_names)} operand(s) "
                                f"({form.syntax.lower()}), not {len(given)}", source=source, line=number)
        try:
            operands = tuple(operand_value(name, part, labels) for name, part in zip(form.operand_names, given))
        except AssemblyError as error:
            raise error.located(source, number)
        if "target" in form.operand_names:
            target = operands[form.operand_names.index("target")]
            if not (base <= target <= end and (target - base) % size == 0):
                raise AssemblyError(f"branch target {target:#x} is not an instruction of the program",
                                    source=source, line=number)
        address = base + size * k
        encoding = encode(form, operands) if encoded else None
        instructions.append(Instruction(form, operands, address, encoding, instruction_text(form, operands),
                                        line=number, size=size))
    return Program(isa, base, instructions, labels, source)


def _raw_instruction(text: str, address: int, encoded: bool, source: str, number: int) -> Instruction:
    """``.byte b0, ..., b7``: one instruction given by its bytes (toy32 only)."""
    if not encoded:
        raise AssemblyError(".byte: toy has no binary encoding (toy32 has)", source=source, line=number)
    try:
        values = [integer(part, "a byte") for part in text.split(",")]
    except AssemblyError as error:
        raise error.located(source, number)
    if len(values) != ENCODED_SIZE or max(values) > 0xFF:
        raise AssemblyError(f".byte: a toy32 instruction is {ENCODED_SIZE} bytes of 0..255", source=source,
                            line=number)
    data = bytes(values)
    try:
        form, operands, undefined = decode_one(data, address)
    except DecodeError as error:
        raise AssemblyError(str(error), source=source, line=number) from None
    return Instruction(form, operands, address, data, instruction_text(form, operands), line=number,
                       invalid=undefined)
