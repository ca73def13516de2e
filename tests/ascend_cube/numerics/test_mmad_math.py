"""Mmad arithmetic against numpy integer and IEEE arithmetic.

Oracles: numpy int64 matmul for int8; for floats, numpy float64 matmul on data whose exact sum
fits in 53 bits (so float64 is exact), then numpy's float32 cast (one RNE rounding), and for the
per-k option numpy float32 addition (IEEE, one rounding per step). Inputs are decoded by
ml_dtypes / en_dtypes. Each option setting has a test, and an example where the settings differ.
"""

import ml_dtypes
import numpy as np
import pytest

from isasim.ascend_cube.numerics.mmad_math import accumulator_dtype, mmad
from isasim.ascend_cube.options import resolve_options

en_dtypes = pytest.importorskip("en_dtypes", reason="en-dtypes (the HiFloat8 oracle) is not installed")

TYPES = {"float16": (np.float16, np.uint16), "bfloat16": (ml_dtypes.bfloat16, np.uint16),
         "float8_e4m3fn": (ml_dtypes.float8_e4m3fn, np.uint8), "float8_e5m2": (ml_dtypes.float8_e5m2, np.uint8),
         "hifloat8": (en_dtypes.hifloat8, np.uint8)}
EXACT = resolve_options("950", {"mmad_float_accumulation": "exact_single_rounding"})
PER_K = resolve_options("950", {"mmad_float_accumulation": "fp32_per_k_step"})


def _random(rng, shape, name):
    value_type, bits_type = TYPES[name]
    # magnitudes in [1/16, 16]: products and their sums stay exact in float64
    values = rng.uniform(1 / 16, 16, shape) * rng.choice([-1, 1], shape)
    cast = values.astype(np.float32).astype(value_type)
    return cast.view(bits_type), cast.astype(np.float64)


@pytest.mark.parametrize("a_name,b_name", [("float16", "float16"), ("bfloat16", "bfloat16"),
                                           ("float8_e4m3fn", "float8_e4m3fn"), ("float8_e5m2", "float8_e5m2"),
                                           ("float8_e4m3fn", "float8_e5m2"), ("float8_e5m2", "float8_e4m3fn"),
                                           ("hifloat8", "hifloat8")])
def test_float_mmad_is_the_exact_sum_rounded_once(a_name, b_name):
    rng = np.random.default_rng(3)
    a_bits, a = _random(rng, (16, 96), a_name)
    b_bits, b = _random(rng, (96, 32), b_name)
    c = rng.uniform(-50, 50, (16, 32)).astype(np.float32)
    ours = mmad(a_bits, b_bits, c.view(np.uint32), a_name, b_name, EXACT)
    theirs = (a @ b + c.astype(np.float64)).astype(np.float32).view(np.uint32)
    mismatches = int((ours != theirs).sum())
    print(f"{a_name} x {b_name}: {mismatches} mismatches on {ours.size}")
    assert mismatches == 0
    from_zero = mmad(a_bits, b_bits, None, a_name, b_name, EXACT)
    assert np.array_equal(from_zero, (a @ b).astype(np.float32).view(np.uint32))


def test_float_mmad_per_k_step_rounds_after_each_k():
    rng = np.random.default_rng(4)
    a_bits, a = _random(rng, (8, 40), "float16")
    b_bits, b = _random(rng, (40, 8), "float16")
    c = rng.uniform(-1, 1, (8, 8)).astype(np.float32)
    acc = c.copy()
    for k in range(40):  # fp16 x fp16 products are exact in float32; each add is IEEE float32
        acc = acc + np.outer(a[:, k], b[k, :]).astype(np.float32)
    ours = mmad(a_bits, b_bits, c.view(np.uint32), "float16", "float16", PER_K)
    assert np.array_equal(ours, acc.view(np.uint32))


def test_the_two_accumulation_settings_differ_where_rounding_order_matters():
    # products 2**24, 1, -2**24: exactly 1; rounding after each k loses the 1 (2**24 + 1 ties to 2**24)
    a = np.array([[4096.0, 1.0, -4096.0]], dtype=ml_dtypes.bfloat16).view(np.uint16)
    b = np.array([[4096.0], [1.0], [4096.0]], dtype=ml_dtypes.bfloat16).view(np.uint16)
    exact = mmad(a, b, None, "bfloat16", "bfloat16", EXACT).view(np.float32)
    per_k = mmad(a, b, None, "bfloat16", "bfloat16", PER_K).view(np.float32)
    assert exact.tolist() == [[1.0]] and per_k.tolist() == [[0.0]]


