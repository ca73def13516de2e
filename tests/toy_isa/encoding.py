"""toy32's encoding: every instruction is eight bytes.

    byte 0      the form's opcode
    bytes 1-3   the register and element numbers, in syntax order (unused bytes zero)
    bytes 4-7   the immediate or branch target, little-endian (zero when the form has none)
"""

from __future__ import annotations

from .operands import WIDE_OPERANDS

ENCODED_SIZE = 8


def encode(form, operands: tuple) -> bytes:
    fields = [value for name, value in zip(form.operand_names, operands) if name not in WIDE_OPERANDS]
    wide = [value for name, value in zip(form.operand_names, operands) if name in WIDE_OPERANDS]
    return bytes([form.opcode, *fields, *([0] * (3 - len(fields)))]) + (wide[0] if wide else 0).to_bytes(4, "little")
