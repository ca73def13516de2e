"""Toy assembly text to instructions and back, and (for the encoded variant) instructions to bytes and back.

Both directions read the operand names of the forms' syntax lines (see :mod:`.forms`), so
an instruction's text, its operands and its bytes come from one declaration.  A line is
``[label:] [mnemonic operands] [# comment]``.  The encoded variant gives every instruction
eight bytes: the opcode, up to three register or element numbers, and a little-endian
32-bit immediate or branch target; ``.byte`` gives raw bytes (eight per instruction), so
that a trace can hold an encoding no assembly text makes: an element number past acc[3]
decodes, and is UNDEFINED when executed.
"""

from __future__ import annotations

import re

from isasim.core.errors import AssemblyError, DecodeError
from isasim.core.program import Instruction, Program

from .forms import BY_OPCODE, FORMS, ToyForm, signed32
from .state import ACC_ELEMENTS, REGISTER_NAMES, WORD

ENCODED_SIZE = 8
_REGISTER_OPERANDS = ("rd", "ra", "rb")
_LABEL = re.compile(r"[A-Za-z_.][A-Za-z0-9_.]*")
_INTEGER = re.compile(r"-?(0x[0-9a-f]+|[0-9]+)", re.ASCII)


# ---- text -> operands --------------------------------------------------------------------


def _register(text: str) -> int:
    name = text.strip().lower()
    if name not in REGISTER_NAMES:
        raise AssemblyError(f"'{text.strip()}' is not a register (toy has r0-r3)")
    return REGISTER_NAMES.index(name)


def _integer(text: str, what: str) -> int:
    token = text.strip().lower()
    if not _INTEGER.fullmatch(token):
        raise AssemblyError(f"'{text.strip()}' is not {what}")
    value = int(token, 0)
    if not -(1 << 31) <= value < WORD:
        raise AssemblyError(f"{text.strip()} does not fit in 32 bits")
    return value % WORD


def _operand(name: str, text: str, labels: dict[str, int]) -> int:
    text = text.strip()
    if name in _REGISTER_OPERANDS:
        return _register(text)
    if name == "[ra]":
        m = re.fullmatch(r"\[\s*(\w+)\s*\]", text)
        if not m:
            raise AssemblyError(f"'{text}' is not a memory operand [rN]")
        return _register(m.group(1))
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
        return _integer(text, "an immediate")
    if name == "target":
        if text in labels:
            return labels[text]
        return _integer(text, "a label or an address")
    raise AssertionError(f"operand name {name!r} in a syntax line")


# ---- operands -> text ----------------------------------------------------------------------


def operand_text(name: str, value: int) -> str:
    if name in _REGISTER_OPERANDS:
        return REGISTER_NAMES[value]
    if name == "[ra]":
        return f"[{REGISTER_NAMES[value]}]"
    if name == "acc[i]":
        return f"acc[{value}]"
    if name == "imm":
        small = signed32(value)
        return str(small) if -256 <= small < 256 else f"{value:#x}"
    return f"{value:#x}"  # a branch target: its address


def instruction_text(form: ToyForm, operands: tuple) -> str:
    parts = [operand_text(name, value) for name, value in zip(form.operand_names, operands)]
    return form.mnemonic + (" " + ", ".join(parts) if parts else "")


# ---- assembling --------------------------------------------------------------------------------


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
    lines = text.splitlines()
    labels: dict[str, int] = {}
    statements: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):  # first pass: where every label is
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
            operands = tuple(_operand(name, part, labels) for name, part in zip(form.operand_names, given))
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
        values = [_integer(part, "a byte") for part in text.split(",")]
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


# ---- bytes (the encoded variant) ---------------------------------------------------------------


def encode(form: ToyForm, operands: tuple) -> bytes:
    fields = [value for name, value in zip(form.operand_names, operands) if name not in ("imm", "target")]
    wide = [value for name, value in zip(form.operand_names, operands) if name in ("imm", "target")]
    return bytes([form.opcode, *fields, *([0] * (3 - len(fields)))]) + (wide[0] if wide else 0).to_bytes(4, "little")


def decode_one(word: bytes, address: int) -> tuple[ToyForm, tuple, str | None]:
    """One eight-byte instruction as (form, operands, why it is UNDEFINED or None); DecodeError for bytes
    that are no instruction at all.  An element number past acc[3] is an instruction that decodes (the
    opcode is known) but is UNDEFINED, as an encoding that breaks a rule the hardware checks."""
    if len(word) < ENCODED_SIZE:
        raise DecodeError(f"{address:#x}: {len(word)} byte(s) left, a toy instruction is {ENCODED_SIZE}")
    form = BY_OPCODE.get(word[0])
    if form is None:
        raise DecodeError(f"{address:#x}: opcode {word[0]:#04x} is no toy instruction")
    small = [name for name in form.operand_names if name not in ("imm", "target")]
    operands, field, undefined = [], 1, None
    for name in form.operand_names:
        if name in ("imm", "target"):
            operands.append(int.from_bytes(word[4:8], "little"))
            continue
        value = word[field]
        field += 1
        if name == "acc[i]" and value >= ACC_ELEMENTS:
            undefined = f"acc[{value}]: acc has {ACC_ELEMENTS} elements, acc[0] to acc[{ACC_ELEMENTS - 1}]"
        elif name != "acc[i]" and value >= len(REGISTER_NAMES):
            raise DecodeError(f"{address:#x}: {form.mnemonic} operand {name} is {value}, not a register r0-r3")
        operands.append(value)
    if any(word[1 + len(small):4]) or (not any(n in ("imm", "target") for n in form.operand_names) and any(word[4:8])):
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
