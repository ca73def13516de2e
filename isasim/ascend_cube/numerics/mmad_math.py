"""The arithmetic of one Mmad: C (m x n) = A (m x k) . B (k x n) [+ C], as the cube computes it.

int8 x int8 -> int32: the products and their sum are exact (int64), then the sum with the
accumulator wraps or saturates to int32 (option ``l0c_int32_overflow``; the Mmad page says
integer types have "only saturation mode").

Floating inputs (float16, bfloat16; on 950 float8_e4m3fn / float8_e5m2 in any mix and
hifloat8) accumulate into float32. How the hardware orders and rounds the sum is not public
(facts 9.1), so it is the option ``mmad_float_accumulation``:

- ``exact_single_rounding``: the exact sum of the exact products and the accumulator, rounded
  once to float32 (ties to even);
- ``fp32_per_k_step``: the accumulator is rounded to float32 after adding each k's product,
  k = 0, 1, ... in order (the PTO CPU model's sequential k loop);
- ``fp32_per_fractal``: the exact sum of one fractal's K0 products (16 for fp16/bf16, 32 for
  8-bit inputs) and the accumulator, rounded to float32, fractal after fractal.

Subnormals are option ``mmad_subnormals``: ``keep`` (inputs keep their value, subnormal results
are produced) or ``flush`` (subnormal inputs and results become zeros of their sign). An exact
zero sum is +0. Special values follow
IEEE (a NaN operand, inf x 0 or inf - inf give NaN); then CTRL[48] decides: ``saturate`` (CTRL[48]
= 0, the Mmad page's saturation mode) turns NaN into 0 and +-inf (from inputs or overflow) into
+-FLT_MAX, otherwise they pass through (NaN as the default 0x7FC00000).

Everything is integer arithmetic: int64 where the operands' range fits, Python ints otherwise.
"""

from __future__ import annotations

import numpy as np

from .formats import FLOAT_FORMATS, _bit_length, decode_exact, is_subnormal, round_exact
from .layouts import fractal_shape

__all__ = ["INT_INPUTS", "FLOAT_INPUTS", "accumulator_dtype", "mmad", "add_int32"]

