"""The cube path's number formats: exact decoders and explicitly rounded encoders, on numpy arrays.

Formats: float32, float16, bfloat16 (IEEE), OCP FP8 float8_e4m3fn (no inf, NaN = S.1111.111,
max 448) and float8_e5m2 (IEEE-style), and Huawei's HiFloat8 (arXiv:2409.16626; the Ascend C
``Cast.md`` pseudo-code). Bits travel in unsigned numpy arrays (uint8 / uint16 / uint32).

Every decoder returns the exact value as float64 (all these formats fit in a double), and
``decode_exact`` returns it as integers (sign, magnitude, exponent: value = +-magnitude *
2**exponent) for the exact arithmetic of the cube and the Fixpipe. Every encoder is one named
rule with its rounding (ties to even = CAST_RINT, ties away, toward zero, and HiFloat8's
hybrid) and its overflow (``saturate``: overflow and inf -> +-max, NaN -> 0, the vector unit's
"saturation mode"; otherwise inf/NaN as the format has them). All rounding is integer
arithmetic on the bits; nothing depends on the host FPU.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.numerics import bf16_bits_to_float, fp16_bits_to_float, fp32_bits_to_float

__all__ = ["FLOAT_FORMATS", "FloatFormat", "ROUNDINGS", "BITS_DTYPE", "MIN_NORMAL_EXPONENT", "is_subnormal",
           "decode", "decode_exact",
           "round_exact", "f32_to_f16_rint", "f32_to_bf16_rint", "f32_to_e4m3fn", "f32_to_e5m2",
           "f32_to_hif8_half_away", "f32_to_hif8_hybrid", "hif8_decode_value"]

ROUNDINGS = ("ties_even", "ties_away", "toward_zero")

# The numpy unsigned type holding one element's bits.
BITS_DTYPE = {"float32": np.uint32, "int32": np.uint32, "float16": np.uint16, "bfloat16": np.uint16,
              "float8_e4m3fn": np.uint8, "float8_e5m2": np.uint8, "hifloat8": np.uint8,
              "int8": np.uint8, "uint8": np.uint8}


@dataclass(frozen=True)
class FloatFormat:
    """A binary format with a hidden bit: its stored mantissa bits, smallest normal exponent,
    and the codes (magnitudes, sign bit clear) of its largest finite value, inf and NaN."""

    name: str
    width: int
    mantissa_bits: int
    min_exponent: int  # unbiased exponent of the smallest normal (1 - bias)
    max_code: int  # largest finite magnitude code
    inf_code: int | None  # None: no inf (e4m3fn)
    nan_code: int  # the NaN an encoder writes (sign kept)

    @property
    def sign_bit(self) -> int:
        return 1 << (self.width - 1)


FLOAT_FORMATS = {
    "float32": FloatFormat("float32", 32, 23, -126, 0x7F7FFFFF, 0x7F800000, 0x7FC00000),
    "float16": FloatFormat("float16", 16, 10, -14, 0x7BFF, 0x7C00, 0x7E00),
    "bfloat16": FloatFormat("bfloat16", 16, 7, -126, 0x7F7F, 0x7F80, 0x7FC0),
    "float8_e4m3fn": FloatFormat("float8_e4m3fn", 8, 3, -6, 0x7E, None, 0x7F),
    "float8_e5m2": FloatFormat("float8_e5m2", 8, 2, -14, 0x7B, 0x7C, 0x7E),
}

_U64 = np.uint64


def _u64(x) -> np.ndarray:
    return np.asarray(x).astype(np.uint64)


# ---------------------------------------------------------------------------
# Decoders
# ---------------------------------------------------------------------------


def _fp8_value(code: int, fmt: FloatFormat) -> float:
    sign = -1.0 if code & 0x80 else 1.0
    mag = code & 0x7F
    if fmt.inf_code is None and mag == 0x7F:
        return float("nan")
    if fmt.inf_code is not None and mag >= fmt.inf_code:
        return sign * float("inf") if mag == fmt.inf_code else float("nan")
    field, mant = mag >> fmt.mantissa_bits, mag & ((1 << fmt.mantissa_bits) - 1)
    if field == 0:  # subnormal: mant * 2**(emin - m)
        return sign * mant * 2.0 ** (fmt.min_exponent - fmt.mantissa_bits)
    exponent = field - 1 + fmt.min_exponent
    return sign * ((1 << fmt.mantissa_bits) + mant) * 2.0 ** (exponent - fmt.mantissa_bits)


# HiFloat8's "dot" prefix on the 7 bits below the sign: (prefix, its length, D = exponent
# bits, mantissa bits). D = 0 means E = 0; the all-zero prefix '0000' is the subnormal range.
_HIF8_DOTS = ((0b11, 2, 4, 1), (0b10, 2, 3, 2), (0b01, 2, 2, 3), (0b001, 3, 1, 3), (0b0001, 4, 0, 3))
HIF8_NAN, HIF8_INF, HIF8_MAX = 0x80, 0x6F, 0x6E


def hif8_decode_value(code: int) -> float:
    """Exact value of one HiFloat8 code, from the paper's layout S | dot | exponent | mantissa."""
    if code == HIF8_NAN:
        return float("nan")
    sign = -1.0 if code & 0x80 else 1.0
    low7 = code & 0x7F
    if low7 == HIF8_INF:
        return sign * float("inf")
    for prefix, plen, d_bits, m_bits in _HIF8_DOTS:
        if low7 >> (7 - plen) == prefix:
            rest = low7 & ((1 << (7 - plen)) - 1)
            mant = rest & ((1 << m_bits) - 1)
            exp_field = rest >> m_bits
            if d_bits == 0:
                exponent = 0
            else:  # sign-magnitude, the magnitude with an implicit leading 1: 2**(D-1) + low bits
                low = exp_field & ((1 << (d_bits - 1)) - 1)
                magnitude = (1 << (d_bits - 1)) + low
                exponent = -magnitude if exp_field >> (d_bits - 1) else magnitude
            return sign * (1 + mant / (1 << m_bits)) * 2.0 ** exponent
    # prefix 0000: subnormal 2**(M - 23), M = 1..7 (M = 0 is zero)
    mant = low7 & 0x7
    return 0.0 if mant == 0 else sign * 2.0 ** (mant - 23)


