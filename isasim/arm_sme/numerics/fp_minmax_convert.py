"""More of the Arm ARM's floating-point library (J1.3), beside fp_asl.py and in its terms (bit patterns in, bit
patterns out, exact reals as (mantissa, exponent)): FPMax, FPMin, FPMaxNum, FPMinNum, FPConvert (one rounding to
the narrower format; BFloat16 too, as FPConvertBF), FPRoundInt, FPToFixed and FixedToFP, as SME2's multi-vector
FMAX/FMIN/FMAXNM/FMINNM (and BFMAX..., FEAT_SVE_B16B16: the same rules on BFloat16's fields), FCLAMP, FCVT/BFCVT,
FRINT*, FCVTZS/FCVTZU and SCVTF/UCVTF use them.  FPCR.AH = 0 (the only value isasim models): a NaN operand of
FPMax/FPMin propagates as FPProcessNaNs picks it; FPMaxNum/FPMinNum read one quiet NaN beside a number as the
infinity that loses.  No FPSR flags are modelled (fp_asl.py)."""

from __future__ import annotations

from .fp_asl import (FPCRType, FPConvertNaN, FPDefaultNaN, FPInfinity, FPMul, FPProcessNaN, FPProcessNaNs,
                     FPRound, FPType, FPUnpack, FPZero, Format)

__all__ = ["FPMax", "FPMin", "FPMaxNum", "FPMinNum", "FPConvert", "FPRoundInt", "FPToFixed", "FixedToFP", "FPScale",
           "TIEEVEN", "TIEAWAY", "POSINF", "NEGINF", "ZERO", "FPMulX",
           "FPRecipStepFused", "FPRSqrtStepFused", "FPRecpX", "FPRecipEstimate", "FPRSqrtEstimate"]

TIEEVEN, TIEAWAY, POSINF, NEGINF, ZERO = "TIEEVEN", "TIEAWAY", "POSINF", "NEGINF", "ZERO"  # FPRounding_*


def _order(fptype: FPType, op: int, fmt: Format) -> int:
    """An integer ordered as the operand's value (zeros of both signs equal, infinities at the ends): the
    magnitude bits of an IEEE encoding grow with the value."""
    if fptype == FPType.Zero:
        return 0
    magnitude = op & ~fmt.sign_mask & ((1 << fmt.width) - 1)
    return -magnitude if op & fmt.sign_mask else magnitude


def _max_min(op1: int, op2: int, fmt: Format, fpcr: FPCRType, maximum: bool) -> int:
    type1, sign1, value1 = FPUnpack(op1, fmt, fpcr)
    type2, sign2, value2 = FPUnpack(op2, fmt, fpcr)
    done, result = FPProcessNaNs(type1, type2, op1, op2, fmt, fpcr)
    if done:
        return result
    key1, key2 = _order(type1, op1, fmt), _order(type2, op2, fmt)
    first = key1 > key2 if maximum else key1 < key2
    fptype, sign, value = (type1, sign1, value1) if first else (type2, sign2, value2)
    if fptype == FPType.Infinity:
        return FPInfinity(sign, fmt)
    if fptype == FPType.Zero:
        return FPZero(sign1 & sign2 if maximum else sign1 | sign2, fmt)  # max(+0, -0) = +0, min = -0
    return FPRound(value, fmt, fpcr)  # exact: only FPCR.FZ could change it (a denormal flushed)


