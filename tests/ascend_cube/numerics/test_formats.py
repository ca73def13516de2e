"""The cube path's format decoders and encoders against ml_dtypes, numpy and en_dtypes.

Oracles nobody here wrote: numpy's float16, ml_dtypes (bfloat16, float8_e4m3fn, float8_e5m2:
round to nearest even, non-saturating) and en_dtypes (HiFloat8, half away). Every code of every
format is decoded; the encoders get random float32 bit patterns, values spread over each
format's range, every tie (midpoint of two neighbouring codes) and the points one float32 ulp
either side, and the overflow boundaries. Saturating mode is the oracle's result with the
vector unit's documented saturation applied (overflow and inf -> +-max, NaN -> 0).

HiFloat8's hybrid rounding has no public implementation: its tests are examples worked by
hand from the Cast.md rule (facts/ascend.md 3.3), said so where they are.
"""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isasim.ascend_cube.numerics import formats

en_dtypes = pytest.importorskip("en_dtypes", reason="en-dtypes (the HiFloat8 oracle) is not installed: "
                                "pip install -e '.[test]'")

ORACLE_TYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
                "float8_e5m2": ml_dtypes.float8_e5m2, "hifloat8": en_dtypes.hifloat8}
ENCODERS = {"float16": formats.f32_to_f16_rint, "bfloat16": formats.f32_to_bf16_rint,
            "float8_e4m3fn": formats.f32_to_e4m3fn, "float8_e5m2": formats.f32_to_e5m2,
            "hifloat8": formats.f32_to_hif8_half_away}


def _all_codes(name):
    width = np.dtype(formats.BITS_DTYPE[name]).itemsize * 8
    return np.arange(1 << width, dtype=np.int64).astype(formats.BITS_DTYPE[name])


def _same(a, b):
    return (a == b) | (np.isnan(a) & np.isnan(b))


@pytest.mark.parametrize("name", list(ORACLE_TYPES))
def test_decoder_matches_the_oracle_on_every_code(name):
    codes = _all_codes(name)
    ours = formats.decode(codes, name)
    with np.errstate(invalid="ignore"):
        theirs = codes.view(ORACLE_TYPES[name]).astype(np.float64)
    mismatches = int((~_same(ours, theirs)).sum())
    print(f"{name}: {mismatches} mismatches on {codes.size} codes")
    assert mismatches == 0
    # signed zeros keep their sign
    assert np.array_equal(np.signbit(ours[theirs == 0]), np.signbit(theirs[theirs == 0]))


def test_hifloat8_specials_are_the_documented_codes():
    values = formats.decode(np.arange(256, dtype=np.uint8), "hifloat8")
    assert np.isnan(values[0x80]) and np.isnan(values).sum() == 1
    assert values[0x6F] == np.inf and values[0xEF] == -np.inf
    assert values[0x6E] == 32768.0 and values[0x00] == 0.0
    assert np.isfinite(values).sum() == 253


def _neighbour_inputs(name):
    """float32 inputs at every tie between neighbouring finite codes, and one ulp either side."""
    values = np.unique(formats.decode(_all_codes(name), name))
    values = values[np.isfinite(values)]
    mids = (values[:-1] + values[1:]) / 2  # exact in float64; exact in float32 for these formats
    mids32 = mids.astype(np.float32)
    assert np.array_equal(mids32.astype(np.float64), mids)
    bits = mids32.view(np.uint32)
    signs = np.where(mids32 < 0, -1, 1).astype(np.int64)
    above = (bits.astype(np.int64) + signs).astype(np.uint32)  # one ulp farther from zero
    below = (bits.astype(np.int64) - signs).astype(np.uint32)
    below = below[mids32 != 0]
    return np.concatenate([bits, above, below, values.astype(np.float32).view(np.uint32)])


def _inputs(name):
    rng = np.random.default_rng(13)
    random_bits = rng.integers(0, 1 << 32, size=100_000, dtype=np.uint64).astype(np.uint32)
    finite = formats.decode(_all_codes(name), name)
    top = np.nanmax(finite[np.isfinite(finite)])
    with np.errstate(over="ignore"):  # bfloat16's top times 1.2 is past float32: inf inputs too
        spread = (rng.uniform(-1.2, 1.2, 100_000) * top * np.exp2(-rng.integers(0, 40, 100_000))).astype(np.float32)
    specials = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, np.finfo(np.float32).max,
                         np.finfo(np.float32).tiny, 1e-45], dtype=np.float32)
    return np.concatenate([random_bits, spread.view(np.uint32), _neighbour_inputs(name), specials.view(np.uint32)])