def test_the_per_fractal_setting_rounds_once_per_k0_block():
    # k0 = 16 for bf16. Block 1: 2**24 + 1 (the 1 is lost: a tie to even); block 2: 1 - 2**24 added
    # exactly to 2**24 gives 1. Exact: 2. Per k: 2**24, 2**24, 2**24, 0.
    a = np.zeros((1, 32), dtype=ml_dtypes.bfloat16)
    a[0, [0, 1, 16, 17]] = [4096.0, 1.0, 1.0, -4096.0]
    b = np.zeros((32, 1), dtype=ml_dtypes.bfloat16)
    b[[0, 1, 16, 17], 0] = [4096.0, 1.0, 1.0, 4096.0]
    results = {}
    for setting in ("exact_single_rounding", "fp32_per_fractal", "fp32_per_k_step"):
        options = resolve_options("950", {"mmad_float_accumulation": setting})
        results[setting] = float(mmad(a.view(np.uint16), b.view(np.uint16), None, "bfloat16", "bfloat16",
                                      options).view(np.float32)[0, 0])
    assert results == {"exact_single_rounding": 2.0, "fp32_per_fractal": 1.0, "fp32_per_k_step": 0.0}
    # and on ordinary data the per-fractal sums are float32 additions of exact block sums (numpy oracle)
    rng = np.random.default_rng(12)
    a_bits, av = _random(rng, (4, 64), "float16")
    b_bits, bv = _random(rng, (64, 4), "float16")
    acc = np.zeros((4, 4), dtype=np.float32)
    for first in range(0, 64, 16):
        acc = (acc.astype(np.float64) + av[:, first:first + 16] @ bv[first:first + 16, :]).astype(np.float32)
    ours = mmad(a_bits, b_bits, None, "float16", "float16", resolve_options("950", {
        "mmad_float_accumulation": "fp32_per_fractal"}))
    assert np.array_equal(ours, acc.view(np.uint32))


def test_bfloat16_products_beyond_float64s_exact_range_still_round_once():
    # 2**200 + 3 * 2**-140 - 2**200: the float32 subnormal 3 * 2**-140 survives the cancellation
    a = np.array([[2.0**100, 3 * 2.0**-70, -(2.0**100)]], dtype=ml_dtypes.bfloat16).view(np.uint16)
    b = np.array([[2.0**100], [2.0**-70], [2.0**100]], dtype=ml_dtypes.bfloat16).view(np.uint16)
    out = mmad(a, b, None, "bfloat16", "bfloat16", EXACT).view(np.float32)
    assert out[0, 0] == np.float32(3 * 2.0**-140)


@pytest.mark.parametrize("saturate", [False, True], ids=["ctrl48_1_inf_nan", "ctrl48_0_saturate"])
def test_special_values_follow_ieee_then_ctrl48(saturate):
    inf, nan = np.inf, np.nan
    a = np.array([[inf, 1.0], [inf, 0.0], [nan, 1.0], [inf, inf], [60000.0, 60000.0]], dtype=np.float16)
    b = np.array([[1.0, 2.0], [1.0, 0.0]], dtype=np.float16)
    b2 = np.array([[0.0, 1.0], [1.0, 1.0]], dtype=np.float16)
    ours = mmad(a.view(np.uint16), b.view(np.uint16), None, "float16", "float16", EXACT, saturate=saturate)
    ours2 = mmad(a.view(np.uint16), b2.view(np.uint16), None, "float16", "float16", EXACT, saturate=saturate)
    with np.errstate(all="ignore"):
        ieee = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
        ieee2 = (a.astype(np.float64) @ b2.astype(np.float64)).astype(np.float32)
    for got, want in ((ours, ieee), (ours2, ieee2)):
        got = got.view(np.float32)
        if saturate:  # the Mmad page's saturation mode: inf -> +-max, NaN -> 0
            want = np.where(np.isnan(want), 0, want)
            want = np.where(np.isinf(want), np.sign(want) * np.finfo(np.float32).max, want).astype(np.float32)
        assert np.array_equal(np.isnan(got), np.isnan(want))
        assert np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
    # a finite sum past float32's range: +inf, or FLT_MAX when saturating
    big = np.array([[3e38, 3e38]], dtype=ml_dtypes.bfloat16).view(np.uint16)
    one = np.array([[1.0], [1.0]], dtype=ml_dtypes.bfloat16).view(np.uint16)
    out = mmad(big, one, None, "bfloat16", "bfloat16", EXACT, saturate=saturate)
    assert out[0, 0] == (0x7F7FFFFF if saturate else 0x7F800000)


@pytest.mark.parametrize("overflow", ["wrap", "saturate"])
def test_int8_mmad_is_exact_then_wraps_or_saturates(overflow):
    rng = np.random.default_rng(7)
    a = rng.integers(-128, 128, (32, 200)).astype(np.int8)
    b = rng.integers(-128, 128, (200, 48)).astype(np.int8)
    # accumulators near both int32 limits, so that some sums leave the int32 range
    c = rng.integers((1 << 31) - (1 << 22), 1 << 31, (32, 48)) * rng.choice([-1, 1], (32, 48))
    options = resolve_options("910B", {"l0c_int32_overflow": overflow})
    ours = mmad(a.view(np.uint8), b.view(np.uint8), c.astype(np.int32).view(np.uint32), "int8", "int8", options)
    exact = a.astype(np.int64) @ b.astype(np.int64) + c
    if overflow == "wrap":
        want = exact.astype(np.int32)  # numpy's int64 -> int32 cast keeps the low 32 bits
    else:
        want = np.clip(exact, np.iinfo(np.int32).min, np.iinfo(np.int32).max).astype(np.int32)
    assert np.array_equal(ours.view(np.int32), want)
    assert (exact != exact.astype(np.int32)).any()  # the data do overflow, so the settings differ here
    assert np.array_equal(mmad(a, b, None, "int8", "int8", options).view(np.int32),
                          (a.astype(np.int64) @ b.astype(np.int64)).astype(np.int32))


