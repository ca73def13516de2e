"""Intel-syntax assembler: the dialect GNU as accepts after ``.intel_syntax noprefix``.

Statements are separated by newlines or ``;``; ``#`` starts a comment.  A
statement is any number of ``label:`` prefixes followed by an instruction or a
directive.  Supported directives: ``.intel_syntax noprefix``, ``.text``,
``.globl``/``.global``, ``.type``, ``.size``, ``.p2align 0``, ``.set``/``.equ``
(integer constants usable in operands), and ``.byte`` (raw bytes, e.g. an
encoding GNU as refuses to produce).

Expressions are GNU as 2.40 expressions (checked against it by a differential
fuzzer): ASCII numbers only (``0x1f``, ``0b101``, ``017`` octal, ``42``; a
Unicode digit is not a digit), 64-bit two's-complement arithmetic, and GNU as's
operators and ranks, which are not C's::

    unary  - + ~ ! not                       (binds tightest)
    8      * / % << >> mod shl shr           (/ and % signed, truncating; >> logical)
    7      | & ^ !  or and xor               (a ! b is a | ~b)
    5      + -
    4      < > <> eq ne lt le gt ge          (signed; true is -1)
    3      &&
    2      ||                                (1 or 0)

Where GNU as only warns and then assembles a made-up value (a shift count
outside 0..63, a division by zero, a number wider than 64 bits, a missing
operand), isasim refuses with an :class:`AssemblyError`: a warning the user
may not see is how silently wrong code is made.

Branches start short and grow to rel32 until the layout is a fixed point, as
GNU as relaxes them.  The encoders give each statement its bytes (GNU as's, which
the silicon backend runs) together with its instruction: the form they chose and
the operands as those bytes say them, which is what the decoder reads from them
(the tests hold the program equal to the decoding of its bytes).  Only the bytes
of ``.byte`` directives are decoded.  What a line reads as, what a statement that
names no symbol assembles to, and a whole program's instructions are kept across
assemblies (bounded): kernels, fuzzers and tests repeat them.
"""

from __future__ import annotations

import bisect
import collections
import itertools
import re
from dataclasses import dataclass, replace
from functools import partial

from ..core.errors import AssemblyError, DecodeError, IsasimError
from ..core.program import Instruction, Program
from .encoding import control as control_encoding, scalar as scalar_encoding, vector as vector_encoding
from .forms import amx, amx_extensions, scalar, vector
from .decoder import decode_one
from .instructions import instruction_text, placed
from .operands import GPR_VIEWS, TILE_REGISTERS, Imm, Mem, Reg, Target, vector_register
from .operands.masking import OPMASK_REGISTERS, Masked

_SIZE_WORDS = {"byte": 1, "word": 2, "dword": 4, "qword": 8, "xmmword": 16, "ymmword": 32, "zmmword": 64}
# GNU as's blanks; str.strip() and \s would also take Unicode spaces, which GNU as calls junk.
_BLANKS = " \t\r\f\v"
# GNU as lets every byte above 0x7f into a symbol name, so a non-ASCII letter or
# digit is part of a name (an undefined symbol here), never part of a number.
_NAME_START = r"A-Za-z_.$\u0080-\U0010ffff"
_IDENT = rf"[{_NAME_START}][{_NAME_START}0-9]*"
_LABEL_RE = re.compile(rf"^[{_BLANKS}]*({_IDENT})[{_BLANKS}]*:(?!:)")
_BLANK_RUN = re.compile(rf"[{_BLANKS}]+")
_EXPR_TOKEN_RE = re.compile(
    rf"(?P<number>[0-9][0-9A-Za-z_.$]*)|(?P<name>{_IDENT})|(?P<op><<|>>|<>|&&|\|\||!!|[-+*/%&|^~!()<>])")
_HEX_RE = re.compile(r"0[xX][0-9A-Fa-f]+")
_BINARY_RE = re.compile(r"0[bB][01]+")
_OCTAL_RE = re.compile(r"0[0-7]*")
_DECIMAL_RE = re.compile(r"[1-9][0-9]*")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

_BITS = 64
_MODULUS = 1 << _BITS
_SIGN = 1 << (_BITS - 1)


def ascii_lower(text: str) -> str:
    """Lower-case A-Z only: str.lower() maps e.g. the Kelvin sign to 'k', which GNU as never would."""
    return text.translate(_ASCII_LOWER)


def printable(text: str) -> str:
    """User text for an error message, with control and other invisible characters escaped."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)


def _clip(text: str, limit: int = 60) -> str:
    """Quote at most the start of a long operand: the message must stay one readable line."""
    return text if len(text) <= limit else text[:limit] + "..."


def _wrap(value: int) -> int:
    """The 64-bit two's-complement value GNU as keeps (its offsetT), as a signed Python int."""
    return ((value + _SIGN) % _MODULUS) - _SIGN


def _divide(a: int, b: int, text: str) -> int:
    if b == 0:
        raise AssemblyError(f"division by zero in '{_clip(text)}' (GNU as warns and assembles the dividend)")
    if a == -_SIGN and b == -1:
        raise AssemblyError(f"'{_clip(text)}' overflows: -0x8000000000000000 / -1 has no 64-bit quotient")
    quotient = abs(a) // abs(b)  # C truncates toward zero; Python's // floors
    return quotient if (a < 0) == (b < 0) else -quotient


def _remainder(a: int, b: int, text: str) -> int:
    if b == 0:
        raise AssemblyError(f"division by zero in '{_clip(text)}' (GNU as warns and assembles 0)")
    if a == -_SIGN and b == -1:
        raise AssemblyError(f"'{_clip(text)}' overflows: GNU as computes -0x8000000000000000 % -1 by a division "
                            "that traps")
    return a - b * _divide(a, b, text)


def _shift_count(count: int, text: str) -> int:
    # GNU as compares the count as unsigned: -1 is 2**64-1, out of range like 64.
    if not 0 <= count < _BITS:
        raise AssemblyError(f"shift count out of range ({count} is not between 0 and 63) in '{_clip(text)}'")
    return count


