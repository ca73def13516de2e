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

A shard (``run_shard``)
    A plain description (ISA, subset, seed, number of cases, backend, mode, configuration) that can
    be handed to another process or machine, which draws its cases and diffs them, in batches where
    the generator batches.  ``diff`` compares the two backends at the end or (lockstep) after every
    instruction.  A divergence is pinned to its case, confirmed by diffing that case alone, shrunk
    with hypothesis's shrinker (the cases are drawn again from the same seed, and when the failing
    one comes up hypothesis shrinks it, every candidate diffed alone), or, for a case the generator
    drew itself, which hypothesis cannot draw again, by a greedy shrinker over the generator's
    ``reductions`` (:class:`_GreedyShrinker`), and made a trace whose ``expect`` is what the other
    backend did with the shrunk case.  All of it runs where the shard runs: the other backend may be
    that worker's silicon.

A campaign (``run_campaign``, in :mod:`.campaign`)
    The cases cut into shards, the shards run on a pool (this process, local processes, a Dask
    cluster), the results merged in shard order, the traces written, and a campaign directory that
    lets a killed campaign resume.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hypothesis_seed, settings

from .backends import get_backend
from .diff import DiffReport, diff, undefined_by
from .errors import ConfigError, IsasimError
from .generators import BatchingGenerator, CaseGenerator
from .isa import get_isa
from .machine import Machine
from .program import Program
from .trace import Init, Trace, expectations, trace_json

# What an ISA plugs in is in .generators (CaseGenerator, BatchingGenerator, DrawingGenerator).


HYPOTHESIS = "hypothesis"  # a shard's cases drawn from the generator's hypothesis strategy
DRAWER = "numpy"  # ... or by its own draw hook (the drawers the ISAs have are numpy's: ``isasim fuzz --draw numpy``)
DRAWS = (HYPOTHESIS, DRAWER)


def _placed(generator: CaseGenerator, case: Any, slot: int) -> Any:
    return generator.place(case, slot) if generator.batches else case


@dataclass(frozen=True)
class Shard:
    """The first ``cases`` cases that ``seed`` draws from ``subset`` of ``isa``, compared with ``against``.

    Plain values only, so that a shard pickles: it is what a worker elsewhere needs to run its part.
    A campaign cuts each subset's cases into shards (see :mod:`.campaign`): shard ``number`` holds the
    subset's cases ``first`` .. ``first + cases - 1``, drawn from its own ``seed``; ``campaign_seed`` is
    the seed the campaign was given (None: the shard is the whole campaign)."""

    isa: str
    subset: str
    seed: int
    cases: int
    against: str
    mode: str  # "final" or "lockstep"
    config: dict = field(default_factory=dict)
    draw: str = HYPOTHESIS  # how its cases are drawn: HYPOTHESIS or DRAWER (the generator's own draw hook)
    number: int = 0
    first: int = 0
    campaign_seed: int | None = None

    @property
    def key(self) -> str:
        """Its name in a campaign directory."""
        return f"{self.subset}-{self.number:06d}"

    def describe_case(self, index: int) -> str:
        """How a trace names the shard's case ``index`` (its index in the subset) and where it came from."""
        text = f"seed {self.seed}, {self.subset} case {index}"
        if self.number:
            text += f" (shard {self.number} of the campaign of seed {self.campaign_seed})"
        return text


