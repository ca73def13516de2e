"""Backends: things that run a program from an initial state and report the final state.

The simulator is one backend; real silicon (x86_amx on an AMX host), QEMU
(arm_sme) and published golden models are others with the same interface.  A
differential run is two backends, one program, one initial state, compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import ConfigError
from .faults import Fault
from .isa import get_isa
from .machine import DEFAULT_STEP_LIMIT, Machine, StepRecord
from .program import Program
from .trace import Init


@dataclass
class Outcome:
    """What a backend observed at the end of a run.

    observed: the ISA's observable state in trace terms (Isa.observe): {"regs": {name: int},
              "arrays": {name: bytes}}, plus whatever else the backend keeps for its ISA's hooks.
    memory:   the mapped memory at the end (is_mapped(address, size), read(address, size)).
    steps:    instructions run, or None where the backend does not count them (a free run on silicon).
    timed_out: the run was stopped by the backend's timeout.
    """

    observed: dict
    memory: object
    fault: Fault | None
    steps: int | None
    records: list[StepRecord] = field(default_factory=list)
    machine: Machine | None = None
    timed_out: bool = False

    def read_memory(self, address: int, size: int) -> bytes | None:
        if not self.memory.is_mapped(address, size):
            return None
        return self.memory.read(address, size)


class Backend:
    """What runs a program from an initial state and reports what it observed (a base class: an ISA's oracle
    backend subclasses it and registers itself with register_backend)."""

    name: str = ""
    isa: str | None = None  # the ISA whose programs it runs (None: every ISA's, as the simulator)

    def serves(self, isa: str) -> bool:
        """Whether it runs ``isa``'s programs."""
        return self.isa is None or self.isa == isa

    def unavailable_reason(self, isa: str, program: Program | None = None) -> str | None:
        """Why it cannot run ``program`` of ``isa`` here (a missing tool, a CPU without the feature), or None."""
        return None

    def run(self, isa: str, config: dict, program: Program, init: Init, *,
            max_steps: int = DEFAULT_STEP_LIMIT, keep_records: bool = False) -> Outcome:
        raise NotImplementedError

    def lockstep(self, isa: str, config: dict, program: Program, init: Init, *, max_steps: int = DEFAULT_STEP_LIMIT):
        """Yield (index, pc, observed, memory, fault) after every instruction; a backend that reports only the
        end of a run says so."""
        raise ConfigError(f"backend '{self.name}' reports only the end of a run, not every step: "
                          f"compare without --lockstep (and step without --against/--backend {self.name})")

    def producer(self) -> str:
        """Who measured a trace this backend records, as the trace's producer says it."""
        return f"isasim {self.name}"

    def measured_elsewhere(self, producer: str, config: dict) -> bool | None:
        """Whether expectations from ``producer`` were measured on another machine than ``config`` models, if
        this backend wrote them (None: not this backend's producer)."""
        return None


class SimulatorBackend(Backend):
    """isasim's own semantics."""

    name = "sim"

    def lockstep(self, isa: str, config: dict, program: Program, init: Init, *, max_steps: int = DEFAULT_STEP_LIMIT):
        """Yield (index, pc, observed, memory, fault) after every instruction."""
        machine = Machine(isa, config)
        machine.load_init(program, init)
        while not machine.finished and machine.steps < max_steps:
            if machine.state.pc == program.end:
                return
            record = machine.step()
            yield record.index, record.pc, machine.isa.observe(machine.state), machine.memory, record.fault

    def run(self, isa: str, config: dict, program: Program, init: Init, *,
            max_steps: int = DEFAULT_STEP_LIMIT, keep_records: bool = False) -> Outcome:
        machine = Machine(isa, config)
        machine.load_init(program, init)
        result = machine.run(max_steps, keep_records=keep_records)
        observed = machine.isa.observe(machine.state)
        return Outcome(observed, machine.memory, result.fault, result.steps, result.records, machine)


BACKENDS: dict[str, Backend] = {"sim": SimulatorBackend()}


def register_backend(backend: Backend) -> None:
    """ISA packages register their oracles (x86_amx: silicon) when they are imported."""
    BACKENDS[backend.name] = backend


def measured_elsewhere(producer: str, config: dict) -> bool:
    """Whether expectations from ``producer`` were measured on a machine other than the one ``config``
    models, as the backend that wrote them judges (its ``measured_elsewhere(producer, config)``; x86's
    silicon backend compares the CPU the producer names with the modelled CPU).  What the architecture
    leaves undefined is then that machine's choice, not a value the simulator claims.  A producer no
    backend recognises (the simulator, a reference model) measured nothing elsewhere."""
    for backend in BACKENDS.values():
        verdict = backend.measured_elsewhere(producer, config)
        if verdict is not None:
            return verdict
    return False


def lockstep(backend, isa: str, config: dict, program: Program, init: Init, *, max_steps: int = DEFAULT_STEP_LIMIT):
    """``backend``'s states after every instruction, or a ConfigError saying it only reports end states."""
    return backend.lockstep(isa, config, program, init, max_steps=max_steps)


def get_backend(name: str, isa: str, program: Program | None = None) -> Backend:
    get_isa(isa)  # importing the ISA registers its backends
    backend = BACKENDS.get(name)
    if backend is None:
        raise ConfigError(f"unknown backend '{name}' (known: {', '.join(BACKENDS)})")
    reason = backend.unavailable_reason(isa, program)
    if reason:
        raise ConfigError(f"backend '{name}' cannot run this here: {reason}")
    return backend