_BINARY = {  # operator: (rank, function(a, b, text)) on 64-bit signed values, GNU as's ranks
    "*": (8, lambda a, b, t: _wrap(a * b)),
    "/": (8, _divide),
    "%": (8, _remainder),
    "<<": (8, lambda a, b, t: _wrap(a << _shift_count(b, t))),
    ">>": (8, lambda a, b, t: _wrap((a % _MODULUS) >> _shift_count(b, t))),  # logical, as GNU as shifts
    "|": (7, lambda a, b, t: a | b),
    "!": (7, lambda a, b, t: a | ~b),  # GNU as's "or not"
    "!!": (7, lambda a, b, t: a ^ b),  # GNU as reads a binary !! as ^ (for MRI compatibility)
    "^": (7, lambda a, b, t: a ^ b),
    "&": (7, lambda a, b, t: a & b),
    "+": (5, lambda a, b, t: _wrap(a + b)),
    "-": (5, lambda a, b, t: _wrap(a - b)),
    "<": (4, lambda a, b, t: -1 if a < b else 0),
    ">": (4, lambda a, b, t: -1 if a > b else 0),
    "<>": (4, lambda a, b, t: -1 if a != b else 0),
    "eq": (4, lambda a, b, t: -1 if a == b else 0),
    "ne": (4, lambda a, b, t: -1 if a != b else 0),
    "lt": (4, lambda a, b, t: -1 if a < b else 0),
    "le": (4, lambda a, b, t: -1 if a <= b else 0),
    "gt": (4, lambda a, b, t: -1 if a > b else 0),
    "ge": (4, lambda a, b, t: -1 if a >= b else 0),
    "&&": (3, lambda a, b, t: 1 if a and b else 0),
    "||": (2, lambda a, b, t: 1 if a or b else 0),
}
# Intel-syntax operator words (GNU as's i386_operators), matched case-insensitively.
_WORD_OPERATORS = {"mod": "%", "shl": "<<", "shr": ">>", "and": "&", "or": "|", "xor": "^",
                   "eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
_UNARY = {
    "-": lambda a: _wrap(-a),
    "+": lambda a: a,
    "~": lambda a: ~a,
    "not": lambda a: ~a,
    "!": lambda a: 0 if a else 1,
}
_UNARY_RANK = 9
_LOWER_THAN_ADD = {op for op, (rank, _f) in _BINARY.items() if rank < 5}


class _Token:
    """One expression token; a plain slotted class, as expressions of thousands of tokens are legitimate."""

    __slots__ = ("kind", "text", "value")

    def __init__(self, kind: str, text: str, value: int = 0):
        self.kind = kind  # "number" (value holds it), "name", "op", "(" or ")"
        self.text = text
        self.value = value


def _read_number(text: str, expression: str) -> int:
    # Length checks come before int(): a 5,000-digit literal is too wide for 64 bits
    # anyway, and int() of a long decimal string trips Python's int-string limit.
    if _HEX_RE.fullmatch(text):
        digits, base, per_digit = text[2:].lstrip("0"), 16, 4
    elif _BINARY_RE.fullmatch(text):
        digits, base, per_digit = text[2:].lstrip("0"), 2, 1
    elif _OCTAL_RE.fullmatch(text):
        digits, base, per_digit = text[1:].lstrip("0"), 8, 3
    elif _DECIMAL_RE.fullmatch(text):
        digits, base, per_digit = text, 10, 3.33
    else:
        raise AssemblyError(f"'{_clip(text)}' is not a number GNU as reads (in '{_clip(expression)}')")
    if len(digits) * per_digit > _BITS + 3 * per_digit:
        raise AssemblyError(f"number '{text[:24]}{'...' if len(text) > 24 else ''}' does not fit in 64 bits")
    value = int(digits or "0", base)
    if value >= _MODULUS:
        raise AssemblyError(f"number '{_clip(text)}' does not fit in 64 bits (GNU as makes it a bignum)")
    return _wrap(value)


_WORD_CHAR = re.compile(rf"[{_NAME_START}0-9]")
_BLANKS_BETWEEN = re.compile(rf"(?<=(.))[{_BLANKS}]+(?=(.))", re.DOTALL)


def _scrub(text: str) -> str:
    """Drop the blanks GNU as's input scrubber drops: all but those between two name or number characters.

    So ``1 < < 3`` is ``1<<3`` and ``5 ! !1`` is ``5!!1`` (exclusive or) to GNU as, while ``1 2`` stays
    two numbers."""
    return _BLANKS_BETWEEN.sub(
        lambda m: m.group() if m.group(1) == "'" else  # a quoted blank is a character constant
        " " if _WORD_CHAR.match(m.group(1)) and _WORD_CHAR.match(m.group(2)) else "", text)


_CHARACTER_ESCAPES = {"b": 8, "f": 12, "n": 10, "r": 13, "t": 9}


def _quoted_end(text: str, start: int) -> int:
    """Like _character_end, for the splitters: a constant cut short just ends the text."""
    end = start + (3 if text.startswith("\\", start + 1) else 2)
    return end + 1 if text.startswith("'", end) else min(end, len(text))


def _character_end(text: str, start: int) -> int:
    """Where the character constant at text[start] (a quote) ends: 'c or '\\c, and a closing quote if any."""
    end = start + (3 if text.startswith("\\", start + 1) else 2)
    if end > len(text):
        raise AssemblyError(f"character constant cut short in '{_clip(text)}'")
    return end + 1 if text.startswith("'", end) else end


def _character_value(token: str, expression: str) -> int:
    """GNU as's character constant: 'c, with an optional closing quote; after a backslash b f n r t are
    the control codes and any other character stands for itself ('\\0' is 0x30, not NUL)."""
    if token[1] == "\\":
        char = _CHARACTER_ESCAPES.get(token[2], ord(token[2]))
    else:
        char = ord(token[1])
    if char > 0x7F:  # GNU as would read its first UTF-8 byte and then call the rest junk
        raise AssemblyError(f"character constant {printable(token)} is not ASCII (in '{_clip(expression)}')")
    return char


def tokenize_expression(text: str) -> list[_Token]:
    text = _scrub(text)
    tokens, pos = [], 0
    while pos < len(text):
        if text[pos] in _BLANKS:
            pos += 1
            continue
        if text[pos] == "'":
            end = _character_end(text, pos)
            constant = text[pos:end]
            tokens.append(_Token("number", constant, _character_value(constant, text)))
            pos = end
            # GNU as then skips blanks and swallows one 'l' or 'L' (a C-style long suffix), so
            # 'Y lt 5 is 'Y then junk "t 5" to it, while 'Y gt 5 is a comparison.
            after = pos
            while after < len(text) and text[after] in _BLANKS:
                after += 1
            if text.startswith(("l", "L"), after):
                pos = after + 1
            continue
        m = _EXPR_TOKEN_RE.match(text, pos)
        if not m:
            raise AssemblyError(f"cannot read '{text[pos:]}' in expression '{_clip(text)}'")
        if m.lastgroup == "number":
            tokens.append(_Token("number", m.group(), _read_number(m.group(), text)))
        elif m.lastgroup == "name":
            word = ascii_lower(m.group())
            if word in _WORD_OPERATORS:
                tokens.append(_Token("op", _WORD_OPERATORS[word]))
            elif word == "not":
                tokens.append(_Token("op", "not"))
            else:
                tokens.append(_Token("name", m.group()))
        elif m.group() in "()":
            tokens.append(_Token(m.group(), m.group()))
        else:
            tokens.append(_Token("op", m.group()))
        pos = m.end()
    return tokens


def evaluate_tokens(tokens: list[_Token], symbols: dict[str, int], text: str) -> int:
    """Operator-precedence evaluation with explicit stacks, so no input depth can overflow Python's stack."""
    if not tokens:
        raise AssemblyError(f"missing value in '{_clip(text)}'" if text.strip(_BLANKS) else "missing value")
    values: list[int] = []
    pending: list[tuple[str, str]] = []  # ("unary", op), ("binary", op) or ("(", "(")

    def reduce_one() -> None:
        kind, op = pending.pop()
        if kind == "unary":
            values.append(_UNARY[op](values.pop()))
        else:
            right, left = values.pop(), values.pop()
            values.append(_BINARY[op][1](left, right, text))

    def reduce_while_rank_at_least(rank: int) -> None:
        while pending and pending[-1][0] != "(" and (
                pending[-1][0] == "unary" or _BINARY[pending[-1][1]][0] >= rank):
            reduce_one()

    expect_operand = True
    for token in tokens:
        if expect_operand:
            if token.kind == "op" and token.text == "!!":  # two logical nots where an operand is due
                pending += [("unary", "!"), ("unary", "!")]
            elif token.kind == "op" and token.text in _UNARY:
                pending.append(("unary", token.text))
            elif token.kind == "(":
                pending.append(("(", "("))
            elif token.kind == "number":
                values.append(token.value)
                expect_operand = False
            elif token.kind == "name":
                if token.text not in symbols:
                    raise AssemblyError(f"unknown symbol '{token.text}'")
                values.append(_wrap(symbols[token.text]))
                expect_operand = False
            else:
                raise AssemblyError(f"missing operand before '{token.text}' in '{_clip(text)}'")
        elif token.kind == ")":
            reduce_while_rank_at_least(0)
            if not pending:
                raise AssemblyError(f"unexpected ')' in '{_clip(text)}'")
            pending.pop()
        elif token.kind == "op" and token.text in _BINARY:
            reduce_while_rank_at_least(_BINARY[token.text][0])
            pending.append(("binary", token.text))
            expect_operand = True
        else:
            raise AssemblyError(f"unexpected '{token.text}' in expression '{_clip(text)}'")
    if expect_operand:
        raise AssemblyError(f"expression '{_clip(text)}' ends without an operand (GNU as would assume 0)")
    reduce_while_rank_at_least(0)
    if pending:
        raise AssemblyError(f"missing ')' in '{_clip(text)}'")
    return values[0]


class _BoundedMemo(collections.OrderedDict):
    """A dict that forgets its oldest entry beyond its limit, so a long fuzzing run cannot grow it forever.

    (An OrderedDict: a plain dict's first entry is slow to find after many deletions at its front.)"""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def put(self, key, value) -> None:
        if len(self) >= self.limit:
            try:
                self.popitem(last=False)
            except KeyError:  # another thread emptied it meanwhile
                pass
        self[key] = value


# Kernels and fuzzers repeat lines and statements: what reading a line and preparing a statement
# give depends only on the text (see Assembler._prepare for what a statement's result depends on),
# so both are kept across assemblies.  Longer texts are not kept: they are rare, and keeping
# them would let a few huge expressions hold megabytes.
_MEMO_LIMIT = 16384  # the AMX fuzzer's programs have some 9,000 different lines in 10,000 programs
_MEMO_TEXT_LIMIT = 512
_LINE_MEMO = _BoundedMemo(_MEMO_LIMIT)  # raw line -> its statements, as _read_line gives them


@dataclass(slots=True)  # slotted: a kernel has thousands
class Statement:
    line: int
    labels: list[str]
    mnemonic: str | None = None  # an instruction, or a directive starting with "."
    operand_text: str = ""
    operands: tuple = ()  # as written (a branch's: its label or address)
    encoding: bytes = b""
    long_branch: bool = False
    branch: bool = False  # a jmp/jcc whose size relaxation decides
    long_size: int = 0  # a branch's size in its rel32 form
    size: int = 0  # bytes in the current layout
    address: int = 0  # where the final layout puts it
    prepared: "_Prepared | None" = None  # the instruction it assembles to, but for its address


class _Prepared:
    """What an instruction statement assembles to wherever it is: the form the encoder chose, the operands as
    its bytes say them (canonical: what the decoder reads back), the bytes and the text objdump prints."""

    __slots__ = ("form", "operands", "encoding", "text", "extra", "rip_relative")

    def __init__(self, form, operands: tuple, encoding: bytes, prefixes: tuple[str, ...] = ()):
        self.form = form
        self.operands = operands
        self.encoding = encoding
        self.text = instruction_text(form, operands, prefixes)
        self.extra = {"prefixes": prefixes} if prefixes else {}
        # a [rip+disp] operand names an address that depends on where the instruction is placed
        self.rip_relative = any(isinstance(o, Mem) and o.base == "rip" for o in operands)

    def instruction(self, address: int, line: int) -> Instruction:
        operands = self.operands
        if self.rip_relative:
            operands = placed(operands, address + len(self.encoding))
        return Instruction(self.form, operands, address, self.encoding, self.text, line, 0, None, dict(self.extra))


_STATEMENT_MEMO = _BoundedMemo(_MEMO_LIMIT)  # (mnemonic, operand text) -> _Prepared
# A whole program assembled before (its text, base and relaxation_rounds, all it depends on) is
# built again from what its instructions were: a test or a benchmark assembles one text many times.
# Fewer and shorter texts than for statements, as each entry holds a whole program.
_PROGRAM_MEMO_LIMIT = 256
_PROGRAM_TEXT_LIMIT = 16384
_PROGRAM_MEMO = _BoundedMemo(_PROGRAM_MEMO_LIMIT)  # (text, base, relaxation_rounds) -> (instructions, labels)


def _read_line(raw: str) -> tuple[tuple[tuple[str, ...], str | None, str], ...]:
    """The statements of one source line: (labels, mnemonic or None, operand text) for each."""
    out = []
    for piece in _split_line(raw):
        if not piece.strip(_BLANKS):
            continue
        labels = []
        rest = piece
        while True:
            m = _LABEL_RE.match(rest)
            if not m:
                break
            labels.append(m.group(1))
            rest = rest[m.end():]
        rest = _strip_blanks(rest)
        mnemonic, operand_text = None, ""
        if rest:
            parts = _BLANK_RUN.split(rest, 1)
            mnemonic = ascii_lower(parts[0])
            operand_text = parts[1] if len(parts) > 1 else ""
            # objdump's prefix words before a NOP ("data16 cs nop WORD PTR [...]") belong to the mnemonic
            # (split on the single spaces joined here: str.split() would also split on U+0085 and kin)
            # and GNU as's {vex} pseudo-prefix (AVX-VNNI's "{vex} vpdpbusd", a form of its own)
            while (mnemonic.split(" ")[-1] in scalar_encoding.PREFIX_WORDS or mnemonic == "{vex}") and operand_text:
                parts = _BLANK_RUN.split(operand_text, 1)
                mnemonic += " " + ascii_lower(parts[0])
                operand_text = parts[1] if len(parts) > 1 else ""
        out.append((tuple(labels), mnemonic, operand_text))
    return tuple(out)


_LINE_SPECIAL = re.compile(r"[#;']")


def _split_line(raw: str) -> list[str]:
    """A line's statements: ';' separates and '#' starts a comment, unless quoted as a character ('# or ';)."""
    pieces, start, pos = [], 0, 0
    while True:
        m = _LINE_SPECIAL.search(raw, pos)
        if not m:
            break
        if m.group() == "'":
            pos = _quoted_end(raw, m.start())
            continue
        pieces.append(raw[start:m.start()])
        if m.group() == "#":
            return pieces
        start = pos = m.end()
    pieces.append(raw[start:])
    return pieces


_QUOTED_CHARACTER = re.compile(r"'\\?.'?", re.DOTALL)
_GROUPING = re.compile(r"[\[\](),']")


def _strip_blanks(text: str) -> str:
    """text without surrounding blanks, except a blank quoted as a character constant at its end (' )."""
    stripped = text.strip(_BLANKS)
    kept_end = text.find(stripped) + len(stripped) if stripped else 0
    if stripped.endswith("'") and kept_end < len(text):
        return stripped + text[kept_end]
    return stripped


def _split_operands(text: str) -> list[str]:
    """Split on commas that are not inside brackets or parentheses."""
    if "(" in text or ")" in text or "'" in text:
        return _split_grouped(text)
    # Without parentheses or quotes only brackets group, and str.split is far quicker than the scan:
    # a comma splits where the brackets before it balance, as in _split_grouped.
    pieces = text.split(",")
    if "[" in text or "]" in text:
        joined, depth = [], 0
        for piece in pieces:
            if depth:
                joined[-1] += "," + piece
            else:
                joined.append(piece)
            depth += piece.count("[") - piece.count("]")
        pieces = joined
    parts = [piece.strip(_BLANKS) for piece in pieces]  # no quote, so no quoted blank to keep
    return [] if parts == [""] else parts


def _split_grouped(text: str) -> list[str]:
    """_split_operands by a scan that knows parentheses and character constants too."""
    parts, depth, start, pos = [], 0, 0, 0
    while True:
        m = _GROUPING.search(text, pos)
        if not m:
            break
        ch, pos = m.group(), m.end()
        if ch == "'":  # a character constant: ',' or '( is a value, not punctuation
            pos = _quoted_end(text, m.start())
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif depth == 0:
            parts.append(_strip_blanks(text[start:m.start()]))
            start = m.end()
    rest = _strip_blanks(text[start:])
    if rest or parts:
        parts.append(rest)
    return parts


_VSIB_INDEX = re.compile(r"[xyz]mm([0-9]|[12][0-9]|3[01])")  # a gather's or scatter's index: [rax+zmm1*4]


def _address_register(token: _Token) -> str | None:
    if token.kind != "name":
        return None
    name = ascii_lower(token.text)
    return name if name in GPR_VIEWS or name in ("riz", "rip") or _VSIB_INDEX.fullmatch(name) else None


def _split_address_terms(tokens: list[_Token]) -> list[tuple[str, list[_Token]]]:
    """The terms of an address joined by + and - outside parentheses, each with its sign."""
    terms: list[tuple[str, list[_Token]]] = []
    sign, current, depth, expect_operand = "+", [], 0, True
    for token in tokens:
        if token.kind == "(":
            depth += 1
        elif token.kind == ")":
            depth -= 1
        if depth == 0 and not expect_operand and token.kind == "op" and token.text in "+-":
            terms.append((sign, current))
            sign, current, expect_operand = token.text, [], True
            continue
        current.append(token)
        expect_operand = token.kind in ("op", "(")
    terms.append((sign, current))
    return terms


def _has_operator_outside_parentheses(tokens: list[_Token], operators: set[str]) -> bool:
    depth = 0
    for token in tokens:
        depth += (token.kind == "(") - (token.kind == ")")
        if depth == 0 and token.kind == "op" and token.text in operators:
            return True
    return False


_SIZE_PTR = re.compile(rf"^(byte|word|dword|qword|xmmword|ymmword|zmmword)[{_BLANKS}]+ptr[{_BLANKS}]+(.*)$",
                       re.DOTALL)
# An operand that is a general-purpose or tile register's name (lower case; vector registers are
# operands of vector mnemonics only, so they take the general path).
_PLAIN_REGISTERS = {name: Reg(name) for name in (*GPR_VIEWS, *TILE_REGISTERS)}
# A number without a symbol or an operator but a leading minus, short enough that no 64-bit
# wrapping can happen (lower case, octal left out: the general reading takes 017 as octal).
_PLAIN_IMMEDIATE = re.compile(r"-?(?:0x[0-9a-f]{1,15}|[1-9][0-9]{0,17}|0)")
# [base], [base+index], [base+index*scale], each optionally +/- a short number (lower case).
_PLAIN_ADDRESS = re.compile(
    rf"\[[{_BLANKS}]*([a-z][a-z0-9]*)[{_BLANKS}]*"
    rf"(?:\+[{_BLANKS}]*([a-z][a-z0-9]*)[{_BLANKS}]*(?:\*[{_BLANKS}]*([1248])[{_BLANKS}]*)?)?"
    rf"(?:([-+])[{_BLANKS}]*(0x[0-9a-f]{{1,8}}|[1-9][0-9]{{0,9}}|0)[{_BLANKS}]*)?\]")
_WRITE_MASK = re.compile(rf"(.*?)[{_BLANKS}]*\{{[{_BLANKS}]*(k[0-7])[{_BLANKS}]*\}}"
                         rf"(?:[{_BLANKS}]*(\{{[{_BLANKS}]*z[{_BLANKS}]*\}}))?[{_BLANKS}]*", re.DOTALL)
_GPR64_NAMES = frozenset(name for name, view in GPR_VIEWS.items() if view.bits == 64)
_SIZE_BCST = re.compile(rf"(dword|qword|word)[{_BLANKS}]+bcst[{_BLANKS}]+(.*)", re.DOTALL)


class Assembler:
    relaxation_rounds: int | None = None  # None: enough for any program (tests lower it to see the refusal)

    def __init__(self, text: str, source: str, base: int):
        self.text = text
        self.source = source
        self.base = base
        self.constants: dict[str, int] = {}
        self.labels: dict[str, int] = {}
        self.label_names: set[str] = set()
        # Set when parsing an operand consults self.constants or self.label_names: the statement's
        # result then depends on the program around it and must not go into _STATEMENT_MEMO.
        self.uses_symbols = False
        self.data_bytes = False  # whether a directive put bytes in the code (.byte)

    # ---- operand parsing ------------------------------------------------------
    def value(self, text: str) -> int:
        return self.evaluate(tokenize_expression(text), text)

    def byte_value(self, text: str) -> int:
        """A .byte value: most are plain numbers (0xc4), read as the general reading would."""
        low = ascii_lower(text)
        return int(low, 0) if _PLAIN_IMMEDIATE.fullmatch(low) else self.value(text)

    def evaluate(self, tokens: list[_Token], text: str) -> int:
        if not self.uses_symbols:
            self.uses_symbols = any(token.kind == "name" for token in tokens)
        return evaluate_tokens(tokens, self.constants, text)

    def parse_memory(self, text: str, size: int | None) -> Mem:
        inner = text.strip(_BLANKS)
        m = re.fullmatch(r"(.*?)\[(.*)\](.*)", inner, re.DOTALL)
        if not m:
            raise AssemblyError(f"bad memory operand '{_clip(text)}'")
        outside = (m.group(1) + m.group(3)).strip(_BLANKS)
        body = m.group(2)
        tokens = tokenize_expression(body)
        if not tokens and not outside:
            raise AssemblyError(f"empty memory operand '{_clip(text)}'")  # GNU as: junk `]' after expression
        base = index = None
        scale = 1
        disp_tokens: list[_Token] = []
        terms = _split_address_terms(tokens) if tokens else []
        has_register = any(_address_register(t) for t in tokens)
        if not has_register:
            disp_tokens = tokens  # one expression, evaluated with every rank as GNU as does
            terms = []
        for sign, term in terms:
            registers = [i for i, t in enumerate(term) if _address_register(t)]
            if not registers:
                if _has_operator_outside_parentheses(term, _LOWER_THAN_ADD):
                    # Splitting at + and - would give these operators the wrong rank.
                    raise AssemblyError(f"put the comparison or logical operator in '{_clip(text)}' in parentheses")
                disp_tokens += [_Token("op", sign), _Token("(", "(")] + term + [_Token(")", ")")]
                continue
            if sign == "-":
                raise AssemblyError(f"a register cannot be subtracted in '{_clip(text)}'")
            if len(term) == 1:
                reg = _address_register(term[0])
                if base is None and reg != "riz" and not _VSIB_INDEX.fullmatch(reg):  # a vector: VSIB's index
                    base = reg
                elif index is None:
                    index = reg
                else:
                    raise AssemblyError(f"too many registers in '{_clip(text)}'")
                continue
            at = registers[0]
            if len(registers) > 1 or not (
                    (at == 0 and term[1].kind == "op" and term[1].text == "*") or
                    (at == len(term) - 1 and term[-2].kind == "op" and term[-2].text == "*")):
                raise AssemblyError(f"a register can only be added or scaled (reg*scale) in '{_clip(text)}'")
            factor = term[2:] if at == 0 else term[:-2]
            if index is not None:
                raise AssemblyError(f"two index registers in '{_clip(text)}'")
            index = _address_register(term[at])
            scale = self.evaluate(factor, text)
        if outside:
            disp_tokens += [_Token("op", "+"), _Token("(", "(")] + tokenize_expression(outside) + [_Token(")", ")")]
        disp = self.evaluate(disp_tokens, text) if disp_tokens else 0
        for reg in (base, index):
            if reg and reg not in ("riz", "rip") and not _VSIB_INDEX.fullmatch(reg) and GPR_VIEWS[reg].bits != 64:
                raise AssemblyError(f"'{reg}' cannot address memory in 64-bit code; use a 64-bit register")
        if scale not in (1, 2, 4, 8):
            raise AssemblyError(f"scale factor must be 1, 2, 4 or 8 in '{_clip(text)}'")
        return Mem(base=base, index=index, scale=scale, disp=disp, size=size)

    def parse_operand(self, text: str, mnemonic: str):
        text = _strip_blanks(text) if "'" in text else text.strip(_BLANKS)  # only a quote keeps a blank
        low = ascii_lower(text)
        # The shapes nearly every operand has, read without the expression machinery: exactly
        # what the general reading below gives them, which anything else goes on to.
        register = _PLAIN_REGISTERS.get(low)
        if register is not None:
            return register
        if "{" in low and mnemonic in vector.MNEMONICS:  # an AVX-512 write mask: zmm0{k1}{z}
            m = _WRITE_MASK.fullmatch(low)
            if not m:
                raise AssemblyError(f"'{_clip(text)}': only a write mask {{k1}}-{{k7}}, optionally {{z}}, may follow "
                                    "an operand (embedded broadcast and rounding are not supported)")
            inner = self.parse_operand(text[:len(m.group(1))], mnemonic)
            return Masked(inner, m.group(2), m.group(3) is not None)
        if _PLAIN_IMMEDIATE.fullmatch(low):
            return Imm(int(low, 0))
        size = None
        m = _SIZE_BCST.match(low) if "bcst" in low else None
        if m and mnemonic in vector.MNEMONICS:  # AVX-512's embedded broadcast, as objdump writes it: DWORD BCST [rdi]
            return replace(self.parse_memory(text[len(text) - len(m.group(2)):], _SIZE_WORDS[m.group(1)]), broadcast=1)
        m = _SIZE_PTR.match(low)
        if m:
            size = _SIZE_WORDS[m.group(1)]
            low = m.group(2)
            text = text[len(text) - len(low):]
        if low[:3] in ("es:", "ds:") and "[" in low:  # a string instruction's operand, as objdump prints it
            inner = self.parse_memory(text[3:].strip(_BLANKS), size)
            return replace(inner, segment=low[:2])
        if low[:3] in ("fs:", "gs:"):  # relative to a thread pointer: fs:0x28, fs:[0x28], fs:[rax+0x8]
            rest = text[3:].strip(_BLANKS)
            inner = self.parse_memory(rest, size) if "[" in rest else Mem(disp=self.value(rest), size=size)
            if inner.base == "rip":
                raise AssemblyError(f"'{_clip(text)}': isasim does not take fs:/gs: with a RIP-relative address")
            return replace(inner, segment=low[:2])
        m = _PLAIN_ADDRESS.fullmatch(low)
        if m:
            base, index, scale, sign, disp = m.groups()
            if base in _GPR64_NAMES and (index is None or index in _GPR64_NAMES):
                disp_value = 0 if disp is None else int(disp, 0)
                return Mem(base=base, index=index, scale=int(scale or 1), size=size,
                           disp=-disp_value if sign == "-" else disp_value)
        if "[" in (_QUOTED_CHARACTER.sub("", low) if "'" in low else low):  # '[ is a number, not an address
            return self.parse_memory(text, size)
        if low.startswith("ds:"):  # an absolute address, as objdump prints one
            return Mem(disp=self.value(text[3:]), size=size)
        if size is not None:
            raise AssemblyError(f"'{_clip(text)}' after PTR must be a memory operand")
        if low in GPR_VIEWS or low in TILE_REGISTERS or (mnemonic in vector.MNEMONICS and (
                vector_register(low) or low in OPMASK_REGISTERS)) or (
                mnemonic in amx_extensions.EVEX_MNEMONICS and low.startswith("zmm") and vector_register(low)):
            return Reg(low)
        if re.fullmatch(r"(tmm|xmm|ymm|zmm|k|st|mm|cr|dr)[0-9]+|[cdefgs]s|rip|riz", low):
            raise AssemblyError(f"register '{low}' cannot be used by {mnemonic}")
        branch = mnemonic.startswith("j") or mnemonic == "call"
        if branch and re.fullmatch(_IDENT, text):
            self.uses_symbols = True
        if branch and re.fullmatch(_IDENT, text) and text not in self.constants:
            if text not in self.label_names:
                raise AssemblyError(f"undefined label '{_clip(text)}'")
            return Target(-1, text)  # its address comes from the layout
        return Imm(self.value(text))

    # ---- statements -------------------------------------------------------------
    def statements(self) -> list[Statement]:
        out = []
        # Only "\n" ends a line for GNU as; str.splitlines() would also split at \v, \f,
        # \x1c-\x1e, \x85 and U+2028/2029 and so misnumber every later line.
        for number, raw in enumerate(self.text.split("\n"), start=1):
            pieces = _LINE_MEMO.get(raw)
            if pieces is None:
                pieces = _read_line(raw)
                if len(raw) <= _MEMO_TEXT_LIMIT:
                    _LINE_MEMO.put(raw, pieces)
            for labels, mnemonic, operand_text in pieces:
                out.append(Statement(number, list(labels), mnemonic, operand_text))
        return out

    def directive(self, st: Statement) -> bytes:
        name, args = st.mnemonic, st.operand_text.strip(_BLANKS)
        if name == ".intel_syntax":
            if ascii_lower(args) not in ("noprefix",):
                raise AssemblyError(".intel_syntax needs 'noprefix' (isasim reads registers without %)")
            return b""
        if name in (".att_syntax",):
            raise AssemblyError("AT&T syntax is not supported; write Intel syntax (.intel_syntax noprefix)")
        if name in (".text", ".globl", ".global", ".type", ".size", ".section", ".file", ".ident"):
            if name == ".section" and not args.startswith(".text"):
                raise AssemblyError(f".section {args}: only .text is supported (programs have no data sections)")
            return b""
        if name in (".p2align", ".align", ".balign"):
            no_padding = 0 if name == ".p2align" else 1  # .p2align 0 and .balign 1 ask for nothing
            if not args or self.value(_split_operands(args)[0]) != no_padding:
                raise AssemblyError(f"{name} {args}: alignment padding is not supported (it would insert bytes)")
            return b""
        if name in (".set", ".equ"):
            parts = _split_operands(args)
            if len(parts) != 2 or not re.fullmatch(_IDENT, parts[0]):
                raise AssemblyError(f"{name} needs 'name, value'")
            self.constants[parts[0]] = self.value(parts[1])
            return b""
        if name == ".byte":
            values = [self.byte_value(v) for v in _split_operands(args)]
            for v in values:
                # GNU as takes -255..255 silently (-129 is 0x7f) and warns, truncating, outside it
                if not -255 <= v <= 255:
                    raise AssemblyError(f".byte value {v} does not fit in a byte")
            return bytes(v & 0xFF for v in values)
        raise AssemblyError(f"unknown or unsupported directive '{name}'")

    def encode(self, st: Statement, address: int) -> tuple:
        """(form, canonical operands, bytes) of a statement that is not a relaxed branch (its bytes do not
        depend on the layout)."""
        mnemonic = st.mnemonic
        operands = st.operands
        forms = amx.FORMS.of_mnemonic(mnemonic)
        if forms:
            # The form whose operands these are (each AMX mnemonic has one; an error names the last tried).
            for form in forms:
                try:
                    amx.check_operands(form, operands)
                except AssemblyError:
                    if form is forms[-1]:
                        raise
                    continue
                return form, form.encoded_operands(operands), form.encode(operands)
        forms = amx_extensions.FORMS.of_mnemonic(mnemonic)
        if forms:  # the AMX extensions (AMX-AVX512's mnemonics have an r32 and an imm8 form)
            for form in forms:
                try:
                    form.check_operands(operands) if isinstance(form, amx_extensions.AmxEvexForm) else \
                        amx.check_operands(form, operands)
                except AssemblyError:
                    if form is forms[-1]:
                        raise
                    continue
                return form, form.encoded_operands(operands), form.encode(operands)
        if control_encoding.accepts(mnemonic, operands):
            return control_encoding.encode(mnemonic, operands, address)
        segments = {o.segment for o in operands if isinstance(o, Mem) and o.segment in ("fs", "gs")}
        if segments and scalar_encoding.accepts(mnemonic, operands):
            # fs:/gs: is the segment prefix (64, 65) before the instruction's own bytes, where GNU as puts it
            (segment,) = segments
            plain = tuple(replace(o, segment=None) if isinstance(o, Mem) else o for o in operands)
            form, canonical, code = scalar_encoding.encode(mnemonic, plain, address + 1)
            if form.mnemonic in ("lea", "nop"):
                raise AssemblyError(f"{mnemonic}: isasim does not take an {segment}: operand here")
            canonical = tuple(replace(o, segment=segment) if isinstance(o, Mem) else o for o in canonical)
            return form, canonical, (b"\x64" if segment == "fs" else b"\x65") + code
        if scalar_encoding.accepts(mnemonic, operands):
            return scalar_encoding.encode(mnemonic, operands, address, long_branch=st.long_branch)
        if mnemonic in vector.MNEMONICS:
            return vector_encoding.encode(mnemonic, operands, address)
        raise AssemblyError(f"unknown mnemonic '{mnemonic}'")

    def _branch_target(self, st: Statement, labels: dict[str, int]) -> Target:
        (op,) = st.operands
        if isinstance(op, Target):
            return Target(labels[op.label], op.label)
        return Target(op.value % _MODULUS)

    def _prepare(self, st: Statement) -> None:
        """Parse a statement and make its instruction, or for a branch fix its two possible sizes."""
        if st.mnemonic.startswith("."):
            st.encoding = self.directive(st)
            st.size = len(st.encoding)
            self.data_bytes = self.data_bytes or bool(st.encoding)
            return
        # A statement's instruction depends on its text alone unless an operand names a symbol
        # (a .set constant or a label) or it is a branch (whose bytes depend on the layout); such
        # statements are prepared anew every time, the others once per process.
        memo_key = (st.mnemonic, st.operand_text)
        prepared = _STATEMENT_MEMO.get(memo_key)
        if prepared is not None:
            st.prepared, st.encoding = prepared, prepared.encoding
            st.size = len(st.encoding)
            return
        self.uses_symbols = False
        st.operands = tuple(self.parse_operand(t, st.mnemonic) for t in _split_operands(st.operand_text))
        if st.mnemonic == "call" and len(st.operands) == 1 and isinstance(st.operands[0], (Target, Imm)):
            st.branch = True  # E8 rel32 whatever the distance: its bytes wait for the layout
            st.size = st.long_size = 5
            st.long_branch = True
            return
        if (st.mnemonic.startswith("j") and st.mnemonic in scalar.MNEMONICS
                and not control_encoding.accepts(st.mnemonic, st.operands)):
            if len(st.operands) == 1 and isinstance(st.operands[0], Target):
                probe = (Target(self.base, st.operands[0].label),)
            else:
                probe = st.operands  # let the encoder say what is wrong with them
            # The rel32 form's length, found by encoding it once (5 for jmp, 6 for jcc).
            _f, _o, long_code = scalar_encoding.encode(st.mnemonic, probe, self.base, long_branch=True)
            st.branch = True
            st.long_size = len(long_code)
            st.size = 2  # every branch starts short, as GNU as starts its frags
            return
        form, operands, encoding = self.encode(st, 0)
        # objdump's prefix words (before a NOP, and lock) stay in its text
        prefixes = (scalar_encoding.prefix_words(st.mnemonic, form)
                    if " " in st.mnemonic and st.mnemonic != form.mnemonic else ())  # "{vex} vpdpbusd" is a form
        st.prepared = _Prepared(form, operands, encoding, prefixes)
        st.encoding = encoding
        st.size = len(encoding)
        if not self.uses_symbols and len(st.operand_text) <= _MEMO_TEXT_LIMIT:
            _STATEMENT_MEMO.put(memo_key, st.prepared)

    def _relax(self, statements: list[Statement]) -> dict[str, int]:
        """Grow short branches that do not reach until none does: GNU as's relaxation, to its fixed point.

        Every round lays out the whole program from the current sizes and only then
        grows the branches that do not reach, so no decision uses a stale address.
        Sizes only grow, so each round but the last makes at least one more branch
        long and the loop ends within len(branches) + 1 rounds."""
        sizes = [st.size for st in statements]
        label_at = [(label, i) for i, st in enumerate(statements) for label in st.labels]
        branches = [i for i, st in enumerate(statements) if st.branch]
        rounds = self.relaxation_rounds if self.relaxation_rounds is not None else len(branches) + 2
        for _round in range(rounds):
            addresses = list(itertools.accumulate(sizes, initial=self.base))
            labels = {label: addresses[i] for label, i in label_at}
            grew = False
            for i in branches:
                st = statements[i]
                if st.long_branch:
                    continue
                target = self._branch_target(st, labels)
                if not -128 <= target.address - (addresses[i] + 2) <= 127:
                    st.long_branch, st.size, grew = True, st.long_size, True
                    sizes[i] = st.size
            if not grew:
                for st, address in zip(statements, addresses):
                    st.address = address
                return labels
        raise AssemblyError(f"branch relaxation did not reach a fixed point in {rounds} rounds")

    def assemble(self) -> Program:
        key = (self.text, self.base, self.relaxation_rounds)
        known = _PROGRAM_MEMO.get(key)
        if known is not None:
            instructions, labels = known
            return Program("x86_amx", self.base, [
                Instruction(form, operands, address, encoding, text, line, 0, invalid, dict(extra))
                for form, operands, address, encoding, text, line, invalid, extra in instructions],
                dict(labels), self.source)
        try:
            program = self._assemble()
        except IsasimError as error:
            # A NUL or escape byte from the source must not vanish from (or act in) the message.
            error.message = printable(error.message)
            error.args = (error.message,)
            raise
        if len(self.text) <= _PROGRAM_TEXT_LIMIT:
            _PROGRAM_MEMO.put(key, (tuple((i.form, i.operands, i.address, i.encoding, i.text, i.line, i.invalid,
                                           dict(i.extra)) for i in program.instructions), dict(program.labels)))
        return program

    def _assemble(self) -> Program:
        statements = self.statements()
        first_line: dict[str, int] = {}
        for st in statements:
            for label in st.labels:
                if label in first_line:
                    raise AssemblyError(f"label '{label}' is defined twice (first on line {first_line[label]})"
                                        ).located(self.source, st.line)
                first_line[label] = st.line
        self.label_names = set(first_line)
        self.constants = {}
        for st in statements:
            if st.mnemonic is not None:
                try:
                    self._prepare(st)
                except IsasimError as error:
                    raise error.located(self.source, st.line)
        self.labels = self._relax(statements)
        label_at: dict[int, str] = {}  # a target's name: the first label at its address
        for name, address in self.labels.items():
            label_at.setdefault(address, name)
        for st in statements:
            if not st.branch:
                continue
            address = st.address
            try:
                encoder = control_encoding.encode if st.mnemonic == "call" else partial(
                    scalar_encoding.encode, long_branch=st.long_branch)
                form, (target,), code = encoder(st.mnemonic, (self._branch_target(st, self.labels),), address)
            except IsasimError as error:
                raise error.located(self.source, st.line)
            if len(code) != st.size:  # the layout would be stale: refuse rather than emit wrong targets
                raise AssemblyError(f"{st.mnemonic} encoded in {len(code)} bytes where the layout "
                                    f"planned {st.size}").located(self.source, st.line)
            st.prepared = _Prepared(form, (Target(target.address, label_at.get(target.address)),), code)
            st.encoding = code
        return self.build(statements)

    def build(self, statements: list[Statement]) -> Program:
        """The program: each instruction statement's instruction as it was assembled, and the bytes of
        ``.byte`` directives decoded.

        Bytes from .byte need not be whole instructions nor end where a statement does: where there
        are any, the code is read from the start on, each instruction statement's instruction standing
        where an instruction starts at one (bytes that follow an instruction cannot change it) and
        decode_one reading the code elsewhere, so its errors still show the bytes that follow.  The
        tests hold the program equal to the decoding of its bytes."""
        if not self.data_bytes:
            instructions = [st.prepared.instruction(st.address, st.line) for st in statements if st.encoding]
            return Program("x86_amx", self.base, instructions, dict(self.labels), self.source)
        code = b"".join(st.encoding for st in statements)
        at = {st.address: st for st in statements if st.prepared is not None}
        starts = [(st.address, st.line) for st in statements if st.encoding]
        instructions = []
        decoded = []  # read from .byte's bytes: these may name a label
        pos, base = 0, self.base
        while pos < len(code):
            address = base + pos
            st = at.get(address)
            if st is not None:
                ins = st.prepared.instruction(address, st.line)
            else:
                # the statement whose bytes this instruction starts in
                line = starts[bisect.bisect_right(starts, (address, float("inf"))) - 1][1]
                try:
                    ins = decode_one(code, pos, address)
                except DecodeError as error:
                    raise error.located(self.source, line)
                ins.line = line
                decoded.append(ins)
            instructions.append(ins)
            pos += ins.size
        program = Program("x86_amx", self.base, instructions, dict(self.labels), self.source)
        attach_labels(program, decoded)
        return program


def attach_labels(program: Program, instructions: list[Instruction] | None = None) -> None:
    """Name branch targets by their labels, and re-render the text (of ``instructions`` of the program's
    only, if given: those that may have a branch target)."""
    names = {}
    for name, address in program.labels.items():
        names.setdefault(address, name)
    for ins in program.instructions if instructions is None else instructions:
        if any(isinstance(o, Target) for o in ins.operands):
            ins.operands = tuple(Target(o.address, names.get(o.address)) if isinstance(o, Target) else o
                                 for o in ins.operands)
            if ins.invalid is None:
                ins.text = ins.form.format(ins.operands)


def assemble(text: str, source: str = "<input>", base: int = 0x1000) -> Program:
    return Assembler(text, source, base).assemble()
