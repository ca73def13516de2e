"""The TMUL bodies of the compiled engine: the integer dot products and TDPBF16PS / TDPFP16PS, bit for bit
the Python semantics' (semantics/amx.py, numerics/tmul.py).

Integer: C[m][n] += the exact sum of the byte products, modulo 2^32 (the additions wrap, so their order
cannot be seen): int32 arithmetic that wraps is the same thing.

Floating point: the SDM's lanes, E and O per output element, FMA32 each step, then T := ADD32(E, O) and
C := ADD32(C, T).  Three ways, each giving the semantics' bits:

* exact: when no step can round (the proof of numerics.products.exact_totals, for one instruction's products:
  every input finite and normal or zero, q the lowest set bit's exponent over the products, their sum bounded
  below 2^(q+24), q >= -126 and q + 24 <= 127), T is the exact sum of the products, which a float64 matrix
  product computes exactly in any order, and an exact zero T is +0 (E and O start at +0).  C := ADD32(C, T)
  then follows the lane rules below.
* finite lanes: every input finite (after DAZ); each step is s := acc + a*b in float64 and the AMX rounding of
  s.  a and b have at most 12 significant bits (bf16: 8, fp16: 11), so a*b is exact, and s is the exact sum or
  a faithful rounding of it that never lands on a 24-bit rounding boundary unless it is exact (the argument
  S1 of numerics/tmul.py).  Rounding s: if |s| >= 2^-126 the cast to float32 (RNE, and past the largest
  finite value inf) is RNE24 of the exact sum; below, the exact sum rounds (RNE to 24 bits, unbounded
  exponent) to 2^-126 when |s| >= 2^-126 - 2^-151 (the midpoint, which ties to the even 2^-126) and is tiny
  after rounding, flushed to a zero of its sign (FTZ), otherwise.  A zero s has the sign IEEE addition gives
  it: -0 only from two -0 addends, the AMX rule.
* bits: a lane with an inf or NaN operand follows numerics.reference's rules on the bit patterns (NaN
  priority a, b, acc, quieted; inf*0 and inf-inf the default NaN 0xFFC00000), the rest as the finite lanes.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...core import numerics

SIGN, ABS, EXPONENT, INF, QUIET, MANTISSA = 0x80000000, 0x7FFFFFFF, 0x7F800000, 0x7F800000, 0x00400000, 0x007FFFFF
DEFAULT_NAN = 0xFFC00000
MIN_NORMAL = 2.0 ** -126
ROUNDS_UP_TO_MIN_NORMAL = 2.0 ** -126 - 2.0 ** -151  # at least this: RNE to 24 bits gives 2^-126
EXACT_MARGIN = 1 - 2.0 ** -20  # (as exact_totals: the bound is computed with rounding, upwards)


def fp16_widening_table() -> np.ndarray:
    """fp32 bits of every fp16 pattern (numerics.fp16_to_fp32, exact)."""
    return np.asarray(numerics.fp16_to_fp32(np.arange(1 << 16, dtype=np.uint16)), dtype=np.uint32)


# ---- one fp32 step ----------------------------------------------------------------------------------------
@njit(cache=True)
def daz(bits):
    """A denormal fp32 pattern read as the zero of its sign."""
    if (bits & EXPONENT) == 0:
        return bits & SIGN
    return bits


@njit(cache=True)
def value_of(bits):
    """A finite fp32 pattern as its float64 value (exact)."""
    return np.float64(np.uint32(bits).view(np.float32))


@njit(cache=True)
def bits_of(value):
    """An fp32 value held in a float64 (exactly) as its fp32 pattern."""
    return np.int64(np.float32(value).view(np.uint32))


@njit(cache=True)
def rounded(s):
    """The AMX rounding of s (see the module docstring), as a float64 holding the fp32 result."""
    magnitude = abs(s)
    if magnitude >= MIN_NORMAL:
        return np.float64(np.float32(s))
    if magnitude >= ROUNDS_UP_TO_MIN_NORMAL:
        return math.copysign(MIN_NORMAL, s)
    return math.copysign(0.0, s)


@njit(cache=True)
def is_nan(bits):
    return (bits & ABS) > INF


@njit(cache=True)
def is_inf(bits):
    return (bits & ABS) == INF


@njit(cache=True)
def fma32_bits(acc, a, b):
    """FMA32(acc, a, b) on fp32 patterns, a and b widened from bf16 or fp16 (numerics.reference's rules)."""
    acc, a, b = daz(acc), daz(a), daz(b)
    if is_nan(a):
        return a | QUIET
    if is_nan(b):
        return b | QUIET
    if is_nan(acc):
        return acc | QUIET
    product_sign = (a ^ b) & SIGN
    a_inf, b_inf = is_inf(a), is_inf(b)
    if (a_inf and (b & ABS) == 0) or ((a & ABS) == 0 and b_inf):
        return DEFAULT_NAN
    if a_inf or b_inf:
        if is_inf(acc) and (acc & SIGN) != product_sign:
            return DEFAULT_NAN
        return product_sign | INF
    if is_inf(acc):
        return acc
    return bits_of(rounded(value_of(acc) + value_of(a) * value_of(b)))


@njit(cache=True)
def add32_bits(x, y):
    """ADD32(x, y) on fp32 patterns (numerics.reference's rules)."""
    x, y = daz(x), daz(y)
    if is_nan(x):
        return x | QUIET
    if is_nan(y):
        return y | QUIET
    x_inf, y_inf = is_inf(x), is_inf(y)
    if x_inf and y_inf and (x & SIGN) != (y & SIGN):
        return DEFAULT_NAN
    if x_inf:
        return x
    if y_inf:
        return y
    return bits_of(rounded(value_of(x) + value_of(y)))


# ---- the TMULs ----------------------------------------------------------------------------------------------
@njit(cache=True)
def zero_outside(tiles, c, M, N):
    """Rows of C beyond M and bytes beyond its 4N := 0 (every TMUL's epilogue)."""
    tiles[c, M:, :] = 0
    tiles[c, :M, 4 * N:] = 0


@njit(cache=True)
def tmul_integer(tiles, c, a, b, M, K, N, a_signed, b_signed, plant):
    """TDPB[SU][SU]D: C[m].dword[n] += sum over k, i of ext(A[m].byte[4k+i]) * ext(B[k].byte[4n+i]) (mod 2^32)."""
    signed = tiles.view(np.int8)
    C = tiles.view(np.uint32)
    products = 4 * K
    # B rearranged so that the inner loop runs over n, contiguous: Bt[4k+i][n] = B[k].byte[4n+i]
    Bt = np.empty((products, N), dtype=np.int32)
    for k in range(K):
        for n in range(N):
            for i in range(4):
                Bt[4 * k + i, n] = signed[b, k, 4 * n + i] if b_signed else tiles[b, k, 4 * n + i]
    total = np.empty(N, dtype=np.int32)
    for m in range(M):
        total[:] = 0
        for j in range(products):
            x = np.int32(signed[a, m, j]) if a_signed else np.int32(tiles[a, m, j])
            for n in range(N):
                total[n] += x * Bt[j, n]
        for n in range(N):
            C[c, m, n] = np.uint32((np.int64(C[c, m, n]) + np.int64(total[n])) & 0xFFFFFFFF)
    if plant:
        C[c, 0, 0] ^= np.uint32(1)
    zero_outside(tiles, c, M, N)


@njit(cache=True)
def widen_block(halves, rows, columns, fp16_table, fp16, out_bits):
    """out_bits[r, j] := the fp32 pattern of element j of row r (16-bit elements, bf16 or fp16); returns
    (any inf or NaN, any denormal, lowest set bit's exponent or None as 1 << 20, largest magnitude)."""
    special, denormal = False, False
    lowest_exponent, significands, largest = 1 << 20, 0, 0
    for r in range(rows):
        for j in range(columns):
            h = halves[r, j]
            w = np.int64(fp16_table[h]) if fp16 else np.int64(h) << 16
            out_bits[r, j] = w
            exponent = (w >> 23) & 0xFF
            magnitude = w & ABS
            if exponent == 0xFF:
                special = True
            elif exponent == 0:
                if magnitude:
                    denormal = True
            else:
                if exponent < lowest_exponent:
                    lowest_exponent = exponent
                significands |= (w & MANTISSA) | 0x800000
                if magnitude > largest:
                    largest = magnitude
    if lowest_exponent == 1 << 20:
        return special, denormal, 1 << 20, 0.0
    trailing = 0
    while not (significands >> trailing) & 1:
        trailing += 1
    return special, denormal, lowest_exponent - 150 + trailing, value_of(largest)


@njit(cache=True)
def tmul_float(tiles, c, a, b, M, K, N, fp16, fp16_table, plant):
    """TDPBF16PS / TDPFP16PS (see the module docstring for the three ways)."""
    halves = tiles.view(np.uint16)
    C = tiles.view(np.uint32)
    A_bits = np.empty((M, 2 * K), dtype=np.int64)
    B_bits = np.empty((K, 2 * N), dtype=np.int64)
    a_special, a_denormal, a_low, a_max = widen_block(halves[a], M, 2 * K, fp16_table, fp16, A_bits)
    b_special, b_denormal, b_low, b_max = widen_block(halves[b], K, 2 * N, fp16_table, fp16, B_bits)
    T = np.empty((M, N), dtype=np.int64)
    if a_special or b_special:
        for m in range(M):
            for n in range(N):
                even, odd = np.int64(0), np.int64(0)
                for k in range(K):
                    even = fma32_bits(even, A_bits[m, 2 * k], B_bits[k, 2 * n])
                    odd = fma32_bits(odd, A_bits[m, 2 * k + 1], B_bits[k, 2 * n + 1])
                T[m, n] = add32_bits(even, odd)
    else:
        # finite inputs: as float64 values, DAZ'd
        A_values = np.empty((M, 2 * K), dtype=np.float64)
        for m in range(M):
            for j in range(2 * K):
                A_values[m, j] = value_of(daz(A_bits[m, j]))
        # B's lanes with n innermost: B_values[2k + lane][n] = B[k].h[2n + lane]
        B_values = np.empty((2 * K, N), dtype=np.float64)
        for k in range(K):
            for n in range(N):
                B_values[2 * k, n] = value_of(daz(B_bits[k, 2 * n]))
                B_values[2 * k + 1, n] = value_of(daz(B_bits[k, 2 * n + 1]))
        q = a_low + b_low
        exact = (not a_denormal and not b_denormal and a_low < (1 << 20) and b_low < (1 << 20)
                 and q >= -126 and q + 24 <= 127
                 and 2 * K * a_max * b_max < 2.0 ** (q + 24) * EXACT_MARGIN)
        if exact:
            sums = np.zeros(N, dtype=np.float64)
            for m in range(M):
                sums[:] = 0.0
                for j in range(2 * K):
                    x = A_values[m, j]
                    for n in range(N):
                        sums[n] += x * B_values[j, n]
                for n in range(N):
                    T[m, n] = bits_of(sums[n]) if sums[n] != 0.0 else 0
        else:
            even = np.empty(N, dtype=np.float64)
            odd = np.empty(N, dtype=np.float64)
            for m in range(M):
                even[:] = 0.0
                odd[:] = 0.0
                for k in range(K):
                    x, y = A_values[m, 2 * k], A_values[m, 2 * k + 1]
                    for n in range(N):
                        even[n] = rounded(even[n] + x * B_values[2 * k, n])
                        odd[n] = rounded(odd[n] + y * B_values[2 * k + 1, n])
                for n in range(N):
                    T[m, n] = add32_bits(bits_of(even[n]), bits_of(odd[n]))
    for m in range(M):
        for n in range(N):
            C[c, m, n] = np.uint32(add32_bits(np.int64(C[c, m, n]), T[m, n]))
    if plant:
        C[c, 0, 0] ^= np.uint32(1)
    zero_outside(tiles, c, M, N)
