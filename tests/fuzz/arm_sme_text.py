"""Seeded A64 assembly lines for fuzzing the arm_sme assembler: valid lines of every form, and mutants of them.

``valid_lines(rng, per_form)`` draws random field values for each form in isasim/arm_sme/forms/ and
writes the instruction as isasim's disassembler prints it (llvm's preferred alias) and, where the
form has aliases, in the form's own spelling too (``orr x0, xzr, x1`` beside ``mov x0, x1``).

``mutate(line, rng)`` changes a line the ways a person or a careless tool does, and says which
kinds of change it made (its tags), so that a test can tell a documented difference from a bug:

* ``number``: the same value spelled otherwise (hex, octal, binary, upper-case prefixes, ``u``/``ll``
  suffixes, 64-bit two's complement for a negative value), or another value (a leading zero, which
  makes a number octal; past 64 bits; thousands of digits; Unicode digits; a real number);
* ``real``: a real number (``1.0``, ``3.``, ``2e0``);
* ``hash``: a ``#`` dropped or added;  ``expression``: ``(1)``, ``+1``, ``1+0``, ``--1``;
* ``register``: a leading zero (``x01``), x31/w31 for the zero register, fp/lr, a number past the last
  register, the other width (x/w), upper case;
* ``size``: an element size (``.b .h .s .d .q``) swapped for another;
* ``space``: spaces dropped, doubled, or turned into tabs, NBSP, U+2028, U+0085, vertical tab, form
  feed or an ideographic space;  ``case``: upper or mixed case;
* ``list``: braces dropped or added, a range list written as a comma list or the other way round;
* ``extra``: a token added or an operand dropped or repeated;
* ``join``: two lines in one, with ``;`` (a statement separator), a carriage return, a line separator
  or a comment between them.

Nothing here knows what clang or isasim make of a line; tests/arm_sme/test_assembler_vs_clang.py
compares the two, and tests/fuzz/test_fuzz_arm_sme_text.py feeds mutants to isasim alone.
"""

from __future__ import annotations

import random
import re

from isasim.arm_sme import ISA
from isasim.arm_sme.instructions import operand_texts
from isasim.arm_sme.forms import FORMS
from isasim.core.errors import IsasimError

_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])(#\s*)?(-\s*)?(0[xX][0-9a-fA-F]+|[0-9]+)(?![0-9A-Za-z_])")
_REGISTER = re.compile(r"(?<![A-Za-z0-9_])(za|[xwzpq])(0|[1-9][0-9]*)([hv]?)(?![0-9A-Za-z_])", re.IGNORECASE)
_ZERO_REGISTER = re.compile(r"(?<![A-Za-z0-9_])([xw])zr(?![0-9A-Za-z_])", re.IGNORECASE)
_SUFFIX = re.compile(r"(?<=[0-9a-z\]])\.([bhsdq])(?![a-z0-9])", re.IGNORECASE)
_RANGE_LIST = re.compile(r"\{\s*(z)([0-9]+)(\.[bhsdq])\s*-\s*z([0-9]+)\.[bhsdq]\s*\}", re.IGNORECASE)
_COMMA_LIST = re.compile(r"\{\s*z[0-9]+\.[bhsdq](?:\s*,\s*z[0-9]+\.[bhsdq])+\s*\}", re.IGNORECASE)

ODD_SPACES = ("\t", "\u00a0", "\u2028", "\u0085", "\x0b", "\x0c", "\u3000", "\u2009")
UNICODE_DIGITS = ("\u0663", "\uff13", "\u0969", "\u00b3")  # Arabic-Indic, fullwidth, Devanagari three; superscript 3
EXTRA_TOKENS = (", #1", ", x0", ",", " x0", "]", "}", "!", ", lsl #1", ", mul vl", "[0]", "[1]", ", vgx2",
                ", vgx4", " #1", ", {z0.b}", ", p0/z", ", za")
JOINS = ("; ", ";", " ; ", "\r", "\u2028", "\u0085", " // ", " /* c */ ", " # ")


def _canonical(text: str) -> str:
    """An instruction's text without the comment isasim may print after it (a branch's address)."""
    return text.split("//")[0].strip()


def _disassembled(word: int) -> str | None:
    try:
        instruction = ISA.disassemble(word.to_bytes(4, "little")).instructions[0]
    except IsasimError:
        return None  # a reserved or UNDEFINED field value: the decoder refuses it
    if instruction.invalid is not None:
        return None
    return _canonical(instruction.text)


def _own_spelling(form, fields: dict) -> str:
    """The form's own mnemonic and operands, whichever alias llvm would print."""
    texts = [text for text in operand_texts(form, fields) if text]
    mnemonic = form.extra.get("alias", form.fixed_text)
    return _canonical(mnemonic + (" " + ", ".join(texts) if texts else ""))


def valid_lines(rng: random.Random, per_form: int, forms=None) -> list[str]:
    """``per_form`` random encodings of every form (or of ``forms``) as text (llvm's spelling), plus the form's
    own spelling where an alias is printed instead."""
    lines = []
    for form in FORMS if forms is None else forms:
        made = tries = 0
        while made < per_form and tries < 20 * per_form:
            tries += 1
            fields = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()}
            text = _disassembled(form.encoding.pack(fields))
            if text is None:
                continue
            lines.append(text)
            if form.extra.get("aliases"):
                own = _own_spelling(form, form.encoding.unpack(form.encoding.pack(fields)))
                if own != text:
                    lines.append(own)
            made += 1
            if not form.encoding.fields:
                break
    return lines


