"""The fp32 arithmetic of the SSE/AVX/AVX-512 forms (semantics/vector.py) under the default MXCSR (1F80H: round
to nearest even, denormals kept, DAZ = FTZ = 0, every exception masked), computed exactly: each result is the
exact value of its operation rounded once (``core.numerics.float_to_fp32_bits`` of a Fraction), so an FMA rounds
once and an addition never goes through the host's floats.

The special cases are the SDM's (Vol. 1, 4.8.3.5 and Table 4-7, "Rules for handling NaNs"): a NaN operand gives
that NaN made quiet, the first NaN in the instruction's operand order; an invalid operation (inf - inf, 0 x inf)
gives the default NaN, the "real indefinite" FFC00000H; an exact zero sum is +0 unless both addends are -0.
BF16 conversion is the SDM's convert_fp32_to_bfloat16 (VCVTNEPS2BF16's Operation): an integer rounding bias,
with input denormals read as zero.
"""

from __future__ import annotations

from fractions import Fraction

from ...core.numerics import float_to_fp32_bits

DEFAULT_NAN = 0xFFC00000  # the real indefinite QNaN
SIGN = 0x80000000
INF = 0x7F800000


def is_nan(x: int) -> bool:
    return (x & 0x7F800000) == INF and x & 0x7FFFFF != 0


def is_inf(x: int) -> bool:
    return x & 0x7FFFFFFF == INF


def quiet(x: int) -> int:
    return x | 0x00400000


def value(x: int) -> Fraction:
    """The exact value of finite fp32 bits (denormals kept)."""
    exponent, fraction = x >> 23 & 0xFF, x & 0x7FFFFF
    magnitude = Fraction(fraction, 1 << 149) if exponent == 0 else Fraction((1 << 23) | fraction, 1) * Fraction(2) ** (exponent - 150)
    return -magnitude if x & SIGN else magnitude


def round_fp32(exact: Fraction, zero_sign: int = 0) -> int:
    """The exact value rounded once to fp32 (RNE, gradual underflow, overflow to infinity); an exact zero gets
    ``zero_sign``."""
    if exact == 0:
        return zero_sign << 31
    return float_to_fp32_bits(exact)


def _first_nan(*operands: int) -> int | None:
    for x in operands:
        if is_nan(x):
            return quiet(x)
    return None


def add(a: int, b: int) -> int:
    """a + b (VADDPS's element): RoundFPControl_MXCSR of the exact sum."""
    nan = _first_nan(a, b)
    if nan is not None:
        return nan
    if is_inf(a) and is_inf(b):
        return a if (a ^ b) & SIGN == 0 else DEFAULT_NAN
    if is_inf(a) or is_inf(b):
        return a if is_inf(a) else b
    return round_fp32(value(a) + value(b), (a & b) >> 31 & 1)


def mul(a: int, b: int) -> int:
    """a x b (VMULPS's element): RoundFPControl_MXCSR of the exact product."""
    nan = _first_nan(a, b)
    if nan is not None:
        return nan
    sign = (a ^ b) & SIGN
    if is_inf(a) or is_inf(b):
        if a & 0x7FFFFFFF == 0 or b & 0x7FFFFFFF == 0:
            return DEFAULT_NAN  # 0 x inf
        return sign | INF
    return round_fp32(value(a) * value(b), sign >> 31)


def fma(a: int, b: int, c: int, nan_order: tuple[int, int, int]) -> int:
    """a x b + c with one rounding (FMA).  ``nan_order``: the operands in the order whose first NaN is the
    result (VFMADD231PS: the factors, then the addend)."""
    nan = _first_nan(*nan_order)
    if nan is not None:
        return nan
    product_sign = (a ^ b) & SIGN
    zero_factor = a & 0x7FFFFFFF == 0 or b & 0x7FFFFFFF == 0
    if is_inf(a) or is_inf(b):
        if zero_factor:
            return DEFAULT_NAN  # 0 x inf
        if is_inf(c) and (c & SIGN) != product_sign:
            return DEFAULT_NAN  # inf - inf
        return product_sign | INF
    if is_inf(c):
        return c
    exact = value(a) * value(b) + value(c)
    zero_sign = 1 if (product_sign and c & SIGN and zero_factor and c & 0x7FFFFFFF == 0) else 0
    return round_fp32(exact, zero_sign)


def from_int32(x: int) -> int:
    """A signed dword converted to fp32 (VCVTDQ2PS's element), rounded to nearest even."""
    x = x - (1 << 32) if x >> 31 else x
    return round_fp32(Fraction(x))


