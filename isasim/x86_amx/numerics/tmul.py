"""Bit-exact AMX TMUL lane arithmetic: the fp32 lanes of TDPBF16PS/TDPFP16PS.

This is the x86/AMX half of the numerics. The ISA-neutral half (formats,
classification, exact widening and IEEE conversions) is `isasim.core.numerics`;
an Arm SME2 or Ascend module puts its own lane rules (FPCR modes, its default
NaN) beside its ISA in the same way.

No result here depends on the host FPU's rounding mode, FTZ or DAZ setting.
Each rounding is done explicitly, in one of two ways:

* exact integer arithmetic;
* a float64 step that is provably exact, or provably close enough, followed
  by explicit integer rounding of the bit pattern. The proofs are in the
  comments next to the code.

The AMX TMUL floating-point rules implemented here were measured on Emerald
Rapids silicon. They are the Intel SDM pseudocode for TDPBF16PS, plus the
silicon-established NaN priority and after-rounding tininess:

``tmul_fma32(acc, a, b)``
    One lane step ``acc + a*b``:
    - DAZ on all three inputs, keeping the sign.
    - The product is exact, with an unbounded exponent range.
    - The sum is rounded once, RNE.
    - FTZ on the result, with tininess detected after rounding.
    - Overflow goes to +-inf.
    - An exact zero sum is +0 unless both addends are -0.
    - NaN priority is a, then b, then acc; an invalid operation gives
      DEFAULT_NAN32.
``tmul_add32(x, y)``
    ``x + y`` under the same rules. NaN priority is x, then y.
``tmul_fma32_fold(acc, a, b)``
    ``for k: acc = tmul_fma32(acc, a[k], b[k])``: a whole lane accumulator
    over K steps. It gives bit-identical results several times faster. Use it
    for TDPBF16PS/TDPFP16PS.

The vectorised functions here are what the simulator runs over whole tiles.
The ``*_reference`` functions of :mod:`.reference` are scalar, pure-Python-int
transcriptions of the same rules. They are used by the tests and to explain
single elements (pass ``notes=[]``).

TDPFP16PS note: the SDM says that fp16 input denormals are *not* flushed
("Handle FP16 denorms. Not forcing input FP16 denorms to 0"), and that the
FP32 FMA runs with DAZ=FTZ=1. `fp16_to_fp32` widens exactly, and every fp16
denormal (at least 2**-24 in magnitude) becomes a *normal* fp32 value. So
the fp32 DAZ in `tmul_fma32` never touches fp16 inputs. That is exactly
the SDM behaviour, and no flag is needed.
"""

from __future__ import annotations

import numpy as np

# The private helpers below are core's bit-pattern plumbing (argument kinds,
# exact integer tools, fp32 field masks and classification). They are shared
# on purpose, so that every ISA's lane model handles inputs the same way.
from ...core.numerics import (
    _bit_length_u64,
    _C_ABS,
    _C_EXP,
    _C_INF,
    _C_QUIET,
    _C_SIGN,
    _C_ZERO,
    _daz32,
    _finish,
    FP32,
    _INF32,
    _is_inf32,
    _is_nan32,
    _is_zero32,
    _MANT32,
    _prepare,
)

__all__ = ["DEFAULT_NAN32", "tmul_fma32", "tmul_add32", "tmul_fma32_fold"]

#: x86 default NaN (the "QNaN floating-point indefinite"), produced by invalid
#: operations such as inf*0 and inf-inf.
DEFAULT_NAN32 = 0xFFC00000
_C_DEFAULT_NAN = np.array(DEFAULT_NAN32, dtype=np.uint32)


# ---------------------------------------------------------------------------
# AMX TMUL arithmetic, part 1: the exact integer path (any inputs)
# ---------------------------------------------------------------------------
#
# The fast path (part 2) hands two kinds of lane to this path: lanes with
# inf/NaN inputs, and wide-operand rounding-boundary lanes (rule S2).
# `_fma32_exact` and `_add32_exact` are also a second, independent
# vectorised implementation, which the tests compare with the scalar
# reference.
# A finite fp32 operand is a sign, an integer significand M and an exponent
# e, with value (-1)**sign * M * 2**e. Operands are scaled so that a
# non-zero M lies in [2**46, 2**48):
# - an fp32 significand m (24 bits) is stored as m << 24;
# - an exact product ma*mb (47 or 48 bits) is stored as it is.
# A zero has M = 0.

_ZERO_EXPONENT = -100_000  # exponent given to zero operands: always the smaller one


