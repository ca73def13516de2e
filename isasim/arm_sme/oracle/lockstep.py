"""QEMU's state after every instruction, for ``isasim diff --against qemu --lockstep`` (and ``step --against``).

The mechanism: straight-lined prefix runs, many in one QEMU process
    QEMU runs a snippet and reports the state at its end (oracle.qemu.run_many), so the state after
    step k is what QEMU leaves after running the first k+1 instructions of the path.  A program with
    branches or loops is not a static prefix of itself: the path is the one isasim executed, written
    out as a straight line (a loop body once per iteration), each branch replaced by a NOP.  That is
    sound up to the first divergence: while the two states are equal, QEMU would have made the
    branch decision isasim made.  It is not assumed, though: every branch on the path is run by
    QEMU too, re-aimed so that its decision shows in the state (see ``_branch_check``), so a wrong
    branch in isasim is found at the next step as a different pc.

    Prefixes are run a chunk at a time (8, 16, 32, then 64 steps), and the core stops reading at the
    first divergence, so a divergence early in a long loop costs one small build.  A chunk starts
    from the state QEMU itself reported at the end of the previous chunk (a checkpoint), so the
    snippets of a long loop stay at most a chunk long: the oracle's state transfer carries every
    register, vector, predicate, ZA, ZT0 and memory region.  It loses x30 while a snippet runs (it
    holds the return address) and Z/P/ZA when a mode is off (the dump turns the modes back on), so a
    checkpoint is taken only where both modes are on and the program has left x30 alone; otherwise
    the next chunk runs from the earlier checkpoint.

    A fault at step k is the prefix ending in instruction k stopping with a signal: reported at step k
    with the state before it (faults are precise), as the simulator reports it.

Why not QEMU's gdbstub: single-stepping over the GDB remote protocol would run the real program,
but it needs a free TCP port and a protocol client per run, and its state would come through a
second read-out path (gdb's register and memory packets, ZA as gdb's SME feature lays it out)
instead of the harness that final runs and the golden traces use.  Prefix runs read every state
through that one harness, so a lockstep run and a final run of the same program agree bit for bit.

What straight-lining cannot reproduce is refused with one error line: an instruction that reads
the pc other than a branch (ADR, a literal load: the snippet's addresses are not the program's),
a branch that writes a register (BL's link would be the snippet's address), and a branch to a
register (BR: the address is the program's, not the snippet's).

What the harness cannot see is as in a final run: after a step that leaves PSTATE.ZA off, ZA and
ZT0 read back as the dump's SMSTART zeroed them (isasim keeps them), so a program that turns ZA off
shows that difference at that step.

Cost: one zig build and one QEMU process per chunk; about 50 ms per step of a long loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core.errors import ConfigError
from ...core.faults import Fault as CoreFault
from ...core.machine import DEFAULT_STEP_LIMIT, Machine
from ...core.program import Instruction, Program
from ...core.trace import Init
from .observation import QEMU_ABORTED, fill_defaults, harness_memory, observed, oracle_state, reported_fault
from .qemu import Fault, OracleError, has_sve, run_many

NOP = 0xD503201F
CHUNK_SIZES = (8, 16, 32, 64)  # steps per QEMU run: small first (an early divergence is cheap), then 64
X30 = 30
BOTH_MODES_ON = 3  # SVCR: SM and ZA


@dataclass(frozen=True)
class PathStep:
    """One instruction isasim executed, and where it went next."""

    instruction: Instruction
    pc: int
    next_pc: int
    fault: CoreFault | None
    branch_field: tuple[str, int] | None  # a branch's target field (name, bits), or None


def branch_field(instruction: Instruction) -> tuple[str, int] | None:
    """The target field of a branch, None for an instruction that does not branch; a ConfigError for
    an instruction outside the control group that reads the pc."""
    form = instruction.form
    targets = [operand for operand in form.operands if getattr(operand, "kind", None) == "target"]
    if not targets:
        return None
    if form.group != "control":
        raise ConfigError(f"instruction {instruction.index} ({instruction.text}) reads the pc: lockstep against "
                          f"qemu runs the executed path as a straight line, where the pc is not the program's")
    return targets[0].field, targets[0].bits


def executed_path(config: dict, program: Program, init: Init, max_steps: int) -> list[PathStep]:
    """The instructions isasim runs, in order, up to and including a faulting one."""
    machine = Machine("arm_sme", config)
    machine.load_init(program, init)
    path: list[PathStep] = []
    while not machine.finished and machine.steps < max_steps and machine.state.pc != program.end:
        record = machine.step()
        field = branch_field(record.instruction) if record.fault is None else None
        if field is not None and any(str(write.where) != "pc" for write in record.writes):
            raise ConfigError(f"instruction {record.instruction.index} ({record.instruction.text}) writes a register "
                              f"as it branches: a straight-lined path cannot reproduce it under qemu")
        went = machine.state.pc
        if field is None and record.fault is None and went not in (record.pc + 4, program.end):
            raise ConfigError(f"instruction {record.instruction.index} ({record.instruction.text}) branches to a "
                              f"register's address: a straight-lined path cannot reproduce it under qemu")
        path.append(PathStep(record.instruction, record.pc, went, record.fault, field))
    return path


def _word(instruction: Instruction) -> int:
    return int.from_bytes(instruction.encoding, "little")


def _straight(path: list[PathStep]) -> list[int]:
    """The path's words with each branch a NOP (the next word is where the branch went)."""
    return [NOP if step.branch_field is not None else _word(step.instruction) for step in path]


