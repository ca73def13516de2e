"""The machine: an ISA's state, memory and a loaded program, stepped one instruction at a time.

``step()`` executes one instruction and returns a :class:`StepRecord` with every
state write it made (old and new values) or the fault it raised.  ``run()`` steps
until the program ends, faults, or exceeds its step limit.  Nothing here knows
which ISA it runs.
"""

from __future__ import annotations

import copy
import weakref
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import compiled as compiled_engine
from .errors import IsasimError, ProgramError, StepLimitExceeded
from .faults import Fault
from .isa import Isa, get_isa
from .journal import Journal, Write
from .memory import Memory
from .program import Instruction, Program

DEFAULT_STEP_LIMIT = 1_000_000

# The first step of translation (the execute contract of core.isa), shared by every machine that runs one
# Program object (the fuzzer and the benchmarks make a new Machine for each run of a program, which would
# otherwise translate every instruction again): ``Isa.prepare(instruction) -> bind(context)`` does the part
# that depends on the instruction alone once, and each machine only binds it to its own context.  By the
# program's id, while the program lives; each entry keeps the instruction it was made from.
_PREPARED: dict[int, tuple[weakref.ref, dict[int, tuple[Instruction, Callable]]]] = {}


def _prepared_for(program: Program) -> dict[int, tuple[Instruction, Callable]]:
    key = id(program)
    entry = _PREPARED.get(key)
    if entry is None or entry[0]() is not program:

        def forget(ref: weakref.ref, key: int = key) -> None:
            if _PREPARED.get(key, (None,))[0] is ref:
                del _PREPARED[key]

        entry = _PREPARED[key] = (weakref.ref(program, forget), {})
    return entry[1]


@dataclass
class StepRecord:
    index: int  # how many instructions ran before this one
    pc: int
    instruction: Instruction
    writes: list[Write] = field(default_factory=list)
    fault: Fault | None = None
    halted: bool = False  # the instruction ended the program (x86: RET)

    def describe(self) -> str:
        head = f"[{self.index}] {self.pc:#x}: {self.instruction.text}"
        lines = [head] + [f"    {w.describe()}" for w in self.writes]
        if self.fault is not None:
            lines.append(f"    fault {self.fault.kind}: {self.fault.rule}")
        return "\n".join(lines)


@dataclass
class RunResult:
    steps: int
    halted: bool
    fault: Fault | None
    records: list[StepRecord]


