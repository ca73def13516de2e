"""Property fuzzing of arm_sme assembly text and of the stepper's SME2 location names, in-process.

Any text given to the arm_sme assembler gives a Program or an IsasimError whose message is one
printable line; never another exception, never a hang.  Inputs come from one seeded
random.Random (tests/fuzz/arm_sme_text.py):

* valid lines of every form and their mutants (numbers respelled, registers renamed, sizes swapped,
  odd spaces, case, braces, '#', extra tokens, joined statements), numbers of thousands of digits
  among them;
* the same lines and short windows of the example programs (examples/arm_sme/*.s: labels, branches)
  with blind damage: control bytes, Unicode digits and spaces, brackets, comment markers, runs of
  thousands of characters.

A program that is accepted must be well formed: its bytes are its instructions' encodings, and the
text isasim prints for each instruction assembles, at its address, to the same word (so a listing or a
trace's program reads back as the same program).  The stepper's names (za[i], za.s[w8, 0, vgx4],
za1h.s[i][j], z4.s[3], p2.s ...) and mutants of them given to isasim.arm_sme.views.locations.parse give
a location, None, or a one-line IsasimError.  No input may take a second.  The counts are printed
(``-s``).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from isasim.arm_sme import ISA
from isasim.arm_sme.views import locations
from isasim.core.errors import IsasimError

from .arm_sme_text import LOCATIONS, damage, fuzz_lines, mutate

ROOT = Path(__file__).resolve().parents[2]
SEED = 25
INPUTS = int(os.environ.get("ISASIM_FUZZ_INPUTS", "60000"))
SLOWEST_SECONDS = 1.0


def _example_lines() -> list[str]:
    lines = []
    for path in sorted(ROOT.glob("examples/arm_sme/*.s")):
        lines += path.read_text().splitlines()
    assert lines, "no arm_sme example programs"
    return lines


def _one_line(message: str) -> bool:
    return "\n" not in message and message.isprintable()


def _check_program(case: int, text: str, tally: dict) -> None:
    started = time.perf_counter()
    try:
        program = ISA.assemble(text, source="fuzz.s")
    except IsasimError as error:
        assert _one_line(str(error)), f"case {case}: message {str(error)!r} for {text[:500]!r}"
        tally["refused"] += 1
    except BaseException as error:  # noqa: BLE001 - exactly what the property forbids
        raise AssertionError(f"case {case}: {type(error).__name__}: {error} for {text[:2000]!r}") from error
    else:
        assert program.code == b"".join(ins.encoding for ins in program.instructions), f"case {case}: {text!r}"
        for ins in program.instructions:
            again = ISA.assemble(ins.text, base=ins.address).instructions[0]
            assert again.encoding == ins.encoding, f"case {case}: {ins.text!r} reads back as {again.text!r}"
        tally["assembled"] += 1
    seconds = time.perf_counter() - started
    tally["slowest"] = max(tally["slowest"], seconds)
    assert seconds < SLOWEST_SECONDS, f"case {case}: {seconds:.1f} s for {text[:500]!r}"


def test_arm_sme_assembler_answers_every_text_with_a_program_or_a_one_line_error():
    rng = random.Random(SEED)
    cases = fuzz_lines(SEED, 2, 4, long_numbers=True)
    valid = [text for text, tags in cases if tags == ("valid",)]
    examples = [line for line in _example_lines() if line.strip()]
    tally = {"generated and mutated": 0, "damaged lines": 0, "damaged windows": 0, "assembled": 0, "refused": 0,
             "slowest": 0.0}
    started = time.perf_counter()
    for case in range(INPUTS):
        roll = rng.random()
        if roll < 0.4:
            text, stream = rng.choice(cases)[0], "generated and mutated"
        elif roll < 0.8:
            text, stream = damage(rng.choice(valid + examples), rng), "damaged lines"
            if rng.random() < 0.3:
                text = mutate(text, rng, valid)[0]
        else:
            start = rng.randrange(len(examples))
            text, stream = damage("\n".join(examples[start:start + rng.randint(2, 6)]), rng), "damaged windows"
        tally[stream] += 1
        _check_program(case, text, tally)
    print(f"\nfuzz arm_sme assembler: {INPUTS} texts in {time.perf_counter() - started:.1f} s "
          f"({', '.join(f'{k} {v}' for k, v in tally.items() if k != 'slowest')}), "
          f"slowest {tally['slowest'] * 1000:.0f} ms, 0 other exceptions")


def test_stepper_location_names_give_a_location_none_or_a_one_line_error():
    rng = random.Random(SEED + 1)
    tally = {"locations": 0, "none": 0, "refused": 0}
    for case in range(INPUTS // 3):
        name = rng.choice(LOCATIONS)
        name = damage(name, rng) if rng.random() < 0.5 else mutate(name, rng, list(LOCATIONS))[0]
        svlb = rng.choice((16, 64, 256))
        started = time.perf_counter()
        try:
            found = locations.parse(name.lower().strip(), svlb)  # as the stepper's p and w give it
        except IsasimError as error:
            assert _one_line(str(error)), f"case {case}: message {str(error)!r} for {name[:500]!r}"
            tally["refused"] += 1
        except BaseException as error:  # noqa: BLE001
            raise AssertionError(f"case {case}: {type(error).__name__}: {error} for {name[:2000]!r}") from error
        else:
            tally["none" if found is None else "locations"] += 1
        assert time.perf_counter() - started < SLOWEST_SECONDS, f"case {case}: {name[:500]!r}"
    print(f"\nfuzz stepper locations: {INPUTS // 3} names: " + ", ".join(f"{k} {v}" for k, v in tally.items()))
