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
from ...core.faults import Fault as CoreFault
from ...core.machine import DEFAULT_STEP_LIMIT
from ...core.memory import Memory
from ...core.program import Program
from ...core.trace import Init
from ..faults import ALIGNMENT, TRANSLATION, UNDEFINED
from .qemu import Fault, OracleError, has_sve, run_many
from .tools import clang_problem, qemu_problem

X30 = re.compile(r"\b[wx]30\b")  # named by an instruction: the harness's link register (RET alone is fine)


X_NAMES = tuple(f"x{n}" for n in range(31))
Z_NAMES = tuple(f"z{n}" for n in range(32))
P_NAMES = tuple(f"p{n}" for n in range(16))
# How a signal in the harness reads as an arm_sme fault kind (the names isasim.arm_sme raises).
FAULT_KINDS = {"SIGILL": UNDEFINED, "SIGSEGV": TRANSLATION, "SIGBUS": ALIGNMENT}
QEMU_ABORTED = "QEMU aborted"  # the run's "fault" when QEMU's process died without an answer


def program_snippet(program: Program, count: int | None = None) -> str:
    """The program's first ``count`` instructions (all by default) as ``.inst`` words."""
    words = [int.from_bytes(i.encoding, "little") for i in program.instructions[:count]]
    return "".join(f"\t.inst 0x{word:08x}\n" for word in words)


def oracle_state(init: Init) -> dict:
    """A trace's initial state in the oracle's terms (streaming mode and ZA off unless svcr says)."""
    regs = init.regs
    state = {"x": [regs.get(name, 0) for name in X_NAMES], "sp": regs.get("sp", 0),
             "nzcv": regs.get("nzcv", 0), "svcr": regs.get("svcr", 0),
             "regions": [(address, data, writable) for address, data, writable in init.memory]}
    arrays = init.arrays
    if any(name in arrays for name in Z_NAMES):
        state["z"] = [arrays.get(name) for name in Z_NAMES]
    if any(name in arrays for name in P_NAMES):
        state["p"] = [arrays.get(name) for name in P_NAMES]
    for name in ("za", "zt0"):
        if name in arrays:
            state[name] = arrays[name]
    return state


def _fill_defaults(state: dict, svl_bits: int) -> dict:
    svlb = svl_bits // 8
    state = dict(state)
    state["z"] = [data if data is not None else bytes(svlb) for data in state.get("z", [None] * 32)]
    state["p"] = [data if data is not None else bytes(svlb // 8) for data in state.get("p", [None] * 16)]
    return state


def observed(result: dict, init: Init, svl_bits: int) -> dict:
    """The oracle's end state as Isa.observe gives the simulator's: {"regs": ..., "arrays": ...}."""
    regs = dict(zip(X_NAMES, result["x"]))
    regs |= {"sp": result["sp"], "nzcv": result["nzcv"], "svcr": result["svcr"]}
    arrays = {"za": result["za"], "zt0": result["zt0"]}
    arrays |= dict(zip(Z_NAMES, result["z"])) | dict(zip(P_NAMES, result["p"]))
    arrays["ffr"] = init.arrays.get("ffr", bytes(svl_bits // 64))
    return {"regs": regs, "arrays": arrays}


def _memory(regions: list[tuple[int, bytes, bool]]) -> Memory:
    memory = Memory()
    for address, data, writable in regions:
        if data:
            memory.map(address, data, writable=writable)
    return memory


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
        if program is not None:
            for instruction in program.instructions:
                if X30.search(instruction.text):
                    return (f"instruction {instruction.index} ({instruction.text}) uses x30, which holds the QEMU "
                            f"harness's return address while the program runs")
        return qemu_problem() or clang_problem()

    def run(self, isa: str, config: dict, program: Program, init: Init, *,
            max_steps: int = DEFAULT_STEP_LIMIT, keep_records: bool = False) -> Outcome:
        svl = config["svl"]
        state = _fill_defaults(oracle_state(init), svl)
        try:
            (result,) = run_many([(program_snippet(program), state)], svl, timeout=self.timeout,
                                 sve=has_sve(config))
        except OracleError as error:
            if "ran longer than" in str(error):
                return Outcome({}, _memory(state["regions"]), CoreFault("timeout", str(error)), None, timed_out=True)
            if "gave no result" in str(error):
                # QEMU itself died on this program (an assertion in its helpers, say): that is its
                # answer, a divergence to report and for a fuzzer to shrink, not a crash of isasim.
                return Outcome({}, _memory(state["regions"]), CoreFault(QEMU_ABORTED, str(error)), None)
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
        return Outcome(observed(result, init, svl), _memory(result["regions"]), fault, steps=None)

    def lockstep(self, isa: str, config: dict, program: Program, init: Init, *, max_steps: int = DEFAULT_STEP_LIMIT):
        """Yield (index, pc, observed, memory, fault) after every instruction, as QEMU ran it."""
        from .lockstep import QemuSteps

        return iter(QemuSteps(self, config, program, init, max_steps))

    @staticmethod
    def _fault(fault: Fault, program: Program) -> CoreFault:
        kind = FAULT_KINDS.get(fault.signal, fault.signal)
        address = None if fault.signal == "SIGILL" else fault.address
        core = CoreFault(kind, f"{fault.signal} under QEMU", address=address)
        if fault.index is not None and fault.index < len(program.instructions):
            instruction = program.instructions[fault.index]
            core.index, core.pc, core.instruction = fault.index, instruction.address, instruction.text
        return core
