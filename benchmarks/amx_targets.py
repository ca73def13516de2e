"""The x86 AMX simulator's speed targets (issues 15 and 33), each against a baseline measured in the same run.

    python benchmarks/amx_targets.py [--quick] [--rounds N] [--engine compiled|python] [--json results.json]

(``benchmarks/run.py`` prints this table too.)  The engine is the compiled one (isasim.x86_amx.compiled, numba)
unless ``--engine python`` says otherwise; its loop is loaded (or compiled) before anything is timed, so no
JIT compile falls in a timed round.  Five targets (issue 33's):

* int8 microkernel, M=1024 N=32 K=1280 (``kernels.int8_microkernel(32, 1280)``): isasim's plain run within
  2x of numpy's time for the same product (float64 BLAS on one thread, exact at this size);
* bf16 microkernel, 8 blocks x K=256 (``kernels.bf16_microkernel(8, 256)``): within 5x of numpy;
* the seed block (examples/x86_amx/int8_block.s with its trace's init): a new Machine, assembling the text
  and running it, within 50 us (printed beside numpy's time for the block's own 16x64 by 64x16 product,
  and split into build, assemble and load + run, since the assembler is a large part).  Assembling is
  timed twice: warm, the same text every time (what the target times: a memo of statements helps it),
  and cold, the block with a new label and a new displacement or immediate in each of its five
  statements that have one, every time, so that no memo of texts helps and one of statements helps
  only the four without (tilezero, tdpbusd, tilerelease, ret);
* the AMX fuzzer's simulator side: drawing cases (``fuzz_amx.AmxCaseDrawer``, numpy; the hypothesis
  strategy ``amx_cases`` that ``isasim fuzz`` draws from costs far more per case and is timed on a few
  cases beside it), turning each into its program text and initial state, assembling and running it on
  the simulator: at least 2,000 programs per second on one core (silicon is not involved), split into
  those four parts (running: a new Machine, load_init, run) with the instructions a program runs (most
  programs fault before their end, as the fuzzer means them to): at least 5,000 programs per second;
* an x86 scalar loop (add, sub, cmp, lea, dec, jnz over registers): at most 100 ns an instruction.

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
import itertools  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from isasim.core.fuzz.drawing import draw_cases  # noqa: E402
from isasim.core.isa import get_isa  # noqa: E402
from isasim.core.machine import Machine  # noqa: E402
from isasim.core.trace import read_trace  # noqa: E402
from isasim.x86_amx import kernels  # noqa: E402
from isasim.x86_amx.fuzz.amx import AmxCaseDrawer, amx_cases  # noqa: E402

KERNEL_TARGETS = {"int8_microkernel": 2.0, "bf16_microkernel": 5.0}  # at most this many times numpy's time
BLOCK_TARGET_US = 50.0
FUZZ_TARGET_PER_S = 5000.0
SCALAR_TARGET_NS = 100.0
SCALAR_LOOP = """mov rcx, {count}
top:
    add rax, rcx
    sub rdx, 3
    cmp rax, rbx
    lea rsi, [rsi+rax*2+8]
    dec rcx
    jnz top
    ret
