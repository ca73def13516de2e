"""The block-parallel QBMM Cube kernel (isasim.core.kernel_parallel) against the single-process run, measured in
the same run.

    python benchmarks/kernel_scale.py [--quick] [--rounds N] [--no-cluster] [--json results.json]

(``benchmarks/run.py`` prints this table too, at the quick size and without the cluster.)  The case is
benchmarks/qbmm.py's: int8 A and B, C bfloat16 dequantised per channel (one uint64 word per column), no bias,
batch 1, at m = n = k = 2048 (``--quick``: 256), the host's default tiling.  Each round runs, back to back:

* single: ``qbmm_run.run(kernel)``, the whole program on one machine in this process (what ``isasim qbmm``
  does without --workers);
* --workers 1: the same blocks as one part through the parallel path in this process (its overhead alone);
* --workers 2: two local processes, one group of blocks each (a fresh pool each round, so its fork is in the
  time, as for a command-line run);
* cluster: a two-worker Dask LocalCluster on this machine (started once, outside the timings: its start-up is
  reported on its own), the inputs scattered to each worker once per run;
* cluster, no trim: the same without the MALLOC_TRIM_THRESHOLD_=65536 that Dask's nanny puts in every
  worker's environment (distributed.nanny.pre-spawn-environ).  Setting that variable at all fixes glibc's
  mmap threshold at 128 KiB, so each of the simulator's large numpy temporaries is fresh mmapped memory,
  page-faulted in and given back: the same part ran 2 to 3x slower under it (1.3 s -> 3.8 s at 2048).

Each parallel run follows a single-process run of its own round (the clusters, one at a time, after the
local pools).  Every C is compared with numpy's product of the same operator (benchmarks/qbmm.py's float64-BLAS numpy, exact
for this case), not with another isasim run.  The ratios are the median of the rounds' (run / single) ratios,
so a slow spell of a shared machine slows both sides of one round.  What limits the scaling is measured too:
the bytes a task ships and the time to pickle them, a fresh pool's start-up, and the slowest part run alone
(the best two workers can do).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # before numpy loads: one core each
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import pickle  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parent))

import qbmm as qbmm_bench  # noqa: E402  (the case and the numpy operator)

from isasim.ascend_cube.kernels import qbmm as qbmm_kernel  # noqa: E402
from isasim.ascend_cube.kernels.qbmm_run import c_span, parts, run, run_parallel  # noqa: E402
from isasim.core.kernel_parallel import block_ranges, check_coverage, run_part  # noqa: E402
from isasim.core.parallel import Pool, local_cluster  # noqa: E402

SIZE, QUICK_SIZE = 2048, 512  # 512: four blocks of the default 256 x 256 tiling, so that two parts exist


def _noop() -> int:
    return os.getpid()


def _timed(fn):
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def limits(kernel) -> dict:
    """What bounds the two-worker run, measured alone: a task's bytes and pickling time, a fresh LocalPool's
    start-up, each part of the two-way split run alone in this process, and checking that the parts tile C."""
    case = kernel.case
    config = {"chip": case.chip, "options": dict(case.options)}
    init, split, output = kernel.init(), parts(kernel, 2), c_span(kernel)
    ship_s, data = _timed(lambda: pickle.dumps(("ascend_cube", config, init, split[0]), protocol=pickle.HIGHEST_PROTOCOL))
    unpickle_s, _ = _timed(lambda: pickle.loads(data))
    startup_s, _ = _timed(lambda: _fresh_pool_answers(2))
    part_s = [_timed(lambda part=part: run_part("ascend_cube", config, init, part))[0] for part in split]
    coverage_s, _ = _timed(lambda: check_coverage(split, output))
    return {"task_mb": len(data) / 2**20, "pickle_s": ship_s, "unpickle_s": unpickle_s, "pool_startup_s": startup_s,
            "part_s": part_s, "blocks_per_part": [len(group) for group in block_ranges(len(kernel.blocks), 2)],
            "coverage_s": coverage_s}


def _fresh_pool_answers(workers: int) -> None:
    with Pool.open(workers=workers) as pool:
        list(pool.run(_noop, [()] * workers))


def measure(size: int, rounds: int, use_cluster: bool) -> dict:
    load_before = os.getloadavg()[0]
    case = qbmm_bench.make_case(size, 1, False)
    build_s, kernel = _timed(lambda: qbmm_kernel.build(case))
    expect = qbmm_bench.numpy_operator(case, blas=True)().reshape(case.shape_of("c"))
    # each row's ratio is to the single-process run of the same round, so every row keeps its own singles
    singles: dict[str, list[float]] = {}
    runs: dict[str, list[float]] = {}
    mismatch = ""

    def round_of(label: str, fn) -> None:
        nonlocal mismatch
        seconds, (c, _machine) = _timed(lambda: run(kernel))
        singles.setdefault(label, []).append(seconds)
        mismatch = mismatch or _differs("single", c, expect)
        seconds, c = _timed(fn)
        runs.setdefault(label, []).append(seconds)
        mismatch = mismatch or _differs(label, c, expect)

    run(kernel)  # warm-up: imports and the assembler's first use, outside the timings
    for _ in range(rounds):
        runs.setdefault("single", []).append(_timed(lambda: run(kernel))[0])
        singles.setdefault("single", []).append(runs["single"][-1])
        for label, workers in (("workers 1", 1), ("workers 2", 2)):
            round_of(label, lambda workers=workers: _pool_run(kernel, Pool.open(workers=workers)))
    bounds = limits(kernel)
    cluster_start_s, cluster_note = None, "not run (--no-cluster)"
    # one cluster at a time: the idle one's processes and heartbeats would share the two cores otherwise
    if importlib.util.find_spec("distributed") is None:
        use_cluster, cluster_note = False, "dask.distributed is not installed (pip install 'isasim[cluster]')"
    for label, trim in (("cluster 2", True), ("no trim", False)) if use_cluster else ():
        started = time.perf_counter()
        with local_cluster(2, trim=trim) as cluster:
            cluster_start_s, cluster_note = time.perf_counter() - started, ""
            with Pool.open(cluster=cluster.scheduler_address) as pool:
                for _ in range(rounds):
                    round_of(label, lambda pool=pool: run_parallel(kernel, pool))
                if trim:
                    bounds["scatter_s"] = _timed(lambda: pool.share(kernel.init()))[0]
    rows = [{"run": label, "seconds": statistics.median(times),
             "over_single": statistics.median(t / s for t, s in zip(times, singles[label]))}
            for label, times in runs.items()]
    return {"m": size, "n": size, "k": size, "batch": 1, "blocks": len(kernel.blocks),
            "instructions": len(kernel.program_lines), "build_s": build_s, "rounds": rounds, "rows": rows,
            "limits": bounds, "cluster_start_s": cluster_start_s, "cluster_note": cluster_note,
            "bit_exact": not mismatch, "mismatch": mismatch,
            # two workers can only scale on two idle cores: the load says how idle they were
            "load_average": (load_before, os.getloadavg()[0]), "cores": os.cpu_count()}


def _pool_run(kernel, pool) -> np.ndarray:
    with pool:
        return run_parallel(kernel, pool)


def _differs(label: str, got: np.ndarray, expect: np.ndarray) -> str:
    text = qbmm_bench.differences(got, expect, label)
    return f"{label}: {text}" if text else ""


def report(result: dict, machine: str | None = None) -> list[str]:
    lines = [f"ascend_cube qbmm split by block: m = n = k = {result['m']}, batch 1, int8 -> bfloat16 per channel, "
             f"{result['blocks']} blocks, {result['instructions']:,} instructions"
             + (f" ({machine})" if machine else ""),
             f"{'run':<12}{'seconds':>9}{'/ single':>10}{'speed-up':>10}"]
    for row in result["rows"]:
        lines.append(f"{row['run']:<12}{row['seconds']:>9.2f}{row['over_single']:>9.2f}x{1 / row['over_single']:>9.2f}x")
    bounds = result["limits"]
    parts_s = bounds["part_s"]
    lines.append(f"limits: a task ships {bounds['task_mb']:.1f} MiB (pickled in {bounds['pickle_s'] * 1e3:.0f} ms, "
                 f"unpickled in {bounds['unpickle_s'] * 1e3:.0f} ms); a fresh 2-process pool answers in "
                 f"{bounds['pool_startup_s'] * 1e3:.0f} ms; the {len(parts_s)} part(s) ({' + '.join(map(str, bounds['blocks_per_part']))}"
                 f" blocks) run alone in {' and '.join(f'{s:.2f}' for s in parts_s)} s, so two workers can do no "
                 f"better than {max(parts_s):.2f} s; checking that the parts tile C takes "
                 f"{bounds['coverage_s'] * 1e3:.0f} ms")
    if result["cluster_start_s"] is not None:
        lines.append(f"cluster: a LocalCluster started in {result['cluster_start_s']:.1f} s (not in the timings); "
                     f"scattering the inputs to its workers takes {bounds['scatter_s'] * 1e3:.0f} ms; 'no trim': "
                     "its workers without Dask's MALLOC_TRIM_THRESHOLD_=65536 (see the module)")
    else:
        lines.append(f"cluster: {result['cluster_note']}")
    before, after = result["load_average"]
    lines.append(f"the 1-minute load average was {before:.1f} before and {after:.1f} after, on {result['cores']} cores: "
                 "other processes' share of the cores is time the workers did not get")
    lines.append(f"build {result['build_s']:.2f} s (not in the timings); median of {result['rounds']} round(s); "
                 "C " + ("bit-exact against numpy in every run" if result["bit_exact"] else
                         "NOT bit-exact: " + result["mismatch"]))
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"m = n = k = {QUICK_SIZE}")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-cluster", action="store_true", help="leave out the Dask LocalCluster")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args(argv)
    result = measure(QUICK_SIZE if args.quick else SIZE, 1 if args.quick else args.rounds, not args.no_cluster)
    machine = f"{qbmm_bench.cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print("\n".join(report(result, machine)))
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": machine, **result}, indent=1) + "\n")
    return 0 if result["bit_exact"] else 1


if __name__ == "__main__":
    sys.exit(main())
