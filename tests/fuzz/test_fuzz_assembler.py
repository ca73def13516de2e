"""Property fuzzing of the x86 assembler: any text gives a Program or an IsasimError, nothing else.

Inputs are FUZZ_INPUTS (100,000 by default; ISASIM_FUZZ_INPUTS changes it) texts from one
seeded random.Random, in three streams:

* mutations of the example programs' lines (examples/**/*.s): character edits, splices of
  hostile text (control bytes, Unicode digits, brackets, out-of-range shifts, divisions by
  zero; less often 5,000-digit numbers, deep parentheses, 3,000 unary operators), numbers swapped for 64-bit edges, operators and
  registers swapped for others;
* mutations of short windows of consecutive example lines (labels and branches together);
* grammar-generated lines: every mnemonic isasim knows with random registers, memory
  operands and expressions over all of GNU as's operators.

Each text is assembled in-process (no subprocess).  Whatever is accepted must also be a
well-formed Program: its bytes are the concatenation of its instructions' encodings.  Any
exception other than an IsasimError, or an error message with a line break or an invisible
character, fails the test with the case number and the text, so it can be replayed.  The counts
are printed (``-s``) and recorded as a ``user_properties`` entry in the JUnit XML.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from isasim.core.errors import IsasimError
from isasim.x86_amx.forms import amx, scalar
from isasim.x86_amx.assembler import assemble

ROOT = Path(__file__).resolve().parents[2]
FUZZ_INPUTS = int(os.environ.get("ISASIM_FUZZ_INPUTS", "100000"))
SEED = 9

HOSTILE_TEXT = (
    "\0", "\x07", "\x1b[2J", "\x7f", "\u0663", "\uff11", "\u00a0", "\u2028", "\x85", "\x0b", "\x0c", "\r", "\t",
    "é", "🙂", "[", "]", "[]", "[ ]", "(", ")", "()", ",", ";", "#", ":", "::", "*", "**", "<<", ">>", "<>", "!!",
    "==", "<=", "'", '"', "\\", "$", ".", "%", "0x", "0b", "08", "1f", "10h", "ptr", "QWORD PTR", "byte ptr",
    "rip", "riz", "rsp", "tmm9", "xmm0", "fs:", "ds:", "offset", "mod", "shl", "not", "and", "eq",
    "1 << -1", "1 << 64", "1 / 0", "1 % 0", "-0x8000000000000000 / -1", "-0x8000000000000000 % -1",
)
# Long hostile runs cost a thousand tokens each: spliced in less often, so the count stays high.
LONG_HOSTILE_TEXT = (
    "9" * 5000, "0x" + "f" * 5000, "0b" + "1" * 5000, "0" + "7" * 5000,
    "(" * 300, ")" * 300, "(" * 300 + "1" + ")" * 300, "-" * 3000, "~" * 3000, "!" * 3000, "+" * 3000,
    "*".join(["(1<<128)"] * 50) + "/3",
)
EDGE_NUMBERS = ("0", "1", "-1", "0x7f", "0x80", "0xff", "0x7fffffff", "0x80000000", "0xffffffff", "0x100000000",
                "0x7fffffffffffffff", "0x8000000000000000", "0xffffffffffffffff", "0x10000000000000000",
                "18446744073709551615", "18446744073709551616", "-9223372036854775808", "077", "0b101")
OPERATORS = ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "!", "!!", "<", ">", "<>", "&&", "||",
             " mod ", " shl ", " shr ", " and ", " or ", " xor ", " eq ", " ne ", " lt ", " le ", " gt ", " ge ")
REGISTERS = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r12", "r13", "eax", "ecx", "r9d",
             "ax", "al", "ah", "r8b", "tmm0", "tmm1", "tmm7", "tmm8", "rip", "riz", "xmm1", "cs", "RAX", "Tmm2")


def _example_lines() -> list[str]:
    lines = []
    for path in sorted(ROOT.glob("examples/**/*.s")):
        lines += path.read_text().splitlines()
    assert lines, "no example programs under examples/"
    return lines


class TextMutator:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def mutate(self, text: str) -> str:
        for _ in range(self.rng.choice((1, 1, 2, 3))):
            text = self._once(text)
        return text

    def _once(self, text: str) -> str:
        rng = self.rng
        at = rng.randrange(len(text) + 1)
        roll = rng.random()
        if roll < 0.25:
            hostile = rng.choice(LONG_HOSTILE_TEXT if rng.random() < 0.03 else HOSTILE_TEXT)
            return text[:at] + hostile + text[at:]
        if roll < 0.35 and text:
            end = min(len(text), at + rng.randint(1, 8))
            return text[:at] + text[end:]
        if roll < 0.45:
            return text[:at] + chr(rng.choice((rng.randrange(0, 0x80), rng.randrange(0x80, 0x3000)))) + text[at:]
        if roll < 0.55 and text:
            return text[:at]  # cut short
        if roll < 0.7:
            return self._swap_word(text, EDGE_NUMBERS, str.isdigit)
        if roll < 0.8:
            return self._swap_word(text, REGISTERS, str.isalpha)
        if roll < 0.9:
            return text[:at] + rng.choice(OPERATORS) + rng.choice(EDGE_NUMBERS + REGISTERS) + text[at:]
        if text:
            start = rng.randrange(len(text))
            piece = text[start:start + rng.randint(1, 12)]
            return text[:at] + piece * rng.randint(1, 40) + text[at:]
        return text

    def _swap_word(self, text: str, choices: tuple, kind) -> str:
        words = text.split(" ")
        spots = [i for i, w in enumerate(words) if w and kind(w.strip(",[]")[:1] or "x")]
        if not spots:
            return text + " " + self.rng.choice(choices)
        words[self.rng.choice(spots)] = self.rng.choice(choices)
        return " ".join(words)


def _expression(rng: random.Random, depth: int = 2) -> str:
    terms = []
    for _ in range(rng.randint(1, 4)):
        prefix = "".join(rng.choice(("-", "~", "!", "+", "not ")) for _ in range(rng.choice((0, 0, 1, 2))))
        if depth and rng.random() < 0.3:
            terms.append(f"{prefix}({_expression(rng, depth - 1)})")
        else:
            terms.append(prefix + rng.choice(EDGE_NUMBERS + (str(rng.randrange(200)), hex(rng.getrandbits(64)))))
    text = terms[0]
    for term in terms[1:]:
        text += rng.choice(OPERATORS) + term
    return text


def _operand(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        return rng.choice(REGISTERS)
    if roll < 0.55:
        return _expression(rng)
    if roll < 0.65:
        return rng.choice(("top", "bottom", "nowhere", "top+1"))
    parts = [rng.choice(REGISTERS[:12])]
    if rng.random() < 0.5:
        parts.append(f"{rng.choice(REGISTERS[:12])}*{rng.choice(('1', '2', '4', '8', '3', '0', '16'))}")
    if rng.random() < 0.6:
        parts.append(f"({_expression(rng, 1)})" if rng.random() < 0.5 else _expression(rng, 0))
    rng.shuffle(parts)
    size = rng.choice(("", "", "QWORD PTR ", "DWORD PTR ", "BYTE PTR ", "word ptr ", "zmmword PTR "))
    return f"{size}[{' + '.join(parts)}]"


# Shapes isasim's subset takes, so that a good share of grammar lines reach the encoders and the decoder.
TEMPLATES = ("mov {r64}, {e}", "add {r64}, {e}", "sub {r32}, {e}", "cmp {r64}, {e}", "xor {r32}, {e}",
             "test {r64}, {e}", "imul {r64}, {r64}, {e}", "mov {r64}, {m}", "mov QWORD PTR {m}, {r64}",
             "add DWORD PTR {m}, {e}", "lea {r64}, {m}", "inc {r64}", "dec QWORD PTR {m}", "movabs {r64}, {e}",
             "tileloadd tmm{t}, {m}", "tilestored {m}, tmm{t}", "tdpbusd tmm{t}, tmm{t}, tmm{t}",
             "tilezero tmm{t}", "ldtilecfg {m}", "{j} top", "{j} bottom", "jmp {e}", "ret", "nop", ".byte {e}",
             ".set k, {e}")
JUMPS = ("jmp", "je", "jne", "jl", "jge", "ja", "jbe", "jz", "js")


def _memory(rng: random.Random) -> str:
    parts = [rng.choice(REGISTERS[:12])]
    if rng.random() < 0.5:
        parts.append(f"{rng.choice(REGISTERS[:12])}*{rng.choice(('1', '2', '4', '8'))}")
    if rng.random() < 0.6:
        parts.append(f"({_expression(rng, 1)})" if rng.random() < 0.5 else str(rng.randrange(-300, 300)))
    rng.shuffle(parts)
    return "[" + " + ".join(parts) + "]"


def _template_line(rng: random.Random) -> str:
    small = rng.random() < 0.5  # small values fit most immediates and displacements
    return rng.choice(TEMPLATES).format(
        r64=rng.choice(("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r12", "r15")),
        r32=rng.choice(("eax", "ecx", "r9d", "esi")),
        e=str(rng.randrange(-200, 200)) if small else _expression(rng, 1), m=_memory(rng),
        t=rng.randrange(8), j=rng.choice(JUMPS))


def grammar_program(rng: random.Random, mnemonics: list[str]) -> str:
    lines = ["top:"]
    for _ in range(rng.choice((1, 1, 2))):
        if rng.random() < 0.6:
            lines.append(_template_line(rng))
            continue
        operands = ", ".join(_operand(rng) for _ in range(rng.choice((0, 1, 2, 2, 2, 3))))
        lines.append(f"{rng.choice(mnemonics)} {operands}")
    lines.append("bottom:")
    return "\n".join(lines)


def _check(case: int, text: str, tally: dict) -> None:
    try:
        program = assemble(text, source="<fuzz>")
    except IsasimError as error:
        message = str(error)
        assert "\n" not in message and message.isprintable(), f"case {case}: message {message!r} for {text!r}"
        tally["rejected"] += 1
        return
    except BaseException as error:  # noqa: BLE001 - exactly what the property forbids
        raise AssertionError(f"case {case}: {type(error).__name__}: {error} for input {text[:2000]!r}") from error
    assert program.code == b"".join(ins.encoding for ins in program.instructions), f"case {case}: {text!r}"
    tally["accepted"] += 1


def test_assembler_answers_every_input_with_a_program_or_a_typed_error(record_property):
    rng = random.Random(SEED)
    mutator = TextMutator(rng)
    lines = [line for line in _example_lines() if line.strip()]
    mnemonics = sorted(set(scalar.MNEMONICS) | {f.mnemonic for f in amx.FORMS}) + ["bogus", ".byte", ".set", ".p2align"]
    tally = {"line mutants": 0, "window mutants": 0, "grammar lines": 0, "accepted": 0, "rejected": 0}
    started, cpu_started = time.perf_counter(), time.process_time()
    for case in range(FUZZ_INPUTS):
        roll = rng.random()
        if roll < 0.45:
            text, stream = mutator.mutate(rng.choice(lines)), "line mutants"
        elif roll < 0.6:
            start = rng.randrange(len(lines))
            window = "\n".join(lines[start:start + rng.randint(2, 4)])
            text, stream = mutator.mutate(window), "window mutants"
        else:
            text = grammar_program(rng, mnemonics)
            text, stream = (mutator.mutate(text) if rng.random() < 0.3 else text), "grammar lines"
        tally[stream] += 1
        _check(case, text, tally)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    line = (f"fuzz assembler: {FUZZ_INPUTS} inputs ({tally['line mutants']} mutated example lines, "
            f"{tally['window mutants']} mutated example windows, {tally['grammar lines']} grammar-generated), "
            f"{tally['accepted']} assembled, {tally['rejected']} rejected with a typed error, 0 other; "
            f"{seconds:.1f} s ({cpu_seconds:.1f} s of CPU)")
    print("\n" + line)
    record_property("fuzz_assembler", line)
    assert tally["accepted"] > FUZZ_INPUTS // 50  # the streams must keep reaching the encoders
