"""The arm_sme GEMM kernels (isasim.arm_sme.kernels) timed on isasim, on QEMU and with numpy.

    python benchmarks/sme_kernels.py [--quick] [--rounds N] [--json results.json]

(``benchmarks/run.py`` prints this table too.)  For each kernel at each SVL from 128 to 2048 bits:

* isasim: the kernel's program run to its end without recording, checked against its INT64
  reference (the expected C);
* QEMU: the same instruction words under qemu-aarch64 (>= 10.1, -cpu max at this SVL) through
  isasim's qemu backend, less the time of a program that only returns from the same initial state,
  so QEMU's start-up and the transfer of A, B and C to and from it are not counted;
* numpy: the same product C += A x B as one float64 matrix product (BLAS, one thread; exact for
  these sizes).

Each round times the three back to back, and a ratio is the median of the rounds' ratios (this
machine's speed drifts).  The target row is the UDOT GEMM at SVL 512 with M = N = 256, K = 1024,
about 2.6 million instructions; ``--quick`` runs tiny sizes only (what the test suite runs).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy loads
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from isasim.arm_sme import ISA, kernels  # noqa: E402
from isasim.arm_sme.oracle.backend import QemuBackend  # noqa: E402
from isasim.core.machine import Machine  # noqa: E402
from isasim.core.trace import Init  # noqa: E402

SVLS = (128, 256, 512, 1024, 2048)
SIZES = {"udot_gemm": (64, 64, 256), "udot16_gemm": (64, 64, 128), "umopa_gemm": (64, 64, 256),
         "udot_indexed_gemm": (64, 64, 256)}  # (M, N, K) of the table
QUICK_SIZES = {name: (8, 8, 8) for name in SIZES}
QUICK_SVLS = (128, 512)
TARGET = ("udot_gemm", 512, (256, 256, 1024))
TARGET_RATIO = 30  # isasim within 30x of QEMU's time
NOISE_S = 0.01  # a QEMU time (after the start-up is subtracted) below this is start-up noise, not a ratio
MAX_STEPS = 10**8


def simulate(kernel: kernels.Kernel, program) -> int:
    """Run the kernel on isasim; its steps (an error if C is not the reference's)."""
    machine = Machine("arm_sme", {"svl": kernel.svl})
    machine.load_init(program, kernel.init)
    result = machine.run(MAX_STEPS)
    if result.fault is not None:
        raise SystemExit(f"{kernel.name}: {result.fault}")
    for address, data in kernel.expected:
        if machine.memory.read(address, len(data)) != data:
            raise SystemExit(f"{kernel.name}: the simulated C differs from the INT64 reference")
    return result.steps


class QemuTimer:
    """QEMU's time for a kernel: the kernel's run less a run of `ret` from the same state."""

    def __init__(self):
        self.backend = QemuBackend()
        self.returns = ISA.assemble("ret", source="benchmark")
        self.reason = self.backend.unavailable_reason("arm_sme", self.returns)

    def seconds(self, kernel: kernels.Kernel, program, init: Init) -> float:
        config = ISA.configure({"svl": kernel.svl})

        def timed(prog) -> float:
            started = time.perf_counter()
            outcome = self.backend.run("arm_sme", config, prog, init, max_steps=MAX_STEPS)
            elapsed = time.perf_counter() - started
            if outcome.fault is not None:
                raise SystemExit(f"{kernel.name} on QEMU: {outcome.fault}")
            return elapsed

        return max(timed(program) - timed(self.returns), 1e-6)


def numpy_product(kernel: kernels.Kernel):
    """C + A x B in float64 for the kernel's M, N, K (random data of the kernel's widths)."""
    M, N = kernel.reference.shape
    K = kernel.macs // (M * N)
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (M, K)).astype(np.float64)
    b = rng.integers(0, 256, (K, N)).astype(np.float64)
    c = np.zeros((M, N))
    return lambda: c + a @ b


