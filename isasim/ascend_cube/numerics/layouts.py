"""The cube unit's fractal layouts (Zz, Zn, Nz) and their inverses, on numpy element arrays.

A fractal is the block the cube reads at once: 16 rows of 32 bytes in L1/L0A/L0B, so
16 x 16 for fp16/bf16, 16 x 32 for int8/fp8/hifloat8 and 16 x 8 for fp32/int32
(``fractal_shape``); L0C's fractal is fixed at 16 x 16 (``L0C_FRACTAL``). A matrix is
padded with zeros to whole fractals and its elements reordered as the Ascend C guide
("关键分形格式详解") writes it, with M0/K0/N0 the fractal's sides:

- Zz (A in L0A on 910B): (M, K) -> (M1, M0, K1, K0) -> transpose (M1, K1, M0, K0)
- Zn (B in L0B):         (K, N) -> (K1, K0, N1, N0) -> transpose (K1, N1, N0, K0)
- Nz (C in L0C; A in L0A on 950; ND2NZ in L1): (M, N) -> (M1, M0, N1, N0) -> (N1, M1, M0, N0)

Every ``nd_to_*`` returns the 4-D blocked array; its ``ravel()`` is the buffer's element
order. Every ``*_to_nd`` takes that array (or the flat elements) and the ND shape, and
drops the padding.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ELEMENT_SIZES", "FRACTAL_BYTES", "L0C_FRACTAL", "fractal_shape", "padded_shape",
           "nd_to_zz", "zz_to_nd", "nd_to_zn", "zn_to_nd", "nd_to_nz", "nz_to_nd"]

# Bytes per element of every dtype the cube path moves.
ELEMENT_SIZES = {"int8": 1, "uint8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "hifloat8": 1,
                 "float16": 2, "bfloat16": 2, "int32": 4, "float32": 4}
FRACTAL_BYTES = 512  # one L1/L0A/L0B fractal: 16 rows of 32 bytes
L0C_FRACTAL = (16, 16)  # L0C holds fp32/int32 in 16 x 16 fractals (1 KiB)


def fractal_shape(dtype: str) -> tuple[int, int]:
    """(16, k0) with k0 = 32 bytes / element size: the L1/L0A/L0B fractal of *dtype*."""
    try:
        size = ELEMENT_SIZES[dtype]
    except KeyError:
        raise ValueError(f"unknown cube dtype {dtype!r} (known: {', '.join(ELEMENT_SIZES)})") from None
    return 16, 32 // size


def _ceil_to(value: int, step: int) -> int:
    return -(-value // step) * step


def padded_shape(rows: int, cols: int, fractal: tuple[int, int]) -> tuple[int, int]:
    """(rows, cols) rounded up to whole fractals of shape (fractal rows, fractal cols)."""
    return _ceil_to(rows, fractal[0]), _ceil_to(cols, fractal[1])


def _pad(matrix: np.ndarray, fractal: tuple[int, int]) -> np.ndarray:
    matrix = np.asarray(matrix)
    if matrix.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {matrix.shape}")
    rows, cols = padded_shape(*matrix.shape, fractal)
    if (rows, cols) == matrix.shape:  # whole fractals already (the callers copy as they reorder)
        return matrix
    out = np.zeros((rows, cols), dtype=matrix.dtype)
    out[: matrix.shape[0], : matrix.shape[1]] = matrix
    return out


def _blocks(data: np.ndarray, shape4: tuple[int, int, int, int]) -> np.ndarray:
    data = np.asarray(data)
    if data.size != int(np.prod(shape4)):
        raise ValueError(f"{data.size} elements do not make fractal blocks of shape {shape4}")
    return data.reshape(shape4)


def _unblocked(blocks: np.ndarray, order: tuple[int, int, int, int], shape4: tuple[int, int, int, int],
               rows: int, cols: int) -> np.ndarray:
    """A new (rows, cols) matrix whose padded form, seen as ``shape4`` (rows = shape4[0] x shape4[1], columns =
    shape4[2] x shape4[3]), holds ``blocks`` with its axes in ``order`` (one copy; the padding dropped)."""
    out = np.empty((shape4[0] * shape4[1], shape4[2] * shape4[3]), dtype=blocks.dtype)
    out.reshape(shape4).transpose(order)[...] = blocks
    return out if out.shape == (rows, cols) else out[:rows, :cols].copy()


def nd_to_zz(matrix: np.ndarray, dtype: str, fractal: tuple[int, int] | None = None) -> np.ndarray:
    """(M, K) -> Zz blocks (M1, K1, M0, K0): fractals row-major, each fractal row-major."""
    m0, k0 = fractal or fractal_shape(dtype)
    padded = _pad(matrix, (m0, k0))
    m1, k1 = padded.shape[0] // m0, padded.shape[1] // k0
    return padded.reshape(m1, m0, k1, k0).transpose(0, 2, 1, 3).copy()


def zz_to_nd(data: np.ndarray, rows: int, cols: int, dtype: str,
             fractal: tuple[int, int] | None = None) -> np.ndarray:
    """Zz blocks (or their flat elements) -> the (rows, cols) matrix, padding dropped."""
    m0, k0 = fractal or fractal_shape(dtype)
    prow, pcol = padded_shape(rows, cols, (m0, k0))
    blocks = _blocks(data, (prow // m0, pcol // k0, m0, k0))
    return _unblocked(blocks, (0, 2, 1, 3), (prow // m0, m0, pcol // k0, k0), rows, cols)


def nd_to_zn(matrix: np.ndarray, dtype: str, fractal: tuple[int, int] | None = None) -> np.ndarray:
    """(K, N) -> Zn blocks (K1, N1, N0, K0): fractals row-major, each fractal column-major.

    *fractal* is (N0, K0), by default ``fractal_shape(dtype)``: 16 columns of N per fractal,
    K0 = 32 bytes of K contiguous.
    """
    n0, k0 = fractal or fractal_shape(dtype)
    padded = _pad(matrix, (k0, n0))
    k1, n1 = padded.shape[0] // k0, padded.shape[1] // n0
    return padded.reshape(k1, k0, n1, n0).transpose(0, 2, 3, 1).copy()


def zn_to_nd(data: np.ndarray, rows: int, cols: int, dtype: str,
             fractal: tuple[int, int] | None = None) -> np.ndarray:
    """Zn blocks (or their flat elements) -> the (rows = K, cols = N) matrix, padding dropped."""
    n0, k0 = fractal or fractal_shape(dtype)
    prow, pcol = padded_shape(rows, cols, (k0, n0))
    blocks = _blocks(data, (prow // k0, pcol // n0, n0, k0))
    return _unblocked(blocks, (0, 2, 3, 1), (prow // k0, k0, pcol // n0, n0), rows, cols)


def nd_to_nz(matrix: np.ndarray, dtype: str, fractal: tuple[int, int] | None = None) -> np.ndarray:
    """(M, N) -> Nz blocks (N1, M1, M0, N0): fractals column-major, each fractal row-major.

    Pass ``fractal=L0C_FRACTAL`` for L0C (16 x 16 whatever the dtype).
    """
    m0, n0 = fractal or fractal_shape(dtype)
    padded = _pad(matrix, (m0, n0))
    m1, n1 = padded.shape[0] // m0, padded.shape[1] // n0
    return padded.reshape(m1, m0, n1, n0).transpose(2, 0, 1, 3).copy()


def nz_to_nd(data: np.ndarray, rows: int, cols: int, dtype: str,
             fractal: tuple[int, int] | None = None) -> np.ndarray:
    """Nz blocks (or their flat elements) -> the (rows, cols) matrix, padding dropped."""
    m0, n0 = fractal or fractal_shape(dtype)
    prow, pcol = padded_shape(rows, cols, (m0, n0))
    blocks = _blocks(data, (pcol // n0, prow // m0, m0, n0))
    return _unblocked(blocks, (2, 0, 1, 3), (prow // m0, m0, pcol // n0, n0), rows, cols)
