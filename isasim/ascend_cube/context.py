"""What the Ascend cube's semantics see: the state, GM and the run's configuration, in the docs' words.

Every access checks what the hardware checks, and raises the fault that names the rule:
a buffer access past the end (BUFFER_OVERFLOW), an address off its alignment (ALIGNMENT),
a GM byte no init region maps (GM_FAULT).
"""

from __future__ import annotations

import numpy as np

from isasim.core.faults import MemoryFault

from . import faults
from .config import ALIGNMENT
from .state import CTRL_FLOAT_NON_SATURATING, AscendState


class AscendContext:
    def __init__(self, state: AscendState, memory, config: dict):
        self.state, self.memory, self.config = state, memory, config
        self.chip = state.chip
        self.options = config["options"]

    # ---- buffers --------------------------------------------------------------------------------
    def check_aligned(self, buffer: str, offset: int, what: str) -> None:
        alignment = ALIGNMENT[buffer]
        if offset % alignment:
            raise faults.alignment(f"{what} {buffer}[{offset}] is not {alignment}-byte aligned "
                                   f"({buffer} addresses are multiples of {alignment} B)")

    def check_inside(self, buffer: str, offset: int, size: int, what: str) -> None:
        capacity = self.chip.buffers[buffer]
        if offset + size > capacity:
            raise faults.buffer_overflow(f"{what} {buffer}[{offset}] .. {buffer}[{offset + size - 1}] runs past "
                                         f"the end of {buffer} ({capacity} B on {self.chip.name})")

    def read(self, buffer: str, offset: int, size: int, what: str) -> np.ndarray:
        self.check_inside(buffer, offset, size, what)
        self.track(buffer, offset, size, write=False)
        return self.state.read_buffer(buffer, offset, size)

    def write(self, buffer: str, offset: int, data: np.ndarray, what: str) -> None:
        data = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        self.check_inside(buffer, offset, data.size, what)
        self.track(buffer, offset, data.size, write=True)
        self.state.write_buffer(buffer, offset, data)

    def track(self, space: str, offset: int, size: int, *, write: bool) -> None:
        """An access the race check must see (sync/race_check.py): ``space`` a buffer or "GM".  Every read and
        write above comes through here; a semantics function that reads GM another way says so itself."""
        pipes = self.state.pipes
        if pipes is not None:
            pipes.access(space, offset, size, write)

    # ---- GM -------------------------------------------------------------------------------------
    def gm_read(self, address: int, size: int) -> np.ndarray:
        self.track("GM", address, size, write=False)
        try:
            return np.frombuffer(self.memory.read(address, size), dtype=np.uint8).copy()
        except MemoryFault as fault:
            raise faults.gm_fault(fault) from None

    def gm_check(self, address: int, size: int, access: str = "read") -> None:
        """The GM_FAULT a read or write of these bytes would raise, touching nothing (an instruction checks
        every GM access before its first write)."""
        try:
            self.memory.check(address, size, access)
        except MemoryFault as fault:
            raise faults.gm_fault(fault) from None

    def gm_write(self, address: int, data: np.ndarray) -> None:
        self.track("GM", address, np.asarray(data).nbytes, write=True)
        try:
            self.memory.write(address, np.ascontiguousarray(data).view(np.uint8).tobytes())
        except MemoryFault as fault:
            raise faults.gm_fault(fault) from None

    # ---- control ----------------------------------------------------------------------------------
    def reg(self, name: str) -> int:
        return self.state.regs[name]

    def set_reg(self, name: str, value: int) -> None:
        self.state.set_reg(name, value)

    @property
    def float_saturating(self) -> bool:
        """CTRL[48] = 0: float results saturate (inf -> +-max, NaN -> 0); 1: inf and NaN pass through."""
        return not self.state.regs["ctrl"] & CTRL_FLOAT_NON_SATURATING