"""
ENGINE = "compiled"  # what Machine() runs here (--engine)


def new_machine() -> Machine:
    return Machine("x86_amx", engine=ENGINE)


def warm_up() -> None:
    """Load the compiled loop (from numba's cache, or compile it) before anything is timed."""
    if ENGINE == "compiled":
        isa = get_isa("x86_amx")
        compiled = isa.compile_program(isa.assemble("ret"), isa.configure(None))
        if compiled is not None:
            compiled.warm_up()
BLOCK = ROOT / "examples" / "x86_amx" / "int8_block"
COLD_TEXTS = 3000  # fresh block texts made per round of the cold assemble (what 20 ms holds at 7 us each)
_COLD_NUMBERS = itertools.count()  # never the same text twice in a run
FUZZ_PARTS = ("draw", "text_init", "assemble", "run")


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
    machine = new_machine()
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


def cold_block_text(number: int) -> str:
    """The seed block as a new text: a new label, and a new displacement or immediate in each of the five
    statements that have one (disp32 throughout, so that each encodes alike); tilezero, tdpbusd, tilerelease
    and ret have none and are the same every time."""
    disp = 0x1000 + number
    return "\n".join((f"amx_block_{number}:", f"ldtilecfg [rcx+{disp:#x}]", f"mov r8, {disp:#x}",
                      "tilezero tmm0", f"tileloadd tmm1, [rdi+r8*1+{disp:#x}]",
                      f"tileloadd tmm2, [rsi+r8*1+{disp:#x}]", "tdpbusd tmm0, tmm1, tmm2",
                      f"tilestored [rdx+r8*1+{disp:#x}], tmm0", "tilerelease", "ret"))


def block_row(rounds: int) -> dict:
    """The seed block: Machine build + assemble + run, median of many, and its parts."""
    text = BLOCK.with_suffix(".s").read_text()
    init = read_trace(BLOCK.with_suffix(".trace.json")).init
    program = new_machine().assemble(text)

    def whole():
        machine = new_machine()
        machine.load_init(machine.assemble(text), init)
        if machine.run().fault is not None:
            raise SystemExit("the seed block faulted")

    def build():
        new_machine()

    def assemble():
        new_machine().assemble(text)

    fresh_texts: list[str] = []

    def assemble_cold():  # a text made while timing only if the ones made before run out
        new_machine().assemble(fresh_texts.pop() if fresh_texts else cold_block_text(next(_COLD_NUMBERS)))

    def load_run():
        machine = new_machine()
        machine.load_init(program, init)
        machine.run()

    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 256, (16, 64)).astype(np.float64), rng.integers(-128, 128, (64, 16)).astype(np.float64)
    parts = {name: [] for name in ("whole", "build", "assemble", "assemble_cold", "load_run", "numpy")}
    for _ in range(max(rounds, 3)):  # interleaved, so that drift touches every part alike
        fresh_texts[:] = [cold_block_text(next(_COLD_NUMBERS)) for _ in range(COLD_TEXTS)]  # made before timing
        for name, fn in (("whole", whole), ("build", build), ("assemble", assemble),
                         ("assemble_cold", assemble_cold), ("load_run", load_run), ("numpy", lambda: a @ b)):
            parts[name].append(_seconds(fn, at_least=0.02))
    us = {name: statistics.median(times) * 1e6 for name, times in parts.items()}
    return {"target": "int8_block (build + assemble + run)", "us": us["whole"], "parts_us": us,
            "ratio_to_numpy": statistics.median(w / n for w, n in zip(parts["whole"], parts["numpy"])),
            "limit_us": BLOCK_TARGET_US}


