"""Bit-exact, ISA-neutral floating-point numerics for matrix engines.

Values travel as IEEE bit patterns in numpy unsigned arrays (``uint16`` for
bf16/fp16, ``uint32`` for fp32) of any shape. Every public function also
accepts Python ints and numpy scalars and returns the same kind: Python int in
gives Python int out, a numpy scalar gives a numpy scalar, an array gives an
array.

This module holds what every ISA shares: the formats, fp32 classification,
exact widening and IEEE round-to-nearest-even conversions. The lane rules of
one engine (which inputs are flushed, how NaNs propagate, its default NaN)
live beside that ISA, e.g. `isasim.x86_amx.numerics` for the AMX TMUL, and
build on the helpers here.

No result here depends on the host FPU's rounding mode, FTZ or DAZ setting:
each rounding is done by exact integer arithmetic on bit patterns.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np

__all__ = [
    "ElementType",
    "ELEMENT_TYPES",
    "Format",
    "BF16",
    "FP16",
    "FP32",
    "FP64",
    "bf16_to_fp32",
    "fp16_to_fp32",
    "is_nan32",
    "is_inf32",
    "is_zero32",
    "is_denormal32",
    "quiet32",
    "daz32",
    "fp32_bits_to_float",
    "float_to_fp32_bits",
    "float_to_bf16_bits",
    "bf16_bits_to_float",
    "fp16_bits_to_float",
    "float_to_fp16_bits",
]


# ---------------------------------------------------------------------------
# Formats
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Format:
    """An IEEE-754-style binary floating-point format.

    Every format defined here uses the IEEE encoding for special values: a
    maximum exponent field means inf (zero mantissa) or NaN (non-zero
    mantissa), and the top mantissa bit is the quiet bit. FP8 E4M3, which
    has no inf and a single NaN pattern, will need a new field when it is
    added. E5M2 fits as is.
    """

    name: str
    exponent_bits: int
    mantissa_bits: int  # explicit (stored) mantissa bits
    bias: int

    @property
    def width(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def precision(self) -> int:
        """Significant bits of a normal number, hidden bit included."""
        return self.mantissa_bits + 1

    @property
    def sign_mask(self) -> int:
        return 1 << (self.width - 1)

    @property
    def max_exponent_field(self) -> int:
        """Exponent field value of inf and NaN (all ones)."""
        return (1 << self.exponent_bits) - 1

    @property
    def exponent_mask(self) -> int:
        """Exponent field, in place."""
        return self.max_exponent_field << self.mantissa_bits

    @property
    def mantissa_mask(self) -> int:
        return (1 << self.mantissa_bits) - 1

    @property
    def quiet_bit(self) -> int:
        return 1 << (self.mantissa_bits - 1)

    @property
    def min_normal_exponent(self) -> int:
        """Unbiased exponent of the smallest normal number (1 - bias)."""
        return 1 - self.bias

    @property
    def dtype(self) -> type:
        """numpy unsigned type that holds one bit pattern."""
        return {16: np.uint16, 32: np.uint32, 64: np.uint64}[self.width]


BF16 = Format("bf16", exponent_bits=8, mantissa_bits=7, bias=127)
FP16 = Format("fp16", exponent_bits=5, mantissa_bits=10, bias=15)
FP32 = Format("fp32", exponent_bits=8, mantissa_bits=23, bias=127)
FP64 = Format("fp64", exponent_bits=11, mantissa_bits=52, bias=1023)


class ElementType(NamedTuple):
    """How elements of one type are stored and shown (``storage, format = ELEMENT_TYPES[name]``)."""

    storage: type  # the numpy dtype holding one element; a float format's bit pattern
    format: str  # "int", or the float format's name ("bf16", "fp16", "fp32"), as core.render shows it

    @property
    def size(self) -> int:
        """Bytes per element."""
        return np.dtype(self.storage).itemsize

    @property
    def signed(self) -> bool:
        return self.format == "int" and np.issubdtype(self.storage, np.signedinteger)

    @property
    def value_type(self) -> type:
        """The numpy type whose values these bits are (ml_dtypes.bfloat16 for bf16), for
        reinterpreting, never converting, the stored bits as numbers."""
        if self.format == "int":
            return self.storage
        import ml_dtypes

        return {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp32": np.float32}[self.format]


# Every element type a memory region, an array view or a watch can have, by name: the one
# table (ISAs choose from it the types their registers can be viewed as).
ELEMENT_TYPES: dict[str, ElementType] = {
    "int8": ElementType(np.int8, "int"), "uint8": ElementType(np.uint8, "int"),
    "int16": ElementType(np.int16, "int"), "uint16": ElementType(np.uint16, "int"),
    "int32": ElementType(np.int32, "int"), "uint32": ElementType(np.uint32, "int"),
    "int64": ElementType(np.int64, "int"), "uint64": ElementType(np.uint64, "int"),
    "bf16": ElementType(np.uint16, "bf16"), "fp16": ElementType(np.uint16, "fp16"),
    "fp32": ElementType(np.uint32, "fp32"),
}

_SIGN32 = 0x80000000
_ABS32 = 0x7FFFFFFF
_EXP32 = 0x7F800000
_MANT32 = 0x007FFFFF
_QUIET32 = 0x00400000
_INF32 = 0x7F800000

# The same as 0-d uint32 arrays: the cheapest operands for numpy ufuncs.
_C_SIGN = np.array(_SIGN32, dtype=np.uint32)
_C_ABS = np.array(_ABS32, dtype=np.uint32)
_C_EXP = np.array(_EXP32, dtype=np.uint32)
_C_MANT = np.array(_MANT32, dtype=np.uint32)
_C_QUIET = np.array(_QUIET32, dtype=np.uint32)
_C_INF = np.array(_INF32, dtype=np.uint32)
_C_ZERO = np.array(0, dtype=np.uint32)


# ---------------------------------------------------------------------------
# Argument handling: Python int -> int, numpy scalar -> scalar, array -> array
# ---------------------------------------------------------------------------

_PYTHON, _NUMPY_SCALAR, _ARRAY = 0, 1, 2


def _bits_array(value, fmt: Format) -> tuple[np.ndarray, int]:
    """Return *value* as an ndarray of ``fmt.dtype``, and which container it came in."""
    dtype = fmt.dtype
    if isinstance(value, np.ndarray):
        container = _ARRAY
    elif isinstance(value, np.generic):
        container = _NUMPY_SCALAR
    elif isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < (1 << fmt.width):
            raise ValueError(f"{value:#x} is not a {fmt.width}-bit pattern")
        return np.asarray(value, dtype=dtype), _PYTHON
    else:
        raise TypeError(
            f"expected {fmt.name} bit patterns (unsigned ints), got {type(value).__name__}"
        )
    arr = np.asarray(value)
    if arr.dtype != dtype:
        if arr.dtype.kind not in "ui":
            raise TypeError(f"expected {fmt.name} bit patterns, got dtype {arr.dtype}")
        if arr.size and (arr.min() < 0 or int(arr.max()) >> fmt.width):
            raise ValueError(f"values do not fit in {fmt.width} bits")
        arr = arr.astype(dtype)
    return arr, container


def _prepare(values, fmt: Format):
    """Broadcast bit-pattern arguments to flat arrays.

    Returns ``(arrays, shape, container)``. Give the results to `_finish`.
    """
    arrays, container = [], _PYTHON
    for v in values:
        arr, k = _bits_array(v, fmt)
        arrays.append(arr)
        container = max(container, k)
    arrays = np.broadcast_arrays(*arrays)
    shape = arrays[0].shape
    return [np.ascontiguousarray(a).reshape(-1) for a in arrays], shape, container


def _finish(result: np.ndarray, shape, container):
    """Return *result* in the caller's container (int, numpy scalar or array)."""
    if container == _ARRAY:
        return result.reshape(shape)
    item = result.reshape(-1)[0]
    if container == _NUMPY_SCALAR:
        return item
    return item.item()  # Python int / bool / float