@dataclass(frozen=True)
class ShardSettings:
    """What every shard of a campaign shares: how it runs its cases and when it stops shrinking."""

    batch_size: int | None = None  # None: the generator's
    shrink_seconds: float = 60.0
    shrink_candidates: int = 1 << 30
    max_divergences: int = 3  # a shard stops after this many divergent cases


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
    trace_data: dict | None = field(default=None, repr=False)  # the trace (its JSON), until the client writes it
    stem: str = ""  # the trace file's name, less the suffix a name already taken gets
    worker: str = ""  # where it was found: host, CPU (and Dask worker)
    shard: str = ""  # the shard that found it

    @property
    def same_case_key(self) -> str:
        """What two divergences that shrank to the same case share: the trace's program and initial state."""
        data = self.trace_data or {}
        return json.dumps([self.subset, self.program, data.get("init")], sort_keys=True)

    def as_json(self) -> dict:
        return {"subset": self.subset, "case": self.case, "description": self.description, "program": self.program,
                "trace": self.trace, "mode": self.mode, "original_size": self.original_size, "shrunk": self.shrunk,
                "notes": self.notes, "trace_data": self.trace_data, "stem": self.stem, "worker": self.worker,
                "shard": self.shard}

    @classmethod
    def from_json(cls, data: dict) -> "FoundDivergence":
        return cls(data["subset"], int(data["case"]), data["description"], list(data["program"]), data.get("trace"),
                   data["mode"], int(data.get("original_size", 0)), bool(data.get("shrunk")), list(data.get("notes", [])),
                   None, data.get("trace_data"), data.get("stem", ""), data.get("worker", ""), data.get("shard", ""))


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
    shards: int = 0  # shards merged into it
    hosts: Counter = field(default_factory=Counter)  # where they ran (WorkerInfo.describe()) -> shards
    where: str = "this process"  # the pool's description

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
    same seed, n and body outcomes, in any process); with shrink=True a _Divergent raised by body is shrunk."""
    phases = (Phase.generate, Phase.shrink) if shrink else (Phase.generate,)

    @settings(max_examples=n, phases=phases, **_SETTINGS)
    @hypothesis_seed(seed)
    @given(strategy)
    def explore(case):
        body(case)

    with _without_local_constants():
        explore()


@contextlib.contextmanager
def _without_local_constants():
    """Hypothesis (6.131 on) also draws, now and then, constants it finds in the source of the "local" modules
    loaded in the process (those outside site-packages and the standard library).  Which those are depends on
    what the process imported before (isasim.cli, another ISA) and on whether isasim is installed editable, so
    that the same seed drew other programs in a shell, a test and a cluster's worker (seen: an arm_sme shard
    differed between this process and a Dask worker).  A campaign's draws go without them: no local
    constants, and a cache of the allowed constants of its own, put back afterwards for everyone else.

    This reaches into hypothesis's internals (hypothesis.internal.conjecture.providers); where they are not
    as expected, nothing is changed, and tests/fuzz/test_fuzz_campaign.py's import-order test says so."""
    try:
        from hypothesis.internal.conjecture import providers

        getter, cache, empty = providers._get_local_constants, providers.CONSTANTS_CACHE, providers.Constants()
    except (ImportError, AttributeError, TypeError):
        yield
        return
    providers._get_local_constants, providers.CONSTANTS_CACHE = (lambda: empty), {}
    try:
        yield
    finally:
        providers._get_local_constants, providers.CONSTANTS_CACHE = getter, cache


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
    if draw == DRAWER and (missing := [g.subset for g in running if not g.draws]):
        have = [g.subset for g in generators if g.draws]
        which = f"only {', '.join(have)} {'has' if len(have) == 1 else 'have'} one" if have else "no subset has one"
        raise ConfigError(f"{' and '.join(missing)} cases have no {DRAWER} drawer ({which}): "
                          f"draw them with {HYPOTHESIS}")
    return {g.subset: DRAWER if g.draws and draw != HYPOTHESIS else HYPOTHESIS for g in running}


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


