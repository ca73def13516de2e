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
(fp_arrays.py) that give the same bit patterns for whole tiles at once; only exact host operations
feed their integer rounding (see the comment there).

FPCR: only its architectural reset value, all zero, is supported (``FPCR_DEFAULT``: round to
nearest even, FZ = FZ16 = 0, DN = 0, AH = 0, AHP = 0, EBF = 0); the trace format has no FPCR.
The functions take an ``fpcr`` so that FZ, FZ16 and DN act as the ASL says (the ZA wrappers set
DN; tests/arm_sme/numerics/test_fp_asl.py exercises FZ and DN by hand), but a rounding mode other
than RNE, AH = 1, AHP = 1 or EBF = 1 raises NotImplementedError.  FPSR's cumulative exception flags
are not modelled: the ZA-targeting operations generate no floating-point exceptions (fpexc = FALSE in
their ASL), and BFDotAdd with EBF = 0 raises none either.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from functools import lru_cache

from ...core.numerics import BF16, FP16, FP32, FP64, Format

__all__ = ["FPCRType", "FPCR_DEFAULT", "FPType", "FPUnpack", "FPRound", "FPProcessNaNs", "FPProcessNaNs3",
           "FPMulAdd", "FPMulAdd_ZA", "FPAdd", "FPMul", "FPDot", "FPDotAdd_ZA", "FPNeg", "BFUnpack", "BFRound",
           "BFMulH", "FPAdd_BF16", "BFDotAdd", "BFNeg", "FPDefaultNaN", "BF16", "FP16", "FP32", "FP64",
           "FPAdd_ZA", "FPSub_ZA", "FPMulAddH_ZA"]


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



# ---- the other ZA-targeting operations of SME2 (FADD/FSUB, FMLAL, B16B16): no exceptions, FPCR.DN = 1 -----

def FPAdd_ZA(op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """FPAdd for SME ZA-targeting instructions (FADD into ZA): no exceptions, the default NaN.  With
    ``fmt`` BF16 it is BFAdd_ZA (FEAT_SME_B16B16): the same IEEE rules on BFloat16's fields, FPCR.FZ
    flushing its denormals, rounded by the FPCR's mode (not BFloat16's round to odd)."""
    return FPAdd(op1, op2, fmt, _with(fpcr, DN=1))


def FPSub_ZA(op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """FPSub for SME ZA-targeting instructions (FSUB from ZA): op1 - op2 is op1 + FPNeg(op2) here, the
    special cases included (inf - inf of one sign is invalid, (+0) - (+0) is +0); every NaN result is the
    default NaN, so which operand's NaN would propagate does not matter."""
    return FPAdd(op1, FPNeg(op2, fmt, fpcr), fmt, _with(fpcr, DN=1))


def FPMulAddH_ZA(addend: int, op1: int, op2: int, fmt: Format, fpcr: FPCRType) -> int:
    """addend + op1*op2 into single precision with one rounding, op1 and op2 16-bit (FMLAL's
    FPMulAddH_ZA with ``fmt`` FP16, BFMLAL's BFMulAddH_ZA with BF16): each operand widened to single
    precision exactly (a half-precision denormal is a single-precision normal; a BFloat16 is the top half
    of a single), then FPMulAdd_ZA.  A NaN operand gives the default NaN either way (FPCR.DN = 1)."""
    return FPMulAdd_ZA(addend, _widen16(op1, fmt), _widen16(op2, fmt), FP32, fpcr)


def _widen16(op: int, fmt: Format) -> int:
    """A half-precision or BFloat16 bit pattern as the single-precision one of the same value (a NaN
    stays a NaN, its payload shifted up)."""
    if fmt is BF16:
        return op << 16
    sign, exp, frac = _fields(op, FP16)
    if exp == FP16.max_exponent_field:
        return (sign << 31) | FP32.exponent_mask | (frac << 13)
    if exp == 0:
        if frac == 0:
            return sign << 31
        shift = 11 - frac.bit_length()  # normalise: the leading one moves to bit 10
        return (sign << 31) | ((FP32.bias - 15 + 1 - shift) << 23) | (((frac << shift) & 0x3FF) << 13)
    return (sign << 31) | ((exp - FP16.bias + FP32.bias) << 23) | (frac << 13)

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
