"""isasim.arm_sme.numerics.fp_asl on hand-worked examples of the Arm ARM's floating-point rules (J1.3
pseudocode); the FP outer products and dots on hand-computed tiles are in semantics/test_fp_products.py.  The
differential test against QEMU is semantics/test_fp_products_vs_qemu.py; these examples say what each rule is,
one case each.

Bit patterns: single 0x3F800000 = 1.0, half 0x3C00 = 1.0, BFloat16 0x3F80 = 1.0.
"""

from __future__ import annotations

import pytest

from isasim.arm_sme.numerics import fp_asl
from isasim.arm_sme.numerics.fp_asl import FP16, FP32, FPCR_DEFAULT, FPCRType

ONE, TWO, HALF_S = 0x3F800000, 0x40000000, 0x3F000000
MAX, INF, NEG_INF = 0x7F7FFFFF, 0x7F800000, 0xFF800000
DEFAULT_NAN = 0x7FC00000
QNAN_A, QNAN_B, SNAN_C = 0x7FC0000A, 0xFFC0000B, 0x7F80000C  # payloads A, B, C
FZ, DN = FPCRType(FZ=1), FPCRType(DN=1)


# ---- NaN propagation ------------------------------------------------------------------------------

def test_a_signalling_nan_beats_a_quiet_one_whatever_its_place():
    # FPProcessNaNs3(addend, op1, op2): SNaNs first in that order, then QNaNs; an SNaN is made quiet
    assert fp_asl.FPMulAdd(QNAN_A, ONE, SNAN_C, FP32, FPCR_DEFAULT) == 0x7FC0000C
    assert fp_asl.FPMulAdd(ONE, QNAN_B, QNAN_A, FP32, FPCR_DEFAULT) == QNAN_B  # the first quiet NaN: op1
    assert fp_asl.FPMulAdd(QNAN_A, QNAN_B, ONE, FP32, FPCR_DEFAULT) == QNAN_A  # the addend comes first


def test_a_quiet_nan_addend_with_zero_times_infinity_is_the_default_nan():
    # FPCR.AH = 0: 0 * inf is an Invalid Operation even when the addend is a quiet NaN
    assert fp_asl.FPMulAdd(QNAN_A, 0, INF, FP32, FPCR_DEFAULT) == DEFAULT_NAN
    assert fp_asl.FPMulAdd(ONE, 0, INF, FP32, FPCR_DEFAULT) == DEFAULT_NAN


def test_fpcr_dn_and_the_za_forms_give_the_default_nan():
    assert fp_asl.FPMulAdd(QNAN_A, ONE, ONE, FP32, DN) == DEFAULT_NAN
    assert fp_asl.FPMulAdd_ZA(QNAN_B, ONE, SNAN_C, FP32, FPCR_DEFAULT) == DEFAULT_NAN  # sets DN itself
    assert fp_asl.FPDotAdd_ZA(QNAN_A, 0x3C00, 0x3C00, 0x3C00, 0x3C00, FPCR_DEFAULT) == DEFAULT_NAN


def test_fpdot_picks_among_four_halves_and_widens_the_payload():
    # op1_a quiet, op2_b signalling: the SNaN wins; half 0x7D01 -> quiet 0x7F01 -> single: payload << 13
    assert fp_asl.FPDot(0x7E05, 0x3C00, 0x3C00, 0x7D01, FPCR_DEFAULT) == 0x7FC00000 | (0x101 << 13)
    assert fp_asl.FPDot(0x3C00, 0xFE07, 0x7E05, 0x3C00, FPCR_DEFAULT) == 0xFFC00000 | (0x007 << 13)


def test_fpneg_flips_a_nans_sign_when_ah_is_0():
    assert fp_asl.FPNeg(QNAN_A, FP32, FPCR_DEFAULT) == 0xFFC0000A
    assert fp_asl.BFNeg(0x7FC1) == 0xFFC1


