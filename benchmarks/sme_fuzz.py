"""The arm_sme fuzzer's simulator side: programs per second, against the simulator alone (issue 33's target:
at least 2,000 per second on one core).

    python benchmarks/sme_fuzz.py [--quick] [--cases N] [--svl BITS] [--json results.json]

Each program is a fuzz case as ``isasim fuzz`` makes them (its slots from every fuzzable form, its selects
and its initial state: isasim.arm_sme.fuzz.cases), drawn with a seeded ``random.Random`` rather than
hypothesis (whose drawing and shrinking machinery is the campaign's, timed by benchmarks/fuzz_scale.py).
The time is split into its parts: drawing the case, making its text and initial state, assembling, and
running (a new Machine, load_init, run), the run on both engines (the compiled one loaded before the timed
part).  Every program runs on both engines and their final states must agree (the count of programs that
do not is printed; any makes the figures invalid and the benchmark exits 1).  ``--quick`` runs a few
cases (what the test suite runs): its figures mean nothing.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from isasim.arm_sme import ISA  # noqa: E402
from isasim.arm_sme.forms import FORMS  # noqa: E402
from isasim.arm_sme.fuzz.cases import MAX_INSTRUCTIONS, SmeCase, draw_slot, edge_selects, fuzzable  # noqa: E402
from isasim.core.machine import Machine  # noqa: E402

TARGET = 2_000  # programs per second, simulator side, one core


def draw(rng: random.Random, forms: list, svl: int) -> SmeCase | None:
    slots = [slot for slot in (draw_slot(rng.choice(forms), rng.getrandbits(32))
                               for _ in range(rng.randint(1, MAX_INSTRUCTIONS))) if slot is not None]
    if not slots:
        return None
    selects = tuple(rng.choice(edge_selects(svl)) if rng.randrange(2) else rng.getrandbits(64) for _ in range(8))
    return SmeCase(tuple(slots), selects, rng.getrandbits(32), svl)


def final(machine, result) -> tuple:
    fault = result.fault
    return (machine.isa.observe(machine.state), [bytes(r.data) for r in machine.memory.regions], result.steps,
            result.halted, None if fault is None else (fault.kind if hasattr(fault, "kind") else "", str(fault)))


def measure(cases: int, svl: int, seed: int = 1) -> dict:
    rng = random.Random(seed)
    forms = [form for form in FORMS if fuzzable(form)]
    started = time.perf_counter()
    drawn = [case for case in (draw(rng, forms, svl) for _ in range(cases)) if case is not None]
    drawn_s = time.perf_counter() - started
    started = time.perf_counter()
    texts = [case.standalone() for case in drawn]
    text_s = time.perf_counter() - started
    started = time.perf_counter()
    programs = [ISA.assemble(text, source="fuzz") for text, _ in texts]
    assemble_s = time.perf_counter() - started
    warm = Machine("arm_sme", {"svl": svl}, engine="compiled")
    warm.load_init(programs[0], texts[0][1])
    if warm.compiled_program() is not None:
        warm.compiled_program().warm_up()
    run_s, finals, steps = {}, {}, 0
    for engine in ("python", "compiled"):
        outcomes = []
        started = time.perf_counter()
        for program, (_, init) in zip(programs, texts):
            machine = Machine("arm_sme", {"svl": svl}, engine=engine)
            machine.load_init(program, init)
            result = machine.run(100_000)
            outcomes.append(final(machine, result))
        run_s[engine] = time.perf_counter() - started
        finals[engine] = outcomes
        steps = sum(outcome[2] for outcome in outcomes)
    disagree = sum(a != b for a, b in zip(finals["python"], finals["compiled"]))
    count = len(programs)
    per = {"draw": drawn_s / count, "text and init": text_s / count, "assemble": assemble_s / count}
    rates = {engine: 1 / (sum(per.values()) + run_s[engine] / count) for engine in run_s}
    return {"svl": svl, "programs": count, "instructions_run": steps, "disagreeing": disagree,
            "us_per_program": {name: seconds * 1e6 for name, seconds in per.items()}
            | {f"run ({engine})": run_s[engine] / count * 1e6 for engine in run_s},
            "programs_per_second": rates, "machine": platform.processor() or platform.machine()}


def report(row: dict) -> list[str]:
    lines = [f"arm_sme fuzz, simulator side, SVL {row['svl']}: {row['programs']} programs, "
             f"{row['instructions_run']} instructions run ({row['instructions_run'] / row['programs']:.1f} each)"]
    for name, micros in row["us_per_program"].items():
        lines.append(f"  {name:<16}{micros:>10.0f} us per program")
    if row["disagreeing"]:
        lines.append(f"INVALID: {row['disagreeing']} programs end differently on the two engines: no figure")
        return lines
    for engine, rate in row["programs_per_second"].items():
        verdict = f" (target >= {TARGET}: {'met' if rate >= TARGET else 'NOT met'})" if engine == "compiled" else ""
        lines.append(f"  {engine} engine: {rate:,.0f} programs per second{verdict}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few cases (what the tests run)")
    parser.add_argument("--cases", type=int, default=2_000)
    parser.add_argument("--svl", type=int, default=512)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    row = measure(20 if args.quick else args.cases, args.svl)
    print("\n".join(report(row)))
    if args.json:
        Path(args.json).write_text(json.dumps(row, indent=1) + "\n")
    return 1 if row["disagreeing"] else 0


if __name__ == "__main__":
    sys.exit(main())
