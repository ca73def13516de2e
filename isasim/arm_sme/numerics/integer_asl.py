"""The Arm ARM's integer and bit functions (its shared pseudocode library) that the A64 semantics and the
immediate encodings use: Ones, SInt, ROR, Replicate, HighestSetBit, AddWithCarry, DecodeBitMasks and
ConditionHolds, on Python ints holding the ASL's bitvectors.
"""

from __future__ import annotations


def Ones(n: int) -> int:
    return (1 << n) - 1


def SInt(x: int, n: int) -> int:
    return x - (1 << n) if x >> (n - 1) & 1 else x


def ROR(x: int, shift: int, n: int) -> int:
    shift %= n
    return ((x >> shift) | (x << (n - shift))) & Ones(n) if shift else x


def Replicate(x: int, esize: int, n: int) -> int:
    result = 0
    for at in range(0, n, esize):
        result |= x << at
    return result


def HighestSetBit(x: int) -> int:
    return x.bit_length() - 1  # -1 when x is zero, as the ASL's


def AddWithCarry(x: int, y: int, carry_in: int, n: int) -> tuple[int, tuple[int, int, int, int]]:
    """(result, (N, Z, C, V)): the unsigned and the signed sums decide C and V."""
    unsigned_sum = x + y + carry_in
    signed_sum = SInt(x, n) + SInt(y, n) + carry_in
    result = unsigned_sum & Ones(n)
    return result, (result >> (n - 1), int(result == 0), int(result != unsigned_sum),
                    int(SInt(result, n) != signed_sum))


def DecodeBitMasks(immN: int, imms: int, immr: int, immediate: bool, M: int) -> tuple[int, int]:
    """(wmask, tmask) of M bits; ValueError where the ASL is UNDEFINED (no element size, or a logical
    immediate's all-ones element)."""
    length = HighestSetBit((immN << 6) | (~imms & 0x3F))  # log2 of the element size
    if length < 1:
        raise ValueError("DecodeBitMasks: N:NOT(imms) has no bit set above bit 0 (no element size)")
    if (1 << length) > M:
        raise ValueError(f"DecodeBitMasks: a {1 << length}-bit element does not fit {M} bits")
    levels = Ones(length)
    if immediate and imms & levels == levels:
        raise ValueError("DecodeBitMasks: an all-ones element is reserved for the logical immediates")
    S, R = imms & levels, immr & levels
    esize = 1 << length
    d = (S - R) & levels  # diff<len-1:0>
    welem, telem = Ones(S + 1), Ones(d + 1)
    return Replicate(ROR(welem, R, esize), esize, M), Replicate(telem, esize, M)


def ConditionHolds(cond: int, nzcv: int) -> bool:
    """``nzcv``: PSTATE.<N,Z,C,V> as bits 3:0."""
    n, z, c, v = (nzcv >> 3) & 1, (nzcv >> 2) & 1, (nzcv >> 1) & 1, nzcv & 1
    result = {0: z == 1, 1: c == 1, 2: n == 1, 3: v == 1, 4: c == 1 and z == 0, 5: n == v,
              6: n == v and z == 0, 7: True}[cond >> 1]
    if cond & 1 and cond != 0b1111:  # '111x' is always true; otherwise bit 0 inverts
        result = not result
    return result