def to_bf16(x: int) -> int:
    """The SDM's convert_fp32_to_bfloat16: zero or denormal -> a signed zero; infinity -> its top half; NaN ->
    its top half made quiet; else the integer sum x + 7FFFH + x[16], its top half (round to nearest even)."""
    exponent = x >> 23 & 0xFF
    if exponent == 0:
        return x >> 16 & 0x8000
    if is_inf(x):
        return x >> 16
    if is_nan(x):
        return x >> 16 | 0x0040
    return (x + 0x7FFF + (x >> 16 & 1)) >> 16 & 0xFFFF


# ---------------------------------------------------------------------------
# Issue 27: the scalar and packed SSE/AVX arithmetic compilers emit around AMX kernels
# ---------------------------------------------------------------------------


def sub(a: int, b: int) -> int:
    """a - b (SUBSS/VSUBPS's element): RoundFPControl_MXCSR of the exact difference; a NaN operand gives the
    first NaN (a, then b) made quiet, its sign as it was."""
    nan = _first_nan(a, b)
    if nan is not None:
        return nan
    return add(a, b ^ SIGN)


def div(a: int, b: int) -> int:
    """a / b (DIVSS/VDIVPS's element): the exact quotient rounded once.  0/0 and inf/inf are invalid (the
    default NaN); x/0 is a signed infinity (the divide-by-zero exception is masked)."""
    nan = _first_nan(a, b)
    if nan is not None:
        return nan
    sign = (a ^ b) & SIGN
    a_zero, b_zero = a & 0x7FFFFFFF == 0, b & 0x7FFFFFFF == 0
    if (is_inf(a) and is_inf(b)) or (a_zero and b_zero):
        return DEFAULT_NAN
    if is_inf(a) or b_zero:
        return sign | INF
    if is_inf(b) or a_zero:
        return sign
    return round_fp32(value(a) / value(b), sign >> 31)


def maximum(a: int, b: int) -> int:
    """MAX(a, b) as MAXSS/MAXPS define it (not IEEE's maxNum): if either is a NaN (quiet or signalling), or
    both are zeros of any sign, or a is not greater, the result is b, unchanged."""
    if is_nan(a) or is_nan(b) or (a & 0x7FFFFFFF == 0 and b & 0x7FFFFFFF == 0):
        return b
    return a if value_or_inf(a) > value_or_inf(b) else b


def minimum(a: int, b: int) -> int:
    """MIN(a, b) as MINSS/MINPS define it: if either is a NaN, or both are zeros, or a is not less, b."""
    if is_nan(a) or is_nan(b) or (a & 0x7FFFFFFF == 0 and b & 0x7FFFFFFF == 0):
        return b
    return a if value_or_inf(a) < value_or_inf(b) else b


def value_or_inf(x: int):
    """The exact value of a non-NaN operand, infinities as float('inf') with their sign (for comparisons)."""
    if is_inf(x):
        return float("-inf") if x & SIGN else float("inf")
    return value(x)


def compare(a: int, b: int) -> str:
    """The relation of a to b: 'unordered' (a NaN), 'less', 'equal' (-0 = +0) or 'greater'."""
    if is_nan(a) or is_nan(b):
        return "unordered"
    x, y = value_or_inf(a), value_or_inf(b)
    return "less" if x < y else "greater" if x > y else "equal"


def from_int(x: int, bits: int) -> int:
    """A signed integer of ``bits`` bits converted to fp32 (CVTSI2SS, VCVTDQ2PS), rounded to nearest even."""
    x %= 1 << bits
    x = x - (1 << bits) if x >> (bits - 1) else x
    return round_fp32(Fraction(x))


def from_uint(x: int, bits: int) -> int:
    """An unsigned integer of ``bits`` bits converted to fp32 (VCVTUSI2SS), rounded to nearest even."""
    return round_fp32(Fraction(x % (1 << bits)))


