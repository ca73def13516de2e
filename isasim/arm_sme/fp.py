"""The Arm floating-point rules the SME ASL uses, bit-exact, in the Arm ARM's own names (J1.3).

Each function follows its pseudocode: FPUnpack classifies an operand, FPProcessNaNs* pick the
NaN that propagates (signalling NaNs first, then quiet ones, in operand order), FPRound rounds an
exact real once, and FPMulAdd / FPDot / FPAdd compute their result exactly and round it once
where the ASL rounds once.  The ZA-targeting wrappers (FPMulAdd_ZA, FPDotAdd_ZA) set FPCR.DN,
as the Arm ARM's do, so every NaN an SME instruction writes to ZA is the default NaN.  BFloat16
with FPCR.EBF = 0 ("standard BFloat16 behaviours", BFDotAdd) is its own arithmetic: inputs and
outputs flushed to zero, every NaN the default NaN, round-to-odd (BFRound), and two products
added in two rounding steps.

Reals are exact: a value is ``(mantissa, exponent)`` Python ints meaning mantissa * 2^exponent
(the sign in the mantissa), so nothing depends on the host FPU.  Operands and results are bit
patterns (Python ints).  The instructions execute array forms of FPMulAdd_ZA, FPDotAdd_ZA and BFDotAdd
(the end of this file) that give the same bit patterns for whole tiles at once; only exact host
operations feed their integer rounding (see the comment there).

FPCR: only its architectural reset value, all zero, is supported (``FPCR_DEFAULT``: round to
nearest even, FZ = FZ16 = 0, DN = 0, AH = 0, AHP = 0, EBF = 0); the trace format has no FPCR.
The functions take an ``fpcr`` so that FZ, FZ16 and DN act as the ASL says (the ZA wrappers set
DN; test_fp.py exercises FZ and DN by hand), but a rounding mode other than RNE, AH = 1, AHP = 1
or EBF = 1 raises NotImplementedError.  FPSR's cumulative exception flags are not modelled: the
ZA-targeting operations generate no floating-point exceptions (fpexc = FALSE in their ASL), and
BFDotAdd with EBF = 0 raises none either.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache

import numpy as np

from ..core.numerics import BF16, FP16, FP32, FP64, Format

__all__ = ["FPCRType", "FPCR_DEFAULT", "FPType", "FPUnpack", "FPRound", "FPProcessNaNs", "FPProcessNaNs3",
           "FPMulAdd", "FPMulAdd_ZA", "FPAdd", "FPMul", "FPDot", "FPDotAdd_ZA", "FPNeg", "BFUnpack", "BFRound",
           "BFMulH", "FPAdd_BF16", "BFDotAdd", "BFNeg", "FPDefaultNaN", "BF16", "FP16", "FP32", "FP64"]


@dataclass(frozen=True)
class FPCRType:
    """The FPCR fields the ASL of these operations reads (all other fields have no effect here)."""

    AH: int = 0  # alternate floating-point behaviour (FEAT_AFP): 0, IEEE
    FZ: int = 0  # flush single/double denormals (inputs and outputs) to zero
    FZ16: int = 0  # flush half-precision denormals to zero
    DN: int = 0  # a NaN result is the default NaN instead of the propagated operand
    AHP: int = 0  # alternative half-precision format: 0, IEEE half precision
    EBF: int = 0  # extended BFloat16 behaviours (FEAT_EBF16): 0, the standard ones
    RMode: int = 0  # rounding mode: 0, round to nearest, ties to even


FPCR_DEFAULT = FPCRType()  # the only FPCR isasim's arm_sme runs with (the reset value)


class FPType(Enum):
    Zero = "Zero"
    Denormal = "Denormal"
    Nonzero = "Nonzero"
    Infinity = "Infinity"
    QNaN = "QNaN"
    SNaN = "SNaN"


NANS = (FPType.QNaN, FPType.SNaN)
TIEEVEN, ODD = "TIEEVEN", "ODD"  # FPRounding_TIEEVEN, and BFRound's round to odd


@lru_cache(maxsize=None)
def _with(fpcr: FPCRType, **fields) -> FPCRType:
    """fpcr with some fields set, as the ASL's ``fpcr.DN = '1'`` (cached: the FPCR values are few)."""
    return replace(fpcr, **fields)


def _supported(fpcr: FPCRType) -> None:
    if fpcr.RMode or fpcr.AH or fpcr.AHP or fpcr.EBF:
        raise NotImplementedError(f"isasim models FPCR with RMode = AH = AHP = EBF = 0 only, not {fpcr}")


# ---- bit patterns ----------------------------------------------------------------------------------

def _fields(bits: int, fmt: Format) -> tuple[int, int, int]:
    """(sign, exponent field, fraction field)"""
    f = fmt.mantissa_bits
    return bits >> (fmt.width - 1), (bits >> f) & fmt.max_exponent_field, bits & fmt.mantissa_mask


def FPZero(sign: int, fmt: Format) -> int:
    return sign << (fmt.width - 1)


def FPInfinity(sign: int, fmt: Format) -> int:
    return (sign << (fmt.width - 1)) | fmt.exponent_mask


def FPDefaultNaN(fpcr: FPCRType, fmt: Format) -> int:
    """sign FPCR.AH (FEAT_AFP), all-ones exponent, only the top fraction bit set."""
    return (fpcr.AH << (fmt.width - 1)) | fmt.exponent_mask | fmt.quiet_bit


def FPNeg(op: int, fmt: Format, fpcr: FPCRType) -> int:
    """The sign bit inverted; with FPCR.AH = 0 a NaN's sign too."""
    _supported(fpcr)
    return op ^ fmt.sign_mask


def BFNeg(op: int) -> int:
    """BFNeg(op, honor_altfp = FALSE), as BFMOPS calls it: the sign bit inverted, NaN or not."""
    return op ^ BF16.sign_mask


# ---- unpacking ---------------------------------------------------------------------------------------

