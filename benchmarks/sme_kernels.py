"""The arm_sme GEMM kernels (isasim.arm_sme.kernels) timed on isasim, on QEMU and with numpy.

    python benchmarks/sme_kernels.py [--quick] [--rounds N] [--json results.json]

(``benchmarks/run.py`` prints this table too.)  For each kernel at each SVL from 128 to 2048 bits:

* isasim: the kernel's program run without recording on the compiled engine (isasim.core.compiled; its
  loop loaded before any timed round) and, for the target rows, on the Python engine too (a plain run is
  first checked against the kernel's INT64 reference, the expected C);
* QEMU: the same instruction words under qemu-aarch64 (>= 10.1, -cpu max at this SVL) through
  isasim's qemu backend.

Both are timed the same way: the kernel in a loop of 2R runs less the loop of R runs, over R, so
fixed costs cancel out (QEMU's start-up, the transfer of A, B and C, a cold translation cache); R
makes a loop about 200,000 instructions on isasim and 3 million on QEMU (one run, R = 1, for
kernels longer than that).
* numpy: the same product C += A x B as one float64 matrix product (BLAS, one thread; exact for
  these sizes).

Each round times the three back to back, and a ratio is the median of the rounds' ratios (this
machine's speed drifts).  The target rows (issue 33), at SVL 512 with M = N = 256, K = 1024: the UDOT
GEMM (about 2.6 million instructions) within 10x of QEMU's time, the UMOPA GEMM within 5x;
``--quick`` runs tiny sizes only (what the test suite runs).
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

SVLS = (128, 256, 512, 1024, 2048)
SIZES = {"udot_gemm": (64, 64, 256), "udot16_gemm": (64, 64, 128), "umopa_gemm": (64, 64, 256),
         "udot_indexed_gemm": (64, 64, 256)}  # (M, N, K) of the table
QUICK_SIZES = {name: (8, 8, 8) for name in SIZES}
QUICK_SVLS = (128, 512)
TARGETS = {"udot_gemm": 10, "umopa_gemm": 5}  # isasim within this many times QEMU's time, at TARGET_SVL and size
TARGET_SVL, TARGET_SIZE = 512, (256, 256, 1024)
MAX_STEPS = 10**8


def simulate(kernel: kernels.Kernel, program, engine: str = "compiled") -> tuple[int, float]:
    """Run the kernel's program on isasim: its steps and the seconds the run took (the machine's set-up,
    the loading of A, B and C and the compiled loop's loading not counted)."""
    machine = Machine("arm_sme", {"svl": kernel.svl}, engine=engine)
    machine.load_init(program, kernel.init)
    compiled = machine.compiled_program()
    if compiled is not None:
        compiled.warm_up()  # once per process: never inside a timed round
    started = time.perf_counter()
    result = machine.run(MAX_STEPS)
    elapsed = time.perf_counter() - started
    if result.fault is not None:
        raise SystemExit(f"{kernel.name}: {result.fault}")
    return result.steps, elapsed


def check_against_reference(kernel: kernels.Kernel, program) -> int:
    """One run on isasim, C checked against the kernel's INT64 reference; its steps."""
    machine = Machine("arm_sme", {"svl": kernel.svl})
    machine.load_init(program, kernel.init)
    steps = machine.run(MAX_STEPS).steps
    for address, data in kernel.expected:
        if machine.memory.read(address, len(data)) != data:
            raise SystemExit(f"{kernel.name}: the simulated C differs from the INT64 reference")
    return steps


def repeated(kernel: kernels.Kernel, times: int) -> str:
    """The kernel's program run ``times`` times in a loop, its registers set again before each run from
    the kernel's initial values (x28 counts the runs; no kernel uses it).  C accumulates each time."""
    setup = []
    for name, value in kernel.init.regs.items():
        setup.append(f"        movz {name}, #{value & 0xFFFF}")
        for shift in (16, 32, 48):
            if value >> shift & 0xFFFF:
                setup.append(f"        movk {name}, #{value >> shift & 0xFFFF}, lsl #{shift}")
    body = [line for line in kernel.lines if line.strip() != "ret"]
    return "\n".join([f"        movz x28, #{times}", "again_whole_kernel:"] + setup + body
                      + ["        subs x28, x28, #1", "        b.ne again_whole_kernel", "        ret"]) + "\n"


