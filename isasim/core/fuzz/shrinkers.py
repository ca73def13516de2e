"""The shrinkers of a divergent case: hypothesis's, for a case hypothesis drew (the shard's cases are drawn
again, and when the failing one comes up hypothesis shrinks it), and a greedy one over the generator's
``reductions``, for a case the generator drew itself.  Every candidate is compared alone."""

from __future__ import annotations

import time
from typing import Iterable

from ..errors import IsasimError
from ..generators import CaseGenerator
from .drawing import explore
from .shard import Shard, ShardSettings, diff_alone


class _Divergent(Exception):
    """A candidate that diverges: the failure hypothesis shrinks."""


class _StopShrinking(BaseException):
    """Ends a hypothesis run at once (hypothesis treats only Exception and a few others as failures)."""


class HypothesisShrinker:
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
                report, _program, _init = diff_alone(self.shard, self.generator, case, self.mode)
                verdict = None if report.identical else report
            except IsasimError:
                verdict = None
            self.verdicts[case] = verdict
        if verdict is not None:
            self.last_failing = (case, verdict)
            raise _Divergent(verdict.divergence.describe("sim", self.shard.against))

    def run(self):
        try:
            explore(self.strategy, self.shard.cases, self.shard.seed, self.check, shrink=True)
        except (Exception, _StopShrinking):  # noqa: BLE001 - the smallest case's _Divergent, out of time, or
            pass  # hypothesis's own complaint: the verdicts say what failed
        size = self.generator.size
        failing = [(c, v) for c, v in self.verdicts.items() if v is not None]
        if failing:
            smallest = min(failing, key=lambda cv: (size(cv[0]), len(self.generator.program_and_init(cv[0])[0])))
            if self.last_failing is None or size(smallest[0]) < size(self.last_failing[0]):
                self.last_failing = smallest
        return self.last_failing


class GreedyShrinker:
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
            report, _program, _init = diff_alone(self.shard, self.generator, case, self.mode)
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

