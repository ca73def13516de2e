"""A64 assembly text (LLVM syntax, as clang accepts it) to instructions, and instructions to text.

A line is ``[label:] [mnemonic operands] [// comment]``; ``.inst 0xWORD`` and ``.byte`` give raw
encodings.  Every instruction is 4 bytes, so labels are known after one pass over the lines.
Each form of the mnemonic is tried; the error reported is the one of the form whose operands
matched furthest (a misaligned list, Zm above z15, Wv outside w8-w11 ... rather than "no such
form"), so a line gets one clear reason.
"""

from __future__ import annotations

import re

from ..core.errors import AssemblyError
from ..core.program import Instruction, Program
from .forms import FORMS, NOT_ENCODABLE, UNDEFINED_FORMS, A64Form
from .operands import BranchTarget, OperandError

_LABEL = re.compile(r"([A-Za-z_.$][\w.$]*)\s*:")


def split_operands(text: str) -> list[str]:
    """Split at the commas outside brackets and braces; a ZERO tile list or ``, lsl #12`` stays whole."""
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    # "#1, lsl #12" is one operand (ADD/SUB's shifted immediate), and so is "vl4, mul #3" (CNTB's pattern),
    # "x2, asr #3" (a shifted register) and "w2, uxtw #2" (an extended one)
    merged = []
    for part in parts:
        if merged and re.fullmatch(r"(lsl|lsr|asr|ror|mul)(\s+|\s*#)\s*-?\w+|[su]xt[bhwx](\s*#?\s*\w+)?",
                                   part.lower()):
            merged[-1] += ", " + part
        else:
            merged.append(part)
    return merged


def _parse(form: A64Form, operands: list[str], address: int, labels: dict) -> dict:
    """The fields of ``form`` from the operand texts; OperandError (with .depth) if they do not fit."""
    missing = form.operands[len(operands):]
    if missing and all(getattr(kind, "default", None) is not None for kind in missing):
        operands = list(operands) + [kind.default for kind in missing]  # left out: the default (ptrue p0.b is all)
    if len(operands) != len(form.operands):
        error = OperandError(f"{form.mnemonic} takes {len(form.operands)} operands here, not {len(operands)}",
                             shape=True)
        error.depth = -1
        raise error
    fields = {}
    for depth, (kind, text) in enumerate(zip(form.operands, operands)):
        try:
            parsed = kind.parse(text, address, labels) if isinstance(kind, BranchTarget) else kind.parse(text)
            clash = [name for name, value in parsed.items() if fields.get(name, value) != value]
            if clash:  # two operands that fill one field must agree (LDR ZA's two offsets)
                raise OperandError(getattr(kind, "conflict", f"'{text}' disagrees with an earlier operand"))
            fields.update(parsed)
        except OperandError as error:
            error.depth = depth + (0 if error.shape else 100)
            raise
    return fields


def operand_texts(form: A64Form, fields: dict, address: int) -> list[str]:
    return [kind.text(fields, address) if isinstance(kind, BranchTarget) else kind.text(fields)
            for kind in form.operands]


def preferred_alias(form: A64Form, fields: dict):
    """The alias llvm prints for these fields of ``form`` (CMP for SUBS with Rd = 31), or None."""
    return next((alias for alias in form.extra.get("aliases", ()) if alias.preferred(fields)), None)


def instruction_text(form: A64Form, fields: dict, address: int) -> str:
    alias = preferred_alias(form, fields)
    texts = [text for text in operand_texts(alias or form, fields, address) if text]  # a default pattern: nothing
    mnemonic = alias.mnemonic if alias else form.extra.get("alias", form.fixed_text)
    return mnemonic + (" " + ", ".join(texts) if texts else "")


def operand_values(form: A64Form, fields: dict) -> tuple:
    return tuple(kind.value(fields) for kind in form.operands)


def make_instruction(form: A64Form, fields: dict, address: int, word: int, line: int | None = None) -> Instruction:
    return Instruction(form, operand_values(form, fields), address, word.to_bytes(4, "little"),
                       instruction_text(form, fields, address), line=line,
                       invalid=UNDEFINED_FORMS.get(form.id), extra={"fields": fields, "word": word})


def _forms_for(text: str) -> tuple[list[tuple[A64Form, object]], str]:
    """The (form, alias or None) a statement may be, and its operand text (``smstart za`` is a form of
    its own)."""
    words = text.split(None, 1)
    mnemonic = words[0].lower()
    rest = words[1].strip() if len(words) > 1 else ""
    fixed = [(f, None) for f in FORMS.of_mnemonic(mnemonic) if f.fixed_text == " ".join(text.lower().split())]
    if fixed:
        return fixed, ""
    forms = [(f, None) for f in FORMS.of_mnemonic(mnemonic) if f.fixed_text == mnemonic]
    forms += [(f, None) for f in FORMS if f.extra.get("alias") == mnemonic]  # mov is also MOVA, as llvm prints it
    forms += [(f, a) for f in FORMS for a in f.extra.get("aliases", ()) if a.mnemonic == mnemonic]
    return forms, rest


