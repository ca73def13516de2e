"""isasim's SME floating-point outer products and dots: time per instruction, per form and SVL, and
(with --baseline) the ratio to another checkout of isasim measured in the same run.

    python benchmarks/sme_fp.py [--quick] [--svls 512,2048] [--baseline /tmp/fpold] [--bits] [--json out.json]

Each case is a loop of four copies of one FP instruction, SUBS and CBNZ, run without recording (the
decode cache warm after the first iteration) on finite values: Z registers and ZA hold random
numbers of moderate size (what a matrix kernel sees), predicates all true.  With --bits they hold
random bits instead: an exponent field of all ones (infinity or NaN) in 1 of 256 single-precision
and 1 of 32 half-precision elements, so about 1% of FMOPA .S lanes and 15% of the 16-bit forms'
lanes, which isasim's array forms compute again by their general (masked) form.  Every measurement
runs in its own process (``--worker``), the checkout under test and the baseline alternating,
``--repeats`` times each; the minimum of each is reported, since the machine may be shared and busy.
Seconds per instruction include the loop's share of SUBS/CBNZ (a small fraction here).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

# (label, instruction): one of each kind of array operation and operand layout
CASES = (
    ("FMOPA .S", "fmopa za1.s, p0/m, p1/m, z1.s, z2.s"),
    ("FMOPS .H->.S", "fmops za2.s, p0/m, p1/m, z3.h, z4.h"),
    ("BFMOPA .H->.S", "bfmopa za3.s, p0/m, p1/m, z5.h, z6.h"),
    ("FDOT VGx4 multiple", "fdot za.s[w8, 1, vgx4], {z8.h-z11.h}, {z12.h-z15.h}"),
    ("BFDOT VGx2 indexed", "bfdot za.s[w9, 2, vgx2], {z16.h-z17.h}, z10.h[1]"),
)
PER_ITERATION = 4


def program_text(instruction: str) -> str:
    body = "".join(f"        {instruction}\n" for _ in range(PER_ITERATION))
    return f"again:\n{body}        subs x2, x2, #1\n        cbnz x2, again\n        ret\n"


def initial_state(svl: int, iterations: int, instruction: str, bits: bool = False):
    from isasim.core.trace import Init

    rng = np.random.default_rng(svl)
    svlb = svl // 8
    lanes16 = svlb // 2
    if bits:
        arrays = {f"z{i}": rng.integers(0, 256, svlb, dtype=np.uint8).tobytes() for i in range(32)}
        arrays["za"] = rng.integers(0, 256, svlb * svlb, dtype=np.uint8).tobytes()
        arrays.update({f"p{i}": b"\xff" * (svlb // 8) for i in range(2)})
        return Init(regs={"x2": iterations, "x8": 1, "x9": 2, "svcr": 3}, arrays=arrays)
    if ".s, z" in instruction:  # single-precision sources
        z = [rng.uniform(-2, 2, svlb // 4).astype(np.float32).tobytes() for _ in range(32)]
    elif instruction.startswith("bf"):
        z = [(rng.uniform(-2, 2, lanes16).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes()
             for _ in range(32)]
    else:
        z = [rng.uniform(-2, 2, lanes16).astype(np.float16).tobytes() for _ in range(32)]
    arrays = {f"z{i}": data for i, data in enumerate(z)}
    arrays["za"] = rng.uniform(-100, 100, svlb * svlb // 4).astype(np.float32).tobytes()
    arrays.update({f"p{i}": b"\xff" * (svlb // 8) for i in range(2)})
    return Init(regs={"x2": iterations, "x8": 1, "x9": 2, "svcr": 3}, arrays=arrays)


def worker(root: str, svl: int, instruction: str, iterations: int, bits: bool) -> float:
    """Seconds per FP instruction with the isasim found at ``root``."""
    sys.path.insert(0, root)
    from isasim.arm_sme import ISA
    from isasim.core.machine import Machine

    assert Path(sys.modules["isasim"].__file__).resolve().is_relative_to(Path(root).resolve())
    program = ISA.assemble(program_text(instruction), source="benchmark")
    machine = Machine("arm_sme", {"svl": svl})
    machine.load_init(program, initial_state(svl, iterations, instruction, bits))
    started = time.perf_counter()
    result = machine.run(10 * iterations + 10)
    elapsed = time.perf_counter() - started
    assert result.fault is None, result.fault
    return elapsed / (iterations * PER_ITERATION)


def measure(root: Path, svl: int, instruction: str, iterations: int, bits: bool) -> float:
    output = subprocess.run([sys.executable, __file__, "--worker", str(root), str(svl), instruction, str(iterations),
                             str(int(bits))],
                            check=True, capture_output=True, text=True).stdout
    return float(output.split()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one iteration, one repeat (a smoke test)")
    parser.add_argument("--svls", default="512,2048", help="comma-separated SVLs (default %(default)s)")
    parser.add_argument("--seconds", type=float, default=1.0, help="about this long per measurement")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per side (minimum reported)")
    parser.add_argument("--baseline", help="another isasim checkout (e.g. git worktree add /tmp/fpold <commit>)")
    parser.add_argument("--bits", action="store_true", help="random bits in Z and ZA (many NaNs), not numbers")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        root, svl, instruction, iterations, bits = args.worker
        print(worker(root, int(svl), instruction, int(iterations), bits == "1"))
        return 0
    repeats = 1 if args.quick else args.repeats
    sides = [("isasim", ROOT)] + ([("baseline", Path(args.baseline))] if args.baseline else [])
    rows = []
    header = f"{'case':<20}{'SVL':>5}{'isasim ms':>11}"
    print(header + (f"{'baseline ms':>13}{'speed-up':>10}" if args.baseline else ""))
    for svl in (int(s) for s in args.svls.split(",")):
        for label, instruction in CASES:
            # size each side's loop from one quick probe so that a measurement takes about --seconds
            counts = {}
            for name, root in sides:
                probe = measure(root, svl, instruction, 1, args.bits)
                counts[name] = 1 if args.quick else max(1, int(args.seconds / (PER_ITERATION * probe)))
            best = {name: float("inf") for name, _ in sides}
            for _ in range(repeats):  # the two sides alternate, so a busy spell hits both
                for name, root in sides:
                    best[name] = min(best[name], measure(root, svl, instruction, counts[name], args.bits))
            row = {"case": label, "instruction": instruction, "svl": svl, "bits": args.bits,
                   **{f"{name}_s_per_instruction": best[name] for name, _ in sides}}
            line = f"{label:<20}{svl:>5}{best['isasim'] * 1e3:>11.3f}"
            if args.baseline:
                row["speedup"] = best["baseline"] / best["isasim"]
                line += f"{best['baseline'] * 1e3:>13.3f}{row['speedup']:>9.1f}x"
            rows.append(row)
            print(line, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
