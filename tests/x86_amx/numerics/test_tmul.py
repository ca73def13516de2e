"""Tests for isasim.x86_amx.numerics: the AMX TMUL fp32 lane model.

Ground truth: the expected bits in the silicon tests were measured on
Emerald Rapids silicon (Intel Xeon, family 6 model 207 stepping 2), running
TDPBF16PS with 1x1 outputs. Each case below folds one output element
through the measured lane structure:

    E := +0; O := +0
    for k: E := FMA32(E, a_even[k], b_even[k]); O := FMA32(O, a_odd[k], b_odd[k])
    C := ADD32(C, ADD32(E, O))

Three implementations must reproduce each measured result:
- tmul_fma32/tmul_add32 (vectorised, called with Python ints);
- tmul_fma32_fold (arrays);
- the scalar reference.

The tests marked ``consistency`` hold the vectorised model and the fold's paths to the scalar reference
(numerics/reference.py), isasim against itself; the silicon cases are the outside evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction as Fr

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isasim.core.numerics import (
    bf16_bits_to_float,
    bf16_to_fp32,
    daz32,
    float_to_bf16_bits,
    float_to_fp32_bits,
    fp16_to_fp32,
    fp32_bits_to_float,
    is_denormal32,
    is_nan32,
)
from isasim.x86_amx.numerics import tmul as nx
from isasim.x86_amx.numerics import (
    DEFAULT_NAN32,
    tmul_add32,
    tmul_add32_reference,
    tmul_fma32,
    tmul_fma32_fold,
    tmul_fma32_reference,
)

# ---------------------------------------------------------------------------
# Building bf16 operands for the silicon cases
# ---------------------------------------------------------------------------

ONE = 0x3F80  # bf16 1.0
PZERO, NZERO = 0x0000, 0x8000
PINF, NINF = 0x7F80, 0xFF80


def bf(x) -> int:
    """bf16 bits of the exact value *x*. *x* must be exactly representable."""
    bits = float_to_bf16_bits(Fr(x))
    assert Fr(bf16_bits_to_float(bits)) == Fr(x), f"{x} is not a bf16 value"
    return bits


def f32(x) -> int:
    """fp32 bits of the exact value *x*. *x* must be exactly representable."""
    bits = float_to_fp32_bits(Fr(x))
    assert Fr(fp32_bits_to_float(bits)) == Fr(x), f"{x} is not an fp32 value"
    return bits


def product(x) -> tuple[int, int]:
    """bf16 (a, b) with a*b == x exactly, both normal (or zero)."""
    x = Fr(x)
    if x == 0:
        return (NZERO if x < 0 else PZERO), PZERO
    t = 0
    while Fr(2) ** (t + 1) <= abs(x):
        t += 1
    while Fr(2) ** t > abs(x):
        t -= 1
    h = t - t // 2  # split the exponent so both factors stay normal
    return bf(x / Fr(2) ** h), bf(Fr(2) ** h)


NO_PRODUCT = (PZERO, PZERO)  # a lane with product +0


@dataclass(frozen=True)
class Case:
    name: str
    c: int  # fp32 bits of C
    steps: tuple  # per k: ((a_even, b_even), (a_odd, b_odd)), bf16 bits
    silicon: int  # fp32 bits measured on silicon

    def __str__(self):
        return self.name


def even(*products):
    """Steps whose even lane has the given (a, b) and whose odd lane has product +0."""
    return tuple((p, NO_PRODUCT) for p in products)


def p(x):
    return product(x)


TWO_M24 = Fr(1, 2**24)

# facts section 1.1: accumulation structure (t_q1_disc).
STRUCTURE_CASES = [
    Case("T1_both_lanes_half_ulp", f32(1), ((p(TWO_M24), p(TWO_M24)),), 0x3F800001),
    Case("T2_half_ulp_plus_tiny_other_lane", f32(1), ((p(TWO_M24), p(Fr(1, 2**50))),), 0x3F800000),
    Case("T3_lane_accumulates_across_k", f32(1), even(p(TWO_M24), p(TWO_M24)), 0x3F800001),
    Case("T4_four_half_ulps", f32(1), even(*[p(TWO_M24)] * 4), 0x3F800002),
    Case("T7_lanes_cancel_before_C", f32(2**30), ((p(1), p(-(2**30))),), 0x00000000),
    Case("T14_small_after_one", f32(0), even(p(1), p(TWO_M24), p(TWO_M24)), 0x3F800000),
    Case("lane_order_small_first", f32(0), even(p(TWO_M24), p(TWO_M24), p(1)), 0x3F800001),
    Case("lane_order_one_first", f32(0), even(p(1), p(TWO_M24), p(TWO_M24), p(TWO_M24)), 0x3F800000),
    Case("lane_order_three_small_then_one_tie_even", f32(0), even(*[p(TWO_M24)] * 3, p(1)), 0x3F800002),
]

# A negative product of -2**-127: the lane result is tiny, so FTZ gives -0.
# This is how the measured "E = O = -0" inputs are produced.
NEG_TINY = p(-Fr(1, 2**127))
INF_TIMES_ZERO = (PINF, PZERO)

# facts section 1.2: special values (t_q1_special*, t_q1_tiny, t_q1_dazsign).
SPECIAL_CASES = [
    Case("daz_on_A", f32(0), even((0x0040, bf(2**100))), 0x00000000),
    Case("daz_on_B_odd_lane", f32(0), ((NO_PRODUCT, (bf(2**100), 0x0040)),), 0x00000000),
    Case("daz_on_C", 0x00400000, even(p(Fr(1, 2**126))), 0x00800000),
    Case("daz_keeps_sign_of_C", 0x80000001, ((NEG_TINY, NEG_TINY),), 0x80000000),
    Case("lane_flushed_before_C", f32(Fr(1, 2**126)), even(p(-Fr(1, 2**127))), 0x00800000),
    Case("tiny_product_kept_in_normal_fma", f32(0), even(p(Fr(1, 2**126)), p(Fr(1, 2**130))), 0x00880000),
    Case("tiny_lane_flushed_at_k0", f32(0), even(p(Fr(1, 2**130)), p(Fr(1, 2**126))), 0x00800000),
    Case("ftz_on_final_add", f32(Fr(3, 2**127)), even(p(-Fr(1, 2**126))), 0x00000000),
    Case("ftz_keeps_sign", f32(-Fr(3, 2**127)), even(p(Fr(1, 2**126))), 0x80000000),
    Case("lanes_flush_to_minus_zero", 0x80000000, ((NEG_TINY, NEG_TINY),), 0x80000000),
    Case(
        "tininess_after_rounding_tie_up_to_min_normal",
        f32(0),
        even(p(Fr(1, 2**126)), p(-Fr(1, 2**151))),
        0x00800000,
    ),
    Case(
        "flush_by_unbounded_exponent_rounding",
        f32(0),
        even(p(Fr(1, 2**126)), p(-Fr(1, 2**150))),
        0x00000000,
    ),
    Case(
        "rounds_below_min_normal_then_flushed",
        f32(0),
        even(p(Fr(1, 2**126)), p(-Fr(3, 2**152))),
        0x00000000,
    ),
    Case("overflow_to_inf", f32(0), even((bf(2**100), bf(2**100))), 0x7F800000),
    Case("lanes_are_fp32_inf_minus_inf", f32(0), ((p(2**200), p(-(2**200))),), 0xFFC00000),
    Case("product_not_prerounded", f32(0), even(p(2**200), p(-(2**200))), 0x7F800000),
    Case("tie_at_overflow_threshold_rounds_to_inf", 0x7F7FFFFF, even(p(2**103)), 0x7F800000),
    Case("C_inf_plus_minus_inf", 0x7F800000, even((NINF, ONE)), 0xFFC00000),
    Case("inf_times_zero", f32(0), even(INF_TIMES_ZERO), 0xFFC00000),
    Case("C_minus_inf_and_inf_times_zero", 0xFF800000, even(INF_TIMES_ZERO), 0xFFC00000),
    Case("C_snan_quieted", 0x7FA00001, even(NO_PRODUCT), 0x7FE00001),
    Case("C_negative_snan_quieted", 0xFFA00001, even(NO_PRODUCT), 0xFFE00001),
    Case("C_qnan_passes", 0x7FC00123, even(NO_PRODUCT), 0x7FC00123),
    Case("A_snan_widened_and_quieted", f32(0), even((0x7F81, ONE)), 0x7FC10000),
    Case("A_nan_beats_B_nan", f32(0), even((0x7F81, 0x7F82)), 0x7FC10000),
    Case("even_lane_nan_beats_odd", f32(0), (((0x7F81, ONE), (0x7F83, ONE)),), 0x7FC10000),
    Case("even_lane_nan_beats_odd_swapped", f32(0), (((0x7F83, ONE), (0x7F81, ONE)),), 0x7FC30000),
    Case("C_nan_beats_T", 0x7FA00001, even((0x7F83, ONE)), 0x7FE00001),
    Case("product_nan_beats_accumulator_nan", f32(0), even((0x7F83, ONE), (0x7F85, ONE)), 0x7FC50000),
    Case("nan_operand_beats_default_nan_accumulator", f32(0),
         even(INF_TIMES_ZERO, (0x7F83, ONE)), 0x7FC30000),
    Case("nan_accumulator_beats_invalid", f32(0), even((0x7F83, ONE), INF_TIMES_ZERO), 0x7FC30000),
    Case("C_nan_beats_invalid", 0x7FA00001, even(INF_TIMES_ZERO), 0x7FE00001),
    Case("default_nan_E_beats_odd_nan", f32(0), ((INF_TIMES_ZERO, (0x7F83, ONE)),), 0xFFC00000),
    Case("minus_zero_C_plus_zero_product", 0x80000000, even((PZERO, PZERO)), 0x00000000),
    Case("minus_zero_C_minus_zero_products", 0x80000000, ((( NZERO, PZERO), (NZERO, PZERO)),), 0x00000000),
    Case("exact_cancellation_is_plus_zero", f32(-1), even(p(1)), 0x00000000),
]

# facts section 1.3: MXCSR table (RNE results, whatever MXCSR holds).
R1_PRODUCT = Fr(1, 2**24) * (1 + Fr(1, 2**7))
MXCSR_CASES = [
    Case("mxcsr_r1", f32(1), even(p(R1_PRODUCT)), 0x3F800001),
    Case("mxcsr_r2", f32(-1), even(p(-R1_PRODUCT)), 0xBF800001),
    Case("mxcsr_ftz_out", f32(Fr(1, 2**126)), even(p(-Fr(1, 2**127))), 0x00800000),
    Case("mxcsr_daz_acc", 0x00400000, even(NO_PRODUCT), 0x00000000),
    Case("mxcsr_daz_in", f32(0), even((0x0040, bf(2**100))), 0x00000000),
]

ALL_SILICON_CASES = STRUCTURE_CASES + SPECIAL_CASES + MXCSR_CASES


def fold_element_stepwise(case: Case) -> int:
    """The lane structure, using tmul_fma32/tmul_add32 with Python ints."""
    e = o = 0
    for (ae, be), (ao, bo) in case.steps:
        e = tmul_fma32(e, bf16_to_fp32(ae), bf16_to_fp32(be))
        o = tmul_fma32(o, bf16_to_fp32(ao), bf16_to_fp32(bo))
    assert isinstance(e, int) and isinstance(o, int)
    return tmul_add32(case.c, tmul_add32(e, o))


def fold_element_reference(case: Case) -> int:
    e = o = 0
    for (ae, be), (ao, bo) in case.steps:
        e = tmul_fma32_reference(e, ae << 16, be << 16)
        o = tmul_fma32_reference(o, ao << 16, bo << 16)
    return tmul_add32_reference(case.c, tmul_add32_reference(e, o))


def fold_element_fold(case: Case) -> int:
    """The lane structure, using tmul_fma32_fold over lanes (even, odd)."""
    a = np.array([[s[0][0], s[1][0]] for s in case.steps], dtype=np.uint16)
    b = np.array([[s[0][1], s[1][1]] for s in case.steps], dtype=np.uint16)
    lanes = tmul_fma32_fold(np.zeros(2, dtype=np.uint32), bf16_to_fp32(a), bf16_to_fp32(b))
    t = tmul_add32(lanes[:1], lanes[1:])
    return int(tmul_add32(np.array([case.c], dtype=np.uint32), t)[0])


@pytest.mark.parametrize("case", ALL_SILICON_CASES, ids=str)
def test_silicon_case_stepwise(case):
    assert fold_element_stepwise(case) == case.silicon, f"{fold_element_stepwise(case):#010x}"


@pytest.mark.parametrize("case", ALL_SILICON_CASES, ids=str)
def test_silicon_case_reference(case):
    assert fold_element_reference(case) == case.silicon, f"{fold_element_reference(case):#010x}"


@pytest.mark.parametrize("case", ALL_SILICON_CASES, ids=str)
def test_silicon_case_fold(case):
    assert fold_element_fold(case) == case.silicon, f"{fold_element_fold(case):#010x}"


def test_silicon_cases_all_at_once_as_one_tile():
    """All silicon cases as lanes of one array, padded with -0 products to the same K.

    Adding a -0 product changes no lane: x + -0 == x for x != 0 and for
    x = -0, and +0 + -0 == +0. (+0 products would not do: a lane flushed
    to -0 would become +0.)
    """
    k_max = max(len(c.steps) for c in ALL_SILICON_CASES)
    n = len(ALL_SILICON_CASES)
    a = np.full((k_max, n, 2), NZERO, dtype=np.uint16)
    b = np.zeros((k_max, n, 2), dtype=np.uint16)
    for i, case in enumerate(ALL_SILICON_CASES):
        for k, ((ae, be), (ao, bo)) in enumerate(case.steps):
            a[k, i] = ae, ao
            b[k, i] = be, bo
    lanes = np.zeros((n, 2), dtype=np.uint32)
    for k in range(k_max):
        lanes = tmul_fma32(lanes, bf16_to_fp32(a[k]), bf16_to_fp32(b[k]))
    c = np.array([case.c for case in ALL_SILICON_CASES], dtype=np.uint32)
    result = tmul_add32(c, tmul_add32(lanes[:, 0], lanes[:, 1]))
    expected = np.array([case.silicon for case in ALL_SILICON_CASES], dtype=np.uint32)
    np.testing.assert_array_equal(result, expected)


# ---------------------------------------------------------------------------
# Single steps with known answers
# ---------------------------------------------------------------------------


def test_single_fma_ties_to_even():
    # 1 + 2**-24 is a tie between 1 and 1 + 2**-23: RNE picks 1.
    assert tmul_fma32(f32(1), f32(TWO_M24), f32(1)) == 0x3F800000
    assert tmul_fma32(f32(1 + Fr(1, 2**23)), f32(TWO_M24), f32(1)) == 0x3F800002


def test_fma_sign_of_exact_zero():
    assert tmul_fma32(0x80000000, 0x80000000, f32(1)) == 0x80000000  # -0 + -0
    assert tmul_fma32(0x80000000, 0x00000000, f32(1)) == 0x00000000  # -0 + +0
    assert tmul_fma32(0x00000000, 0x80000000, f32(1)) == 0x00000000  # +0 + -0
    assert tmul_fma32(f32(-2), f32(2), f32(1)) == 0x00000000  # -2 + 2 = +0
    assert tmul_add32(0x80000000, 0x80000000) == 0x80000000
    assert tmul_add32(f32(3), f32(-3)) == 0x00000000


def test_fma_wide_operands_need_exact_boundary_handling():
    """fp32 (not bf16) operands whose float64 sum lands exactly on a 24-bit midpoint.

    A plain float64 evaluation would double-round these.
    """
    # acc = 1 + 2**-23, a*b = 2**-24 - 2**-60: just below the midpoint, so round down.
    acc, a, b = f32(1 + Fr(1, 2**23)), f32(1 + Fr(1, 2**18)), f32(Fr(1, 2**24) - Fr(1, 2**42))
    assert tmul_fma32_reference(acc, a, b) == 0x3F800001
    assert tmul_fma32(acc, a, b) == 0x3F800001
    # acc = 1, a*b = 2**-24 + 2**-60: just above the midpoint, so round up.
    acc, a, b = f32(1), f32(1 + Fr(1, 2**12)), f32(TWO_M24 * (1 - Fr(1, 2**12) + Fr(1, 2**24)))
    assert tmul_fma32_reference(acc, a, b) == 0x3F800001
    assert tmul_fma32(acc, a, b) == 0x3F800001
    # The same through the fold.
    out = tmul_fma32_fold(np.array([acc], np.uint32), np.array([[a]], np.uint32), np.array([[b]], np.uint32))
    assert int(out[0]) == 0x3F800001


def test_fp16_denormal_inputs_are_not_flushed():
    """SDM TDPFP16PS: "Input FP16 denormals are always handled and not treated as zero".

    Exact widening makes them normal fp32 values, so the fp32 DAZ never sees
    them.
    """
    smallest = fp16_to_fp32(0x0001)  # 2**-24
    assert smallest == 0x33800000
    assert not is_denormal32(smallest)
    assert tmul_fma32(0, smallest, fp16_to_fp32(0x3C00)) == 0x33800000
    largest_denormal = fp16_to_fp32(0x83FF)  # -(1023 * 2**-24)
    assert tmul_fma32_reference(0, largest_denormal, f32(1)) == largest_denormal


def test_fma_full_range_products():
    # 2**-149 * 2**-149 is far below fp32 range, but still exact inside the FMA.
    smallest_normal = 0x00800000
    assert tmul_fma32(smallest_normal, smallest_normal, smallest_normal) == smallest_normal
    # 2**127 * 2**127 - big: exact product 2**254, then overflow.
    assert tmul_fma32(f32(-(2**127)), f32(2**127), f32(2**127)) == 0x7F800000


# ---------------------------------------------------------------------------
# Input and output kinds
# ---------------------------------------------------------------------------


def test_kinds_are_preserved():
    one = f32(1)
    assert type(tmul_fma32(one, one, one)) is int
    assert type(tmul_add32(one, one)) is int
    r = tmul_fma32(np.uint32(one), np.uint32(one), np.uint32(one))
    assert isinstance(r, np.uint32) and r == 0x40000000
    arr = np.full((2, 3), one, dtype=np.uint32)
    out = tmul_fma32(arr, arr, arr)
    assert out.shape == (2, 3) and out.dtype == np.uint32
    assert np.all(out == 0x40000000)
    # Broadcasting, and mixing ints with arrays.
    out = tmul_fma32(np.zeros((4, 1, 2), np.uint32), np.full((4, 1, 2), one, np.uint32),
                     np.full((1, 5, 2), one, np.uint32))
    assert out.shape == (4, 5, 2) and np.all(out == one)
    out = tmul_add32(arr, one)
    assert out.shape == (2, 3) and np.all(out == 0x40000000)
    # 0-d arrays are arrays.
    out = tmul_add32(np.array(one, np.uint32), np.array(one, np.uint32))
    assert isinstance(out, np.ndarray) and out.shape == () and out == 0x40000000
    assert type(is_nan32(0x7FC00000)) is bool
    assert type(bf16_to_fp32(0x3F80)) is int
    assert bf16_to_fp32(np.uint16(0x3F80)) == np.uint32(0x3F800000)
    assert type(fp32_bits_to_float(one)) is float


def test_rejects_non_bit_patterns():
    with pytest.raises(TypeError):
        tmul_fma32(1.0, 0, 0)
    with pytest.raises(ValueError):
        tmul_add32(-1, 0)
    with pytest.raises(ValueError):
        tmul_add32(1 << 32, 0)
    with pytest.raises(ValueError):
        bf16_to_fp32(0x10000)


def test_input_arrays_are_not_modified():
    acc = np.array([0x00400000, 0x7FA00001, 0], np.uint32)
    a = np.array([0x00000001, 0x3F800000, 0x7F800000], np.uint32)
    b = np.array([0x3F800000, 0x7F810000, 0], np.uint32)
    copies = acc.copy(), a.copy(), b.copy()
    tmul_fma32(acc, a, b)
    tmul_fma32_fold(acc, a[None], b[None])
    tmul_add32(acc, a)
    for before, after in zip(copies, (acc, a, b)):
        np.testing.assert_array_equal(before, after)


def test_fold_edge_shapes():
    one = f32(1)
    acc = np.array([one, 0], np.uint32)
    empty = np.zeros((0, 2), np.uint32)
    np.testing.assert_array_equal(tmul_fma32_fold(acc, empty, empty), acc)
    scalar = tmul_fma32_fold(np.uint32(one), np.full(3, one, np.uint32), np.full(3, one, np.uint32))
    assert scalar.shape == () and scalar == f32(4)
    with pytest.raises(ValueError):
        tmul_fma32_fold(acc, np.zeros((2, 2), np.uint32), np.zeros((3, 2), np.uint32))
    with pytest.raises(TypeError):
        tmul_fma32_fold(acc.astype(np.int64), empty, empty)


def test_default_nan_is_the_x86_qnan_indefinite():
    assert DEFAULT_NAN32 == 0xFFC00000


# ---------------------------------------------------------------------------
# Property tests: vectorised == scalar reference
# ---------------------------------------------------------------------------

SPECIALS32 = [
    0x00000000, 0x80000000, 0x7F800000, 0xFF800000, DEFAULT_NAN32, 0x7FC00000,
    0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x80800000,
    0x00800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000, 0x33800000,
]
sign = st.integers(0, 1).map(lambda s: s << 31)
nan32 = st.builds(lambda s, m: s | 0x7F800000 | m, sign, st.integers(1, 2**23 - 1))
denormal32 = st.builds(lambda s, m: s | m, sign, st.integers(1, 2**23 - 1))


def fp32_with_exponent(low: int, high: int, mantissa_bits: int = 23):
    """fp32 patterns with a biased exponent in [low, high]; only the top *mantissa_bits* may be set."""
    return st.builds(
        lambda s, e, m: s | (e << 23) | (m << (23 - mantissa_bits)),
        sign,
        st.integers(low, high),
        st.integers(0, 2**mantissa_bits - 1),
    )


near_min_normal = fp32_with_exponent(1, 6)
near_overflow = fp32_with_exponent(250, 254)
moderate = fp32_with_exponent(100, 154)
bf16_moderate = fp32_with_exponent(90, 164, mantissa_bits=7)
any32 = st.integers(0, 2**32 - 1)
fp32_value = st.one_of(
    any32, st.sampled_from(SPECIALS32), nan32, denormal32, near_min_normal, near_overflow, moderate
)
bf16_operand = st.integers(0, 0xFFFF).map(lambda h: h << 16)
fp16_operand = st.integers(0, 0xFFFF).map(lambda h: int(fp16_to_fp32(h)))
operand = st.one_of(fp32_value, bf16_operand, fp16_operand, bf16_moderate, bf16_moderate)


@st.composite
def near_cancelling_triple(draw):
    """(acc, a, b) with acc close to -a*b: exact zeros, tiny results, ties near 2**-126."""
    a = draw(st.one_of(bf16_moderate, fp16_operand, bf16_operand))
    b = draw(st.one_of(bf16_moderate, fp16_operand, near_min_normal.map(lambda x: x & 0xFFFF0000)))
    exact = tmul_fma32_reference(0, a, b)  # rounded -> usable as a nearby acc
    acc = exact ^ 0x80000000
    acc = (acc + draw(st.integers(-3, 3))) & 0xFFFFFFFF
    return acc, a, b


fma_triple = st.one_of(st.tuples(fp32_value, operand, operand), near_cancelling_triple())
add_pair = st.one_of(
    st.tuples(fp32_value, fp32_value),
    fp32_value.map(lambda x: (x, x ^ 0x80000000)),  # exact cancellation
    st.tuples(near_min_normal, near_min_normal.map(lambda x: x ^ 0x80000000)),
    st.tuples(fp32_value, st.integers(-4, 4)).map(lambda t: (t[0], (t[0] ^ 0x80000000) + t[1] & 0xFFFFFFFF)),
)

PROPERTY = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _fma_arrays(triples):
    acc, a, b = (np.array(col, dtype=np.uint32) for col in zip(*triples))
    expected = np.array([tmul_fma32_reference(*t) for t in triples], dtype=np.uint32)
    return acc, a, b, expected


@pytest.mark.consistency
@PROPERTY
@given(st.lists(fma_triple, min_size=1, max_size=40))
def test_fma_vectorised_matches_reference(triples):
    acc, a, b, expected = _fma_arrays(triples)
    np.testing.assert_array_equal(tmul_fma32(acc, a, b), expected)


@pytest.mark.consistency
@PROPERTY
@given(st.lists(fma_triple, min_size=1, max_size=40))
def test_fma_exact_integer_path_matches_reference(triples):
    acc, a, b, expected = _fma_arrays(triples)
    np.testing.assert_array_equal(nx._fma32_exact(acc, a, b), expected)


@pytest.mark.consistency
@settings(max_examples=1500, deadline=None)
@given(fma_triple)
def test_fma_scalar_call_matches_reference(triple):
    assert tmul_fma32(*triple) == tmul_fma32_reference(*triple)


@pytest.mark.consistency
@PROPERTY
@given(st.lists(add_pair, min_size=1, max_size=40))
def test_add_vectorised_matches_reference(pairs):
    x, y = (np.array(col, dtype=np.uint32) for col in zip(*pairs))
    expected = np.array([tmul_add32_reference(*q) for q in pairs], dtype=np.uint32)
    np.testing.assert_array_equal(tmul_add32(x, y), expected)
    np.testing.assert_array_equal(nx._add32_exact(x, y), expected)


@pytest.mark.consistency
@settings(max_examples=1500, deadline=None)
@given(add_pair)
def test_add_scalar_call_matches_reference(pair):
    assert tmul_add32(*pair) == tmul_add32_reference(*pair)


@pytest.mark.consistency
@PROPERTY
@given(
    st.integers(1, 6).flatmap(
        lambda k: st.lists(
            st.tuples(fp32_value, st.lists(st.tuples(operand, operand), min_size=k, max_size=k)),
            min_size=1,
            max_size=12,
        )
    )
)
def test_fold_matches_loop_and_reference(lanes):
    """tmul_fma32_fold == repeated tmul_fma32 == repeated reference, lane by lane."""
    acc = np.array([lane[0] for lane in lanes], dtype=np.uint32)
    a = np.array([[ab[0] for ab in lane[1]] for lane in lanes], dtype=np.uint32).T
    b = np.array([[ab[1] for ab in lane[1]] for lane in lanes], dtype=np.uint32).T
    folded = tmul_fma32_fold(acc, a, b)
    looped = acc
    for k in range(a.shape[0]):
        looped = tmul_fma32(looped, a[k], b[k])
    expected = []
    for i, lane in enumerate(lanes):
        v = lane[0]
        for ak, bk in lane[1]:
            v = tmul_fma32_reference(v, ak, bk)
        expected.append(v)
    np.testing.assert_array_equal(folded, np.array(expected, dtype=np.uint32))
    np.testing.assert_array_equal(looped, folded)


@pytest.mark.consistency
def test_fold_matches_reference_on_a_bf16_tile():
    """A 16x16 TDPBF16PS-shaped fold with broadcast operands, against the reference."""
    rng = np.random.default_rng(7)
    m, k, n = 16, 16, 16
    a16 = rng.normal(size=(m, k, 2)).astype(ml_dtypes.bfloat16).view(np.uint16)
    b16 = rng.normal(size=(k, n, 2)).astype(ml_dtypes.bfloat16).view(np.uint16)
    a16[3] = 0  # an all-zero row: exact-zero sums
    b16[2, 5, 1] = 0x7FC1  # a NaN
    b16[4, 7, 0] = 0x0001  # a denormal
    a = bf16_to_fp32(a16)
    b = bf16_to_fp32(b16)
    a_steps = a.transpose(1, 0, 2)[:, :, None, :]  # (k, m, 1, lane)
    b_steps = b[:, None, :, :]  # (k, 1, n, lane)
    lanes = tmul_fma32_fold(np.zeros((m, n, 2), np.uint32), a_steps, b_steps)
    for i in range(m):
        for j in range(n):
            for lane in range(2):
                v = 0
                for kk in range(k):
                    v = tmul_fma32_reference(v, int(a[i, kk, lane]), int(b[kk, j, lane]))
                assert int(lanes[i, j, lane]) == v, (i, j, lane)


@pytest.mark.consistency
def test_fast_path_against_reference_seeded_bulk():
    """A quick bulk check over a mix of special and ordinary patterns (deterministic)."""
    rng = np.random.default_rng(2024)
    n = 4000
    pool = np.array(SPECIALS32, dtype=np.uint32)

    def draw(wide: bool):
        kind = rng.integers(0, 5, n)
        anything = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
        special = pool[rng.integers(0, len(pool), n)]
        bf16ish = rng.integers(0, 2**16, n).astype(np.uint32) << 16
        exponent = rng.integers(95, 160, n).astype(np.uint32) << 23
        mantissa = rng.integers(0, 2**23, n).astype(np.uint32)
        ordinary = (rng.integers(0, 2, n).astype(np.uint32) << 31) | exponent | (
            mantissa if wide else mantissa & 0x7FF000
        )
        return np.select([kind == 0, kind == 1, kind == 2], [anything, special, bf16ish], ordinary).astype(
            np.uint32
        )

    acc, a, b = draw(True), draw(False), draw(False)
    expected = np.array([tmul_fma32_reference(int(x), int(y), int(z)) for x, y, z in zip(acc, a, b)])
    np.testing.assert_array_equal(tmul_fma32(acc, a, b), expected.astype(np.uint32))
    a, b = draw(True), draw(True)  # full fp32 operands
    expected = np.array([tmul_fma32_reference(int(x), int(y), int(z)) for x, y, z in zip(acc, a, b)])
    np.testing.assert_array_equal(tmul_fma32(acc, a, b), expected.astype(np.uint32))
    expected = np.array([tmul_add32_reference(int(x), int(y)) for x, y in zip(acc, a)])
    np.testing.assert_array_equal(tmul_add32(acc, a), expected.astype(np.uint32))


def test_reference_notes_explain_an_element():
    notes = []
    # Tininess after rounding: 2**-126 - 2**-151 is a tie that rounds up to 2**-126.
    a, b = (bf16_to_fp32(x) for x in product(-Fr(1, 2**151)))
    result = tmul_fma32_reference(f32(Fr(1, 2**126)), a, b, notes=notes)
    assert result == 0x00800000
    assert any("tie, rounded up" in n for n in notes)
    notes = []
    assert tmul_add32_reference(0x00400000, 0x7FA00001, notes) == 0x7FE00001
    assert notes[0].startswith("DAZ: x") and "NaN" in notes[1]
    notes = []
    assert tmul_fma32_reference(f32(Fr(3, 2**127)), f32(-Fr(1, 2**126)), f32(1), notes) == 0
    assert "FTZ" in notes[-1]


# ---------------------------------------------------------------------------
# The fold's bounded mode (rule B): no per-step range test, zero signs at the end
# ---------------------------------------------------------------------------


def _fold_lanes(acc_bits, lane_products):
    """Run lanes through tmul_fma32_fold; lane_products[i] is a list of (a, b) fp32 bits."""
    acc = np.array(acc_bits, dtype=np.uint32)
    a = np.array([[ab[0] for ab in lane] for lane in lane_products], dtype=np.uint32).T.copy()
    b = np.array([[ab[1] for ab in lane] for lane in lane_products], dtype=np.uint32).T.copy()
    return acc, a, b


def _reference_lanes(acc, a, b):
    out = []
    for i in range(acc.shape[0]):
        v = int(acc[i])
        for k in range(a.shape[0]):
            v = tmul_fma32_reference(v, int(a[k, i]), int(b[k, i]))
        out.append(v)
    return np.array(out, dtype=np.uint32)


@pytest.mark.consistency
def test_bounded_fold_zero_sign_chains(monkeypatch):
    one, mone, pz, nz = f32(1), f32(-1), 0x00000000, 0x80000000
    decisions = []
    original = nx._fold_is_bounded


    def spy(*args):
        decisions.append(original(*args))
        return decisions[-1]

    monkeypatch.setattr(nx, "_fold_is_bounded", spy)
    lanes = [
        (nz, [(nz, one), (pz, mone)]),  # -0 + (-0) + (-0) -> -0 (zero all along, all negative)
        (nz, [(nz, one), (pz, one)]),  # -0 + (-0) + (+0) -> +0
        (pz, [(nz, one), (nz, one)]),  # +0 + ... -> +0
        (nz, [(one, one), (mone, one), (nz, one)]),  # 1 - 1 = +0, then + (-0) -> +0
        (f32(2), [(mone, f32(2)), (nz, one)]),  # cancellation to +0, then -0 -> +0
        (nz, [(one, one), (nz, one), (nz, one)]),  # non-zero result
        (0x80000001, [(nz, one), (nz, one)]),  # DAZ'd acc is -0: -0 all along -> -0
    ]
    # Pad with -0 products, which change no lane value (see above), to enough
    # steps for the fold to use rule B.
    steps = max(3, nx._MIN_BOUNDED_STEPS)
    padded = [lane[1] + [(nz, one)] * (steps - len(lane[1])) for lane in lanes]
    acc, a, b = _fold_lanes([lane[0] for lane in lanes], padded)
    assert nx._fold_is_bounded(daz32(acc), daz32(a), daz32(b), a.shape[0])
    expected = np.array([nz, pz, pz, pz, pz, one, nz], dtype=np.uint32)
    np.testing.assert_array_equal(_reference_lanes(acc, a, b), expected)
    np.testing.assert_array_equal(tmul_fma32_fold(acc, a, b), expected)
    assert len(decisions) == 2 and all(decisions)  # our check, then the fold took the bounded path


def test_bounded_mode_is_refused_when_it_cannot_be_proved():
    one = np.array([f32(1)], np.uint32)
    tiny = np.array([f32(Fr(1, 2**100))], np.uint32)  # product 2**-200: not a multiple of 2**-126
    huge = np.array([f32(2**100)], np.uint32)
    inf = np.array([0x7F800000], np.uint32)
    assert nx._fold_is_bounded(one, one[None], one[None], 1)
    assert not nx._fold_is_bounded(one, tiny[None], tiny[None], 1)
    assert not nx._fold_is_bounded(one, huge[None], huge[None], 1)
    assert not nx._fold_is_bounded(inf, one[None], one[None], 1)
    small_acc = np.array([f32(Fr(3, 2**120))], np.uint32)  # a multiple of 2**-126, but Ec < 24
    assert not nx._fold_is_bounded(small_acc, one[None], one[None], 1)
    assert not nx._fold_is_bounded(one, one[None], one[None], 1 << 23)


bounded_operand = st.one_of(
    bf16_moderate, st.sampled_from([0x00000000, 0x80000000, 0x3F800000, 0xBF800000])
)


@pytest.mark.consistency
@PROPERTY
@given(
    st.integers(1, 8).flatmap(
        lambda k: st.lists(
            st.tuples(
                st.one_of(bf16_moderate, moderate, st.sampled_from([0, 0x80000000])),
                st.lists(st.tuples(bounded_operand, bounded_operand), min_size=k, max_size=k),
            ),
            min_size=1,
            max_size=12,
        )
    )
)
def test_bounded_and_checked_folds_agree_with_reference(lanes):
    acc, a, b = _fold_lanes([lane[0] for lane in lanes], [lane[1] for lane in lanes])
    expected = _reference_lanes(acc, a, b)
    np.testing.assert_array_equal(tmul_fma32_fold(acc, a, b), expected)
    original = nx._fold_is_bounded
    try:
        nx._fold_is_bounded = lambda *args: False  # force the per-step range test
        np.testing.assert_array_equal(tmul_fma32_fold(acc, a, b), expected)
    finally:
        nx._fold_is_bounded = original