def _movz_x30(value: int) -> int:
    return 0xD2800000 | (value << 5) | X30


def _branch_check(step: PathStep, marker: int) -> list[int]:
    """The branch re-aimed two words on, over a MOVZ x30, #marker: taken, x30 keeps its value; not
    taken, it reads back as the marker."""
    name, bits = step.branch_field
    encoding = step.instruction.form.encoding
    box = encoding.fields[name]
    word = _word(step.instruction) & ~(((1 << bits) - 1) << box.low) | box.put(2)
    return [word, _movz_x30(marker)]


def _snippet(words: list[int]) -> str:
    return "".join(f"\t.inst 0x{word:08x}\n" for word in words)


def _as_input(result: dict) -> dict:
    """A state QEMU reported, as the oracle's input for the next chunk."""
    keys = ("x", "sp", "nzcv", "svcr", "z", "p", "za", "zt0", "regions")
    return {key: result[key] for key in keys if key in result}


class QemuSteps:
    """The generator behind QemuBackend.lockstep: (index, pc, observed, memory, fault) per step."""

    def __init__(self, backend, config: dict, program: Program, init: Init, max_steps: int = DEFAULT_STEP_LIMIT):
        self.backend, self.config, self.program, self.init = backend, config, program, init
        self.svl = config["svl"]
        self.path = executed_path(config, program, init, max_steps)
        self.initial = fill_defaults(oracle_state(init), self.svl)

    def _observed(self, result: dict):
        return observed(result, self.init, self.svl), harness_memory(result["regions"])

    def _fault(self, fault: Fault, step: PathStep) -> CoreFault:
        core = reported_fault(fault)
        core.index, core.pc, core.instruction = step.instruction.index, step.pc, step.instruction.text
        return core

    @staticmethod
    def _aborted(error: OracleError, step: PathStep) -> CoreFault:
        core = CoreFault(QEMU_ABORTED, str(error))
        core.index, core.pc, core.instruction = step.instruction.index, step.pc, step.instruction.text
        return core

    def _run(self, cases: list[tuple[list[int], dict]]) -> list[dict | Fault | OracleError]:
        """QEMU's results, in order.  If QEMU dies without an answer, the cases run again one at a time
        (a build each: rare) to find the one it dies on, whose result is then that OracleError."""
        snippets = [(_snippet(words), state) for words, state in cases]
        try:
            return run_many(snippets, self.svl, timeout=self.backend.timeout, sve=has_sve(self.config))
        except OracleError as error:
            if "gave no result" not in str(error):
                raise
        results: list = []
        for snippet in snippets:
            try:
                results += run_many([snippet], self.svl, timeout=self.backend.timeout,
                                    sve=has_sve(self.config))
            except OracleError as error:
                if "gave no result" not in str(error):
                    raise
                return results + [error]
        return results

    def __iter__(self):
        base, base_state = 0, self.initial  # the checkpoint: the steps from base on run from base_state
        before = None  # QEMU's state before the next step (after the empty snippet, at first)
        start, chunk = 0, 0
        while start < len(self.path):
            stop = min(start + CHUNK_SIZES[min(chunk, len(CHUNK_SIZES) - 1)], len(self.path))
            # The state before the first step, as QEMU reports it: what a fault or a branch there shows.
            cases = [([], base_state)] if before is None else []
            markers = {}
            for k in range(start, stop):
                lead, step = _straight(self.path[base:k]), self.path[k]
                if step.branch_field is not None:
                    avoid = {base_state["x"][X30], (before or base_state)["x"][X30]}
                    markers[k] = next(m for m in (0x5A5A, 0xA5A5, 0x1234) if m not in avoid)
                    cases.append((lead + _branch_check(step, markers[k]), base_state))
                else:
                    cases.append((lead + [_word(step.instruction)], base_state))
            results = self._run(cases)
            if before is None:
                before, results = results[0], results[1:]
                if isinstance(before, (Fault, OracleError)):
                    raise OracleError(f"QEMU fails before the program's first instruction: {before}")
            for k, result in zip(range(start, stop), results):
                step = self.path[k]
                if isinstance(result, OracleError):  # QEMU died on this step: its answer, as in a final run
                    yield (k, step.pc, *self._observed(before), self._aborted(result, step))
                    return
                if isinstance(result, Fault):
                    if result.index != k - base:
                        raise OracleError(f"QEMU faulted away from step {k}'s instruction: {result}")
                    yield (k, step.pc, *self._observed(before), self._fault(result, step))
                    return
                if step.branch_field is None:
                    before = result
                    yield (k, step.pc, *self._observed(result), None)
                    continue
                yield (k, step.pc, *self._observed(before), None)  # a branch changes no register
                went = self._target(step) if result["x"][X30] != markers[k] else step.pc + 4
                if went != step.next_pc:
                    # QEMU branches elsewhere: its next instruction (or its end) is the divergence.
                    if went != self.program.end:
                        yield (k + 1, went, *self._observed(before), None)
                    return
            start, chunk = stop, chunk + 1
            if before["svcr"] == BOTH_MODES_ON and before["x"][X30] == base_state["x"][X30]:
                base, base_state = start, _as_input(before)

    @staticmethod
    def _target(step: PathStep) -> int:
        """Where the branch goes when taken."""
        name = step.branch_field[0]
        fields = step.instruction.form.encoding.unpack(_word(step.instruction))
        operand = next(operand for operand in step.instruction.form.operands
                       if getattr(operand, "kind", None) == "target" and operand.field == name)
        return step.pc + operand.value(fields)
