"""What an ISA's fuzzer plugs into ``isasim fuzz`` (:mod:`.fuzz` runs them): generators of random cases.

Importing this module imports no hypothesis (an ISA lists its fuzz subsets without it).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Protocol

from .program import Program
from .trace import Init


class CaseGenerator:
    """Random test cases of one subset of an ISA's instructions (a base class: an ISA's generators subclass
    it, or BatchingGenerator / DrawingGenerator for what those add).

    Cases are hashable values (frozen dataclasses, say): the shrinker remembers each verdict by case.
    """

    subset: str  # its name, as ``isasim fuzz --only`` takes it
    probe: str  # a one-line program of the subset: the subset runs where the other backend can run this
    weight: int = 1  # its share of the cases when several subsets run
    batches: bool = False  # its cases share programs (a BatchingGenerator)
    draws: bool = False  # it draws its own cases without hypothesis (a DrawingGenerator)

    def cases(self) -> Any:
        """The hypothesis strategy that draws one case."""
        raise NotImplementedError

    def program_and_init(self, case: Any) -> tuple[str, Init]:
        """The case on its own: program text and initial state."""
        raise NotImplementedError

    def size(self, case: Any) -> int:
        """Its instructions (what shrinking makes fewer)."""
        raise NotImplementedError

    def truncated(self, case: Any, index: int) -> Any:
        """The case ending right after its instruction ``index``."""
        raise NotImplementedError

    def count_executed(self, program: Program, init: Init, ranges: list[tuple[int, int]] | None,
                       config: dict) -> tuple[Counter, Counter]:
        """Instructions the simulator executed without a fault, by form, and the output elements they
        produced (by form; empty where that means nothing); only those at addresses in the sorted
        [start, end) ``ranges`` when given."""
        raise NotImplementedError

    def reductions(self, case: Any) -> Iterable:
        """Smaller cases to try in place of a divergent ``case``, the most promising first; by default its
        truncations (x86 AMX: the case cut after each instruction, shortest first, then the case less one
        statement)."""
        return (self.truncated(case, index) for index in range(self.size(case)))


class Batch(Protocol):
    """Many cases in one program (case i placed in slot i)."""

    program: Program
    init: Init
    bodies: list[tuple[int, int]]  # [start, end) of each case's own instructions, for counting

    def text(self) -> list[str]:
        """The program as lines that assemble back to the same code (for a trace)."""
        ...

    def case_of(self, report: Any) -> int | None:
        """Which case a divergence of the batch belongs to (None: cannot tell)."""
        ...


class BatchingGenerator(CaseGenerator):
    """A generator whose cases can share one program."""

    batches = True

    def batch_size(self, mode: str) -> int:
        raise NotImplementedError

    def place(self, case: Any, slot: int) -> Any:
        """The case moved to slot ``slot`` of a batch (its own memory, its own bookkeeping)."""
        raise NotImplementedError

    def batch(self, cases: list, mode: str) -> Batch:
        """One program running ``cases`` in turn; case i must be in slot i."""
        raise NotImplementedError


class DrawingGenerator(CaseGenerator):
    """A generator that also draws its cases without hypothesis (``draw``)."""

    draws = True

    def draw(self, n: int, seed: int) -> Iterable:
        """The first n cases of ``seed``: the same for the same seed, and the first k of them whatever n is
        (a lazy iterable lets the workers start on the first cases while the others are drawn)."""
        raise NotImplementedError
