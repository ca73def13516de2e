"""The Fixpipe's float32 fast path (int32 L0C x M1 to bfloat16 / float16, issue 33) against the exact integer
pipeline it stands in for: the same bits on every int32 range, every M1 exponent, signs, ties, overflow past
both formats and float16's subnormals, with and without saturation."""

from __future__ import annotations

import numpy as np
import pytest

from isasim.ascend_cube.numerics import fixpipe_math
from isasim.ascend_cube.options import resolve_options

CASES = [("950", "VQS322BF16_PRE"), ("950", "QS322BF16_PRE"), ("950", "VDEQF16"), ("950", "DEQF16"),
         ("910B", "VDEQF16"), ("910B", "DEQF16")]


def _l0c(rng, shape) -> np.ndarray:
    """int32 bits: small, mid and full-range values, the extremes, and values with float32 ties."""
    parts = [rng.integers(-300, 300, shape), rng.integers(-(1 << 20), 1 << 20, shape),
             rng.integers(-(1 << 31), 1 << 31, shape), (rng.integers(-(1 << 6), 1 << 6, shape) << 25) + (1 << 24)]
    values = np.choose(rng.integers(0, len(parts), shape), parts)
    values.flat[:4] = [0, -(1 << 31), (1 << 31) - 1, 1]
    return values.astype(np.int64).astype(np.int32).view(np.uint32)


def _words(rng, n: int) -> np.ndarray:
    """Quant words of random M1 (sign, any normal exponent, any 10-bit mantissa, or zero)."""
    exponent = np.where(rng.random(n) < 0.5, rng.integers(1, 255, n), rng.integers(90, 150, n))  # half near 1
    m1 = (rng.integers(0, 2, n) << 18) | (exponent << 10) | rng.integers(0, 1 << 10, n)
    m1[rng.random(n) < 0.05] = 0
    return (m1.astype(np.uint64) << np.uint64(13))


@pytest.mark.parametrize("chip, mode", CASES)
@pytest.mark.parametrize("overflow", ["saturate", "inf_nan"])
def test_fixpipe_fast_path_matches_exact_pipeline(chip, mode, overflow):
    rng = np.random.default_rng(len(mode) * 7 + len(chip) + len(overflow))
    options = resolve_options(chip, {"fixpipe_float_overflow": overflow})
    for _ in range(4):
        m, n = 48, 64
        bits = _l0c(rng, (m, n))
        words = _words(rng, n)
        if not mode.startswith("V"):
            words = int(words[0])
        spec = fixpipe_math.QUANT_MODES[mode]
        params = fixpipe_math._params(words, n, spec.form, chip, options)
        fast = fixpipe_math._int32_scaled_to_half(bits, spec, params, False, chip, options)
        assert fast is not None
        exact, exact_type, _ = fixpipe_math._pipeline(bits, "int32", mode, words, False, chip, options, trace=[])
        assert exact_type == spec.outputs[0]
        np.testing.assert_array_equal(fast, exact)


@pytest.mark.parametrize("out_dtype, low, high", [("float16", 127 - 30, 127 + 20), ("bfloat16", 1, 255)])
def test_fixpipe_fast_path_half_rounding_on_every_exponent(out_dtype, low, high):
    """float32 values across the output format's whole range and beyond (float16's subnormals, ties, carries into
    the next binade and past the largest finite value) rounded by the fast path's bit rounding and by the exact
    round_exact."""
    from isasim.ascend_cube.numerics.formats import FLOAT_FORMATS, decode_exact, round_exact

    rng = np.random.default_rng(5)
    exponents = rng.integers(low, high, 20000).astype(np.uint32)
    mantissas = rng.integers(0, 1 << 23, 20000).astype(np.uint32)
    mantissas[::3] &= np.uint32(~0x1FFF & 0x7FFFFF)  # exact float16 values and ties
    mantissas[::7] |= np.uint32(0x1000)
    bits = (rng.integers(0, 2, 20000).astype(np.uint32) << np.uint32(31)) | (exponents << np.uint32(23)) | mantissas
    edges = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F7F8000, 0x7F7E8000, 0x477FEFFF,
             0x477FF000, 0xC77FF000, 0x33000000, 0x33000001, 0x387FC000]
    bits = np.concatenate([bits, np.array(edges, dtype=np.uint32)])
    for saturate in (False, True):
        fast = fixpipe_math._f32_to_half_bits(bits, out_dtype, saturate)
        negative, magnitude, exponent, nan, inf = decode_exact(bits, "float32")
        exact = round_exact(negative, magnitude, exponent, FLOAT_FORMATS[out_dtype], "ties_even", saturate, nan, inf)
        np.testing.assert_array_equal(fast, exact.astype(np.uint16))


def test_fixpipe_fast_path_steps_aside_for_relu_mcb_and_exact_multiply():
    options = resolve_options("910B", None)
    spec = fixpipe_math.QUANT_MODES["VDEQF16"]
    words = np.full(16, (0x3F800000 & 0xFFFFE000) | (1 << 36), dtype=np.uint64)  # MCB = 1
    params = fixpipe_math._params(words, 16, spec.form, "910B", options)
    bits = np.zeros((2, 16), dtype=np.uint32)
    assert fixpipe_math._int32_scaled_to_half(bits, spec, params, False, "910B", options) is None
    words = np.full(16, 0x3F800000 & 0xFFFFE000, dtype=np.uint64)
    params = fixpipe_math._params(words, 16, spec.form, "910B", options)
    assert fixpipe_math._int32_scaled_to_half(bits, spec, params, True, "910B", options) is None
    exact = resolve_options("910B", {"fixpipe_multiply": "exact"})
    assert fixpipe_math._int32_scaled_to_half(bits, spec, params, False, "910B", exact) is None