def _oracle(name, bits, saturate):
    with np.errstate(all="ignore"):
        values = bits.view(np.float32)
        theirs = values.astype(ORACLE_TYPES[name])
    out_bits = theirs.view(formats.BITS_DTYPE[name]).copy()
    if saturate:
        fmt_max = formats.decode(_all_codes(name), name)
        largest = np.nanmax(fmt_max[np.isfinite(fmt_max)])
        max_code = int(np.nonzero(fmt_max == largest)[0][0])
        sign_bit = 1 << (np.dtype(formats.BITS_DTYPE[name]).itemsize * 8 - 1)
        decoded = theirs.astype(np.float64)
        over = ~np.isfinite(decoded) & ~np.isnan(values)  # the oracle overflowed, or the input was inf
        out_bits = np.where(over, np.where(np.signbit(values), max_code | sign_bit, max_code), out_bits)
        out_bits = np.where(np.isnan(values), 0, out_bits)
    return out_bits.astype(formats.BITS_DTYPE[name])


@pytest.mark.parametrize("saturate", [False, True], ids=["inf_nan", "saturate"])
@pytest.mark.parametrize("name", list(ENCODERS))
def test_encoder_matches_the_oracle(name, saturate):
    bits = _inputs(name)
    ours = ENCODERS[name](bits, saturate)
    theirs = _oracle(name, bits, saturate)
    ours_v = formats.decode(ours, name)
    theirs_v = formats.decode(theirs, name)
    # a NaN result is compared as a NaN (payloads are the format's own choice); all else bit for bit
    wrong = ~((ours == theirs) | (np.isnan(ours_v) & np.isnan(theirs_v)))
    print(f"{name} ({'saturating' if saturate else 'inf/NaN'}): {int(wrong.sum())} mismatches on {bits.size} inputs")
    assert int(wrong.sum()) == 0, [(hex(b), hex(o), hex(t)) for b, o, t in zip(bits[wrong][:5], ours[wrong][:5],
                                                                            theirs[wrong][:5])]


def test_rounding_ties_go_to_even_and_overflow_boundaries():
    f32 = lambda *v: np.array(v, dtype=np.float32).view(np.uint32)  # noqa: E731
    # 1 + 2**-11 is the fp16 tie between 1 and 1 + 2**-10: even is 1.0
    assert formats.f32_to_f16_rint(f32(1 + 2**-11, 1 + 3 * 2**-11), False).tolist() == [0x3C00, 0x3C02]
    # fp16: 65520 = 65504 + half an ulp rounds to inf (even), saturating gives 65504
    assert formats.f32_to_f16_rint(f32(65519.996, 65520.0), False).tolist() == [0x7BFF, 0x7C00]
    assert formats.f32_to_f16_rint(f32(65520.0, -np.inf), True).tolist() == [0x7BFF, 0xFBFF]
    # e4m3fn: 464 (tie of 448 and 480) rounds to 448; 465 overflows to NaN, saturating to 448
    assert formats.f32_to_e4m3fn(f32(464.0, 465.0), False).tolist() == [0x7E, 0x7F]
    assert formats.f32_to_e4m3fn(f32(465.0, np.nan), True).tolist() == [0x7E, 0x00]


def test_hifloat8_half_away_ties_round_away_from_zero():
    f32 = lambda *v: np.array(v, dtype=np.float32).view(np.uint32)  # noqa: E731
    ties = f32(1.0625, -1.0625, 18.0, 2.0**-20 * 1.5)
    ours = formats.f32_to_hif8_half_away(ties, False)
    theirs = ties.view(np.float32).astype(en_dtypes.hifloat8).view(np.uint8)
    assert ours.tolist() == theirs.tolist()
    assert formats.decode(ours, "hifloat8").tolist() == [1.125, -1.125, 20.0, 2.0**-19]
    # 40960 = 1.25 * 2**15 is the tie of 32768 and the inf code: inf, or 32768 saturating
    assert formats.f32_to_hif8_half_away(f32(40959.996, 40960.0), False).tolist() == [0x6E, 0x6F]
    assert formats.f32_to_hif8_half_away(f32(40960.0), True).tolist() == [0x6E]


