"""The operand syntax of Ascend cube text, both ways: a parameter's value from its text, the text the printer
writes for a value, and the integers in both (and in the stepper's Ascend locations), read as C++ reads an
integer literal.

A parameter's text follows its declared kind (Param.kind, forms/base.py): ``GM[address]``; a buffer name and a
byte offset, ``L0A[512]``; an integer; ``true`` or ``false``; a type or mode, its Ascend C name exactly.  The
printer writes GM addresses in hex, buffer offsets in decimal (hex past 2^63 - 1), and integers in decimal
unless the parameter's range reaches 2^32 (the 64-bit quant word: hex).

An ascend_cube program is Ascend C calls, so a parameter's number is spelled as C++17 spells an
integer literal ([lex.icon]), and the stepper's Ascend locations (``p l1[4096]``, ``l0c.nd[30x40]``,
``fixpipe[3,5]``, ``w l0c[0:64]``) read their numbers the same way:

- decimal ``4096``, hexadecimal ``0x1000`` / ``0X1000``, binary ``0b1000000000000`` (C++14);
- digit separators between digits, ``1'000`` and ``0x10'00`` (C++14): not first, last, doubled,
  or next to the prefix;
- the suffixes ``u``, ``l``, ``ll`` and their combinations (``16u``, ``0x10UL``), which change
  the literal's C++ type but not its value.

Refused, each in one line that says why:

- a leading 0 followed by digits (``016``): C++ reads it as octal (14), which a reader of a
  parameter list rarely means; isasim does not guess, and says what C++ would make of it;
- anything C++ would not read as one literal: a sign (``-1`` is minus applied to a literal,
  and every parameter is unsigned), ``1_000``, ``1e3``, digits other than ASCII 0-9 (Python
  reads ``١٦`` as 16, C++ does not), the C++23 ``z`` suffix;
- a literal above 2^64 - 1, which no C++ integer type holds (the program is ill-formed), and a
  decimal one above 2^63 - 1 without a ``u`` suffix (C++ gives it a signed type, and none holds
  it; hex may be unsigned without one); a long literal is refused before it is converted, so a
  5,000-digit number costs nothing.
"""

from __future__ import annotations

import re

from isasim.core.errors import AssemblyError, IsasimError
from isasim.core.trace import printable

from .forms.base import LOCATION_KINDS, Param

LARGEST = (1 << 64) - 1  # unsigned long long: C++'s widest standard integer type
LARGEST_SIGNED = (1 << 63) - 1  # long long: the widest type of a decimal literal without a u suffix

# prefix, digits (with separators) and suffix of a C++ integer literal; the separators are checked apart
_LITERAL = re.compile(r"(0[xX]|0[bB]|)([0-9A-Za-z']*?)([uU](?:ll|LL|[lL])?|(?:ll|LL|[lL])[uU]?|)", re.ASCII)
# a token that may be one literal, for a pattern that finds literals among other text (``30x40``): hex and binary
# first, so that 0x10x0x20 is 16 by 32; read_integer then checks it
LITERAL = r"0[xX][0-9A-Fa-f']+[uUlL]*|0[bB][01']+[uUlL]*|[0-9][0-9']*[uUlL]*"
_DIGITS = {"0x": "0123456789abcdefABCDEF", "0b": "01", "": "0123456789"}
_BASES = {"0x": 16, "0b": 2, "": 10}
_NAMES = {"0x": "hexadecimal", "0b": "binary", "": "decimal"}
SHOWN_CHARS = 40  # how much of a rejected spelling a message quotes

# C++'s whitespace inside a line (re.ASCII keeps \s to these, and str.strip gets them explicitly): Python's
# own would also take Unicode spaces and line separators, which C++ does not
BLANK = " \t\r\f\v"
LOCATION = re.compile(r"([A-Za-z0-9_]+)\s*\[([^\]]*)\]", re.ASCII)  # the offset is stripped where it is read


class NumberError(IsasimError):
    """Text that is not a C++ integer literal isasim reads, or one no C++ integer type holds."""