# ---- signed zeros -----------------------------------------------------------------------------------

def test_zero_sums_take_the_sign_only_when_both_zeros_agree():
    neg_zero = 0x80000000
    assert fp_asl.FPMulAdd(neg_zero, ONE, neg_zero, FP32, FPCR_DEFAULT) == neg_zero  # -0 + (1 * -0)
    assert fp_asl.FPMulAdd(0, ONE, neg_zero, FP32, FPCR_DEFAULT) == 0  # +0 + -0 = +0 when rounding to nearest
    assert fp_asl.FPAdd(neg_zero, neg_zero, FP32, FPCR_DEFAULT) == neg_zero
    # an exact cancellation of non-zero values is +0: 1*1 + (-1)
    assert fp_asl.FPMulAdd(0xBF800000, ONE, ONE, FP32, FPCR_DEFAULT) == 0
    assert fp_asl.FPDot(0x3C00, 0xBC00, 0x3C00, 0x3C00, FPCR_DEFAULT) == 0  # 1*1 + (-1)*1
    assert fp_asl.FPDot(0x8000, 0x8000, 0x3C00, 0x3C00, FPCR_DEFAULT) == 0x80000000  # -0 + -0


# ---- overflow ---------------------------------------------------------------------------------------

def test_overflow_rounds_to_infinity_and_a_tie_at_the_top_rounds_up():
    assert fp_asl.FPMulAdd(0, MAX, TWO, FP32, FPCR_DEFAULT) == INF
    assert fp_asl.FPMulAdd(0, MAX, TWO | 0x80000000, FP32, FPCR_DEFAULT) == NEG_INF
    # MAX + half its ulp (2^103) is a tie; MAX's mantissa is odd, so it rounds up, out of range
    assert fp_asl.FPAdd(MAX, 0x73000000, FP32, FPCR_DEFAULT) == INF
    assert fp_asl.FPAdd(MAX, 0x72FFFFFF, FP32, FPCR_DEFAULT) == MAX
    assert fp_asl.FPAdd(INF, NEG_INF, FP32, FPCR_DEFAULT) == DEFAULT_NAN


# ---- denormals --------------------------------------------------------------------------------------

def test_denormals_are_kept_unless_fpcr_fz_flushes_them():
    tiny = 0x00000001  # 2^-149
    assert fp_asl.FPMul(0x00800000, HALF_S, FP32, FPCR_DEFAULT) == 0x00400000  # 2^-126 / 2 = 2^-127, denormal
    assert fp_asl.FPMul(0x00800000, HALF_S, FP32, FZ) == 0  # FZ flushes the result
    assert fp_asl.FPAdd(tiny, 0, FP32, FPCR_DEFAULT) == tiny
    assert fp_asl.FPAdd(tiny, 0, FP32, FZ) == 0  # FZ flushes the input
    # a denormal result rounds in the denormal's own ulp: (2^-149 * 3) / 2 is a tie -> even (2 ulps)
    assert fp_asl.FPMul(0x00000003, HALF_S, FP32, FPCR_DEFAULT) == 0x00000002
    # rounding up from the largest denormal reaches the smallest normal
    assert fp_asl.FPMulAdd(0x007FFFFF, 0x00000001, HALF_S, FP32, FPCR_DEFAULT) == 0x00800000
    # FZ16 flushes a half-precision input: 2^-24 * 1 becomes 0
    assert fp_asl.FPDot(0x0001, 0, 0x3C00, 0, FPCR_DEFAULT) == 0x33800000
    assert fp_asl.FPDot(0x0001, 0, 0x3C00, 0, FPCRType(FZ16=1)) == 0


# ---- rounding ---------------------------------------------------------------------------------------

