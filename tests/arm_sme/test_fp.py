"""isasim.arm_sme.numerics.fp_asl on hand-worked examples of the Arm ARM's floating-point rules (J1.3
pseudocode), and the FP outer products and dots on a few hand-computed tiles.  The differential test against
QEMU is test_fp_vs_qemu.py; these examples say what each rule is, one case each.

Bit patterns: single 0x3F800000 = 1.0, half 0x3C00 = 1.0, BFloat16 0x3F80 = 1.0.
"""

from __future__ import annotations

import numpy as np
import pytest

from clang_oracle import assert_refused_in_one_line, clang_accepts
from isasim.arm_sme.numerics import fp_asl
from isasim.arm_sme.numerics.fp_asl import FP16, FP32, FPCR_DEFAULT, FPCRType
from smeharness import run, vector, za_elements

ON = 3
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


# ---- the instructions on hand-computed tiles ----------------------------------------------------------

def test_fmopa_s_updates_only_active_row_column_pairs():
    # SVL 128: ZA0.S is vectors 0, 4, 8, 12; Zn = (1, 2, 3, 4), Zm = 2.0 everywhere; Pn rows 0 and 2, Pm all
    zn = np.array([1, 2, 3, 4], dtype=np.float32).view(np.uint32)
    arrays = {"z1": zn.tobytes(), "z2": vector([TWO], np.uint32, 128),
              "p0": bytes([0x01, 0x01]), "p1": bytes([0x11, 0x11]), "za": bytes(16 * 16)}
    machine, result = run("fmopa za0.s, p0/m, p1/m, z1.s, z2.s", svl=128, regs={"svcr": ON}, arrays=arrays)
    assert result.fault is None
    rows = [za_elements(machine, v, np.float32).tolist() for v in (0, 4, 8, 12)]
    assert rows == [[2.0] * 4, [0.0] * 4, [6.0] * 4, [0.0] * 4]


def test_widening_fmops_leaves_an_inactive_element_plus_zero():
    # Zn all +0, Zm all 1.0; Pn has element 0 of each pair active, element 1 not.  erow_0 = -(+0) = -0,
    # erow_1 = +0 (inactive: FPZero, not negated), so the dot is -0 + +0 = +0 and -0 + +0 = +0 in ZA.
    # Negating the inactive element too would give -0 + -0 = -0.
    arrays = {"z1": bytes(16), "z2": vector([0x3C00], np.uint16, 128), "p0": bytes([0x11, 0x11]),
              "p1": bytes([0x55, 0x55]), "za": vector([0x80000000], np.uint32, 128) * 16}
    machine, _ = run("fmops za1.s, p0/m, p1/m, z1.h, z2.h", svl=128, regs={"svcr": ON}, arrays=arrays)
    assert za_elements(machine, 1, np.uint32).tolist() == [0, 0, 0, 0]
    assert za_elements(machine, 0, np.uint32).tolist() == [0x80000000] * 4  # another tile: untouched


def test_fdot_indexed_takes_the_pair_from_each_128_bit_segment():
    # SVL 256: two segments of Zm; index 1 picks halves 2-3 of each; Zn all 1.0
    zm = np.array([0, 0, 0x4000, 0x4000, 0, 0, 0, 0, 0, 0, 0x4200, 0x4200, 0, 0, 0, 0], dtype=np.uint16)
    arrays = {"z4": vector([0x3C00], np.uint16, 256), "z5": vector([0x3C00], np.uint16, 256),
              "z3": zm.tobytes(), "za": bytes(32 * 32)}
    machine, _ = run("fdot za.s[w8, 0, vgx2], {z4.h-z5.h}, z3.h[1]", svl=256, regs={"svcr": ON}, arrays=arrays)
    assert za_elements(machine, 0, np.float32).tolist() == [4.0] * 4 + [6.0] * 4  # 1*2 + 1*2, 1*3 + 1*3
    assert za_elements(machine, 16, np.float32).tolist() == [4.0] * 4 + [6.0] * 4  # row vec + vstride


def test_fp_forms_need_streaming_mode_and_za():
    machine, result = run("bfmopa za0.s, p0/m, p0/m, z0.h, z0.h", svl=128, regs={"svcr": 2})
    assert result.fault is not None and result.fault.kind == "UNDEFINED"
    machine, result = run("bfdot za.s[w8, 0, vgx2], {z0.h-z1.h}, z0.h", svl=128, regs={"svcr": 1})
    assert result.fault is not None and result.fault.kind == "UNDEFINED"


# ---- what neither assembler accepts ------------------------------------------------------------------

NOT_ENCODABLE = [
    ("fmopa za4.s, p0/m, p1/m, z0.s, z1.s", "za0-za3"),
    ("fmopa za0.s, p8/m, p1/m, z0.s, z1.s", "p0-p7"),
    ("fmops za0.s, p0/m, p1/z, z0.h, z1.h", "merges"),
    ("fmopa za0.s, p0/m, p1/m, z0.s, z1.h", "not this form's .s"),
    ("bfmopa za0.s, p0/m, p1/m, z0.s, z1.s", "not this form's .h"),  # no single-precision BFMOPA
    ("fmopa za0.d, p0/m, p1/m, z0.d, z1.d", "not this form's .s"),  # FEAT_SME_F64F64: not modelled
    ("fmopa za0.h, p0/m, p1/m, z0.h, z1.h", "not this form's .s"),  # FEAT_SME_F16F16: not modelled
    ("fdot za.s[w8, 0, vgx2], {z0.h-z1.h}, z16.h", "z0-z15"),
    ("fdot za.s[w12, 0, vgx2], {z0.h-z1.h}, z1.h", "w8-w11"),
    ("bfdot za.s[w8, 8, vgx4], {z0.h-z3.h}, z1.h", "0-7"),
    ("fdot za.s[w8, 0, vgx2], {z1.h-z2.h}, {z4.h-z5.h}", "multiple of 2"),
    ("bfdot za.s[w8, 0, vgx4], {z0.h-z3.h}, {z2.h-z5.h}", "multiple of 4"),
    ("fdot za.s[w8, 0, vgx4], {z2.h-z5.h}, z1.h[1]", "multiple of 4"),
    ("bfdot za.s[w8, 0, vgx2], {z0.h-z1.h}, z1.h[4]", "0-3"),
    ("fdot za.s[w8, 0, vgx2], {z0.s-z1.s}, z1.s", "not this form's .h"),
    ("fdot za.h[w8, 0, vgx2], {z0.h-z1.h}, z1.h", "not this form's ZA.S"),  # FP8/F16F16 forms: not modelled
    ("fdot za.s[w8, 0, vgx4], {z0.h-z1.h}, z1.h", "not this form's 4"),
]


@pytest.mark.parametrize("line, words", NOT_ENCODABLE)
def test_isasim_refuses_what_cannot_be_encoded_in_one_line(line, words):
    assert_refused_in_one_line(line, words)


@pytest.mark.needs_clang
def test_clang_refuses_the_same_lines():
    assert not clang_accepts([line for line, _ in NOT_ENCODABLE])