def _table(name: str) -> np.ndarray:
    if name in _TABLES:
        return _TABLES[name]
    if name == "float16":
        table = fp16_bits_to_float(np.arange(1 << 16, dtype=np.uint16))
    elif name == "bfloat16":
        table = bf16_bits_to_float(np.arange(1 << 16, dtype=np.uint16))
    elif name == "hifloat8":
        table = np.array([hif8_decode_value(c) for c in range(256)], dtype=np.float64)
    elif name in ("float8_e4m3fn", "float8_e5m2"):
        table = np.array([_fp8_value(c, FLOAT_FORMATS[name]) for c in range(256)], dtype=np.float64)
    elif name == "int8":
        table = np.arange(256, dtype=np.uint8).view(np.int8).astype(np.float64)
    elif name == "uint8":
        table = np.arange(256, dtype=np.float64)
    else:
        raise ValueError(f"no decoder for {name!r}")
    _TABLES[name] = table
    return table


_TABLES: dict[str, np.ndarray] = {}


def decode(bits, dtype: str) -> np.ndarray:
    """Exact values (float64) of *dtype* element bits; int32 bits give their integer values."""
    bits = np.asarray(bits)
    if dtype == "float32":
        return np.asarray(fp32_bits_to_float(bits.astype(np.uint32)))
    if dtype == "int32":
        return bits.astype(np.uint32).view(np.int32).astype(np.float64)
    width = np.dtype(BITS_DTYPE[dtype]).itemsize * 8
    return _table(dtype)[bits.astype(np.int64) & ((1 << width) - 1)]


# The smallest normal magnitude of each float format (HiFloat8: 2**-15; below it the
# '0000' prefix codes 2**-22 .. 2**-16 are its subnormals).
MIN_NORMAL_EXPONENT = {"float32": -126, "float16": -14, "bfloat16": -126, "float8_e4m3fn": -6,
                       "float8_e5m2": -14, "hifloat8": -15}


def is_subnormal(bits, dtype: str) -> np.ndarray:
    """True where *dtype* bits hold a non-zero value below the format's smallest normal."""
    values = np.abs(decode(bits, dtype))
    return (values != 0) & (values < 2.0 ** MIN_NORMAL_EXPONENT[dtype])