def run_shard(shard: Shard, generator: CaseGenerator, settings: ShardSettings = ShardSettings()) -> dict:
    """Run one shard from start to end, here: draw its cases, diff them (in batches where the generator
    batches), shrink each divergent case and build its trace.  What a worker process or a cluster
    worker runs; returns plain values (the trace files are written by the campaign, on the client):
    ``cases``, ``instructions``, ``elements``, ``runs``, ``divergent_cases``, ``divergences``
    (FoundDivergence, each with its trace as JSON), ``worker`` (WorkerInfo) and ``seconds``."""
    from .parallel import worker_info

    started = time.monotonic()
    summary = FuzzSummary(shard.isa, "sim", shard.against, shard.seed, shard.mode, [shard.subset])
    if generator.batches:
        _run_in_batches(summary, settings, shard, generator, settings.batch_size or generator.batch_size(shard.mode))
    else:
        _run_one_by_one(summary, settings, shard, generator)
    worker = worker_info()
    for found in summary.divergences:
        found.worker, found.shard = worker.describe(), shard.key
    return {"key": shard.key, "subset": shard.subset, "cases": summary.cases[shard.subset],
            "instructions": summary.instructions, "elements": summary.elements, "runs": summary.runs,
            "divergent_cases": summary.divergent_cases, "divergences": summary.divergences, "worker": worker,
            "seconds": time.monotonic() - started}


def _draw_all(generator: CaseGenerator, shard: Shard) -> list:
    drawn: list = []
    _draw_shard(generator, shard, drawn.append)
    return drawn


def _run_in_batches(summary: FuzzSummary, settings: ShardSettings, shard: Shard, generator: BatchingGenerator,
                    size: int) -> None:
    drawn = _draw_all(generator, shard)

    def placed(chunk: list) -> list:
        return [generator.place(case, slot) for slot, case in enumerate(chunk)]

    for start in range(0, len(drawn), size):
        chunk = placed(drawn[start : start + size])
        first = shard.first + start  # the index of the chunk's first case in the subset
        result = _diff_batch(shard, generator, chunk)
        summary.runs += 1
        while not result["identical"]:
            if summary.divergent_cases >= settings.max_divergences:
                return  # enough divergences: the batches not yet run are not run
            done = _settle_batch(summary, settings, shard, generator, chunk, first, result)
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
        summary.instructions.update(result["counts"])
        summary.elements.update(result["elements"])
        summary.cases[shard.subset] += len(chunk)
        if summary.divergent_cases >= settings.max_divergences:
            return


def _settle_batch(summary: FuzzSummary, settings: ShardSettings, shard: Shard, generator: BatchingGenerator,
                  chunk: list, first: int, result: dict) -> int:
    """A batch diverged: find the case (diffing cases alone), shrink it, write its trace.
    Returns how many cases of the chunk are settled (up to and including the divergent one)."""
    which = result["which"]
    order = ([which] if which is not None else []) + [i for i in range(len(chunk)) if i != which]
    for i in order:
        alone, _program, _init = _diff_alone(shard, generator, chunk[i], shard.mode)
        summary.runs += 1
        if not alone.identical:
            _record(summary, settings, shard, generator, first + i, chunk[i],
                    place=lambda case, slot=i: generator.place(case, slot))
            return i + 1
    # Only the batch diverges: keep the batch itself as the reproduction.
    batch = generator.batch(chunk, shard.mode)
    lines = batch.text()
    description = result["description"]
    trace = Trace(shard.isa, lines, get_isa(shard.isa).configure(shard.config),
                  f"isasim fuzz: {shard.describe_case(first).replace(' case ', ' cases ', 1)}..{first + len(chunk) - 1} "
                  f"as one program, {shard.mode}: {description}", batch.init, {})
    summary.divergent_cases += 1
    summary.divergences.append(FoundDivergence(shard.subset, first, description, lines, None, shard.mode,
                                               notes=["the batch diverges but none of its cases does on its own"],
                                               trace_data=trace_json(trace), stem=_stem(shard, f"batch{first}")))
    return len(chunk)


def _run_one_by_one(summary: FuzzSummary, settings: ShardSettings, shard: Shard, generator: CaseGenerator) -> None:
    for index, case in enumerate(_draw_all(generator, shard)):
        result = _diff_case(shard, generator, case)
        summary.runs += 1
        summary.cases[shard.subset] += 1
        summary.instructions.update(result["counts"])
        summary.elements.update(result["elements"])
        if not result["identical"]:
            _record(summary, settings, shard, generator, shard.first + index, case)
            if summary.divergent_cases >= settings.max_divergences:
                return