def _fast_arrays(values, dtype) -> bool:
    """True if all *values* are non-0-d arrays of *dtype* with one shape."""
    first = values[0]
    if type(first) is not np.ndarray or first.dtype != dtype or first.ndim == 0:
        return False
    return all(
        type(v) is np.ndarray and v.dtype == dtype and v.shape == first.shape
        for v in values[1:]
    )


def _elementwise(fmt: Format, fn, *values):
    """Apply the elementwise ``fn`` to *fmt* bit patterns, returning the caller's container.

    Same-shape arrays of the right dtype go straight to ``fn``.
    """
    if _fast_arrays(values, fmt.dtype):
        return fn(*values)
    arrays, shape, container = _prepare(values, fmt)
    return _finish(fn(*arrays), shape, container)


# ---------------------------------------------------------------------------
# Exact integer helpers (vectorised)
# ---------------------------------------------------------------------------


def _u64(v) -> np.ndarray:
    return np.asarray(v).astype(np.uint64)


def _bit_length_u64(x: np.ndarray) -> np.ndarray:
    """Exact bit length of each element of a uint64 array (values < 2**63).

    The float64 conversion only gives an estimate. Its binary exponent is the
    true bit length L or, if the conversion rounded up to 2**L, L + 1. One
    exact integer test corrects it. This holds in every host rounding mode
    and with any FTZ/DAZ setting, because integers >= 1 are never denormal.
    """
    x = np.asarray(x, dtype=np.uint64)
    est = ((x.astype(np.float64).view(np.uint64) >> np.uint64(52)).astype(np.int64)) - 1022
    est = np.where(x == 0, 0, est)
    too_big = (est > 0) & ((x >> np.maximum(est - 1, 0).astype(np.uint64)) == 0)
    return est - too_big


