"""Ascend cube program text to instructions and back, both driven by the declarations in :mod:`.forms`.

A line is ``Call(name=value, ...)`` (see :mod:`.forms` for the syntax), with ``#`` or ``//``
comments.  Each instruction is one address apart (there are no bytes: ``encoding`` is None).
The printer writes every parameter in declaration order, so printing and parsing again gives
the same instruction.
"""

from __future__ import annotations

import re

from isasim.core.errors import AssemblyError
from isasim.core.program import Instruction, Program

from .forms import FORMS, LOCATION_KINDS, AscendForm, Param
from .operands import LARGEST, LARGEST_SIGNED, NumberError, read_parameter, shown

# C++'s whitespace inside a line (re.ASCII keeps \s to these, and str.strip gets them explicitly): Python's
# own would also take Unicode spaces and line separators, which C++ does not
BLANK = " \t\r\f\v"
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(.*)", re.DOTALL | re.ASCII)
_LOCATION = re.compile(r"([A-Za-z0-9_]+)\s*\[([^\]]*)\]", re.ASCII)  # the offset is stripped where it is read
_NAMES = {form.name.lower(): form.name for form in FORMS}


def _integer(text: str, p: Param) -> int:
    try:
        return read_parameter(text, p.name, p.lo, p.hi, p.doc)
    except NumberError as error:
        raise AssemblyError(error.message) from None


def _value(p: Param, text: str):
    text = text.strip(BLANK)
    if p.kind in LOCATION_KINDS:
        m = _LOCATION.fullmatch(text)
        if not m:
            raise AssemblyError(f"{p.name}={shown(text)}: expected {p.kind}[{'address' if p.kind == 'GM' else 'offset'}]")
        buffer = m.group(1)
        if buffer.upper() not in LOCATION_KINDS:
            raise AssemblyError(f"'{shown(buffer)}' is not a buffer (the buffers: {', '.join(LOCATION_KINDS)})")
        if buffer.upper() != p.kind:
            raise AssemblyError(f"{p.name}={shown(text)}: this form's {p.name} is in {p.kind}, not {buffer.upper()}")
        return _integer(m.group(2).strip(BLANK), Param(p.name, "int", "a byte offset or address", lo=0, hi=LARGEST))
    if p.kind == "int":
        return _integer(text, p)
    if p.kind == "bool":
        if text.lower() not in ("true", "false"):
            raise AssemblyError(f"{p.name}={shown(text)}: expected true or false")
        return text.lower() == "true"
    if text not in p.choices:  # dtype or mode: the Ascend C names, exactly
        raise AssemblyError(f"{p.name}={shown(text)}: unknown {'type' if p.kind == 'dtype' else 'mode'} "
                            f"(one of {', '.join(p.choices)})")
    return text


def value_text(p: Param, value) -> str:
    """A parameter's value as the printer writes it."""
    if p.kind == "GM":
        return f"GM[{value:#x}]"
    if p.kind in LOCATION_KINDS:  # a byte offset, in decimal while C++ reads that as a number (hex above)
        return f"{p.kind}[{value if value <= LARGEST_SIGNED else hex(value)}]"
    if p.kind == "bool":
        return "true" if value else "false"
    if p.kind == "int":
        return f"{value:#x}" if p.hi >= 1 << 32 else str(value)
    return str(value)


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
        m = _LOCATION.fullmatch(given.get(key, ""))
        if m:
            locations[key] = m.group(1).upper()
    for key, buffer in locations.items():
        if buffer not in LOCATION_KINDS:
            raise AssemblyError(f"'{shown(_LOCATION.fullmatch(given[key]).group(1))}' is not a buffer "
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
    unknown = [key for key in given if key not in form.operand_names]
    if unknown:
        raise AssemblyError(f"{canonical}: no parameter '{shown(unknown[0])}' (it takes {', '.join(form.operand_names)})")
    operands = []
    for p in form.params:
        if p.name in given:
            operands.append(_value(p, given[p.name]))
        elif p.required:
            raise AssemblyError(f"{canonical}: {p.name} is missing ({p.doc})")
        else:
            operands.append(p.default)
    return form, tuple(operands)


def _strip(line: str) -> str:
    return re.split(r"#|//", line, maxsplit=1)[0].strip(BLANK)


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
        if re.match(r"[A-Za-z_.][A-Za-z0-9_.]*\s*:(?!:)", body, re.ASCII):
            raise AssemblyError("ascend_cube programs are straight-line: no labels (generate the loop's "
                                "iterations instead)", source=source, line=number)
        try:
            form, operands = parse_line(body)
        except AssemblyError as error:
            raise error.located(source, number)
        address = base + len(instructions)
        instructions.append(Instruction(form, operands, address, None, instruction_text(form, operands),
                                        line=number, size=1))
    return Program(isa, base, instructions, {}, source)
