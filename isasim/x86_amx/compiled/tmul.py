"""The TMUL bodies of the compiled engine: the integer dot products and TDPBF16PS / TDPFP16PS, bit for bit
the Python semantics' (semantics/amx.py, numerics/tmul.py).

Integer: C[m][n] += the exact sum of the byte products, modulo 2^32 (the additions wrap, so their order
cannot be seen): int32 arithmetic that wraps is the same thing.

Floating point: the SDM's lanes, E and O per output element, FMA32 each step, then T := ADD32(E, O) and
C := ADD32(C, T).  Three ways, each giving the semantics' bits:

* exact: when no step can round (the proof of numerics.products.exact_totals, for one instruction's products:
  every input finite and normal or zero, q the lowest set bit's exponent over the products, their sum bounded
  below 2^(q+24), q >= -126 and q + 24 <= 127), T is the exact sum of the products: every product and partial
  sum, in any order, is a multiple of 2^q below 2^(q+24), an fp32 value, so float32 arithmetic computes it
  exactly in any order (vectorized), and an exact zero T is +0 (E and O start at +0).  Where the proof also
  holds with C's values in it, C + T is computed the same way; otherwise C := ADD32(C, T) by the lane rules.
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
    """Rows of C beyond M and bytes beyond its 4N := 0 (every TMUL's epilogue; loops, not slice assignments,
    which cost numba several times more)."""
    tile = tiles[c]
    for m in range(M):
        for j in range(4 * N, 64):
            tile[m, j] = 0
    for m in range(M, 16):
        for j in range(64):
            tile[m, j] = 0


@njit(cache=True)
def tmul_integer(tiles, c, a, b, M, K, N, a_signed, b_signed, plant):
    """TDPB[SU][SU]D: C[m].dword[n] += sum over k, i of ext(A[m].byte[4k+i]) * ext(B[k].byte[4n+i]) (mod 2^32).

    The bytes widened to int16 once, B transposed so that each output's sum runs over contiguous memory
    (what LLVM vectorizes): A16[m][4k+i], Bn[n][4k+i] = B[k].byte[4n+i]; each sum in int32, which wraps
    as the accumulator does."""
    signed = tiles.view(np.int8)
    C = tiles.view(np.uint32)
    products = 4 * K
    A16 = np.empty((M, products), dtype=np.int16)
    Bn = np.empty((N, products), dtype=np.int16)
    if a_signed:
        for m in range(M):
            for j in range(products):
                A16[m, j] = signed[a, m, j]
    else:
        for m in range(M):
            for j in range(products):
                A16[m, j] = tiles[a, m, j]
    if b_signed:
        for k in range(K):
            for n in range(N):
                for i in range(4):
                    Bn[n, 4 * k + i] = signed[b, k, 4 * n + i]
    else:
        for k in range(K):
            for n in range(N):
                for i in range(4):
                    Bn[n, 4 * k + i] = tiles[b, k, 4 * n + i]
    for m in range(M):
        row = A16[m]
        for n in range(N):
            column = Bn[n]
            total = np.int32(0)
            for j in range(products):
                total += np.int32(row[j]) * np.int32(column[j])
            C[c, m, n] = np.uint32((np.int64(C[c, m, n]) + np.int64(total)) & 0xFFFFFFFF)
    if plant:
        C[c, 0, 0] ^= np.uint32(1)
    zero_outside(tiles, c, M, N)


@njit(cache=True)
def fp32_statistics(bits):
    """Of a C-contiguous array of fp32 patterns (uint32): (any inf or NaN, any denormal, the exponent of the
    lowest set bit over the normal values (1 << 20 if there is none), their largest magnitude).  Branch-free
    reductions (min, max, or), which LLVM vectorizes."""
    flat = bits.ravel()
    lowest, highest, significands, largest, denormals = 255, 0, 0, 0, 0
    for j in range(flat.size):
        w = np.int32(flat[j] & ABS)
        exponent = w >> 23
        normal = exponent != 0
        lowest = min(lowest, exponent if normal else 255)
        highest = max(highest, exponent)
        significands |= ((w & MANTISSA) | 0x800000) if normal else 0
        largest = max(largest, w)
        denormals |= w if not normal else 0
    special = highest == 255
    if lowest == 255:
        return special, denormals != 0, 1 << 20, 0.0
    trailing = 0
    while not (significands >> trailing) & 1:
        trailing += 1
    return special, denormals != 0, lowest - 150 + trailing, value_of(largest)


@njit(cache=True)
def no_rounding(q, largest):
    """Whether sums of multiples of 2^q below ``largest`` in magnitude are exact fp32 values, none tiny."""
    return q >= -126 and q + 24 <= 127 and largest < 2.0 ** (q + 24) * EXACT_MARGIN


@njit(cache=True, fastmath={"reassoc", "contract"})
def exact_sums(A, BT, start, out):
    """out[m][n] := start[m][n] + sum over j of A[m][j] * BT[n][j], in float32, where the caller has proved that
    no product and no partial sum, in any order, rounds (so reassociating and fusing change nothing: the
    only fast-math freedoms allowed here; signed zeros and NaNs keep their IEEE rules)."""
    M, P = A.shape
    N = BT.shape[0]
    for m in range(M):
        for n in range(N):
            total = start[m, n]
            for j in range(P):
                total += A[m, j] * BT[n, j]
            out[m, n] = total


@njit(cache=True)
def tmul_float(tiles, c, a, b, M, K, N, fp16, fp16_table, plant):
    """TDPBF16PS / TDPFP16PS (see the module docstring for the three ways)."""
    halves = tiles.view(np.uint16)
    C = tiles.view(np.uint32)
    # A's and B's elements widened to fp32 patterns: A_bits[m][2k + lane], BT_bits[n][2k + lane] = B[k].h[2n + lane]
    A_bits = np.empty((M, 2 * K), dtype=np.uint32)
    BT_bits = np.empty((N, 2 * K), dtype=np.uint32)
    if fp16:
        for m in range(M):
            for j in range(2 * K):
                A_bits[m, j] = fp16_table[halves[a, m, j]]
        for k in range(K):
            for n in range(N):
                BT_bits[n, 2 * k] = fp16_table[halves[b, k, 2 * n]]
                BT_bits[n, 2 * k + 1] = fp16_table[halves[b, k, 2 * n + 1]]
    else:
        for m in range(M):
            for j in range(2 * K):
                A_bits[m, j] = np.uint32(halves[a, m, j]) << 16
        for k in range(K):
            for n in range(N):
                BT_bits[n, 2 * k] = np.uint32(halves[b, k, 2 * n]) << 16
                BT_bits[n, 2 * k + 1] = np.uint32(halves[b, k, 2 * n + 1]) << 16
    a_special, a_denormal, a_low, a_max = fp32_statistics(A_bits)
    b_special, b_denormal, b_low, b_max = fp32_statistics(BT_bits)
    T = np.empty((M, N), dtype=np.int64)
    if a_special or b_special:
        for m in range(M):
            for n in range(N):
                even, odd = np.int64(0), np.int64(0)
                for k in range(K):
                    even = fma32_bits(even, np.int64(A_bits[m, 2 * k]), np.int64(BT_bits[n, 2 * k]))
                    odd = fma32_bits(odd, np.int64(A_bits[m, 2 * k + 1]), np.int64(BT_bits[n, 2 * k + 1]))
                T[m, n] = add32_bits(even, odd)
    else:
        q = a_low + b_low
        products_exact = (not a_denormal and not b_denormal and a_low < (1 << 20) and b_low < (1 << 20)
                          and no_rounding(q, 2 * K * a_max * b_max))
        if products_exact:
            C_bits = np.ascontiguousarray(C[c, :M, :N])
            c_special, c_denormal, c_low, c_max = fp32_statistics(C_bits)
            with_c = (not c_special and not c_denormal
                      and no_rounding(min(q, c_low), c_max + 2 * K * a_max * b_max))
            start = C_bits.view(np.float32) if with_c else np.zeros((M, N), dtype=np.float32)
            sums = np.empty((M, N), dtype=np.float32)
            exact_sums(A_bits.view(np.float32), BT_bits.view(np.float32), start, sums)
            for m in range(M):
                for n in range(N):
                    total = bits_of(sums[m, n]) if sums[m, n] != 0.0 else 0  # (an exact zero is +0)
                    if with_c:
                        C[c, m, n] = np.uint32(total)
                    else:
                        T[m, n] = total
            if with_c:  # C := C + every product, exactly: no step of either rounds
                if plant:
                    C[c, 0, 0] ^= np.uint32(1)
                zero_outside(tiles, c, M, N)
                return
        else:
            for m in range(M):
                for n in range(N):
                    even, odd = 0.0, 0.0
                    for k in range(K):
                        even = rounded(even + value_of(daz(np.int64(A_bits[m, 2 * k])))
                                       * value_of(daz(np.int64(BT_bits[n, 2 * k]))))
                        odd = rounded(odd + value_of(daz(np.int64(A_bits[m, 2 * k + 1])))
                                      * value_of(daz(np.int64(BT_bits[n, 2 * k + 1]))))
                    T[m, n] = add32_bits(bits_of(even), bits_of(odd))
    for m in range(M):
        for n in range(N):
            C[c, m, n] = np.uint32(add32_bits(np.int64(C[c, m, n]), T[m, n]))
    if plant:
        C[c, 0, 0] ^= np.uint32(1)
    zero_outside(tiles, c, M, N)