class Machine:
    """One ISA's machine, e.g. ``Machine("x86_amx", {"cpu": "emerald-rapids"})``.

    ``engine`` is what a plain ``run()`` uses: "compiled" (the ISA's compiled engine where it has one, the
    Python semantics for the rest; see core.compiled) or "python" (the Python semantics only).  Default: the
    ISASIM_ENGINE environment variable, else "compiled".  Stepping and recorded runs always use Python."""

    def __init__(self, isa: str | Isa, config: dict | None = None, *, engine: str | None = None):
        self.isa: Isa = get_isa(isa) if isinstance(isa, str) else isa
        self.config = self.isa.configure(config)
        self.engine = compiled_engine.chosen_engine(engine)
        self.journal = Journal()
        self.memory = Memory(self.journal)
        self.state = self.isa.new_state(self.config, self.journal)
        # what the ISA's semantics functions see (x86: state + memory + CPU model), made once
        self.context = self.isa.new_context(self.state, self.memory)
        self.program: Program | None = None
        self._translations: dict[int, Callable[[], int | None]] = {}
        self._prepared: dict[int, tuple[Instruction, Callable]] | None = None  # (see _PREPARED)
        self._compiled: compiled_engine.CompiledProgram | None | bool = False  # False: not asked for yet
        self.steps = 0
        self.halted = False
        self.fault: Fault | None = None

    # ---- building ----------------------------------------------------------
    def assemble(self, text: str, source: str = "<input>", base: int | None = None) -> Program:
        return self.isa.assemble(text, source=source, base=base)

    def load(
        self,
        program: Program,
        *,
        regs: dict[str, int] | None = None,
        memory: list[tuple[int, bytes, bool]] | None = None,
        arrays: dict[str, bytes] | None = None,
    ) -> None:
        """Load a program and the initial state: registers by name, memory regions as
        (address, bytes, writable), and the ISA's state arrays by name (``Isa.arrays``).
        Memory not given here is unmapped."""
        if program.isa != self.isa.name:
            raise IsasimError(f"program is for {program.isa}, machine is {self.isa.name}")
        self.program = program
        self._translations = {}  # a new program: nothing translated yet (by this machine)
        self._prepared = _prepared_for(program)
        self._compiled = False
        self.state.pc = program.base
        # the initial state is no step's writes: nothing is journalled (each ZA vector's record was most of the
        # cost of loading a fuzz case)
        enabled, self.journal.enabled = self.journal.enabled, False
        try:
            for address, data, writable in memory or []:
                self.memory.map(address, data, writable=writable)
            for name, value in (regs or {}).items():
                self.state.write_register(name, value)
            if arrays:
                self.isa.seed_arrays(self.state, arrays)
            self.isa.begin_program(self.state, program)
        finally:
            self.journal.enabled = enabled
        self.journal.take()
        self.steps = 0
        self.halted = False
        self.fault = None

    def load_init(self, program: Program, init) -> None:
        """Load a program and a trace's initial state (an :class:`isasim.core.trace.Init`)."""
        self.load(program, regs=init.regs, memory=init.memory, arrays=init.arrays)

    # ---- running -------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return self.halted or self.fault is not None

    def current_instruction(self) -> Instruction | None:
        if self.program is None:
            return None
        return self.program.at(self.state.pc)

    def _check_can_run(self) -> None:
        if self.program is None:
            raise ProgramError("no program is loaded")
        if self.finished:
            raise ProgramError("the program has already ended" + (" with a fault" if self.fault else ""))
        if self.state.pc == self.program.end:
            # Falling off the end of the code is the same as the final RET: the
            # silicon backend places a RET there.
            self.halted = True
            raise ProgramError("the program has already ended")

    def _translation(self, pc: int) -> Callable[[], int | None]:
        """The executable form of the instruction at ``pc``, translated on first use."""
        run = self._translations.get(pc)
        if run is None:
            instruction = self.program.at(pc)
            if instruction is None:
                raise ProgramError(f"pc {pc:#x} is not the start of an instruction of the program")
            made, bind = self._prepared.get(pc, (None, None))
            if made is not instruction:
                bind = self.isa.prepare(instruction)
                self._prepared[pc] = instruction, bind
            run = bind(self.context)
            self._translations[pc] = run
        return run

    def _faulted(self, pc: int, fault: Fault) -> None:
        """A fault leaves the pc on the instruction and names it."""
        instruction = self.program.at(pc)
        fault.index, fault.pc, fault.instruction = instruction.index, pc, instruction.text
        Exception.__init__(fault, fault.describe())
        self.fault = fault

    def _execute(self, pc: int) -> Fault | None:
        """Execute the instruction at ``pc`` and move the pc on; a fault leaves the pc on the instruction."""
        run = self._translation(pc)
        try:
            next_pc = run()
        except Fault as fault:
            self._faulted(pc, fault)
        else:
            end = self.program.end
            if next_pc is None or next_pc == end:
                self.halted = True
                next_pc = end if next_pc is None else next_pc
            self.state.pc = next_pc
        self.steps += 1
        return self.fault

    def step(self) -> StepRecord:
        self._check_can_run()
        pc = self.state.pc
        self._translation(pc)  # a pc that is no instruction is an error, not a step
        self.journal.take()
        record = StepRecord(self.steps, pc, self.program.at(pc))
        record.fault = self._execute(pc)
        record.halted = self.halted
        record.writes = self.journal.take()
        return record

    def _check_step_limit(self, max_steps: int) -> None:
        if self.steps >= max_steps:
            raise StepLimitExceeded(
                f"the run exceeded its step limit of {max_steps} instructions "
                f"(pc {self.state.pc:#x}); raise it with --max-steps if the program really needs more"
            )

    def run(self, max_steps: int = DEFAULT_STEP_LIMIT, *, keep_records: bool = False) -> RunResult:
        """Step until the program ends or faults.  More than ``max_steps`` steps is an error.

        Without ``keep_records`` nothing is recorded and no step record is made: the
        same translated instructions as ``step()`` run in a tight loop (the same
        steps as ``_execute``, inlined, since this loop is the simulator's hot path:
        calling ``_execute`` here costs the microkernel about 12% more instructions)."""
        records: list[StepRecord] = []
        if self.program is not None and self.state.pc == self.program.end:
            self.halted = True
        if self.finished:
            return RunResult(self.steps, self.halted, self.fault, records)
        if keep_records:
            while not self.finished:
                self._check_step_limit(max_steps)
                records.append(self.step())
            return RunResult(self.steps, self.halted, self.fault, records)
        if self.program is None:
            raise ProgramError("no program is loaded")
        return self._run_plain(self.compiled_program(), max_steps)

    def compiled_program(self) -> "compiled_engine.CompiledProgram | None":
        """The loaded program as the ISA's compiled engine runs it, or None (the python engine, no compiled
        engine for this ISA, or numba missing)."""
        if self._compiled is False:
            self._compiled = None
            if self.engine == "compiled" and self.program is not None:
                self._compiled = self.isa.compile_program(self.program, self.config)
        return self._compiled

    def use_compiled(self, compiled: "compiled_engine.CompiledProgram | None") -> None:
        """Run the loaded program's plain runs with this lowering of it (the tests: one made with a form forced
        off, or with a planted difference), or with the Python semantics only (None)."""
        self._compiled = compiled

    def _run_plain(self, compiled: "compiled_engine.CompiledProgram | None", max_steps: int) -> RunResult:
        """run() without records: the translated instructions in a tight loop and, with a compiled engine,
        compiled stretches between them; Python runs each instruction the compiled loop hands back (no compiled
        body, or one of its checks failed: a fault is always raised by Python)."""
        state, end, translations = self.state, self.program.end, self._translations
        self.journal.enabled = False
        pc, steps = state.pc, self.steps
        python_next = False  # the compiled loop handed this pc back: run it in Python once
        # a loop not loaded yet is loaded only once the run proves long (core.compiled.TIER_STEPS)
        if compiled is None:
            tier = max_steps + 1  # never
        else:
            tier = steps if compiled.ready() else steps + compiled_engine.TIER_STEPS
        try:
            while True:
                if steps >= max_steps:
                    self.steps = steps
                    self._check_step_limit(max_steps)
                if not python_next and steps >= tier and compiled.covers(pc):
                    pc, done, status = compiled.run(state, self.memory, pc, max_steps - steps)
                    steps += done
                    state.pc = pc
                    if status == compiled_engine.ENDED:
                        self.halted = True
                        break
                    python_next = status == compiled_engine.HANDBACK
                    continue
                python_next = False
                run = translations.get(pc) or self._translation(pc)
                next_pc = run()
                steps += 1
                if next_pc is None or next_pc == end:
                    self.halted = True
                    state.pc = end if next_pc is None else next_pc
                    break
                state.pc = pc = next_pc
        except Fault as fault:
            steps += 1
            self._faulted(pc, fault)
        finally:
            self.steps = steps
            self.journal.enabled = True
        return RunResult(self.steps, self.halted, self.fault, [])

    # ---- checkpoints (for stepping backwards) --------------------------------------------
    def checkpoint(self) -> "Checkpoint":
        """A copy of everything a step can change: the ISA state, the bytes of every mapped region, and the
        step count and end flags, so that :meth:`restore` can bring the machine back to exactly this point.

        Nothing here knows the ISA: the state is copied attribute by attribute.  Objects the state shares
        with the machine's context (the journal, the memory, the CPU model) are not copied, since a step
        never replaces them.  Take checkpoints between recorded steps (``step()``), where no ISA work is
        left waiting for a later read."""
        shared = {id(self.journal)} | {id(value) for value in getattr(self.context, "__dict__", {}).values()}
        memo = {key: value for key, value in ((id(v), v) for v in vars(self.state).values()) if key in shared}
        state = {name: copy.deepcopy(value, memo) for name, value in vars(self.state).items()
                 if id(value) not in shared}
        regions = [bytes(region.data) for region in self.memory.regions]
        return Checkpoint(self.steps, self.halted, self.fault, state, regions)  # a fault is never changed once raised

    def restore(self, checkpoint: "Checkpoint") -> None:
        """Bring the machine back to ``checkpoint`` (taken from this machine, with the same regions mapped).

        The state's arrays and lists are overwritten in place rather than replaced: the translated
        instructions hold the context, which holds these very objects, and a state may keep views into
        its own arrays (x86: one numpy view per tile), which must keep pointing at the live data."""
        if len(checkpoint.regions) != len(self.memory.regions):
            raise ProgramError("a checkpoint can only be restored into the machine it was taken from")
        for region, data in zip(self.memory.regions, checkpoint.regions):
            region.data[:] = data  # same length: regions are never resized
        for name, saved in checkpoint.state.items():
            current = getattr(self.state, name, None)
            if isinstance(current, np.ndarray) and isinstance(saved, np.ndarray) and current.shape == saved.shape:
                current[...] = saved
            elif (isinstance(current, list) and isinstance(saved, list) and len(current) == len(saved)
                  and all(isinstance(item, np.ndarray) for item in current)):
                for live, kept in zip(current, saved):
                    live[...] = kept
            elif isinstance(current, list) and isinstance(saved, list):
                current[:] = copy.deepcopy(saved)
            else:
                setattr(self.state, name, copy.deepcopy(saved))  # a copy: the checkpoint can be restored again
        self.journal.take()
        self.steps, self.halted, self.fault = checkpoint.steps, checkpoint.halted, checkpoint.fault


@dataclass
class Checkpoint:
    """The machine after ``steps`` instructions (see Machine.checkpoint)."""

    steps: int
    halted: bool
    fault: Fault | None
    state: dict
    regions: list[bytes]

    @property
    def size(self) -> int:
        """Roughly how many bytes the checkpoint holds (its memory copy dominates)."""
        return sum(len(data) for data in self.regions) + sum(
            value.nbytes if isinstance(value, np.ndarray) else 64 for value in self.state.values())
