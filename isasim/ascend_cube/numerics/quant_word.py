"""The Fixpipe's 64-bit quant parameter and the integer steps of its quantisation.

The word (QUANT_PRE, ``deqScale``, set with SetFixpipePreQuantFlag or per channel through the
fixpipe buffer), as the Ascend C guide's 随路量化.md tables 1 and 2 lay it out:

====== ======= ==============================================================================
bits   field   meaning
====== ======= ==============================================================================
31..13 M1      the scale, a float32 of which the hardware keeps (1,8,10): sign, exponent, the top
               10 mantissa bits (bits 12..0 are ignored)
35..32 N       910B only: the shift when MCB = 1 ("b'0000 means 1, b'1111 means 16")
36     MCB     910B only: 1 = int32 >> N, then int16, then float (DEQF16 / REQ8)
45..37 offset  9-bit two's complement, added after the scale (REQ8 / QF322B8_PRE)
46     sign    1: the int8 result is signed, 0: unsigned (REQ8 / QF322B8_PRE)
====== ======= ==============================================================================

Packing a float32 scale follows aclnnTransQuantParam(V2/V3) and the V2 device kernel:
truncation (``& 0xFFFFE000``) or, with round_mode 1, round to nearest even at bit 13.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ...core.numerics import float_to_fp32_bits, fp32_bits_to_float
from ..options import default_options
from . import formats

__all__ = ["FixpipeParamError", "QuantWord", "decode_quant_word", "pack_scale", "double_scale_word",
           "m1_bits_value", "round_to_s9", "add_offset_saturate", "SIGN_BIT", "M1_MASK"]

M1_MASK = 0xFFFFE000  # the float32 bits the hardware reads: sign, exponent, top 10 mantissa bits
SIGN_BIT = 1 << 46
_OFFSET_SHIFT = 37
S9_MIN, S9_MAX = -256, 255


class FixpipeParamError(ValueError):
    """A quant parameter the docs forbid (a denormal, inf or NaN M1)."""


@dataclass(frozen=True)
class QuantWord:
    """One decoded quant word; ``fields`` lists (first_bit, width, name, value, meaning) for explain."""

    word: int
    m1: float  # the exact value of the (1,8,10) field
    m1_bits: int  # the 19-bit field (bits 31..13)
    offset: int  # -256..255
    signed: bool  # bit 46
    n_shift: int | None  # the shift N means (per mcb_n_code), None on 950
    mcb: bool  # bit 36 on 910B, False on 950
    fields: list


def m1_bits_value(m1_bits: int) -> Fraction:
    """Exact value of a 19-bit (1,8,10) field; raises FixpipeParamError for denormal, inf, NaN."""
    sign = -1 if m1_bits >> 18 else 1
    exponent = (m1_bits >> 10) & 0xFF
    mantissa = m1_bits & 0x3FF
    if exponent == 0xFF:
        kind = "inf" if mantissa == 0 else "NaN"
        raise FixpipeParamError(f"quant parameter M1 is {kind} (bits 31..13 = {m1_bits:#07x}); "
                                "the Fixpipe page: quant parameters cannot be inf/nan or denormal")
    if exponent == 0:
        if mantissa:
            raise FixpipeParamError(f"quant parameter M1 is denormal (bits 31..13 = {m1_bits:#07x}); "
                                    "the Fixpipe page: quant parameters cannot be inf/nan or denormal")
        return Fraction(0)
    return sign * Fraction(1024 + mantissa, 1024) * Fraction(2) ** (exponent - 127)


def decode_quant_word(word: int, chip: str, options: dict | None = None) -> QuantWord:
    """Decode a 64-bit quant word as *chip* ("910B" or "950") reads it."""
    word = int(word)
    if not 0 <= word < 1 << 64:
        raise FixpipeParamError(f"quant word {word:#x} is not a 64-bit value")
    if chip not in ("910B", "950"):
        raise ValueError(f"unknown chip {chip!r}")
    options = options or default_options()
    m1_bits = (word >> 13) & 0x7FFFF
    m1 = float(m1_bits_value(m1_bits))  # exact: 11 significant bits
    raw_offset = (word >> _OFFSET_SHIFT) & 0x1FF
    offset = raw_offset - 512 if raw_offset & 0x100 else raw_offset
    signed = bool(word >> 46 & 1)
    fields = [
        (13, 19, "M1", m1_bits, f"scale {m1!r} = (1,8,10): sign {m1_bits >> 18}, exponent "
                                f"{(m1_bits >> 10) & 0xFF}, mantissa {m1_bits & 0x3FF:#05x}"),
    ]
    if chip == "910B":
        n_code = (word >> 32) & 0xF
        n_shift = n_code + 1 if options["mcb_n_code"] == "plus_one" else n_code
        mcb = bool(word >> 36 & 1)
        fields.append((32, 4, "N", n_code, f"shift by {n_shift} when MCB = 1 (mcb_n_code={options['mcb_n_code']})"))
        fields.append((36, 1, "MCB", int(mcb), "int32 >> N, then int16, then float" if mcb
                       else "int32 converted directly to float"))
    else:
        n_shift, mcb = None, False
    fields.append((37, 9, "offset", raw_offset, f"{offset} added after the scale (REQ8 / QF322B8_PRE)"))
    fields.append((46, 1, "sign", int(signed), "signed int8 result" if signed else "unsigned int8 result"))
    return QuantWord(word, m1, m1_bits, offset, signed, n_shift, mcb, fields)


def _scale_bits(scale) -> int:
    if isinstance(scale, np.floating):
        if scale.dtype == np.float32:
            return int(np.asarray(scale).view(np.uint32))
        scale = float(scale)
    return int(float_to_fp32_bits(scale))  # a Python float or int: ties-to-even to float32


def _round_offset(offset) -> int:
    """CAST_RINT (ties to even) of the offset, then clamp to the 9-bit range."""
    value = Fraction(float(offset)) if not isinstance(offset, (int, Fraction)) else Fraction(offset)
    rounded = round(value)  # Fraction rounds half to even
    return max(min(int(rounded), S9_MAX), S9_MIN)


def pack_scale(scale: float, offset: float | None = None, round_mode: int = 0) -> int:
    """The quant word aclnnTransQuantParamV3 / npu_trans_quant_param packs for *scale* (+ *offset*).

    round_mode 0: ``(bits(scale) & 0xFFFFE000) | 1 << 46``. round_mode 1 (R_INT): round to
    nearest even at bit 13 first (round bit 12, sticky 11..0); a denormal scale becomes a zero
    of its sign; a carry out of the mantissa bumps the exponent, and an exponent overflow gives
    the inf pattern. inf and NaN scales are masked as with round_mode 0 (the kernel's handling
    is not described). The offset is rounded ties to even, clamped to [-256, 255], stored in
    bits 37..45.
    """
    bits = _scale_bits(scale)
    if round_mode == 0:
        m1 = bits & M1_MASK
    elif round_mode == 1:
        exponent = (bits >> 23) & 0xFF
        if exponent == 0:
            m1 = bits & 0x80000000
        elif exponent == 0xFF:
            m1 = bits & M1_MASK
        else:
            top = bits >> 13  # sign, exponent, 10 mantissa bits
            round_bit = (bits >> 12) & 1
            sticky = bits & 0xFFF
            if round_bit and (sticky or top & 1):
                top += 1  # a mantissa carry runs into the exponent; 0xFF there is inf
            m1 = (top << 13) & 0xFFFFFFFF
    else:
        raise ValueError(f"round_mode must be 0 or 1, not {round_mode!r}")
    word = m1 | SIGN_BIT
    if offset is not None:
        word = (word & 0x4000FFFFFFFF) | ((_round_offset(offset) & 0x1FF) << _OFFSET_SHIFT)
    return word


def double_scale_word(scale_a: float, scale_b: float) -> int:
    """The per-tensor A-scale x B-scale word of the 950 fp8/hif8 kernels (qbmm_cube_on_the_fly.h):
    the float32 product (ties to even), then truncated to bits 31..13; bit 46 is not set."""
    a = fp32_bits_to_float(_scale_bits(scale_a))
    b = fp32_bits_to_float(_scale_bits(scale_b))
    if not (math.isfinite(a) and math.isfinite(b)):
        raise FixpipeParamError(f"scales {a!r} x {b!r}: quant parameters cannot be inf/nan")
    return int(float_to_fp32_bits(Fraction(a) * Fraction(b))) & M1_MASK  # exact product, one rounding


def round_to_s9(values, rounding: str = "ties_even") -> np.ndarray:
    """Exact values (negative, magnitude, exponent[, nan, inf]) -> the s9 intermediate (int64):
    round to an integer (ties to even or away), saturating to [-256, 255]; NaN -> 0."""
    negative, magnitude, exponent = (np.asarray(v) for v in values[:3])
    magnitude = magnitude.astype(np.uint64)
    exponent = exponent.astype(np.int64)
    # at or past 2**10 the value saturates whatever its low bits; below, the left shift is exact
    big = (exponent > 0) & (magnitude != 0) & (formats._bit_length(magnitude) + exponent > 10)
    left = np.clip(exponent, 0, 10).astype(np.uint64)
    shifted = np.where(exponent >= 0, magnitude << left,
                       formats._round_shift(magnitude, np.maximum(-exponent, 0), rounding))
    whole = np.where(big, np.uint64(512), shifted).astype(np.int64)
    signed = np.where(negative, -whole, whole)
    out = np.clip(signed, S9_MIN, S9_MAX)
    if len(values) > 3:
        nan, inf = np.asarray(values[3], dtype=bool), np.asarray(values[4], dtype=bool)
        out = np.where(inf, np.where(negative, S9_MIN, S9_MAX), out)
        out = np.where(nan, 0, out)
    return out.astype(np.int64)


def add_offset_saturate(s9: np.ndarray, offset, signed) -> np.ndarray:
    """s9 + offset, saturated to int8 [-128, 127] (signed) or uint8 [0, 255]; returns the byte bits."""
    total = np.asarray(s9, dtype=np.int64) + np.asarray(offset, dtype=np.int64)
    signed = np.asarray(signed, dtype=bool)
    out = np.where(signed, np.clip(total, -128, 127), np.clip(total, 0, 255))
    return (out & 0xFF).astype(np.uint8)