# ---- mutations ---------------------------------------------------------------------------------

def _respelled(value: int, rng: random.Random, long_numbers: bool) -> tuple[str, str]:
    """``value`` (non-negative) written another way, and the tag of the change."""
    roll = rng.random()
    if roll < 0.12:
        return rng.choice(("0x", "0X")) + rng.choice((f"{value:x}", f"{value:X}")), "number"
    if roll < 0.22:
        return f"0{value:o}", "number"  # octal, as LLVM reads a leading zero
    if roll < 0.32:
        return rng.choice(("0b", "0B")) + f"{value:b}", "number"
    if roll < 0.42:
        return "0" * rng.randint(1, 3) + str(value), "number"  # a leading zero: octal, or a bad octal digit
    if roll < 0.50:
        return str(value) + rng.choice(("u", "U", "ll", "ull", "L", "lu", "uu")), "number"
    if roll < 0.56:
        return str(value + (1 << 64) * rng.choice((1, 1, 2, 1 << 60))), "number"  # past 64 bits
    if roll < 0.60:
        if not long_numbers:  # clang takes a quarter of a second over each of these
            return rng.choice(("9" * rng.randint(21, 40), "0x" + "f" * rng.randint(17, 40), "0" * 30 + "1")), "number"
        return rng.choice(("9" * rng.randint(21, 40), "9" * 5000, "0x" + "f" * 4400, "0" * 4400 + "1",
                           "0b" + "1" * 4400, "1" + "0" * 4301)), "number"
    if roll < 0.66:
        digits = str(value)
        at = rng.randrange(len(digits))
        return digits[:at] + rng.choice(UNICODE_DIGITS) + digits[at + 1:], "number"
    if roll < 0.71:
        return rng.choice((f"{value}.0", f"{value}.", f"{value}e0", f"{value}.5")), "real"
    if roll < 0.80:
        return rng.choice((f"({value})", f"+{value}", f"{value}+0", f"~~{value}", f"-(-{value})", f"{value}*1")), \
            "expression"
    if roll < 0.86:
        return rng.choice(("0x", "0b", "08", "09", "0b2", "0x1g", "1_0", "0o7", "1f", "1b")), "number"
    return str(value + rng.choice((-1, 1, 2, 4, 8, 16, 256, 4096))), "number"  # another value


def _value(digits: str) -> int:
    """What a number token of a line stands for, roughly (a mutant of a mutant may be no number at all)."""
    if len(digits) > 30:
        return 1
    for base in (0, 8, 10):
        try:
            return int(digits, base)
        except ValueError:
            continue
    return 1


def _mutate_number(line: str, rng: random.Random, long_numbers: bool = True) -> tuple[str, str] | None:
    spots = list(_NUMBER.finditer(line))
    if not spots:
        return None
    m = rng.choice(spots)
    hash_, minus, digits = m.group(1) or "", m.group(2) or "", m.group(3)
    value = _value(digits)
    roll = rng.random()
    if roll < 0.12:
        hash_, tag = ("" if hash_ else "#"), "hash"
        text = digits
    elif roll < 0.18:
        hash_, tag = rng.choice(("# ", "#  ", "#\t")), "space"
        text = digits
    elif roll < 0.24 and minus:
        text, tag = hex((1 << 64) - value), "number"  # the same 64-bit value without the sign
        minus = ""
    elif roll < 0.30:
        minus = rng.choice(("-", "- ", "--", "-" if not minus else ""))
        tag = "expression" if minus == "--" else "number"
        text = digits
    else:
        text, tag = _respelled(value, rng, long_numbers)
    return line[:m.start()] + hash_ + minus + text + line[m.end():], tag


