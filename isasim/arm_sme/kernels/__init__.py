"""Arm SME2 integer GEMM kernels, C[M,N] += A[M,K] x B[K,N], written from Python as an SME kernel
author writes them, in the shape of :mod:`isasim.x86_amx.kernels`.

Each builder returns a :class:`Kernel`: the program (LLVM syntax, with comments), the initial
registers and named memory regions, and the expected C computed here with an INT64 numpy product
(then wrapped to the hardware's 32-bit accumulators) -- never by running isasim.  ``kernel.trace()``
is an isasim-trace whose expectation is that reference, so ``isasim run`` says PASS or FAIL.

    from isasim.arm_sme import kernels
    k = kernels.build("umopa_gemm", M=20, N=18, K=12, svl=512)
    k.trace()

SVL is the streaming vector length in bits; VL = SVL/8 bytes is one Z register and one ZA vector;
dim = SVL/32 is the number of 32-bit lanes of a vector (the rows and columns of a 32-bit tile).
Kg = ceil(K / kpl), where kpl is how many K values one 32-bit lane reduces (4 for bytes, 2 for
halfwords); K is padded with zeros to Kg * kpl, and zeros add nothing to a dot product.

Registers x0-x29 only: the QEMU harness holds its return address in x30.

kernel.py holds what every kernel is made of, packing.py its data; umopa_gemm.py and udot_gemm.py the
builders, which say how each packs A and B.
"""

from __future__ import annotations

from ..config import SVLS
from .kernel import Kernel, KernelSizeError
from .udot_gemm import udot16_gemm, udot_gemm, udot_indexed_gemm
from .umopa_gemm import umopa_gemm


BUILDERS = {"umopa_gemm": umopa_gemm, "udot_gemm": udot_gemm, "udot16_gemm": udot16_gemm,
            "udot_indexed_gemm": udot_indexed_gemm}


def build(name: str, count: int | None = None, K: int | None = None, M: int | None = None, N: int | None = None,
          svl: int | None = None) -> Kernel:
    """Kernel ``name`` at the given size (None: its default); a size it cannot be built with is refused with
    one line (KernelSizeError) before anything is allocated."""
    if name not in BUILDERS:
        raise KernelSizeError(f"no arm_sme kernel named {name!r} (known: {', '.join(BUILDERS)})")
    if count is not None:
        raise KernelSizeError(f"{name}: arm_sme kernels take --m, --n and --k, not --count")
    if svl is not None and not isinstance(svl, int):
        # only the spellings of the SVLs themselves: int() would also take "٥١٢" and "5_12"
        by_text = {str(value): value for value in SVLS}
        if str(svl) not in by_text:
            raise KernelSizeError(f"{name}: --svl must be one of {', '.join(map(str, SVLS))}, not {str(svl)[:40]!r}")
        svl = by_text[str(svl)]
    options = {key: value for key, value in (("M", M), ("N", N), ("K", K), ("svl", svl)) if value is not None}
    return BUILDERS[name](**options)
