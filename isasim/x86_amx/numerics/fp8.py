"""The AMX extensions' numerics (AMX-FP8, AMX-TF32), computed exactly: FP8 decoding, the FP8 group dot
product and the TF32 input rounding.  Spec only: no silicon with these features has been seen; the rules are
read from the Operation loops Intel publishes for these instructions (ISE and intrinsics text) and the SDM's
"FP32 FMA with DAZ=FTZ=1, RNE" statement of the AMX float TMULs; where they leave a rule open the choice is a
named constant below, with its default documented (docs/x86_amx/amx-extensions.md).

FP8 formats (the ISE's names, the OCP 8-bit formats):

* BF8 = E5M2: 1 sign, 5 exponent (bias 15), 2 fraction bits; infinities (S.11111.00) and NaNs (S.11111.xx,
  xx != 0) as IEEE; denormals 2**-16 .. 3 * 2**-16; largest finite 57344.
* HF8 = E4M3: 1 sign, 4 exponent (bias 7), 3 fraction bits; no infinities; NaN only S.1111.111; denormals
  2**-9 .. 7 * 2**-9; largest finite 448.

Both decode exactly to fp32 (every FP8 value, denormals included, is a normal fp32 number): the ISE's
"Handle FP8 denorms. Not forcing input FP8 denorms to 0", as for fp16 in TDPFP16PS.

The FP8 dot product (TDPBF8PS, TDPBHF8PS, TDPHBF8PS, TDPHF8PS) follows the ISE's loop::

    for m < C.rows:
        temp1[0 .. C.colsb/4 - 1] := +0.0              # one fp32 accumulator per output
        for k < A.colsb/4, n < C.colsb/4:
            temp1[n] += A[m].fp8[4k+0] * B[k].fp8[4n+0] + A[m].fp8[4k+1] * B[k].fp8[4n+1]
                      + A[m].fp8[4k+2] * B[k].fp8[4n+2] + A[m].fp8[4k+3] * B[k].fp8[4n+3]
        C[m].fp32[n] := C[m].fp32[n] + temp1[n]         # ADD32 (DAZ, FTZ, RNE), as every TMUL's last step

``FP8_GROUP_ROUNDING`` (default ``"group"``): the four products of one k and the accumulator are summed
exactly and rounded once (RNE to fp32, FTZ after rounding: the ISE's "DAZ=FTZ=1, RNE" for the fp32
accumulator), since the pseudocode writes the four products in one assignment; ``"sequential"`` rounds after
each product (four FMA32 steps per k, as TDPBF16PS's lanes do).  The ISE does not state which.

``FP8_NAN_RULE`` (default ``"first"``): a NaN among the four pairs (in the order a0, b0, a1, b1, ... a3, b3)
or the accumulator gives the first of them made quiet; otherwise inf * 0, or infinities of both signs, give
the default NaN FFC00000H; otherwise an infinity stays one.  The ISE does not spell NaN priority out.

TF32 (TMMULTF32PS): each fp32 input has a signalling NaN made quiet, then its 13 low fraction bits cleared
(a 10-bit fraction; the ISE's silence_snan_fp32 and zero_lower_mantissa_bits_fp32); the products
accumulate into a fresh fp32 lane per output with FMA32 (DAZ, FTZ, RNE: numerics/tmul.py), which is then
added to C.
"""

from __future__ import annotations

import numpy as np

from . import tmul as tmul_numerics
from .tmul import DEFAULT_NAN32

FP8_GROUP_ROUNDING = "group"  # or "sequential": see the module docstring
FP8_NAN_RULE = "first"  # the only rule implemented; named so the docs and explain can cite it

_SCALE = 16  # every finite FP8 value is an integer multiple of 2**-16 (E5M2's smallest denormal)
_GRID = 149  # every fp32 value is an integer multiple of 2**-149


