"""What an x86 kernel is made of, written from Python as a kernel author writes it in C: an Assembly of
commented lines, the memory regions and registers it starts from, its expected result, and the packing
loops of the seed article (B packed four INT8 or two BF16 K values per column)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ...core import numerics
from ...core.errors import ConfigError
from ...core.trace import Init, RegionView, Trace
from ..state import tile_config

CFG, A_BASE, B_BASE, C_BASE = 0x10000, 0x100000, 0x800000, 0xA00000
REGION_ALIGN = 0x1000  # a region moved to make room for a large one starts on a page

# The largest memory image (initial regions plus the expected C) a built kernel may carry.  Building one
# takes several times this in temporaries (the int64 reference product, the index grids) and the trace
# stores it again as hex, so this keeps `isasim kernel` within a workstation's memory; the article's
# largest problem (int8_microkernel --count 32 --k 1280) needs 1.5 MiB.
MAX_KERNEL_MEMORY_BYTES = 32 * 2**20


class KernelSizeError(ConfigError):
    """Kernel parameters outside what the kernel can be built with."""


# ---------------------------------------------------------------------------
# Layout helpers (the article's packing loops)
# ---------------------------------------------------------------------------


def pack_b_int8(b: np.ndarray) -> np.ndarray:
    """B (K x N int8) packed for TDPB*D: packed[k // 4][4n + k % 4] = b[k][n]; K padded with zeros to a multiple of 4."""
    K, N = b.shape
    padded = np.zeros((-(-K // 4) * 4, N), dtype=b.dtype)
    padded[:K] = b
    return padded.reshape(-1, 4, N).transpose(0, 2, 1).reshape(-1, 4 * N)


def pack_b_bf16(b: np.ndarray) -> np.ndarray:
    """B (K x N bf16 bit patterns) packed for TDPBF16PS: packed[k // 2][2n + k % 2] = b[k][n]; K padded to even."""
    K, N = b.shape
    padded = np.zeros((-(-K // 2) * 2, N), dtype=b.dtype)
    padded[:K] = b
    return padded.reshape(-1, 2, N).transpose(0, 2, 1).reshape(-1, 2 * N)


def to_bf16(values: np.ndarray) -> np.ndarray:
    """Exactly representable float values -> bf16 bit patterns."""
    bits = np.array([numerics.float_to_bf16_bits(float(v)) for v in values.ravel()], dtype=np.uint16)
    return bits.reshape(values.shape)


# ---------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------


@dataclass
class Kernel:
    name: str
    description: str
    lines: list[str]  # assembly, with comments
    init: Init
    expected: list[tuple[int, bytes]]  # (address, bytes) the run must leave in memory
    macs: int  # multiply-accumulates the kernel performs (for throughput figures)
    reference: np.ndarray | None = field(default=None, repr=False)  # the expected result matrix
    blocks: int = 1  # independent output blocks: the unit the kernel splits into parts by
    # blocks range -> (the program for that range, the registers it starts with); None: one part
    split: Callable[[range], tuple[list[str], dict[str, int]]] | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def parts(self, pieces: int) -> list:
        """The kernel as at most ``pieces`` independent parts (isasim.core.kernel_parallel): the same loop
        over a contiguous range of output blocks, its count and its A and C pointers set to that range;
        each part owns its blocks' rows of C, which the kernel writes contiguously."""
        from ...core.kernel_parallel import Part, block_ranges, contiguous

        c_address, c_bytes = self.expected[0]
        if self.split is None or self.blocks == 1:
            return [Part(self.name, tuple(self.lines), (contiguous(c_address, len(c_bytes)),))]
        per_block = len(c_bytes) // self.blocks
        result = []
        for group in block_ranges(self.blocks, pieces):
            lines, regs = self.split(group)
            result.append(Part(f"{self.name} blocks {group.start}..{group.stop - 1}", tuple(lines),
                               (contiguous(c_address + group.start * per_block, len(group) * per_block),), regs))
        return result

    def trace(self, producer: str | None = None) -> Trace:
        return Trace("x86_amx", list(self.lines), {"cpu": "emerald-rapids"},
                     producer or f"reference: {self.description}", self.init,
                     {"fault": None, "memory": list(self.expected)}, None, self.name)


class Assembly:
    """Collects assembly lines with their comments, as a kernel author writes them."""

    def __init__(self, title: str):
        self.lines = [f"# {line}" if line else "#" for line in title.splitlines()] + [".intel_syntax noprefix"]

    def __call__(self, instruction: str, comment: str = "") -> None:
        text = f"    {instruction}"
        self.lines.append(f"{text:<40}# {comment}" if comment else text)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")


def _layout(a_bytes: int, b_bytes: int) -> tuple[int, int, int]:
    """Where A, B and C go: the usual addresses, except that a region too large for the gap before the next
    one pushes the next one up (so the regions of a large kernel never overlap)."""
    def after(start: int, size: int) -> int:
        return -(-(start + size) // REGION_ALIGN) * REGION_ALIGN

    b_base = max(B_BASE, after(A_BASE, a_bytes))
    c_base = max(C_BASE, after(b_base, b_bytes))
    return A_BASE, b_base, c_base


def _region(name: str, address: int, data: np.ndarray, element: str, shape: tuple[int, int], *, show: bool = False):
    return (address, data.tobytes(), True), RegionView(name, address, element, shape, show)


THREE_FULL_TILES = {0: (16, 64), 1: (16, 64), 2: (16, 64)}  # C, A, B: 16 rows x 64 bytes each


def _config_region(shapes: dict[int, tuple[int, int]]):
    return _region("tilecfg", CFG, np.frombuffer(tile_config(shapes), dtype=np.uint8), "uint8", (1, 64))


def _init(regs: dict[str, int], regions: list) -> Init:
    return Init(regs, [r for r, _v in regions], [v for _r, v in regions])


def _int32_bytes(matrix: np.ndarray) -> bytes:
    """An int64 result as the hardware's wrapping int32 accumulators."""
    return ((matrix.astype(np.int64) + 2**31) % 2**32 - 2**31).astype(np.int32).tobytes()
