"""TMUL products that wait: the batching that lets a plain run compute a kernel's dot products together.

``X86AmxState.accumulate`` hands each TMUL's product to a batch waiting on its accumulator C (a copy of its
two source tiles and its kind); the batch is applied when C is next read, or when it is full.  The integer
products' 32-bit wrap-around sums can be added in any order, so a batch is one exact float64 matrix product
(DwordDotProducts); the float products are applied in order through the lane rules of :mod:`.tmul`, or,
where a proof says no step can round, by one exact matrix product too (PairDotProducts, exact_totals).
Stepping applies each product at once; both give the same bits.
"""

from __future__ import annotations

import numpy as np

from ...core import numerics
from ..state import BYTES_PER_ROW, MAX_ROWS
from . import tmul as tmul_numerics


class WaitingProducts:
    """TMUL products waiting to be applied to one accumulator C of M rows and N dwords
    (see X86AmxState.accumulate): copies of each product's two source tiles, which may
    be reloaded before the products are computed, and each product's kind (K and the
    element types).  Subclasses say how products are computed and applied to C."""

    CAPACITY = 32  # measured: beyond about 32 products a batch gets no faster per product

    def __init__(self, M: int, N: int):
        self.shape = (M, N)
        self.A = np.empty((self.CAPACITY, MAX_ROWS, BYTES_PER_ROW), dtype=np.uint8)
        self.B = np.empty((self.CAPACITY, MAX_ROWS, BYTES_PER_ROW), dtype=np.uint8)
        self.kinds: list[tuple] = []

    @property
    def full(self) -> bool:
        return len(self.kinds) == self.CAPACITY

    def add(self, A: np.ndarray, B: np.ndarray, *kind) -> None:
        self.A[len(self.kinds)] = A
        self.B[len(self.kinds)] = B
        self.kinds.append(kind)

    def by_kind(self):
        """(kind, which) for each kind present, ``which`` indexing its products in A, B and the order they came."""
        if self.kinds and self.kinds.count(self.kinds[0]) == len(self.kinds):  # (almost always a single kind)
            yield self.kinds[0], slice(len(self.kinds))
            return
        for kind in dict.fromkeys(self.kinds):
            which = [j for j, other in enumerate(self.kinds) if other == kind]
            yield kind, slice(len(which)) if len(which) == len(self.kinds) else which

    def apply(self, C: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @classmethod
    def apply_all(cls, batches: list["WaitingProducts"], Cs: list[np.ndarray]) -> list[np.ndarray]:
        """``apply`` of each batch (all of this type and one shape) to its C; a subclass may do them together."""
        return [batch.apply(C) for batch, C in zip(batches, Cs)]


class DwordDotProducts(WaitingProducts):
    """Integer TMUL products: P[m][n] = sum over k < K, i < 4 of A[m].byte[4k+i] * B[k].byte[4n+i],
    exactly, with the bytes signed or unsigned as the instruction says.  A product's kind is
    (K, A signed, B signed)."""

    def apply(self, C: np.ndarray) -> np.ndarray:
        """C + every product, modulo 2^32 (32-bit wrap-around additions: their order cannot be seen)."""
        return C + self.total()

    def total(self) -> np.ndarray:
        """The sum of the products modulo 2^32, as (M, N) uint32: one float64 matrix product per kind
        (see dword_totals)."""
        (M, N), total = self.shape, 0
        for (K, a_signed, b_signed), which in self.by_kind():
            A, B = self.A[which, :M, : 4 * K][None], self.B[which, :K, : 4 * N][None]
            total = total + dword_totals(A, B, K, a_signed, b_signed)[0]
        return (total % (1 << 32)).astype(np.uint32)

    @classmethod
    def apply_all(cls, batches: list["DwordDotProducts"], Cs: list[np.ndarray]) -> list[np.ndarray]:
        """``apply`` of each batch to its C; batches of one kind and count (a kernel's accumulators) with
        one stacked matrix product for all, instead of one each: numpy's cost per call dominates here."""
        kinds = {kind for batch in batches for kind in batch.kinds}
        counts = {len(batch.kinds) for batch in batches}
        if len(batches) == 1 or len(kinds) != 1 or len(counts) != 1:
            return [batch.apply(C) for batch, C in zip(batches, Cs)]
        ((K, a_signed, b_signed),), ((M, N), (n,)) = kinds, (batches[0].shape, counts)
        A = np.stack([batch.A[:n, :M, : 4 * K] for batch in batches])
        B = np.stack([batch.B[:n, :K, : 4 * N] for batch in batches])
        totals = (dword_totals(A, B, K, a_signed, b_signed) % (1 << 32)).astype(np.uint32)
        return [C + total for C, total in zip(Cs, totals)]


def dword_totals(A: np.ndarray, B: np.ndarray, K: int, a_signed: bool, b_signed: bool) -> np.ndarray:
    """For each tile t: the exact sum over products j of A[t, j] . B[t, j] (the bytes signed as said),
    as a (tiles, M, N) int64 array; A (tiles, n, M, 4K) and B (tiles, n, K, 4N) uint8.

    One float64 matrix product per tile (stacked: one numpy call) over the contraction index (j, k, i),
    j counting the products: row m of the A side is A_0[m] A_1[m] ..., and row (j, k, i) of the B side
    is B_j[k].byte[4n+i] over n.  Every term is at most 255 * 255 in magnitude and a batch holds at most
    CAPACITY products of at most 64 terms, so every partial sum stays far below 2^53 and the float64
    arithmetic is exact."""
    tiles, n, M = A.shape[:3]
    N = B.shape[3] // 4
    A = A.view(np.int8 if a_signed else np.uint8)
    B = B.view(np.int8 if b_signed else np.uint8)
    a = A.transpose(0, 2, 1, 3).astype(np.float64, order="C").reshape(tiles, M, n * 4 * K)
    b = B.reshape(tiles, n * K, N, 4).transpose(0, 1, 3, 2).astype(np.float64, order="C").reshape(tiles, n * 4 * K, N)
    return (a @ b).astype(np.int64)


class PairDotProducts(WaitingProducts):
    """TDPBF16PS / TDPFP16PS products: T[m][n] = ADD32(E, O), the two fp32 lanes of the SDM's
    loop (see tdpbf16ps), which depend only on A and B; C := ADD32(C, T) is then applied
    for each product in the order the instructions ran.  A product's kind is (K, the
    widening of its 16-bit elements to fp32)."""

    def products(self) -> np.ndarray:
        """T of every product, as (count, M, N) fp32 bits.

            E := +0.0; O := +0.0                      # two fp32 lanes, fresh for every product and element
            for k < K (in increasing k):
                E := FMA32(E, A[m].h[2k],   B[k].h[2n])     # even lane: bits 15:0 of each dword
                O := FMA32(O, A[m].h[2k+1], B[k].h[2n+1])   # odd lane:  bits 31:16
            T := ADD32(E, O)

        The lanes of all products of one kind (and of all M x N outputs) are independent, so
        one fold runs them together: for k in 0..K-1, lanes := FMA32(lanes, A[j][:, k]
        (broadcast over n), B[j][k] (broadcast over m)); the fold checks its operands once."""
        M, N = self.shape
        T = np.empty((len(self.kinds), M, N), dtype=np.uint32)
        for (K, widen), which in self.by_kind():
            A = widen(self.A[which, :M, : 4 * K].view(np.uint16).reshape(-1, M, K, 2))  # fp32 bits
            B = widen(self.B[which, :K, : 4 * N].view(np.uint16).reshape(-1, K, N, 2))
            lanes = np.zeros((len(A), M, N, 2), dtype=np.uint32)  # [..., 0] = E, [..., 1] = O: +0.0
            lanes = tmul_numerics.tmul_fma32_fold(lanes, A.transpose(2, 0, 1, 3)[:, :, :, None, :],
                                             B.transpose(1, 0, 2, 3)[:, :, None, :, :])
            T[which] = tmul_numerics.tmul_add32(lanes[..., 0], lanes[..., 1])
        return T

    def apply(self, C: np.ndarray) -> np.ndarray:
        """C := ADD32(C, T) for each product's T, in the order the instructions ran."""
        exact = self.exact_total(C)
        if exact is not None:
            return exact
        for T in self.products():
            C = tmul_numerics.tmul_add32(C, T)
        return C

    @classmethod
    def apply_all(cls, batches: list["PairDotProducts"], Cs: list[np.ndarray]) -> list[np.ndarray]:
        """``apply`` of each batch to its C: when the batches' proof of exactness holds for all of them
        together (one proof and one stacked matrix product instead of one per accumulator), at once."""
        if len(batches) > 1:
            totals = exact_totals(batches, Cs)
            if totals is not None:
                return totals
        return [batch.apply(C) for batch, C in zip(batches, Cs)]

    def exact_total(self, C: np.ndarray) -> np.ndarray | None:
        """What ``apply`` returns, by one exact float64 matrix product, when no step of any product can
        round; None when that is not certain (the lane-by-lane fold then runs).  See exact_totals."""
        totals = exact_totals([self], [C])
        return None if totals is None else totals[0]


def exact_totals(batches: list[PairDotProducts], Cs: list[np.ndarray]) -> list[np.ndarray] | None:
    """What ``apply`` returns for each batch (all of one shape) and its C, by one exact float64 matrix
    product per batch (stacked: one numpy call for all), when no step of any product of any batch can
    round; None when that is not certain for all of them.

    Why it is exact.  Every value here is finite and normal or zero (checked: no inf, NaN or denormal
    among the Cs and the widened inputs, so DAZ changes nothing).  Let q be the exponent of the lowest set
    bit over the non-zero Cs and the products a*b (the lowest bits of a and of b added), over every batch.
    Every lane value E, O, T and every partial C of any batch is then a sum of such terms: a multiple of
    2**q, and in magnitude at most S = max|C| + count * 2K * max|a| * max|b| (maxima over every batch).
    With S < 2**(q+24) each of them has at most 24 significant bits, so every FMA32 and ADD32 is exact (no
    rounding), and with q >= -126 and q + 24 <= 127 none is tiny or overflows: each final C is the exact
    real sum C + sum of its batch's a*b, in any order.  float64 holds every partial sum of the matrix
    product exactly (multiples of 2**q below 2**(q+24)), so BLAS's order does not matter either.  (A
    bound over several batches is at least each one's own: what holds for all holds for each.)  Zeros: E
    and O start as +0 and ADD32/FMA32 give -0 only from two -0 addends, so a zero E, O or T is +0, and a
    zero C after an addition of T is +0 too: every zero result is +0 -- also in a batch whose own
    products are all zero, which adds +0 to each C."""
    kinds = {kind for batch in batches for kind in batch.kinds}
    counts = {len(batch.kinds) for batch in batches}
    if len(kinds) != 1 or len(counts) != 1:
        return None
    ((K, widen),) = kinds
    (count,) = counts
    M, N = batches[0].shape
    if len(batches) == 1:  # (a view, not a copy, for the one batch a lone settle has)
        A, B, C = batches[0].A[None, :count, :M, : 4 * K], batches[0].B[None, :count, :K, : 4 * N], Cs[0][None]
    else:
        A = np.stack([batch.A[:count, :M, : 4 * K] for batch in batches])
        B = np.stack([batch.B[:count, :K, : 4 * N] for batch in batches])
        C = np.stack(Cs)
    A, B = A.view(np.uint16), B.view(np.uint16)  # (tiles, count, M, 2K), (tiles, count, K, 2N)
    if widen is numerics.bf16_to_fp32:  # fp32 = bf16 << 16: the bounds straight from the 16-bit halves
        bounds = ((A, 16), (B, 16), (C, 0))
        A, B = (x.astype(np.uint32) << np.uint32(16) for x in (A, B))
    else:
        A, B = widen(A), widen(B)  # fp32 bits
        bounds = ((A, 0), (B, 0), (C, 0))
    lows = []
    for x, shift in bounds:
        low = _lowest_bit_exponent(x, shift)
        if low is None:
            return None
        lows.append(low)
    (low_a, max_a), (low_b, max_b), (low_c, max_c) = lows
    if low_a >= _NO_BITS or low_b >= _NO_BITS:
        return None  # every product is zero: too rare to be worth a proof of its zero signs
    q = min(low_a + low_b, low_c)
    bound = max_c + count * 2 * K * max_a * max_b  # exact in float64 up to rounding upwards (ample margin below)
    if q < -126 or q + 24 > 127 or not bound < 2.0 ** (q + 24) * (1 - 2.0 ** -20):
        return None
    tiles = len(batches)
    # (order="C": the reshape that follows is then a view, not a second copy)
    a = (A.view(np.float32).reshape(tiles, count, M, 2 * K).transpose(0, 2, 1, 3).astype(np.float64, order="C")
         .reshape(tiles, M, count * 2 * K))
    b = (B.view(np.float32).reshape(tiles, count, K, N, 2).transpose(0, 1, 2, 4, 3).astype(np.float64, order="C")
         .reshape(tiles, count * 2 * K, N))
    total = C.view(np.float32).astype(np.float64) + a @ b
    return list(np.where(total == 0, np.uint32(0), total.astype(np.float32).view(np.uint32)))


_NO_BITS = 1 << 20  # the lowest-bit exponent of an all-zero array: above any real one


def _lowest_bit_exponent(x: np.ndarray, shift: int = 0) -> tuple[int, float] | None:
    """(an exponent e such that every non-zero fp32 value of ``x << shift`` (bits; ``x`` uint32, or with
    shift 16 the uint16 top halves) is a multiple of 2**e, their largest magnitude), or None if any is
    inf, NaN or denormal; (_NO_BITS, 0.0) if all are zero.

    e = (the smallest biased exponent) - 150 + (the trailing zeros of the OR of all significands): each
    value is its significand times 2**(its exponent - 150), and each significand is a multiple of
    2**(those trailing zeros).  Max, min and OR commute with the shift.  Four whole-array operations:
    this runs on every batch."""
    magnitude = x & x.dtype.type(0x7FFFFFFF >> shift)
    largest = int(magnitude.max()) << shift
    # the smallest non-zero (a zero wraps to the dtype's largest, so all zero gives 2**32)
    smallest = (int((magnitude - x.dtype.type(1)).min()) + 1) << shift
    if largest >= 0x7F800000 or smallest < 0x800000:  # an inf or NaN; a denormal (smallest is never 0)
        return None
    if smallest == 1 << 32:
        return _NO_BITS, 0.0
    significands = ((int(np.bitwise_or.reduce(magnitude, axis=None)) << shift) & 0x7FFFFF) | 0x800000
    trailing = (significands & -significands).bit_length() - 1
    return (smallest >> 23) - 150 + trailing, float(np.uint32(largest).view(np.float32))
