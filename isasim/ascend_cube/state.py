"""The Ascend cube's architectural state: the on-chip buffers and the control registers.

GM is the core's sparse memory (the machine's ``memory``).  The buffers L1, L0A, L0B, L0C,
the bias table BT and the fixpipe buffer FB are byte arrays (numpy uint8) of the chip's
sizes; every write goes through :meth:`AscendState.write_buffer`, which records the bytes
it changed in the journal (``l0c[1024]``: the byte offset the write starts at).

The control state instructions read is kept as registers, so traces, ``p`` and ``w``
treat it like any ISA's registers:

- ``quant_pre``: the scalar 64-bit quant word (SetFixpipePreQuantFlag).
- ``fpc``: the FB byte offset of the per-channel quant words (SetFixPipeConfig).
- ``atomic``: the atomic-add mode of GM writes, an index into :data:`ATOMIC_MODES` (0 none).
- ``ctrl``: the CTRL register; bit 48 set makes float results non-saturating (inf/NaN pass).
"""

from __future__ import annotations

import numpy as np

from isasim.core.errors import ConfigError, IsasimError
from isasim.core.journal import Journal, Location

from .config import BUFFER_NAMES, CHIPS

REGISTER_NAMES = ("quant_pre", "fpc", "atomic", "ctrl")
REGISTER_BITS = {"quant_pre": 64, "fpc": 32, "atomic": 8, "ctrl": 64}
ATOMIC_MODES = ("none", "float32", "float16", "bfloat16", "int32", "int16", "int8")
CTRL_FLOAT_NON_SATURATING = 1 << 48
_REGISTER_LOCATIONS = {name: Location(name) for name in REGISTER_NAMES}


def array_name(buffer: str) -> str:
    """A buffer's name in traces and commands: lower case (``L0C`` -> ``l0c``)."""
    return buffer.lower()


class AscendState:
    def __init__(self, journal: Journal, config: dict):
        self.journal = journal
        self.config = config
        self.chip = CHIPS[config["chip"]]
        self.buffers = {name: np.zeros(self.chip.buffers[name], dtype=np.uint8) for name in BUFFER_NAMES}
        self.regs = {name: 0 for name in REGISTER_NAMES}
        self.pc = 0
        # the run's pipes, flags and race check (sync/pipe_model.py), made when a machine loads a program;
        # None for a lone instruction (explain)
        self.pipes = None

    # ---- what the core asks for ------------------------------------------------------------
    def register_names(self) -> list[str]:
        return [*REGISTER_NAMES, "pc"]

    def read_register(self, name: str) -> int:
        name = name.lower()
        if name == "pc":
            return self.pc
        self._check_register(name)
        return self.regs[name]

    def write_register(self, name: str, value: int) -> None:
        name = name.lower()
        if name == "pc":
            raise IsasimError("pc is set by the program's start, not by init.regs")
        self._check_register(name)
        if name == "atomic" and not 0 <= value < len(ATOMIC_MODES):
            raise IsasimError(f"atomic is 0..{len(ATOMIC_MODES) - 1} ({', '.join(ATOMIC_MODES)}), not {value}")
        self.set_reg(name, value)

    @staticmethod
    def _check_register(name: str) -> None:
        if name not in REGISTER_NAMES:
            raise IsasimError(f"unknown register '{name}' (ascend_cube has {', '.join(REGISTER_NAMES)} and pc)")

    # ---- what the semantics use ---------------------------------------------------------------
    def set_reg(self, name: str, value: int) -> None:
        old, new = self.regs[name], value % (1 << REGISTER_BITS[name])
        self.regs[name] = new
        self.journal.record("reg", _REGISTER_LOCATIONS[name], old, new)

    def read_buffer(self, buffer: str, offset: int, size: int) -> np.ndarray:
        """A copy of ``size`` bytes of ``buffer`` from ``offset`` (the caller has checked the bounds)."""
        return self.buffers[buffer][offset : offset + size].copy()

    def write_buffer(self, buffer: str, offset: int, data: np.ndarray | bytes) -> None:
        data = np.frombuffer(bytes(data), dtype=np.uint8) if isinstance(data, (bytes, bytearray)) else \
            np.ascontiguousarray(data).view(np.uint8).reshape(-1)
        target = self.buffers[buffer]
        if not self.journal.enabled:  # a run without records (and a load): no old and new bytes to keep
            target[offset : offset + data.size] = data
            return
        old = target[offset : offset + data.size].tobytes()
        target[offset : offset + data.size] = data
        self.journal.record("array", Location(array_name(buffer), offset), old, data.tobytes())

    # ---- arrays (traces) --------------------------------------------------------------------------
    def buffer_bytes(self, buffer: str) -> bytes:
        return self.buffers[buffer].tobytes()

    def seed_buffer(self, buffer: str, data: bytes) -> None:
        size = self.buffers[buffer].size
        if len(data) != size:
            raise ConfigError(f"init.arrays.{array_name(buffer)}: {buffer} is {size} bytes on "
                              f"{self.chip.name}, not {len(data)}")
        self.write_buffer(buffer, 0, data)
