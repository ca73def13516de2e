"""The data of the arm_sme GEMM kernels: random operands, the INT64 reference product (never isasim), and the
packing of A and B into the VL-byte panels the kernels load with one LD1B each.
"""

from __future__ import annotations

import numpy as np

PAD_BYTE = 0xA5  # lanes past M or N in the UMOPA panels: nonzero, so a missing predicate shows


def operands(M: int, N: int, K: int, element_bits: int, seed: int = 12):
    """Unsigned A (M x K), B (K x N) of ``element_bits`` and a random int32 C0 to accumulate into."""
    rng = np.random.default_rng(seed)
    dtype = np.uint8 if element_bits == 8 else np.uint16
    high = 1 << element_bits
    a = rng.integers(0, high, size=(M, K)).astype(dtype)
    b = rng.integers(0, high, size=(K, N)).astype(dtype)
    c0 = rng.integers(-2**31, 2**31, size=(M, N)).astype(np.int32)
    return a, b, c0


def reference(a: np.ndarray, b: np.ndarray, c0: np.ndarray) -> np.ndarray:
    """C0 + A x B in INT64, then as the 32-bit accumulators hold it (wrapping mod 2^32)."""
    exact = c0.astype(np.int64) + a.astype(np.int64) @ b.astype(np.int64)
    return ((exact + 2**31) % 2**32 - 2**31).astype(np.int32)


def pack_a_panels(a: np.ndarray, dim: int, kpl: int, pad: int = 0) -> np.ndarray:
    """a_panel[rb][g][i*kpl + kk] = A[rb*dim + i][kpl*g + kk]: [row blocks][Kg][dim*kpl]."""
    M, K = a.shape
    blocks, groups = -(-M // dim), -(-K // kpl)
    padded = np.full((blocks * dim, groups * kpl), pad, dtype=a.dtype)
    padded[:, K:] = 0  # the K padding must add nothing, whatever the row
    padded[:M, :K] = a
    return padded.reshape(blocks, dim, groups, kpl).transpose(0, 2, 1, 3).reshape(blocks, groups, dim * kpl)


def pack_b_panels(b: np.ndarray, dim: int, kpl: int, pad: int = 0) -> np.ndarray:
    """b_panel[cb][g][j*kpl + kk] = B[kpl*g + kk][cb*dim + j]: [column blocks][Kg][dim*kpl]."""
    return pack_a_panels(np.ascontiguousarray(b.T), dim, kpl, pad)


def pack_a_broadcast(a: np.ndarray, dim: int, kpl: int) -> np.ndarray:
    """a_bcast[q][g][r][j*kpl + kk] = A[4q + r][kpl*g + kk] for every lane j: [Mp/4][Kg][4][dim*kpl]."""
    M, K = a.shape
    quads, groups = -(-M // 4), -(-K // kpl)
    padded = np.zeros((quads * 4, groups * kpl), dtype=a.dtype)
    padded[:M, :K] = a
    rows = padded.reshape(quads, 4, groups, kpl).transpose(0, 2, 1, 3)  # [q][g][r][kk]
    return np.ascontiguousarray(np.broadcast_to(rows[:, :, :, None, :], (quads, groups, 4, dim, kpl))
                                ).reshape(quads, groups, 4, dim * kpl)
