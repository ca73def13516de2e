"""The Ascend cube's quantised batch matmul kernel (isasim.ascend_cube.kernels.qbmm) timed on isasim and with numpy.

    python benchmarks/qbmm.py [--quick] [--rounds N] [--json results.json]

(``benchmarks/run.py`` prints this table too.)  The case: C = A x B (+ bias) dequantised per channel, A and B
int8, batch 4 (batch_a = batch_b = batch_c = [1, 1, 1, 4]), m = n = k = 1024, C bfloat16, one uint64 quant
word per column of C (power-of-two scales 1/64 .. 1/1024), the host's default tiling; one row without bias and
one with an int32 bias.  ``--quick`` runs m = n = k = 128, batch 2 (what the test suite runs).

* isasim: ``qbmm.build(case)`` (the instruction stream) and ``qbmm_run.run(kernel)`` (assembling it, loading
  A, B and the words into GM, simulating every DataCopy, LoadData, Mmad and Fixpipe), timed separately;
* numpy f64, the target's baseline: the same operator in plain numpy, no isasim code: ``np.matmul`` of A and B
  as float64 (BLAS; exact here: |sum| <= 4095 * 2**14 < 2**53), as int32, + bias, converted to float32, times
  each column's float32 scale decoded from its word (bits 31..13, the M1 field the Fixpipe reads), rounded to
  bfloat16 by bits (ties to even);
* numpy int, for scale: the same operator with numpy's integer matmul (exact, no BLAS behind it, far slower).

Each round times build, run and both numpys back to back, and a ratio is the median of the rounds'
(build + run) / numpy ratios: this machine's speed drifts, and a slow spell then slows both sides of one
round rather than one side of the table.  The Cs are compared every round; this case is integer-exact (every
sum fits in float32's 24 bits, the scales are powers of two), so they must agree bit for bit, and a row whose
Cs differ is an invalid measurement: the table gives no ratio for it, and no verdict on the target.
The target (issue 33): isasim (build + run) within 2x of the float64-BLAS numpy's time.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy loads: one core, as isasim
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from isasim.ascend_cube.kernels import qbmm as qbmm_kernel  # noqa: E402
from isasim.ascend_cube.kernels.qbmm_run import run as run_kernel  # noqa: E402
from isasim.ascend_cube.numerics.quant_word import pack_scale  # noqa: E402

SIZE, BATCH = 1024, 4
QUICK_SIZE, QUICK_BATCH = 128, 2
TARGET_RATIO = 2  # isasim within 2x of the float64-BLAS numpy's time
SCALES = tuple(np.float32(2.0 ** -e) for e in range(6, 11))  # 1/64 .. 1/1024: exact products, no double rounding
BIAS_LIMIT = 1 << 20  # |A x B| <= 1024 * 128 * 128 = 2**24 at most, and far less for random data


def make_case(size: int, batch: int, bias: bool, seed: int = 0) -> qbmm_kernel.QbmmCase:
    """The benchmark's case: random int8 A and B, a random power-of-two scale per column, and (with ``bias``)
    a random int32 bias."""
    rng = np.random.default_rng(seed)
    dims = (1, 1, 1, batch)
    arrays = {"a": rng.integers(-128, 128, (*dims, size, size), dtype=np.int8),
              "b": rng.integers(-128, 128, (*dims, size, size), dtype=np.int8),
              "scale_b": np.array([pack_scale(SCALES[i]) for i in rng.integers(0, len(SCALES), size)],
                                  dtype=np.uint64)}
    if bias:
        arrays["bias"] = rng.integers(-BIAS_LIMIT, BIAS_LIMIT, size, dtype=np.int32)
    return qbmm_kernel.QbmmCase(m=size, n=size, k=size, a_type="int8", b_type="int8", c_type="bfloat16",
                                batch_a=dims, batch_b=dims, batch_c=dims, bias_type="int32" if bias else None,
                                x2_quant_mode="perchannel", scale_b_type="uint64", arrays=arrays,
                                source=f"benchmark qbmm {size}^3 x {batch}")


def numpy_operator(case: qbmm_kernel.QbmmCase, blas: bool = False):
    """The case's C (bfloat16 bits) in plain numpy: a function of no arguments, so it can be timed.  ``blas``:
    the product as a float64 matmul (exact for these sizes) instead of numpy's integer matmul."""
    a, b = case.arrays["a"], case.arrays["b"]
    bias = case.arrays.get("bias")
    words = case.arrays["scale_b"]

    def compute() -> np.ndarray:
        if blas:
            total = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.int32)
        else:
            total = np.matmul(a.astype(np.int32), b.astype(np.int32))  # numpy's integer matmul: exact, wraps as int32
        if bias is not None:
            total += bias
        # the M1 field (bits 31..13 of the word) is a float32 with its low 13 mantissa bits clear
        scale = (words & np.uint64(0xFFFFE000)).astype(np.uint32).view(np.float32)
        value = total.astype(np.float32) * scale
        bits = value.view(np.uint32)
        # float32 -> bfloat16 rounding to nearest, ties to even, on the bits (no NaN or inf can arise here)
        return ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) >> 16).astype(np.uint16)

    return compute


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def numpy_seconds(compute) -> tuple[float, np.ndarray]:
    """Seconds per call of ``compute`` (repeated for at least 0.1 s when one call is short) and its result."""
    repeats, started = 0, time.perf_counter()
    while True:
        result = compute()
        repeats += 1
        if time.perf_counter() - started >= 0.1:
            return (time.perf_counter() - started) / repeats, result


