"""How big a case's run is, worked out from the case alone before anything is built, and the limits.

A case says every size in a few numbers (``batch_c: [1, 1, 1, 1000000000]`` is a billion batches of C),
so every allocation a run makes is sized from them first and refused, in one line naming the limit and
the sizes, when it would pass:

- ``MAX_GM_BYTES`` (256 MiB): the GM image a run maps: A, B, the bias, the quant words and C (also
  c_in), each rounded up as the kernel lays them out.  Every simulating machine holds one: the run's,
  the stepper's, or one per local worker with ``--workers N`` (so N images must fit); a run also keeps
  a few copies of C (the result, ``-o``), none larger than the image.
- ``MAX_TRACE_GM_BYTES`` (32 MiB, as ``isasim kernel``): with ``--trace`` the image, since a trace file
  carries every byte of it as hex.
- ``MAX_INSTRUCTIONS`` (250,000): the program; each instruction is a line of text and about 2 KB once
  assembled, and the simulator runs a few hundred to a few thousand a second.  A lower bound (the blocks
  C is cut into, times the fewest instructions a block takes for K) is checked before the program is
  written, and the count itself while it is written.
- ``MAX_SCHEDULER_STEPS`` (1,000,000): the block scheduler walks every C batch on every core, so
  ``tiling.blockDim`` x the batches.
- An array file is refused by its .npy header (shape and type) before its data is read, so a header
  that claims more than the case needs, or more than MAX_GM_BYTES, costs nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .qbmm_case import STORAGE, CaseError
from .qbmm_rules import dataflow

MAX_GM_BYTES = 256 * 2**20
MAX_TRACE_GM_BYTES = 32 * 2**20
MAX_INSTRUCTIONS = 250_000
MAX_SCHEDULER_STEPS = 1_000_000

GM_ALIGN = 0x1000  # each array's region starts on a page
GM_SLACK = 64  # DataCopy moves whole 32-byte blocks: a read may run up to 31 bytes past an array


def region_bytes(nbytes: int) -> int:
    """The GM one array takes in the kernel's layout: its bytes and the slack, to the next page."""
    return -(-(nbytes + GM_SLACK) // GM_ALIGN) * GM_ALIGN


@dataclass(frozen=True)
class KernelSize:
    """A case's run in numbers: its GM image, and lower bounds of its blocks and instructions."""

    gm_bytes: int
    blocks: int  # at least (a tail round may cut blocks further)
    instructions: int  # at least
    scheduler_steps: int

    def check(self, source: str, *, machines: int = 1, trace: bool = False) -> None:
        """Refuse (CaseError, one line) a run past a limit: ``machines`` simulating machines here, a trace
        written or not."""
        def refuse(message: str):
            raise CaseError(message, source=source)

        if self.gm_bytes * machines > MAX_GM_BYTES:
            each = f" on each of {machines} local workers" if machines > 1 else ""
            refuse(f"the kernel's GM image (A, B, bias, scales, C) is {self.gm_bytes:,} bytes{each}, more than "
                   f"the limit of {MAX_GM_BYTES:,} (MAX_GM_BYTES, {MAX_GM_BYTES // 2**20} MiB)")
        if trace and self.gm_bytes > MAX_TRACE_GM_BYTES:
            refuse(f"--trace writes the kernel's GM image ({self.gm_bytes:,} bytes) as hex, more than the limit of "
                   f"{MAX_TRACE_GM_BYTES:,} (MAX_TRACE_GM_BYTES, {MAX_TRACE_GM_BYTES // 2**20} MiB)")
        if self.instructions > MAX_INSTRUCTIONS:
            refuse(f"the kernel would be at least {self.instructions:,} instructions ({self.blocks:,} blocks), more "
                   f"than the limit of {MAX_INSTRUCTIONS:,} (MAX_INSTRUCTIONS): choose a larger tiling or a smaller "
                   f"problem")
        if self.scheduler_steps > MAX_SCHEDULER_STEPS:
            refuse(f"tiling.blockDim x the C batches is {self.scheduler_steps:,} (the scheduler walks every batch on "
                   f"every core), more than the limit of {MAX_SCHEDULER_STEPS:,} (MAX_SCHEDULER_STEPS)")


def gm_image_bytes(case) -> int:
    """The kernel's GM image from the case's numbers (nothing allocated, no array read): the arrays' sizes
    from the shapes the case gives them, C's from m, n and batch_c, the per-channel words from n."""
    def nbytes(key: str) -> int:
        return math.prod(case.shape_of(key)) * np.dtype(STORAGE[case.type_of(key)]).itemsize

    arrays = ["a", "b", "c"] + (["bias"] if case.has_bias else [])
    words = region_bytes(8 * case.n) if dataflow(case).scale == "channel" else 0
    return sum(region_bytes(nbytes(key)) for key in arrays) + words


def kernel_size(case, tiling) -> KernelSize:
    """The run's sizes from the case's numbers and its tiling (nothing allocated)."""
    t = tiling
    blocks = case.batch * -(-case.m // t.baseM) * -(-case.n // t.baseN)
    windows = -(-case.k // max(t.kAL1, t.kBL1))
    # each block: one Fixpipe; for each baseK slice of K a LoadData of A and of B and an Mmad; for each L1
    # window a copy of A and of B
    per_block = 1 + 3 * -(-case.k // t.baseK) + 2 * windows
    return KernelSize(gm_image_bytes(case), blocks, blocks * per_block, t.blockDim * case.batch)