# ---------------------------------------------------------------------------
# Exact widening
# ---------------------------------------------------------------------------


def _widen(bits: np.ndarray, src: Format, dst: Format) -> np.ndarray:
    """Exactly convert *src* bit patterns to the wider format *dst* (uint64 out).

    Rules:
    - Normal values keep their value.
    - Source denormals become normal values. This requires dst to have the
      range for them, which fp16->fp32 and fp32->fp64 have.
    - inf stays inf.
    - NaN keeps its sign, and its payload is shifted left, so the quiet bit
      stays the quiet bit. No quieting is done.
    """
    assert dst.mantissa_bits >= src.mantissa_bits
    assert dst.min_normal_exponent <= src.min_normal_exponent - src.mantissa_bits
    b = _u64(bits)
    shift = dst.mantissa_bits - src.mantissa_bits
    sign = (b >> np.uint64(src.width - 1)) << np.uint64(dst.width - 1)
    exp = ((b >> np.uint64(src.mantissa_bits)) & np.uint64(src.max_exponent_field)).astype(np.int64)
    mant = b & np.uint64(src.mantissa_mask)

    # Normal: same value, re-biased exponent.
    out_exp = exp - src.bias + dst.bias
    out_mant = mant << np.uint64(shift)
    # inf / NaN: all-ones exponent, payload shifted.
    special = exp == src.max_exponent_field
    out_exp = np.where(special, dst.max_exponent_field, out_exp)
    # Denormal: mant * 2**(emin - m). Normalise so its leading 1 becomes the hidden bit.
    denormal = (exp == 0) & (mant != 0)
    lead = _bit_length_u64(mant) - 1  # position of the leading 1
    den_exp = lead + src.min_normal_exponent - src.mantissa_bits + dst.bias
    den_mant = (mant << np.maximum(dst.mantissa_bits - lead, 0).astype(np.uint64)) & np.uint64(
        dst.mantissa_mask
    )
    out_exp = np.where(denormal, den_exp, out_exp)
    out_mant = np.where(denormal, den_mant, out_mant)
    # Zero stays zero.
    zero = (exp == 0) & (mant == 0)
    out_exp = np.where(zero, 0, out_exp)
    return sign | (out_exp.astype(np.uint64) << np.uint64(dst.mantissa_bits)) | out_mant


def bf16_to_fp32(bits):
    """Exact bf16 -> fp32 widening: the bf16 pattern becomes the top half (``<< 16``).

    This is the SDM's ``make_fp32``. Denormals stay denormal (DAZ is applied
    by the arithmetic, not here). NaNs keep sign and payload and are not
    quieted.
    """

    def widen(b):
        return b.astype(np.uint32) << np.uint32(16)

    return _elementwise(BF16, widen, bits)


def fp16_to_fp32(bits):
    """Exact fp16 -> fp32 widening (the SDM's ``cvt_fp16_to_fp32``).

    fp16 denormals (2**-24 .. 2**-14) become *normal* fp32 values. NaN
    payloads are kept and shifted left 13 bits, so the quiet bit maps to the
    quiet bit. No quieting is done.
    """

    def widen(b):
        return _widen(b, FP16, FP32).astype(np.uint32)

    return _elementwise(FP16, widen, bits)


# ---------------------------------------------------------------------------
# Classification of fp32 bit patterns
# ---------------------------------------------------------------------------


def _classify(fn):
    def wrapper(bits):
        return _elementwise(FP32, fn, bits)

    wrapper.__name__ = fn.__name__.lstrip("_")
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _is_nan32(b):
    """True where the fp32 pattern is a NaN (quiet or signalling)."""
    return (b & _C_ABS) > _C_INF


def _is_inf32(b):
    """True where the fp32 pattern is +inf or -inf."""
    return (b & _C_ABS) == _C_INF