def test_ties_round_to_even():
    a = 0x3F800800  # 1 + 2^-12: a*a = 1 + 2^-11 + 2^-24, exactly half an ulp above 1 + 2^-11
    assert fp_asl.FPMulAdd(0, a, a, FP32, FPCR_DEFAULT) == 0x3F801000  # the even neighbour is below
    # (1 + 2^-23) * 1.5 = 1.5 + 2^-23 + 2^-24: the tie goes up to the even 1.5 + 2^-22
    assert fp_asl.FPMulAdd(0, 0x3F800001, 0x3FC00000, FP32, FPCR_DEFAULT) == 0x3FC00002


def test_fmopa_rounds_once():
    # with the product's own rounding subtracted, only a fused multiply-add leaves the error, 2^-24
    a = 0x3F800800  # 1 + 2^-12; a*a rounds to 1 + 2^-11 (0x3F801000)
    assert fp_asl.FPMulAdd_ZA(0xBF801000, a, a, FP32, FPCR_DEFAULT) == 0x33800000


def test_fpdotadd_za_rounds_the_dot_then_the_sum():
    # dot = 1*1 + 2^-24*1 = 1 + 2^-24, a tie -> 1.0; then + 2^-47 -> 1.0.  One rounding of
    # 1 + 2^-24 + 2^-47 would give 1 + 2^-23.
    assert fp_asl.FPDotAdd_ZA(0x28000000, 0x3C00, 0x0001, 0x3C00, 0x3C00, FPCR_DEFAULT) == ONE
    # FPDot sums the exact products, then rounds: 4096*4096 + 1*(1 + 2^-10) = 2^24 + 1 + 2^-10 is more
    # than half of the ulp (2) above 2^24, so it rounds up to 2^24 + 2
    assert fp_asl.FPDot(0x6C00, 0x3C00, 0x6C00, 0x3C01, FPCR_DEFAULT) == 0x4B800001


# ---- BFloat16, FPCR.EBF = 0 ---------------------------------------------------------------------------

def test_bfdotadd_rounds_to_odd():
    # 1*1 + 2^-15*2^-15 = 1 + 2^-30: inexact, so the lowest bit is set (RNE would give 1.0)
    assert fp_asl.BFDotAdd(0, 0x3F80, 0x3800, 0x3F80, 0x3800, FPCR_DEFAULT) == 0x3F800001


def test_bfloat16_flushes_denormals_and_every_nan_is_the_default():
    assert fp_asl.BFMulH(0x0001, 0x3F80, FPCR_DEFAULT) == 0  # a denormal input is zero
    assert fp_asl.BFMulH(0x0080, 0x3F00, FPCR_DEFAULT) == 0  # 2^-126 * 0.5 underflows: flushed
    assert fp_asl.BFDotAdd(0x00000001, 0, 0, 0, 0, FPCR_DEFAULT) == 0  # a denormal addend too
    assert fp_asl.BFDotAdd(ONE, 0x7FC1, 0x3F80, 0x3F80, 0x3F80, FPCR_DEFAULT) == DEFAULT_NAN
    assert fp_asl.BFDotAdd(QNAN_A, 0x3F80, 0x3F80, 0x3F80, 0x3F80, FPCR_DEFAULT) == DEFAULT_NAN


def test_bfloat16_overflows_to_infinity_and_cancels_to_plus_zero():
    assert fp_asl.BFMulH(0x7F7F, 0x7F7F, FPCR_DEFAULT) == INF  # BFRound: overflow is an infinity
    assert fp_asl.BFDotAdd(0x80000000, 0x3F80, 0xBF80, 0x3F80, 0x3F80, FPCR_DEFAULT) == 0  # -0 + (1 - 1)


def test_only_the_reset_fpcr_is_modelled():
    with pytest.raises(NotImplementedError):
        fp_asl.FPMulAdd(0, ONE, ONE, FP32, FPCRType(RMode=1))
    with pytest.raises(NotImplementedError):
        fp_asl.BFDotAdd(0, 0x3F80, 0x3F80, 0x3F80, 0x3F80, FPCRType(EBF=1))
    assert FP16.width == 16
