"""A fuzz campaign: its cases cut into shards, the shards run wherever a pool runs them (this process,
local worker processes, a Dask cluster), the results merged in shard order, and, in a campaign
directory, every finished shard kept so that a killed campaign resumes where it stopped.

Shards
    Each subset's cases are cut into shards of a fixed size (the caller's ``shard_size``, else two
    batches for a generator that batches and ONE_BY_ONE_SHARD cases for one that does not).  Shard n of the i-th generator draws its cases
    from its own seed (:func:`shard_seed`): seed + i for shard 0, which are the cases a campaign that
    fits in one shard always drew, and a hash of (seed, i, n) after it, so that the shards of
    neighbouring seeds do not overlap.  The plan depends on the seed, the counts and the shard sizes
    only, never on the workers: the union of the cases, and so the campaign, is the same whatever
    number of workers ran it and wherever they were.  The subsets' shards are interleaved by weight
    (the next shard is the one of the subset least far through its share), so that a campaign cut
    short has run every subset.

Merging
    Results come back in any order; they are merged in plan order (a result waits for those before
    it).  The campaign stops after the shard whose merge brings the divergent cases to
    ``max_divergences`` (a shard also stops itself at that many): later shards that happened to
    finish are kept in the campaign directory but not counted, so that where it stops does not
    depend on which worker was fastest.  Two divergences that shrank to the same case (in one shard
    or in two) share one trace.  A trace is written when its shard is merged, by the client, from
    the JSON the worker built: the workers need no shared disk.

A campaign directory (``journal``: ``--out DIR`` given)
    ``DIR/campaign.json`` (what the campaign is, and whether it finished) and ``DIR/shards/*.json``
    (one per finished shard, written whole or not at all).  Run again with the same options, an
    unfinished campaign takes its finished shards from there and runs only the others; a different
    campaign in a directory holding an unfinished one is refused (``fresh`` starts over), and a
    finished one is run afresh.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Callable, Iterator, Sequence

from .errors import ConfigError, IsasimError
from .fuzz.drawing import draw_ways
from .fuzz.results import FoundDivergence, FuzzSummary
from .fuzz.runner import run_shard
from .fuzz.shard import Shard, ShardSettings
from .fuzz.subsets import fuzzable_subsets
from .fuzz.traces import write_fresh
from .generators import CaseGenerator
from .parallel import Pool, WorkerInfo, default_workers

CAMPAIGN_FORMAT = "isasim-fuzz-campaign/1"
ONE_BY_ONE_SHARD = 250  # cases a shard of a generator that runs them one by one holds
BATCHES_PER_SHARD = 2


# ---------------------------------------------------------------------------
# The plan
# ---------------------------------------------------------------------------


def shard_seed(seed: int, stream: int, number: int) -> int:
    """The seed shard ``number`` of the ``stream``-th generator draws from (see the module docstring)."""
    if number == 0:
        return seed + stream
    digest = hashlib.blake2b(f"isasim fuzz shard {seed} {stream} {number}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1  # 63 bits: any drawer takes it


def shard_sizes(generators: Sequence[CaseGenerator], mode: str, batch_size: int | None = None,
                shard_size: int | None = None) -> dict[str, int]:
    """Cases per shard, by subset."""
    if shard_size is not None and shard_size < 1:
        raise ConfigError(f"a shard holds at least 1 case, not {shard_size}")
    sizes = {}
    for g in generators:
        if shard_size is not None:
            sizes[g.subset] = shard_size
        elif g.batches:
            sizes[g.subset] = BATCHES_PER_SHARD * (batch_size or g.batch_size(mode))
        else:
            sizes[g.subset] = ONE_BY_ONE_SHARD
    return sizes


def shard_stream(isa_name: str, generators: Sequence[CaseGenerator], subsets: list[str], cases: int | None,
                 seed: int, against: str, mode: str, config: dict, draws: dict[str, str] | None = None,
                 sizes: dict[str, int] | None = None) -> Iterator[Shard]:
    """The campaign's shards in plan order; endless when ``cases`` is None (run until a divergence or
    out of time).  ``cases`` are shared out over ``subsets`` by weight, the first subset taking what
    rounding leaves; subsets left with no cases get no shard."""
    running = [(position, g) for position, g in enumerate(generators) if g.subset in subsets]
    sizes = sizes or shard_sizes(generators, mode)
    draws = draws or {}
    share: dict[str, int | None] = {g.subset: None for _p, g in running}
    if cases is not None:
        total = sum(g.weight for _p, g in running)
        share = {g.subset: cases * g.weight // total for _p, g in running}
        share[subsets[0]] = cases - sum(n for subset, n in share.items() if subset != subsets[0])
    first = {g.subset: 0 for _p, g in running}
    number = {g.subset: 0 for _p, g in running}
    while True:
        open_ = [(Fraction(first[g.subset], g.weight), position, g) for position, g in running
                 if share[g.subset] is None or first[g.subset] < share[g.subset]]
        if not open_:
            return
        _key, position, g = min(open_, key=lambda item: item[:2])
        left = share[g.subset]
        count = sizes[g.subset] if left is None else min(sizes[g.subset], left - first[g.subset])
        yield Shard(isa_name, g.subset, shard_seed(seed, position, number[g.subset]), count, against, mode, config,
                    draws.get(g.subset, "hypothesis"), number[g.subset], first[g.subset], seed)
        first[g.subset] += count
        number[g.subset] += 1


def plan_shards(isa_name: str, generators: Sequence[CaseGenerator], subsets: list[str], cases: int, seed: int,
                against: str, mode: str, config: dict, draws: dict[str, str] | None = None, *,
                shard_size: int | None = None, batch_size: int | None = None) -> list[Shard]:
    """Every shard of a campaign of ``cases`` cases, in plan order."""
    sizes = shard_sizes(generators, mode, batch_size, shard_size)
    return list(shard_stream(isa_name, generators, subsets, cases, seed, against, mode, config, draws, sizes))


# ---------------------------------------------------------------------------
# A shard's result as JSON (the campaign directory), and back
# ---------------------------------------------------------------------------


def result_json(result: dict) -> dict:
    return {"key": result["key"], "subset": result["subset"], "cases": result["cases"],
            "instructions": dict(result["instructions"]), "elements": dict(result["elements"]),
            "runs": result["runs"], "divergent_cases": result["divergent_cases"],
            "divergences": [d.as_json() for d in result["divergences"]], "worker": result["worker"].as_json(),
            "seconds": result["seconds"]}


def result_from_json(data: dict) -> dict:
    return {"key": data["key"], "subset": data["subset"], "cases": int(data["cases"]),
            "instructions": Counter(data["instructions"]), "elements": Counter(data["elements"]),
            "runs": int(data["runs"]), "divergent_cases": int(data["divergent_cases"]),
            "divergences": [FoundDivergence.from_json(d) for d in data["divergences"]],
            "worker": WorkerInfo.from_json(data["worker"]), "seconds": float(data["seconds"]), "resumed": True}


def _write_whole(path: Path, text: str) -> None:
    """``text`` into ``path`` all at once: a campaign killed mid-write leaves the old file or the new one."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