def decode_exact(bits, dtype: str):
    """Exact values as integers: (negative, magnitude uint64, exponent int64, nan, inf) arrays.

    value = (-1)**negative * magnitude * 2**exponent for finite elements (magnitude < 2**25;
    int32 gives magnitude < 2**32, exponent 0). float64's frexp is exact, so splitting the
    decoded double loses nothing.
    """
    values = decode(bits, dtype)
    nan = np.isnan(values)
    inf = np.isinf(values)
    finite = np.where(nan | inf, 0.0, values)
    negative = np.signbit(values) & ~nan
    fraction, exponent = np.frexp(np.abs(finite))  # |v| = fraction * 2**exponent, fraction in [0.5, 1)
    magnitude = (fraction * 2.0 ** 53).astype(np.uint64)  # exact: at most 53 significant bits
    exponent = exponent.astype(np.int64) - 53
    # drop the trailing zero bits so products stay small
    zeros = magnitude == 0
    trailing = _trailing_zeros(np.where(zeros, _U64(1), magnitude))
    magnitude = magnitude >> trailing.astype(np.uint64)
    exponent = np.where(zeros, 0, exponent + trailing)
    return negative, magnitude, exponent, nan, inf


def _trailing_zeros(x: np.ndarray) -> np.ndarray:
    x = _u64(x)
    lowest = x & (~x + _U64(1))  # the lowest set bit
    return _bit_length(lowest) - 1


def _bit_length(x: np.ndarray) -> np.ndarray:
    """Exact bit length of uint64 values (0 for 0).  Each 32-bit half converts to float64 exactly (an
    integer below 2**53 needs no rounding), and frexp's exponent of a positive float is its bit length."""
    x = _u64(x)
    high, low = (x >> _U64(32)).astype(np.float64), (x & _U64(0xFFFFFFFF)).astype(np.float64)
    return np.where(high != 0, 32 + np.frexp(high)[1], np.frexp(low)[1]).astype(np.int64)


# ---------------------------------------------------------------------------
# Rounding an exact value to a format
# ---------------------------------------------------------------------------


def _round_shift(magnitude: np.ndarray, shift: np.ndarray, rounding: str) -> np.ndarray:
    """magnitude * 2**-shift rounded to an integer (shift >= 0; magnitude < 2**63)."""
    mag = _u64(magnitude)
    shift = np.asarray(shift, dtype=np.int64)
    gone = shift > 63
    s = np.clip(shift, 0, 63).astype(np.uint64)
    q = np.where(gone, _U64(0), mag >> s)
    rem = np.where(gone, mag, mag & ((_U64(1) << s) - _U64(1)))
    # half = 2**(shift - 1); past 63 places 2**63 stands in for it (mag < 2**63, so it stays below)
    half = _U64(1) << np.clip(shift - 1, 0, 63).astype(np.uint64)
    if rounding == "ties_even":
        up = (shift > 0) & ((rem > half) | ((rem == half) & ((q & _U64(1)) == 1)))
    elif rounding == "ties_away":
        up = (shift > 0) & (rem >= half)
    elif rounding == "toward_zero":
        up = np.zeros(mag.shape, dtype=bool)
    else:
        raise ValueError(f"unknown rounding {rounding!r} (choices: {', '.join(ROUNDINGS)})")
    return q + up.astype(np.uint64)


