"""What an x86 semantics function sees: the state, memory and CPU model.

The helpers are named after the SDM's pseudocode vocabulary so that semantics
read like the manual: ``cpu.read_memory(address, n)``, ``raise UD("...")`` (the faults from faults.py).

Three things could be called "cpu"; each has its own name.  The semantics' ``cpu``
is this context (the simulated processor); ``cpu.model`` is the CpuModel it
simulates (features and limits), whose name is what a trace's config calls
``"cpu"``; the machine isasim itself runs on is the host (``oracle.host_cpu()``).
"""

from __future__ import annotations

from ..core.faults import MemoryFault
from ..core.memory import Memory
from .config import CpuModel
from .faults import PF, UD
from .operands import GPR_VIEWS, Mem
from .state import X86AmxState

ADDRESS_MASK = (1 << 64) - 1


class X86Context:
    def __init__(self, state: X86AmxState, memory: Memory, model: CpuModel):
        self.state = state
        self.memory = memory
        self.model = model

    def effective_address(self, mem: Mem, *, with_index: bool = True) -> int:
        """base + index*scale + disp, wrapped to 64 bits (without the index: base + disp); [rip+disp]: the
        address of the next instruction + disp, which the decoder resolved (the instruction's own place);
        fs:/gs: add fs_base or gs_base (the state's thread pointers)."""
        if mem.base == "rip":
            return mem.rip_target & ADDRESS_MASK
        address = mem.disp
        if mem.base:
            address += self.state.read_gpr(GPR_VIEWS[mem.base])
        if with_index and mem.index and mem.index != "riz":
            address += self.state.read_gpr(GPR_VIEWS[mem.index]) * mem.scale
        if mem.segment:  # fs:/gs:: the segment's base (the thread pointer) is added, as in 64-bit mode
            if mem.segment == "fs":
                address += self.state.fs_base
            elif mem.segment == "gs":
                address += self.state.gs_base  # (es: and ds: have base 0 in 64-bit mode)
        return address & ADDRESS_MASK

    def read_memory(self, address: int, size: int) -> bytes:
        try:
            return self.memory.read(address & ADDRESS_MASK, size)
        except MemoryFault as fault:
            raise PF(fault) from None

    def write_memory(self, address: int, data: bytes) -> None:
        try:
            self.memory.write(address & ADDRESS_MASK, data)
        except MemoryFault as fault:
            raise PF(fault) from None

    def require_feature(self, feature: str, mnemonic: str) -> None:
        if feature not in self.model.features:
            raise UD(f"{mnemonic} needs {feature}, which {self.model.name} does not have")