INT_INPUTS = ("int8",)
FLOAT_INPUTS = ("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "hifloat8")
_FP32 = FLOAT_FORMATS["float32"]
_F32_NAN = 0x7FC00000
_KEEP_BITS = 62  # bits of an exact sum kept before rounding (the rest folded into a sticky bit)


def accumulator_dtype(a_dtype: str, b_dtype: str) -> str:
    """The L0C dtype an (a_dtype, b_dtype) Mmad writes: int32 or float32."""
    if a_dtype in INT_INPUTS and b_dtype in INT_INPUTS:
        return "int32"
    if a_dtype in FLOAT_INPUTS and b_dtype in FLOAT_INPUTS:
        fp8 = ("float8_e4m3fn", "float8_e5m2")
        if a_dtype == b_dtype or (a_dtype in fp8 and b_dtype in fp8):
            return "float32"
    raise ValueError(f"no Mmad takes {a_dtype} x {b_dtype}")


def mmad(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, a_dtype: str, b_dtype: str,
         options: dict, saturate: bool = True) -> np.ndarray:
    """C bits (m, n, uint32) of A (m, k) . B (k, n) [+ C]; *c* None starts from zero.

    *a*, *b* hold element bits (int8 values or their uint8 bits; float bits as uint16/uint8);
    *c* the accumulator's int32 or float32 bits. *options* are resolved options; *saturate*
    is CTRL[48] == 0 (float saturation mode).
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"Mmad shapes do not chain: A {a.shape} x B {b.shape}")
    m, n = a.shape[0], b.shape[1]
    if c is not None:
        c = np.asarray(c)
        if c.shape != (m, n):
            raise ValueError(f"accumulator shape {c.shape} is not ({m}, {n})")
    acc = accumulator_dtype(a_dtype, b_dtype)
    if acc == "int32":
        return _mmad_int8(a, b, c, options["l0c_int32_overflow"])
    flush = options["mmad_subnormals"] == "flush"
    if flush:
        a, b = _flush(a, a_dtype), _flush(b, b_dtype)
        c = _flush(c, "float32") if c is not None else None
    mode = options["mmad_float_accumulation"]
    if mode == "exact_single_rounding":
        out = _mmad_float_exact(a, b, c, a_dtype, b_dtype, saturate)
    elif mode == "fp32_per_k_step":
        out = _mmad_float_per_k(a, b, c, a_dtype, b_dtype, saturate, flush, 1)
    elif mode == "fp32_per_fractal":
        out = _mmad_float_per_k(a, b, c, a_dtype, b_dtype, saturate, flush, fractal_shape(a_dtype)[1])
    else:
        raise ValueError(f"mmad_float_accumulation={mode!r}")
    return _flush(out, "float32") if flush else out


def _flush(bits: np.ndarray, dtype: str) -> np.ndarray:
    """Subnormals of *dtype* replaced by a zero of their sign (option mmad_subnormals=flush)."""
    bits = np.asarray(bits)
    sign = bits & bits.dtype.type(1 << (bits.dtype.itemsize * 8 - 1))
    return np.where(is_subnormal(bits, dtype), sign, bits).astype(bits.dtype)


# ---------------------------------------------------------------------------
# int8 x int8 -> int32
# ---------------------------------------------------------------------------


def _as_int8(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.uint8:  # the bits themselves, read as int8 (no copy)
        return x.view(np.int8)
    return x.astype(np.int64).astype(np.uint8).view(np.int8) if x.dtype != np.int8 else x


def _as_int32(c: np.ndarray) -> np.ndarray:
    """The accumulator's int32 values from its bits (uint32 or int32: read in place; wider: the low 32 bits)."""
    if c.dtype in (np.uint32, np.int32):
        return c.view(np.int32)
    return c.astype(np.int64).astype(np.uint32).view(np.int32)


_EXACT_FLOAT64_K = 1 << 38  # k * 2**14 < 2**53: every partial sum of int8 products is an exact float64
_EXACT_FLOAT32_K = 1 << 10  # k * 2**14 <= 2**24: every partial sum is an integer float32 holds exactly


def _mmad_int8(a, b, c, overflow: str) -> np.ndarray:
    # |each product| <= 2**14, so a float64 sum of k of them is exact (no rounding anywhere) while
    # k * 2**14 < 2**53; Mmad's k is at most 4095.  float64 goes through BLAS, int64 would not; for k <= 1024
    # float32 is exact too, and twice as fast.
    # With C: |A.B| < 2**52 and |C| < 2**31, so A.B + C is exact in float64 too.
    if overflow not in ("wrap", "saturate"):
        raise ValueError(f"l0c_int32_overflow={overflow!r}")
    if a.shape[1] <= _EXACT_FLOAT32_K:
        # float32 BLAS, exact here whatever order it sums in: |A.B| <= 2**24, so int32 holds it
        product = (_as_int8(a).astype(np.float32) @ _as_int8(b).astype(np.float32)).astype(np.int32)
        if c is None:  # nothing to wrap or saturate
            return product.view(np.uint32)
        return add_int32(product, c, overflow)
    if a.shape[1] < _EXACT_FLOAT64_K:
        exact = _as_int8(a).astype(np.float64) @ _as_int8(b).astype(np.float64)
        if c is not None:
            exact += _as_int32(c)
        total = exact.astype(np.int64)
    else:
        total = _as_int8(a).astype(np.int64) @ _as_int8(b).astype(np.int64)
        if c is not None:
            total += _as_int32(c)
    if overflow == "saturate":
        np.clip(total, -(1 << 31), (1 << 31) - 1, out=total)
    return total.astype(np.uint32)  # the low 32 bits (two's complement): int32 wraps


def _may_overflow(product: np.ndarray, addend: np.ndarray) -> bool:
    """Some int32 sum of the two could leave int32 (from the extremes: a few fast reductions, no temporaries)."""
    high = int(product.max()) + int(addend.max())
    low = int(product.min()) + int(addend.min())
    return high > (1 << 31) - 1 or low < -(1 << 31)


def add_int32(product: np.ndarray, c: np.ndarray, overflow: str) -> np.ndarray:
    """The bits (uint32) of int32 ``product`` + the accumulator ``c`` (int32 bits), element by element, wrapped
    or saturated to int32 (option l0c_int32_overflow): an int8 Mmad's accumulation, in any layout."""
    if overflow not in ("wrap", "saturate"):
        raise ValueError(f"l0c_int32_overflow={overflow!r}")
    product = np.asarray(product).view(np.int32) if np.asarray(product).dtype == np.uint32 else np.asarray(product)
    addend = _as_int32(np.asarray(c))
    total = product + addend  # int32 arithmetic wraps as L0C does
    if overflow == "saturate" and total.size and _may_overflow(product, addend):
        # the sum overflowed where its sign is the opposite of both terms' (which then share one); there it is
        # the int32 limit on that side
        overflowed = ((product ^ total) & (addend ^ total)) < 0
        if overflowed.any():
            total[overflowed] = np.where(product[overflowed] > 0, np.int32((1 << 31) - 1), np.int32(-(1 << 31)))
    return total.view(np.uint32)


# ---------------------------------------------------------------------------
# Floating inputs -> float32
# ---------------------------------------------------------------------------


def _signed_ints(negative, mag, exp, base: int, use_int64: bool) -> np.ndarray:
    """The values as integers times 2**base: int64 when it fits, Python ints otherwise."""
    shift = np.where(mag == 0, 0, exp - base)
    if use_int64:
        ints = mag.astype(np.int64) << shift
        return np.where(negative, -ints, ints)
    out = np.empty(mag.shape, dtype=object)
    flat = out.reshape(-1)
    for i, (neg, mg, sh) in enumerate(zip(negative.reshape(-1), mag.reshape(-1).tolist(), shift.reshape(-1).tolist())):
        flat[i] = -(mg << sh) if neg else (mg << sh)
    return out


def _operand(bits, dtype: str):
    negative, mag, exp, nan, inf = decode_exact(bits, dtype)
    nonzero = mag != 0
    base = int(exp[nonzero].min()) if nonzero.any() else 0
    top = int((exp + _bit_length(mag))[nonzero].max()) - base if nonzero.any() else 0
    return negative, mag, exp, nan, inf, base, top


def _round_ints_to_f32(values, base: int, saturate: bool) -> np.ndarray:
    """Round exact integers times 2**base to float32 bits, once, ties to even."""
    if isinstance(values, np.ndarray) and values.dtype == np.int64:  # |v| < 2**62: no sticky needed
        negative = values < 0
        mags = np.abs(values).astype(np.uint64)
        exps = np.full(values.shape, base, dtype=np.int64)
        return round_exact(negative, mags, exps, _FP32, "ties_even", saturate).astype(np.uint32)
    flat = np.asarray(values, dtype=object).reshape(-1)
    negative = np.zeros(flat.shape, dtype=bool)
    mags = np.zeros(flat.shape, dtype=np.uint64)
    exps = np.zeros(flat.shape, dtype=np.int64)
    for i, value in enumerate(flat.tolist()):
        value = int(value)
        negative[i] = value < 0
        magnitude = -value if value < 0 else value
        extra = magnitude.bit_length() - _KEEP_BITS
        if extra > 0:  # keep 62 bits and a sticky bit: enough for one correct rounding to 24 bits
            sticky = 1 if magnitude & ((1 << extra) - 1) else 0
            magnitude = (magnitude >> extra) | sticky
            exps[i] = base + extra
        else:
            exps[i] = base
        mags[i] = magnitude
    return round_exact(negative, mags, exps, _FP32, "ties_even", saturate).astype(np.uint32)


def _specials(a_op, b_op, c_op, m: int, n: int):
    """(nan, +inf, -inf) masks of the (m, n) results from IEEE special-value rules."""
    an, am, _, anan, ainf = a_op[:5]
    bn, bm, _, bnan, binf = b_op[:5]
    if not (anan.any() or ainf.any() or bnan.any() or binf.any()):  # the usual case: only C can be special
        none = np.zeros((m, n), dtype=bool)
        if c_op is None:
            return none, none, none
        cn, _, _, cnan, cinf = c_op[:5]
        return cnan.copy(), cinf & ~cn, cinf & cn
    a_pos = ~an & ((am != 0) | ainf) & ~anan
    a_neg = an & ((am != 0) | ainf) & ~anan
    b_pos = ~bn & ((bm != 0) | binf) & ~bnan
    b_neg = bn & ((bm != 0) | binf) & ~bnan
    a_zero = (am == 0) & ~ainf & ~anan
    b_zero = (bm == 0) & ~binf & ~bnan

    def any_of(x, y):
        return (x.astype(np.int64) @ y.astype(np.int64)) > 0

    ones_a = np.ones(anan.shape, dtype=bool)
    ones_b = np.ones(bnan.shape, dtype=bool)
    nan = any_of(anan, ones_b) | any_of(ones_a, bnan) | any_of(ainf, b_zero) | any_of(a_zero, binf)
    pinf = any_of(ainf & ~an, b_pos) | any_of(ainf & an, b_neg) | any_of(a_pos, binf & ~bn) | any_of(a_neg, binf & bn)
    ninf = any_of(ainf & ~an, b_neg) | any_of(ainf & an, b_pos) | any_of(a_pos, binf & bn) | any_of(a_neg, binf & ~bn)
    if c_op is not None:
        cn, _, _, cnan, cinf = c_op[:5]
        nan |= cnan
        pinf |= cinf & ~cn
        ninf |= cinf & cn
    nan |= pinf & ninf
    return nan, pinf & ~nan, ninf & ~nan


def _apply_specials(out: np.ndarray, specials, saturate: bool) -> np.ndarray:
    nan, pinf, ninf = specials
    if saturate:
        out = np.where(nan, np.uint32(0), out)
        out = np.where(pinf, np.uint32(_FP32.max_code), out)
        out = np.where(ninf, np.uint32(_FP32.max_code | 0x80000000), out)
    else:
        out = np.where(nan, np.uint32(_F32_NAN), out)
        out = np.where(pinf, np.uint32(0x7F800000), out)
        out = np.where(ninf, np.uint32(0xFF800000), out)
    return out.astype(np.uint32)


def _zero_specials(op):
    negative, mag, exp, nan, inf, base, top = op
    special = nan | inf
    return negative & ~special, np.where(special, np.uint64(0), mag), exp, nan, inf, base, top


_LIMB_BITS = 25  # k <= 4095 products of two 25-bit limbs sum below 2**62: exact in int64
_MAX_LIMB_PAIRS = 36  # beyond this many int64 matmuls, Python-int matmul is quicker


def _limbs(negative, mag, exp, base: int, count: int) -> list[np.ndarray]:
    """The values as integers times 2**base, cut into *count* signed 25-bit limbs (int64):
    value = sum(limb[j] * 2**(25 j)). The magnitudes are small (<= 24 bits), so each limb is one
    shift of the magnitude, never a wide intermediate."""
    shift = np.where(mag == 0, 0, exp - base).astype(np.int64)
    mask = np.uint64((1 << _LIMB_BITS) - 1)
    sign = np.where(negative, -1, 1).astype(np.int64)
    limbs = []
    for j in range(count):
        s = shift - _LIMB_BITS * j
        left = (mag << np.clip(s, 0, _LIMB_BITS).astype(np.uint64)) & mask
        right = np.where(-s > 63, np.uint64(0), mag >> np.clip(-s, 0, 63).astype(np.uint64)) & mask
        limb = np.where(s >= _LIMB_BITS, np.uint64(0), np.where(s >= 0, left, right))
        limbs.append(limb.astype(np.int64) * sign)
    return limbs


def _exact_products(a_op, b_op, k: int):
    """A . B exactly, as (integers, base): int64 when the operands' range allows, else Python ints."""
    base = a_op[5] + b_op[5]
    if a_op[6] + b_op[6] + max(k, 1).bit_length() + 1 <= 62:
        a_int = _signed_ints(*a_op[:3], a_op[5], True)
        b_int = _signed_ints(*b_op[:3], b_op[5], True)
        return a_int @ b_int, base
    a_count = -(-a_op[6] // _LIMB_BITS)
    b_count = -(-b_op[6] // _LIMB_BITS)
    if a_count * b_count > _MAX_LIMB_PAIRS:
        a_int = _signed_ints(*a_op[:3], a_op[5], False)
        b_int = _signed_ints(*b_op[:3], b_op[5], False)
        return a_int @ b_int, base
    a_limbs = _limbs(*a_op[:3], a_op[5], a_count)
    b_limbs = _limbs(*b_op[:3], b_op[5], b_count)
    total = None
    for i, a_limb in enumerate(a_limbs):
        for j, b_limb in enumerate(b_limbs):
            part = (a_limb @ b_limb).astype(object) * (1 << (_LIMB_BITS * (i + j)))
            total = part if total is None else total + part
    return total, base


def _add_accumulator(products, base: int, c_op):
    """products * 2**base + C exactly: in int64 when both fit at the common scale, else Python ints."""
    if not (c_op[1] != 0).any():  # an all-zero accumulator adds nothing
        return products, base
    common = min(base, c_op[5])
    if products.dtype == np.int64:
        product_bits = int(_bit_length(np.abs(products).astype(np.uint64)).max(initial=0))
        c_bits = c_op[6] + c_op[5] - common
        if max(product_bits + base - common, c_bits) + 2 <= 62:
            return (products << (base - common)) + _signed_ints(*c_op[:3], common, True), common
    products = products.astype(object) * (1 << (base - common))
    return products + _signed_ints(*c_op[:3], common, False), common


def _mmad_float_exact(a, b, c, a_dtype, b_dtype, saturate) -> np.ndarray:
    m, k = a.shape
    n = b.shape[1]
    a_op = _zero_specials(_operand(a, a_dtype))
    b_op = _zero_specials(_operand(b, b_dtype))
    c_op = _zero_specials(_operand(c, "float32")) if c is not None else None
    products, base = _exact_products(a_op, b_op, k)  # exact: integers times 2**base
    if c_op is not None:
        products, base = _add_accumulator(products, base, c_op)
    out = _round_ints_to_f32(products, base, saturate).reshape(m, n)
    specials = _specials(a_op, b_op, c_op, m, n)
    return _apply_specials(out, specials, saturate)


def _mmad_float_per_k(a, b, c, a_dtype, b_dtype, saturate, flush: bool, step: int) -> np.ndarray:
    """L0C rounded to float32 after each *step* k values (1: each k; K0: each fractal)."""
    m, k = a.shape
    n = b.shape[1]
    if c is None:
        acc = np.zeros((m, n), dtype=np.uint32)
    else:
        acc = np.asarray(c).astype(np.uint32)
    for first in range(0, k, step):
        last = first + step
        acc = _mmad_float_exact(a[:, first:last], b[first:last, :], acc, a_dtype, b_dtype, saturate)
        if flush:
            acc = _flush(acc, "float32")
    return acc