def _refuse(message: str, depth: int, shape: bool = False):
    error = OperandError(message, shape=shape)
    error.depth = depth
    raise error


def assemble_statement(text: str, address: int, labels: dict, line: int | None = None) -> Instruction:
    forms, rest = _forms_for(text)
    mnemonic = text.split()[0].lower()
    if not forms:
        if FORMS.of_mnemonic(mnemonic):
            raise AssemblyError(f"'{text}' is not a form of {mnemonic}")
        raise AssemblyError(f"unknown instruction '{mnemonic}'")
    operands = split_operands(rest)
    if (mnemonic, "multiple") in NOT_ENCODABLE and len(operands) == 3 and operands[2].startswith("{"):
        raise AssemblyError(NOT_ENCODABLE[mnemonic, "multiple"])
    best: OperandError | None = None
    for form, alias in forms:
        try:
            fields = _parse(alias or form, operands, address, labels)
            if alias is not None:
                fields = {**alias.fixed, **fields}
                if alias.derive is not None:
                    try:
                        fields = alias.derive(fields)
                    except OperandError as error:  # a rule between its operands (ubfx's lsb + width)
                        _refuse(str(error), depth=200)
                # e.g. mov x0, #0x10000 is MOVZ, not ORR (a bitmask too)
                if not (alias.accepts or alias.preferred)(fields):
                    _refuse(f"these operands are not {alias.mnemonic}'s {form.id}", depth=-2, shape=True)
            undefined = form.extra.get("undefined_when", lambda _: None)(fields)
            if undefined:  # a rule between operands (ldr x0, [x0], #8: the base is also the destination)
                _refuse(undefined, depth=200)
        except OperandError as error:
            if best is None or error.depth > getattr(best, "depth", 0):
                best = error
            continue
        return make_instruction(form, fields, address, form.encoding.pack(fields), line)
    raise AssemblyError(str(best))


def _raw_words(directive: str, args: str) -> list[int]:
    values = [int(v.strip(), 0) for v in args.split(",") if v.strip()]
    if directive == ".inst":
        if any(not 0 <= v < 1 << 32 for v in values):
            raise AssemblyError(".inst takes 32-bit words")
        return values
    if any(not 0 <= v < 256 for v in values) or len(values) % 4:
        raise AssemblyError(".byte here takes whole instructions: a multiple of 4 bytes, each 0-255")
    return [int.from_bytes(bytes(values[i:i + 4]), "little") for i in range(0, len(values), 4)]


_LONG_NUMBER = re.compile(r"(?<![A-Za-z_])(?:0[xX])?[0-9][0-9a-fA-F]{40,}")  # a number, not a label


def assemble(text: str, isa: str, source: str, base: int) -> Program:
    statements = []  # (line number, text or raw words)
    labels: dict[str, int] = {}
    address = base
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("//")[0].strip()
        # No A64 field holds a number of more than 20 digits (64 bits); refusing longer ones here also
        # keeps int() off pathological text (Python refuses to convert more than 4,300 digits).
        long_number = _LONG_NUMBER.search(line)
        if long_number:
            raise AssemblyError(f"{source}:{number}: a number of {len(long_number.group())} digits does not fit "
                                f"any operand (at most 64 bits)")
        while True:
            m = _LABEL.match(line)
            if not m:
                break
            if m.group(1) in labels:
                raise AssemblyError(f"{source}:{number}: label '{m.group(1)}' is defined twice")
            labels[m.group(1)] = address
            line = line[m.end():].strip()
        if not line:
            continue
        directive = line.split(None, 1)[0].lower()
        if directive in (".inst", ".byte"):
            try:
                words = _raw_words(directive, line.split(None, 1)[1] if " " in line else "")
            except (AssemblyError, ValueError) as error:
                raise AssemblyError(f"{source}:{number}: {error}") from None
            statements.extend((number, w) for w in words)
            address += 4 * len(words)
        elif directive.startswith("."):
            raise AssemblyError(f"{source}:{number}: unknown directive '{directive}'")
        else:
            statements.append((number, line))
            address += 4
    from .decoder import decode_word

    instructions = []
    address = base
    for number, statement in statements:
        try:
            if isinstance(statement, int):
                instruction = decode_word(statement, address)
                instruction.line = number
            else:
                instruction = assemble_statement(statement, address, labels, number)
        except (AssemblyError, OperandError) as error:
            raise AssemblyError(f"{source}:{number}: {error}") from None
        instructions.append(instruction)
        address += 4
    return Program(isa, base, instructions, labels, source)
