"""Architectural faults: the exceptions the simulated hardware raises.

A fault is part of an instruction's semantics.  The semantics function raises it
at the point where the vendor pseudocode raises it, after making whatever state
change the hardware makes first (an AMX TILELOADD that faults on row 8 leaves
``start_row = 8``).  :meth:`Machine.step` catches it, stamps it with the step
index, the pc and the instruction, and returns it in the step record.

Each ISA names its own kinds (x86: ``#UD``, ``#GP``, ``#PF``; Arm: ``UNDEFINED``;
Ascend: a named constraint).  The core only needs the fields below.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Fault(Exception):
    """An architectural fault raised by an instruction.

    kind:    the ISA's name for it, e.g. ``"#UD"``.
    rule:    the rule that was broken, in words, e.g. ``"tile tmm2 is not configured"``.
    address: the faulting memory address, for memory faults.
    access:  ``"read"`` or ``"write"``, for memory faults.
    index, pc, instruction: filled in by the machine that executed the instruction.
    """

    kind: str
    rule: str
    address: int | None = None
    access: str | None = None
    index: int | None = field(default=None, compare=False)
    pc: int | None = field(default=None, compare=False)
    instruction: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        Exception.__init__(self, self.describe())

    def describe(self) -> str:
        text = f"{self.kind}: {self.rule}"
        if self.instruction is not None:
            where = f"instruction {self.index}" if self.index is not None else "instruction"
            if self.pc is not None:
                where += f" at {self.pc:#x}"
            text = f"{self.kind} at {where} ({self.instruction}): {self.rule}"
        return text

    def __str__(self) -> str:
        return self.describe()


class MemoryFault(Fault):
    """An access to an address no mapped region covers (or a write to a read-only one).

    The core raises it with the ISA-neutral kind ``"memory"``; each ISA translates
    it into its own kind (x86: ``#PF``) in its step function.
    """

    def __init__(self, address: int, size: int, access: str, why: str = "is not mapped"):
        rule = f"{access} of {size} byte{'s' if size != 1 else ''} at {address:#x}: address {why}"
        super().__init__(kind="memory", rule=rule, address=address, access=access)
        self.size = size