def _mutate_register(line: str, rng: random.Random) -> tuple[str, str] | None:
    spots = list(_REGISTER.finditer(line)) + list(_ZERO_REGISTER.finditer(line))
    if not spots:
        return None
    m = rng.choice(spots)
    if m.re is _ZERO_REGISTER:
        kind = m.group(1)
        new = rng.choice((f"{kind}31", f"{kind}32", f"{kind.upper()}ZR", f"{kind}30", "sp" if kind == "x" else "wsp"))
        return line[:m.start()] + new + line[m.end():], "register"
    # a register number of thousands of digits (an earlier mutation's) is cut to 4,000: Python's int() refuses more
    prefix, number, rest = m.group(1), int(m.group(2)[:4000]), m.group(3)
    roll = rng.random()
    if roll < 0.3:
        new = f"{prefix}{'0' * rng.randint(1, 2)}{number}{rest}"  # a leading zero
    elif roll < 0.45:
        new = f"{prefix}{rng.choice((16, 31, 32, 99, 2 ** 64))}{rest}"
    elif roll < 0.55 and prefix.lower() in "xw":
        new = rng.choice((f"{prefix}31", "fp", "lr", "ip0", "ip1", f"{prefix}29", f"{prefix}30", "xzr", "wzr", "sp"))
    elif roll < 0.7:
        other = {"x": "w", "w": "x", "z": "p", "p": "z", "q": "z", "za": "z"}.get(prefix.lower(), prefix)
        new = f"{other}{number}{rest}"
    elif roll < 0.8:
        new = f"{prefix}{number}{rest}".upper()
    else:
        new = f"{prefix}{number + rng.choice((1, -1, 2, 4, 8))}{rest}"
    return line[:m.start()] + new + line[m.end():], "register"


def _mutate_size(line: str, rng: random.Random) -> tuple[str, str] | None:
    spots = list(_SUFFIX.finditer(line))
    if not spots:
        return None
    m = rng.choice(spots)
    new = rng.choice([s for s in "bhsdq" if s != m.group(1).lower()])
    if rng.random() < 0.3:  # every suffix of the line at once: a consistent other size
        return _SUFFIX.sub("." + new, line), "size"
    return line[:m.start()] + "." + new + line[m.end():], "size"


def _mutate_space(line: str, rng: random.Random) -> tuple[str, str]:
    spaces = [i for i, c in enumerate(line) if c == " "]
    roll = rng.random()
    if spaces and roll < 0.35:
        at = rng.choice(spaces)
        return line[:at] + rng.choice(ODD_SPACES) + line[at + 1:], "space"
    if spaces and roll < 0.55:
        at = rng.choice(spaces)
        return line[:at] + line[at + 1:], "space"
    if roll < 0.7:
        return line.replace(" ", ""), "space"
    if roll < 0.85:
        at = rng.randrange(len(line) + 1)
        return line[:at] + rng.choice((" ", "  ", "\t")) + line[at:], "space"
    return rng.choice((" ", "\t", "\u00a0", "")) + line + rng.choice((" ", "\t", "\u2028", "\u0085", "\x0c")), "space"


