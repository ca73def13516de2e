"""Differential runs: one program, one initial state, two backends, compared.

``final`` mode compares the end states (registers, the ISA's arrays, every
init memory region, and the fault: kind and instruction index).  ``lockstep``
mode compares after every instruction and stops at the first instruction where
the two disagree, so a divergence names the instruction that caused it, the
location (register, array element, memory byte) and both values.

What is compared comes from the ISA: ``isa.undefined_after(token, instruction)``
follows what the executed instructions leave undefined (x86: flags such as IMUL's
SF/ZF/AF/PF), and ``isa.comparable(observed, token)`` leaves that out.  The walk
over the state is :mod:`isasim.core.compare`'s, the one ``replay`` uses too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .backends import get_backend, lockstep, measured_elsewhere
from .compare import Difference, array_difference, memory_difference, register_differences
from .errors import IsasimError
from .faults import Fault
from .isa import get_isa
from .machine import DEFAULT_STEP_LIMIT
from .program import Instruction, Program
from .trace import Init


Divergence = Difference  # what a diff calls a difference: the same type as replay's


@dataclass
class DiffReport:
    a: str
    b: str
    mode: str
    steps: int
    divergence: Difference | None = None
    a_fault: Fault | None = None
    b_fault: Fault | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return self.divergence is None


def _fault_view(fault: Fault | None) -> str:
    if fault is None:
        return "no fault"
    where = f" at instruction {fault.index}" if fault.index is not None else ""
    return f"{fault.kind}{where}"


def undefined_by(isa, executed: list[Instruction]):
    """What the architecture leaves undefined after running ``executed`` (the ISA's token)."""
    token = None
    for instruction in executed:
        token = isa.undefined_after(token, instruction)
    return token


def compare(isa, init: Init, undefined, obs_a: dict, mem_a, fault_a: Fault | None,
            obs_b: dict, mem_b, fault_b: Fault | None) -> Difference | None:
    """The first difference between two observed states, in reading order."""
    if _fault_view(fault_a) != _fault_view(fault_b):
        return Difference("fault", _fault_view(fault_a), _fault_view(fault_b),
                          detail=(fault_a.rule if fault_a else fault_b.rule) if (fault_a or fault_b) else "")
    regs_a, regs_b = obs_a.get("regs", {}), obs_b.get("regs", {})
    found = next(register_differences(isa, regs_a, regs_b, undefined, list(regs_a), compared_values=True), None)
    if found is not None:
        return found
    arrays_a, arrays_b = obs_a.get("arrays", {}), obs_b.get("arrays", {})
    for name in [*arrays_a, *(n for n in arrays_b if n not in arrays_a)]:  # the ISA's order
        found = array_difference(isa, name, arrays_a.get(name), arrays_b.get(name), obs_a)
        if found is not None:
            return found
    for address, data, _writable in init.memory:
        found = memory_difference(address, mem_a.read(address, len(data)) if mem_a is not None else None,
                                  mem_b.read(address, len(data)) if mem_b is not None else None)
        if found is not None:
            return found
    return None


def leaves_out_undefined(config: dict, *backends) -> bool:
    """Whether a comparison leaves out what the architecture leaves undefined: yes when a side is a machine
    other than the one the simulator models (its undefined values are its own choice), no when both are
    the modelled machine or the simulator, which claims those values.  replay.measured_elsewhere is the
    same rule for a trace, so `diff` and `replay` compare the same bits."""
    return any(measured_elsewhere(backend.producer(), config) for backend in backends)


def diff(isa_name: str, config: dict, program: Program, init: Init, *, a: str = "sim", b: str = "silicon",
         mode: str = "final", max_steps: int = DEFAULT_STEP_LIMIT) -> DiffReport:
    isa = get_isa(isa_name)
    config = isa.configure(config)
    backend_a, backend_b = get_backend(a, isa_name, program), get_backend(b, isa_name, program)
    masked = leaves_out_undefined(config, backend_a, backend_b)
    if mode == "final":
        fa = backend_a.run(isa_name, config, program, init, max_steps=max_steps, keep_records=a == "sim")
        fb = backend_b.run(isa_name, config, program, init, max_steps=max_steps, keep_records=b == "sim")
        simulated = fa if a == "sim" else fb if b == "sim" else None
        executed = ([r.instruction for r in simulated.records] if simulated is not None
                    else _executed(isa_name, config, program, init, max_steps))
        report = DiffReport(a, b, mode, len(executed), a_fault=fa.fault, b_fault=fb.fault)
        report.divergence = compare(isa, init, undefined_by(isa, executed) if masked else None,
                                    fa.observed, fa.memory, fa.fault,
                                    fb.observed, fb.memory, fb.fault)
        return report
    if mode != "lockstep":
        raise IsasimError(f"unknown diff mode '{mode}' (final or lockstep)")
    report = DiffReport(a, b, mode, 0)
    steps_a = lockstep(backend_a, isa_name, config, program, init, max_steps=max_steps)
    steps_b = lockstep(backend_b, isa_name, config, program, init, max_steps=max_steps)
    undefined = None
    try:
        while True:
            sa, sb = next(steps_a, None), next(steps_b, None)
            if sa is None and sb is None:
                return report
            if sa is None or sb is None:
                pc = (sb or sa)[1]
                went_on = f"ran another instruction at {pc:#x}"
                report.divergence = Difference("end of program", "ended" if sa is None else went_on,
                                               "ended" if sb is None else went_on)
                return report
            index, pc, obs_a, mem_a, fault_a = sa
            _, pc_b, obs_b, mem_b, fault_b = sb
            ins = program.at(pc)
            if ins is not None and masked:
                undefined = isa.undefined_after(undefined, ins)
            report.steps = index + 1
            report.a_fault, report.b_fault = fault_a, fault_b
            if pc != pc_b:
                report.divergence = Difference("pc", pc, pc_b, index=index, instruction=ins)
                return report
            found = compare(isa, init, undefined, obs_a, mem_a, fault_a, obs_b, mem_b, fault_b)
            if found is not None:
                found.index, found.instruction = index, ins
                report.divergence = found
                return report
            if fault_a is not None:
                return report
    finally:
        steps_a.close()
        steps_b.close()


def _executed(isa_name: str, config: dict, program: Program, init: Init, max_steps: int) -> list[Instruction]:
    """The instructions the simulator executes, in order (for what the ISA leaves undefined)."""
    from .machine import Machine

    machine = Machine(isa_name, config)
    machine.load_init(program, init)
    result = machine.run(max_steps, keep_records=True)
    return [r.instruction for r in result.records]