def differences(got: np.ndarray, expect: np.ndarray, name: str = "isasim") -> str:
    """'' when the two Cs hold the same bits, else how many elements differ and the first (``name``: got's)."""
    if got.shape != expect.shape:
        return f"shapes differ: {name} {got.shape}, numpy {expect.shape}"
    wrong = got != expect
    if not wrong.any():
        return ""
    where = tuple(int(i) for i in np.argwhere(wrong)[0])
    return (f"{int(wrong.sum()):,} of {wrong.size:,} elements differ; first at c{list(where)}: "
            f"{name} {int(got[where]):#06x}, numpy {int(expect[where]):#06x}")


def measure(size: int, batch: int, bias: bool, rounds: int) -> dict:
    """One row: build, run and numpy seconds (medians), their ratio (median of the rounds' ratios) and the counts."""
    case = make_case(size, batch, bias)
    compute, blas = numpy_operator(case), numpy_operator(case, blas=True)
    builds, runs, refs, blas_refs, mismatch = [], [], [], [], ""
    kernel = None
    for _ in range(rounds):
        started = time.perf_counter()
        kernel = qbmm_kernel.build(case)
        builds.append(time.perf_counter() - started)
        started = time.perf_counter()
        got, _machine = run_kernel(kernel)
        runs.append(time.perf_counter() - started)
        seconds, expect = numpy_seconds(compute)
        refs.append(seconds)
        seconds, blas_c = numpy_seconds(blas)
        blas_refs.append(seconds)
        mismatch = mismatch or differences(got, expect) or differences(blas_c, expect, "numpy f64")
    return {"m": size, "n": size, "k": size, "batch": batch, "bias": "int32" if bias else None,
            "blocks": len(kernel.blocks), "instructions": len(kernel.program_lines),
            "build_s": statistics.median(builds), "run_s": statistics.median(runs),
            "numpy_s": statistics.median(refs), "numpy_f64_s": statistics.median(blas_refs),
            "isasim_over_numpy": statistics.median((b + r) / n for b, r, n in zip(builds, runs, refs)),
            "isasim_over_numpy_f64": statistics.median((b + r) / n for b, r, n in zip(builds, runs, blas_refs)),
            "bit_exact": not mismatch, "mismatch": mismatch}


def kernel_rows(quick: bool, rounds: int) -> list[dict]:
    # warm-up (imports, the assembler's first use) on the quick case, so the first timed round is not the slowest
    run_kernel(qbmm_kernel.build(make_case(32, 1, False)))
    size, batch = (QUICK_SIZE, QUICK_BATCH) if quick else (SIZE, BATCH)
    return [measure(size, batch, bias, rounds) for bias in (False, True)]


def report(rows: list[dict], machine: str | None = None) -> list[str]:
    lines = ["ascend_cube qbmm: int8 x int8 -> bfloat16, per-channel uint64 scale, default tiling"
             + (f" ({machine})" if machine else ""),
             f"{'m x n x k':>18}{'batch':>6}{'bias':>7}{'blocks':>7}{'instr':>7}{'build s':>9}{'run s':>8}"
             f"{'numpy f64 s':>13}{'isasim/f64':>12}{'numpy int s':>13}{'isasim/int':>12}  C"]
    for row in rows:
        valid = row["bit_exact"]  # no figure from an invalid measurement
        f64 = f"{row['isasim_over_numpy_f64']:>11.2f}x" if valid else f"{'-':>12}"
        integer = f"{row['isasim_over_numpy']:>11.2f}x" if valid else f"{'-':>12}"
        lines.append(f"{row['m']:>6} x{row['n']:>5} x{row['k']:>5}{row['batch']:>6}{row['bias'] or '-':>7}"
                     f"{row['blocks']:>7}{row['instructions']:>7}{row['build_s']:>9.3f}{row['run_s']:>8.2f}"
                     f"{row['numpy_f64_s']:>13.3f}{f64}{row['numpy_s']:>13.2f}{integer}  "
                     + ("bit-exact" if valid else "NOT bit-exact: " + row["mismatch"]))
    if rows and rows[0]["m"] == SIZE and rows[0]["batch"] == BATCH:
        if all(row["bit_exact"] for row in rows):
            worst = max(row["isasim_over_numpy_f64"] for row in rows)
            lines.append(f"qbmm at m = n = k = {SIZE}, batch {BATCH}: isasim (build + run) {worst:.2f}x the "
                         f"float64-BLAS numpy's time at worst (target <= {TARGET_RATIO}x: "
                         f"{'met' if worst <= TARGET_RATIO else 'NOT met'})")
        else:
            lines.append(f"qbmm at m = n = k = {SIZE}, batch {BATCH}: no ratio and no verdict on the target "
                         f"(<= {TARGET_RATIO}x the float64-BLAS numpy): a row's Cs differ, so its times measure "
                         "nothing")
    lines.append("numpy f64: the operator with the product as a float64 BLAS matmul (exact here), the target's "
                 "baseline; numpy int: with numpy's integer matmul, for scale")
    if not all(row["bit_exact"] for row in rows):
        lines.append("isasim's C and numpy's differ although this case is integer-exact: a bug in one of them")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"m = n = k = {QUICK_SIZE}, batch {QUICK_BATCH} "
                                                             "(what the tests run)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    machine = cpu_model()
    rows = kernel_rows(args.quick, 1 if args.quick else args.rounds)
    print("\n".join(report(rows, f"{machine}, Python {platform.python_version()}, numpy {np.__version__}")))
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine, "rows": rows}, indent=1) + "\n")
    return 0 if all(row["bit_exact"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