def fuzz_row(quick: bool, rounds: int) -> dict:
    """AMX programs per second on the simulator: draw (numpy), program text + init, assemble, run; each
    round a new seed, so that no buffer or case of an earlier round is remembered."""
    isa = get_isa("x86_amx")
    n = 20 if quick else 1000  # enough that a round's pool of data buffers is a small share (see fuzz_amx)
    rates, shares, steps = [], [], 0
    for r in range(max(1, rounds // 2)):
        spent = dict.fromkeys(FUZZ_PARTS, 0.0)
        start = time.perf_counter()
        cases = AmxCaseDrawer(seed=1000 + r).draw(n)
        spent["draw"] = time.perf_counter() - start
        for case in cases:
            t0 = time.perf_counter()
            text, init = case.standalone()
            t1 = time.perf_counter()
            program = isa.assemble(text)
            t2 = time.perf_counter()
            machine = new_machine()
            machine.load_init(program, init)
            steps += machine.run(100_000).steps
            t3 = time.perf_counter()
            spent["text_init"] += t1 - t0
            spent["assemble"] += t2 - t1
            spent["run"] += t3 - t2
        total = time.perf_counter() - start
        rates.append(n / total)
        shares.append({part: seconds / total for part, seconds in spent.items()})
    hypothesis_cases = 3 if quick else 30
    start = time.perf_counter()
    draw_cases(amx_cases(), hypothesis_cases, seed=0)
    hypothesis_ms = (time.perf_counter() - start) / hypothesis_cases * 1e3
    middle = sorted(range(len(rates)), key=rates.__getitem__)[len(rates) // 2]  # the median round's split
    return {"target": "amx fuzz (simulator side)", "programs_per_s": statistics.median(rates),
            "shares": shares[middle], "draw_share": shares[middle]["draw"],
            "instructions_per_program": steps / (n * len(rates)),
            "hypothesis_draw_ms": hypothesis_ms, "limit_per_s": FUZZ_TARGET_PER_S}


def scalar_row(quick: bool, rounds: int) -> dict:
    """Nanoseconds per instruction of a register-only loop (SCALAR_LOOP), a run of a few million instructions."""
    isa = get_isa("x86_amx")
    program = isa.assemble(SCALAR_LOOP.format(count=1000 if quick else 500_000))
    times, steps = [], 0
    for _ in range(max(rounds, 2) + 1):  # (the first round is a warm-up)
        machine = new_machine()
        machine.load(program, regs={"rbx": 12345})
        start = time.perf_counter()
        steps = machine.run(10**8).steps
        times.append((time.perf_counter() - start) / steps)
    return {"target": "x86 scalar loop (per instruction)", "ns": statistics.median(times[1:]) * 1e9,
            "instructions": steps, "limit_ns": SCALAR_TARGET_NS}


def measure(quick: bool, rounds: int) -> dict:
    warm_up()
    return {"machine": machine_info(), "engine": ENGINE, "kernels": kernel_rows(quick, rounds),
            "block": block_row(rounds), "fuzz": fuzz_row(quick, rounds), "scalar": scalar_row(quick, rounds)}


def report(results: dict) -> list[str]:
    m = results["machine"]
    lines = [f"x86 AMX targets on {m['cpu']} ({m['cores']} cores, Python {m['python']}, numpy {m['numpy']}), "
             f"engine {results.get('engine', 'python')}:",
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
                 f"assemble {parts['assemble']:.1f} us warm (the same text each time), "
                 f"{parts['assemble_cold']:.1f} us cold (a new text each time), load + run {parts['load_run']:.1f} us)")
    fuzz = results["fuzz"]
    shares = fuzz["shares"]
    met = "met" if fuzz["programs_per_s"] >= fuzz["limit_per_s"] else "NOT met"
    lines.append(f"  {fuzz['target']:<40}{fuzz['programs_per_s']:>7.0f} prog/s{'':>12}"
                 f"{fuzz['limit_per_s'] / fuzz['programs_per_s']:>8.1f}x  >= {fuzz['limit_per_s']:g} /s: {met} "
                 f"({fuzz['instructions_per_program']:.1f} instructions run a program; of the time: drawing "
                 f"{shares['draw']:.0%}, text + init {shares['text_init']:.0%}, assembling {shares['assemble']:.0%}, "
                 f"running {shares['run']:.0%}; hypothesis's amx_cases takes {fuzz['hypothesis_draw_ms']:.1f} ms "
                 f"to draw one)")
    scalar = results.get("scalar")
    if scalar:
        met = "met" if scalar["ns"] <= scalar["limit_ns"] else "NOT met"
        lines.append(f"  {scalar['target']:<40}{scalar['ns']:>9.1f} ns{'':>12}{'':>9}  <= {scalar['limit_ns']:g} ns: "
                     f"{met} ({scalar['instructions']} instructions a run)")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (what the test suite runs)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--engine", choices=("compiled", "python"), default="compiled",
                        help="the engine Machine.run uses (default: compiled)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    global ENGINE
    ENGINE = args.engine
    results = measure(args.quick, 1 if args.quick else args.rounds)
    print("\n".join(report(results)))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
