"""Differential fuzzing, for any ISA: random programs run on the simulator and on another backend,
compared, and every divergence shrunk and written as a trace that reproduces it.

What an ISA brings
    One :class:`CaseGenerator` per subset of its instructions (x86_amx: "scalar" and "amx").  A
    generator draws cases (hypothesis strategies: the same seed draws the same cases), turns a case
    into a program and its initial state, says how big a case is and how to cut it short, and counts
    what a run of the simulator executed.  A generator whose cases can share one program (a backend
    that is slow to start, such as a CPU in a child process, then starts once per batch) also
    provides the :class:`BatchingGenerator` hooks.  A generator whose hypothesis strategy costs more
    than running its cases (x86_amx's amx: 15-30 ms a case against 0.1 ms with numpy) may also draw
    them itself, the :class:`DrawingGenerator` hooks; its cases then run by default drawn that way
    (``draw``: "numpy", the name the command line gives these drawers) and are shrunk greedily.
    Nothing here knows an ISA's registers or faults.

A campaign (``run_campaign``)
    The cases are shared out over the subsets the other backend can run here, one :class:`Shard`
    per subset: a plain description (ISA, subset, seed, number of cases, backend, mode,
    configuration) that can be handed to another process or machine.  Batches, or single cases, run
    in worker processes while hypothesis draws the next cases.  ``diff`` compares the two backends
    at the end or (lockstep) after every instruction.  A divergence is pinned to its case, confirmed
    by diffing that case alone, shrunk with hypothesis's shrinker (the cases are drawn again from
    the same seed, and when the failing one comes up hypothesis shrinks it, every candidate diffed
    alone), or, for a case the generator drew itself, which hypothesis cannot draw again, by a greedy
    shrinker over the generator's ``reductions`` (:class:`_GreedyShrinker`), and written as a trace
    whose ``expect`` is what the other backend did with the shrunk case.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from collections import Counter
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hypothesis_seed, settings

from .backends import get_backend
from .diff import DiffReport, diff, undefined_by
from .errors import ConfigError, IsasimError
from .isa import get_isa, has_hook
from .machine import Machine
from .program import Program
from .trace import Init, Trace, expectations, trace_json

# ---------------------------------------------------------------------------
# What an ISA plugs in
# ---------------------------------------------------------------------------


class CaseGenerator(Protocol):
    """Random test cases of one subset of an ISA's instructions.

    Cases are hashable values (frozen dataclasses, say): the shrinker remembers each verdict by case.
    """

    subset: str  # its name, as ``isasim fuzz --only`` takes it
    probe: str  # a one-line program of the subset: the subset runs where the other backend can run this
    weight: int  # its share of the cases when several subsets run

    def cases(self) -> Any:
        """The hypothesis strategy that draws one case."""
        ...

    def program_and_init(self, case: Any) -> tuple[str, Init]:
        """The case on its own: program text and initial state."""
        ...

    def size(self, case: Any) -> int:
        """Its instructions (what shrinking makes fewer)."""
        ...

    def truncated(self, case: Any, index: int) -> Any:
        """The case ending right after its instruction ``index``."""
        ...

    def count_executed(self, program: Program, init: Init, ranges: list[tuple[int, int]] | None,
                       config: dict) -> tuple[Counter, Counter]:
        """Instructions the simulator executed without a fault, by form, and the output elements they
        produced (by form; empty where that means nothing); only those at addresses in the sorted
        [start, end) ``ranges`` when given."""
        ...


class Batch(Protocol):
    """Many cases in one program (case i placed in slot i)."""

    program: Program
    init: Init
    bodies: list[tuple[int, int]]  # [start, end) of each case's own instructions, for counting

    def text(self) -> list[str]:
        """The program as lines that assemble back to the same code (for a trace)."""
        ...

    def case_of(self, report: DiffReport) -> int | None:
        """Which case a divergence of the batch belongs to (None: cannot tell)."""
        ...


class BatchingGenerator(CaseGenerator, Protocol):
    """A generator whose cases can share one program."""

    def batch_size(self, mode: str) -> int: ...

    def place(self, case: Any, slot: int) -> Any:
        """The case moved to slot ``slot`` of a batch (its own memory, its own bookkeeping)."""
        ...

    def batch(self, cases: list, mode: str) -> Batch:
        """One program running ``cases`` in turn; case i must be in slot i."""
        ...


class DrawingGenerator(CaseGenerator, Protocol):
    """A generator that also draws its cases without hypothesis (``draw``), and says how to make one of them
    smaller (``reductions``, optional: without it, only its truncations are tried)."""

    def draw(self, n: int, seed: int) -> Iterable:
        """The first n cases of ``seed``: the same for the same seed, and the first k of them whatever n is
        (a lazy iterable lets the workers start on the first cases while the others are drawn)."""
        ...

    def reductions(self, case: Any) -> Iterable:
        """Smaller cases to try in place of a divergent ``case``, the most promising first (x86 AMX: the case
        cut after each instruction, shortest first, then the case less one statement)."""
        ...


HYPOTHESIS = "hypothesis"  # a shard's cases drawn from the generator's hypothesis strategy
DRAWER = "numpy"  # ... or by its own draw hook (the drawers the ISAs have are numpy's: ``isasim fuzz --draw numpy``)
DRAWS = (HYPOTHESIS, DRAWER)


def batches(generator: CaseGenerator) -> bool:
    return has_hook(generator, "batch")


def draws_itself(generator: CaseGenerator) -> bool:
    return has_hook(generator, "draw")


def _placed(generator: CaseGenerator, case: Any, slot: int) -> Any:
    return generator.place(case, slot) if batches(generator) else case


@dataclass(frozen=True)
class Shard:
    """The first ``cases`` cases that ``seed`` draws from ``subset`` of ``isa``, compared with ``against``.

    Plain values only, so that a shard pickles: it is what a worker elsewhere needs to run its part."""

    isa: str
    subset: str
    seed: int
    cases: int
    against: str
    mode: str  # "final" or "lockstep"
    config: dict = field(default_factory=dict)
    draw: str = HYPOTHESIS  # how its cases are drawn: HYPOTHESIS or DRAWER (the generator's own draw hook)


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass
class FoundDivergence:
    subset: str
    case: int  # the index of the generated case
    description: str  # the first difference, as diff describes it (of the shrunk case)
    program: list[str]  # the shrunk program
    trace: str | None  # the reproducing trace file
    mode: str
    original_size: int = 0
    shrunk: bool = False
    notes: list[str] = field(default_factory=list)
    shrunk_case: object = field(default=None, repr=False)  # the case the trace holds (in slot 0 if batched)


@dataclass
class FuzzSummary:
    isa: str
    a: str
    b: str
    seed: int
    mode: str
    subsets: list[str]
    skipped: dict[str, str] = field(default_factory=dict)  # subset -> why it could not run
    cases: Counter = field(default_factory=Counter)  # subset -> programs run
    instructions: Counter = field(default_factory=Counter)  # form -> instructions compared
    elements: Counter = field(default_factory=Counter)  # form -> output elements compared
    divergences: list[FoundDivergence] = field(default_factory=list)  # one per distinct shrunk case
    divergent_cases: int = 0  # cases that diverged (several may shrink to the same case)
    draws: dict[str, str] = field(default_factory=dict)  # subset -> how its cases were drawn (HYPOTHESIS, DRAWER)
    runs: int = 0  # differential runs (one per batch or single case)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)  # what the report should say about the campaign as a whole

    @property
    def total_cases(self) -> int:
        return sum(self.cases.values())

    @property
    def total_instructions(self) -> int:
        return sum(self.instructions.values())

    @property
    def traces(self) -> list[str]:
        return [d.trace for d in self.divergences if d.trace]


class FuzzUnavailable(ConfigError):
    """The requested subset cannot run on the other backend here."""


# ---------------------------------------------------------------------------
# Drawing cases reproducibly
# ---------------------------------------------------------------------------

_SETTINGS = dict(database=None, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False,
                 verbosity=Verbosity.quiet, report_multiple_bugs=False, print_blob=False)


class _Divergent(Exception):
    pass


class _StopShrinking(BaseException):
    """Ends a hypothesis run at once (hypothesis treats only Exception and a few others as failures)."""


def _explore(strategy, n: int, seed: int, body, *, shrink: bool) -> None:
    """Run ``body`` on the first n cases hypothesis draws for ``seed`` (the same cases every time for the
    same seed, n and body outcomes); with shrink=True a _Divergent raised by body is shrunk."""
    phases = (Phase.generate, Phase.shrink) if shrink else (Phase.generate,)

    @settings(max_examples=n, phases=phases, **_SETTINGS)
    @hypothesis_seed(seed)
    @given(strategy)
    def explore(case):
        body(case)

    explore()


def draw_cases(strategy, n: int, seed: int) -> list:
    """The first n cases of ``strategy`` for ``seed``."""
    out: list = []
    _explore(strategy, n, seed, out.append, shrink=False)
    return out


def _draw_shard(generator: CaseGenerator, shard: Shard, take) -> None:
    """``take`` each case of the shard in turn, drawn as the shard says."""
    if shard.draw == DRAWER:
        for case in generator.draw(shard.cases, shard.seed):
            take(case)
    else:
        _explore(generator.cases(), shard.cases, shard.seed, take, shrink=False)


def _draw_ways(generators: Sequence[CaseGenerator], subsets: list[str], draw: str | None) -> dict[str, str]:
    """How each subset's cases are drawn.  By default (None) with the generator's own drawer where it has one:
    hypothesis's cost per case can exceed running it, and its shrinker is not needed to find a divergence,
    only to shrink it, which the greedy shrinker does for drawn cases.  HYPOTHESIS: hypothesis for every
    subset.  DRAWER: the drawers, and an error naming the subsets that have none."""
    if draw is not None and draw not in DRAWS:
        raise ConfigError(f"unknown way to draw cases '{draw}' ({' or '.join(DRAWS)})")
    running = [g for g in generators if g.subset in subsets]
    if draw == DRAWER and (missing := [g.subset for g in running if not draws_itself(g)]):
        have = [g.subset for g in generators if draws_itself(g)]
        which = f"only {', '.join(have)} {'has' if len(have) == 1 else 'have'} one" if have else "no subset has one"
        raise ConfigError(f"{' and '.join(missing)} cases have no {DRAWER} drawer ({which}): "
                          f"draw them with {HYPOTHESIS}")
    return {g.subset: DRAWER if draws_itself(g) and draw != HYPOTHESIS else HYPOTHESIS for g in running}


# ---------------------------------------------------------------------------
# A campaign
# ---------------------------------------------------------------------------


@dataclass
class _Job:
    """What every shard of a campaign shares: where traces go and when to stop."""

    out: Path
    shrink_seconds: float
    shrink_candidates: int
    max_divergences: int
    progress: object = None


def run_campaign(isa_name: str, generators: Sequence[CaseGenerator], cases: int, seed: int, against: str,
                 isa_subset: str | None = None, lockstep: bool = False,
                 out_dir: str | Path = ".", *, config: dict | None = None, batch_size: int | None = None,
                 workers: int | None = None, shrink_seconds: float = 60.0, shrink_candidates: int | None = None,
                 max_divergences: int = 3, progress=None, draw: str | None = None) -> FuzzSummary:
    """Run ``cases`` random programs of ``isa_name`` on the simulator and on ``against`` and compare them.

    isa_subset: one generator's subset, or None (every subset ``against`` can run here, the cases
    shared out by the generators' weights).  lockstep: compare after every instruction instead of at
    the end.  config: the ISA configuration both backends run.  Raises FuzzUnavailable (a
    ConfigError) when the subset asked for cannot run on ``against`` here.

    The same seed draws the same cases.  Each divergent case is shrunk and gets a reproducing trace
    in ``out_dir`` (cases that shrink to the same case share one); the run stops after
    ``max_divergences`` divergent cases.  Shrinking one diffs at most ``shrink_candidates`` smaller
    cases (then the result depends on the seed only) and takes at most ``shrink_seconds``.
    ``workers`` processes (default: one per CPU, at most 2) run the batches while the next cases
    are drawn; ``progress(summary)`` is called after each batch or single case.

    draw: how the cases are drawn (see :func:`_draw_ways`): None, each generator's own drawer where it
    has one (x86_amx: amx, about 0.1 ms a case against hypothesis's 15-30 ms) and hypothesis for the
    others; HYPOTHESIS ("hypothesis") for all; DRAWER ("numpy") for all, a ConfigError if a subset to
    run has no drawer.  A drawn case that diverges is shrunk greedily over the generator's reductions
    (hypothesis cannot draw it again to shrink it); its trace is written just as for the others.
    """
    if cases < 0:
        raise ConfigError("the number of cases cannot be negative")
    started = time.monotonic()
    mode = "lockstep" if lockstep else "final"
    subsets, skipped = _subsets(isa_name, generators, against, isa_subset)
    ways = _draw_ways(generators, subsets, draw)
    summary = FuzzSummary(isa_name, "sim", against, seed, mode, subsets, skipped, draws=ways)
    shards = plan_shards(isa_name, generators, subsets, cases, seed, against, mode, config or {}, ways)
    job = _Job(Path(out_dir), shrink_seconds, shrink_candidates if shrink_candidates is not None else 1 << 30,
               max_divergences, progress)
    by_subset = {g.subset: g for g in generators}
    workers = max(1, min(2, os.cpu_count() or 1)) if workers is None else workers
    pool = None
    if workers > 1 and cases > 0:
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
    try:
        for number, shard in enumerate(shards):
            if number and summary.divergent_cases >= max_divergences:
                break  # enough found: the later subsets do not start
            generator = by_subset[shard.subset]
            if batches(generator):
                _run_in_batches(summary, job, shard, generator, batch_size or generator.batch_size(mode), pool)
            else:
                _run_one_by_one(summary, job, shard, generator, pool)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    summary.seconds = time.monotonic() - started
    return summary


def plan_shards(isa_name: str, generators: Sequence[CaseGenerator], subsets: list[str], cases: int, seed: int,
                against: str, mode: str, config: dict, draws: dict[str, str] | None = None) -> list[Shard]:
    """``cases`` shared out over ``subsets`` by weight, the first subset taking what rounding leaves.

    The i-th generator of the ISA draws from seed + i whichever subsets run, so that ``--only`` draws
    the very cases a full run does.  Subsets left with no cases get no shard.  ``draws``: how each
    subset's cases are drawn (default: hypothesis)."""
    weights = {g.subset: g.weight for g in generators if g.subset in subsets}
    total = sum(weights.values())
    share = {subset: cases * weight // total for subset, weight in weights.items()}
    share[subsets[0]] = cases - sum(n for subset, n in share.items() if subset != subsets[0])
    draws = draws or {}
    return [Shard(isa_name, g.subset, seed + i, share[g.subset], against, mode, config,
                  draws.get(g.subset, HYPOTHESIS))
            for i, g in enumerate(generators) if share.get(g.subset)]


def _subsets(isa_name: str, generators: Sequence[CaseGenerator], against: str,
             isa_subset: str | None) -> tuple[list[str], dict[str, str]]:
    """The subsets to fuzz, and why the others cannot run against ``against`` here."""
    from .backends import BACKENDS

    names = [g.subset for g in generators]
    if isa_subset is not None and isa_subset not in names:
        raise ConfigError(f"unknown subset '{isa_subset}' ({' or '.join(names)})")
    isa = get_isa(isa_name)  # registers the ISA's backends
    backend = BACKENDS.get(against)
    if backend is None:
        raise ConfigError(f"unknown backend '{against}' (known: {', '.join(BACKENDS)})")
    skipped: dict[str, str] = {}
    for g in generators:
        reason = backend.unavailable_reason(isa_name, isa.assemble(g.probe, source="<fuzz>"))
        if reason:
            skipped[g.subset] = reason
    wanted = [isa_subset] if isa_subset else names
    usable = [s for s in wanted if s not in skipped]
    if not usable:
        raise FuzzUnavailable(f"cannot fuzz {' or '.join(wanted)} programs against {against} here: "
                              f"{skipped[wanted[0]]}")
    return usable, {s: r for s, r in skipped.items() if s in wanted}


# ---------------------------------------------------------------------------
# Running cases (the functions a worker process runs return plain values)
# ---------------------------------------------------------------------------


def _diff_batch(shard: Shard, generator: BatchingGenerator, cases: list) -> dict:
    """Diff one batch (cases placed in slots 0..n-1)."""
    batch = generator.batch(cases, shard.mode)
    report = diff(shard.isa, shard.config, batch.program, batch.init, a="sim", b=shard.against, mode=shard.mode)
    if not report.identical:
        return {"identical": False, "which": batch.case_of(report),
                "description": report.divergence.describe("sim", shard.against), "steps": report.steps}
    counts, elements = generator.count_executed(batch.program, batch.init, batch.bodies, shard.config)
    return {"identical": True, "counts": counts, "elements": elements, "steps": report.steps}


def _diff_case(shard: Shard, generator: CaseGenerator, case) -> dict:
    """Diff one case on its own, and count what it ran."""
    report, program, init = _diff_alone(shard, generator, case, shard.mode)
    counts, elements = generator.count_executed(program, init, None, shard.config)
    return {"identical": report.identical, "counts": counts, "elements": elements,
            "description": None if report.identical else report.divergence.describe("sim", shard.against)}


def _diff_alone(shard: Shard, generator: CaseGenerator, case, mode: str) -> tuple[DiffReport, Program, Init]:
    text, init = generator.program_and_init(case)
    program = get_isa(shard.isa).assemble(text, source="<fuzz>")
    return diff(shard.isa, shard.config, program, init, a="sim", b=shard.against, mode=mode), program, init


def _submit(pool, fn, *args) -> Future:
    """``fn(*args)`` on a worker, or here and now without a pool; either way a Future of its result."""
    if pool is None:
        future: Future = Future()
        try:
            future.set_result(fn(*args))
        except BaseException as error:  # noqa: BLE001 - handed to the caller by future.result()
            future.set_exception(error)
        return future
    return pool.submit(fn, *args)


def _run_in_batches(summary: FuzzSummary, job: _Job, shard: Shard, generator: BatchingGenerator, size: int,
                    pool) -> None:
    drawn: list = []
    futures: list[Future] = []

    def placed(chunk: list) -> list:
        return [generator.place(case, slot) for slot, case in enumerate(chunk)]

    def take(case) -> None:  # runs while the cases are drawn: batches go to the workers as they fill
        drawn.append(case)
        if len(drawn) % size == 0:
            futures.append(_submit(pool, _diff_batch, shard, generator, placed(drawn[-size:])))

    _draw_shard(generator, shard, take)
    if len(drawn) % size:
        futures.append(_submit(pool, _diff_batch, shard, generator, placed(drawn[len(drawn) // size * size :])))
    for number, future in enumerate(futures):
        result = future.result()
        summary.runs += 1
        chunk = placed(drawn[number * size : (number + 1) * size])
        first = number * size
        while not result["identical"]:
            if summary.divergent_cases >= job.max_divergences:
                result = None
                break
            done = _settle_batch(summary, job, shard, generator, chunk, first, result)
            batch = generator.batch(chunk[:done], shard.mode)
            counts, elements = generator.count_executed(batch.program, batch.init, batch.bodies, shard.config)
            if done < len(chunk):  # go on with the cases after the divergent one
                summary.instructions.update(counts)
                summary.elements.update(elements)
                summary.cases[shard.subset] += done
                chunk = placed(chunk[done:])
                first += done
                result = _diff_batch(shard, generator, chunk)
                summary.runs += 1
            else:
                result = {"identical": True, "counts": counts, "elements": elements}
        if result is None:
            break  # enough divergences: the batches not yet run are cancelled
        summary.instructions.update(result["counts"])
        summary.elements.update(result["elements"])
        summary.cases[shard.subset] += len(chunk)
        if job.progress:
            job.progress(summary)
        if summary.divergent_cases >= job.max_divergences:
            break


def _settle_batch(summary: FuzzSummary, job: _Job, shard: Shard, generator: BatchingGenerator,
                  chunk: list, first: int, result: dict) -> int:
    """A batch diverged: find the case (diffing cases alone), shrink it, write its trace.
    Returns how many cases of the chunk are settled (up to and including the divergent one)."""
    which = result["which"]
    order = ([which] if which is not None else []) + [i for i in range(len(chunk)) if i != which]
    for i in order:
        alone, _program, _init = _diff_alone(shard, generator, chunk[i], shard.mode)
        summary.runs += 1
        if not alone.identical:
            _record(summary, job, shard, generator, first + i, chunk[i],
                    place=lambda case, slot=i: generator.place(case, slot))
            return i + 1
    # Only the batch diverges: keep the batch itself as the reproduction.
    batch = generator.batch(chunk, shard.mode)
    lines = batch.text()
    description = result["description"]
    trace = Trace(shard.isa, lines, get_isa(shard.isa).configure(shard.config),
                  f"isasim fuzz: seed {shard.seed}, {shard.subset} cases {first}..{first + len(chunk) - 1} as one "
                  f"program, {shard.mode}: {description}", batch.init, {})
    path = write_fresh(trace, job.out, f"fuzz-{shard.isa}-{shard.subset}-seed{shard.seed}-batch{first}")
    summary.divergent_cases += 1
    summary.divergences.append(FoundDivergence(shard.subset, first, description, lines, str(path), shard.mode,
                                               notes=["the batch diverges but none of its cases does on its own"]))
    return len(chunk)


def _run_one_by_one(summary: FuzzSummary, job: _Job, shard: Shard, generator: CaseGenerator, pool) -> None:
    drawn: list = []
    futures: list[Future] = []

    def take(case) -> None:
        drawn.append(case)
        futures.append(_submit(pool, _diff_case, shard, generator, case))

    _draw_shard(generator, shard, take)
    for index, future in enumerate(futures):
        result = future.result()
        summary.runs += 1
        summary.cases[shard.subset] += 1
        summary.instructions.update(result["counts"])
        summary.elements.update(result["elements"])
        if not result["identical"] and summary.divergent_cases < job.max_divergences:
            _record(summary, job, shard, generator, index, drawn[index])
        if job.progress:
            job.progress(summary)


# ---------------------------------------------------------------------------
# A divergence: shrunk, and written as a trace
# ---------------------------------------------------------------------------


def _record(summary: FuzzSummary, job: _Job, shard: Shard, generator: CaseGenerator, index: int, case,
            place=lambda case: case) -> None:
    """Shrink a confirmed divergent case, write its trace, add it to the summary.

    A divergence seen after some instruction (lockstep) that also shows in the final state is shrunk
    comparing final states, so that the trace's expectations (the other backend's final state) show
    it; one that a later instruction hides is shrunk in lockstep and the trace's program is cut after
    the diverging instruction."""
    summary.divergent_cases += 1
    mode = shard.mode

    def diverges_at_end(c) -> bool:
        return not _diff_alone(shard, generator, c, "final")[0].identical

    if mode == "lockstep" and diverges_at_end(case):
        mode = "final"
    if shard.draw == DRAWER:  # hypothesis never drew the case: it cannot draw it again to shrink it
        shrinker: _Shrinker | _GreedyShrinker = _GreedyShrinker(shard, generator, case, job, mode, place)
    else:
        shrinker = _Shrinker(generator.cases(), shard, generator, case, job, mode, place)
    found = shrinker.run()
    notes = [f"shrinking diffed {shrinker.calls} candidates"]
    if found is None:  # the re-draw did not meet the case (it should): keep it as it is
        found = (case, _diff_alone(shard, generator, case, mode)[0])
        notes.append(shrinker.unshrunk)
    small, report = found
    description = report.divergence.describe("sim", shard.against)
    if mode == "lockstep" and not diverges_at_end(small):
        where = report.divergence.instruction.index if report.divergence.instruction is not None else None
        cut = generator.truncated(small, where) if where is not None else small
        if cut != small and diverges_at_end(cut):
            notes.append(f"the program is cut after instruction {where}: a later instruction hides the difference")
            small = cut
        else:
            notes.append("the difference shows only between instructions: see it with isasim diff --lockstep")
    text, _init = generator.program_and_init(small)
    key = _placed(generator, small, 0)
    for earlier in summary.divergences:
        if earlier.shrunk_case == key:
            earlier.notes.append(f"case {index} shrinks to the same case")
            return
    path = _write_case_trace(shard, generator, small, job.out,
                             f"fuzz-{shard.isa}-{shard.subset}-seed{shard.seed}-case{index}",
                             f"seed {shard.seed}, {shard.subset} case {index}"
                             f"{' drawn with ' + DRAWER if shard.draw == DRAWER else ''}, {mode}: {description}")
    summary.divergences.append(FoundDivergence(shard.subset, index, description, text.split("\n"), str(path), mode,
                                               generator.size(case), small != case, notes, key))


class _Shrinker:
    """Re-draw the cases of the shard's seed; when the failing one comes up again, let hypothesis shrink it.

    Every candidate is diffed on its own (each distinct case once).  After ``shrink_seconds`` or
    ``shrink_candidates`` diffs the shrinking ends with the smallest failure found so far."""

    unshrunk = "not shrunk: hypothesis did not draw the case again"

    def __init__(self, strategy, shard: Shard, generator: CaseGenerator, target, job: _Job, mode: str,
                 place=lambda case: case):
        self.strategy, self.shard, self.generator, self.target, self.job = strategy, shard, generator, target, job
        self.mode = mode
        self.deadline = time.monotonic() + job.shrink_seconds
        self.place = place
        self.armed = False
        self.verdicts: dict = {}
        self.last_failing = None
        self.calls = 0

    def check(self, case) -> None:
        case = self.place(case)
        if not self.armed:
            if case != self.target:
                return  # a case drawn before the failing one: it passed the first time
            self.armed = True
        if case in self.verdicts:
            verdict = self.verdicts[case]
        elif time.monotonic() > self.deadline or self.calls >= self.job.shrink_candidates:
            raise _StopShrinking
        else:
            self.calls += 1
            try:
                report, _program, _init = _diff_alone(self.shard, self.generator, case, self.mode)
                verdict = None if report.identical else report
            except IsasimError:
                verdict = None
            self.verdicts[case] = verdict
        if verdict is not None:
            self.last_failing = (case, verdict)
            raise _Divergent(verdict.divergence.describe("sim", self.shard.against))

    def run(self):
        try:
            _explore(self.strategy, self.shard.cases, self.shard.seed, self.check, shrink=True)
        except (Exception, _StopShrinking):  # noqa: BLE001 - the smallest case's _Divergent, out of time, or
            pass  # hypothesis's own complaint: the verdicts say what failed
        size = self.generator.size
        failing = [(c, v) for c, v in self.verdicts.items() if v is not None]
        if failing:
            smallest = min(failing, key=lambda cv: (size(cv[0]), len(self.generator.program_and_init(cv[0])[0])))
            if self.last_failing is None or size(smallest[0]) < size(self.last_failing[0]):
                self.last_failing = smallest
        return self.last_failing


class _GreedyShrinker:
    """Shrink a case the generator drew itself: move to the first of the generator's ``reductions`` of the
    current case (its truncations when it has no such hook) that still diverges, diffed alone, and go on
    with the reductions of that one, until none of them diverges.  The search of the next case's
    reductions starts where the last one was found (and goes round to the first): a reduction of a
    case and the one at the same place in the list of its reduction are alike (x86: one statement
    less, the same cut), so that resuming there tries each statement once a round where starting over
    would try each again after every success (measured on planted AMX divergences: 136 diffs instead
    of 422 for the same three shrunk cases).

    Only a candidate smaller than the current case (fewer instructions, or as many in a shorter text)
    is tried, so that it ends; each distinct case is diffed once (a verdict is remembered, and costs no
    candidate when it comes up again).  The order of the candidates, and so the result, depends on the
    case alone; after ``shrink_seconds`` or ``shrink_candidates`` diffs it ends with the smallest
    failure found so far.  Greedy rather than hypothesis's shrinker: this finds a local minimum (no
    single reduction still diverges), which for a program is a few instructions around the culprit."""

    unshrunk = "not shrunk: the case did not diverge again on its own"

    def __init__(self, shard: Shard, generator: CaseGenerator, target, job: _Job, mode: str,
                 place=lambda case: case):
        self.shard, self.generator, self.target, self.job, self.mode = shard, generator, target, job, mode
        self.place = place
        self.deadline = time.monotonic() + job.shrink_seconds
        self.verdicts: dict = {}
        self.calls = 0

    def _verdict(self, case, *, budgeted: bool = True):
        """The divergence of the case alone (a DiffReport), or None; _StopShrinking when out of budget."""
        if case in self.verdicts:
            return self.verdicts[case]
        if budgeted and (time.monotonic() > self.deadline or self.calls >= self.job.shrink_candidates):
            raise _StopShrinking
        self.calls += 1
        try:
            report, _program, _init = _diff_alone(self.shard, self.generator, case, self.mode)
            verdict = None if report.identical else report
        except IsasimError:  # a candidate that does not assemble or load is no reproduction
            verdict = None
        self.verdicts[case] = verdict
        return verdict

    def _reductions(self, case) -> Iterable:
        if has_hook(self.generator, "reductions"):
            return self.generator.reductions(case)
        return (self.generator.truncated(case, index) for index in range(self.generator.size(case)))

    def _key(self, case) -> tuple[int, int]:
        return self.generator.size(case), len(self.generator.program_and_init(case)[0])

    def run(self):
        report = self._verdict(self.target, budgeted=False)  # the case itself: the one known failure
        if report is None:
            return None
        current, key = self.target, self._key(self.target)
        start = 0  # where in the list of reductions the last one that diverged was
        try:
            while True:
                candidates = list(self._reductions(current))
                for step in range(len(candidates)):
                    at = (start + step) % len(candidates)
                    candidate = self.place(candidates[at])
                    if candidate == current or (candidate_key := self._key(candidate)) >= key:
                        continue
                    verdict = self._verdict(candidate)
                    if verdict is not None:
                        current, key, report, start = candidate, candidate_key, verdict, at
                        break
                else:
                    break  # no reduction of the current case diverges
        except _StopShrinking:
            pass
        return current, report


def _defined_only(isa, regs: dict, undefined) -> dict:
    """``regs`` less each register that the architecture leaves partly undefined after the run (a trace
    holding it would fail on a correct machine).  A register is partly undefined when ``comparable``
    masks some of it: asked about a register of all ones, it gives back less than it does with
    nothing undefined."""
    probe = {"regs": {name: -1 for name in regs}}
    now, never = isa.comparable(probe, undefined)["regs"], isa.comparable(probe, None)["regs"]
    return {name: value for name, value in regs.items() if now.get(name) == never.get(name)}


def expectation(shard: Shard, generator: CaseGenerator, case) -> tuple[dict, str]:
    """What the other backend does with the case alone, as a trace's ``expect`` (and the producer)."""
    text, init = generator.program_and_init(case)
    isa = get_isa(shard.isa)
    program = isa.assemble(text, source="<fuzz>")
    backend = get_backend(shard.against, shard.isa, program)
    config = isa.configure(shard.config)
    final = backend.run(shard.isa, config, program, init)
    expect = expectations(final, init, every_register=True)  # what isasim record expects, on every register
    sim = Machine(shard.isa, config)
    sim.load_init(program, init)
    executed = [r.instruction for r in sim.run(keep_records=True).records]
    expect["regs"] = _defined_only(isa, expect["regs"], undefined_by(isa, executed))
    producer = backend.producer() if hasattr(backend, "producer") else f"isasim {shard.against}"
    return expect, producer


def write_fresh(trace: Trace, directory: Path, stem: str) -> Path:
    """Write the trace under a name no file has yet (never overwriting one)."""
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(trace_json(trace), indent=1) + "\n"
    for n in range(1, 100000):
        path = directory / (f"{stem}.trace.json" if n == 1 else f"{stem}-{n}.trace.json")
        try:
            with open(path, "x", encoding="utf-8") as f:
                f.write(text)
            return path
        except FileExistsError:
            continue
    raise IsasimError(f"no free trace file name for {stem} in {directory}")


def _write_case_trace(shard: Shard, generator: CaseGenerator, case, directory: Path, stem: str, note: str) -> Path:
    text, init = generator.program_and_init(case)
    expect, producer = expectation(shard, generator, case)
    trace = Trace(shard.isa, text.split("\n"), get_isa(shard.isa).configure(shard.config),
                  f"{producer}; isasim fuzz: {note}", init, expect)
    return write_fresh(trace, directory, stem)
