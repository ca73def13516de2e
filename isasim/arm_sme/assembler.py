"""A64 assembly text (LLVM syntax, as clang accepts it) to instructions, and instructions to text.

A statement is ``[label:]... [mnemonic operands]``; ``.inst 0xWORD`` and ``.byte`` give raw encodings.
Text is split as LLVM's lexer splits it (``statements``): lines at newlines, statements at ``;`` and
carriage returns, comments ``//``, ``/* */`` and a statement starting with ``#``; anything but
printable ASCII and tabs outside comments is refused.  Numbers are read as clang reads them
(operands/common.py).  Every instruction is 4 bytes, so labels are known after one pass.
Each form of the mnemonic is tried; the error reported is the one of the form whose operands
matched furthest (a misaligned list, Zm above z15, Wv outside w8-w11 ... rather than "no such
form"), so a line gets one clear reason.
"""

from __future__ import annotations

import re
import unicodedata

from ..core.errors import AssemblyError
from ..core.program import Instruction, Program
from .decoder import decode_word
from .forms import FORMS, NOT_ENCODABLE, A64Form
from .forms.builtins import BUILTINS
from .instructions import make_instruction
from .operands import BranchTarget, OperandError, parse_int
from .operands.common import SIZE_NOTE


def split_operands(text: str) -> list[str]:
    """Split at the commas outside brackets and braces; a ZERO tile list or ``, lsl #12`` stays whole.
    An empty operand (``x0, , x1`` or a trailing comma) is an error, as it is to clang."""
    if not text.strip(" \t"):
        return []
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
    parts.append(current.strip())
    if "" in parts:
        raise AssemblyError(f"'{text.strip()[:60]}' has an empty operand (a comma too many)")
    # "#1, lsl #12" is one operand (ADD/SUB's shifted immediate), and so is "vl4, mul #3" (CNTB's pattern),
    # "x2, asr #3" (a shifted register) and "w2, uxtw #2" (an extended one)
    merged = []
    for part in parts:
        if merged and re.fullmatch(r"(lsl|lsr|asr|ror|mul|msl)([ \t]+|[ \t]*#).*|[su]xt[bhwx]([ \t#].*)?", part.lower()):
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
    fields.pop(SIZE_NOTE, None)  # the operands agree on it; it is no field of the encoding
    return fields


# A mnemonic is an identifier (b.ne has a dot); what follows it need not be a space: ld1w{z0.s}, ... is
# read by clang as ld1w {z0.s}, ...
_MNEMONIC = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*", re.ASCII)


def _mnemonic(text: str) -> tuple[str, str]:
    """A statement's mnemonic (lower case) and the rest of it."""
    m = _MNEMONIC.match(text)
    if m is None:
        raise AssemblyError(f"'{text[:40]}' does not start with an instruction's name")
    return m.group().lower(), text[m.end():].strip(" \t")


def _forms_for(text: str) -> tuple[list[tuple[A64Form, object]], str]:
    """The (form, alias or None) a statement may be, and its operand text (``smstart za`` is a form of
    its own)."""
    mnemonic, rest = _mnemonic(text)
    fixed = [(f, None) for f in FORMS.of_mnemonic(mnemonic) if f.fixed_text == " ".join(text.lower().split())]
    if fixed:
        return fixed, ""
    forms = [(f, None) for f in FORMS.of_mnemonic(mnemonic)
             if f.fixed_text == mnemonic and not f.extra.get("written_as_aliases_only")]
    forms += _alias_forms().get(mnemonic, [])
    return forms, rest


_ALIAS_FORMS: dict[str, list] = {}


def _alias_forms() -> dict[str, list]:
    """Mnemonic -> the (form, alias) pairs it may name as another form's alias, in FORMS order: the forms
    always printed under another name (mov is also MOVA, as llvm prints it) first, then the Arm ARM's aliases.
    Made once: scanning every form for each statement was most of the assembler's time."""
    if not _ALIAS_FORMS:
        table: dict[str, list] = {}
        for f in FORMS:
            if f.extra.get("alias"):
                table.setdefault(f.extra["alias"], []).append((f, None))
        for f in FORMS:
            for a in f.extra.get("aliases", ()):
                table.setdefault(a.mnemonic, []).append((f, a))
        _ALIAS_FORMS.update(table)
    return _ALIAS_FORMS


def _refuse(message: str, depth: int, shape: bool = False):
    error = OperandError(message, shape=shape)
    error.depth = depth
    raise error


def assemble_statement(text: str, address: int, labels: dict, line: int | None = None) -> Instruction:
    builtin = BUILTINS.get(text.strip(" \t"))
    if builtin is not None:  # a recorded program's call target isasim runs itself (memset, __arm_tpidr2_save)
        return make_instruction(builtin, {}, address, builtin.word, line)
    forms, rest = _forms_for(text)
    mnemonic = _mnemonic(text)[0]
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
            try:
                word = form.encoding.pack(fields)
            except ValueError as error:  # an operand its parser took that the field cannot hold (sminv's p8)
                _refuse(f"{error} of {form.id}", depth=100)
        except OperandError as error:
            if best is None or error.depth > getattr(best, "depth", 0):
                best = error
            continue
        return make_instruction(form, fields, address, word, line)
    raise AssemblyError(str(best))


