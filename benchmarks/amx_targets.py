"""The x86 AMX simulator's speed targets (issue 15), each against a baseline measured in the same run.

    python benchmarks/amx_targets.py [--quick] [--rounds N] [--json results.json]

(``benchmarks/run.py`` prints this table too.)  Four targets:

* int8 microkernel, M=1024 N=32 K=1280 (``kernels.int8_microkernel(32, 1280)``): isasim's plain run within
  5x of numpy's time for the same product (float64 BLAS on one thread, exact at this size);
* bf16 microkernel, 8 blocks x K=256 (``kernels.bf16_microkernel(8, 256)``): within 20x of numpy;
* the seed block (examples/x86_amx/int8_block.s with its trace's init): a new Machine, assembling the text
  and running it, within 50 us (printed beside numpy's time for the block's own 16x64 by 64x16 product,
  and split into build, assemble and load + run, since the assembler is a large part);
* the AMX fuzzer's simulator side: drawing cases (the hypothesis strategy ``amx_cases``), turning each into
  its program text and initial state, assembling and running it on the simulator: at least 2,000 programs
  per second on one core (silicon is not involved).

For the two kernels each round times the simulator and then numpy back to back and the ratio is the
median of the rounds' ratios: this machine's speed drifts (a shared virtual machine), and a slow spell
then slows both sides of one round rather than one side of the table.  Every simulated C is compared with
the kernel's reference.  ``--quick`` runs tiny sizes (what the test suite runs): its figures mean nothing.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # one core, as the simulator
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from isasim.core.fuzz import draw_cases  # noqa: E402
from isasim.core.isa import get_isa  # noqa: E402
from isasim.core.machine import Machine  # noqa: E402
from isasim.core.trace import read_trace  # noqa: E402
from isasim.x86_amx import kernels  # noqa: E402
from isasim.x86_amx.fuzz_amx import amx_cases  # noqa: E402

KERNEL_TARGETS = {"int8_microkernel": 5.0, "bf16_microkernel": 20.0}  # at most this many times numpy's time
BLOCK_TARGET_US = 50.0
FUZZ_TARGET_PER_S = 2000.0
BLOCK = ROOT / "examples" / "x86_amx" / "int8_block"


def machine_info() -> dict:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model, "cores": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__}


def simulate(kernel: kernels.Kernel, program) -> int:
    machine = Machine("x86_amx")
    machine.load(program, regs=kernel.init.regs, memory=kernel.init.memory)
    result = machine.run(10**8)
    for address, data in kernel.expected:
        if machine.memory.read(address, len(data)) != data:
            raise SystemExit(f"{kernel.name}: the simulated result differs from the reference")
    return result.steps


def numpy_product(kernel: kernels.Kernel):
    """The kernel's matrix product in float64 with numpy (BLAS), on inputs of the kernel's shape."""
    M, N = kernel.reference.shape
    K = kernel.macs // (M * N)
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 256, (M, K)).astype(np.float64), rng.integers(-128, 128, (K, N)).astype(np.float64)
    return lambda: a @ b


def _seconds(fn, at_least: float = 0.005, calls: int = 20) -> float:
    """Seconds per call of ``fn``: at least ``calls`` calls and ``at_least`` seconds."""
    repeats, start = 0, time.perf_counter()
    while repeats < calls or time.perf_counter() - start < at_least:
        fn()
        repeats += 1
    return (time.perf_counter() - start) / repeats


def kernel_rows(quick: bool, rounds: int) -> list[dict]:
    isa = get_isa("x86_amx")
    suite = ([kernels.int8_microkernel(1, 64), kernels.bf16_microkernel(1, 32)] if quick
             else [kernels.int8_microkernel(32, 1280), kernels.bf16_microkernel(8, 256)])
    rows = []
    for kernel, target in zip(suite, KERNEL_TARGETS.values()):
        program = isa.assemble(kernel.text)
        steps = simulate(kernel, program)  # warm-up, and the result checked
        product = numpy_product(kernel)
        product()
        sims, refs = [], []
        for _ in range(rounds):
            start = time.perf_counter()
            simulate(kernel, program)
            sims.append(time.perf_counter() - start)
            refs.append(_seconds(product))
        rows.append({"target": kernel.name, "instructions": steps, "sim_s": statistics.median(sims),
                     "numpy_s": statistics.median(refs),
                     "ratio": statistics.median(s / r for s, r in zip(sims, refs)), "limit": target})
    return rows


def block_row(rounds: int) -> dict:
    """The seed block: Machine build + assemble + run, median of many, and its parts."""
    text = BLOCK.with_suffix(".s").read_text()
    init = read_trace(BLOCK.with_suffix(".trace.json")).init
    program = Machine("x86_amx").assemble(text)

    def whole():
        machine = Machine("x86_amx")
        machine.load_init(machine.assemble(text), init)
        if machine.run().fault is not None:
            raise SystemExit("the seed block faulted")

    def build():
        Machine("x86_amx")

    def assemble():
        Machine("x86_amx").assemble(text)

    def load_run():
        machine = Machine("x86_amx")
        machine.load_init(program, init)
        machine.run()

    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 256, (16, 64)).astype(np.float64), rng.integers(-128, 128, (64, 16)).astype(np.float64)
    parts = {name: [] for name in ("whole", "build", "assemble", "load_run", "numpy")}
    for _ in range(max(rounds, 3)):  # interleaved, so that drift touches every part alike
        for name, fn in (("whole", whole), ("build", build), ("assemble", assemble), ("load_run", load_run),
                         ("numpy", lambda: a @ b)):
            parts[name].append(_seconds(fn, at_least=0.02))
    us = {name: statistics.median(times) * 1e6 for name, times in parts.items()}
    return {"target": "int8_block (build + assemble + run)", "us": us["whole"], "parts_us": us,
            "ratio_to_numpy": statistics.median(w / n for w, n in zip(parts["whole"], parts["numpy"])),
            "limit_us": BLOCK_TARGET_US}


def fuzz_row(quick: bool, rounds: int) -> dict:
    """AMX programs per second on the simulator: draw, program text + init, assemble, run."""
    isa = get_isa("x86_amx")
    n = 20 if quick else 300
    rates, shares = [], []
    for r in range(max(1, rounds // 2)):
        start = time.perf_counter()
        cases = draw_cases(amx_cases(), n, seed=r)
        drawn = time.perf_counter()
        for case in cases:
            text, init = case.standalone()
            machine = Machine("x86_amx")
            machine.load_init(isa.assemble(text), init)
            machine.run(100_000)
        done = time.perf_counter()
        rates.append(len(cases) / (done - start))
        shares.append((drawn - start) / (done - start))
    return {"target": "amx fuzz (simulator side)", "programs_per_s": statistics.median(rates),
            "draw_share": statistics.median(shares), "limit_per_s": FUZZ_TARGET_PER_S}


def measure(quick: bool, rounds: int) -> dict:
    return {"machine": machine_info(), "kernels": kernel_rows(quick, rounds), "block": block_row(rounds),
            "fuzz": fuzz_row(quick, rounds)}


def report(results: dict) -> list[str]:
    m = results["machine"]
    lines = [f"x86 AMX targets on {m['cpu']} ({m['cores']} cores, Python {m['python']}, numpy {m['numpy']}):",
             f"  {'target':<40}{'isasim':>12}{'baseline':>12}{'ratio':>9}  target"]
    for row in results["kernels"]:
        met = "met" if row["ratio"] <= row["limit"] else "NOT met"
        lines.append(f"  {row['target']:<40}{row['sim_s'] * 1e3:>9.2f} ms{row['numpy_s'] * 1e3:>9.3f} ms"
                     f"{row['ratio']:>8.1f}x  <= {row['limit']:g}x numpy: {met}")
    block = results["block"]
    met = "met" if block["us"] <= block["limit_us"] else "NOT met"
    parts = block["parts_us"]
    lines.append(f"  {block['target']:<40}{block['us']:>9.1f} us{parts['numpy']:>9.2f} us"
                 f"{block['ratio_to_numpy']:>8.0f}x  <= {block['limit_us']:g} us: {met} "
                 f"({block['us'] / block['limit_us']:.1f}x the target; build {parts['build']:.1f} us, "
                 f"assemble {parts['assemble']:.1f} us, load + run {parts['load_run']:.1f} us)")
    fuzz = results["fuzz"]
    met = "met" if fuzz["programs_per_s"] >= fuzz["limit_per_s"] else "NOT met"
    lines.append(f"  {fuzz['target']:<40}{fuzz['programs_per_s']:>7.0f} prog/s{'':>12}"
                 f"{fuzz['limit_per_s'] / fuzz['programs_per_s']:>8.1f}x  >= {fuzz['limit_per_s']:g} /s: {met} "
                 f"(drawing the cases is {fuzz['draw_share']:.0%} of it)")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (what the test suite runs)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    results = measure(args.quick, 1 if args.quick else args.rounds)
    print("\n".join(report(results)))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
