"""isasim benchmarks: simulator throughput on the seed article's kernels, and the article's silicon tables.

    python benchmarks/run.py [--quick] [--json results.json] [--rounds N]

Simulator part: for each kernel, the time isasim takes to simulate it bit-exactly
(median of rounds), simulated instructions and multiply-adds per second, and the
ratio to the time numpy takes for the same matrix product in float64 (BLAS, one
thread like the simulator; exact for these sizes), measured in the same run.  Also the cost of one full-tile
TDPBF16PS and of one scalar loop instruction.

Silicon part (only on an AMX host): the article's three tables measured with the
same kernels on this CPU through the silicon backend -- ns per block for the
original and the reuse kernel at counts 1, 3, 4, 7, 64, and the microkernel at
K = 512, 1024, 1280, 1536 -- beside the article's Xeon 8458P figures.

arm_sme part: the SME2 GEMM kernels at SVL 128 to 2048 against QEMU and numpy, measured in the
same run (benchmarks/sme_kernels.py, which says how).
x86 AMX targets: the microkernels against numpy, the seed block's build + assemble + run, the AMX fuzzer's
programs per second on the simulator (benchmarks/amx_targets.py, which says how).
ascend_cube part: the QBMM Cube kernel at m = n = k = 1024, batch 4, int8 -> bfloat16 per channel, without
and with bias, against numpy's integer matmul of the same operator (benchmarks/qbmm.py, which says how).
ascend_cube split by block: the QBMM kernel at m = n = k = 2048 single-process, on 1 and 2 workers and a
2-worker Dask LocalCluster, with what limits the scaling (benchmarks/kernel_scale.py; --quick: 512, no cluster).
Performance is measured here, never in unit tests.
"""

from __future__ import annotations

import os

# The simulator runs on one core, so the numpy baseline gets one BLAS thread too (set before numpy loads;
# on a 2-core machine a multi-threaded BLAS also jitters badly whenever the other core is busy).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from isasim.core.isa import get_isa  # noqa: E402
from isasim.core.machine import Machine  # noqa: E402
from isasim.x86_amx import kernels  # noqa: E402
from isasim.x86_amx.oracle import host_cpu, platform_problem  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sme_kernels  # noqa: E402  (the arm_sme kernels' table, also runnable on its own)
import sme_fuzz  # noqa: E402  (the arm_sme fuzzer's simulator side, also runnable on its own)
import qbmm as qbmm_bench  # noqa: E402  (the ascend_cube QBMM kernel's table, also runnable on its own)
import amx_targets  # noqa: E402  (the x86 AMX speed targets' table, also runnable on its own)
import kernel_scale  # noqa: E402  (the block-parallel QBMM's table, also runnable on its own)

# The article's measurements (Xeon Platinum 8458P, GCC 14.1, one core).
ARTICLE_BLOCKS = {1: (104.21, 104.69), 3: (104.13, 38.66), 4: (104.04, 30.28), 7: (103.98, 23.43),
                  64: (117.65, 30.19)}  # count -> (original ns/block, reuse ns/block)
ARTICLE_MICROKERNEL = {512: 9.34, 1024: 16.90, 1280: 20.61, 1536: 30.43}  # K -> us per call (M=1024, N=32)


