"""Fuzzing of the stepper's command language on every ISA: any command is carried out or refused in one line.

The stepper is where users type most freely (`p za.s[w8, 012, vgx4]`, `w l0c[0:99999...]`, `s ٣`), and its
commands reach the core's numbers (counts, indices, addresses, sizes) and each ISA's location parser.  Issue
25 found locations that crashed it (a leading zero, a 5,000-digit number).  Here each ISA's example program
is opened in a Stepper and fed COMMANDS_PER_ISA commands (ISASIM_FUZZ_STEPPER changes the number): the
commands and locations the ISA's own `help` lists, with their numbers replaced by hostile spellings (leading
zeros, 64-bit edges, huge, negative, Unicode digits, 0x/0b, separators) and hostile text spliced in.  Every
command must either run or set a one-line error (the stepper's `error`); any other exception, a multi-line
error or a command over CASE_SECONDS fails the test, naming the ISA, the case number and the command.
"""

from __future__ import annotations

import io
import os
import random
import re
import time
from pathlib import Path

import pytest
from rich.console import Console

from isasim.core.stepper import Stepper
from isasim.core.trace import read_trace

from .limits import time_limit

ROOT = Path(__file__).resolve().parents[2]
COMMANDS_PER_ISA = int(os.environ.get("ISASIM_FUZZ_STEPPER", "2000"))
CASE_SECONDS = 10
SEED = 25
EXAMPLES = {"x86_amx": "examples/x86_amx/int8_block.trace.json",
            "arm_sme": "examples/arm_sme/udot_gemm.trace.json",
            "ascend_cube": "examples/ascend_cube/int8_gemm.trace.json"}
COMMANDS = ("s", "step", "c", "back", "goto", "b", "w", "watch", "p", "print", "d", "delete", "l", "i", "help")
HOSTILE_NUMBERS = ("0", "1", "-1", "012", "00", "08", "0x10", "0X1f", "0b1", "0o7", "1_0", "1'0", "٣", "１２", "1e3",
                   "18446744073709551615", "18446744073709551616", "9223372036854775808", "-9223372036854775809",
                   "4294967296", "65535", "³", "²5", "٥١٢", "9" * 5000, "0x" + "f" * 300, "", " ", "+1", "1.0", "0x", "-0")
HOSTILE_TEXT = ("\0", "\x1b[2J", "\u00a0", "\u2028", "\x85", "[", "]", "[]", ",", ":", "::", ".", "..", "'", '"', "\\",
                "#", ";", "[/b]", "[red]", "é", "🙂", "za", "tmm", "l0c", "hex", "all", "int4", "fp32", "x", "*")
NUMBER = re.compile(r"[0-9]+")


def _locations(help_text: str) -> list[str]:
    """The location spellings an ISA's help lists (its first column, split at commas and '...')."""
    found = []
    for line in help_text.splitlines():
        first = re.split(r"\s{2,}", line.strip())[0]
        for part in re.split(r",\s*|\s+\.\.\.\s+|\s+", first):
            if part and part not in ("...", "[TYPE]", "[hex]", "[all]"):
                found.append(part)
    return found


def _mutate(rng: random.Random, text: str) -> str:
    kind = rng.randrange(4)
    if kind == 0 and NUMBER.search(text):  # one number replaced by a hostile spelling
        numbers = list(NUMBER.finditer(text))
        m = rng.choice(numbers)
        return text[:m.start()] + rng.choice(HOSTILE_NUMBERS) + text[m.end():]
    if kind == 1:  # hostile text spliced in
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice(HOSTILE_TEXT) + text[at:]
    if kind == 2 and text:  # a character dropped
        at = rng.randrange(len(text))
        return text[:at] + text[at + 1:]
    return text


def _commands(rng: random.Random, locations: list[str]):
    for _ in range(COMMANDS_PER_ISA):
        name = rng.choice(COMMANDS)
        if name in ("p", "print", "w", "watch"):
            argument = rng.choice(locations + ["0x10000", "0x10000:4", "C", "A"])
            if rng.random() < 0.3:
                argument += " " + rng.choice(("int32", "fp32", "hex", "all", "bf16", "int8", "uint8", "x"))
        elif name in ("s", "step", "back", "goto", "d", "delete"):
            argument = rng.choice(("1", "2", "0", "5", "3"))
        elif name in ("b",):
            argument = rng.choice(("0", "#1", "0x400000", "0x10000", "loop", "k_group", "nowhere"))
        else:
            argument = ""
        command = f"{name} {argument}".strip()
        for _ in range(rng.choice((0, 1, 1, 2))):
            command = _mutate(rng, command)
        yield command


@pytest.mark.parametrize("isa", sorted(EXAMPLES))
def test_every_stepper_command_runs_or_is_refused_in_one_line(isa):
    trace = read_trace(str(ROOT / EXAMPLES[isa]))
    from isasim.core.machine import Machine

    program = Machine(trace.isa, trace.config).assemble("\n".join(trace.program))
    out = Console(file=io.StringIO(), width=100, no_color=True)
    stepper = Stepper(trace.isa, dict(trace.config), program, trace.init, out=out)
    locations = _locations(stepper.isa.stepper_locations)
    assert len(locations) >= 5, stepper.isa.stepper_locations
    rng = random.Random(SEED)
    ran = refused = 0
    slowest = 0.0
    for case, command in enumerate(_commands(rng, locations)):
        out.file = io.StringIO()  # what a command prints is not kept
        started = time.perf_counter()
        try:
            with time_limit(CASE_SECONDS, f"{isa} case {case}: {command!r}"):
                stepper.execute(command)
        except Exception as error:  # noqa: BLE001 - the point: nothing but a typed refusal may escape
            pytest.fail(f"{isa} case {case}: {command!r} raised {error.__class__.__name__}: {error}")
        slowest = max(slowest, time.perf_counter() - started)
        if stepper.error is None:
            ran += 1
        else:
            refused += 1
            assert "\n" not in stepper.error and len(stepper.error) < 2000, (isa, case, command, stepper.error)
    print(f"\nstepper fuzz {isa}: {ran + refused} commands, {ran} ran, {refused} refused in one line, 0 other; "
          f"slowest {slowest:.2f} s")
    assert ran and refused  # both kinds were exercised