def test_the_int32_overflow_settings_differ_at_the_int32_limit():
    a = np.array([[127]], dtype=np.int8)
    b = np.array([[127]], dtype=np.int8)
    c = np.array([[2**31 - 100]], dtype=np.int64).astype(np.uint32)
    wrap = mmad(a, b, c, "int8", "int8", resolve_options("910B", {"l0c_int32_overflow": "wrap"}))
    sat = mmad(a, b, c, "int8", "int8", resolve_options("910B", {"l0c_int32_overflow": "saturate"}))
    assert wrap.view(np.int32)[0, 0] == 2**31 - 100 + 16129 - 2**32
    assert sat.view(np.int32)[0, 0] == 2**31 - 1


def test_dtype_pairs_the_cube_lacks_are_refused():
    assert accumulator_dtype("int8", "int8") == "int32"
    assert accumulator_dtype("float8_e4m3fn", "float8_e5m2") == "float32"
    for a, b in (("float16", "bfloat16"), ("int8", "float16"), ("hifloat8", "float8_e4m3fn")):
        with pytest.raises(ValueError, match="no Mmad takes"):
            accumulator_dtype(a, b)
    with pytest.raises(ValueError, match="do not chain"):
        mmad(np.zeros((2, 3), np.int8), np.zeros((4, 2), np.int8), None, "int8", "int8", EXACT)


def _nearest_float32(exact):
    """The float32 nearest the exact rational (ties to the even code): float() is within one float32
    step, and exact comparisons with its neighbours pick the answer."""
    from fractions import Fraction
    guess = np.float32(float(exact))
    best = None
    for candidate in (np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.float32(np.inf))):
        if not np.isfinite(candidate):
            continue
        key = (abs(Fraction(float(candidate)) - exact), int(candidate.view(np.uint32)) & 1)
        if best is None or key < best[0]:
            best = (key, candidate)
    return best[1]


@pytest.mark.parametrize("name,low,high", [("float16", -24, 15), ("bfloat16", -60, 60), ("bfloat16", -126, 62),
                                           ("float8_e5m2", -16, 15), ("hifloat8", -22, 15)])
def test_wide_range_sums_are_the_exact_rational_rounded_once(name, low, high):
    # exponents across the format's range (subnormals included; products finite) force the wide
    # exact paths: 25-bit limbs in int64 (fp16, bf16 to 2**+-60) and Python ints (bf16 2**-126..2**62)
    from fractions import Fraction
    rng = np.random.default_rng(21)
    value_type, bits_type = TYPES[name]
    def draw(shape):
        values = rng.uniform(1, 2, shape) * np.exp2(rng.integers(low, high, shape)) * rng.choice([-1, 1], shape)
        cast = values.astype(np.float32).astype(value_type)
        return cast.view(bits_type), cast.astype(np.float64)
    a_bits, a = draw((6, 24))
    b_bits, b = draw((24, 5))
    c = (rng.standard_normal((6, 5)) * 1e-3).astype(np.float32)
    ours = mmad(a_bits, b_bits, c.view(np.uint32), name, name, EXACT, saturate=False)
    for i in range(6):
        for j in range(5):
            exact = Fraction(float(c[i, j])) + sum(Fraction(a[i, t]) * Fraction(b[t, j]) for t in range(24))
            want = _nearest_float32(exact)
            assert ours[i, j] == want.view(np.uint32), (i, j, float(exact))


@pytest.mark.parametrize("setting", ["keep", "flush"])
def test_mmad_subnormals(setting):
    options = resolve_options("950", {"mmad_subnormals": setting})
    # fp16 subnormal input 2**-20 times 1, plus 1 * 2**-14 (normal)
    a = np.array([[2.0**-20, 1.0]], dtype=np.float16).view(np.uint16)
    b = np.array([[1.0], [2.0**-14]], dtype=np.float16).view(np.uint16)
    out = mmad(a, b, None, "float16", "float16", options).view(np.float32)[0, 0]
    assert out == np.float32(2.0**-20 + 2.0**-14 if setting == "keep" else 2.0**-14)
    # bf16 2**-100 * 2**-40: the float32 subnormal 2**-140, or -0 flushed (the sign kept)
    a = np.array([[-(2.0**-100)]], dtype=ml_dtypes.bfloat16).view(np.uint16)
    b = np.array([[2.0**-40]], dtype=ml_dtypes.bfloat16).view(np.uint16)
    out = mmad(a, b, None, "bfloat16", "bfloat16", options)[0, 0]
    assert out == (np.float32(-(2.0**-140)).view(np.uint32) if setting == "keep" else 0x80000000)