def _decode(code: int, exponent_bits: int, fraction_bits: int, ieee_specials: bool):
    """(kind, exact value * 2**16 as an int, fp32 bits) of an FP8 code; kind is 'finite', 'inf' or 'nan'."""
    bias = (1 << (exponent_bits - 1)) - 1
    sign = code >> 7
    exponent = (code >> fraction_bits) & ((1 << exponent_bits) - 1)
    fraction = code & ((1 << fraction_bits) - 1)
    top = (1 << exponent_bits) - 1
    if ieee_specials and exponent == top:
        if fraction == 0:
            return "inf", 0, (sign << 31) | 0x7F800000
        return "nan", 0, (sign << 31) | 0x7F800000 | (fraction << (23 - fraction_bits))
    if not ieee_specials and exponent == top and fraction == (1 << fraction_bits) - 1:
        return "nan", 0, (sign << 31) | 0x7F800000 | (fraction << (23 - fraction_bits))
    if exponent == 0:  # denormal: fraction * 2**(1 - bias - fraction_bits)
        scaled = fraction << (_SCALE + 1 - bias - fraction_bits)
    else:
        scaled = ((1 << fraction_bits) | fraction) << (_SCALE + exponent - bias - fraction_bits)
    value = -scaled if sign else scaled
    return "finite", value, _fp32_of_scaled(value, _SCALE, sign)


def _fp32_of_scaled(value: int, scale: int, zero_sign: int = 0) -> int:
    """fp32 bits of value * 2**-scale when it is exactly representable as a normal fp32 (or zero)."""
    if value == 0:
        return zero_sign << 31
    sign, magnitude = (1, -value) if value < 0 else (0, value)
    top = magnitude.bit_length() - 1  # value in [2**top, 2**(top+1)) * 2**-scale
    fraction = (magnitude << (23 - top)) & 0x7FFFFF if top <= 23 else (magnitude >> (top - 23)) & 0x7FFFFF
    return (sign << 31) | ((top - scale + 127) << 23) | fraction


BF8 = tuple(_decode(c, 5, 2, True) for c in range(256))  # E5M2
HF8 = tuple(_decode(c, 4, 3, False) for c in range(256))  # E4M3
FORMATS = {"bf8": BF8, "hf8": HF8}


def fp8_to_fp32(codes, fmt: str) -> np.ndarray:
    """FP8 codes (uint8 array) decoded exactly to fp32 bits (a NaN keeps its payload, as the fraction's top)."""
    table = np.array([entry[2] for entry in FORMATS[fmt]], dtype=np.uint32)
    return table[np.asarray(codes, dtype=np.uint8)]


def round_scaled_fp32(value: int, zero_sign: int = 0) -> int:
    """fp32 bits of value * 2**-149 rounded once: RNE to 24 bits with an unbounded exponent, then FTZ when
    the rounded magnitude is below 2**-126 (a zero with the exact value's sign), infinity past the range; an
    exact zero has ``zero_sign``."""
    if value == 0:
        return zero_sign << 31
    sign, magnitude = (1, -value) if value < 0 else (0, value)
    drop = magnitude.bit_length() - 24
    if drop > 0:
        q, rest = magnitude >> drop, magnitude & ((1 << drop) - 1)
        half = 1 << (drop - 1)
        if rest > half or (rest == half and q & 1):
            q += 1
            if q >> 24:
                q >>= 1
                drop += 1
    else:
        q = magnitude << -drop
    exponent = drop - _GRID + 23  # value = q * 2**(exponent - 23), q in [2**23, 2**24)
    if exponent < -126:
        return sign << 31  # FTZ after rounding
    if exponent > 127:
        return (sign << 31) | 0x7F800000
    return (sign << 31) | ((exponent + 127) << 23) | (q & 0x7FFFFF)


def _scaled_fp32(bits: int) -> int:
    """The exact value of finite fp32 bits times 2**149, with DAZ (a denormal reads as zero)."""
    exponent, fraction = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if exponent == 0:
        return 0
    magnitude = ((1 << 23) | fraction) << (exponent - 1)
    return -magnitude if bits >> 31 else magnitude


