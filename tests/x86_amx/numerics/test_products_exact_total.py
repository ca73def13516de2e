"""PairDotProducts.exact_total (one float64 matrix product when no step can round) against the lane-by-lane
fold it stands in for, bit for bit, on batches that take it and batches that must not.

A fast path against the model it stands in for: the outside evidence for the fold is the silicon-measured
TDPBF16PS results of numerics/test_tmul.py and numerics/test_tmul_vs_avx512bf16.py."""

import numpy as np
import pytest

from isasim.core import numerics
from isasim.x86_amx import numerics as tmul_numerics
from isasim.x86_amx.numerics.products import PairDotProducts

pytestmark = pytest.mark.consistency


def _values(rng, kind, shape):
    if kind == "grid":  # small multiples of powers of two: mostly exact
        v = rng.integers(-127, 128, shape) * 2.0 ** rng.integers(-6, 3, shape)
    elif kind == "quarters":  # the kernels' data
        v = rng.integers(-8, 8, shape) / 4.0
    elif kind == "normal":  # rounds: must not take it
        v = rng.standard_normal(shape)
    else:  # one far exponent: tiny or huge
        v = rng.integers(-3, 4, shape) * 2.0 ** float(rng.integers(-70, 60))
    return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


@pytest.mark.parametrize("seed", range(4))
def test_exact_total_is_the_fold_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    taken = 0
    for _ in range(300):
        M, N, K = (int(x) for x in rng.integers(1, 17, 3))
        kind = ("grid", "quarters", "normal", "far")[int(rng.integers(0, 4))]
        widen = numerics.bf16_to_fp32 if rng.random() < 0.8 else numerics.fp16_to_fp32
        batch = PairDotProducts(M, N)
        for _ in range(int(rng.integers(1, 33))):
            a, b = np.zeros((16, 64), np.uint8), np.zeros((16, 64), np.uint8)
            a[:M, :4 * K] = _values(rng, kind, (M, 2 * K)).view(np.uint8).reshape(M, 4 * K)
            b[:K, :4 * N] = _values(rng, kind, (K, 2 * N)).view(np.uint8).reshape(K, 4 * N)
            if rng.random() < 0.05:
                a[0, :2] = (0xC0, 0x7F)  # a NaN (0x7FC0): must not take it
            batch.add(a, b, K, widen)
        C = [np.zeros((M, N), np.uint32), (rng.integers(-50, 50, (M, N)) / 8.0).astype(np.float32).view(np.uint32),
             rng.standard_normal((M, N)).astype(np.float32).view(np.uint32)][int(rng.integers(0, 3))]
        C[0, 0] = 0x80000000 if rng.random() < 0.2 else C[0, 0]  # a -0 accumulator
        folded = C.copy()
        for T in batch.products():
            folded = tmul_numerics.tmul_add32(folded, T)
        exact = batch.exact_total(C.copy())
        if exact is not None:
            taken += 1
            assert exact.dtype == np.uint32 and np.array_equal(exact, folded)
    assert taken > 5  # the exact path is exercised (about one batch in 15)