# The R extra runs of the 2R loop must take at least this share of the R loop's whole time, or the kernel's
# own time is lost in the fixed costs' noise (a QEMU process start is ~50 ms): no figure is made of that.
MIN_SIGNAL = 0.1


def seconds_per_run(run, kernel: kernels.Kernel, steps: int, budget: int) -> float | None:
    """The time of one run of the kernel by ``run(program) -> seconds``: (a loop of 2R runs - a loop of R
    runs) / R, so fixed costs (start-up, loading A, B and C, a cold translation cache) cancel out; R
    makes a loop of R runs about ``budget`` instructions.  None when the difference is within the fixed
    costs' noise (see MIN_SIGNAL): an invalid measurement, which the report says instead of a figure."""
    times = max(1, min(0xFFFF, budget // steps))
    few, many = (ISA.assemble(repeated(kernel, r), source=kernel.name) for r in (times, 2 * times))
    few_s, many_s = run(few), run(many)
    if many_s - few_s < MIN_SIGNAL * few_s:
        return None
    return (many_s - few_s) / times


def _median(values: list) -> float | None:
    """The median of valid measurements; None if any round was invalid (a mix would hide the noise)."""
    return None if not values or None in values else statistics.median(values)


class QemuTimer:
    """QEMU's runs of a program through isasim's qemu backend (each one a qemu-aarch64 process)."""

    def __init__(self):
        self.backend = QemuBackend()
        self.reason = self.backend.unavailable_reason("arm_sme", ISA.assemble("ret", source="benchmark"))
        self.built: set[str] = set()

    def run(self, kernel: kernels.Kernel, program) -> float:
        config = ISA.configure({"svl": kernel.svl})

        def timed() -> float:
            started = time.perf_counter()
            outcome = self.backend.run("arm_sme", config, program, kernel.init, max_steps=MAX_STEPS)
            elapsed = time.perf_counter() - started
            if outcome.fault is not None:
                raise SystemExit(f"{kernel.name} on QEMU: {outcome.fault}")
            return elapsed

        text = "\n".join(i.text for i in program.instructions)
        if text not in self.built:  # the first run builds (and caches) the test program
            timed()
            self.built.add(text)
        return timed()


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


def measure(name: str, svl: int, size: tuple[int, int, int], rounds: int, qemu: QemuTimer,
            budgets: tuple[int, int], python_too: bool = False) -> dict:
    """One row: isasim's and QEMU's time per run (``budgets``: instructions per timing loop for each)."""
    M, N, K = size
    kernel = kernels.build(name, M=M, N=N, K=K, svl=svl)
    steps = check_against_reference(kernel, ISA.assemble(kernel.text, source=name))
    product = numpy_product(kernel)
    product()
    ours, theirs, reference, python = [], [], [], []
    for _ in range(rounds):
        ours.append(seconds_per_run(lambda program: simulate(kernel, program)[1], kernel, steps, budgets[0]))
        if python_too:
            python.append(seconds_per_run(lambda program: simulate(kernel, program, "python")[1], kernel, steps,
                                          budgets[0]))
        if qemu.reason is None:
            theirs.append(seconds_per_run(lambda program: qemu.run(kernel, program), kernel, steps, budgets[1]))
        reference.append(numpy_seconds(product))
    isasim_s, qemu_s = _median(ours), _median(theirs)
    return {"kernel": name, "svl": svl, "m": M, "n": N, "k": K, "instructions": steps, "macs": kernel.macs,
            "isasim_s": isasim_s, "numpy_s": statistics.median(reference),
            "isasim_over_numpy": None if isasim_s is None else statistics.median(
                o / r for o, r in zip(ours, reference)),
            "qemu_s": qemu_s, "qemu_invalid": bool(theirs) and qemu_s is None,
            "python_engine_s": _median(python) if python_too else None,
            "isasim_over_qemu": None if isasim_s is None or qemu_s is None else statistics.median(
                o / t for o, t in zip(ours, theirs))}


def kernel_rows(quick: bool, rounds: int) -> tuple[list[dict], str | None]:
    """The table's rows and why QEMU was not timed (None: it was)."""
    qemu = QemuTimer()
    sizes, svls = (QUICK_SIZES, QUICK_SVLS) if quick else (SIZES, SVLS)
    budgets = (2_000, 300_000) if quick else (2_000_000, 3_000_000)
    rows = [measure(name, svl, sizes[name], rounds, qemu, budgets) for name in sizes for svl in svls]
    if not quick:
        for name in TARGETS:
            rows.append(measure(name, TARGET_SVL, TARGET_SIZE, max(1, rounds // 3), qemu, budgets, python_too=True)
                        | {"target": True})
    return rows, qemu.reason


def report(rows: list[dict], qemu_reason: str | None) -> list[str]:
    lines = [f"{'arm_sme kernel':<20}{'SVL':>5}{'M x N x K':>16}{'instr':>10}{'isasim s':>10}{'qemu ms':>9}"
             f"{'numpy ms':>10}{'isasim/qemu':>13}{'isasim/numpy':>14}"]
    noisy = False
    for row in rows:
        noisy |= row["qemu_invalid"] or row["isasim_s"] is None
        qemu_s = f"{row['qemu_s'] * 1e3:.2f}" if row["qemu_s"] is not None else "noise" if row["qemu_invalid"] else "-"
        vs_qemu = f"{row['isasim_over_qemu']:.0f}x" if row["isasim_over_qemu"] is not None else "-"
        isasim_s = f"{row['isasim_s']:.3f}" if row["isasim_s"] is not None else "noise"
        vs_numpy = f"{row['isasim_over_numpy']:.0f}x" if row["isasim_over_numpy"] is not None else "-"
        lines.append(f"{row['kernel']:<20}{row['svl']:>5}{row['m']:>6} x{row['n']:>4} x{row['k']:>4}"
                     f"{row['instructions']:>10}{isasim_s:>10}{qemu_s:>9}{row['numpy_s'] * 1e3:>10.3f}"
                     f"{vs_qemu:>13}{vs_numpy:>14}")
    if noisy:
        lines.append(f"noise: the 2R-run loop took less than {MIN_SIGNAL:.0%} longer than the R-run loop, so the "
                     f"kernel's time is lost in the fixed costs (process start-up, loading): no figure is given "
                     f"(a size without --quick measures it)")
    if qemu_reason:
        lines.append(f"QEMU not timed: {qemu_reason}")
    for target in (row for row in rows if row.get("target")):
        limit, name = TARGETS[target["kernel"]], target["kernel"].split("_")[0].upper()
        engines = ""
        if target["python_engine_s"] is not None and target["isasim_s"] is not None:
            engines = f"; the Python engine {target['python_engine_s']:.2f} s, {target['python_engine_s'] / target['isasim_s']:.0f}x the compiled"
        if target["isasim_over_qemu"] is None:
            lines.append(f"the {name} GEMM at SVL {TARGET_SVL}, 256 x 256 x 1024: no valid ratio to QEMU (see above), "
                         f"target <= {limit}x not judged{engines}")
            continue
        ratio = target["isasim_over_qemu"]
        lines.append(f"the {name} GEMM at SVL {TARGET_SVL}, 256 x 256 x 1024: isasim {ratio:.1f}x QEMU's time "
                     f"(target <= {limit}x: {'met' if ratio <= limit else 'NOT met'}){engines}")
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
