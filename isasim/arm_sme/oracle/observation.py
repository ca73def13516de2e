"""What QEMU's harness takes and reports, in isasim's terms, for the final runs (backend.py) and the
lockstep runs (lockstep.py) alike: a trace's initial state as the harness's input, the harness's state
as ``Isa.observe`` gives the simulator's, its memory regions as a Memory, and the signal a run stopped
with as an arm_sme fault kind.
"""

from __future__ import annotations

from ...core.faults import Fault as CoreFault
from ...core.memory import Memory
from ...core.trace import Init
from ..faults import ALIGNMENT, TRANSLATION, UNDEFINED
from .qemu import Fault

X_NAMES = tuple(f"x{n}" for n in range(31))
Z_NAMES = tuple(f"z{n}" for n in range(32))
P_NAMES = tuple(f"p{n}" for n in range(16))
# How a signal in the harness reads as an arm_sme fault kind (the names isasim.arm_sme raises).
FAULT_KINDS = {"SIGILL": UNDEFINED, "SIGSEGV": TRANSLATION, "SIGBUS": ALIGNMENT}
QEMU_ABORTED = "QEMU aborted"  # the run's "fault" when QEMU's process died without an answer


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


def fill_defaults(state: dict, svl_bits: int) -> dict:
    """``state`` with every Z and P register the harness loads: zero where the trace gives none."""
    svlb = svl_bits // 8
    state = dict(state)
    state["z"] = [data if data is not None else bytes(svlb) for data in state.get("z", [None] * 32)]
    state["p"] = [data if data is not None else bytes(svlb // 8) for data in state.get("p", [None] * 16)]
    return state


def observed(result: dict, init: Init, svl_bits: int) -> dict:
    """The oracle's end state as Isa.observe gives the simulator's: {"regs": ..., "arrays": ...}."""
    regs = dict(zip(X_NAMES, result["x"]))
    regs |= {"sp": result["sp"], "nzcv": result["nzcv"], "svcr": result["svcr"],
             # the harness does not read TPIDR2_EL0 back: it reports the value the run started with
             "tpidr2_el0": result.get("tpidr2_el0", init.regs.get("tpidr2_el0", 0))}
    arrays = {"za": result["za"], "zt0": result["zt0"]}
    arrays |= dict(zip(Z_NAMES, result["z"])) | dict(zip(P_NAMES, result["p"]))
    arrays["ffr"] = init.arrays.get("ffr", bytes(svl_bits // 64))
    return {"regs": regs, "arrays": arrays}


def harness_memory(regions: list[tuple[int, bytes, bool]]) -> Memory:
    """The memory regions the harness reported (address, bytes, writable) as a Memory."""
    memory = Memory()
    for address, data, writable in regions:
        if data:
            memory.map(address, data, writable=writable)
    return memory


def reported_fault(fault: Fault) -> CoreFault:
    """A signal QEMU's run stopped with, as the arm_sme fault it stands for (SIGILL has no address)."""
    address = None if fault.signal == "SIGILL" else fault.address
    return CoreFault(FAULT_KINDS.get(fault.signal, fault.signal), f"{fault.signal} under QEMU", address=address)