def round_exact(negative, magnitude, exponent, fmt: FloatFormat, rounding: str = "ties_even",
                saturate: bool = False, nan=None, inf=None) -> np.ndarray:
    """Round exact values +-magnitude * 2**exponent once to *fmt* bits (uint64 out).

    Subnormals are produced (gradual underflow). A result past the largest finite value is
    +-max when *saturate*, else +-inf (NaN for e4m3fn, which has no inf). Input NaNs give the
    format's NaN (0 when *saturate*), input infs +-inf (+-max when *saturate*).
    """
    negative = np.asarray(negative, dtype=bool)
    mag = _u64(magnitude)
    exponent = np.asarray(exponent, dtype=np.int64)
    p = fmt.mantissa_bits
    top = exponent + _bit_length(mag) - 1
    quantum = np.maximum(top - p, fmt.min_exponent - p)
    shift = quantum - exponent
    left = np.clip(-shift, 0, 63).astype(np.uint64)
    # shift >= -p (the magnitude has at least one bit), so a left shift never overflows
    q = np.where(shift > 0, _round_shift(mag, np.maximum(shift, 0), rounding), mag << left)
    # q * 2**quantum, q <= 2**(p+1): the IEEE layout's "(field << p) + q" also covers
    # subnormals (q < 2**p) and a rounding carry into the next binade.
    field = quantum - (fmt.min_exponent - p)
    code = (np.maximum(field, 0).astype(np.uint64) << _U64(p)) + q
    code = np.where(mag == 0, _U64(0), code)
    overflow = (code > _U64(fmt.max_code)) & (mag != 0)
    overflow |= (mag != 0) & (field > (1 << 20))  # a field so large that "field << p" wrapped
    over_code = fmt.max_code if saturate else (fmt.inf_code if fmt.inf_code is not None else fmt.nan_code)
    code = np.where(overflow, _U64(over_code), code)
    if inf is not None:
        inf_code = fmt.max_code if saturate else (fmt.inf_code if fmt.inf_code is not None else fmt.nan_code)
        code = np.where(np.asarray(inf, dtype=bool), _U64(inf_code), code)
    sign = np.where(negative, _U64(fmt.sign_bit), _U64(0))
    out = sign | code
    if nan is not None:
        nan_out = _U64(0) if saturate else _U64(fmt.nan_code)
        out = np.where(np.asarray(nan, dtype=bool), nan_out, out)
    return out


def _from_f32(bits, name: str, rounding: str, saturate: bool) -> np.ndarray:
    bits = np.asarray(bits).astype(np.uint32)
    negative, mag, exp, nan, inf = decode_exact(bits, "float32")
    fmt = FLOAT_FORMATS[name]
    out = round_exact(negative, mag, exp, fmt, rounding, saturate, nan, inf)
    return out.astype(BITS_DTYPE[name])


def f32_to_f16_rint(bits, saturate: bool) -> np.ndarray:
    """float32 bits -> float16 bits, CAST_RINT (nearest, ties to even)."""
    return _from_f32(bits, "float16", "ties_even", saturate)


def f32_to_bf16_rint(bits, saturate: bool) -> np.ndarray:
    """float32 bits -> bfloat16 bits, CAST_RINT (nearest, ties to even)."""
    return _from_f32(bits, "bfloat16", "ties_even", saturate)


def f32_to_e4m3fn(bits, saturate: bool, rounding: str = "ties_even") -> np.ndarray:
    """float32 bits -> float8_e4m3fn bits (overflow -> NaN, or +-448 when saturating)."""
    return _from_f32(bits, "float8_e4m3fn", rounding, saturate)


def f32_to_e5m2(bits, saturate: bool, rounding: str = "ties_even") -> np.ndarray:
    """float32 bits -> float8_e5m2 bits (overflow -> inf, or +-57344 when saturating)."""
    return _from_f32(bits, "float8_e5m2", rounding, saturate)


# ---------------------------------------------------------------------------
# HiFloat8 encoders: the Cast.md "float转hifloat8_t转换规则" pseudo-code, field by field
# ---------------------------------------------------------------------------


def _hif8_encode(negative, ev, mant, subnormal) -> np.ndarray:
    """Encode {sign, Ev, M} (M at the width |Ev| allows; subnormals: M = Ev + 23) as a code."""
    ev = np.asarray(ev, dtype=np.int64)
    mant = np.asarray(mant, dtype=np.int64)
    mag_e = np.abs(ev)
    e_sign = (ev < 0).astype(np.int64)
    code = np.zeros(ev.shape, dtype=np.int64)
    # |E| = 8..15: '11' S e2 e1 e0 m ; 4..7: '10' S e1 e0 m1 m0 ; 2..3: '01' S e0 m2 m1 m0 ;
    # 1: '001' S m2 m1 m0 ; 0: '0001' m2 m1 m0 ; subnormal: '0000' M
    code = np.where(mag_e >= 8, (0b11 << 5) | (e_sign << 4) | ((mag_e - 8) << 1) | mant, code)
    code = np.where((mag_e >= 4) & (mag_e < 8), (0b10 << 5) | (e_sign << 4) | ((mag_e - 4) << 2) | mant, code)
    code = np.where((mag_e >= 2) & (mag_e < 4), (0b01 << 5) | (e_sign << 4) | ((mag_e - 2) << 3) | mant, code)
    code = np.where(mag_e == 1, (0b001 << 4) | (e_sign << 3) | mant, code)
    code = np.where(mag_e == 0, (0b0001 << 3) | mant, code)
    code = np.where(subnormal, mant, code)
    return np.where(negative, code | 0x80, code)