# ---------------------------------------------------------------------------
# A divergence: shrunk, and written as a trace
# ---------------------------------------------------------------------------


def _record(summary: FuzzSummary, settings: ShardSettings, shard: Shard, generator: CaseGenerator, index: int, case,
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
        shrinker: _Shrinker | _GreedyShrinker = _GreedyShrinker(shard, generator, case, settings, mode, place)
    else:
        shrinker = _Shrinker(generator.cases(), shard, generator, case, settings, mode, place)
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
    trace = _case_trace(shard, generator, small, f"{shard.describe_case(index)}"
                        f"{' drawn with ' + DRAWER if shard.draw == DRAWER else ''}, {mode}: {description}")
    summary.divergences.append(FoundDivergence(shard.subset, index, description, text.split("\n"), None, mode,
                                               generator.size(case), small != case, notes, key,
                                               trace_json(trace), _stem(shard, f"case{index}")))


class _Shrinker:
    """Re-draw the cases of the shard's seed; when the failing one comes up again, let hypothesis shrink it.

    Every candidate is diffed on its own (each distinct case once).  After ``shrink_seconds`` or
    ``shrink_candidates`` diffs the shrinking ends with the smallest failure found so far."""

    unshrunk = "not shrunk: hypothesis did not draw the case again"

    def __init__(self, strategy, shard: Shard, generator: CaseGenerator, target, settings: ShardSettings, mode: str,
                 place=lambda case: case):
        self.strategy, self.shard, self.generator, self.target, self.settings = strategy, shard, generator, target, settings
        self.mode = mode
        self.deadline = time.monotonic() + settings.shrink_seconds
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
        elif time.monotonic() > self.deadline or self.calls >= self.settings.shrink_candidates:
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

    def __init__(self, shard: Shard, generator: CaseGenerator, target, settings: ShardSettings, mode: str,
                 place=lambda case: case):
        self.shard, self.generator, self.target, self.settings, self.mode = shard, generator, target, settings, mode
        self.place = place
        self.deadline = time.monotonic() + settings.shrink_seconds
        self.verdicts: dict = {}
        self.calls = 0

    def _verdict(self, case, *, budgeted: bool = True):
        """The divergence of the case alone (a DiffReport), or None; _StopShrinking when out of budget."""
        if case in self.verdicts:
            return self.verdicts[case]
        if budgeted and (time.monotonic() > self.deadline or self.calls >= self.settings.shrink_candidates):
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
        return self.generator.reductions(case)

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
    producer = backend.producer()
    return expect, producer


def write_fresh(trace_data: dict, directory: Path, stem: str) -> Path:
    """Write a trace (its JSON) under a name no file in ``directory`` has yet, never overwriting one."""
    directory.mkdir(parents=True, exist_ok=True)
    text = json.dumps(trace_data, indent=1) + "\n"
    for n in range(1, 100000):
        path = directory / (f"{stem}.trace.json" if n == 1 else f"{stem}-{n}.trace.json")
        try:
            with open(path, "x", encoding="utf-8") as f:
                f.write(text)
            return path
        except FileExistsError:
            continue
    raise IsasimError(f"no free trace file name for {stem} in {directory}")


def _stem(shard: Shard, what: str) -> str:
    """A trace's file name: the ISA, the subset, the campaign's seed and the case (its index in the subset)."""
    seed = shard.seed if shard.campaign_seed is None else shard.campaign_seed
    return f"fuzz-{shard.isa}-{shard.subset}-seed{seed}-{what}"


def _case_trace(shard: Shard, generator: CaseGenerator, case, note: str) -> Trace:
    """The case alone as a trace whose expectation is what the other backend does with it."""
    text, init = generator.program_and_init(case)
    expect, producer = expectation(shard, generator, case)
    return Trace(shard.isa, text.split("\n"), get_isa(shard.isa).configure(shard.config),
                 f"{producer}; isasim fuzz: {note}", init, expect)
