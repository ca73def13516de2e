"""The toy's operand syntax, both ways: an operand's text to its value, and its value to text.

An operand's kind is its name in the form's syntax line:

    rd, ra, rb   a register r0-r3 (rd written, ra and rb read)
    [ra]         the memory word at the address in ra
    acc[i]       element i (0-3) of the accumulator array
    imm          a 32-bit immediate (-2^31 .. 2^32-1, kept modulo 2^32)
    target       a label, or the address of an instruction of the program
"""

from __future__ import annotations

import re

from isasim.core.errors import AssemblyError

from .state import ACC_ELEMENTS, REGISTER_NAMES, WORD

REGISTER_OPERANDS = ("rd", "ra", "rb")
WIDE_OPERANDS = ("imm", "target")  # the operands toy32 keeps in its 32-bit field
_INTEGER = re.compile(r"-?(0x[0-9a-f]+|[0-9]+)", re.ASCII)


def signed32(value: int) -> int:
    return value - WORD if value & (1 << 31) else value


def register(text: str) -> int:
    name = text.strip().lower()
    if name not in REGISTER_NAMES:
        raise AssemblyError(f"'{text.strip()}' is not a register (toy has r0-r3)")
    return REGISTER_NAMES.index(name)


def integer(text: str, what: str) -> int:
    token = text.strip().lower()
    if not _INTEGER.fullmatch(token):
        raise AssemblyError(f"'{text.strip()}' is not {what}")
    value = int(token, 0)
    if not -(1 << 31) <= value < WORD:
        raise AssemblyError(f"{text.strip()} does not fit in 32 bits")
    return value % WORD


def operand_value(name: str, text: str, labels: dict[str, int]) -> int:
    """The value of operand ``name`` of a syntax line, written ``text``; labels resolve branch targets."""
    text = text.strip()
    if name in REGISTER_OPERANDS:
        return register(text)
    if name == "[ra]":
        m = re.fullmatch(r"\[\s*(\w+)\s*\]", text)
        if not m:
            raise AssemblyError(f"'{text}' is not a memory operand [rN]")
        return register(m.group(1))
    if name == "acc[i]":
        m = re.fullmatch(r"acc\s*\[\s*([0-9]+)\s*\]", text.lower())
        if not m:
            raise AssemblyError(f"'{text}' is not an accumulator element acc[i]")
        index = int(m.group(1))
        if index >= ACC_ELEMENTS:
            raise AssemblyError(f"UNDEFINED: acc[{index}]: acc has {ACC_ELEMENTS} elements, acc[0] to "
                                f"acc[{ACC_ELEMENTS - 1}]")
        return index
    if name == "imm":
        return integer(text, "an immediate")
    if name == "target":
        if text in labels:
            return labels[text]
        return integer(text, "a label or an address")
    raise AssertionError(f"operand name {name!r} in a syntax line")


def operand_text(name: str, value: int) -> str:
    if name in REGISTER_OPERANDS:
        return REGISTER_NAMES[value]
    if name == "[ra]":
        return f"[{REGISTER_NAMES[value]}]"
    if name == "acc[i]":
        return f"acc[{value}]"
    if name == "imm":
        small = signed32(value)
        return str(small) if -256 <= small < 256 else f"{value:#x}"
    return f"{value:#x}"  # a branch target: its address


def instruction_text(form, operands: tuple) -> str:
    parts = [operand_text(name, value) for name, value in zip(form.operand_names, operands)]
    return form.mnemonic + (" " + ", ".join(parts) if parts else "")
