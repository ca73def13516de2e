"""The ``qemu`` backend: an arm_sme program and its trace's initial state, run under QEMU.

The program's own instruction words go into the test program (``.inst``), so QEMU runs exactly
the bytes isasim decoded, and PC-relative branches land where they do in isasim (a branch to the
program's end reaches the harness's way back).  What the harness cannot observe is reported as
the initial state had it: FFR (no instruction reads it in streaming mode) and the PC.

A fault ends QEMU's run without a snapshot, so the state at a fault comes from a second run of
the instructions before the faulting one: faults are precise, so that is the state the fault saw.

Per-step states (``lockstep``: ``isasim diff --against qemu --lockstep``, ``isasim step --against
qemu``) come from prefix runs of the path isasim executed, straight-lined, with every branch's
decision checked on QEMU, many prefixes in one QEMU process: see :mod:`.lockstep` for the mechanism
and why it was chosen over QEMU's gdbstub.
"""

from __future__ import annotations

import re

from ...core.backends import Backend, Outcome
from ...core.errors import ConfigError
from ...core.faults import Fault as CoreFault
from ...core.machine import DEFAULT_STEP_LIMIT
from ...core.program import Program
from ...core.trace import Init
from .objects import compiled_function, is_object_program, object_steps, run_object
from .observation import QEMU_ABORTED, fill_defaults, harness_memory, observed, oracle_state, reported_fault
from .qemu import Fault, OracleError, has_sve, run_many
from .tools import clang_problem, qemu_problem

X30 = re.compile(r"\b[wx]30\b")  # named by an instruction: the harness's link register (RET alone is fine)


def program_snippet(program: Program, count: int | None = None) -> str:
    """The program's first ``count`` instructions (all by default) as ``.inst`` words."""
    words = [int.from_bytes(i.encoding, "little") for i in program.instructions[:count]]
    return "".join(f"\t.inst 0x{word:08x}\n" for word in words)


def _naming_x30(program: Program) -> str | None:
    """Why the snippet harness cannot run ``program`` (an instruction names x30, its return address), or None."""
    for instruction in program.instructions:
        if X30.search(instruction.text):
            return (f"instruction {instruction.index} ({instruction.text}) uses x30, which holds the QEMU "
                    f"harness's return address while the program runs")
    return None


def _may_be_a_compiled_function(program: Program) -> bool:
    """Whether ``program`` may be a compiled function's recorded trace, which the object harness runs when its
    init's x30 is the end of the code (run() decides, with the init): it saves x30 with the frame pointer."""
    return any(i.text.startswith("stp x29, x30, [sp") for i in program.instructions)


class QemuBackend(Backend):
    """qemu-aarch64 >= 10.1 at the trace's SVL, through isasim.arm_sme.oracle's harness."""

    name = "qemu"
    isa = "arm_sme"

    def __init__(self, timeout: float = 60.0):
        self.timeout = timeout

    def producer(self) -> str:
        """Who measured a trace recorded on this backend: QEMU's own version line."""
        import subprocess

        from .tools import find_qemu

        qemu, _tried = find_qemu()
        if qemu is None:
            return "qemu: (not found)"
        try:
            line = subprocess.run([qemu, "--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            line = ""
        return f"qemu: {(line.splitlines() or ['qemu-aarch64, version unknown'])[0].strip()} -cpu max"

    def measured_elsewhere(self, producer: str, config: dict) -> bool | None:
        """QEMU leaves nothing that arm_sme models as its own choice: its traces compare on every bit."""
        return False if producer.startswith("qemu: ") else None

    def unavailable_reason(self, isa: str, program: Program | None = None) -> str | None:
        if isa != self.isa:
            return f"the qemu backend runs arm_sme programs, not {isa}"
        if program is not None and not program.has_encoding:
            return "the program has no instruction words"
        if program is not None and not compiled_function(program):
            naming = _naming_x30(program)
            if naming is not None and not _may_be_a_compiled_function(program):
                return naming
        return qemu_problem() or clang_problem()

    def run(self, isa: str, config: dict, program: Program, init: Init, *,
            max_steps: int = DEFAULT_STEP_LIMIT, keep_records: bool = False) -> Outcome:
        if compiled_function(program) or is_object_program(program, init):
            # a function of an object file: its own words at isasim's addresses, under the object harness
            return run_object(program, init, config, self.timeout)
        if _naming_x30(program):
            raise ConfigError(f"backend 'qemu' cannot run this here: {_naming_x30(program)}")
        svl = config["svl"]
        state = fill_defaults(oracle_state(init), svl)
        try:
            (result,) = run_many([(program_snippet(program), state)], svl, timeout=self.timeout,
                                 sve=has_sve(config))
        except OracleError as error:
            if "ran longer than" in str(error):
                return Outcome({}, harness_memory(state["regions"]), CoreFault("timeout", str(error)), None,
                               timed_out=True)
            if "gave no result" in str(error):
                # QEMU itself died on this program (an assertion in its helpers, say): that is its
                # answer, a divergence to report and for a fuzzer to shrink, not a crash of isasim.
                return Outcome({}, harness_memory(state["regions"]), CoreFault(QEMU_ABORTED, str(error)), None)
            raise
        fault = None
        if isinstance(result, Fault):
            fault = self._fault(result, program)
            # The state the fault saw: the instructions before it, run again on their own.
            before = result.index if result.index is not None else 0
            (result,) = run_many([(program_snippet(program, before), state)], svl, timeout=self.timeout,
                                 sve=has_sve(config))
            if isinstance(result, Fault):
                raise OracleError(f"the program's first {before} instructions fault on their own: {result}")
        return Outcome(observed(result, init, svl), harness_memory(result["regions"]), fault, steps=None)

    def lockstep(self, isa: str, config: dict, program: Program, init: Init, *, max_steps: int = DEFAULT_STEP_LIMIT):
        """Yield (index, pc, observed, memory, fault) after every instruction, as QEMU ran it."""
        from .lockstep import QemuSteps

        if _naming_x30(program) and not (compiled_function(program) or is_object_program(program, init)):
            raise ConfigError(f"backend 'qemu' cannot run this here: {_naming_x30(program)}")
        if compiled_function(program) or is_object_program(program, init):
            # a compiled function: the object harness traps before every instruction (oracle/objects.py)
            return object_steps(program, init, config, self.timeout, max_steps)

        return iter(QemuSteps(self, config, program, init, max_steps))

    @staticmethod
    def _fault(fault: Fault, program: Program) -> CoreFault:
        core = reported_fault(fault)
        if fault.index is not None and fault.index < len(program.instructions):
            instruction = program.instructions[fault.index]
            core.index, core.pc, core.instruction = fault.index, instruction.address, instruction.text
        return core
