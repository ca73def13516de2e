"""The worked example: one instruction run on a real machine, with what it saw before and after.

An explainer gives the program (set-up instructions, then the explained instruction
last), its registers and memory; :func:`run_example` runs the set-up, takes a
snapshot of the state, then steps the instruction with the memory noting every access
it makes (``Memory.record_accesses``: reads too, which the journal does not keep).  Every number a worked example shows is read from this run, so an
explanation cannot drift from what the simulator does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..machine import Machine, StepRecord
from .explainer import ExplainError
from .model import Cell, Code, Paragraph, Table


@dataclass
class ExampleRun:
    """A worked example's run: the machine after the explained step and what the step saw."""

    machine: Machine
    listing: list[str]  # the program, one "address: bytes text" line per instruction
    record: StepRecord | None = None  # the explained instruction's step (None: the set-up faulted)
    setup_fault: Any = None
    before: dict = field(default_factory=dict)  # the explainer's snapshot of the state just before the step
    reads: list[tuple[int, int]] = field(default_factory=list)  # (address, size), in the order the step read
    writes: list[tuple[int, bytes]] = field(default_factory=list)  # (address, bytes), in the order it wrote

    @property
    def fault(self):
        return self.setup_fault or (self.record.fault if self.record else None)


def _listing_line(instruction) -> str:
    code = instruction.encoding.hex(" ") if instruction.encoding is not None else ""
    return f"{instruction.address:#x}:  {code:<24} {instruction.text}"


def run_example(isa: str, source: str, *, config: dict, regs: dict, memory: list, max_steps: int,
                base: int | None = None, snapshot: Callable[[Any], dict] | None = None,
                before_step: Callable[[Machine], None] | None = None) -> ExampleRun:
    """Assemble ``source``, run it up to its last instruction (the explained one), then step that.

    ``snapshot(state)`` is what ``before`` holds (default: every register); ``before_step(machine)``
    may change the state first (a restartable instruction's progress marker, say).
    """
    machine = Machine(isa, config)
    program = machine.assemble(source, source="explain-setup", base=base)
    target = program.instructions[-1]
    machine.load(program, regs=regs, memory=memory)
    run = ExampleRun(machine, [_listing_line(i) for i in program.instructions])
    while machine.state.pc != target.address:
        if machine.steps >= max_steps:
            raise ExplainError(f"the setup did not reach the instruction within {max_steps} steps")
        record = machine.step()
        if record.fault is not None:
            run.setup_fault = record.fault
            return run
    if before_step is not None:
        before_step(machine)
    state = machine.state
    run.before = snapshot(state) if snapshot is not None else \
        {"regs": {name: state.read_register(name) for name in state.register_names()}}
    with machine.memory.record_accesses() as accesses:
        run.record = machine.step()
    run.reads = [(address, size) for what, address, size in accesses if what == "read"]
    run.writes = [(address, data) for what, address, data in accesses if what == "write"]
    return run


def setup_blocks(run: ExampleRun, note: str = "") -> list:
    """The example program as the explanation shows it."""
    return [Paragraph("The example program, run on the simulator up to the instruction, which is then stepped"
                      + (f" ({note})" if note else "") + ":"),
            Code("\n".join(run.listing))]


def fault_blocks(run: ExampleRun) -> list:
    """What the explanation says when the set-up or the instruction faulted."""
    fault = run.fault
    if run.setup_fault is not None:
        return [Paragraph(f"The setup did not reach the instruction: {fault.describe()}")]
    return [Paragraph("The machine raised a fault, so nothing after it was written:"),
            Table(["fault", "rule"], [[Cell(fault.kind, "bad"), fault.rule]])]