def FPUnpack(bits: int, fmt: Format, fpcr: FPCRType) -> tuple[FPType, int, tuple[int, int]]:
    """FPUnpackBase for IEEE half, single and double precision: (type, sign, exact value).  A
    denormal input is flushed to a zero of its sign when FPCR.FZ (FZ16 for half precision) is 1."""
    _supported(fpcr)
    sign, exp, frac = _fields(bits, fmt)
    f = fmt.mantissa_bits
    if exp == 0:
        flush = fpcr.FZ16 if fmt is FP16 else fpcr.FZ
        if frac == 0 or flush:
            fptype, value = FPType.Zero, (0, 0)
        else:
            fptype, value = FPType.Denormal, (frac, fmt.min_normal_exponent - f)
    elif exp == fmt.max_exponent_field:
        if frac == 0:
            fptype, value = FPType.Infinity, (0, 0)  # the ASL's 2^1000000: never used in arithmetic here
        else:
            fptype = FPType.QNaN if frac & fmt.quiet_bit else FPType.SNaN
            value = (0, 0)
    else:
        fptype, value = FPType.Nonzero, ((1 << f) | frac, exp - fmt.bias - f)
    if sign:
        value = (-value[0], value[1])
    return fptype, sign, value


def BFUnpack(bits: int, fmt: Format) -> tuple[FPType, int, tuple[int, int]]:
    """BFUnpack of a BFloat16 or single-precision value: a denormal is zero (fixed flush to zero),
    and every NaN is quiet (BFloat16 arithmetic has no signalling NaN)."""
    sign, exp, frac = _fields(bits, fmt)
    f = fmt.mantissa_bits
    if exp == 0:
        fptype, value = FPType.Zero, (0, 0)
    elif exp == fmt.max_exponent_field:
        fptype, value = (FPType.Infinity if frac == 0 else FPType.QNaN), (0, 0)
    else:
        fptype, value = FPType.Nonzero, ((1 << f) | frac, exp - fmt.bias - f)
    if sign:
        value = (-value[0], value[1])
    return fptype, sign, value


# ---- exact reals -------------------------------------------------------------------------------------

def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    low = min(a[1], b[1])
    return (a[0] << (a[1] - low)) + (b[0] << (b[1] - low)), low


