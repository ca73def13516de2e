"""Atomic-add arithmetic against numpy / ml_dtypes IEEE addition (sums of two values are exact in
float64 for float16 and bfloat16 at these ranges, then cast once), and both overflow options."""

import ml_dtypes
import numpy as np
import pytest

from isasim.ascend_cube.numerics.atomic_math import atomic_add
from isasim.ascend_cube.options import resolve_options

DEFAULT = resolve_options("910B", {})


def _same(ours, theirs, value_type):
    a = ours.view(value_type).astype(np.float64)
    b = theirs.view(value_type).astype(np.float64)
    return (ours == theirs) | (np.isnan(a) & np.isnan(b))


def _bits(rng, size, value_type, bits_type, spread):
    values = rng.standard_normal(size) * np.exp2(rng.integers(-spread, spread, size))
    with np.errstate(over="ignore"):  # some draws overflow to inf: those are inputs too
        picked = values.astype(value_type).view(bits_type)
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0], dtype=np.float64).astype(value_type)
    return np.concatenate([picked, np.repeat(specials.view(bits_type), 7)])


@pytest.mark.parametrize("dtype,value_type,bits_type,spread", [
    ("float32", np.float32, np.uint32, 40), ("float32", np.float32, np.uint32, 140),
    ("float16", np.float16, np.uint16, 16), ("bfloat16", ml_dtypes.bfloat16, np.uint16, 40)])
def test_float_atomic_add_is_ieee_addition(dtype, value_type, bits_type, spread):
    rng = np.random.default_rng(8)
    old = _bits(rng, 50_000, value_type, bits_type, spread)
    new = _bits(rng, 50_000, value_type, bits_type, spread)
    rng.shuffle(new)
    with np.errstate(all="ignore"):
        if dtype == "float32":  # numpy float32 addition: IEEE, one rounding
            theirs = (old.view(np.float32) + new.view(np.float32)).view(np.uint32)
        else:  # the float64 sum is exact here; one cast
            exact = old.view(value_type).astype(np.float64) + new.view(value_type).astype(np.float64)
            theirs = exact.astype(value_type).view(bits_type)
    ours = atomic_add(old, new, dtype, DEFAULT)
    wrong = ~_same(ours, theirs, value_type)
    print(f"{dtype}: {int(wrong.sum())} mismatches on {old.size}")
    assert not wrong.any(), [(hex(a), hex(b), hex(c), hex(d)) for a, b, c, d in
                             zip(old[wrong][:4], new[wrong][:4], ours[wrong][:4], theirs[wrong][:4])]


def test_signed_zeros_and_cancellation():
    f32 = lambda *v: np.array(v, dtype=np.float32).view(np.uint32)  # noqa: E731
    ours = atomic_add(f32(-0.0, 1.5, -0.0, 0.0), f32(-0.0, -1.5, 0.0, -0.0), "float32", DEFAULT)
    assert ours.tolist() == [0x80000000, 0, 0, 0]


@pytest.mark.parametrize("setting", ["inf_nan", "saturate"])
def test_gm_atomic_float_overflow(setting):
    options = resolve_options("950", {"gm_atomic_float_overflow": setting})
    big = np.array([60000.0, np.nan], dtype=np.float16).view(np.uint16)
    out = atomic_add(big, big, "float16", options)
    assert out.tolist() == ([0x7BFF, 0] if setting == "saturate" else [0x7C00, out[1]])
    if setting == "inf_nan":
        assert np.isnan(out[1:].view(np.float16)).all()


@pytest.mark.parametrize("setting", ["wrap", "saturate"])
@pytest.mark.parametrize("dtype,width", [("int32", 32), ("int16", 16), ("int8", 8)])
def test_gm_atomic_int_overflow(setting, dtype, width):
    rng = np.random.default_rng(width)
    signed = {8: np.int8, 16: np.int16, 32: np.int32}[width]
    unsigned = {8: np.uint8, 16: np.uint16, 32: np.uint32}[width]
    info = np.iinfo(signed)
    old = rng.integers(info.min, info.max, 2000, endpoint=True).astype(signed)
    new = rng.integers(info.min, info.max, 2000, endpoint=True).astype(signed)
    exact = old.astype(np.int64) + new.astype(np.int64)
    options = resolve_options("910B", {"gm_atomic_int_overflow": setting})
    ours = atomic_add(old.view(unsigned), new.view(unsigned), dtype, options).view(signed)
    want = exact.astype(signed) if setting == "wrap" else np.clip(exact, info.min, info.max).astype(signed)
    assert np.array_equal(ours, want)
    assert (exact != exact.astype(signed)).any()  # some sums do overflow: the settings differ here