def numpy_seconds(product) -> float:
    repeats, started = 0, time.perf_counter()
    while repeats < 20 or time.perf_counter() - started < 0.005:
        product()
        repeats += 1
    return (time.perf_counter() - started) / repeats


def measure(name: str, svl: int, size: tuple[int, int, int], rounds: int, qemu: QemuTimer) -> dict:
    M, N, K = size
    kernel = kernels.build(name, M=M, N=N, K=K, svl=svl)
    program = ISA.assemble(kernel.text, source=name)
    steps = simulate(kernel, program)  # also the warm-up
    product = numpy_product(kernel)
    product()
    ours, theirs, reference = [], [], []
    for _ in range(rounds):
        started = time.perf_counter()
        simulate(kernel, program)
        ours.append(time.perf_counter() - started)
        if qemu.reason is None:
            theirs.append(qemu.seconds(kernel, program, kernel.init))
        reference.append(numpy_seconds(product))
    row = {"kernel": name, "svl": svl, "m": M, "n": N, "k": K, "instructions": steps, "macs": kernel.macs,
           "isasim_s": statistics.median(ours), "numpy_s": statistics.median(reference),
           "isasim_over_numpy": statistics.median(o / r for o, r in zip(ours, reference)),
           "qemu_s": statistics.median(theirs) if theirs else None,
           "isasim_over_qemu": statistics.median(o / t for o, t in zip(ours, theirs)) if theirs else None}
    return row


def kernel_rows(quick: bool, rounds: int) -> tuple[list[dict], str | None]:
    """The table's rows and why QEMU was not timed (None: it was)."""
    qemu = QemuTimer()
    sizes, svls = (QUICK_SIZES, QUICK_SVLS) if quick else (SIZES, SVLS)
    rows = [measure(name, svl, sizes[name], rounds, qemu) for name in sizes for svl in svls]
    if not quick:
        name, svl, size = TARGET
        rows.append(measure(name, svl, size, max(1, rounds // 3), qemu) | {"target": True})
    return rows, qemu.reason


def report(rows: list[dict], qemu_reason: str | None) -> list[str]:
    lines = [f"{'arm_sme kernel':<20}{'SVL':>5}{'M x N x K':>16}{'instr':>10}{'isasim s':>10}{'qemu s':>9}"
             f"{'numpy ms':>10}{'isasim/qemu':>13}{'isasim/numpy':>14}"]
    for row in rows:
        qemu_s = f"{row['qemu_s']:.3f}" if row["qemu_s"] is not None else "-"
        vs_qemu = "-" if row["isasim_over_qemu"] is None else (
            "(noise)" if row["qemu_s"] < NOISE_S else f"{row['isasim_over_qemu']:.0f}x")
        lines.append(f"{row['kernel']:<20}{row['svl']:>5}{row['m']:>6} x{row['n']:>4} x{row['k']:>4}"
                     f"{row['instructions']:>10}{row['isasim_s']:>10.3f}{qemu_s:>9}{row['numpy_s'] * 1e3:>10.3f}"
                     f"{vs_qemu:>13}{row['isasim_over_numpy']:>13.0f}x")
    if qemu_reason:
        lines.append(f"QEMU not timed: {qemu_reason}")
    elif any(row["qemu_s"] is not None and row["qemu_s"] < NOISE_S for row in rows):
        lines.append(f"(noise): QEMU took under {NOISE_S * 1e3:.0f} ms beyond its start-up, too little for a ratio")
    target = next((row for row in rows if row.get("target")), None)
    if target is not None and target["isasim_over_qemu"] is not None:
        ratio = target["isasim_over_qemu"]
        lines.append(f"the UDOT GEMM at SVL 512, M = N = 256, K = 1024: isasim {ratio:.1f}x QEMU's time "
                     f"(target <= {TARGET_RATIO}x: {'met' if ratio <= TARGET_RATIO else 'NOT met'})")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes at SVL 128 and 512 (what the tests run)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    rows, reason = kernel_rows(args.quick, 1 if args.quick else args.rounds)
    print("\n".join(report(rows, reason)))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "qemu_not_timed": reason}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
