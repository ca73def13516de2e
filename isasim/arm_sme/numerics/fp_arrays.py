"""The Arm floating-point rules of fp_asl.py over whole numpy arrays: what the SME floating-point
instructions execute (semantics/fp_products.py), a whole tile or vector group at a time.

Each public function is the array form of one per-element function of fp_asl.py, with the FPCR at its
reset value (FPCR_DEFAULT, the only one the instructions run with), and gives the same bit pattern for
every element: FPMulAdd_ZA_array (FPMulAdd_ZA), FPDotAdd_ZA_array (FPDotAdd_ZA), BFDotAdd_array
(BFDotAdd).  tests/arm_sme/numerics/test_fp_arrays.py compares the two on random and biased lanes;
tests/arm_sme/semantics/test_fp_products_vs_qemu.py compares the instructions with QEMU.  The comments
below say how a result is computed without the host FPU deciding any Arm rounding.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...core.numerics import BF16, FP16, FP32, Format
from .fp_asl import FPCR_DEFAULT, ODD, TIEEVEN, BFDotAdd, FPDotAdd_ZA, FPMulAdd_ZA


# fp_asl.py defines each operation one element at a time; explain prints those functions and the tests
# derive examples from them.  The instructions run these array forms instead.
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
#    fp_asl._round does (tininess before rounding, denormals, carry, overflow).  Rounding to odd first
#    and then once more at a coarser precision gives the same result as rounding the exact value once,
#    when the coarser rounding drops at least 2 more bits (here at least 53 - 24 = 29): a value rounded to odd
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


# ---- 16-bit fused multiply-add into ZA (FMLA/FMOPA .H with FEAT_SME_F16F16, BFMLA/BFMOPA with B16B16) ---

def _round_float64_bits(bits64: np.ndarray, fmt: Format) -> np.ndarray:
    """RNE rounding of non-zero finite float64 values (uint64 bit patterns) to ``fmt``, by integer steps on
    the fields exactly as fp_asl._round (no flushing: FPCR.FZ = FZ16 = 0): denormals, the carry into the
    next binade, overflow to an infinity.  Given round_to_odd_53 of an exact value (step 3 above), the
    result is that of rounding the exact value once (53 >= 16 + 2 bits)."""
    bits64 = np.asarray(bits64, dtype=np.uint64)
    sign = (bits64 >> np.uint64(63)).astype(np.int64)
    exponent = ((bits64 >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64) - 1023  # the values are normal
    mantissa = (bits64 & np.uint64((1 << 52) - 1)) | np.uint64(1 << 52)
    f = fmt.mantissa_bits
    minimum = fmt.min_normal_exponent
    shift = np.minimum(52 - f + np.maximum(minimum - exponent, 0), 60).astype(np.uint64)
    kept = mantissa >> shift
    remainder = mantissa & ((np.uint64(1) << shift) - np.uint64(1))
    half = np.uint64(1) << (shift - np.uint64(1))
    kept = kept + ((remainder > half) | ((remainder == half) & ((kept & np.uint64(1)) == 1))).astype(np.uint64)
    kept = kept.astype(np.int64)
    normal = exponent >= minimum
    biased = np.where(normal, exponent - minimum + 1, (kept >> f) & 1)  # a denormal rounded up to the smallest normal
    carry = normal & (kept == 1 << (f + 1))
    kept = np.where(carry, kept >> 1, kept)
    biased = biased + carry
    result = (sign << (fmt.width - 1)) | (biased << f) | (kept & fmt.mantissa_mask)
    infinity = (sign << (fmt.width - 1)) | fmt.exponent_mask
    return np.where(biased >= fmt.max_exponent_field, infinity, result).astype(fmt.dtype)


def FPMulAdd_ZA16_array(addend, op1, op2, fmt: Format) -> np.ndarray:
    """FPMulAdd_ZA(addend, op1, op2, fmt, FPCR_DEFAULT) for half-precision or BFloat16 (BFMulAdd_ZA: the same
    IEEE rules on BFloat16's fields) bit patterns, broadcast: addend + op1*op2 rounded once.  The product
    of two 16-bit values is exact in float64 (at most 11 x 11 bits), TwoSum and round to odd give the sum
    (steps 2-3 above), _round_float64_bits rounds it; lanes with an infinity or NaN operand are the scalar
    definition's."""
    addend, op1, op2 = np.broadcast_arrays(*(np.asarray(op).astype(np.int64) for op in (addend, op1, op2)))
    a, x, y = (_unpack_bits(op, fmt, False) for op in (addend, op1, op2))
    total = _round_to_odd_53(a.value, x.value * y.value)
    exact_zero = (total & _MAGNITUDE64) == 0
    result = _round_float64_bits(np.where(exact_zero, np.uint64(0x3FF0000000000000), total), fmt)
    # an exact zero: FPZero(signA) when addend and product are zeros of one sign, else +0
    negative = a.zero & (x.zero | y.zero) & (a.sign == 1) & ((x.sign ^ y.sign) == 1)
    result = np.where(exact_zero, np.where(negative, fmt.sign_mask, 0).astype(fmt.dtype), result)
    special = a.inf | a.nan | x.inf | x.nan | y.inf | y.nan
    if special.any():
        result = np.array(result)
        result[special] = [FPMulAdd_ZA(lane_a, lane_x, lane_y, fmt, FPCR_DEFAULT) for lane_a, lane_x, lane_y in
                           zip(addend[special].tolist(), op1[special].tolist(), op2[special].tolist())]
    return result