def _f32_to_hif8(bits, hybrid: bool, saturate: bool) -> np.ndarray:
    b = np.asarray(bits).astype(np.int64) & 0xFFFFFFFF
    negative = (b >> 31) == 1
    ev = ((b >> 23) & 0xFF) - 127
    mant23 = b & 0x7FFFFF
    thr = b & 0x3FFF  # tmp2[13:0]: the hybrid rounding threshold
    abs_ev = np.abs(ev)
    mbits = np.where(abs_ev <= 3, 3, np.where(abs_ev <= 7, 2, 1))
    subnormal = (ev >= -22) & (ev <= -16)
    mbits = np.where(subnormal, 0, mbits)
    m = np.where(subnormal, ev + 23, mant23 >> (23 - mbits))
    ta_bit = (mant23 >> (22 - mbits)) & 1
    frac = (mant23 >> (9 - mbits)) & 0x3FFF  # the 14 bits from the TA bit down
    if hybrid:
        up = np.where(abs_ev <= 3, ta_bit == 1, frac >= thr)
    else:
        up = ta_bit == 1
    normal_up = up & ~subnormal
    m_tmp = m + 1
    carry = normal_up & (m_tmp >> mbits == 1)
    m_new = np.where(normal_up, np.where(carry, 0, m_tmp), m)
    ev_new = np.where(carry, ev + 1, ev)
    # subnormal round-up: the next power of two; at Ev + 1 == -15 that is the normal 2**-15
    sub_up = up & subnormal
    ev_new = np.where(sub_up, ev + 1, ev_new)
    m_new = np.where(sub_up, np.where(ev + 1 == -15, 0, ev + 24), m_new)
    sub_out = subnormal & ~(sub_up & (ev + 1 == -15))
    code = _hif8_encode(negative, ev_new, m_new, sub_out)
    # Ev == -23: the minimum subnormal or zero
    if hybrid:
        min_sub = ((1 << 13) | (mant23 >> 10)) >= thr
    else:
        min_sub = np.ones(b.shape, dtype=bool)
    code = np.where(ev == -23, np.where(min_sub, np.where(negative, 0x81, 0x01), 0), code)
    code = np.where(ev < -23, 0, code)
    # inf: Ev == 128 with zero mantissa, Ev > 15, or a rounding that reached the inf code (1.5 * 2**15)
    overflow = (ev > 15) | ((ev_new == 15) & (m_new == 1) & (abs_ev >= 8)) | (ev_new > 15)
    overflow &= (ev >= -23)
    is_nan = (ev == 128) & (mant23 != 0)
    inf_code = np.where(negative, 0x80 | (HIF8_MAX if saturate else HIF8_INF), HIF8_MAX if saturate else HIF8_INF)
    code = np.where(overflow & ~is_nan, inf_code, code)
    code = np.where(is_nan, 0 if saturate else HIF8_NAN, code)
    return code.astype(np.uint8)


def f32_to_hif8_half_away(bits, saturate: bool) -> np.ndarray:
    """float32 bits -> HiFloat8 bits, "Half to Away Round" (Cast.md: the TA bit decides)."""
    return _f32_to_hif8(bits, hybrid=False, saturate=saturate)


def f32_to_hif8_hybrid(bits, saturate: bool) -> np.ndarray:
    """float32 bits -> HiFloat8 bits, "Hybrid Round" (Cast.md): half away for |Ev| <= 3; for
    |Ev| in 4..15 and subnormals round up iff the 14 bits from the TA bit down >= thr, where
    thr is the input's own bits 13..0 (so the rule is deterministic)."""
    return _f32_to_hif8(bits, hybrid=True, saturate=saturate)
