"""A shard's run: its cases drawn and compared on the two backends (in batches where the generator
batches), and each divergence pinned to its case, shrunk and made a trace.  What a worker runs; it
returns plain values."""

from __future__ import annotations

import time
from typing import Any

from ..diff import diff
from ..generators import BatchingGenerator, CaseGenerator
from ..isa import get_isa
from ..trace import Trace, trace_json
from .drawing import DRAWER, explore
from .results import FoundDivergence, FuzzSummary
from .shard import Shard, ShardSettings, diff_alone
from .shrinkers import GreedyShrinker, HypothesisShrinker
from .traces import case_trace, trace_stem


def run_shard(shard: Shard, generator: CaseGenerator, settings: ShardSettings = ShardSettings()) -> dict:
    """Run one shard from start to end, here: draw its cases, diff them (in batches where the generator
    batches), shrink each divergent case and build its trace.  What a worker process or a cluster
    worker runs; returns plain values (the trace files are written by the campaign, on the client):
    ``cases``, ``instructions``, ``elements``, ``runs``, ``divergent_cases``, ``divergences``
    (FoundDivergence, each with its trace as JSON), ``worker`` (WorkerInfo) and ``seconds``."""
    from ..parallel import worker_info

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


def _draw_shard(generator: CaseGenerator, shard: Shard, take) -> None:
    """``take`` each case of the shard in turn, drawn as the shard says."""
    if shard.draw == DRAWER:
        for case in generator.draw(shard.cases, shard.seed):
            take(case)
    else:
        explore(generator.cases(), shard.cases, shard.seed, take, shrink=False)


def _draw_all(generator: CaseGenerator, shard: Shard) -> list:
    drawn: list = []
    _draw_shard(generator, shard, drawn.append)
    return drawn


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
    report, program, init = diff_alone(shard, generator, case, shard.mode)
    counts, elements = generator.count_executed(program, init, None, shard.config)
    return {"identical": report.identical, "counts": counts, "elements": elements,
            "description": None if report.identical else report.divergence.describe("sim", shard.against)}


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
        alone, _program, _init = diff_alone(shard, generator, chunk[i], shard.mode)
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
                                               trace_data=trace_json(trace), stem=trace_stem(shard, f"batch{first}")))
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
        return not diff_alone(shard, generator, c, "final")[0].identical

    if mode == "lockstep" and diverges_at_end(case):
        mode = "final"
    if shard.draw == DRAWER:  # hypothesis never drew the case: it cannot draw it again to shrink it
        shrinker: HypothesisShrinker | GreedyShrinker = GreedyShrinker(shard, generator, case, settings, mode, place)
    else:
        shrinker = HypothesisShrinker(generator.cases(), shard, generator, case, settings, mode, place)
    found = shrinker.run()
    notes = [f"shrinking diffed {shrinker.calls} candidates"]
    if found is None:  # the re-draw did not meet the case (it should): keep it as it is
        found = (case, diff_alone(shard, generator, case, mode)[0])
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
    trace = case_trace(shard, generator, small, f"{shard.describe_case(index)}"
                        f"{' drawn with ' + DRAWER if shard.draw == DRAWER else ''}, {mode}: {description}")
    summary.divergences.append(FoundDivergence(shard.subset, index, description, text.split("\n"), None, mode,
                                               generator.size(case), small != case, notes, key,
                                               trace_json(trace), trace_stem(shard, f"case{index}")))


def _placed(generator: CaseGenerator, case: Any, slot: int) -> Any:
    return generator.place(case, slot) if generator.batches else case