# Hybrid rounding: examples worked by hand from Cast.md's "float转hifloat8_t转换规则" (no public
# implementation exists). For |Ev| in 4..15, round up iff frac = the 14 bits from the TA bit
# down >= thr = the input's bits 13..0; for |Ev| <= 3 it is half away.
@pytest.mark.parametrize("f32_bits,half_away,hybrid", [
    # Ev = 0, 3 mantissa bits: 1.0625 is a tie; hybrid acts as half away here
    (0x3F880000, 1.125, 1.125),
    # Ev = 4, 2 mantissa bits: 18.0 = 16 * (1 + 1/8), TA bit (bit 20) set; frac = 0x2000 >= thr = 0
    (0x41900000, 20.0, 20.0),
    # 16 * (1 + 2**-9): TA bit clear (half away keeps 16) but frac = bits 20..7 = 0x80 >= thr = 0
    (0x41804000, 16.0, 20.0),
    # 16 * (1 + 2**-3 + ...): TA set (half away: 20) but frac = 0x207F < thr = 0x3FFF: hybrid keeps 16
    (0x41903FFF, 20.0, 16.0),
    # subnormal Ev = -20: 1.5 * 2**-20 has TA (bit 22) set and frac = 0x2000 >= thr = 0: 2**-19
    (0x35C00000, 2.0**-19, 2.0**-19),
    # Ev = -23: half away gives the minimum subnormal 2**-22; hybrid compares {1, bits 22..10} =
    # 0x200F with thr = 0x3FFF and gives zero
    (0x34003FFF, 2.0**-22, 0.0),
    # Ev = -23 with zero mantissa: {1, 0} = 0x2000 >= thr = 0: the minimum subnormal either way
    (0x34000000, 2.0**-22, 2.0**-22),
])
def test_hifloat8_hybrid_hand_worked_examples(f32_bits, half_away, hybrid):
    bits = np.array([f32_bits], dtype=np.uint32)
    assert formats.decode(formats.f32_to_hif8_half_away(bits, False), "hifloat8")[0] == half_away
    assert formats.decode(formats.f32_to_hif8_hybrid(bits, False), "hifloat8")[0] == hybrid
    # and the half-away column is en_dtypes' answer
    assert float(bits.view(np.float32).astype(en_dtypes.hifloat8).astype(np.float64)[0]) == half_away


def test_hifloat8_hybrid_equals_half_away_where_the_rule_says_so():
    rng = np.random.default_rng(5)
    bits = (rng.standard_normal(50_000) * np.exp2(rng.integers(-24, 17, 50_000))).astype(np.float32)
    bits = bits.view(np.uint32)
    ev = ((bits >> 23) & 0xFF).astype(np.int64) - 127
    small = np.abs(ev) <= 3
    assert np.array_equal(formats.f32_to_hif8_hybrid(bits[small], False),
                          formats.f32_to_hif8_half_away(bits[small], False))
    # everywhere, hybrid either keeps the truncated value or rounds up to the next code: the result
    # is one of the two en_dtypes values that bracket the input
    table = np.arange(256, dtype=np.uint8).view(en_dtypes.hifloat8).astype(np.float64)
    grid = np.unique(table[np.isfinite(table)])
    values = bits.view(np.float32).astype(np.float64)
    inside = np.abs(values) < 32768
    values = values[inside]
    hybrid = formats.decode(formats.f32_to_hif8_hybrid(bits[inside], False), "hifloat8")
    upper = grid[np.searchsorted(grid, values, side="left")]
    lower = grid[np.searchsorted(grid, values, side="right") - 1]
    assert np.all((hybrid == upper) | (hybrid == lower))
    differs = hybrid != formats.decode(formats.f32_to_hif8_half_away(bits[inside], False), "hifloat8")
    assert differs.any() and not differs[np.abs(ev[inside]) <= 3].any()


def test_decode_exact_is_the_exact_value():
    codes = _all_codes("bfloat16")
    negative, magnitude, exponent, nan, inf = formats.decode_exact(codes, "bfloat16")
    finite = ~(nan | inf)
    rebuilt = np.where(negative, -1.0, 1.0) * magnitude.astype(np.float64) * np.exp2(exponent.astype(np.float64))
    with np.errstate(invalid="ignore"):
        theirs = codes.view(ml_dtypes.bfloat16).astype(np.float64)
    assert np.array_equal(rebuilt[finite], theirs[finite])


@settings(max_examples=400, deadline=None)
@given(bits=st.lists(st.integers(0, 2**32 - 1), min_size=1, max_size=64), saturate=st.booleans())
def test_any_float32_bits_encode_as_the_oracles_do(bits, saturate):
    bits = np.array(bits, dtype=np.uint32)
    for name, encode in ENCODERS.items():
        ours = encode(bits, saturate)
        theirs = _oracle(name, bits, saturate)
        nan = np.isnan(formats.decode(ours, name)) & np.isnan(formats.decode(theirs, name))
        assert ((ours == theirs) | nan).all(), (name, [hex(b) for b in bits[(ours != theirs) & ~nan]])