def _mul(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    return a[0] * b[0], a[1] + b[1]


# ---- rounding ----------------------------------------------------------------------------------------

def _round(value: tuple[int, int], fmt: Format, flush: bool, rounding: str) -> int:
    """FPRoundBase / BFRound for a non-zero exact value: normalise, flush a value below the smallest
    normal to zero if ``flush`` (tininess before rounding), round the fraction to F bits once,
    carry into the exponent, overflow to infinity."""
    mantissa, e = value
    assert mantissa != 0, "the ASL rounds only non-zero reals (exact zeros are decided before)"
    sign = int(mantissa < 0)
    magnitude = abs(mantissa)
    f = fmt.mantissa_bits
    minimum_exp = fmt.min_normal_exponent
    exponent = magnitude.bit_length() - 1 + e  # value = 1.xxx * 2^exponent
    if flush and exponent < minimum_exp:
        return FPZero(sign, fmt)
    biased_exp = max(exponent - minimum_exp + 1, 0)
    # int_mant = RoundDown(mantissa * 2^F), the mantissa scaled down to the denormal range first
    shift = e + f - max(exponent, minimum_exp)
    if shift >= 0:
        int_mant, remainder, half = magnitude << shift, 0, 1
    else:
        int_mant = magnitude >> -shift
        remainder = magnitude - (int_mant << -shift)
        half = 1 << (-shift - 1)
    if rounding == TIEEVEN:
        round_up = remainder > half or (remainder == half and int_mant & 1)
    else:  # round to odd: an inexact result gets its lowest bit set (never a carry)
        round_up = remainder != 0 and not int_mant & 1
    if round_up:
        int_mant += 1
        if int_mant == 1 << f:  # a denormal rounded up to the smallest normal
            biased_exp = 1
        if int_mant == 1 << (f + 1):  # the fraction carried out: the next binade
            biased_exp += 1
            int_mant >>= 1
    if biased_exp >= fmt.max_exponent_field:
        return FPInfinity(sign, fmt)  # RNE and BFRound overflow to an infinity of the result's sign
    return (sign << (fmt.width - 1)) | (biased_exp << f) | (int_mant & fmt.mantissa_mask)


def FPRound(value: tuple[int, int], fmt: Format, fpcr: FPCRType) -> int:
    """FPRound with the FPCR's rounding mode (RNE); a result below the smallest normal is flushed to
    zero when FPCR.FZ (FZ16 for half precision) is 1."""
    _supported(fpcr)
    flush = bool(fpcr.FZ16 if fmt is FP16 else fpcr.FZ)
    return _round(value, fmt, flush, TIEEVEN)


def BFRound(value: tuple[int, int]) -> int:
    """BFRound: to single precision, round to odd, fixed flush to zero, overflow to infinity."""
    return _round(value, FP32, True, ODD)


# ---- NaNs --------------------------------------------------------------------------------------------

def FPProcessNaN(fptype: FPType, op: int, fmt: Format, fpcr: FPCRType) -> int:
    """A signalling NaN made quiet; the default NaN instead when FPCR.DN is 1."""
    result = op | fmt.quiet_bit if fptype == FPType.SNaN else op
    return FPDefaultNaN(fpcr, fmt) if fpcr.DN else result


def FPConvertNaN(op: int, source: Format, target: Format) -> int:
    """The NaN's sign and payload (the fraction below the quiet bit) in another format, made quiet."""
    sign, _, frac = _fields(op, source)
    payload_bits = source.mantissa_bits - 1
    payload = frac & ((1 << payload_bits) - 1)
    shift = target.mantissa_bits - source.mantissa_bits
    payload = payload << shift if shift >= 0 else payload >> -shift
    return (sign << (target.width - 1)) | target.exponent_mask | target.quiet_bit | payload


def _process_nans(types, ops, fmt: Format, fpcr: FPCRType) -> int | None:
    """The first signalling NaN in operand order, else the first quiet one (FPCR.AH = 0)."""
    for wanted in (FPType.SNaN, FPType.QNaN):
        for fptype, op in zip(types, ops):
            if fptype == wanted:
                return FPProcessNaN(fptype, op, fmt, fpcr)
    return None


def FPProcessNaNs(type1, type2, op1, op2, fmt, fpcr) -> tuple[bool, int]:
    result = _process_nans((type1, type2), (op1, op2), fmt, fpcr)
    return result is not None, result or 0


def FPProcessNaNs3(type1, type2, type3, op1, op2, op3, fmt, fpcr) -> tuple[bool, int]:
    result = _process_nans((type1, type2, type3), (op1, op2, op3), fmt, fpcr)
    return result is not None, result or 0


def FPProcessNaNs4(types, ops, fpcr) -> tuple[bool, int]:
    """Four half-precision operands (FPDot's); the chosen NaN converted to single precision."""
    result = _process_nans(types, ops, FP16, fpcr)
    if result is None:
        return False, 0
    return True, FPConvertNaN(result, FP16, FP32)


# ---- arithmetic --------------------------------------------------------------------------------------

def FPMul(op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    type1, sign1, value1 = FPUnpack(op1, fmt, fpcr)
    type2, sign2, value2 = FPUnpack(op2, fmt, fpcr)
    done, result = FPProcessNaNs(type1, type2, op1, op2, fmt, fpcr)
    if done:
        return result
    inf1, inf2 = type1 == FPType.Infinity, type2 == FPType.Infinity
    zero1, zero2 = type1 == FPType.Zero, type2 == FPType.Zero
    if (inf1 and zero2) or (zero1 and inf2):
        return FPDefaultNaN(fpcr, fmt)
    if inf1 or inf2:
        return FPInfinity(sign1 ^ sign2, fmt)
    if zero1 or zero2:
        return FPZero(sign1 ^ sign2, fmt)
    return FPRound(_mul(value1, value2), fmt, fpcr)


def _add_special_cases(type1, sign1, type2, sign2, fmt: Format, fpcr: FPCRType) -> int | None:
    """The part FPAdd and FPAdd_BF16 share after their NaN handling: opposite infinities give the
    default NaN, an infinity wins, two zeros of one sign give that zero; None for the finite sum."""
    inf1, inf2 = type1 == FPType.Infinity, type2 == FPType.Infinity
    zero1, zero2 = type1 == FPType.Zero, type2 == FPType.Zero
    if inf1 and inf2 and sign1 != sign2:
        return FPDefaultNaN(fpcr, fmt)
    if (inf1 and sign1 == 0) or (inf2 and sign2 == 0):
        return FPInfinity(0, fmt)
    if (inf1 and sign1 == 1) or (inf2 and sign2 == 1):
        return FPInfinity(1, fmt)
    if zero1 and zero2 and sign1 == sign2:
        return FPZero(sign1, fmt)
    return None


def FPAdd(op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    type1, sign1, value1 = FPUnpack(op1, fmt, fpcr)
    type2, sign2, value2 = FPUnpack(op2, fmt, fpcr)
    done, result = FPProcessNaNs(type1, type2, op1, op2, fmt, fpcr)
    if done:
        return result
    special = _add_special_cases(type1, sign1, type2, sign2, fmt, fpcr)
    if special is not None:
        return special
    result_value = _add(value1, value2)
    if result_value[0] == 0:
        return FPZero(0, fmt)  # an exact zero is +0 when rounding to nearest
    return FPRound(result_value, fmt, fpcr)


def FPMulAdd(addend: int, op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """addend + op1*op2 with a single rounding."""
    typeA, signA, valueA = FPUnpack(addend, fmt, fpcr)
    type1, sign1, value1 = FPUnpack(op1, fmt, fpcr)
    type2, sign2, value2 = FPUnpack(op2, fmt, fpcr)
    inf1, inf2 = type1 == FPType.Infinity, type2 == FPType.Infinity
    zero1, zero2 = type1 == FPType.Zero, type2 == FPType.Zero
    done, result = FPProcessNaNs3(typeA, type1, type2, addend, op1, op2, fmt, fpcr)
    if typeA == FPType.QNaN and ((inf1 and zero2) or (zero1 and inf2)):
        result = FPDefaultNaN(fpcr, fmt)  # FPCR.AH = 0: 0 * inf is invalid even beside a quiet NaN addend
    if done:
        return result
    infA, zeroA = typeA == FPType.Infinity, typeA == FPType.Zero
    signP, infP, zeroP = sign1 ^ sign2, inf1 or inf2, zero1 or zero2
    invalidop = (inf1 and zero2) or (zero1 and inf2) or (infA and infP and signA != signP)
    if invalidop:
        return FPDefaultNaN(fpcr, fmt)
    if (infA and signA == 0) or (infP and signP == 0):
        return FPInfinity(0, fmt)
    if (infA and signA == 1) or (infP and signP == 1):
        return FPInfinity(1, fmt)
    if zeroA and zeroP and signA == signP:
        return FPZero(signA, fmt)
    result_value = _add(valueA, _mul(value1, value2))
    if result_value[0] == 0:
        return FPZero(0, fmt)
    return FPRound(result_value, fmt, fpcr)


def FPMulAdd_ZA(addend: int, op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """FPMulAdd for SME ZA-targeting instructions: no exceptions, and the default NaN (FPCR.DN = 1)."""
    return FPMulAdd(addend, op1, op2, fmt, _with(fpcr, DN=1))


def FPDot(op1_a: int, op1_b: int, op2_a: int, op2_b: int, fpcr: FPCRType) -> int:
    """op1_a*op2_a + op1_b*op2_b of half-precision operands, to single precision with a single
    rounding (isbfloat16 = FALSE; FPCR.AHP is ignored)."""
    fpcr = _with(fpcr, AHP=0)
    ops = (op1_a, op1_b, op2_a, op2_b)
    (type1_a, sign1_a, value1_a), (type1_b, sign1_b, value1_b), (type2_a, sign2_a, value2_a), \
        (type2_b, sign2_b, value2_b) = (FPUnpack(op, FP16, fpcr) for op in ops)
    inf1_a, zero1_a = type1_a == FPType.Infinity, type1_a == FPType.Zero
    inf1_b, zero1_b = type1_b == FPType.Infinity, type1_b == FPType.Zero
    inf2_a, zero2_a = type2_a == FPType.Infinity, type2_a == FPType.Zero
    inf2_b, zero2_b = type2_b == FPType.Infinity, type2_b == FPType.Zero
    done, result = FPProcessNaNs4((type1_a, type1_b, type2_a, type2_b), ops, fpcr)
    if done:
        return result
    signPa, signPb = sign1_a ^ sign2_a, sign1_b ^ sign2_b
    infPa, infPb = inf1_a or inf2_a, inf1_b or inf2_b
    zeroPa, zeroPb = zero1_a or zero2_a, zero1_b or zero2_b
    invalidop = ((inf1_a and zero2_a) or (zero1_a and inf2_a) or (inf1_b and zero2_b) or (zero1_b and inf2_b)
                 or (infPa and infPb and signPa != signPb))
    if invalidop:
        return FPDefaultNaN(fpcr, FP32)
    if (infPa and signPa == 0) or (infPb and signPb == 0):
        return FPInfinity(0, FP32)
    if (infPa and signPa == 1) or (infPb and signPb == 1):
        return FPInfinity(1, FP32)
    if zeroPa and zeroPb and signPa == signPb:
        return FPZero(signPa, FP32)
    result_value = _add(_mul(value1_a, value2_a), _mul(value1_b, value2_b))
    if result_value[0] == 0:
        return FPZero(0, FP32)
    return FPRound(result_value, FP32, fpcr)


def FPDotAdd_ZA(addend: int, op1_a: int, op1_b: int, op2_a: int, op2_b: int, fpcr: FPCRType) -> int:
    """addend + (op1_a*op2_a + op1_b*op2_b) for SME ZA-targeting instructions: the dot product
    rounded once to single precision (FPDot), then added with a second rounding (FPAdd); no
    exceptions, and the default NaN (FPCR.DN = 1)."""
    fpcr = _with(fpcr, DN=1)
    prod = FPDot(op1_a, op1_b, op2_a, op2_b, fpcr)
    return FPAdd(addend, prod, FP32, fpcr)


# ---- BFloat16, FPCR.EBF = 0 --------------------------------------------------------------------------

def BFMulH(op1: int, op2: int, fpcr: FPCRType) -> int:
    """BFloat16 op1*op2 widened to single precision, BFloat16 rules: a NaN operand gives the
    default NaN, denormals are zero, the product is rounded to odd (BFRound)."""
    type1, sign1, value1 = BFUnpack(op1, BF16)
    type2, sign2, value2 = BFUnpack(op2, BF16)
    if type1 == FPType.QNaN or type2 == FPType.QNaN:
        return FPDefaultNaN(fpcr, FP32)
    inf1, inf2 = type1 == FPType.Infinity, type2 == FPType.Infinity
    zero1, zero2 = type1 == FPType.Zero, type2 == FPType.Zero
    if (inf1 and zero2) or (zero1 and inf2):
        return FPDefaultNaN(fpcr, FP32)
    if inf1 or inf2:
        return FPInfinity(sign1 ^ sign2, FP32)
    if zero1 or zero2:
        return FPZero(sign1 ^ sign2, FP32)
    return BFRound(_mul(value1, value2))


def FPAdd_BF16(op1: int, op2: int, fpcr: FPCRType) -> int:
    """Single-precision op1 + op2 following BFloat16 rules (BFUnpack, BFRound)."""
    type1, sign1, value1 = BFUnpack(op1, FP32)
    type2, sign2, value2 = BFUnpack(op2, FP32)
    if type1 == FPType.QNaN or type2 == FPType.QNaN:
        return FPDefaultNaN(fpcr, FP32)
    special = _add_special_cases(type1, sign1, type2, sign2, FP32, fpcr)
    if special is not None:
        return special
    result_value = _add(value1, value2)
    if result_value[0] == 0:
        return FPZero(0, FP32)  # positive when rounding to odd
    return BFRound(result_value)


def BFDotAdd(addend: int, op1_a: int, op1_b: int, op2_a: int, op2_b: int, fpcr: FPCRType) -> int:
    """addend + op1_a*op2_a + op1_b*op2_b, BFloat16 into single precision.  FPCR.EBF = 0 (the only
    value isasim models): each product rounded (BFMulH), their sum rounded, then the addend added
    and rounded, every step with the standard BFloat16 behaviours."""
    _supported(fpcr)
    prod = FPAdd_BF16(BFMulH(op1_a, op2_a, fpcr), BFMulH(op1_b, op2_b, fpcr), fpcr)
    return FPAdd_BF16(addend, prod, fpcr)


# ---- the same rules over whole arrays (what the instructions execute) ---------------------------------
#
# The functions above define each operation one element at a time; explain prints them and the tests
# derive examples from them.  The instructions run these array forms instead, which compute the same bit
# patterns for every element at once with numpy (tests/arm_sme/test_fp_vectorised.py compares the two
# on random and biased lanes; test_fp_vs_qemu.py compares the instructions with QEMU).  Only
# FPCR_DEFAULT is supported here (the only FPCR the instructions run with).
#
# How a result is computed without the host FPU deciding any Arm rounding:
#
# 1. Specials (NaN, infinity, zero; denormals flushed where the rules flush them) are classified with
#    integer masks on the bit patterns, and their results chosen with np.where in the order the scalar
#    code tests them.  With FPCR.DN = 1 (the ZA forms) and in BFloat16 arithmetic every NaN result is
#    the default NaN, so which operand's NaN "wins" does not matter here.
# 2. Every finite operand becomes the float64 holding exactly its value (np.ldexp of an integer below
#    2^24 by a power of two that stays inside float64's normal range: exact).  A product of two of them
#    is exact in float64: at most 24 x 24 = 48 significant bits <= 53, magnitudes between 2^-298 and
#    2^256 (no overflow, no float64 denormal).
# 3. A sum a + b of two such values is split exactly into s + err by Knuth's TwoSum (s = fl(a + b), err
#    the exact remainder; exact for any magnitudes in binary floating point rounding to nearest, without
#    overflow).  The pair is turned into round_to_odd_53(a + b): s when err = 0 or s's last bit is
#    already odd, else the float64 next to s towards err (a + b lies strictly between s and it, and of
#    two adjacent float64 exactly one has an odd last bit).
# 4. That float64 is rounded to single precision with integer operations on its bits, exactly as
#    _round does (tininess before rounding, denormals, carry, overflow).  Rounding to odd first and then
#    once more at a coarser precision gives the same result as rounding the exact value once, when the
#    coarser rounding drops at least 2 more bits (here at least 53 - 24 = 29): a value rounded to odd
#    at 53 bits stays exact when a + b is exact at 53 bits, and otherwise keeps an odd (non-zero) last
#    bit below every bit single precision keeps, so it is on the same side of every single-precision
#    value and midpoint as a + b (round to nearest even), and inexact exactly when a + b is (round to
#    odd, BFRound).  Rounding to odd never crosses a power of two (powers of two have an even last bit),
#    so the exponent, and with it the flush-to-zero and denormal decisions, are those of a + b.
# The only host operations are therefore exact ones (ldexp, a product of <= 53 bits, TwoSum, whose
# rounding error it recovers exactly), given that numpy's float64 arithmetic rounds to nearest even
# (the default; _round_to_odd_53 checks it) and that no FTZ or DAZ applies (every value here, err
# included, is a float64 normal or zero: all are multiples of 2^-298 below 2^257).

_DEFAULT_NAN_S = 0x7FC00000  # FPDefaultNaN(FPCR with AH = 0, FP32)
_INF_S, _SIGN_S = 0x7F800000, 0x80000000


@dataclass(frozen=True)
class _Unpacked:
    """FPUnpack / BFUnpack of an array of bit patterns: a mask per type, the signs, and each finite
    value as an exact float64 (0 for the zeros, infinities and NaNs)."""

    sign: np.ndarray  # int64 0 or 1
    zero: np.ndarray
    inf: np.ndarray
    nan: np.ndarray
    value: np.ndarray  # float64


def _unpack_array(bits, fmt: Format, flush: bool) -> _Unpacked:
    """FPUnpack with FZ (FZ16) = ``flush``, or BFUnpack (flush = True: BFloat16 rules flush denormals;
    signalling and quiet NaNs are told apart only by FPProcessNaN, whose result is the default NaN here).
    16-bit formats are looked up in tables of _unpack_bits over all 65,536 patterns."""
    if fmt.width == 16:
        index = np.asarray(bits).astype(np.intp)
        return _Unpacked(*(field[index] for field in _unpacked16(fmt, flush)))
    return _unpack_bits(bits, fmt, flush)


@lru_cache(maxsize=None)
def _unpacked16(fmt: Format, flush: bool) -> tuple[np.ndarray, ...]:
    unpacked = _unpack_bits(np.arange(1 << 16), fmt, flush)
    return unpacked.sign, unpacked.zero, unpacked.inf, unpacked.nan, unpacked.value


def _unpack_bits(bits, fmt: Format, flush: bool) -> _Unpacked:
    """_unpack_array by integer steps on the fields."""
    bits = np.asarray(bits).astype(np.int64)
    f = fmt.mantissa_bits
    sign = (bits >> (fmt.width - 1)) & 1
    exp = (bits >> f) & fmt.max_exponent_field
    frac = bits & fmt.mantissa_mask
    top = exp == fmt.max_exponent_field
    denormal = exp == 0
    zero = denormal & ((frac == 0) | flush)
    mantissa = np.where(denormal, frac, frac | (1 << f))
    mantissa = np.where(zero | top, 0, mantissa)
    exponent = np.where(denormal, fmt.min_normal_exponent, exp - fmt.bias) - f
    # exact: |mantissa| < 2^24 and 2^exponent within float64's normal range
    value = np.ldexp(np.where(sign == 1, -mantissa, mantissa).astype(np.float64), exponent.astype(np.int32))
    return _Unpacked(sign, zero, top & (frac == 0), top & (frac != 0), value)


_ONE, _THREE_QUARTERS_ULP, _ONE_UP = 1.0, 0.75 * 2.0 ** -52, 1.0 + 2.0 ** -52  # variables: not folded


def _host_rounds_to_nearest() -> bool:
    """TwoSum is exact only when the host's float64 additions round to nearest: its default, which
    numpy never changes; checked anyway, with Python floats (the same SSE unit and control register
    as numpy's loops): 1 +- 3/4 ulp goes to the nearer neighbour, not towards zero or an infinity."""
    return _ONE + _THREE_QUARTERS_ULP == _ONE_UP and -_ONE - _THREE_QUARTERS_ULP == -_ONE_UP


def _round_to_odd_53(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """round_to_odd_53(a + b) of exact float64 values, as the uint64 bit patterns of float64 (step 3)."""
    if not _host_rounds_to_nearest():
        raise RuntimeError("the host's float64 rounding mode is not round to nearest: isasim's FP array forms "
                           "need it for TwoSum")
    s = a + b
    b_virtual = s - a
    a_virtual = s - b_virtual
    err = (a - a_virtual) + (b - b_virtual)  # TwoSum: a + b == s + err exactly
    bits = s.view(np.uint64)
    inexact_even = (err != 0) & ((bits & 1) == 0)  # then s != 0 (s = 0 only when a = -b exactly)
    away = np.signbit(err) == np.signbit(s)  # err points away from zero: the next larger magnitude
    return bits + (inexact_even & away).astype(np.uint64) - (inexact_even & ~away).astype(np.uint64)


def _round_denormal_fp32(bits64: np.ndarray) -> np.ndarray:
    """_round(value, FP32, flush = False, TIEEVEN) for non-zero values below 2^-126 given by float64
    patterns rounded to odd at 53 bits (step 4): the value in units of 2^-149 (the denormal pattern)
    rounded to an integer, to nearest even.  A carry to 2^23 is pattern 0x00800000, the smallest
    normal, as _round's "denormal rounded up" case."""
    magnitude = bits64 & _MAGNITUDE64
    exponent = (magnitude >> np.uint64(52)).astype(np.int64) - 1023  # value = 1.xxx * 2^exponent, < -126
    mantissa = ((magnitude & np.uint64((1 << 52) - 1)) | np.uint64(1 << 52)).astype(np.int64)
    # value = mantissa * 2^(exponent - 52): -shift of _round is 52 - 149 - exponent >= 30 bits dropped.
    # Beyond 60 the kept part is 0 and the remainder (< 2^53) below half either way: capping changes
    # nothing and keeps the shifts inside int64.
    drop = np.minimum(-97 - exponent, 60)
    kept = mantissa >> drop
    remainder = mantissa - (kept << drop)
    half = np.left_shift(np.int64(1), drop - 1)
    round_up = (remainder > half) | ((remainder == half) & ((kept & 1) == 1))
    return ((kept + round_up) | ((bits64 >> np.uint64(63)).astype(np.int64) << 31)).astype(np.uint32)


def _sum_fp32(a: np.ndarray, b: np.ndarray, rounding: str, flush: bool) -> np.ndarray:
    """The exact sum a + b of finite float64 values rounded once to single precision: +0 when the sum
    is exactly zero (round to nearest and to odd both give +0: the ASL's FPZero('0'))."""
    return _round_fp32_fast(_round_to_odd_53(a, b), rounding, flush)


def _as_float64(bits32: np.ndarray) -> np.ndarray:
    """A finite single-precision pattern's exact value (FPUnpack with FZ = 0)."""
    return _unpack_array(bits32, FP32, False).value


def _add_array(x: _Unpacked, y: _Unpacked, rounding: str, flush: bool) -> np.ndarray:
    """FPAdd (FPCR.DN = 1) and FPAdd_BF16 of unpacked operands: the same decisions in the same order."""
    result = _sum_fp32(x.value, y.value, rounding, flush)
    result = np.where(x.zero & y.zero & (x.sign == y.sign), x.sign << 31, result)
    result = np.where((x.inf & (x.sign == 1)) | (y.inf & (y.sign == 1)), 0xFF800000, result)
    result = np.where((x.inf & (x.sign == 0)) | (y.inf & (y.sign == 0)), _INF_S, result)
    invalid = x.inf & y.inf & (x.sign != y.sign)
    return np.where(x.nan | y.nan | invalid, _DEFAULT_NAN_S, result).astype(np.uint32)


def _FPMulAdd_ZA_general(addend, op1, op2) -> np.ndarray:
    """FPMulAdd_ZA(addend, op1, op2, FP32, FPCR_DEFAULT) for every element of the broadcast arrays of
    single-precision bit patterns, every case (FPMulAdd_ZA_array uses it for lanes with an infinity or NaN)."""
    A, X, Y = (_unpack_array(bits, FP32, False) for bits in (addend, op1, op2))
    signP, infP, zeroP = X.sign ^ Y.sign, X.inf | Y.inf, X.zero | Y.zero
    result = _sum_fp32(A.value, X.value * Y.value, TIEEVEN, False)  # the product is exact (step 2)
    result = np.where(A.zero & zeroP & (A.sign == signP), A.sign << 31, result)
    result = np.where((A.inf & (A.sign == 1)) | (infP & (signP == 1)), 0xFF800000, result)
    result = np.where((A.inf & (A.sign == 0)) | (infP & (signP == 0)), _INF_S, result)
    invalid = (X.inf & Y.zero) | (X.zero & Y.inf) | (A.inf & infP & (A.sign != signP))
    return np.where(A.nan | X.nan | Y.nan | invalid, _DEFAULT_NAN_S, result).astype(np.uint32)


def _FPDot_array(op1_a, op1_b, op2_a, op2_b) -> np.ndarray:
    """FPDot with FPCR.DN = 1 over arrays of half-precision patterns (the default NaN, converted to
    single precision, for any NaN operand: FPConvertNaN of 0x7E00 is 0x7FC00000)."""
    A1, B1, A2, B2 = (_unpack_array(bits, FP16, False) for bits in (op1_a, op1_b, op2_a, op2_b))
    signPa, signPb = A1.sign ^ A2.sign, B1.sign ^ B2.sign
    infPa, infPb = A1.inf | A2.inf, B1.inf | B2.inf
    zeroPa, zeroPb = A1.zero | A2.zero, B1.zero | B2.zero
    # products of halves: <= 22 bits, exact; their sum rounded once (it never overflows single precision)
    result = _sum_fp32(A1.value * A2.value, B1.value * B2.value, TIEEVEN, False)
    result = np.where(zeroPa & zeroPb & (signPa == signPb), signPa << 31, result)
    result = np.where((infPa & (signPa == 1)) | (infPb & (signPb == 1)), 0xFF800000, result)
    result = np.where((infPa & (signPa == 0)) | (infPb & (signPb == 0)), _INF_S, result)
    invalid = ((A1.inf & A2.zero) | (A1.zero & A2.inf) | (B1.inf & B2.zero) | (B1.zero & B2.inf)
               | (infPa & infPb & (signPa != signPb)))
    nan = A1.nan | B1.nan | A2.nan | B2.nan
    return np.where(nan | invalid, _DEFAULT_NAN_S, result).astype(np.uint32)


def _FPDotAdd_ZA_general(addend, op1_a, op1_b, op2_a, op2_b) -> np.ndarray:
    """FPDotAdd_ZA(...) with FPCR_DEFAULT over broadcast arrays, every case: FPDot rounded once, then FPAdd."""
    prod = _FPDot_array(op1_a, op1_b, op2_a, op2_b)
    return _add_array(_unpack_array(addend, FP32, False), _unpack_array(prod, FP32, False), TIEEVEN, False)


def _BFMulH_array(op1, op2) -> np.ndarray:
    """BFMulH over arrays of BFloat16 patterns (its product, <= 16 bits, is exact before BFRound)."""
    X, Y = _unpack_array(op1, BF16, True), _unpack_array(op2, BF16, True)
    sign = X.sign ^ Y.sign
    product = X.value * Y.value
    nonzero = product != 0
    result = np.where(nonzero, _round_fp32_fast(product.view(np.uint64), ODD, True), 0)  # exact: odd already
    result = np.where(X.zero | Y.zero, sign << 31, result)
    result = np.where(X.inf | Y.inf, (sign << 31) | _INF_S, result)
    invalid = (X.inf & Y.zero) | (X.zero & Y.inf)
    return np.where(X.nan | Y.nan | invalid, _DEFAULT_NAN_S, result).astype(np.uint32)


def _BFDotAdd_general(addend, op1_a, op1_b, op2_a, op2_b) -> np.ndarray:
    """BFDotAdd(...) with FPCR_DEFAULT (EBF = 0) over broadcast arrays, every case: two BFMulH,
    FPAdd_BF16 of them, FPAdd_BF16 with the addend, each rounded to odd with BFloat16's flushing."""
    first, second = _BFMulH_array(op1_a, op2_a), _BFMulH_array(op1_b, op2_b)
    prod = _add_array(_unpack_array(first, FP32, True), _unpack_array(second, FP32, True), ODD, True)
    return _add_array(_unpack_array(addend, FP32, True), _unpack_array(prod, FP32, True), ODD, True)


# ---- the common case with fewer numpy steps ----------------------------------------------------------
#
# The functions above handle every case with masks over every lane; each numpy step costs about a
# microsecond whatever the array size, so at small SVLs their few hundred steps are the whole cost.
# The public array forms below compute the usual lanes in fewer steps and hand the others to them:
#   * operand values: single-precision normals and zeros widened to float64 by numpy (exact: see
#     _fp32_values), denormals by ldexp as in step 2; 16-bit formats: a table of the 65,536 exact
#     values, made by _unpack_array;
#   * a result whose exponent is in the single-precision normal range is rounded directly on the
#     float64 pattern (step 4 restricted to that range, where exactly 29 bits are dropped: round to
#     nearest even adds 2^28 - 1 plus the last kept bit and shifts, a carry going into the exponent as
#     _round's; round to odd ORs the sticky bit in); exponents beyond the range overflow to infinity,
#     as _round's do; results below the smallest normal are flushed or rounded by _round_denormal_fp32;
#   * an exact zero result takes the sign the ASL's zero rules give (FPZero(signA) when both terms are
#     zeros of one sign, else +0);
#   * an infinite or NaN addend, and a BFloat16 product or sum that overflows, are followed through
#     the ASL's infinity and NaN rules directly; every lane with an infinity or NaN among the
#     multiplied operands is computed again by the general form (or, when they are few, by the scalar
#     function).

_FP32_TO_FP64_BIAS = 1023 - 127  # single-precision exponent field + this = float64 exponent field
_MAGNITUDE64 = np.uint64((1 << 63) - 1)


def _fp32_values(bits, flush: bool) -> tuple[np.ndarray, np.ndarray]:
    """(exact float64 value, exponent field all ones) of single-precision patterns; denormals are 0
    when ``flush`` (BFUnpack).  The value of an infinity or NaN lane is meaningless (but finite).

    Normals and zeros are widened by numpy's float32 -> float64 conversion: every float32 normal or
    zero is a float64 one, so the conversion is exact and involves no rounding (and FTZ/DAZ, which
    affect only denormal operands, cannot change it).  Denormal inputs are rebuilt by _unpack_array
    (ldexp of the integer fraction) rather than trusted to the conversion."""
    b = np.asarray(bits, dtype=np.uint32)
    magnitude = b & np.uint32(0x7FFFFFFF)
    top = magnitude >= np.uint32(_INF_S)
    if top.any():  # an infinity or NaN: the lane is recomputed; 0 keeps the conversion and arithmetic quiet
        b = np.where(top, np.uint32(0), b)
    value = b.view(np.float32).astype(np.float64)
    denormal = (magnitude - np.uint32(1)) < np.uint32(0x7FFFFF)  # 0 < magnitude < 2^23 (0 wraps round)
    if denormal.any():
        value = np.where(denormal, 0.0 if flush else _unpack_array(b, FP32, False).value, value)
    return value, top


@lru_cache(maxsize=None)
def _table16(fmt: Format, flush: bool) -> tuple[np.ndarray, np.ndarray]:
    """(exact float64 value, infinity or NaN) of every 16-bit pattern of ``fmt``, from _unpack_array."""
    unpacked = _unpack_bits(np.arange(1 << 16), fmt, flush)
    return unpacked.value, unpacked.inf | unpacked.nan


def _round_fp32_fast(bits64: np.ndarray, rounding: str, flush: bool) -> np.ndarray:
    """_round(value, FP32, flush, rounding) (step 4) for any float64 patterns rounded to odd at 53 bits,
    +0 for a zero; returns uint32 patterns."""
    assert flush or rounding == TIEEVEN, "round to odd comes only with BFRound's flush to zero"
    magnitude = bits64 & _MAGNITUDE64
    if rounding == TIEEVEN:
        kept = (magnitude + np.uint64((1 << 28) - 1) + ((magnitude >> np.uint64(29)) & np.uint64(1))) >> np.uint64(29)
    else:
        kept = (magnitude >> np.uint64(29)) | ((magnitude & np.uint64((1 << 29) - 1)) != 0).astype(np.uint64)
    # the float64 exponent field minus the bias difference is the single-precision one; beyond 254
    # (also after a carry) the result is an infinity
    below = magnitude < np.uint64((_FP32_TO_FP64_BIAS + 1) << 52)  # below 2^-126 (zero included)
    kept = np.minimum(kept - np.uint64(_FP32_TO_FP64_BIAS << 23), np.uint64(_INF_S))  # wraps when below
    result = (kept | ((bits64 >> np.uint64(63)) << np.uint64(31))).astype(np.uint32)
    if below.any():
        zero = magnitude == 0
        if flush:
            small = np.where(zero, np.uint32(0), ((bits64 >> np.uint64(63)) << np.uint64(31)).astype(np.uint32))
        else:  # FPRound: round to nearest even (round to odd comes only with BFRound's flush)
            small = np.where(zero, np.uint32(0), _round_denormal_fp32(bits64))
        result = np.where(below, small, result)
    return result


# Up to this many lanes are recomputed one by one by the scalar function (the definition itself, some
# 20 microseconds a lane) rather than by the general form, whose hundreds of numpy steps cost about a
# millisecond however few the lanes.
_SCALAR_LANES = 32


def _redo(result: np.ndarray, lanes: np.ndarray, general, scalar, operands) -> np.ndarray:
    """result with the given lanes computed again, by the general form or the scalar function."""
    result = np.array(np.broadcast_to(result, lanes.shape), dtype=np.uint32)
    picked = [np.broadcast_to(op, lanes.shape)[lanes] for op in operands]
    if len(picked[0]) <= _SCALAR_LANES:
        result[lanes] = [scalar(*lane) for lane in zip(*(column.tolist() for column in picked))]
    else:
        result[lanes] = general(*picked)
    return result


def _top_addend(result: np.ndarray, addend, topA: np.ndarray) -> np.ndarray:
    """Lanes whose addend is an infinity or NaN and whose other terms are finite: FPMulAdd_ZA and
    FPAdd (DN = 1) give the default NaN for a NaN addend, else the infinity itself."""
    addend = np.asarray(addend, dtype=np.uint32)
    nan = (addend & np.uint32(0x7FFFFFFF)) > np.uint32(_INF_S)
    return np.where(topA, np.where(nan, np.uint32(_DEFAULT_NAN_S), addend), result)


def _sign(bits, width: int) -> np.ndarray:
    return (np.asarray(bits) >> (width - 1)) & 1


def FPMulAdd_ZA_array(addend, op1, op2) -> np.ndarray:
    """FPMulAdd_ZA(addend, op1, op2, FP32, FPCR_DEFAULT) for every element of the broadcast arrays of
    single-precision bit patterns: addend + op1*op2 rounded once."""
    (valueA, topA), (value1, top1), (value2, top2) = (_fp32_values(op, False) for op in (addend, op1, op2))
    total = _round_to_odd_53(valueA, value1 * value2)
    result = _round_fp32_fast(total, TIEEVEN, False)
    exact_zero = (total & _MAGNITUDE64) == 0
    if exact_zero.any():  # FPZero(signA) when addend and product are zeros of one sign, else +0
        zeroA, zero1, zero2 = ((np.asarray(op) & 0x7FFFFFFF) == 0 for op in (addend, op1, op2))
        negative = zeroA & (zero1 | zero2) & (_sign(addend, 32) == 1) & ((_sign(op1, 32) ^ _sign(op2, 32)) == 1)
        result = np.where(exact_zero & negative, np.uint32(_SIGN_S), result)
    if topA.any():
        result = _top_addend(result, addend, topA)
    special = top1 | top2
    if special.any():
        result = _redo(result, special, _FPMulAdd_ZA_general,
                       lambda a, x, y: FPMulAdd_ZA(a, x, y, FP32, FPCR_DEFAULT), (addend, op1, op2))
    return result


def FPDotAdd_ZA_array(addend, op1_a, op1_b, op2_a, op2_b) -> np.ndarray:
    """FPDotAdd_ZA(...) with FPCR_DEFAULT over broadcast arrays: FPDot rounded once, then FPAdd."""
    values, tops = _table16(FP16, False)
    a1, b1, a2, b2 = (np.asarray(op) for op in (op1_a, op1_b, op2_a, op2_b))
    # FPDot: the two products are exact (22 bits); the dot is non-zero >= 2^-48 and < 2^33, so always
    # in the normal range
    dot = _round_to_odd_53(values[a1] * values[a2], values[b1] * values[b2])
    prod = _round_fp32_fast(dot, TIEEVEN, False)
    dot_zero = (dot & _MAGNITUDE64) == 0
    if dot_zero.any():  # FPZero(signPa) when both products are zeros of one sign, else +0
        zero = [(op & 0x7FFF) == 0 for op in (a1, b1, a2, b2)]
        signPa, signPb = ((a1 ^ a2) >> 15) == 1, ((b1 ^ b2) >> 15) == 1  # 16-bit patterns: bit 15
        negative = (zero[0] | zero[2]) & (zero[1] | zero[3]) & signPa & signPb
        prod = np.where(dot_zero & negative, np.uint32(_SIGN_S), prod)
    valueA, topA = _fp32_values(addend, False)
    valueP, _ = _fp32_values(prod, False)  # finite: no infinity or NaN comes from finite halves
    total = _round_to_odd_53(valueA, valueP)
    result = _round_fp32_fast(total, TIEEVEN, False)
    exact_zero = (total & _MAGNITUDE64) == 0
    if exact_zero.any():  # FPAdd: FPZero(sign1) when both are zeros of one sign, else +0
        negative = (np.asarray(addend) == _SIGN_S) & (prod == _SIGN_S)
        result = np.where(exact_zero & negative, np.uint32(_SIGN_S), result)
    if topA.any():  # the dot of finite halves is finite
        result = _top_addend(result, addend, topA)
    special = tops[a1] | tops[b1] | tops[a2] | tops[b2]
    if special.any():
        result = _redo(result, special, _FPDotAdd_ZA_general, lambda *ops: FPDotAdd_ZA(*ops, FPCR_DEFAULT),
                       (addend, op1_a, op1_b, op2_a, op2_b))
    return result


_OVERFLOW = 2.0 ** 128  # the smallest magnitude BFRound turns into an infinity (a power of two: exact)
_SMALLEST_NORMAL = 2.0 ** -126


def _bf_add(x: np.ndarray, y: np.ndarray, x_bits: np.ndarray, y_bits: np.ndarray) -> np.ndarray:
    """FPAdd_BF16 of finite values x, y (exact float64; zeros' signs from the patterns x_bits, y_bits,
    whose zeros are the flushed ones too): rounded to odd, flushed, an overflow an infinity."""
    total = _round_to_odd_53(x, y)
    result = _round_fp32_fast(total, ODD, True)
    exact_zero = (total & _MAGNITUDE64) == 0
    if exact_zero.any():  # FPZero(sign1) when both are zeros of one sign, else +0
        negative = (x == 0) & (y == 0) & ((x_bits >> 31) == 1) & ((y_bits >> 31) == 1)
        result = np.where(exact_zero & negative, np.uint32(_SIGN_S), result)
    return result


def BFDotAdd_array(addend, op1_a, op1_b, op2_a, op2_b) -> np.ndarray:
    """BFDotAdd(...) with FPCR_DEFAULT (EBF = 0) over broadcast arrays: two BFMulH, FPAdd_BF16 of them,
    FPAdd_BF16 with the addend, each rounded to odd with BFloat16's flushing."""
    values, tops = _table16(BF16, True)
    a1, b1, a2, b2 = (np.asarray(op) for op in (op1_a, op1_b, op2_a, op2_b))
    special = tops[a1] | tops[b1] | tops[a2] | tops[b2]
    products, overflows = [], []
    for x, y in ((a1, a2), (b1, b2)):  # BFMulH: exact (16 bits), flushed below 2^-126, infinite from 2^128
        product = values[x] * values[y]
        magnitude = np.abs(product)
        product = np.where(magnitude < _SMALLEST_NORMAL, 0.0, product)
        overflows.append(magnitude >= _OVERFLOW)
        # the pattern's sign is the product's (a zero product's too: sign1 XOR sign2)
        products.append((product, ((x ^ y).astype(np.uint32) >> 15) << 31))
    (first, first_sign), (second, second_sign) = products
    prod = _bf_add(first, second, first_sign, second_sign)
    overflow = overflows[0] | overflows[1]
    if overflow.any():  # a BFMulH infinity: FPAdd_BF16 gives it, or the default NaN for two opposite ones
        opposite = overflows[0] & overflows[1] & (first_sign != second_sign)
        infinity = np.where(overflows[0], first_sign, second_sign) | np.uint32(_INF_S)
        prod = np.where(overflow, np.where(opposite, np.uint32(_DEFAULT_NAN_S), infinity), prod)
    valueP, topP = _fp32_values(prod, True)
    valueA, topA = _fp32_values(addend, True)
    result = _bf_add(valueA, valueP, np.asarray(addend).astype(np.uint32), prod)
    if topP.any():  # FPAdd_BF16(a finite addend, an infinity or the default NaN) is that infinity or NaN
        result = np.where(topP, prod, result)
    if topA.any():  # FPAdd_BF16(an infinite or NaN addend, prod): the default NaN for a NaN or for
        # opposite infinities, else the addend's infinity
        addend_bits = np.asarray(addend, dtype=np.uint32)
        magnitude = prod & np.uint32(0x7FFFFFFF)
        opposite = (magnitude == np.uint32(_INF_S)) & (((prod ^ addend_bits) >> np.uint32(31)) == 1)
        nan = ((addend_bits & np.uint32(0x7FFFFFFF)) > np.uint32(_INF_S)) | (magnitude > np.uint32(_INF_S)) | opposite
        result = np.where(topA, np.where(nan, np.uint32(_DEFAULT_NAN_S), addend_bits), result)
    if special.any():
        result = _redo(result, special, _BFDotAdd_general, lambda *ops: BFDotAdd(*ops, FPCR_DEFAULT),
                       (addend, op1_a, op1_b, op2_a, op2_b))
    return result
