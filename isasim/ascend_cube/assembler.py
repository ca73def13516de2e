"""Ascend cube program text to instructions and back, both driven by the declarations in :mod:`.forms`.

A line is ``Call(name=value, ...)`` (see :mod:`.forms` for the syntax, :mod:`.operands` for each value's), with
``#`` or ``//`` comments.  Each instruction is one address apart (there are no bytes: ``encoding`` is None).
The printer writes every parameter in declaration order, so printing and parsing again gives
the same instruction.
"""

from __future__ import annotations

import re

from isasim.core.errors import AssemblyError
from isasim.core.program import Instruction, Program

from .forms import FORMS, LOCATION_KINDS, AscendForm
from .operands import BLANK, LOCATION, parse_value, shown, value_text

_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(.*)", re.DOTALL | re.ASCII)
_NAMES = {form.name.lower(): form.name for form in FORMS}
_LABEL = re.compile(r"[A-Za-z_.][A-Za-z0-9_.]*\s*:(?!:)", re.ASCII)
_COMMENT = re.compile(r"#|//")
# statement text (comment and blanks stripped) -> (form, operands, printed text): a kernel repeats its statements
# (QBMM's ~6,000 lines are ~300 distinct ones, most of them SetFlag/WaitFlag), and a statement's parse depends on
# its text alone.  The three are immutable (forms are shared declarations, operands a tuple of ints, bools and
# strs), so each line still gets its own Instruction, with its own address and line.  Errors are not kept: a bad
# statement is parsed (and refused, with the same message) each time.  Bounded, so a long-lived process that
# assembles many distinct programs does not grow it without end.
_PARSED: dict[str, tuple] = {}
_PARSED_LIMIT = 1 << 14


def instruction_text(form: AscendForm, operands: tuple) -> str:
    return f"{form.name}({', '.join(f'{p.name}={value_text(p, v)}' for p, v in zip(form.params, operands))})"


def _arguments(name: str, rest: str) -> list[tuple[str, str]]:
    """``(a=1, b=L1[0])`` as [("a", "1"), ("b", "L1[0]")]."""
    rest = rest.strip(BLANK)
    if not (rest.startswith("(") and rest.endswith(")")):
        raise AssemblyError(f"{name}: expected {name}(name=value, ...)")
    body = rest[1:-1].strip(BLANK)
    pairs = []
    for part in (body.split(",") if body else []):
        key, eq, value = (piece.strip(BLANK) for piece in part.partition("="))
        if not eq or not key or not value:
            raise AssemblyError(f"{name}: '{shown(part.strip(BLANK))}' is not name=value")
        pairs.append((key, value))
    return pairs


def _form_for(name: str, given: dict[str, str]) -> AscendForm:
    """The form of call ``name`` that the given dst/src buffers (and marker parameter) pick."""
    forms = FORMS.of_mnemonic(name.lower())
    locations = {}
    for key in ("dst", "src"):
        m = LOCATION.fullmatch(given.get(key, ""))
        if m:
            locations[key] = m.group(1).upper()
    for key, buffer in locations.items():
        if buffer not in LOCATION_KINDS:
            raise AssemblyError(f"'{shown(LOCATION.fullmatch(given[key]).group(1))}' is not a buffer "
                                f"(the buffers: {', '.join(LOCATION_KINDS)})")
    matching = [f for f in forms if all(f.buffers.get(k, b) == b for k, b in locations.items())]
    if len(matching) > 1:
        marked = [f for f in matching if f.marker is not None and f.marker in given]
        matching = marked or [f for f in matching if f.marker is None]
    if not matching:
        ways = "; ".join(f"dst={f.buffers.get('dst')}, src={f.buffers.get('src')}" for f in forms)
        moved = " -> ".join(locations.get(k, "?") for k in ("src", "dst"))
        raise AssemblyError(f"{forms[0].name} has no form moving {moved} (it has: {ways})")
    return matching[0]


def parse_line(body: str) -> AscendForm | tuple:
    m = _CALL.fullmatch(body)
    if not m:
        raise AssemblyError(f"'{shown(body)}' is not an instruction: expected Call(name=value, ...)")
    name, rest = m.group(1), m.group(2)
    if name.lower() not in _NAMES:
        calls = ", ".join(dict.fromkeys(_NAMES.values()))
        raise AssemblyError(f"unknown instruction '{shown(name)}' (ascend_cube has {calls})")
    canonical = _NAMES[name.lower()]
    if name != canonical:
        raise AssemblyError(f"'{name}' is spelled {canonical}, as in Ascend C")
    pairs = _arguments(canonical, rest)
    given: dict[str, str] = {}
    for key, value in pairs:
        if key in given:
            raise AssemblyError(f"{canonical}: {shown(key)} is given twice")
        given[key] = value
    form = _form_for(canonical, given)
    names = form.operand_names  # a property that builds its tuple: once per statement, not once per key
    unknown = [key for key in given if key not in names]
    if unknown:
        raise AssemblyError(f"{canonical}: no parameter '{shown(unknown[0])}' (it takes {', '.join(names)})")
    operands = []
    for p in form.params:
        if p.name in given:
            operands.append(parse_value(p, given[p.name]))
        elif p.required:
            raise AssemblyError(f"{canonical}: {p.name} is missing ({p.doc})")
        else:
            operands.append(p.default)
    return form, tuple(operands)


def _strip(line: str) -> str:
    if "#" in line or "//" in line:  # most lines have no comment: no regex split for them
        line = _COMMENT.split(line, maxsplit=1)[0]
    return line.strip(BLANK)


def source_lines(text: str) -> list[str]:
    """The program's lines as C++ ends them: at a newline (LF, or CR LF).  str.splitlines would also end
    a line at a form feed, a vertical tab, U+2028 and the other Unicode line ends, which C++ does not."""
    return text.split("\n")


def assemble(text: str, isa: str, source: str, base: int) -> Program:
    instructions = []
    for number, line in enumerate(source_lines(text), start=1):
        body = _strip(line)
        if not body:
            continue
        parsed = _PARSED.get(body)
        if parsed is None:  # a statement not seen yet (a label never is: it is refused, not kept)
            if _LABEL.match(body):
                raise AssemblyError("ascend_cube programs are straight-line: no labels (generate the loop's "
                                    "iterations instead)", source=source, line=number)
            try:
                form, operands = parse_line(body)
            except AssemblyError as error:
                raise error.located(source, number)
            parsed = form, operands, instruction_text(form, operands)
            if len(_PARSED) >= _PARSED_LIMIT:
                _PARSED.clear()
            _PARSED[body] = parsed
        form, operands, text = parsed
        address = base + len(instructions)
        instructions.append(Instruction(form, operands, address, None, text, line=number, size=1))
    return Program(isa, base, instructions, {}, source)