def _unpack_fp32(b: np.ndarray):
    """DAZ'd fp32 bits -> (sign bit 0/1, significand m, exponent e); value m*2**e."""
    b = b.astype(np.uint64)
    sign = (b >> np.uint64(31)).astype(np.int64)
    exp_field = ((b >> np.uint64(23)) & np.uint64(0xFF)).astype(np.int64)
    m = np.where(exp_field == 0, 0, (b & np.uint64(_MANT32)) | np.uint64(1 << 23)).astype(np.uint64)
    e = np.where(exp_field == 0, _ZERO_EXPONENT, exp_field - 150)
    return sign, m, e


def _round_sum_ftz(s1, m1, e1, s2, m2, e2) -> np.ndarray:
    """fp32 bits of RNE((-1)**s1*m1*2**e1 + (-1)**s2*m2*2**e2), AMX result rules.

    The inputs are finite, and each m is 0 or in [2**46, 2**48). The rules:
    - the exact sum is rounded once, to 24 bits, RNE, with an unbounded
      exponent;
    - if the rounded magnitude is below 2**-126 (x86 after-rounding
      tininess), the result is flushed to a zero with the sign of the exact
      sum (FTZ);
    - if the rounded exponent is above 127, the result is inf (overflow);
    - an exact zero is +0, unless both addends are zeros with the sign bit
      set.

    Method: align both in a 64-bit frame. The operand with the larger
    exponent (hi) has its leading bit at bit 59 or 60. The other (lo) is
    shifted into the frame, and the bits that fall off the bottom are ORed
    into bit 0 ("jamming", a sticky bit). Bits fall off only when the
    exponent gap d > 13. Then |hi| >= 2**59 and |lo| < 2**47, so the sum is
    above 2**58 and is rounded at bit 35 or higher. Replacing the
    fallen-off fraction by a sticky 1 keeps the exact sum strictly inside
    the same interval between two consecutive even integers, so RNE at bit
    >= 2 cannot change. When d <= 13 the frame holds the exact sum.
    """
    swap = e2 > e1
    s_hi, m_hi, e_hi = np.where(swap, s2, s1), np.where(swap, m2, m1), np.where(swap, e2, e1)
    s_lo, m_lo, e_lo = np.where(swap, s1, s2), np.where(swap, m1, m2), np.where(swap, e1, e2)
    gap = np.minimum(e_hi - e_lo, 200)

    hi = m_hi << np.uint64(13)  # < 2**61
    left = np.maximum(13 - gap, 0).astype(np.uint64)
    right = np.minimum(np.maximum(gap - 13, 0), 63).astype(np.uint64)
    lo = (m_lo << left) >> right
    fell_off = m_lo & ((np.uint64(1) << right) - np.uint64(1))
    lo = lo | (fell_off != 0).astype(np.uint64)  # sticky (jam) bit

    z = np.where(s_hi == 1, -hi.astype(np.int64), hi.astype(np.int64)) + np.where(
        s_lo == 1, -lo.astype(np.int64), lo.astype(np.int64)
    )  # |z| < 2**62: no overflow
    negative = z < 0
    mag = np.abs(z).astype(np.uint64)
    scale = e_hi - 13  # exact sum ~= z * 2**scale

    # Round mag to 24 significant bits, RNE.
    length = _bit_length_u64(mag)
    drop = length - 24
    right = np.clip(drop, 0, 63).astype(np.uint64)
    left = np.clip(-drop, 0, 63).astype(np.uint64)
    q = (mag << left) >> right
    rem = mag & ((np.uint64(1) << right) - np.uint64(1))
    half = (np.uint64(1) << right) >> np.uint64(1)
    round_up = (drop > 0) & ((rem > half) | ((rem == half) & ((q & np.uint64(1)) == 1)))
    q = q + round_up.astype(np.uint64)
    carry = q >> np.uint64(24)  # q == 2**24 after rounding up
    q = q >> carry
    top_exponent = drop + carry.astype(np.int64) + scale + 23  # value = q * 2**(top - 23)
    biased = top_exponent + 127

    sign_bits = negative.astype(np.uint64) << np.uint64(31)
    normal = sign_bits | (np.clip(biased, 1, 254).astype(np.uint64) << np.uint64(23)) | (
        q & np.uint64(_MANT32)
    )
    result = np.where(biased >= 255, sign_bits | np.uint64(_INF32), normal)  # overflow
    result = np.where(biased <= 0, sign_bits, result)  # FTZ, after rounding
    both_negative = (s1 == 1) & (s2 == 1)  # exact zero: -0 only if both addends are -0
    result = np.where(mag == 0, both_negative.astype(np.uint64) << np.uint64(31), result)
    return result.astype(np.uint32)


