"""toy32 bytes to instructions (see :mod:`.encoding` for the layout), and the listing ``isasim asm`` prints.

An element number past acc[3] decodes (the opcode is known) but is UNDEFINED, as an encoding that breaks a
rule the hardware checks; bytes that are no instruction at all are a DecodeError.
"""

from __future__ import annotations

from isasim.core.errors import DecodeError
from isasim.core.program import Instruction, Program

from .encoding import ENCODED_SIZE
from .forms import FORMS, ToyForm
from .operands import WIDE_OPERANDS, instruction_text
from .state import ACC_ELEMENTS, REGISTER_NAMES

BY_OPCODE = {form.opcode: form for form in FORMS}


def decode_one(word: bytes, address: int) -> tuple[ToyForm, tuple, str | None]:
    """One eight-byte instruction as (form, operands, why it is UNDEFINED or None)."""
    if len(word) < ENCODED_SIZE:
        raise DecodeError(f"{address:#x}: {len(word)} byte(s) left, a toy instruction is {ENCODED_SIZE}")
    form = BY_OPCODE.get(word[0])
    if form is None:
        raise DecodeError(f"{address:#x}: opcode {word[0]:#04x} is no toy instruction")
    small = [name for name in form.operand_names if name not in WIDE_OPERANDS]
    operands, field, undefined = [], 1, None
    for name in form.operand_names:
        if name in WIDE_OPERANDS:
            operands.append(int.from_bytes(word[4:8], "little"))
            continue
        value = word[field]
        field += 1
        if name == "acc[i]" and value >= ACC_ELEMENTS:
            undefined = f"acc[{value}]: acc has {ACC_ELEMENTS} elements, acc[0] to acc[{ACC_ELEMENTS - 1}]"
        elif name != "acc[i]" and value >= len(REGISTER_NAMES):
            raise DecodeError(f"{address:#x}: {form.mnemonic} operand {name} is {value}, not a register r0-r3")
        operands.append(value)
    has_wide = any(name in WIDE_OPERANDS for name in form.operand_names)
    if any(word[1 + len(small):4]) or (not has_wide and any(word[4:8])):
        raise DecodeError(f"{address:#x}: {form.mnemonic} has non-zero bytes where its encoding has none")
    return form, tuple(operands), undefined


def disassemble(code: bytes, isa: str, base: int) -> Program:
    instructions = []
    for offset in range(0, len(code), ENCODED_SIZE):
        word = code[offset : offset + ENCODED_SIZE]
        form, operands, undefined = decode_one(word, base + offset)
        instructions.append(Instruction(form, operands, base + offset, word, instruction_text(form, operands),
                                        invalid=undefined))
    return Program(isa, base, instructions, source="<bytes>")


def listing(code: bytes, base: int):
    """(address, bytes, text, note, decoded) per eight bytes, going on past what does not decode."""
    for offset in range(0, len(code), ENCODED_SIZE):
        word = code[offset : offset + ENCODED_SIZE]
        try:
            form, operands, undefined = decode_one(word, base + offset)
        except DecodeError as error:
            yield base + offset, word, "(bad)", str(error).split(": ", 1)[-1], False
        else:
            note = f"UNDEFINED: {undefined}" if undefined else ""
            yield base + offset, word, instruction_text(form, operands), note, True
