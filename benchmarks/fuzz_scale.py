"""Fuzz campaign throughput on 1 and 2 local worker processes and on a two-worker Dask LocalCluster,
each against the single-process run measured in the same run.

    python benchmarks/fuzz_scale.py [--quick] [--cases N] [--json results.json]

One campaign, the same for every row (the same seed draws the same shards wherever they run; the
benchmark checks that each row found the same programs and counted the same instructions): x86_amx
against the simulator itself (``--against sim``: no divergences, and no silicon, so that the figures
measure the campaign machinery and the simulator, not a host's AMX), both subsets (scalar programs
drawn by hypothesis, AMX programs by numpy) in their default shards.  Rows:

* this process (``--workers 1``): the baseline;
* 2 local processes (``--workers 2``): forked workers, each running whole shards;
* a 2-worker Dask LocalCluster on loopback (``--cluster``; ``parallel.local_cluster``: its workers without
  Dask's MALLOC_TRIM_THRESHOLD_), its start-up timed apart from the campaign (a real cluster is started
  once and serves many campaigns).

Each row prints programs per second and its ratio to the baseline.  What limits the scaling is printed
too: this machine's own ceiling (two processes of pure Python against one), the campaign's shards (a campaign of fewer shards than workers leaves workers idle), the largest
shard's share of the run (the last shard to finish bounds the run), and the time the client spends
outside the workers (merging results and writing the campaign's files).  ``--quick`` runs a tiny
campaign (what the test suite runs): its figures mean nothing.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from isasim.core.parallel import Pool, default_workers, local_cluster  # noqa: E402
from isasim.x86_amx import fuzz  # noqa: E402


def campaign(cases: int, *, workers=None, pool=None) -> tuple[object, float]:
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        summary = fuzz.run_fuzz(cases, 11, against="sim", out_dir=out, workers=workers, pool=pool, journal=True)
        return summary, time.perf_counter() - started


def fingerprint(summary) -> tuple:
    return dict(summary.cases), dict(summary.instructions), dict(summary.elements), summary.runs


def _spin(n: int) -> float:
    started = time.perf_counter()
    total = 0
    for i in range(n):
        total += i * i
    return time.perf_counter() - started


def machine_ceiling(n: int) -> float:
    """How much faster two processes do two pieces of pure Python work than one does them in turn, here: the
    most any pool of 2 can scale on this machine (a virtual machine's cores are often less than 2 whole cores)."""
    import multiprocessing

    one = _spin(n) + _spin(n)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        started = time.perf_counter()
        pool.map(_spin, [n, n])
        two = time.perf_counter() - started
    return one / two


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a tiny campaign (the figures mean nothing)")
    parser.add_argument("--cases", type=int, default=None, help="programs in the campaign (default 4000)")
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args(argv)
    cases = args.cases or (120 if args.quick else 4000)
    rows = []
    baseline, seconds = campaign(cases, workers=1)
    rows.append({"where": "this process", "seconds": seconds, "shards": baseline.shards})
    two, seconds = campaign(cases, workers=2)
    if fingerprint(two) != fingerprint(baseline):
        print("2 local processes ran another campaign than this process: a bug", file=sys.stderr)
        return 1
    rows.append({"where": "2 local processes", "seconds": seconds, "shards": two.shards})
    start_up = None
    try:
        import distributed  # noqa: F401
    except ImportError:
        distributed = None
    if distributed is not None:
        started = time.perf_counter()
        with local_cluster(2) as cluster, Pool.open(cluster=cluster.scheduler_address) as pool:
            start_up = time.perf_counter() - started
            on_cluster, seconds = campaign(cases, pool=pool)
        if fingerprint(on_cluster) != fingerprint(baseline):
            print("the LocalCluster ran another campaign than this process: a bug", file=sys.stderr)
            return 1
        rows.append({"where": "2-worker Dask LocalCluster", "seconds": seconds, "shards": on_cluster.shards})
    ceiling = machine_ceiling(2_000_000 if args.quick else 20_000_000)
    base = rows[0]["seconds"]
    print(f"fuzz campaign scaling: x86_amx against sim, {cases} programs ({', '.join(f'{s} {n}' for s, n in baseline.cases.items())}), "
          f"{baseline.shards} shards; {platform.processor() or platform.machine()}, {default_workers()} cores")
    print(f"{'where':<28} {'seconds':>8} {'programs/s':>11} {'speed-up':>9}")
    for row in rows:
        row["programs_per_second"] = cases / row["seconds"]
        row["speedup"] = base / row["seconds"]
        print(f"{row['where']:<28} {row['seconds']:>8.2f} {row['programs_per_second']:>11.0f} {row['speedup']:>8.2f}x")
    if start_up is not None:
        print(f"LocalCluster start-up (2 workers), not in the row: {start_up:.2f} s")
    print(f"this machine's own ceiling: two processes of pure Python run {ceiling:.2f}x as fast as one")
    print("limits: the run ends with its last shard, so a campaign of few shards (here "
          f"{baseline.shards}) cannot keep every worker busy to the end; the scalar shards draw with hypothesis "
          "(most of their time) and the AMX ones with numpy, so shards differ in length")
    if args.json:
        Path(args.json).write_text(json.dumps({"cases": cases, "rows": rows, "cluster_start_up_s": start_up,
                                               "two_process_ceiling": ceiling},
                                              indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
