"""What every arm_sme kernel is made of: the Kernel a builder returns (program, initial state, expected C,
and how it splits into parts), the assembly lines it is written in, the checks of its size and the layout
of its data in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...core.errors import ConfigError
from ...core.trace import Init, RegionView, Trace
from ..config import SVLS

A_BASE = 0x100000
REGION_ALIGN = 0x1000  # each region starts on its own page, after the one before it
MAX_KERNEL_MEMORY_BYTES = 32 * 2**20  # as for the AMX kernels: the trace carries every byte as hex


class KernelSizeError(ConfigError):
    """Kernel parameters outside what the kernel can be built with."""


@dataclass
class Kernel:
    name: str
    description: str
    lines: list[str]
    init: Init
    expected: list[tuple[int, bytes]]  # (address, bytes) the run must leave in memory
    macs: int
    svl: int
    reference: np.ndarray | None = field(default=None, repr=False)
    blocks: int = 1  # independent row blocks of C: the unit the kernel splits into parts by
    # row blocks range -> (the registers that start the same program on that range, the C bytes it writes)
    split: Callable[[range], tuple[dict[str, int], tuple]] | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def parts(self, pieces: int) -> list:
        """The kernel as at most ``pieces`` independent parts (isasim.core.kernel_parallel), by row block:
        the program is the same, its A and C pointers and its row count set to a contiguous range of row
        blocks (the loops count rows from the pointers, so a range runs as a smaller GEMM would)."""
        from ...core.kernel_parallel import Part, block_ranges, contiguous

        c_address, c_bytes = self.expected[0]
        if self.split is None or self.blocks == 1:
            return [Part(self.name, tuple(self.lines), (contiguous(c_address, len(c_bytes)),))]
        result = []
        for group in block_ranges(self.blocks, pieces):
            regs, owns = self.split(group)
            result.append(Part(f"{self.name} row blocks {group.start}..{group.stop - 1}", tuple(self.lines), owns,
                               regs))
        return result

    def trace(self, producer: str | None = None) -> Trace:
        return Trace("arm_sme", list(self.lines), {"svl": self.svl},
                     producer or f"reference (INT64 numpy): {self.description}", self.init,
                     {"fault": None, "memory": list(self.expected)}, None, self.name)


class Assembly:
    """Assembly lines with their comments."""

    def __init__(self, title: str):
        self.lines = [f"// {line}" if line else "//" for line in title.splitlines()]

    def __call__(self, instruction: str, comment: str = "") -> None:
        text = f"        {instruction}"
        self.lines.append(f"{text:<52}// {comment}" if comment else text)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")


def check_sizes(name: str, M: int, N: int, K: int, svl: int) -> None:
    if isinstance(svl, bool) or svl not in SVLS:
        raise KernelSizeError(f"{name}: --svl must be one of {', '.join(map(str, SVLS))}, not {svl}")
    for label, value in (("M", M), ("N", N), ("K", K)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise KernelSizeError(f"{name}: {label} must be a whole number of at least 1, not {value}")


def check_memory(name: str, needed: int) -> None:
    if needed > MAX_KERNEL_MEMORY_BYTES:
        raise KernelSizeError(f"{name}: this size needs {needed:,} bytes of memory in its trace, more than the "
                              f"limit of {MAX_KERNEL_MEMORY_BYTES:,} ({MAX_KERNEL_MEMORY_BYTES // 2**20} MiB)")


def contiguous_span(address: int, size: int):
    """The C bytes a part of a split kernel writes (core.kernel_parallel, imported only when a kernel is split)."""
    from ...core.kernel_parallel import contiguous

    return contiguous(address, size)


def _after(address: int, size: int) -> int:
    return -(-(address + size) // REGION_ALIGN) * REGION_ALIGN


def layout_regions(parts: list[tuple[str, np.ndarray, str, tuple[int, int], bool]]):
    """Consecutive page-aligned regions from A_BASE: (address of each, memory, views)."""
    address, addresses, memory, views = A_BASE, [], [], []
    for label, data, element, shape, show in parts:
        raw = np.ascontiguousarray(data).tobytes()
        addresses.append(address)
        memory.append((address, raw, True))
        views.append(RegionView(label, address, element, shape, show))
        address = _after(address, max(len(raw), 1))
    return addresses, memory, views