def FPMax(op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """The larger operand; a NaN operand propagates (FPProcessNaNs), max(+0, -0) is +0."""
    return _max_min(op1, op2, fmt, fpcr, True)


def FPMin(op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """The smaller operand; a NaN operand propagates (FPProcessNaNs), min(+0, -0) is -0."""
    return _max_min(op1, op2, fmt, fpcr, False)


def _num(op1: int, op2: int, fmt: Format, fpcr: FPCRType, maximum: bool) -> int:
    type1, _, _ = FPUnpack(op1, fmt, fpcr)
    type2, _, _ = FPUnpack(op2, fmt, fpcr)
    loser = FPInfinity(1 if maximum else 0, fmt)  # a single quiet NaN is -Infinity to FPMaxNum, +Infinity to FPMinNum
    if type1 == FPType.QNaN and type2 != FPType.QNaN:
        op1 = loser
    elif type1 != FPType.QNaN and type2 == FPType.QNaN:
        op2 = loser
    return _max_min(op1, op2, fmt, fpcr, maximum)


def FPMaxNum(op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """FPMax, a single quiet NaN read as -Infinity (the number wins; a signalling NaN still propagates)."""
    return _num(op1, op2, fmt, fpcr, True)


def FPMinNum(op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """FPMin, a single quiet NaN read as +Infinity (the number wins; a signalling NaN still propagates)."""
    return _num(op1, op2, fmt, fpcr, False)


def FPConvert(op: int, source: Format, target: Format, fpcr: FPCRType) -> int:
    """op in another format, rounded once (FPCR's mode: RNE); a NaN keeps its sign and the top of its payload
    and is made quiet (FPConvertNaN), or is the default NaN when FPCR.DN is 1.  With ``target`` BF16 it is
    FPConvertBF (BFCVT): the IEEE rules, FPCR.FZ flushing, not BFloat16's round to odd."""
    fptype, sign, value = FPUnpack(op, source, fpcr)
    if fptype in (FPType.SNaN, FPType.QNaN):
        return FPDefaultNaN(fpcr, target) if fpcr.DN else FPConvertNaN(op, source, target)
    if fptype == FPType.Infinity:
        return FPInfinity(sign, target)
    if fptype == FPType.Zero:
        return FPZero(sign, target)
    return FPRound(value, target, fpcr)


def _round_to_integer(value: tuple[int, int], rounding: str) -> int:
    """RoundDown(value) plus the ASL's round_up for the rounding mode."""
    mantissa, e = value
    if e >= 0:
        return mantissa << e
    int_result = mantissa >> -e  # RoundDown (towards minus infinity)
    error2 = (mantissa - (int_result << -e)) << 1  # 2 * error, in units of 2^e
    half2 = 1 << -e  # 2 * 0.5
    if rounding == TIEEVEN:
        round_up = error2 > half2 or (error2 == half2 and int_result & 1)
    elif rounding == TIEAWAY:
        round_up = error2 > half2 or (error2 == half2 and int_result >= 0)
    elif rounding == POSINF:
        round_up = error2 != 0
    elif rounding == NEGINF:
        round_up = False
    else:  # ZERO
        round_up = error2 != 0 and int_result < 0
    return int_result + 1 if round_up else int_result


_KEPT = (FPType.SNaN, FPType.QNaN, FPType.Infinity, FPType.Zero)


def _kept(fptype: FPType, sign: int, op: int, fmt: Format, fpcr: FPCRType) -> int:
    """What FRINT* and BFSCALE make of a NaN (processed), an infinity or a zero (kept, with its sign)."""
    if fptype in (FPType.SNaN, FPType.QNaN):
        return FPProcessNaN(fptype, op, fmt, fpcr)
    return FPInfinity(sign, fmt) if fptype == FPType.Infinity else FPZero(sign, fmt)


def FPRoundInt(op: int, fmt: Format, fpcr: FPCRType, rounding: str) -> int:
    """op rounded to an integral value in its own format (FRINTN: TIEEVEN, FRINTA: TIEAWAY, FRINTP: POSINF,
    FRINTM: NEGINF); a zero result keeps op's sign; a NaN is processed (a signalling one made quiet)."""
    fptype, sign, value = FPUnpack(op, fmt, fpcr)
    if fptype in _KEPT:
        return _kept(fptype, sign, op, fmt, fpcr)
    int_result = _round_to_integer(value, rounding)
    if int_result == 0:
        return FPZero(sign, fmt)
    return FPRound((int_result, 0), fmt, fpcr)


def FPToFixed(op: int, fmt: Format, fbits: int, unsigned: bool, fpcr: FPCRType, rounding: str, M: int) -> int:
    """op * 2^fbits rounded to an M-bit integer and saturated (FCVTZS/FCVTZU: fbits 0, rounding ZERO): a NaN
    is 0, an infinity the end of the range of its sign."""
    fptype, sign, value = FPUnpack(op, fmt, fpcr)
    if fptype in (FPType.SNaN, FPType.QNaN):
        int_result = 0
    elif fptype == FPType.Infinity:
        int_result = -(1 << (M + 1)) if sign else 1 << (M + 1)  # past either end: saturates
    else:
        int_result = _round_to_integer((value[0], value[1] + fbits), rounding)
    low, high = (0, (1 << M) - 1) if unsigned else (-(1 << (M - 1)), (1 << (M - 1)) - 1)
    return min(max(int_result, low), high) & ((1 << M) - 1)


def FixedToFP(op: int, M: int, fbits: int, unsigned: bool, fmt: Format, fpcr: FPCRType) -> int:
    """The M-bit integer op / 2^fbits in a floating-point format, rounded once (SCVTF/UCVTF: fbits 0); zero is
    +0."""
    value = op if unsigned or not op >> (M - 1) else op - (1 << M)
    if value == 0:
        return FPZero(0, fmt)
    return FPRound((value, -fbits), fmt, fpcr)



def FPScale(op: int, scale: int, fmt: Format, fpcr: FPCRType) -> int:
    """op * 2^scale rounded once (BFSCALE: FEAT_SVE_BFSCALE); a NaN is processed, a zero or infinity kept."""
    fptype, sign, value = FPUnpack(op, fmt, fpcr)
    if fptype in _KEPT:
        return _kept(fptype, sign, op, fmt, fpcr)
    return FPRound((value[0], value[1] + scale), fmt, fpcr)


# ---- the scalar FP16 steps and estimates legal in streaming mode (FMULX, FRECPS, FRSQRTS, FRECPX, FRECPE, FRSQRTE)

def _const(value: float, fmt: Format) -> int:
    """FPTwo / FPOnePointFive: the positive constant's bit pattern."""
    exponent, fraction = {1.5: (0, 1 << (fmt.mantissa_bits - 1)), 2.0: (1, 0)}[value]
    return ((exponent + fmt.bias) << fmt.mantissa_bits) | fraction


def FPMulX(op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """FPMul, but 0 * infinity is 2.0 with the product's sign (FMULX)."""
    type1, sign1, _ = FPUnpack(op1, fmt, fpcr)
    type2, sign2, _ = FPUnpack(op2, fmt, fpcr)
    if {type1, type2} == {FPType.Infinity, FPType.Zero}:  # no NaN among them: FPMul's NaN rules do not apply
        return ((sign1 ^ sign2) << (fmt.width - 1)) | _const(2.0, fmt)
    return FPMul(op1, op2, fmt, fpcr)


def _step(op1: int, op2: int, fmt: Format, fpcr: FPCRType, halve: bool) -> int:
    op1 ^= fmt.sign_mask  # op1 = FPNeg(op1): a NaN's sign too (FPCR.AH = 0)
    type1, sign1, value1 = FPUnpack(op1, fmt, fpcr)
    type2, sign2, value2 = FPUnpack(op2, fmt, fpcr)
    done, result = FPProcessNaNs(type1, type2, op1, op2, fmt, fpcr)
    if done:
        return result
    inf1, inf2 = type1 == FPType.Infinity, type2 == FPType.Infinity
    zero1, zero2 = type1 == FPType.Zero, type2 == FPType.Zero
    if (inf1 and zero2) or (zero1 and inf2):
        return _const(1.5 if halve else 2.0, fmt)
    if inf1 or inf2:
        return FPInfinity(sign1 ^ sign2, fmt)
    c = 3 if halve else 2
    mantissa, exponent = value1[0] * value2[0], value1[1] + value2[1]  # the product, exact
    low = min(exponent, 0)
    total = (c << -low) + (mantissa << (exponent - low))  # c + value1 * value2, at 2^low
    if total == 0:
        return FPZero(0, fmt)
    return FPRound((total, low - (1 if halve else 0)), fmt, fpcr)


def FPRecipStepFused(op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """2.0 - op1 * op2 rounded once (FRECPS); 0 * infinity gives 2.0."""
    return _step(op1, op2, fmt, fpcr, False)


def FPRSqrtStepFused(op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """(3.0 - op1 * op2) / 2.0 rounded once (FRSQRTS); 0 * infinity gives 1.5."""
    return _step(op1, op2, fmt, fpcr, True)


def FPRecpX(op: int, fmt: Format, fpcr: FPCRType) -> int:
    """FRECPX: a NaN processed; else the sign, the exponent field inverted (the largest finite exponent for a zero
    or denormal), a zero fraction."""
    fptype, sign, _ = FPUnpack(op, fmt, fpcr)
    if fptype in (FPType.SNaN, FPType.QNaN):
        return FPProcessNaN(fptype, op, fmt, fpcr)
    exp = (op >> fmt.mantissa_bits) & fmt.max_exponent_field
    new = fmt.max_exponent_field - 1 if exp == 0 else ~exp & fmt.max_exponent_field
    return (sign << (fmt.width - 1)) | (new << fmt.mantissa_bits)


def RecipEstimate(a: int) -> int:
    """9-bit a (256-511, 0.5 <= a / 512 < 1) to its 9-bit reciprocal estimate, rounded to nearest twice."""
    a = a * 2 + 1
    b = (1 << 19) // a
    return (b + 1) // 2


def RecipSqrtEstimate(a: int) -> int:
    """9-bit a (128-511, 0.25 <= a / 512 < 1) to its 9-bit reciprocal square root estimate."""
    if a < 256:
        a = a * 2 + 1
    else:
        a = (a >> 1) << 1
        a = (a + 1) * 2
    b = 512
    while a * (b + 1) * (b + 1) < (1 << 28):
        b += 1
    return (b + 1) // 2


def _fraction52(op: int, fmt: Format) -> tuple[int, int]:
    """(the fraction field left-aligned in 52 bits, the exponent field)."""
    f = fmt.mantissa_bits
    return (op & fmt.mantissa_mask) << (52 - f), (op >> f) & fmt.max_exponent_field


def FPRecipEstimate(op: int, fmt: Format, fpcr: FPCRType) -> int:
    """FRECPE: 1 / op to 8 fraction bits by RecipEstimate; a zero gives an infinity, an infinity a zero, a value
    too small for the reciprocal to be finite an infinity (round to nearest)."""
    fptype, sign, value = FPUnpack(op, fmt, fpcr)
    if fptype in (FPType.SNaN, FPType.QNaN):
        return FPProcessNaN(fptype, op, fmt, fpcr)
    if fptype == FPType.Infinity:
        return FPZero(sign, fmt)
    if fptype == FPType.Zero:
        return FPInfinity(sign, fmt)
    limit = {16: -16, 32: -128, 64: -1024}[fmt.width]
    magnitude = abs(value[0])
    if magnitude.bit_length() - 1 + value[1] < limit:  # Abs(value) < 2^limit
        return FPInfinity(sign, fmt)
    fraction, exp = _fraction52(op, fmt)
    if exp == 0:
        if not fraction >> 51 & 1:
            exp = -1
            fraction = (fraction << 2) & ((1 << 52) - 1)
        else:
            fraction = (fraction << 1) & ((1 << 52) - 1)
    scaled = (1 << 8) | (fraction >> 44)
    result_exp = 2 * fmt.bias - 1 - exp
    estimate = RecipEstimate(scaled)
    fraction = (estimate & 0xFF) << 44
    if result_exp == 0:
        fraction = (1 << 51) | (fraction >> 1)
    elif result_exp == -1:
        fraction = (1 << 50) | (fraction >> 2)
        result_exp = 0
    return (sign << (fmt.width - 1)) | (result_exp << fmt.mantissa_bits) | (fraction >> (52 - fmt.mantissa_bits))


def FPRSqrtEstimate(op: int, fmt: Format, fpcr: FPCRType) -> int:
    """FRSQRTE: 1 / sqrt(op) to 8 fraction bits by RecipSqrtEstimate; a zero gives an infinity of its sign, a
    negative number the default NaN, +infinity +0."""
    fptype, sign, _ = FPUnpack(op, fmt, fpcr)
    if fptype in (FPType.SNaN, FPType.QNaN):
        return FPProcessNaN(fptype, op, fmt, fpcr)
    if fptype == FPType.Zero:
        return FPInfinity(sign, fmt)
    if sign:
        return FPDefaultNaN(fpcr, fmt)
    if fptype == FPType.Infinity:
        return FPZero(0, fmt)
    fraction, exp = _fraction52(op, fmt)
    if exp == 0:
        while not fraction >> 51 & 1:
            fraction = (fraction << 1) & ((1 << 52) - 1)
            exp -= 1
        fraction = (fraction << 1) & ((1 << 52) - 1)
    scaled = (1 << 8) | (fraction >> 44) if exp % 2 == 0 else (1 << 7) | (fraction >> 45)
    result_exp = (3 * fmt.bias - 1 - exp) // 2
    estimate = RecipSqrtEstimate(scaled)
    return (result_exp << fmt.mantissa_bits) | ((estimate & 0xFF) << (fmt.mantissa_bits - 8))
