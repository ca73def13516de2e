"""The arithmetic of an atomic-add write to GM (SetAtomicAdd): old + new in the atomic dtype.

Floats (float32, float16, bfloat16) add as IEEE does: the exact sum rounded once to nearest
even, inf + -inf and NaN operands give NaN, x + (-x) is +0 and -0 + -0 is -0. Overflow is option
``gm_atomic_float_overflow`` (inf, or +-max when saturating, NaN -> 0). Integers (int32, int16,
int8) wrap or saturate by option ``gm_atomic_int_overflow``. The docs state neither.

The exact sum is integer arithmetic: when one operand is more than 30 binary places below the
other it only decides a tie, so it is replaced by a tiny value of its sign (a sticky bit), which
keeps every intermediate below 2**55.
"""

from __future__ import annotations

import numpy as np

from .formats import BITS_DTYPE, FLOAT_FORMATS, _bit_length, decode_exact, round_exact

__all__ = ["ATOMIC_DTYPES", "atomic_add"]

ATOMIC_DTYPES = ("float32", "float16", "bfloat16", "int32", "int16", "int8")
_INT_RANGES = {"int32": 32, "int16": 16, "int8": 8}
_STICKY_GAP = 30  # farther below than this, an addend only breaks ties
_STICKY_PLACE = 36  # where the stand-in sits below the larger operand's top bit


def atomic_add(old: np.ndarray, new: np.ndarray, dtype: str, options: dict) -> np.ndarray:
    """old + new, both arrays of *dtype* element bits (same shape); returns the sum's bits."""
    if dtype in _INT_RANGES:
        return _add_int(old, new, dtype, options["gm_atomic_int_overflow"])
    if dtype not in FLOAT_FORMATS:
        raise ValueError(f"no atomic add in {dtype} (atomic types: {', '.join(ATOMIC_DTYPES)})")
    return _add_float(old, new, dtype, options["gm_atomic_float_overflow"] == "saturate")


def _add_int(old, new, dtype: str, overflow: str) -> np.ndarray:
    width = _INT_RANGES[dtype]
    signed = {8: np.int8, 16: np.int16, 32: np.int32}[width]
    unsigned = {8: np.uint8, 16: np.uint16, 32: np.uint32}[width]
    total = (np.asarray(old).astype(unsigned).view(signed).astype(np.int64)
             + np.asarray(new).astype(unsigned).view(signed).astype(np.int64))
    if overflow == "saturate":
        total = np.clip(total, -(1 << (width - 1)), (1 << (width - 1)) - 1)
    elif overflow != "wrap":
        raise ValueError(f"gm_atomic_int_overflow={overflow!r}")
    return (total & ((1 << width) - 1)).astype(unsigned)


def _add_float(old, new, dtype: str, saturate: bool) -> np.ndarray:
    a_neg, a_mag, a_exp, a_nan, a_inf = decode_exact(old, dtype)
    b_neg, b_mag, b_exp, b_nan, b_inf = decode_exact(new, dtype)
    a_top = np.where(a_mag == 0, np.iinfo(np.int64).min // 2, a_exp + _bit_length(a_mag))
    b_top = np.where(b_mag == 0, np.iinfo(np.int64).min // 2, b_exp + _bit_length(b_mag))
    swap = b_top > a_top  # make a the larger
    hi_neg, lo_neg = np.where(swap, b_neg, a_neg), np.where(swap, a_neg, b_neg)
    hi_mag, lo_mag = np.where(swap, b_mag, a_mag), np.where(swap, a_mag, b_mag)
    hi_exp, lo_exp = np.where(swap, b_exp, a_exp), np.where(swap, a_exp, b_exp)
    hi_top, lo_top = np.maximum(a_top, b_top), np.minimum(a_top, b_top)
    far = (lo_mag != 0) & (hi_top - lo_top > _STICKY_GAP)
    lo_mag = np.where(far, np.uint64(1), lo_mag)
    lo_exp = np.where(far, hi_top - _STICKY_PLACE, lo_exp)
    lo_exp = np.where(lo_mag == 0, hi_exp, lo_exp)
    hi_exp = np.where(hi_mag == 0, lo_exp, hi_exp)
    common = np.minimum(hi_exp, lo_exp)
    hi = (hi_mag << np.clip(hi_exp - common, 0, 63).astype(np.uint64)).astype(np.int64)
    lo = (lo_mag << np.clip(lo_exp - common, 0, 63).astype(np.uint64)).astype(np.int64)
    total = np.where(hi_neg, -hi, hi) + np.where(lo_neg, -lo, lo)
    negative = np.where(total == 0, a_neg & b_neg, total < 0)  # x + (-x) = +0; -0 + -0 = -0
    magnitude = np.abs(total).astype(np.uint64)
    nan = a_nan | b_nan | (a_inf & b_inf & (a_neg != b_neg))
    inf = (a_inf | b_inf) & ~nan
    negative = np.where(inf, np.where(a_inf, a_neg, b_neg), negative)
    bits = round_exact(negative, magnitude, common, FLOAT_FORMATS[dtype], "ties_even", saturate, nan, inf)
    return bits.astype(BITS_DTYPE[dtype])
