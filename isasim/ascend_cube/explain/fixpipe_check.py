"""The explain check's own arithmetic for one Fixpipe element: the output bits worked out here from the
L0C value and the quant word's fields with Python fractions, in the documented order (facts: the
quant word tables of 随路量化.md and the ASC gen_data_*.py order: convert, x M1 (M2 = 0 for a
negative input under ReLU), round, s9, + offset, saturate), beside what the machine wrote.

It does not call fixpipe_math or formats (what the machine runs); it shares only the policy of
which modes saturate a float result (fixpipe_math.float_saturates).  Modes it does not work out
itself (the 950's fp8/HiFloat8 outputs, MCB shifts, ReLU on the plain casts) return None, and the
check then shows the steps' own result.
"""

from __future__ import annotations

from fractions import Fraction
from math import floor

# (exponent bits, mantissa bits) of the binary formats an output can take
_BINARY = {"float32": (8, 23), "float16": (5, 10), "bfloat16": (8, 7)}
_SCALED_INT8 = ("REQ8", "QF322B8_PRE")
_SCALED_FLOAT = {"DEQF16": "float16", "QS322BF16_PRE": "bfloat16", "QF322F16_PRE": "float16",
                 "QF322BF16_PRE": "bfloat16", "QF322F32_PRE": "float32"}
_CASTS = {"F322F16": "float16", "F322BF16": "bfloat16"}


def _decode_binary(bits: int, fmt: str) -> Fraction | None:
    """The value of a finite number's bits (None for inf or NaN)."""
    exp_bits, man_bits = _BINARY[fmt]
    sign = -1 if bits >> (exp_bits + man_bits) & 1 else 1
    exponent = bits >> man_bits & ((1 << exp_bits) - 1)
    mantissa = bits & ((1 << man_bits) - 1)
    bias = (1 << (exp_bits - 1)) - 1
    if exponent == (1 << exp_bits) - 1:
        return None
    if exponent == 0:
        return sign * Fraction(mantissa, 1 << man_bits) * Fraction(2) ** (1 - bias)
    return sign * (1 + Fraction(mantissa, 1 << man_bits)) * Fraction(2) ** (exponent - bias)


def _round_half_even(q: Fraction) -> int:
    low = floor(q)
    rest = q - low
    return low + (rest > Fraction(1, 2) or (rest == Fraction(1, 2) and low % 2 == 1))


def _encode_binary(q: Fraction, fmt: str, saturate: bool) -> int:
    """q rounded once to nearest, ties to even, as fmt's bits; past the largest finite value: that value
    (saturate) or infinity."""
    exp_bits, man_bits = _BINARY[fmt]
    bias = (1 << (exp_bits - 1)) - 1
    sign = (1 << (exp_bits + man_bits)) if q < 0 else 0
    q = abs(q)
    if q == 0:
        return sign
    exponent = max(floor_log2(q), 1 - bias)  # subnormals share the smallest normal's spacing
    units = _round_half_even(q / Fraction(2) ** (exponent - man_bits))  # in steps of 2^(exponent - man_bits)
    if units >> (man_bits + 1):  # rounding carried into the next binade
        units >>= 1
        exponent += 1
    if exponent > bias:
        largest = ((1 << exp_bits) - 2) << man_bits | ((1 << man_bits) - 1)
        return sign | (largest if saturate else ((1 << exp_bits) - 1) << man_bits)
    if units < (1 << man_bits):  # subnormal
        return sign | units
    return sign | (exponent + bias) << man_bits | (units - (1 << man_bits))


def floor_log2(q: Fraction) -> int:
    """The e with 2^e <= q < 2^(e+1), for q > 0."""
    e = q.numerator.bit_length() - q.denominator.bit_length()
    return e if Fraction(2) ** e <= q else e - 1


def _to_float32(q: Fraction) -> Fraction:
    return _decode_binary(_encode_binary(q, "float32", saturate=False), "float32")


def explained_output(value_bits: int, l0c_dtype: str, mode: str, word: int, relu: bool, chip: str,
                     options: dict) -> int | None:
    """The element's output bits, or None where this explanation does not work the mode out itself."""
    from ..numerics.fixpipe_math import float_saturates

    base = mode[1:] if mode.startswith("V") else mode
    if l0c_dtype == "int32":
        x = Fraction(value_bits - (1 << 32) if value_bits >> 31 else value_bits)
    else:
        x = _decode_binary(value_bits, "float32")
        if x is None:
            return None
    if base == "NoQuant":
        return None if relu else value_bits
    if base in _CASTS:
        return None if relu else _encode_binary(x, _CASTS[base], float_saturates(mode, chip, options))
    if base not in _SCALED_INT8 and base not in _SCALED_FLOAT:
        return None
    if chip == "910B" and word >> 36 & 1 and base in ("REQ8", "DEQF16"):
        return None  # MCB: the shift's reading is an option (mcb_shift, mcb_n_code)
    m1 = _decode_binary((word >> 13 & 0x7FFFF) << 13, "float32")  # (1,8,10): float32 with 13 low bits clear
    if m1 is None:
        return None
    if l0c_dtype == "int32":
        x = _to_float32(x)  # the int32 -> float32 conversion, ties to even
    product = x * (0 if relu and x < 0 else m1)
    if options["fixpipe_multiply"] == "fp32_rounded":
        product = _to_float32(product)
    if base in _SCALED_FLOAT:
        bits = _encode_binary(product, _SCALED_FLOAT[base], float_saturates(mode, chip, options))
        if product == 0 and x < 0 and options["relu_zero_sign"] == "product_sign":
            bits |= 1 << sum(_BINARY[_SCALED_FLOAT[base]])  # -x * 0 keeps the product's sign: -0
        return bits
    if options["int8_rounding"] == "ties_even":
        s9 = _round_half_even(product)
    else:
        s9 = floor(abs(product) + Fraction(1, 2)) * (1 if product >= 0 else -1)
    s9 = min(max(s9, -256), 255)
    offset = word >> 37 & 0x1FF
    offset -= 512 if offset >> 8 else 0
    low, high = (-128, 127) if word >> 46 & 1 else (0, 255)
    return min(max(s9 + offset, low), high) & 0xFF