def round_to_integer(exact: Fraction, mode: str) -> int:
    """An exact value rounded to an integer: 'nearest' (ties to even), 'down', 'up' or 'truncate'."""
    floor = exact.numerator // exact.denominator
    if mode == "down":
        return floor
    if mode == "up":
        return -((-exact.numerator) // exact.denominator)
    if mode == "truncate":
        return floor if exact >= 0 else -((-exact.numerator) // exact.denominator)
    rest = exact - floor
    return floor + 1 if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and floor & 1) else floor


def to_int(x: int, bits: int, mode: str = "nearest") -> int:
    """fp32 converted to a signed integer of ``bits`` bits (CVTSS2SI: nearest even, MXCSR's default;
    CVTTSS2SI, CVTTPS2DQ: truncated).  A NaN, an infinity or a result out of range gives the integer
    indefinite, 1 followed by zeros (80000000H for 32 bits): the invalid exception is masked."""
    indefinite = 1 << (bits - 1)
    if is_nan(x) or is_inf(x):
        return indefinite
    n = round_to_integer(value(x), mode)
    return n % (1 << bits) if -indefinite <= n < indefinite else indefinite


ROUNDING_MODES = ("nearest", "down", "up", "truncate")  # imm8[1:0] of ROUNDSS and VRNDSCALEPS; MXCSR.RC's order


def round_integral(x: int, imm8: int) -> int:
    """ROUNDSS/ROUNDPS/VRNDSCALEPS's element: x rounded to a multiple of 2^-M (M := imm8[7:4], 0 for ROUNDPS)
    by imm8[1:0] (or MXCSR.RC, round to nearest even by default, when imm8[2] is set); a NaN is made quiet, an
    infinity or a zero stays as it is, a zero result keeps x's sign."""
    if is_nan(x):
        return quiet(x)
    if is_inf(x) or x & 0x7FFFFFFF == 0:
        return x
    mode = "nearest" if imm8 & 4 else ROUNDING_MODES[imm8 & 3]
    scale = 1 << (imm8 >> 4 & 0xF)
    n = round_to_integer(value(x) * scale, mode)
    return round_fp32(Fraction(n, scale), x >> 31 & 1)


# ---------------------------------------------------------------------------
# Half precision (F16C's VCVTPH2PS and VCVTPS2PH, issue 27: the conversions around AMX-FP16 tiles)
# ---------------------------------------------------------------------------


def fp16_value(h: int) -> Fraction:
    """The exact value of finite fp16 bits (denormals kept)."""
    exponent, fraction = h >> 10 & 0x1F, h & 0x3FF
    magnitude = Fraction(fraction, 1 << 24) if exponent == 0 else Fraction(0x400 | fraction, 1 << 10) * Fraction(2) ** (exponent - 15)
    return -magnitude if h & 0x8000 else magnitude


def from_fp16(h: int) -> int:
    """fp16 to fp32 (VCVTPH2PS's element): exact; an infinity stays one, a NaN keeps its payload, made quiet."""
    sign = (h & 0x8000) << 16
    if h & 0x7C00 == 0x7C00:
        return sign | INF | (h & 0x3FF) << 13 | (0x400000 if h & 0x3FF else 0)
    return round_fp32(fp16_value(h), h >> 15)


def to_fp16(x: int, mode: str = "nearest") -> int:
    """fp32 to fp16 (VCVTPS2PH's element) rounded once by ``mode`` ('nearest' even, 'down', 'up', 'truncate'),
    with gradual underflow; past the largest finite value: infinity, or the largest finite value where the
    mode rounds toward zero; a NaN keeps its top payload bits, made quiet."""
    sign = (x & SIGN) >> 16
    if is_nan(x):
        return sign | 0x7C00 | 0x200 | (x & 0x7FFFFF) >> 13
    if is_inf(x):
        return sign | 0x7C00
    exact = value(x)
    magnitude = abs(exact)
    if magnitude == 0:
        return sign
    # the quantum of the binade (2^-24 for denormals), then the value in quanta, rounded by the mode
    exponent = max(magnitude.numerator.bit_length() - magnitude.denominator.bit_length(), -14)
    while Fraction(2) ** exponent > magnitude:
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= magnitude:
        exponent += 1
    quantum = Fraction(2) ** (max(exponent, -14) - 10)
    toward = {"nearest": "nearest", "truncate": "truncate",
              "down": "down" if not sign else "up", "up": "up" if not sign else "down"}[mode]
    units = round_to_integer(magnitude / quantum, toward)  # magnitude rounded in the direction the mode gives
    rounded = units * quantum
    if rounded > 65504:  # past the largest finite fp16
        overflow_to_inf = mode == "nearest" or (mode == "up" and not sign) or (mode == "down" and sign)
        return sign | (0x7C00 if overflow_to_inf else 0x7BFF)
    if rounded < Fraction(1, 1 << 14):  # a denormal (or zero)
        return sign | int(rounded * (1 << 24))
    e = rounded.numerator.bit_length() - rounded.denominator.bit_length()
    while Fraction(2) ** e > rounded:
        e -= 1
    while Fraction(2) ** (e + 1) <= rounded:
        e += 1
    fraction = int(rounded / Fraction(2) ** (e - 10)) - 0x400
    return sign | (e + 15) << 10 | fraction