def _fma32_special(acc: np.ndarray, a: np.ndarray, b: np.ndarray):
    """FMA32 results fixed by inf/NaN operands alone (DAZ'd inputs).

    Returns (mask, bits) where mask marks those lanes. Rules, highest
    priority first:
    - NaN a gives quiet(a); NaN b gives quiet(b); NaN acc gives quiet(acc);
    - inf*0 gives the default NaN;
    - inf*x + inf of the other sign gives the default NaN;
    - inf*x gives an inf with the product's sign;
    - finite product + inf acc gives acc.
    Lanes not in the mask carry garbage.
    """
    nan_a, nan_b, nan_c = _is_nan32(a), _is_nan32(b), _is_nan32(acc)
    inf_a, inf_b, inf_c = _is_inf32(a), _is_inf32(b), _is_inf32(acc)
    product_sign = (a ^ b) & _C_SIGN
    product_invalid = (inf_a & _is_zero32(b)) | (_is_zero32(a) & inf_b)
    product_inf = (inf_a | inf_b) & ~product_invalid
    sum_invalid = product_inf & inf_c & (product_sign != (acc & _C_SIGN))

    bits = np.where(inf_c, acc, _C_ZERO)
    bits = np.where(product_inf, product_sign | _C_INF, bits)
    bits = np.where(product_invalid | sum_invalid, _C_DEFAULT_NAN, bits)
    bits = np.where(nan_c, acc | _C_QUIET, bits)
    bits = np.where(nan_b, b | _C_QUIET, bits)
    bits = np.where(nan_a, a | _C_QUIET, bits)
    return nan_a | nan_b | nan_c | inf_a | inf_b | inf_c, bits


