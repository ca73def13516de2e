"""What every operand kind shares: the error it raises, and how A64 text spells numbers and register numbers.

Numbers are read as LLVM's assembler lexes them (AsmLexer on AArch64), so that a line means to
isasim what it means to clang: ``0x1f``/``0X1F`` hexadecimal, ``0b101``/``0B101`` binary, a leading
zero octal (``012`` is ten, ``08`` is no number), otherwise decimal; a C suffix ``u``, ``l``, ``ul``,
``ll`` or ``ull`` (any case) is ignored.  A literal of 2^64 or more is refused, as clang refuses it;
one of 2^63 to 2^64 - 1 is the negative number with the same 64 bits (clang keeps int64 values:
``#0xffffffffffffffff`` is ``#-1``).  isasim reads one literal, optionally negated (``#-8``,
``#- 8``); clang also evaluates expressions (``#1+2``, ``#(4)``, ``#~0``), which isasim refuses in
one line (docs/arm_sme/clang-differences.md).

Register numbers are decimal without leading zeros (``x1``, not ``x01``): LLVM matches register
names whole, so ``p012`` is no register to clang either.
"""

from __future__ import annotations

import re

SUFFIX_BYTES = {"b": 1, "h": 2, "s": 4, "d": 8, "q": 16}


class OperandError(ValueError):
    def __init__(self, message: str, shape: bool = False):
        super().__init__(message)
        self.shape = shape  # the text is not this kind of operand at all (try another form)


def _shape(message: str) -> OperandError:
    return OperandError(message, shape=True)


# A register's number, as in x30, z31.h or p15 (no leading zeros; four digits at most, so that no
# int() is ever asked to read a run of thousands of digits: a longer one is no register).
REGISTER_NUMBER = r"(?:0|[1-9][0-9]{0,3})"

# "#", "-" and a literal, with the spaces LLVM allows between tokens.  The literal is the run of
# letters and digits that starts with a digit: LLVM's lexer reads that run as one token, so
# "12abc" or "1_0" is a bad number, not 12 followed by something.
_NUMBER = re.compile(r"(#)?[ \t]*(-[ \t]*)?([0-9][0-9A-Za-z_]*)", re.ASCII)
_LITERAL = re.compile(r"(?:0[xX]([0-9a-fA-F]+)|0[bB]([01]+)|(0[0-9]*)|([1-9][0-9]*))(?:[uU]?[lL]{0,2})", re.ASCII)
# the most significant digits a literal below 2^64 can have, by base (leading zeros aside)
_MOST_DIGITS = {16: 16, 2: 64, 8: 22, 10: 20}
# what a text that is no single number but starts like one is taken to be
_EXPRESSION_START = re.compile(r"#?[ \t]*[-+~!(\[0-9.]", re.ASCII)
_REAL = re.compile(r"#?[ \t]*-?[ \t]*(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][-+]?[0-9]+)?", re.ASCII)


def _literal_value(token: str) -> int:
    """The value of one literal token (see the module docstring); OperandError if it is none."""
    m = _LITERAL.fullmatch(token)
    if not m:
        if token[:2].lower() in ("0x", "0b") or token.rstrip("uUlL").isdigit():
            kind = {"0x": "hexadecimal", "0b": "binary"}.get(token[:2].lower(), "octal")
            raise OperandError(f"'{token[:40]}' is no {kind} number"
                               + (" (a leading 0 makes a number octal, as clang reads it)" if kind == "octal" else ""))
        raise OperandError(f"'{token[:40]}' is not a number")
    hex_digits, binary, octal, decimal = m.groups()
    digits, base = next((d, b) for d, b in ((hex_digits, 16), (binary, 2), (octal, 8), (decimal, 10)) if d is not None)
    if octal is not None and not set(octal) <= set("01234567"):
        raise OperandError(f"'{token[:40]}' is no octal number (a leading 0 makes a number octal, as clang reads it)")
    significant = digits.lstrip("0")
    if len(significant) > _MOST_DIGITS[base] or (significant and int(significant, base) >> 64):
        shown = token if len(token) <= 24 else f"{token[:20]}... ({len(token)} digits)"
        raise OperandError(f"the number {shown} does not fit 64 bits")
    return int(significant or "0", base)


def _int64(value: int) -> int:
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >> 63 else value


def parse_int(text: str, hash: str = "optional", signed: bool = True) -> int | None:
    """The integer ``text`` spells, read as clang reads it (see the module docstring), or None when the
    text is no number at all (another kind of operand).  ``hash`` says whether the number may
    ("optional"), must ("required") or must not ("forbidden") start with ``#``, as the operand's place
    in clang's grammar has it; a shift amount (``signed`` False) is written without '-', as clang wants it.
    A text that starts like a number but is none (``08``, ``1_0``, ``#1+2``,
    a number past 64 bits) is an OperandError saying why."""
    text = text.strip(" \t")
    if _REAL.fullmatch(text):
        raise OperandError(f"'{text[:40]}' is a real number, and an integer belongs here (clang would take the "
                           f"IEEE-754 bits of the double and keep the low ones)")
    m = _NUMBER.fullmatch(text)
    if m is None:
        if _EXPRESSION_START.match(text):
            raise OperandError(f"'{text[:40]}' is not a number: isasim reads one integer, optionally negated "
                               f"(clang's expressions such as #1+2 or #(4) are not supported)")
        return None
    has_hash, minus, token = m.groups()
    if hash == "forbidden" and has_hash:
        raise OperandError(f"'{text[:40]}': this number is written without '#'")
    if hash == "required" and not has_hash:
        raise OperandError(f"'{text[:40]}': this number needs its '#' (#{text[:40]})")
    if minus and not signed:
        raise OperandError(f"'{text[:40]}': a shift amount is written without a sign")
    value = _literal_value(token)
    return _int64(-value if minus else value)


# Where any element size names the same registers (SME2 MOVA's Z list and ZA vector group), clang still
# wants the two operands to agree: each reports its size under this name, which is no encoding field,
# and the assembler refuses two operands that fill one name differently (with the kind's ``conflict``).
SIZE_NOTE = "element size"
SIZES_DISAGREE = "the Z registers' and the ZA vector group's element sizes must agree ({ z0.s, z1.s }, za.s[...])"
