"""The int8 Mmad's float BLAS paths (float32 for k <= 1024, float64 beyond; issue 33) against numpy's int64
matmul: the extreme products (-128 x -128 summed k times reaches 2**24 at k = 1024), each k at the paths'
edges, without an accumulator, with one that overflows int32 and with one that does not, wrapping and
saturating."""

from __future__ import annotations

import numpy as np
import pytest

from isasim.ascend_cube.numerics.mmad_math import mmad


def _int64_reference(a, b, c, overflow):
    total = a.astype(np.int64) @ b.astype(np.int64)
    if c is not None:
        total += c.astype(np.int64)
    if overflow == "saturate":
        total = np.clip(total, -(1 << 31), (1 << 31) - 1)
    return (total & 0xFFFFFFFF).astype(np.uint32)


@pytest.mark.parametrize("k", [1, 31, 1023, 1024, 1025, 4095])
@pytest.mark.parametrize("overflow", ["wrap", "saturate"])
def test_int8_mmad_float_paths_match_int64(k, overflow):
    rng = np.random.default_rng(k)
    m, n = 20, 24
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    a[0], b[:, 0] = -128, -128  # the largest sum: k * 2**14
    a[1], b[:, 1] = -128, 127  # the most negative
    c = rng.integers(-(1 << 31), 1 << 31, (m, n)).astype(np.int32)
    c[0, 0], c[1, 1] = (1 << 31) - 1, -(1 << 31)  # saturate or wrap with the extreme sums
    small = rng.integers(-1000, 1000, (m, n)).astype(np.int32)  # sums that stay inside int32
    options = {"l0c_int32_overflow": overflow}
    for acc in (None, c, small):
        got = mmad(a.view(np.uint8), b.view(np.uint8), None if acc is None else acc.view(np.uint32), "int8",
                   "int8", options)
        np.testing.assert_array_equal(got, _int64_reference(a, b, acc, overflow))
        assert got.dtype == np.uint32 and got.shape == (m, n)
