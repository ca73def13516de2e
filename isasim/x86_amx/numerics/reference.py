"""The AMX TMUL lane rules of :mod:`.tmul`, as a scalar reference in pure Python integers, written like the
SDM pseudocode: ``tmul_fma32_reference(acc, a, b)`` and ``tmul_add32_reference(x, y)``, one fp32 bit pattern
each.  The tests hold the vectorised model equal to it, and ``isasim explain`` follows one element through it
(pass a list as ``notes`` for a step-by-step account).
"""

from __future__ import annotations

from ...core.numerics import _ABS32, _EXP32, _INF32, _MANT32, _QUIET32, _SIGN32
from .tmul import DEFAULT_NAN32

__all__ = ["tmul_fma32_reference", "tmul_add32_reference"]


# ---------------------------------------------------------------------------
# Scalar reference (pure Python integers, written like the SDM pseudocode)
# ---------------------------------------------------------------------------
#
# Pass a list as *notes* to collect a step-by-step account of one element,
# as `isasim explain` shows it.


def _ref_is_nan(x: int) -> bool:
    return (x & _ABS32) > _INF32


def _ref_is_inf(x: int) -> bool:
    return (x & _ABS32) == _INF32


def _ref_is_zero(x: int) -> bool:
    return (x & _ABS32) == 0


def _ref_sign(x: int) -> int:
    return x >> 31


def _ref_quiet(x: int) -> int:
    return x | _QUIET32


def _note(notes: list | None, text: str) -> None:
    if notes is not None:
        notes.append(text)


def _ref_bits(x) -> int:
    x = int(x)
    if not 0 <= x <= 0xFFFFFFFF:
        raise ValueError(f"{x:#x} is not an fp32 bit pattern")
    return x


def _ref_daz(name: str, x: int, notes) -> int:
    """Denormal -> zero of the same sign."""
    x = _ref_bits(x)
    if (x & _EXP32) == 0 and (x & _MANT32) != 0:
        _note(notes, f"DAZ: {name} = {x:#010x} is denormal, read as {'-' if x >> 31 else '+'}0")
        return x & _SIGN32
    return x


def _ref_value(x: int) -> tuple[int, int, int]:
    """A finite, DAZ'd fp32 as (sign, significand, exponent): (-1)**s * m * 2**e."""
    exp_field = (x >> 23) & 0xFF
    if exp_field == 0:
        return _ref_sign(x), 0, 0
    return _ref_sign(x), (x & _MANT32) | (1 << 23), exp_field - 150


def _ref_text(n: int, e: int) -> str:
    """'n * 2**e' with n odd (or 0), for notes."""
    while n and n % 2 == 0:
        n, e = n // 2, e + 1
    return f"{n} * 2**{e}" if n else "0"


def _ref_exact_sum(p: tuple[int, int, int], c: tuple[int, int, int]) -> tuple[int, int]:
    """Exact sum of two (sign, m, e) values, as (signed integer n, exponent e)."""
    (sp, mp, ep), (sc, mc, ec) = p, c
    e = min(ep, ec)
    n = (-1) ** sp * (mp << (ep - e)) + (-1) ** sc * (mc << (ec - e))
    return n, e


def _ref_round_ftz(n: int, e: int, zero_sign: int, notes=None) -> int:
    """fp32 bits for the exact value n * 2**e: RNE to 24 bits, FTZ after rounding, overflow to inf.

    *zero_sign* is the sign to give an exact zero. A tiny result keeps the
    sign of n.
    """
    _note(notes, f"exact sum = {_ref_text(n, e)}")
    if n == 0:
        result = zero_sign << 31
        _note(notes, f"exact zero: +0 unless both addends are -0 -> {result:#010x}")
        return result
    sign, m = (1, -n) if n < 0 else (0, n)
    drop = m.bit_length() - 24
    if drop > 0:
        q, rem = m >> drop, m & ((1 << drop) - 1)
        half = 1 << (drop - 1)
        up = rem > half or (rem == half and q & 1)
        how = ("tie, " if rem == half else "") + ("rounded up" if up else "rounded down")
        if rem == 0:
            how = "exact"
        q += up
        if q == 1 << 24:
            q, drop = q >> 1, drop + 1
    else:
        q, how = m << -drop, "exact"
    top_exponent = e + drop + 23  # rounded value = q * 2**(top_exponent - 23)
    _note(notes, f"RNE to 24 bits ({how}): {'-' if sign else ''}{_ref_text(q, top_exponent - 23)}")
    biased = top_exponent + 127
    if biased >= 255:
        _note(notes, "overflow: magnitude >= 2**128 -> inf")
        return (sign << 31) | _INF32
    if biased <= 0:
        _note(notes, "tiny after rounding (< 2**-126): FTZ -> zero with the sign of the exact sum")
        return sign << 31
    return (sign << 31) | (biased << 23) | (q & _MANT32)


def tmul_fma32_reference(acc: int, a: int, b: int, notes: list | None = None) -> int:
    """Scalar reference for `tmul_fma32`: fp32 bits of acc + a*b (Python ints)."""
    acc, a, b = _ref_daz("acc", acc, notes), _ref_daz("a", a, notes), _ref_daz("b", b, notes)
    # NaN operands: src1 (a) beats src2 (b) beats the accumulator.
    for name, x in (("a", a), ("b", b), ("acc", acc)):
        if _ref_is_nan(x):
            _note(notes, f"{name} is NaN: result is {name} quieted")
            return _ref_quiet(x)
    product_sign = _ref_sign(a) ^ _ref_sign(b)
    # Invalid: inf * 0, and inf - inf.
    if (_ref_is_inf(a) and _ref_is_zero(b)) or (_ref_is_zero(a) and _ref_is_inf(b)):
        _note(notes, "inf * 0 is invalid: default NaN")
        return DEFAULT_NAN32
    if _ref_is_inf(a) or _ref_is_inf(b):
        if _ref_is_inf(acc) and _ref_sign(acc) != product_sign:
            _note(notes, "inf - inf is invalid: default NaN")
            return DEFAULT_NAN32
        return (product_sign << 31) | _INF32
    if _ref_is_inf(acc):
        return acc
    # Finite: exact product, exact sum, one rounding.
    _, ma, ea = _ref_value(a)
    _, mb, eb = _ref_value(b)
    product = (product_sign, ma * mb, ea + eb)
    _note(notes, f"exact product a*b = {'-' if product_sign else ''}{_ref_text(ma * mb, ea + eb)}")
    n, e = _ref_exact_sum(product, _ref_value(acc))
    both_negative_zero = product_sign & _ref_sign(acc)
    return _ref_round_ftz(n, e, both_negative_zero, notes)


def tmul_add32_reference(x: int, y: int, notes: list | None = None) -> int:
    """Scalar reference for `tmul_add32`: fp32 bits of x + y (Python ints)."""
    x, y = _ref_daz("x", x, notes), _ref_daz("y", y, notes)
    for name, v in (("x", x), ("y", y)):
        if _ref_is_nan(v):
            _note(notes, f"{name} is NaN: result is {name} quieted")
            return _ref_quiet(v)
    if _ref_is_inf(x) and _ref_is_inf(y) and _ref_sign(x) != _ref_sign(y):
        _note(notes, "inf - inf is invalid: default NaN")
        return DEFAULT_NAN32
    if _ref_is_inf(x):
        return x
    if _ref_is_inf(y):
        return y
    n, e = _ref_exact_sum(_ref_value(x), _ref_value(y))
    return _ref_round_ftz(n, e, _ref_sign(x) & _ref_sign(y), notes)