class CampaignDirectory:
    """``DIR/campaign.json`` and ``DIR/shards/``: what a campaign has finished, kept as it finishes."""

    def __init__(self, root: Path, identity: dict, *, fresh: bool = False):
        self.root, self.identity = root, identity
        self.file = root / "campaign.json"
        self.shards = root / "shards"
        self.finished: dict[str, dict] = {}  # shard key -> its result, from an unfinished run of this campaign
        previous = self._previous()
        if previous is not None and not previous.get("finished") and not fresh:
            if previous.get("identity") != identity:
                raise ConfigError(f"{root} holds an unfinished campaign ({describe_identity(previous.get('identity'))})"
                                  f", not this one ({describe_identity(identity)}): run that one again to resume it, "
                                  "give another --out, or --fresh to start this one there")
            self.finished = self._load_shards()
        else:
            self._clear_shards()
        root.mkdir(parents=True, exist_ok=True)
        self.shards.mkdir(exist_ok=True)
        self._write_state(finished=False)

    def _previous(self) -> dict | None:
        if not self.file.exists():
            return None
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as error:
            raise IsasimError(f"not a campaign file isasim can read ({error.__class__.__name__}): move it away or "
                              "give another --out", source=str(self.file)) from None
        if not isinstance(data, dict) or data.get("format") != CAMPAIGN_FORMAT:
            raise IsasimError(f"not an isasim campaign file (format {CAMPAIGN_FORMAT}): move it away or give "
                              "another --out", source=str(self.file))
        return data

    def _shard_files(self) -> list[Path]:
        return sorted(self.shards.glob("*.json")) if self.shards.is_dir() else []

    def _load_shards(self) -> dict[str, dict]:
        found = {}
        for path in self._shard_files():
            try:
                result = result_from_json(json.loads(path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
                continue  # a shard file that cannot be read is a shard to run again
            found[result["key"]] = result
        return found

    def _clear_shards(self) -> None:
        for path in self._shard_files():  # only the files this class writes: DIR/shards/*.json
            path.unlink()

    def _write_state(self, *, finished: bool) -> None:
        _write_whole(self.file, json.dumps({"format": CAMPAIGN_FORMAT, "identity": self.identity,
                                            "finished": finished}, indent=1) + "\n")

    def record(self, result: dict) -> None:
        _write_whole(self.shards / f"{result['key']}.json", json.dumps(result_json(result)) + "\n")

    def finish(self) -> None:
        self._write_state(finished=True)


def describe_identity(identity) -> str:
    if not isinstance(identity, dict):
        return "unreadable"
    cases = identity.get("cases")
    return (f"{identity.get('isa')} against {identity.get('against')}, seed {identity.get('seed')}, "
            f"{'until a divergence' if cases is None else f'{cases} cases'}, {identity.get('mode')}")


# ---------------------------------------------------------------------------
# Merging results in plan order
# ---------------------------------------------------------------------------


class _Merger:
    def __init__(self, summary: FuzzSummary, out: Path, directory: CampaignDirectory | None,
                 max_divergences: int, progress):
        self.summary, self.out, self.directory = summary, out, directory
        self.max_divergences, self.progress = max_divergences, progress
        self.waiting: dict[int, dict] = {}
        self.next = 0  # the plan position merged next
        self.stopped = False
        self.resumed = Counter()  # shards and cases taken from the campaign directory

    def add(self, position: int, result: dict) -> None:
        if self.directory is not None and not result.get("resumed"):
            self.directory.record(result)
        self.waiting[position] = result
        while not self.stopped and self.next in self.waiting:
            self._merge(self.waiting.pop(self.next))
            self.next += 1

    def _merge(self, result: dict) -> None:
        summary = self.summary
        summary.shards += 1
        summary.cases[result["subset"]] += result["cases"]
        summary.instructions.update(result["instructions"])
        summary.elements.update(result["elements"])
        summary.runs += result["runs"]
        summary.divergent_cases += result["divergent_cases"]
        summary.hosts[result["worker"].describe()] += 1
        if result.get("resumed"):
            self.resumed.update(shards=1, cases=result["cases"])
        changed = False
        for found in result["divergences"]:
            earlier = next((d for d in summary.divergences if d.same_case_key == found.same_case_key), None)
            if earlier is not None:
                earlier.notes.append(f"case {found.case} shrinks to the same case")
                continue
            if found.trace is None or not Path(found.trace).is_file():
                found.trace = str(write_fresh(found.trace_data, self.out, found.stem))
                changed = True
            summary.divergences.append(found)
        if changed and self.directory is not None:
            self.directory.record(result)  # with the traces' names, so that a resumed campaign does not write them again
        if summary.divergent_cases >= self.max_divergences:
            self.stopped = True
        if self.progress:
            self.progress(summary)


# ---------------------------------------------------------------------------
# A campaign
# ---------------------------------------------------------------------------


def run_campaign(isa_name: str, generators: Sequence[CaseGenerator], cases: int | None, seed: int, against: str,
                 isa_subset: str | None = None, lockstep: bool = False, out_dir: str | Path = ".", *,
                 config: dict | None = None, batch_size: int | None = None, workers: int | None = None,
                 cluster: str | None = None, pool: Pool | None = None, shrink_seconds: float = 60.0,
                 shrink_candidates: int | None = None, max_divergences: int = 3, progress=None,
                 draw: str | None = None, shard_size: int | None = None, duration: float | None = None,
                 journal: bool = False, fresh: bool = False, runner: Callable | None = None) -> FuzzSummary:
    """Run ``cases`` random programs of ``isa_name`` on the simulator and on ``against`` and compare them.

    isa_subset: one generator's subset, or None (every subset ``against`` can run here, the cases
    shared out by the generators' weights).  lockstep: compare after every instruction instead of at
    the end.  config: the ISA configuration both backends run.  Raises FuzzUnavailable (a
    ConfigError) when the subset asked for cannot run on ``against`` here.  cases None: no end but a
    divergence, ``duration`` or an interrupt.

    The same seed draws the same cases, whatever runs them: ``pool``, else ``cluster`` (a Dask
    scheduler's address or scheduler file), else ``workers`` local processes (default: one per core,
    no more than there are shards; 1: this process).  Each divergent case is shrunk where it was
    found and gets a reproducing trace in ``out_dir`` (cases that shrink to the same case share one);
    the campaign stops after the shard that brings the divergent cases to ``max_divergences``, or when
    ``duration`` seconds have passed (no shard starts after that; those running finish).  Shrinking
    one diffs at most ``shrink_candidates`` smaller cases (then the result depends on the seed only)
    and takes at most ``shrink_seconds``.  ``progress(summary)`` is called after each shard is merged.

    draw: how the cases are drawn (see :func:`.fuzz.drawing.draw_ways`).  journal: keep the campaign in
    ``out_dir`` (campaign.json, shards/), and resume an unfinished one there; fresh: start over even
    so.  runner: what runs a shard (default :func:`.fuzz.runner.run_shard`; a module-level function with its
    signature, for a test that must reach into the workers).
    """
    if cases is not None and cases < 0:
        raise ConfigError("the number of cases cannot be negative")
    if max_divergences < 1:
        raise ConfigError("max_divergences must be at least 1")
    started = time.monotonic()
    mode = "lockstep" if lockstep else "final"
    subsets, skipped = fuzzable_subsets(isa_name, generators, against, isa_subset)
    ways = draw_ways(generators, subsets, draw)
    config = config or {}
    summary = FuzzSummary(isa_name, "sim", against, seed, mode, subsets, skipped, draws=ways)
    sizes = shard_sizes(generators, mode, batch_size, shard_size)
    settings = ShardSettings(batch_size, shrink_seconds, shrink_candidates if shrink_candidates is not None else 1 << 30,
                             max_divergences)
    out = Path(out_dir)
    directory = None
    if journal:
        identity = {"isa": isa_name, "subsets": subsets, "seed": seed, "cases": cases, "against": against, "mode": mode,
                    "config": config, "draws": ways, "shard_sizes": {s: sizes[s] for s in subsets},
                    "batch_size": batch_size, "max_divergences": max_divergences,
                    "shrink_candidates": shrink_candidates}
        directory = CampaignDirectory(out, json.loads(json.dumps(identity)), fresh=fresh)
    plan = shard_stream(isa_name, generators, subsets, cases, seed, against, mode, config, ways, sizes)
    if cases is not None:
        plan = list(plan)  # a bounded campaign: its shards, counted to size the pool
    by_subset = {g.subset: g for g in generators}
    merger = _Merger(summary, out, directory, max_divergences, progress)
    deadline = None if duration is None else started + duration
    submitted: list[int] = []  # the plan position of each task handed to the pool, by task number
    timed_out = False

    def tasks():
        nonlocal timed_out
        for position, shard in enumerate(plan):
            if merger.stopped:
                return
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                return
            done = directory.finished.get(shard.key) if directory is not None else None
            if done is not None:
                merger.add(position, done)  # finished before the campaign was killed: not run again
                continue
            submitted.append(position)
            yield shard, by_subset[shard.subset], settings

    own_pool = pool is None
    if own_pool:
        if cluster is None and workers is None and cases is not None:
            workers = max(1, min(default_workers(), len(plan)))  # no more processes than shards
        pool = Pool.open(workers=workers, cluster=cluster)
    summary.where = pool.where
    try:
        results = pool.run(runner or run_shard, tasks())
        try:
            for number, result in results:
                merger.add(submitted[number], result)
                if merger.stopped:
                    break
        finally:
            results.close()  # cancels what is still running
    finally:
        if own_pool:
            pool.close()
    if merger.resumed:
        summary.notes.append(f"resumed the campaign in {out}: {merger.resumed['shards']} finished shards "
                             f"({merger.resumed['cases']} programs) taken from it, the others run now")
    if timed_out:
        summary.notes.append(f"stopped after {duration:g} s (--duration): {summary.shards} shards, "
                             f"{summary.total_cases} programs; run it again with the same --out to go on")
    if directory is not None and not timed_out:
        directory.finish()
    summary.seconds = time.monotonic() - started
    return summary