def _fma32_finite(acc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """FMA32 for finite DAZ'd inputs: exact product, exact sum, one rounding (flat arrays)."""
    sa, ma, ea = _unpack_fp32(a)
    sb, mb, eb = _unpack_fp32(b)
    sc, mc, ec = _unpack_fp32(acc)
    return _round_sum_ftz(sa ^ sb, ma * mb, ea + eb, sc, mc << np.uint64(24), ec - 24)


def _fma32_resolve(acc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact FMA32 of DAZ'd inputs (flat uint32 arrays): special values, else the integer path."""
    special, result = _fma32_special(acc, a, b)
    finite = ~special
    if finite.any():
        result[finite] = _fma32_finite(acc[finite], a[finite], b[finite])
    return result


def _fma32_exact(acc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Vectorised exact AMX FMA32 for arbitrary fp32 inputs (flat uint32 arrays).

    Independent of the fast path. The tests check it against the scalar
    reference.
    """
    return _fma32_resolve(_daz32(acc), _daz32(a), _daz32(b))


def _add32_special(x: np.ndarray, y: np.ndarray):
    """ADD32 results fixed by inf/NaN operands alone (DAZ'd inputs): (mask, bits).

    Rules, highest priority first:
    - NaN x gives quiet(x); NaN y gives quiet(y);
    - inf + inf of the other sign gives the default NaN;
    - otherwise the inf operand.
    """
    nan_x, nan_y = _is_nan32(x), _is_nan32(y)
    inf_x, inf_y = _is_inf32(x), _is_inf32(y)
    opposite = ((x ^ y) & _C_SIGN) != 0
    bits = np.where(inf_y, y, _C_ZERO)
    bits = np.where(inf_x, x, bits)
    bits = np.where(inf_x & inf_y & opposite, _C_DEFAULT_NAN, bits)
    bits = np.where(nan_y, y | _C_QUIET, bits)
    bits = np.where(nan_x, x | _C_QUIET, bits)
    return nan_x | nan_y | inf_x | inf_y, bits


def _add32_resolve(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Exact ADD32 of DAZ'd inputs (flat uint32 arrays)."""
    special, result = _add32_special(x, y)
    finite = ~special
    if finite.any():
        sx, mx, ex = _unpack_fp32(x[finite])
        sy, my, ey = _unpack_fp32(y[finite])
        u24 = np.uint64(24)
        result[finite] = _round_sum_ftz(sx, mx << u24, ex - 24, sy, my << u24, ey - 24)
    return result


def _add32_exact(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Vectorised exact AMX ADD32 for arbitrary fp32 inputs (flat uint32 arrays)."""
    return _add32_resolve(_daz32(x), _daz32(y))


# ---------------------------------------------------------------------------
# AMX TMUL arithmetic, part 2: the fast vectorised path
# ---------------------------------------------------------------------------
#
# Fast path: s = float64(acc) + float64(a) * float64(b), then round s to 24
# bits by integer operations on its bit pattern. Why this is exact:
#
# (D) DAZ is a per-input map (denormal -> zero of the same sign). It is
#     applied to the inputs first, and only when some input is denormal.
#
# (P) Product. For normal fp32 a, b (24-bit significands) the product has
#     at most 48 significant bits. Its magnitude lies in [2**-252, 2**256],
#     far inside float64's normal range [2**-1022, 2**1024). So a*b is exact
#     in float64, in any rounding mode. Its sign is sign(a) XOR sign(b),
#     zeros included.
#
# (S) Sum. Let x = acc + p be the exact sum, and s = fl64(x) under the
#     host's rounding mode. Any IEEE mode is *faithful*: s is x itself, or
#     one of the two float64 neighbours of x. Every 24-bit rounding boundary
#     (a midpoint between two consecutive 24-bit values) has 25 significant
#     bits and so is a float64 number. A faithful rounding therefore never
#     carries s across a boundary. Either s lies strictly between the same
#     two boundaries as x, and RNE24(s) == RNE24(x), or s is exactly a
#     boundary. A boundary s is safe when s == x:
#     - (S1) If a and b have at most 12 significant bits (every bf16 and
#       fp16 input), p has at most 24 bits. With an exponent gap g <= 28
#       between acc and p, x is an integer multiple of the finer ulp below
#       2**(g+25) <= 2**53, so s == x exactly. With g >= 29 the smaller
#       addend is below 2**-28 of the larger, which is itself 24-bit
#       representable. Then x, and s, are within 2**(e-28) + 2**(e-51) of
#       the larger addend. The nearest boundary is 2**(e-25) away, so s is
#       not a boundary and RNE24(s) == RNE24(x) == the larger addend.
#     - (S2) For wider a or b, a lane whose s is exactly a boundary is
#       recomputed by the exact integer path. This is rare.
#     x == 0 if and only if s == 0, because float64 cannot underflow here.
#
# (R) Rounding. RNE to 24 bits of a float64 pattern: add 0x0FFFFFFF plus the
#     lowest kept bit (bit 29), then clear bits 28..0. A carry out of the
#     mantissa correctly bumps the exponent. The exponent field is at most
#     2046 for finite s, so the sign bit is never touched. The result r
#     carries the rounded value with an unbounded exponent (float64's range
#     holds every value that can occur).
#
# (F) Range. If 2**-126 <= |r| < 2**128, r is the final fp32 value. Casting
#     it to float32 is exact in any mode, because r has 24 bits and lies in
#     fp32's normal range. Otherwise, for finite inputs, r is still the
#     correctly rounded sum with an unbounded exponent (by S and R), and s
#     has the sign of x. So:
#     - (F1) 0 < |r| < 2**-126 is tiny after rounding. FTZ gives a zero
#       with the sign of r.
#     - (F2) |r| >= 2**128 overflows. The result is inf with the sign of r.
#
# (Z) An exact-zero sum (s == 0) gets the sign (sign acc) AND (sign p).
#     This is the silicon's rule, and it does not depend on the host
#     rounding mode. (Round-down would give x + (-x) = -0.)
#
# (N) s is inf or NaN exactly when some (DAZ'd) input is inf or NaN. Such
#     lanes, and the (S2) boundary lanes, are recomputed from their input
#     bits by the exact path (part 1).
#
# Host FTZ/DAZ never matter here. No float64 value above is denormal, and
# fp32 denormal inputs have been flushed by (D) before any conversion.

_C_NARROW_MASK = np.array(0xFFF, dtype=np.uint32)  # bits below a 12-bit significand
_C_ONE = np.array(1, dtype=np.uint32)
_C_23 = np.array(23, dtype=np.uint32)
_C_FF = np.array(0xFF, dtype=np.uint32)
_U64_ONE = np.array(1, dtype=np.uint64)
_U64_23 = np.array(23, dtype=np.uint64)
_U64_29 = np.array(29, dtype=np.uint64)
_U64_52 = np.array(52, dtype=np.uint64)
_U64_SIGN = np.array(1 << 63, dtype=np.uint64)
_U64_RNE_BIAS = np.array((1 << 28) - 1, dtype=np.uint64)
_U64_KEEP24 = np.array(((1 << 64) - 1) ^ ((1 << 29) - 1), dtype=np.uint64)
_U64_LOW29 = np.array((1 << 29) - 1, dtype=np.uint64)
_U64_MIDPOINT = np.array(1 << 28, dtype=np.uint64)
# |r| in [2**-126, 2**128) <=> biased float64 exponent in [897, 1150].
# (r << 1) drops the sign bit.
_U64_RANGE_LO = np.array(897 << 53, dtype=np.uint64)
_U64_RANGE_HI = np.array(1151 << 53, dtype=np.uint64)
_U64_RANGE_SPAN = np.array((1151 - 897) << 53, dtype=np.uint64)
_U64_NONFINITE = np.array(0x7FF << 53, dtype=np.uint64)  # (bits << 1) >= this: inf or NaN
_U64_INF = np.array(0x7FF << 52, dtype=np.uint64)


def _round_f64_to_24_bits(s_bits: np.ndarray) -> np.ndarray:
    """Rule R: RNE of float64 patterns to 24 significant bits."""
    lowest_kept = (s_bits >> _U64_29) & _U64_ONE
    return (s_bits + (lowest_kept + _U64_RNE_BIAS)) & _U64_KEEP24


def _outside_fp32_normal_range(r_bits: np.ndarray) -> np.ndarray:
    """Rule F: True where |r| is not in [2**-126, 2**128).

    Zeros, NaNs and infs are outside too.
    """
    return ((r_bits << _U64_ONE) - _U64_RANGE_LO) >= _U64_RANGE_SPAN


def _on_24_bit_boundary(s_bits: np.ndarray) -> np.ndarray:
    """Rule S2: True where the float64 value is exactly halfway between two 24-bit values."""
    return (s_bits & _U64_LOW29) == _U64_MIDPOINT


def _count_denormals(x: np.ndarray) -> int:
    """Number of fp32 denormals in *x*: non-zero values minus values with a non-zero exponent."""
    return np.count_nonzero(x & _C_ABS) - np.count_nonzero(x & _C_EXP)


def _daz_if_needed(x: np.ndarray) -> np.ndarray:
    """Rule D."""
    return _daz32(x) if _count_denormals(x) else x


def _expand(x: np.ndarray, shape: tuple) -> np.ndarray:
    """Contiguous copy of *x* broadcast to *shape*.

    Uses np.repeat, which copies whole blocks. That is much faster than a
    broadcasting ufunc when the innermost dimension is tiny, as with the
    (m, n, lane=2) AMX layout.
    """
    x = x.reshape((1,) * (len(shape) - x.ndim) + x.shape)
    for axis, (have, want) in enumerate(zip(x.shape, shape)):
        if have != want:
            x = np.repeat(x, want, axis=axis)
    return np.ascontiguousarray(x)


def _fp32_to_fp64_bits(b: np.ndarray) -> np.ndarray:
    """Exact fp32 -> fp64 patterns by integer ops. NaN payload is kept.

    Denormals must not occur (results are FTZ'd).
    """
    b64 = b.astype(np.uint64)
    exp = (b64 >> _U64_23) & np.uint64(0xFF)
    exp = np.where(exp == 0xFF, np.uint64(0x7FF), np.where(exp == 0, exp, exp + np.uint64(896)))
    return ((b64 >> np.uint64(31)) << np.uint64(63)) | (exp << _U64_52) | (
        (b64 & np.uint64(_MANT32)) << _U64_29
    )


def _fp64_to_fp32_bits(b: np.ndarray) -> np.ndarray:
    """Exact fp64 -> fp32 patterns, for values exactly representable as fp32.

    That means normal fp32 values, zeros, infs, and NaNs whose payload fits.
    Integer ops only.
    """
    exp = ((b >> _U64_52) & np.uint64(0x7FF)).astype(np.int64)
    exp = np.where(exp == 0x7FF, 0xFF, np.where(exp == 0, 0, exp - 896)).astype(np.uint64)
    out = ((b >> np.uint64(63)) << np.uint64(31)) | (exp << _U64_23) | (
        (b >> _U64_29) & np.uint64(_MANT32)
    )
    return out.astype(np.uint32)


def _finish_out_of_range(r_bits, s_bits, x, y, n_outside):
    """Apply rules Z, F1 and F2, in place on *r_bits*, for a step with *n_outside* lanes out of range.

    *x* and *y* are the two float64 addends. Returns the mask of rule-N lanes,
    or None.
    """
    s_doubled = s_bits << _U64_ONE
    zero = s_doubled == 0
    n_zero = np.count_nonzero(zero)
    if n_zero:  # Z: -0 only if both addends are -0
        np.copyto(r_bits, (x.view(np.uint64) & y.view(np.uint64)) & _U64_SIGN, where=zero)
    if n_zero == n_outside:
        return None
    doubled = r_bits << _U64_ONE
    sign = r_bits & _U64_SIGN
    np.copyto(r_bits, sign, where=doubled < _U64_RANGE_LO)  # F1: FTZ after rounding
    np.copyto(r_bits, sign | _U64_INF, where=doubled >= _U64_RANGE_HI)  # F2: overflow
    nonfinite = s_doubled >= _U64_NONFINITE  # N
    return nonfinite if np.count_nonzero(nonfinite) else None


# (B) Bounded folds. The loop in `_fma32_fold` normally tests every step
#     for out-of-range lanes (rule F). A fold may skip that test when one
#     check over all its inputs (DAZ'd and narrow, rule S1) proves that no
#     step can leave the fp32 normal range, except by an exact zero:
#     - No input is inf or NaN. Then no product or sum is.
#     - Every product, and acc, is a multiple of 2**-126. A narrow a carries
#       12 trailing zero bits, so a is a multiple of 2**(Ea-150+12), where Ea
#       is its biased exponent, and likewise b. So Ea + Eb >= 150 (over the
#       non-zero inputs) is enough. RNE to 24 bits keeps values that are
#       multiples of 2**-126 such multiples: below 2**-102 they need no
#       rounding, and above it the 24-bit grid is coarser than 2**-126. So
#       every lane value is 0 or at least 2**-126: never tiny.
#     - |acc| + sum(|p|) < 2**126 and K < 2**23. Each rounding grows a
#       magnitude by at most a factor 1 + 2**-24, so every lane value stays
#       below 2**126 * (1 + 2**-24)**K < 2**127: never overflow.
#     Zeros are then the only lanes the loop leaves unchecked. A zero's sign
#     can only matter to a later step whose sum is also an exact zero. So
#     rule Z is applied once, at the end. A lane that ends at zero ends at
#     +0 unless it was zero all along, meaning acc and every product were
#     zeros. Then it is -0 exactly when acc and every product are -0.
#     Proof: the last step that turned a non-zero value into zero added two
#     opposite-signed numbers, which gives +0, and +0 + (+-0) = +0.


_MIN_BOUNDED_STEPS = 4


def _exponent_range(x: np.ndarray) -> tuple[int, int]:
    """(smallest, largest) biased exponent over the non-zero elements of DAZ'd fp32 bits.

    The smallest is 2**32 if all are zero.
    """
    e = (x >> _C_23) & _C_FF
    smallest = int((e - _C_ONE).min()) + 1  # a zero wraps to 2**32 - 1
    return smallest, int(e.max())


def _fold_is_bounded(acc: np.ndarray, a: np.ndarray, b: np.ndarray, steps: int) -> bool:
    """Rule B: True if no step of this (narrow, DAZ'd) fold can give tiny, huge, inf or NaN values."""
    lo_a, hi_a = _exponent_range(a)
    lo_b, hi_b = _exponent_range(b)
    lo_c, hi_c = _exponent_range(acc)
    if max(hi_a, hi_b, hi_c) == 0xFF or steps >= 1 << 23:
        return False  # an inf or NaN input, or too many steps for the growth bound
    if lo_a + lo_b < 150 or lo_c < 24:
        return False  # a product or acc might not be a multiple of 2**-126
    # |acc| < 2**(hi_c-126) and |p| < 2**(hi_a+hi_b-252). Keep each term <= 2**125.
    return hi_c <= 251 and steps.bit_length() + hi_a + hi_b - 252 <= 125


def _fix_final_zero_signs(out: np.ndarray, acc: np.ndarray, products: np.ndarray) -> None:
    """Rule B: rule Z for a bounded fold's final zeros, in place (acc has the lane shape)."""
    zero = (out << np.uint32(1)) == 0
    if not np.count_nonzero(zero):
        return
    p_bits = products.view(np.uint64)
    zero_all_along = ((acc << np.uint32(1)) == 0) & ~np.any(p_bits << _U64_ONE, axis=0)
    all_negative = ((acc >> np.uint32(31)) == 1) & np.all(p_bits >= _U64_SIGN, axis=0)
    minus_zero = zero_all_along & all_negative
    np.copyto(out, np.where(minus_zero, _C_SIGN, _C_ZERO), where=zero)


def _fma32_fold(acc: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``for k: acc = FMA32(acc, a[k], b[k])`` over uint32 arrays. a[k] and b[k] broadcast to acc.

    Vectorised over lanes, sequential over k. The accumulator is carried as
    exact float64 values. Per step: one float64 add (rule S), the integer RNE
    (rule R), and, unless rule B applies, a range test (rule F). Lanes that
    fail are finished by rules F1, F2, Z, or the exact path.
    """
    steps = a.shape[0]
    shape = np.broadcast_shapes(acc.shape, a.shape[1:], b.shape[1:])
    if 0 in shape:
        return np.zeros(shape, dtype=np.uint32)
    # Align a[k] and b[k] with the lane axes: (k,) + (1, ...) + own shape.
    a = a.reshape((steps,) + (1,) * (len(shape) + 1 - a.ndim) + a.shape[1:])
    b = b.reshape((steps,) + (1,) * (len(shape) + 1 - b.ndim) + b.shape[1:])
    acc, a, b = _daz_if_needed(acc), _daz_if_needed(a), _daz_if_needed(b)  # rule D
    full = (steps,) + shape
    wide = None  # rule S2: lanes whose a or b has more than 12 significant bits
    if np.count_nonzero(a & _C_NARROW_MASK) or np.count_nonzero(b & _C_NARROW_MASK):
        wide = ((_expand(a, full) | _expand(b, full)) & _C_NARROW_MASK) != 0
    # Rule B's one-off check costs about as much as two steps' range tests.
    bounded = steps >= _MIN_BOUNDED_STEPS and wide is None and _fold_is_bounded(acc, a, b, steps)
    with np.errstate(all="ignore"):
        # Rule P: every product is exact in float64.
        products = _expand(a.view(np.float32).astype(np.float64), full) * _expand(
            b.view(np.float32).astype(np.float64), full
        )
        # Exact acc values. A NaN or inf acc is redone at step 0 from its bits.
        c = _expand(acc.view(np.float32).astype(np.float64), shape)
        if bounded:
            for k in range(steps):
                c = _round_f64_to_24_bits((c + products[k]).view(np.uint64)).view(np.float64)  # S, R
            out = c.astype(np.float32).view(np.uint32)  # rule F: normal values and zeros
            _fix_final_zero_signs(out, np.broadcast_to(acc, shape), products)
            return out
        exact_lanes = exact_bits = None
        for k in range(steps):
            p = products[k]
            s_bits = (c + p).view(np.uint64)  # rule S
            r_bits = _round_f64_to_24_bits(s_bits)  # rule R
            exact_lanes = None
            n_outside = np.count_nonzero(_outside_fp32_normal_range(r_bits))  # rule F
            if n_outside:
                exact_lanes = _finish_out_of_range(r_bits, s_bits, c, p, n_outside)
            if wide is not None:  # rule S2
                boundary = wide[k] & _on_24_bit_boundary(s_bits)
                if np.count_nonzero(boundary):
                    exact_lanes = boundary if exact_lanes is None else exact_lanes | boundary
            if exact_lanes is not None:
                if k == 0:
                    acc_bits = np.broadcast_to(acc, shape)[exact_lanes]
                else:
                    acc_bits = _fp64_to_fp32_bits(c.view(np.uint64)[exact_lanes])
                exact_bits = _fma32_resolve(
                    acc_bits,
                    np.broadcast_to(a[k], shape)[exact_lanes],
                    np.broadcast_to(b[k], shape)[exact_lanes],
                )
                r_bits[exact_lanes] = _fp32_to_fp64_bits(exact_bits)
            c = r_bits.view(np.float64)
        # Rule F: the cast is exact for normal values, zeros and infs. The
        # last step's exact lanes (every NaN lane among them) are written
        # from their bits.
        out = c.astype(np.float32).view(np.uint32)
    if exact_lanes is not None:
        out[exact_lanes] = exact_bits
    return out


def _add32_lanes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """ADD32 over broadcastable uint32 arrays (ndim >= 1). The result has the broadcast shape."""
    x, y = _daz_if_needed(x), _daz_if_needed(y)  # rule D
    with np.errstate(all="ignore"):
        xf = x.view(np.float32).astype(np.float64)
        yf = y.view(np.float32).astype(np.float64)
        s_bits = (xf + yf).view(np.uint64)  # rule S (both addends have 24 bits: S1)
        r_bits = _round_f64_to_24_bits(s_bits)  # rule R
        exact_lanes = None
        n_outside = np.count_nonzero(_outside_fp32_normal_range(r_bits))  # rule F
        if n_outside:
            exact_lanes = _finish_out_of_range(r_bits, s_bits, xf, yf, n_outside)
        out = r_bits.view(np.float64).astype(np.float32).view(np.uint32)
    if exact_lanes is not None:
        x, y = np.broadcast_arrays(x, y)
        out[exact_lanes] = _add32_resolve(x[exact_lanes], y[exact_lanes])
    return out


def _broadcastable_arrays(values) -> bool:
    """True if all *values* are uint32 ndarrays with ndim >= 1 (numpy checks the shapes)."""
    return all(type(v) is np.ndarray and v.dtype == np.uint32 and v.ndim for v in values)


def tmul_fma32(acc, a, b):
    """One AMX TMUL lane step: fp32 bits of ``acc + a*b``, as measured on silicon.

    ``acc``, ``a`` and ``b`` are fp32 bit patterns. ``a`` and ``b`` are usually
    widened bf16 or fp16 values (`bf16_to_fp32`, `fp16_to_fp32`), but any fp32
    patterns are handled exactly. Arrays broadcast against each other. Rules
    (SDM "FP32 FMA with DAZ=FTZ=1, RNE", plus the silicon measurements):

    - DAZ: a denormal acc, a or b is read as a zero of the same sign.
    - The product a*b is exact, with no intermediate rounding and no range
      limit.
    - acc + a*b is rounded once, round-to-nearest-even, to 24 bits.
    - FTZ after rounding: if the rounded magnitude is below 2**-126, the
      result is a zero with the sign of the exact sum.
    - Overflow gives +-inf.
    - An exact zero sum is +0, unless acc is -0 and the product is -0.
    - NaN: a NaN a gives quiet(a); else a NaN b gives quiet(b); else a NaN
      acc gives quiet(acc). Otherwise inf*0 or inf-inf gives DEFAULT_NAN32.
    - MXCSR is neither read nor written. There are no exceptions.

    For K steps over the same lanes, use `tmul_fma32_fold`. It gives the
    same result several times faster.
    """
    if _broadcastable_arrays((acc, a, b)):
        return _fma32_fold(acc, a[None], b[None])
    arrays, shape, kind = _prepare((acc, a, b), FP32)
    return _finish(_fma32_fold(arrays[0], arrays[1][None], arrays[2][None]), shape, kind)


def tmul_fma32_fold(acc, a, b):
    """``for k in range(K): acc = tmul_fma32(acc, a[k], b[k])``, in increasing k.

    This is one TMUL lane accumulator run over K steps: a strict left fold,
    as measured on silicon. ``a`` and ``b`` are uint32 fp32-bit arrays whose
    first axis is k, and ``a[k]`` and ``b[k]`` broadcast against ``acc``.
    Returns an array of the broadcast shape. The results are bit-identical to
    the loop. This is faster because DAZ, the products and the input checks
    are done once for all k, and the accumulator stays in (exact) float64
    between steps.
    """
    acc, a, b = (np.asarray(v) for v in (acc, a, b))
    for v in (acc, a, b):
        if v.dtype != np.uint32:
            raise TypeError(f"tmul_fma32_fold takes uint32 fp32-bit arrays, got {v.dtype}")
    if a.ndim == 0 or b.ndim == 0 or a.shape[0] != b.shape[0]:
        raise ValueError("a and b need the same leading (k) axis")
    shape = np.broadcast_shapes(acc.shape, a.shape[1:], b.shape[1:])
    if a.shape[0] == 0:
        return np.broadcast_to(acc, shape).copy()
    if shape == ():  # scalar lanes: compute on shape (1,)
        return _fma32_fold(acc.reshape(1), a.reshape(-1, 1), b.reshape(-1, 1)).reshape(())
    return _fma32_fold(acc, a, b)


def tmul_add32(x, y):
    """AMX TMUL fp32 add (``T = E + O`` and ``C = C + T``): fp32 bits of ``x + y``.

    The rules are the same as `tmul_fma32`: DAZ on inputs, RNE, FTZ after
    rounding, overflow to inf, and an exact zero sum is +0 unless both are
    -0. NaN priority: quiet(x), else quiet(y); inf - inf gives
    DEFAULT_NAN32.
    """
    if _broadcastable_arrays((x, y)):
        return _add32_lanes(x, y)
    arrays, shape, kind = _prepare((x, y), FP32)
    return _finish(_add32_lanes(*arrays), shape, kind)