def shown(text: str) -> str:
    """User text as an error message quotes it: printable (control characters escaped) and short."""
    if len(text) > SHOWN_CHARS:
        text = f"{text[:SHOWN_CHARS - 16]}... ({len(text):,} characters)"
    return printable(text)


def read_integer(text: str) -> int:
    """The value of C++ integer literal ``text`` (see the module docstring), or a NumberError saying what is
    wrong with it."""
    if not text:
        raise NumberError(": no number")
    if text[0] in "+-":
        raise NumberError(f"{shown(text)}: a sign is not part of a C++ integer literal, and the number is unsigned")
    foreign = next((ch for ch in text if ch.isdigit() and not ch.isascii()), None)
    if foreign is not None:
        raise NumberError(f"{shown(text)}: {shown(foreign)} is not one of C++'s digits 0-9")
    found = _LITERAL.fullmatch(text)
    if not found or text[0] not in "0123456789":
        raise NumberError(f"{shown(text)} is not a C++ integer literal (decimal, 0x hex or 0b binary digits, "
                          f"' between digits, a u/l/ll suffix)")
    prefix, digits, _suffix = found.groups()
    prefix = prefix.lower()
    if prefix == "" and len(digits) > 1 and digits[0] == "0":
        return _refuse_octal(text, digits)
    plain = digits.replace("'", "")
    if not plain or any(ch not in _DIGITS[prefix] for ch in plain) or _misplaced_separator(digits):
        what = _NAMES[prefix]
        raise NumberError(f"{shown(text)} is not a C++ {what} literal ({what} digits, ' only between two of them)")
    significant = plain.lstrip("0") or "0"
    too_long = {16: 16, 2: 64, 10: 20}[_BASES[prefix]]  # digits of 2^64 - 1 in each base
    value = int(significant, _BASES[prefix]) if len(significant) <= too_long else LARGEST + 1
    if value > LARGEST:
        raise NumberError(f"{shown(text)} is above 2^64 - 1: no C++ integer type holds it")
    if prefix == "" and value > LARGEST_SIGNED and "u" not in _suffix.lower():
        # [lex.icon]: an unsuffixed decimal literal is int, long or long long, never unsigned (hex may be)
        raise NumberError(f"{shown(text)} is above 2^63 - 1: C++ gives a decimal literal without a u suffix a signed "
                          f"type, and none holds it (write {plain}u, or in 0x hex)")
    return value


def _misplaced_separator(digits: str) -> bool:
    return digits.startswith("'") or digits.endswith("'") or "''" in digits


def _refuse_octal(text: str, digits: str) -> int:
    plain = digits.replace("'", "")
    if any(ch not in "01234567" for ch in plain) or _misplaced_separator(digits):
        meaning = "C++ reads a leading 0 as octal, and this is not an octal number either"
    elif len(plain.lstrip("0")) > 22:  # 2^64 - 1 has 22 octal digits
        meaning = "C++ reads it as octal, above 2^64 - 1"
    else:
        meaning = f"C++ reads it as octal, {int(plain, 8)}"
    raise NumberError(f"{shown(text)} has a leading 0: {meaning}; isasim takes no octal (write the number "
                      f"without the 0, or in 0x hex)")


def read_parameter(text: str, name: str, low: int, high: int, doc: str = "") -> int:
    """``text`` as the value of an integer parameter ``name`` in low..high, or a NumberError naming both."""
    about = f" ({doc})" if doc else ""
    try:
        value = read_integer(text)
    except NumberError as error:
        raise NumberError(f"{name}={error.message}{about}") from None  # the message starts with the text
    if not low <= value <= high:
        raise NumberError(f"{name}={shown(text)}: out of range {low}..{high}{about}")
    return value


# ---- a parameter's text, both ways ------------------------------------------------------------------


def _integer(text: str, p: Param) -> int:
    try:
        return read_parameter(text, p.name, p.lo, p.hi, p.doc)
    except NumberError as error:
        raise AssemblyError(error.message) from None


def parse_value(p: Param, text: str):
    """Parameter ``p``'s value from its text, or an AssemblyError naming the parameter and the rule."""
    text = text.strip(BLANK)
    if p.kind in LOCATION_KINDS:
        m = LOCATION.fullmatch(text)
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
