"""isasim's SME2 dot products against QEMU and numpy, per streaming vector length.

    python benchmarks/sme.py [--quick] [--dots N] [--json results.json]

The program is a loop of four UDOT VGx4 (multiple and single) per iteration, SUBS and CBNZ: at
least 100,000 dots by default.  isasim runs it without recording (the decode cache warm after the
first iteration); QEMU (qemu-aarch64 >= 10.1, -cpu max, through isasim's qemu backend) runs the same
instruction words, and its start-up, measured with a loop count of one, is subtracted.  numpy does
the same multiply-adds: per dot, the four Zn vectors' halfword pairs times Zm's, summed into four
ZA rows.  Ratios are isasim time / QEMU time and isasim time / numpy time, measured in this run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from isasim.arm_sme import ISA  # noqa: E402
from isasim.arm_sme.oracle.backend import QemuBackend  # noqa: E402
from isasim.core.machine import Machine  # noqa: E402
from isasim.core.trace import Init  # noqa: E402

PROGRAM = """\
again:
        udot za.s[w8, 0, vgx4], {z0.h-z3.h}, z4.h
        udot za.s[w8, 1, vgx4], {z4.h-z7.h}, z8.h
        udot za.s[w9, 2, vgx4], {z8.h-z11.h}, z12.h
        udot za.s[w9, 3, vgx4], {z12.h-z15.h}, z0.h
        subs x2, x2, #1
        cbnz x2, again
        ret
"""
DOTS_PER_ITERATION = 4
SVLS = (128, 256, 512, 1024, 2048)


def initial_state(svl: int, iterations: int) -> Init:
    rng = np.random.default_rng(svl)
    arrays = {f"z{i}": rng.integers(0, 256, svl // 8, dtype=np.uint8).tobytes() for i in range(16)}
    return Init(regs={"x2": iterations, "x8": 1, "x9": 2, "svcr": 3}, arrays=arrays)


def isasim_seconds(program, svl: int, iterations: int) -> float:
    machine = Machine("arm_sme", {"svl": svl})
    machine.load_init(program, initial_state(svl, iterations))
    started = time.perf_counter()
    result = machine.run(10 * iterations + 10)
    elapsed = time.perf_counter() - started
    assert result.fault is None, result.fault
    return elapsed


def qemu_seconds(program, svl: int, iterations: int) -> float | None:
    backend = QemuBackend()
    if backend.unavailable_reason("arm_sme", program):
        return None
    config = ISA.configure({"svl": svl})

    def timed(count: int) -> float:
        started = time.perf_counter()
        outcome = backend.run("arm_sme", config, program, initial_state(svl, count))
        assert outcome.fault is None, outcome.fault
        return time.perf_counter() - started

    timed(1)  # builds (and caches) the test program
    start_up = min(timed(1) for _ in range(3))
    return max(timed(iterations) - start_up, 1e-6)


def numpy_seconds(svl: int, dots: int) -> float:
    """The same multiply-adds: each dot is four (SVL/32 x 2) halfword products summed pairwise."""
    rng = np.random.default_rng(0)
    lanes = svl // 32
    zn = rng.integers(0, 1 << 16, (4, lanes, 2), dtype=np.uint64)
    zm = rng.integers(0, 1 << 16, (lanes, 2), dtype=np.uint64)
    za = np.zeros((4, lanes), dtype=np.uint64)
    started = time.perf_counter()
    for _ in range(dots):
        za += (zn * zm).sum(axis=2)
    elapsed = time.perf_counter() - started
    za &= 0xFFFFFFFF
    return elapsed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1,000 dots per SVL (what a smoke test runs)")
    parser.add_argument("--dots", type=int, default=100_000, help="dots per SVL (default %(default)s)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    dots = 1_000 if args.quick else args.dots
    iterations = max(1, dots // DOTS_PER_ITERATION)
    program = ISA.assemble(PROGRAM, source="benchmark")
    rows = []
    print(f"{'SVL':>5}{'dots':>9}{'isasim s':>10}{'qemu s':>9}{'numpy s':>9}{'isasim/qemu':>13}{'isasim/numpy':>14}")
    for svl in SVLS:
        ours = isasim_seconds(program, svl, iterations)
        theirs = qemu_seconds(program, svl, iterations)
        reference = numpy_seconds(svl, iterations * DOTS_PER_ITERATION)
        row = {"svl": svl, "dots": iterations * DOTS_PER_ITERATION, "isasim_s": ours, "qemu_s": theirs,
               "numpy_s": reference}
        rows.append(row)
        vs_qemu = f"{ours / theirs:.1f}x" if theirs else "-"
        print(f"{svl:>5}{row['dots']:>9}{ours:>10.3f}{theirs if theirs is not None else float('nan'):>9.3f}"
              f"{reference:>9.3f}{vs_qemu:>13}{ours / reference:>13.1f}x")
    at_512 = next(r for r in rows if r["svl"] == 512)
    if at_512["qemu_s"]:
        ratio = at_512["isasim_s"] / at_512["qemu_s"]
        print(f"at SVL 512: isasim {ratio:.1f}x QEMU's time (target <= 30x: {'met' if ratio <= 30 else 'NOT met'})")
    else:
        print("QEMU not available here (tools/install_oracles.sh fetches it): no isasim/QEMU ratio")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
