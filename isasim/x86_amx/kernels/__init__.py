"""The seed article's AMX kernels, built from Python (``isasim kernel NAME``, ``examples/x86_amx/``).

- :mod:`.builder`: what a kernel is made of (Kernel, Assembly, the memory layout, the packing loops).
- :mod:`.article`: the kernels themselves (single block, batch, per block, the 32x32 microkernel and their
  BF16 variants), and ``build``, which checks a size before building one.

    from isasim.x86_amx import kernels
    k = kernels.int8_microkernel(count=32, K=1280)   # the article's M=1024, N=32, K=1280
    k.trace().program                                # assembly lines
"""

from ..state import tile_config
from .article import (BUILDERS, article_a, article_b, bf16_block, bf16_microkernel, build, int8_batch, int8_block,
                      int8_microkernel, int8_per_block, memory_bytes)
from .builder import (A_BASE, B_BASE, C_BASE, CFG, MAX_KERNEL_MEMORY_BYTES, Assembly, Kernel, KernelSizeError,
                      pack_b_bf16, pack_b_int8, to_bf16)

__all__ = ["BUILDERS", "article_a", "article_b", "bf16_block", "bf16_microkernel", "build", "int8_batch",
           "int8_block", "int8_microkernel", "int8_per_block", "memory_bytes", "A_BASE", "B_BASE", "C_BASE", "CFG",
           "MAX_KERNEL_MEMORY_BYTES", "Assembly", "Kernel", "KernelSizeError", "pack_b_bf16", "pack_b_int8",
           "to_bf16", "tile_config"]