def median_time(fn, rounds: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


# the x86 kernels are simulated and checked, and their numpy products timed, as amx_targets does it
simulate, numpy_product = amx_targets.simulate, amx_targets.numpy_product


def simulator_rows(quick: bool, rounds: int) -> list[dict]:
    isa = get_isa("x86_amx")
    suite = [kernels.int8_block(), kernels.int8_batch(64 if not quick else 4), kernels.bf16_block(),
             kernels.int8_microkernel(32, 1280) if not quick else kernels.int8_microkernel(1, 64),
             kernels.bf16_microkernel(8, 256) if not quick else kernels.bf16_microkernel(1, 32)]
    rows = []
    for kernel in suite:
        program = isa.assemble(kernel.text)
        steps = simulate(kernel, program)
        product = numpy_product(kernel)
        product()  # warm-up
        # This machine's speed drifts (a shared virtual machine), so each round times the
        # simulator and then numpy back to back, and the ratio is the median of the rounds'
        # ratios: a slow spell slows both sides of one round rather than one side of the table.
        sims, refs = [], []
        for _ in range(rounds):
            start = time.perf_counter()
            simulate(kernel, program)
            sims.append(time.perf_counter() - start)
            repeats, start = 0, time.perf_counter()
            while repeats < 20 or time.perf_counter() - start < 0.005:
                product()
                repeats += 1
            refs.append((time.perf_counter() - start) / repeats)
        sim, ref = statistics.median(sims), statistics.median(refs)
        ratio = statistics.median(s / r for s, r in zip(sims, refs))
        rows.append({"kernel": kernel.name, "instructions": steps, "macs": kernel.macs, "sim_s": sim,
                     "instructions_per_s": steps / sim, "macs_per_s": kernel.macs / sim, "numpy_s": ref,
                     "ratio_to_numpy": ratio})
    return rows


def single_instruction_costs(rounds: int) -> dict:
    """One full-tile TDPBF16PS (16x16 outputs, 16 bf16 pairs) and one scalar loop instruction."""
    rng = np.random.default_rng(1)
    data = (rng.standard_normal(1024).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes()
    cfg = kernels.tile_config({0: (16, 64), 1: (16, 64), 2: (16, 64)})
    isa = get_isa("x86_amx")
    repeat = 200
    tdp = isa.assemble("ldtilecfg [rcx]\ntileloadd tmm1, [rdi+rsi*1]\ntileloadd tmm2, [rdi+rsi*1]\n"
                       + "tdpbf16ps tmm0, tmm1, tmm2\n" * repeat)
    # Alone: each TDPBF16PS's C is read (stored) before the next, so none waits to be batched.
    alone = isa.assemble("ldtilecfg [rcx]\ntileloadd tmm1, [rdi+rsi*1]\ntileloadd tmm2, [rdi+rsi*1]\n"
                         + "tdpbf16ps tmm0, tmm1, tmm2\ntilestored [rdx+rsi*1], tmm0\n" * repeat)
    store = isa.assemble("ldtilecfg [rcx]\ntileloadd tmm1, [rdi+rsi*1]\ntileloadd tmm2, [rdi+rsi*1]\n"
                         + "tilestored [rdx+rsi*1], tmm0\n" * repeat)
    scalar = isa.assemble("mov r10, 2000\ntop:\nadd rdi, 64\nadd rdx, 128\ndec r10\njnz top\n")
    init = dict(regs={"rcx": 0x1000, "rdi": 0x2000, "rsi": 64, "rdx": 0x4000},
                memory=[(0x1000, cfg, True), (0x2000, data, True), (0x4000, bytes(1024), True)])

    def run(program):
        m = Machine("x86_amx")
        m.load(program, **init)
        m.run(10**6)

    def run_scalar():
        m = Machine("x86_amx")
        m.load(scalar)
        m.run(10**6)

    return {"tdpbf16ps_full_tile_ms": median_time(lambda: run(tdp), rounds) / repeat * 1e3,
            "tdpbf16ps_alone_ms": (median_time(lambda: run(alone), rounds)
                                   - median_time(lambda: run(store), rounds)) / repeat * 1e3,
            "scalar_instruction_us": median_time(run_scalar, rounds) / (1 + 4 * 2000) * 1e6}


def repeated(kernel: kernels.Kernel, repeats: int) -> str:
    """The kernel inside a loop that runs it ``repeats`` times, re-setting its pointer registers each time
    (the article's warm, repeated calls; r15 counts the calls)."""
    body = [line for line in kernel.lines if line.strip() != "ret"]
    setup = [f"    mov {name}, {value:#x}" for name, value in kernel.init.regs.items()]
    return "\n".join([f"    mov r15, {repeats}", "call_again:"] + setup + body[1:]
                     + ["    dec r15", "    jnz call_again", "    ret"]) + "\n"


def silicon_seconds_per_call(kernel: kernels.Kernel, rounds: int) -> float:
    """Median over rounds of (time of 2R calls - time of R calls) / R: the fixed cost of starting and
    stopping the child cancels out; R is chosen so a round takes some milliseconds."""
    from isasim.x86_amx.oracle import time_on_silicon

    isa = get_isa("x86_amx")
    calls = max(200, 2_000_000 // max(kernel.macs // 1000, 1))
    few, many = isa.assemble(repeated(kernel, calls)), isa.assemble(repeated(kernel, 2 * calls))
    samples = [(time_on_silicon(many, kernel.init) - time_on_silicon(few, kernel.init)) / calls
               for _ in range(max(rounds, 3))]
    return statistics.median(samples)


def silicon_tables(rounds: int) -> dict:
    reason = platform_problem() or host_cpu().why_no_amx()
    if reason:
        return {"skipped": reason}
    blocks = {}
    for count in ARTICLE_BLOCKS:
        blocks[count] = [silicon_seconds_per_call(build(count), rounds) / count * 1e9
                         for build in (kernels.int8_per_block, kernels.int8_batch)]
    micro = {K: silicon_seconds_per_call(kernels.int8_microkernel(32, K), rounds) * 1e6 for K in ARTICLE_MICROKERNEL}
    return {"blocks_ns": blocks, "microkernel_us": micro}


def silicon_report(silicon: dict) -> list[str]:
    """The article's two silicon tables with this CPU's measurements beside them, and the ratios
    the article draws from them: the reuse kernel's speed-up, and how the microkernel's time
    grows with K (each K's time over the K=512 time, and ns per K step)."""
    if "skipped" in silicon:
        return [f"silicon tables: not measured: {silicon['skipped']}"]
    lines = ["silicon: ns per 16x16 block      this CPU: original / reuse = speed-up"
             "      article 8458P: original / reuse = speed-up"]
    for count, (orig, reuse) in silicon["blocks_ns"].items():
        a_orig, a_reuse = ARTICLE_BLOCKS[int(count)]
        lines.append(f"  count {int(count):<4}{orig:>16.2f} / {reuse:<8.2f} = {orig / reuse:4.2f}x"
                     f"{a_orig:>22.2f} / {a_reuse:<8.2f} = {a_orig / a_reuse:4.2f}x")
    steps = lambda K: 32 * (K // 64)  # noqa: E731  (32x32 output blocks) x (K steps of 64 bytes)
    lines.append("silicon: microkernel M=1024 N=32   this CPU: us/call, vs K=512, ns per 32x32x64 step"
                 "      article: the same")
    micro = {int(K): us for K, us in silicon["microkernel_us"].items()}
    first = min(micro)
    for K, us in micro.items():
        a_us = ARTICLE_MICROKERNEL[K]
        lines.append(f"  K={K:<6}{us:>19.2f} {us / micro[first]:>8.2f}x {us * 1e3 / steps(K):>9.2f}"
                     f"{a_us:>22.2f} {a_us / ARTICLE_MICROKERNEL[first]:>8.2f}x {a_us * 1e3 / steps(K):>9.2f}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes (what the test suite runs)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else args.rounds
    cpu = host_cpu()
    machine = {"cpu": f"family {cpu.family} model {cpu.model} ({cpu.name})", "python": platform.python_version(),
               "numpy": np.__version__, "cores": os.cpu_count(), "blas_threads": os.environ["OPENBLAS_NUM_THREADS"]}
    sme_rows, qemu_reason = sme_kernels.kernel_rows(args.quick, 1 if args.quick else max(1, rounds // 2))
    results = {"machine": machine, "simulator": simulator_rows(args.quick, rounds),
               "single": single_instruction_costs(rounds), "silicon": silicon_tables(rounds),
               "amx_targets": amx_targets.measure(args.quick, rounds),
               "arm_sme": {"rows": sme_rows, "qemu_not_timed": qemu_reason},
               "arm_sme_fuzz": sme_fuzz.measure(20 if args.quick else 2_000, 512),
               "ascend_qbmm": {"machine": qbmm_bench.cpu_model(),
                               "rows": qbmm_bench.kernel_rows(args.quick, 1 if args.quick else max(1, rounds // 2))}}
    # the quick run (what the test suite runs) leaves out the cluster and its worker processes
    results["kernel_scale"] = kernel_scale.measure(kernel_scale.QUICK_SIZE if args.quick else kernel_scale.SIZE,
                                                   1 if args.quick else max(1, rounds // 2), not args.quick)
    print(f"machine: {machine['cpu']}, {machine['cores']} cores, Python {machine['python']}, numpy {machine['numpy']}")
    print()
    print(f"{'kernel':<28}{'instr':>8}{'sim ms':>10}{'Minstr/s':>10}{'MMAC/s':>10}{'numpy ms':>10}{'sim/numpy':>11}")
    for row in results["simulator"]:
        print(f"{row['kernel']:<28}{row['instructions']:>8}{row['sim_s'] * 1e3:>10.2f}"
              f"{row['instructions_per_s'] / 1e6:>10.3f}{row['macs_per_s'] / 1e6:>10.1f}"
              f"{row['numpy_s'] * 1e3:>10.3f}{row['ratio_to_numpy']:>10.0f}x")
    for row in results["simulator"]:
        if row["kernel"].startswith("int8_microkernel_32x1280"):
            verdict = "met" if row["ratio_to_numpy"] <= amx_targets.KERNEL_TARGETS["int8_microkernel"] else "NOT met"
            print(f"the microkernel at M=1024, N=32, K=1280: {row['ratio_to_numpy']:.1f}x numpy "
                  f"(target <= {amx_targets.KERNEL_TARGETS['int8_microkernel']:g}x: {verdict})")
    single = results["single"]
    print()
    print(f"one full-tile TDPBF16PS: {single['tdpbf16ps_full_tile_ms']:.3f} ms in a run of them, "
          f"{single['tdpbf16ps_alone_ms']:.3f} ms alone (target <= 0.5 ms)")
    print(f"one scalar loop instruction: {single['scalar_instruction_us']:.2f} us (target <= 5 us)")
    print()
    print("\n".join(silicon_report(results["silicon"])))
    print()
    print("\n".join(amx_targets.report(results["amx_targets"])))
    print()
    print("\n".join(sme_kernels.report(sme_rows, qemu_reason)))
    print()
    print("\n".join(sme_fuzz.report(results["arm_sme_fuzz"])))
    print()
    print("\n".join(qbmm_bench.report(results["ascend_qbmm"]["rows"])))
    print()
    print("\n".join(kernel_scale.report(results["kernel_scale"])))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str) + "\n")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