def _is_zero32(b):
    """True where the fp32 pattern is +0 or -0."""
    return (b & _C_ABS) == 0


def _is_denormal32(b):
    """True where the fp32 pattern is a (non-zero) denormal."""
    return ((b & _C_EXP) == 0) & ((b & _C_MANT) != 0)


def _quiet32(b):
    """Quiet NaNs by setting bit 22, keeping sign and payload. Non-NaNs are unchanged."""
    return np.where(_is_nan32(b), b | _C_QUIET, b)


def _daz32(b):
    """Denormals-are-zero: a denormal becomes a zero of the same sign. Others unchanged."""
    return np.where(_is_denormal32(b), b & _C_SIGN, b)


is_nan32 = _classify(_is_nan32)
is_inf32 = _classify(_is_inf32)
is_zero32 = _classify(_is_zero32)
is_denormal32 = _classify(_is_denormal32)
quiet32 = _classify(_quiet32)
daz32 = _classify(_daz32)


# ---------------------------------------------------------------------------
# Conversions for building examples and displaying values (not semantics)
# ---------------------------------------------------------------------------
#
# Real values -> bits uses IEEE round-to-nearest-even with gradual underflow
# (denormals are produced, not flushed). These are ordinary IEEE
# conversions, not any engine's lane rules.
# Bits -> real values is exact.


