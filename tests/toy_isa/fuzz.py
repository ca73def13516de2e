"""Fuzz generators of the toy ISA, for the tests of the ISA-neutral campaign engine (isasim.core.fuzz).

The cases are toy programs that add a few numbers into r0 and store it into the case's slot of OUT; the
other backend is a "shaky" simulator that gets r0 wrong on the programs a test picks (by default those
that add 200 or more), so that the engine has divergences to pin, shrink and write as traces, and their
smallest reproduction is known.  tests/core/fuzz/test_engine.py and tests/fuzz/test_fuzz_draw_engine.py
build their generators from these.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from hypothesis import strategies as st

from isasim.core.backends import SimulatorBackend
from isasim.core.generators import BatchingGenerator, CaseGenerator
from isasim.core.isa import get_isa
from isasim.core.machine import Machine
from isasim.core.trace import Init

OUT = 0x1000  # case i of a batch stores its r0 at OUT + 4 * i


@dataclass(frozen=True)
class Sum:
    """li r0, 0; addi r0, r0, v for each v; store r0 into the case's slot."""

    values: tuple[int, ...]
    slot: int = 0

    def body(self) -> list[str]:
        return ["li r0, 0", *(f"addi r0, r0, {v}" for v in self.values), f"li r1, {OUT + 4 * self.slot:#x}",
                "st r0, [r1]"]

    def init(self, slots: int = 1) -> Init:
        return Init({}, [(OUT, bytes(4 * max(slots, self.slot + 1)), True)])


def count_executed(program, init, ranges, config):
    machine = Machine("toy", config)
    machine.load(program, regs=init.regs, memory=init.memory)
    records = machine.run(keep_records=True).records
    counts = Counter(r.instruction.form.mnemonic for r in records if r.fault is None
                     and (ranges is None or any(start <= r.instruction.address < end for start, end in ranges)))
    return counts, Counter()


class Sums(CaseGenerator):
    """Cases one by one, drawn by hypothesis."""

    subset = "sums"
    probe = "halt"
    weight = 1

    def cases(self):
        return st.lists(st.integers(0, 255), min_size=1, max_size=6).map(lambda vs: Sum(tuple(vs)))

    def program_and_init(self, case: Sum) -> tuple[str, Init]:
        return "\n".join(case.body() + ["halt"]), case.init()

    def size(self, case: Sum) -> int:
        return len(case.values)

    def truncated(self, case: Sum, index: int) -> Sum:
        return Sum(case.values[: max(0, index)], case.slot)

    def count_executed(self, program, init, ranges, config):
        return count_executed(program, init, ranges, config)


@dataclass
class SumBatch:
    cases: list[Sum]
    program: object
    init: Init
    bodies: list[tuple[int, int]]
    lines: list[str]

    def text(self) -> list[str]:
        return self.lines

    def case_of(self, report) -> int | None:
        where = report.divergence.where
        if where.startswith("memory "):
            return (int(where.split()[1], 16) - OUT) // 4
        return None  # a register: any case may have left it so


class BatchedSums(Sums, BatchingGenerator):
    """The same cases, four to a program."""

    subset = "batched"
    weight = 3

    def batch_size(self, mode: str) -> int:
        return 4

    def place(self, case: Sum, slot: int) -> Sum:
        return Sum(case.values, slot)

    def batch(self, cases: list[Sum], mode: str) -> SumBatch:
        lines, spans = [], []
        for i, case in enumerate(cases):
            assert case.slot == i  # the engine places case i in slot i
            spans.append((len(lines), len(lines) + len(case.body())))
            lines += case.body()
        lines.append("halt")
        program = get_isa("toy").assemble("\n".join(lines))
        at = [ins.address for ins in program.instructions] + [program.end]
        return SumBatch(cases, program, Init({}, [(OUT, bytes(4 * len(cases)), True)]),
                        [(at[a], at[b]) for a, b in spans], lines)


def big_addend(program) -> bool:
    return any(ins.form.mnemonic == "addi" and ins.operands[-1] >= 200 for ins in program.instructions)


class Shaky(SimulatorBackend):
    """The simulator, but r0 ends one too high when ``wrong(program)`` (by default: it adds 200 or more)."""

    name = "shaky"

    def __init__(self, wrong=big_addend):
        self.wrong = wrong

    def run(self, isa, config, program, init, **options):
        final = super().run(isa, config, program, init, **options)
        if self.wrong(program):
            final.observed["regs"]["r0"] = (final.observed["regs"]["r0"] + 1) & 0xFFFFFFFF
        return final