def _raw_words(directive: str, args: str) -> list[int]:
    values = []
    for text in args.split(","):
        value = parse_int(text, hash="forbidden")
        if value is None:
            raise AssemblyError(f"{directive} takes numbers, not '{text.strip()[:40]}'")
        values.append(value)
    if directive == ".inst":
        if any(not 0 <= v < 1 << 32 for v in values):  # clang keeps the low 32 bits of any other value
            raise AssemblyError(".inst takes 32-bit words (0 to 0xffffffff)")
        return values
    if any(not 0 <= v < 256 for v in values) or len(values) % 4:
        raise AssemblyError(".byte here takes whole instructions: a multiple of 4 bytes, each 0-255")
    return [int.from_bytes(bytes(values[i:i + 4]), "little") for i in range(0, len(values), 4)]


_LABEL = re.compile(r"([A-Za-z_.$][A-Za-z0-9_.$]*)[ \t]*:", re.ASCII)


def _foreign_character(statement: str) -> str | None:
    """The first character of ``statement`` that is not A64 assembly text, described, or None.  Outside
    comments, LLVM's lexer knows printable ASCII and the tab, and nothing else: a no-break space, a
    Unicode digit or a line separator is an error to clang, and Python's own notions (str.split()
    splitting at U+00A0, int() reading U+0663 as 3) must not make it something else here."""
    for ch in statement:
        if not (" " <= ch <= "~" or ch == "\t"):
            name = unicodedata.name(ch, "a control character")
            return f"U+{ord(ch):04X} ({name})"
    return None


_SPECIAL = re.compile(r"[\n\r;#]|//|/\*")
_LINE_END = re.compile(r"[\n\r]")


def _split(text: str, source: str):
    """(line number, statement text) as LLVM's lexer cuts ``text``: a newline, a carriage return or ';'
    ends a statement; ``//`` is a comment to the end of the line (or carriage return), and so is a '#'
    that starts a statement; ``/* */`` is a space, even across lines.  Whichever starts first wins, so a
    /* inside a line comment opens nothing.  A statement is numbered by the line it starts on."""
    current, start, line, at = [], 1, 1, 0
    while (m := _SPECIAL.search(text, at)) is not None:
        current.append(text[at:m.start()])
        token, at = m.group(), m.end()
        if token == "//" or (token == "#" and not "".join(current).strip(" \t")):
            end = _LINE_END.search(text, at)
            at = end.start() if end else len(text)  # the line end itself ends the statement
        elif token == "/*":
            end = text.find("*/", at)
            if end < 0:
                raise AssemblyError(f"{source}:{line}: a /* comment is not closed")
            line += text.count("\n", at, end)
            current.append(" ")
            at = end + 2
        elif token == "#":
            current.append(token)
        else:  # a newline, a carriage return or ';'
            yield start, "".join(current)
            current = []
            line += token == "\n"
            start = line
    current.append(text[at:])
    yield start, "".join(current)


def statements(text: str, source: str):
    """(line number, labels, statement) for each statement of ``text`` (as ``_split`` cuts it), its
    labels taken off; the statement is '' where there are only labels (or nothing).  After labels, a '#'
    makes the rest of the statement a comment (but not the rest of the line, as it does first thing)."""
    for number, statement in _split(text, source):
        labels = []
        statement = statement.strip(" \t")
        while (m := _LABEL.match(statement)) is not None:
            labels.append(m.group(1))
            statement = statement[m.end():].strip(" \t")
        foreign = _foreign_character(statement)
        if foreign is not None:
            raise AssemblyError(f"{source}:{number}: {foreign} is not part of A64 assembly text")
        if statement.startswith("#"):
            statement = ""
        if labels or statement:
            yield number, labels, statement


def _located(source: str, number: int, error: Exception) -> AssemblyError:
    """The error of line ``number``, as one printable line (a tab the message quotes becomes a space)."""
    return AssemblyError(f"{source}:{number}: {error}".replace("\t", " "))


def assemble(text: str, isa: str, source: str, base: int) -> Program:
    items = []  # (line number, text or raw words)
    labels: dict[str, int] = {}
    address = base
    for number, names, statement in statements(text, source):
        for name in names:
            if name in labels:
                raise AssemblyError(f"{source}:{number}: label '{name}' is defined twice")
            labels[name] = address
        if not statement:
            continue
        if statement[0].isdigit() and ":" in statement:
            raise AssemblyError(f"{source}:{number}: numeric local labels ('1:', 'b 1b') are not supported; "
                                f"name the label")
        directive, _, arguments = re.sub(r"[ \t]+", " ", statement).partition(" ")
        directive = directive.lower()
        if directive in (".inst", ".byte"):
            try:
                words = _raw_words(directive, arguments)
            except (AssemblyError, OperandError) as error:
                raise _located(source, number, error) from None
            items.extend((number, w) for w in words)
            address += 4 * len(words)
        elif directive.startswith("."):
            raise AssemblyError(f"{source}:{number}: unknown directive '{directive}'")
        else:
            items.append((number, statement))
            address += 4
    instructions = []
    address = base
    for number, item in items:
        try:
            if isinstance(item, int):
                instruction = decode_word(item, address)
                instruction.line = number
            else:
                instruction = assemble_statement(item, address, labels, number)
        except (AssemblyError, OperandError) as error:
            raise _located(source, number, error) from None
        instructions.append(instruction)
        address += 4
    return Program(isa, base, instructions, labels, source)