def _mutate_case(line: str, rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.5:
        return line.upper(), "case"
    return "".join(c.upper() if rng.random() < 0.3 else c for c in line), "case"


def _mutate_list(line: str, rng: random.Random) -> tuple[str, str] | None:
    ranged = _RANGE_LIST.search(line)
    if ranged and rng.random() < 0.4:
        first, last, suffix = int(ranged.group(2)), int(ranged.group(4)), ranged.group(3)
        names = ", ".join(f"z{(first + i) % 32}{suffix}" for i in range((last - first) % 32 + 1))
        return line[:ranged.start()] + "{" + names + "}" + line[ranged.end():], "list"
    listed = _COMMA_LIST.search(line)
    if listed and rng.random() < 0.4:
        names = re.findall(r"z[0-9]+\.[bhsdq]", listed.group(), re.IGNORECASE)
        if rng.random() < 0.5:
            names.reverse()
        joined = ", ".join(names) if rng.random() < 0.5 else f"{names[0]} - {names[-1]}"
        return line[:listed.start()] + "{" + joined + "}" + line[listed.end():], "list"
    if "{" in line and rng.random() < 0.5:
        return line.replace("{", "", 1).replace("}", "", 1), "list"
    words = line.split(" ", 1)
    if len(words) == 2:
        operands = words[1].split(", ")
        at = rng.randrange(len(operands))
        operands[at] = "{" + operands[at] + "}"
        return words[0] + " " + ", ".join(operands), "list"
    return None


def _mutate_extra(line: str, rng: random.Random) -> tuple[str, str] | None:
    roll = rng.random()
    if roll < 0.5:
        at = rng.choice((len(line), len(line), rng.randrange(len(line) + 1)))
        return line[:at] + rng.choice(EXTRA_TOKENS) + line[at:], "extra"
    words = line.split(" ", 1)
    if len(words) != 2:
        return line + rng.choice(EXTRA_TOKENS), "extra"
    operands = words[1].split(", ")
    at = rng.randrange(len(operands))
    if roll < 0.75 and len(operands) > 1:
        del operands[at]
    else:
        operands.insert(at, operands[at])
    return words[0] + " " + ", ".join(operands), "extra"


MUTATIONS = (_mutate_number, _mutate_number, _mutate_number, _mutate_register, _mutate_register, _mutate_size,
             _mutate_space, _mutate_case, _mutate_list, _mutate_extra)


def mutate(line: str, rng: random.Random, others: list[str], long_numbers: bool = True) -> tuple[str, tuple[str, ...]]:
    """``line`` changed once or twice (see the module docstring), and the tags of the changes; without
    ``long_numbers``, no number of thousands of digits."""
    tags = []
    for _ in range(rng.choice((1, 1, 1, 2))):
        for _attempt in range(4):
            mutation = rng.choice(MUTATIONS)
            changed = mutation(line, rng, long_numbers) if mutation is _mutate_number else mutation(line, rng)
            if changed is not None:
                line = changed[0]
                tags.append(changed[1])
                break
    if rng.random() < 0.05:  # last, so that no mutation opens a /* comment that swallows the next lines
        line = line + rng.choice(JOINS) + rng.choice(others)
        tags.append("join")
    return line, tuple(tags)


def fuzz_lines(seed: int, per_form: int, mutants_per_line: int, long_numbers: bool = True, forms=None) \
        -> list[tuple[str, tuple[str, ...]]]:
    """Valid lines of every form (or of ``forms``; tag ``valid``) followed by ``mutants_per_line`` mutants of each."""
    rng = random.Random(seed)
    valid = valid_lines(rng, per_form, forms)
    cases = [(line, ("valid",)) for line in valid]
    for line in valid:
        cases += [mutate(line, rng, valid, long_numbers) for _ in range(mutants_per_line)]
    return cases


# ---- damage: what no assembler should choke on -----------------------------------------------------------

HOSTILE_TEXT = (
    "\0", "\x07", "\x1b[2J", "\x7f", "\u0663", "\uff11", "\u00b3", "\u00a0", "\u2028", "\x85", "\x0b", "\x0c",
    "\r", "\t", "\u212a", "\u0130", "é", "🙂", "[", "]", "{", "}", "[]", "{}", ",", ";", "#", ":", "::", "/*", "*/",
    "//", "!", "-", "--", "+", "~", "(", ")", ".", "0x", "0b", "08", "1_0", "1f", "1b", "1.5", "1e9", "mul vl",
    "mul #", "vgx4", "vgx3", "za", "za.s[", "za[", "p0/z", "p0/m", "x31", "w31", "sp", "xzr", "fp", "lsl #",
    "uxtw", "sxtx #9", ".inst", ".byte", ".set", "b.", "b.cond", "smstart", "label:", "1:", "'", '"', "\\",
)
# Long runs cost a thousand tokens each: spliced in less often.
LONG_HOSTILE_TEXT = ("9" * 5000, "0x" + "f" * 5000, "0" * 5000 + "7", "0b" + "1" * 5000, "[" * 3000, "{" * 3000,
                     "," * 3000, "-" * 3000, " " * 5000, "z" * 5000, "x0, " * 1500, "#" * 3000, "]" * 3000)


def damage(text: str, rng: random.Random) -> str:
    """``text`` with one to three blind edits: a hostile splice, a cut, a deleted run, a random character,
    a repeated piece."""
    for _ in range(rng.choice((1, 1, 2, 3))):
        at = rng.randrange(len(text) + 1)
        roll = rng.random()
        if roll < 0.35:
            text = text[:at] + rng.choice(LONG_HOSTILE_TEXT if rng.random() < 0.03 else HOSTILE_TEXT) + text[at:]
        elif roll < 0.5 and text:
            text = text[:at] + text[min(len(text), at + rng.randint(1, 8)):]
        elif roll < 0.65:
            text = text[:at] + chr(rng.choice((rng.randrange(0, 0x80), rng.randrange(0x80, 0x3000)))) + text[at:]
        elif roll < 0.75:
            text = text[:at]
        elif text:
            start = rng.randrange(len(text))
            text = text[:at] + text[start:start + rng.randint(1, 12)] * rng.randint(1, 40) + text[at:]
    return text


# The stepper's names for SME2 state (p WHAT, w WHAT), for mutating
LOCATIONS = ("za[5]", "za[0]", "za.s[w8, 0, vgx4]", "za.d[w11, 7, vgx2]", "za.b[w9, 3, vgx4]", "za1.s", "za1h.s",
             "za0v.d", "za1v.s[2]", "za1h.s[2][3]", "za0h.b[15][63]", "za15h.q[0]", "z4", "z4.h", "z31.s[3]",
             "z0.d[7]", "p2", "p2.s", "p15.b")