def _is_nan(bits: int) -> bool:
    return (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF != 0


def _special_step(acc: int, pairs) -> int | None:
    """The FP8_NAN_RULE result of ``acc + sum(a*b)`` when a NaN or an infinity takes part, else None."""
    for (ka, _va, ba), (kb, _vb, bb) in pairs:
        if ka == "nan":
            return ba | 0x00400000
        if kb == "nan":
            return bb | 0x00400000
    if _is_nan(acc):
        return acc | 0x00400000
    infinities = set()
    for (ka, va, ba), (kb, vb, bb) in pairs:
        if "inf" in (ka, kb):
            if (ka == "finite" and va == 0) or (kb == "finite" and vb == 0):
                return DEFAULT_NAN32
            infinities.add((ba ^ bb) >> 31)
    if (acc & 0x7FFFFFFF) == 0x7F800000:
        infinities.add(acc >> 31)
    if not infinities:
        return None
    if len(infinities) == 2:
        return DEFAULT_NAN32
    return (infinities.pop() << 31) | 0x7F800000


def _step(acc: int, pairs) -> int:
    """One k step of the FP8 dot product: fp32 bits of acc + the four products, by FP8_GROUP_ROUNDING."""
    special = _special_step(acc, pairs)
    if special is not None:
        return special
    if FP8_GROUP_ROUNDING == "sequential":
        for pair in pairs:
            acc = _step_one(acc, pair)
        return acc
    total = _scaled_fp32(acc)
    all_negative_zero = acc == 0x80000000
    for (_ka, va, ba), (_kb, vb, bb) in pairs:
        total += (va * vb) << (_GRID - 2 * _SCALE)
        all_negative_zero = all_negative_zero and va * vb == 0 and (ba ^ bb) >> 31 == 1
    return round_scaled_fp32(total, 1 if all_negative_zero else 0)


def _step_one(acc: int, pair) -> int:
    (_ka, va, ba), (_kb, vb, bb) = pair
    product = (va * vb) << (_GRID - 2 * _SCALE)
    total = _scaled_fp32(acc) + product
    negative_zero = acc == 0x80000000 and product == 0 and (ba ^ bb) >> 31 == 1
    return round_scaled_fp32(total, 1 if negative_zero else 0)


def fp8_dot_products(A: np.ndarray, B: np.ndarray, M: int, K: int, N: int, a_fmt: str, b_fmt: str) -> np.ndarray:
    """temp1 of the FP8 dot product: (M, N) fp32 bits, A a (M, 4K) and B a (K, 4N) uint8 array of codes.

    Vectorised over the M x N lanes where float64 provably holds every partial sum exactly (no rounding at
    all, so no host rounding mode matters), one exact rounding to fp32 per k; the other lanes (an inf or NaN
    input, terms too far apart for 53 bits, FP8_GROUP_ROUNDING = "sequential") go through
    fp8_dot_products_exact, the scalar transcription."""
    if FP8_GROUP_ROUNDING != "group":
        return fp8_dot_products_exact(A, B, M, K, N, a_fmt, b_fmt)
    with np.errstate(all="ignore"):  # (NaN inputs: their lanes go the exact way)
        a = fp8_to_fp32(A[:M, : 4 * K], a_fmt).view(np.float32).astype(np.float64).reshape(M, K, 4)
        b = fp8_to_fp32(B[:K, : 4 * N], b_fmt).view(np.float32).astype(np.float64).reshape(K, N, 4)
        acc = np.zeros((M, N), dtype=np.float64)
        slow = np.zeros((M, N), dtype=bool)
        for k in range(K):
            products = a[:, k, None, :] * b[k, None, :, :]  # (M, N, 4): exact (at most 8 significant bits each)
            terms = np.concatenate([acc[..., None], products], axis=-1)
            slow |= ~np.isfinite(terms).all(axis=-1)
            nonzero = terms != 0
            exponents = np.frexp(terms)[1] - 1  # the top bit's exponent of each term
            lowest = np.where(nonzero, exponents - np.array([23, 8, 8, 8, 8]), 1 << 20).min(axis=-1)
            highest = np.where(nonzero, exponents, -(1 << 20)).max(axis=-1)
            slow |= (highest + 3 - lowest >= 53) & nonzero.any(axis=-1)  # five terms: the sum is below 8x the largest
            total = acc + products[..., 0] + products[..., 1] + products[..., 2] + products[..., 3]  # exact where ~slow
            # rule Z: an exact zero sum is -0 only when acc is -0 and every product is -0
            minus_zero = (acc == 0) & np.signbit(acc) & (np.signbit(products) & (products == 0)).all(axis=-1)
            acc = _round_sum_to_fp32(total, minus_zero)
    out = acc.astype(np.float32).view(np.uint32)
    if slow.any():
        exact = fp8_dot_products_exact(A, B, M, K, N, a_fmt, b_fmt)
        out[slow] = exact[slow]
    return out


def _round_sum_to_fp32(total: np.ndarray, minus_zero: np.ndarray) -> np.ndarray:
    """Exact float64 sums rounded once as round_scaled_fp32 does (RNE to 24 bits, FTZ after rounding, overflow
    to infinity), by integer operations on the bit patterns; an exact zero is -0 only where ``minus_zero``."""
    bits = total.view(np.uint64)
    lowest_kept = (bits >> np.uint64(29)) & np.uint64(1)
    rounded = ((bits + (lowest_kept + np.uint64(0x0FFFFFFF))) & ~np.uint64(0x1FFFFFFF)).view(np.float64)
    magnitude = np.abs(rounded)
    sign = np.signbit(total)
    out = np.where(magnitude < 2.0 ** -126, np.where(sign, -0.0, 0.0), rounded)  # FTZ after rounding
    out = np.where(magnitude >= 2.0 ** 128, np.where(sign, -np.inf, np.inf), out)
    return np.where(total == 0, np.where(minus_zero, -0.0, 0.0), out)


def fp8_dot_products_exact(A: np.ndarray, B: np.ndarray, M: int, K: int, N: int, a_fmt: str, b_fmt: str) -> np.ndarray:
    """fp8_dot_products by the scalar exact transcription (Python integers), lane by lane, step by step."""
    a_table, b_table = FORMATS[a_fmt], FORMATS[b_fmt]
    a_entries = [[a_table[c] for c in row] for row in A[:M, : 4 * K].tolist()]
    b_entries = [[b_table[c] for c in row] for row in B[:K, : 4 * N].tolist()]
    out = np.zeros((M, N), dtype=np.uint32)
    for m in range(M):
        a_row = a_entries[m]
        for n in range(N):
            acc = 0  # +0.0
            for k in range(K):
                b_row = b_entries[k]
                acc = _step(acc, [(a_row[4 * k + i], b_row[4 * n + i]) for i in range(4)])
            out[m, n] = acc
    return out


def tf32_inputs(bits: np.ndarray) -> np.ndarray:
    """The ISE's zero_lower_mantissa_bits_fp32(silence_snan_fp32(x)) of fp32 bits (uint32 array)."""
    bits = np.asarray(bits, dtype=np.uint32)
    nan = ((bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000)) & ((bits & np.uint32(0x7FFFFF)) != 0)
    quieted = np.where(nan, bits | np.uint32(0x00400000), bits)
    return quieted & np.uint32(0xFFFFE000)


def tf32_dot_products(A: np.ndarray, B: np.ndarray, M: int, K: int, N: int) -> np.ndarray:
    """tmp of TMMULTF32PS: (M, N) fp32 bits; A (M, K) and B (K, N) fp32 bits (uint32)."""
    a = tf32_inputs(A[:M, :K])  # (M, K)
    b = tf32_inputs(B[:K, :N])  # (K, N)
    lanes = np.zeros((M, N), dtype=np.uint32)
    return tmul_numerics.tmul_fma32_fold(lanes, np.ascontiguousarray(a.T)[:, :, None], b[:, None, :])