def _fp64_bits_to_floats(bits64: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(bits64, dtype=np.uint64).view(np.float64)


def _float_result(bits64: np.ndarray, shape, container):
    values = _fp64_bits_to_floats(bits64)
    if container == _ARRAY:
        return values.reshape(shape)
    if container == _NUMPY_SCALAR:
        return values.reshape(-1)[0]
    # Reinterpret the bits with struct, so a NaN keeps its pattern.
    return struct.unpack("<d", struct.pack("<Q", int(bits64.reshape(-1)[0])))[0]


def fp32_bits_to_float(bits):
    """Exact value of fp32 bit patterns as float (float64 array for arrays)."""
    arrays, shape, container = _prepare([bits], FP32)
    return _float_result(_widen(arrays[0], FP32, FP64), shape, container)


def bf16_bits_to_float(bits):
    """Exact value of bf16 bit patterns as float (float64 array for arrays)."""
    arrays, shape, container = _prepare([bits], BF16)
    fp32 = arrays[0].astype(np.uint32) << np.uint32(16)
    return _float_result(_widen(fp32, FP32, FP64), shape, container)


def fp16_bits_to_float(bits):
    """Exact value of fp16 bit patterns as float (float64 array for arrays)."""
    arrays, shape, container = _prepare([bits], FP16)
    return _float_result(_widen(arrays[0], FP16, FP64), shape, container)


def _round_fp64_bits(bits64: np.ndarray, dst: Format) -> np.ndarray:
    """IEEE RNE conversion of float64 patterns to *dst* patterns (uint64 out), by integer ops.

    The cases:
    - Finite values round to nearest-even.
    - Denormals are produced (gradual underflow).
    - Values past the largest finite value go to inf.
    - inf stays inf.
    - NaN keeps its sign and the top payload bits, and is quieted.
    """
    b = _u64(bits64)
    sign = (b >> np.uint64(63)).astype(np.uint64)
    exp = ((b >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    frac = b & np.uint64((1 << 52) - 1)
    # Exact finite value m * 2**e (m < 2**53).
    m = np.where(exp == 0, frac, frac | np.uint64(1 << 52))
    e = np.where(exp == 0, -1074, exp - 1075)

    # Quantum (weight of the last kept bit): normal spacing, but never finer
    # than the denormal spacing of dst.
    top = e + _bit_length_u64(m) - 1
    quantum = np.maximum(top - dst.mantissa_bits, dst.min_normal_exponent - dst.mantissa_bits)
    drop = quantum - e  # > 0 here for all finite fp64 -> fp32/fp16/bf16
    right = np.clip(drop, 0, 63).astype(np.uint64)
    q = m >> right
    rem = m & ((np.uint64(1) << right) - np.uint64(1))
    half = (np.uint64(1) << right) >> np.uint64(1)
    big_drop = drop > 63  # everything dropped; m < 2**53 < half of 2**64, rounds to 0
    round_up = (~big_drop) & (drop > 0) & ((rem > half) | ((rem == half) & ((q & np.uint64(1)) == 1)))
    q = np.where(big_drop, 0, q) + round_up.astype(np.uint64)
    # q * 2**quantum with q < 2**(p+1). In the IEEE layout the hidden bit of q
    # adds 1 to the exponent field, so "(field_of_quantum << m) + q" is right
    # for normals, for denormals (q < 2**m) and for a rounding carry (q == 2**p).
    field = (quantum - (dst.min_normal_exponent - dst.mantissa_bits)).astype(np.int64)
    encoded = (np.maximum(field, 0).astype(np.uint64) << np.uint64(dst.mantissa_bits)) + q
    overflow = encoded >= np.uint64(dst.exponent_mask)
    encoded = np.where(overflow, np.uint64(dst.exponent_mask), encoded)

    inf = np.uint64(dst.exponent_mask)
    quiet_nan = inf | (frac >> np.uint64(52 - dst.mantissa_bits)) | np.uint64(dst.quiet_bit)
    encoded = np.where(exp == 0x7FF, np.where(frac == 0, inf, quiet_nan), encoded)
    encoded = np.where((exp == 0) & (frac == 0), np.uint64(0), encoded)
    return (sign << np.uint64(dst.width - 1)) | encoded


def _fraction_to_bits(x: Fraction, dst: Format) -> int:
    """IEEE RNE of an exact rational to *dst* bits (pure Python), gradual underflow."""
    sign = 1 if x < 0 else 0
    x = abs(x)
    if x == 0:
        return sign << (dst.width - 1)
    # Find the exponent t with 2**t <= x < 2**(t+1).
    t = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** t > x:
        t -= 1
    quantum = max(t - dst.mantissa_bits, dst.min_normal_exponent - dst.mantissa_bits)
    scaled = x / Fraction(2) ** quantum
    q, rem = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * rem
    if twice > scaled.denominator or (twice == scaled.denominator and q & 1):
        q += 1
    field = quantum - (dst.min_normal_exponent - dst.mantissa_bits)
    encoded = (field << dst.mantissa_bits) + q
    if encoded >= dst.exponent_mask:
        encoded = dst.exponent_mask  # overflow -> inf
    return (sign << (dst.width - 1)) | encoded


def _float_to_bits(x, dst: Format):
    """Real value(s) -> *dst* bit patterns, RNE. Kind-preserving, no host rounding."""
    if isinstance(x, (np.ndarray, np.generic)):  # first: np.float64 is a float subclass
        arr = np.asarray(x)
        if arr.dtype == np.float64:
            bits64 = arr.view(np.uint64) if arr.ndim else arr.reshape(1).view(np.uint64)
        elif arr.dtype == np.float32:
            b32 = np.ascontiguousarray(arr).reshape(-1).view(np.uint32)
            bits64 = _widen(b32, FP32, FP64)
        elif arr.dtype == np.float16:
            b16 = np.ascontiguousarray(arr).reshape(-1).view(np.uint16)
            bits64 = _widen(b16, FP16, FP64)
        elif arr.dtype.kind in "iu":
            if np.any(np.abs(arr.astype(np.float64)) >= 2.0**53):
                raise ValueError("integers beyond 2**53 must be passed as Python ints")
            bits64 = arr.astype(np.float64).view(np.uint64)  # exact below 2**53
        else:
            raise TypeError(f"cannot convert dtype {arr.dtype}")
        out = _round_fp64_bits(np.ascontiguousarray(bits64).reshape(-1), dst).astype(dst.dtype)
        if isinstance(x, np.ndarray):
            return out.reshape(arr.shape)
        return out[0]
    if isinstance(x, (Fraction, int)) and not isinstance(x, bool):
        return _fraction_to_bits(Fraction(x), dst)
    if isinstance(x, float):
        bits64 = struct.unpack("<Q", struct.pack("<d", x))[0]
        return int(_round_fp64_bits(np.array([bits64], dtype=np.uint64), dst)[0])
    raise TypeError(f"cannot convert {type(x).__name__} to {dst.name}")


def float_to_fp32_bits(x):
    """fp32 bit patterns of real values, round-to-nearest-even (IEEE, gradual underflow).

    Accepts float, int or `fractions.Fraction` (converted exactly), and
    numpy float arrays or scalars. NaNs are quieted, keeping sign and top
    payload.
    """
    return _float_to_bits(x, FP32)


def float_to_bf16_bits(x):
    """bf16 bit patterns of real values, one RNE rounding from the exact value.

    For fp32 inputs this matches hardware RNE conversion. NaNs stay NaN: they
    are quieted, keeping sign and top payload.
    """
    return _float_to_bits(x, BF16)


def float_to_fp16_bits(x):
    """fp16 bit patterns of real values, round-to-nearest-even (IEEE, gradual underflow)."""
    return _float_to_bits(x, FP16)
