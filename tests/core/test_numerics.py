"""Tests for isasim.core.numerics: formats, classification and conversions.

The conversions are cross-checked against ml_dtypes and numpy, which are
independent implementations. The AMX lane arithmetic built on these is
tested in tests/x86_amx/numerics/test_tmul.py.
"""

from __future__ import annotations

from fractions import Fraction as Fr

import ml_dtypes
import numpy as np

from isasim.core.numerics import (
    BF16,
    FP16,
    FP32,
    bf16_bits_to_float,
    bf16_to_fp32,
    daz32,
    float_to_bf16_bits,
    float_to_fp16_bits,
    float_to_fp32_bits,
    fp16_bits_to_float,
    fp16_to_fp32,
    fp32_bits_to_float,
    is_denormal32,
    is_inf32,
    is_nan32,
    is_zero32,
    quiet32,
)

# fp32 special and edge patterns the conversions must carry exactly. 0xFFC00000
# is a quiet NaN here, whichever ISA calls it its default NaN.
SPECIALS32 = [
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0xFFC00000, 0x7FC00000,
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
    0x00800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x33800000,
]

# ---------------------------------------------------------------------------
# Classification helpers
# ---------------------------------------------------------------------------


def test_classification():
    values = np.array(
        [0, 0x80000000, 1, 0x807FFFFF, 0x00800000,
         0x7F800000, 0xFF800000, 0x7F800001, 0xFFC00000, 0x3F800000],
        dtype=np.uint32,
    )
    np.testing.assert_array_equal(is_zero32(values), [1, 1, 0, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(is_denormal32(values), [0, 0, 1, 1, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(is_inf32(values), [0, 0, 0, 0, 0, 1, 1, 0, 0, 0])
    np.testing.assert_array_equal(is_nan32(values), [0, 0, 0, 0, 0, 0, 0, 1, 1, 0])
    assert quiet32(0x7F800001) == 0x7FC00001
    assert quiet32(0xFFA00123) == 0xFFE00123
    assert quiet32(0x7F800000) == 0x7F800000  # inf is not a NaN
    assert quiet32(0x00000001) == 0x00000001
    assert daz32(0x807FFFFF) == 0x80000000
    assert daz32(0x00000001) == 0x00000000
    assert daz32(0x00800000) == 0x00800000


def test_formats():
    assert (BF16.width, BF16.precision, BF16.bias) == (16, 8, 127)
    assert (FP16.width, FP16.precision, FP16.bias) == (16, 11, 15)
    assert (FP32.width, FP32.precision, FP32.exponent_mask) == (32, 24, 0x7F800000)
    assert FP32.quiet_bit == 0x00400000 and FP32.dtype is np.uint32
    assert FP16.min_normal_exponent == -14



# ---------------------------------------------------------------------------
# Conversions: cross-checked against ml_dtypes and numpy (independent code)
# ---------------------------------------------------------------------------

ALL16 = np.arange(2**16, dtype=np.uint32).astype(np.uint16)


def _is_nan16(bits16, fmt):
    return ((bits16 & fmt.exponent_mask) == fmt.exponent_mask) & ((bits16 & fmt.mantissa_mask) != 0)


def quiet_casts():
    """Silence numpy's cast warnings on the numpy/ml_dtypes side of a comparison."""
    return np.errstate(invalid="ignore", over="ignore")


def test_bf16_to_fp32_matches_ml_dtypes_for_all_patterns():
    ours = bf16_to_fp32(ALL16)
    with quiet_casts():
        theirs = ALL16.view(ml_dtypes.bfloat16).astype(np.float32).view(np.uint32)
    not_nan = ~_is_nan16(ALL16, BF16)
    np.testing.assert_array_equal(ours[not_nan], theirs[not_nan])
    np.testing.assert_array_equal(ours, ALL16.astype(np.uint32) << 16)  # NaNs: payload kept, not quieted


def test_fp16_to_fp32_matches_numpy_for_all_patterns():
    ours = fp16_to_fp32(ALL16)
    with quiet_casts():
        theirs = ALL16.view(np.float16).astype(np.float32).view(np.uint32)
    not_nan = ~_is_nan16(ALL16, FP16)
    np.testing.assert_array_equal(ours[not_nan], theirs[not_nan])
    nans = ALL16[~not_nan].astype(np.uint32)
    expected = ((nans & 0x8000) << 16) | 0x7F800000 | ((nans & 0x03FF) << 13)
    np.testing.assert_array_equal(ours[~not_nan], expected)
    assert fp16_to_fp32(0x0001) == 0x33800000  # 2**-24 becomes a normal fp32
    assert fp16_to_fp32(0x7E01) == 0x7FC02000  # NaN payload shifted, not quieted further


def test_bits_to_float_matches_ml_dtypes_and_numpy():
    ours = bf16_bits_to_float(ALL16)
    with quiet_casts():
        theirs = ALL16.view(ml_dtypes.bfloat16).astype(np.float64)
    nan = _is_nan16(ALL16, BF16)
    np.testing.assert_array_equal(ours[~nan], theirs[~nan])
    assert np.all(np.isnan(ours[nan])) and not np.any(np.isnan(ours[~nan]))
    ours = fp16_bits_to_float(ALL16)
    with quiet_casts():
        theirs = ALL16.view(np.float16).astype(np.float64)
    nan = _is_nan16(ALL16, FP16)
    np.testing.assert_array_equal(ours[~nan], theirs[~nan])
    assert np.all(np.isnan(ours[nan])) and not np.any(np.isnan(ours[~nan]))
    assert bf16_bits_to_float(0x0001) == 2.0**-133
    assert fp16_bits_to_float(0x0001) == 2.0**-24


def test_fp32_bits_to_float_is_exact():
    rng = np.random.default_rng(3)
    bits = np.concatenate([rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32),
                           np.array(SPECIALS32, dtype=np.uint32)])
    ours = fp32_bits_to_float(bits)
    with quiet_casts():
        theirs = bits.view(np.float32).astype(np.float64)
    finite = (bits & 0x7F800000) != 0x7F800000
    np.testing.assert_array_equal(ours[finite], theirs[finite])
    assert fp32_bits_to_float(0x00000001) == 2.0**-149
    assert fp32_bits_to_float(0x80000000) == 0.0 and str(fp32_bits_to_float(0x80000000)) == "-0.0"
    # Round trip.
    np.testing.assert_array_equal(float_to_fp32_bits(ours[finite]), bits[finite])


def test_float_to_bf16_matches_ml_dtypes():
    rng = np.random.default_rng(4)
    bits = rng.integers(0, 2**32, 50000, dtype=np.uint64).astype(np.uint32)
    ties = (bits & 0xFFFF0000) | 0x8000  # exact ties between two bf16 values
    values = np.concatenate([bits, ties, np.array(SPECIALS32, np.uint32)]).view(np.float32)
    ours = float_to_bf16_bits(values)
    with quiet_casts():
        theirs = values.astype(ml_dtypes.bfloat16).view(np.uint16)
    nan = np.isnan(values)
    np.testing.assert_array_equal(ours[~nan], theirs[~nan])
    assert np.all((ours[nan] & 0x7FC0) == 0x7FC0)  # NaNs stay NaN, quiet
    assert float_to_bf16_bits(1.0) == 0x3F80
    assert float_to_bf16_bits(Fr(1) + Fr(1, 2**8)) == 0x3F80  # tie -> even
    assert float_to_bf16_bits(Fr(1) + Fr(1, 2**8) + Fr(1, 2**40)) == 0x3F81  # one rounding, not two
    assert float_to_bf16_bits(np.float32(np.nan)) & 0x7FC0 == 0x7FC0
    assert float_to_bf16_bits(bf16_bits_to_float(0xFF81)) == 0xFFC1  # sNaN quieted, payload kept


def test_float_to_fp16_matches_numpy():
    rng = np.random.default_rng(5)
    doubles = np.concatenate([
        rng.normal(scale=1.0, size=20000),
        rng.normal(scale=1e-6, size=20000),  # fp16 denormal range
        rng.normal(scale=60000.0, size=5000),  # overflow boundary
        (rng.integers(-2048, 2048, 5000) + 0.5) * 2.0**-24,  # exact ties in the denormal range
        np.array([0.0, -0.0, np.inf, -np.inf, 65504.0, 65520.0, 65519.99, 2.0**-25, 2.0**-26]),
    ])
    ours = float_to_fp16_bits(doubles)
    with quiet_casts():
        theirs = doubles.astype(np.float16).view(np.uint16)
    np.testing.assert_array_equal(ours, theirs)
    assert float_to_fp16_bits(np.nan) & 0x7E00 == 0x7E00


def test_float_to_fp32_matches_numpy_and_fractions():
    rng = np.random.default_rng(6)
    doubles = np.concatenate([
        rng.normal(size=20000) * 2.0 ** rng.integers(-160, 140, 20000),
        np.array([0.0, -0.0, np.inf, -np.inf, 2.0**-150, 2.0**-149 * 1.5, 3.4028235677973366e38]),
    ])
    ours = float_to_fp32_bits(doubles)
    with quiet_casts():
        theirs = doubles.astype(np.float32).view(np.uint32)  # host cast, default RNE mode
    np.testing.assert_array_equal(ours, theirs)
    for d, bits in zip(doubles[:200], ours[:200]):
        assert float_to_fp32_bits(float(d)) == float_to_fp32_bits(Fr(float(d))) == int(bits)
    assert float_to_fp32_bits(Fr(1) + Fr(1, 2**24)) == 0x3F800000  # tie -> even
    assert float_to_fp32_bits(Fr(1) + Fr(1, 2**24) + Fr(1, 2**100)) == 0x3F800001
    assert float_to_fp32_bits(Fr(1, 3)) == np.float32(1 / 3).view(np.uint32)
    assert float_to_fp32_bits(2**128) == 0x7F800000
    assert float_to_fp32_bits(-(2**-150)) == 0x80000000  # tie with zero -> even (zero)
    assert float_to_fp32_bits(np.float16(1.5)) == 0x3FC00000
    assert isinstance(float_to_fp32_bits(np.float64(1.0)), np.uint32)
    assert float_to_fp32_bits(float("nan")) & 0x7FC00000 == 0x7FC00000
