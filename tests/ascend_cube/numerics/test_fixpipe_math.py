"""Every Fixpipe quant mode of 910B and 950, and every option setting, against references built
from numpy / ml_dtypes / en_dtypes in the documented order (facts/ascend.md 3.1):

    [910B MCB: x >> N, int16] -> float32 -> x * M1 (M2 = 0 for negative x with ReLU) -> float32
    -> int8: np.round (ties to even) to [-256, 255], + offset, saturate to int8/uint8
    -> half/bf16/fp8/HiF8/float32: the library's RNE / half-away cast, saturated (inf -> max, NaN -> 0)

The reference decodes the word itself (M1 as float32 bits & 0xFFFFE000, offset as a 9-bit two's
complement), so nothing of the module under test is used to build the expectation.

test_element_steps_end_in_the_bits_quantize_writes is marked ``consistency``: element_steps (what the stepper
shows of one element) against quantize; quantize's evidence is the reference tests here and the goldens
(test_fixpipe_math_goldens.py).
"""

import zlib

import ml_dtypes
import numpy as np
import pytest

from isasim.ascend_cube.numerics.fixpipe_math import (QUANT_MODES, UnsupportedModeError, element_steps,
                                                      modes_for_chip, quantize)
from isasim.ascend_cube.numerics.quant_word import FixpipeParamError, pack_scale
from isasim.ascend_cube.options import resolve_options

en_dtypes = pytest.importorskip("en_dtypes", reason="en-dtypes (the HiFloat8 oracle) is not installed")

# facts/ascend.md section 1: the modes of each chip (V = the per-channel form)
MODES_910B = {"NoQuant", "F322F16", "F322BF16", "DEQF16", "VDEQF16", "QF322B8_PRE", "VQF322B8_PRE", "REQ8", "VREQ8"}
MODES_950 = MODES_910B | {p + m for m in ("QF322FP8_PRE", "QF322HIF8_PRE", "QF322HIF8_PRE_HYBRID", "QS322BF16_PRE",
                                          "QF322F16_PRE", "QF322BF16_PRE", "QF322F32_PRE") for p in ("", "V")}
CASTS = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
         "hifloat8": en_dtypes.hifloat8, "float32": np.float32}
BITS = {"float16": np.uint16, "bfloat16": np.uint16, "float8_e4m3fn": np.uint8, "hifloat8": np.uint8,
        "float32": np.uint32, "int8": np.uint8, "uint8": np.uint8}


def test_every_documented_mode_is_there_for_its_chips():
    assert set(modes_for_chip("910B")) == MODES_910B
    assert set(modes_for_chip("950")) == MODES_950
    assert set(QUANT_MODES) == MODES_950
    assert QUANT_MODES["VREQ8"].form == "vector" and QUANT_MODES["REQ8"].form == "scalar"


def _word_fields(word):
    m1 = float(np.array(word & 0xFFFFE000, dtype=np.uint64).astype(np.uint32).view(np.float32))
    raw = (word >> 37) & 0x1FF
    return m1, raw - 512 if raw >= 256 else raw, bool(word >> 46 & 1)


def _reference(l0c_bits, l0c_dtype, mode, words, relu, chip, out_dtype):
    """The documented order with numpy / ml_dtypes / en_dtypes doing each rounding."""
    spec = QUANT_MODES[mode]
    if l0c_dtype == "int32":
        x = l0c_bits.view(np.int32).astype(np.int64)
        mcb_words = np.broadcast_to(np.asarray(words, dtype=np.uint64), x.shape[1:])
        if chip == "910B" and mode.lstrip("V") in ("DEQF16", "REQ8"):
            mcb = ((mcb_words >> np.uint64(36)) & np.uint64(1)).astype(bool)
            shift = ((mcb_words >> np.uint64(32)) & np.uint64(0xF)).astype(np.int64) + 1
            x = np.where(mcb, np.clip(x >> shift, -32768, 32767), x)
        x = x.astype(np.float32)  # numpy int -> float32: ties to even
    else:
        x = l0c_bits.view(np.float32)
    if not spec.scaled:
        y = np.where(x < 0, np.float32(0), x) if relu else x
    else:
        fields = [_word_fields(int(w)) for w in np.broadcast_to(np.asarray(words, dtype=np.uint64), x.shape[1:])]
        m1 = np.array([f[0] for f in fields], dtype=np.float32)
        m2 = np.zeros_like(m1) if relu else m1
        with np.errstate(all="ignore"):
            y = np.where(x >= 0, x * m1, x * m2).astype(np.float32)  # a float32 product (numpy 2)
        if relu:
            y = np.where(x < 0, np.float32(0), y)
    if out_dtype in ("int8", "uint8"):
        offset = np.array([f[1] for f in fields])
        signed = np.array([f[2] for f in fields])
        s9 = np.clip(np.round(np.nan_to_num(y.astype(np.float64), nan=0.0)), -256, 255)
        if mode.lstrip("V") in ("REQ8", "QF322B8_PRE"):
            s9 = s9 + offset
        out = np.where(signed, np.clip(s9, -128, 127), np.clip(s9, 0, 255)).astype(np.int64)
        return (out & 0xFF).astype(np.uint8)
    if mode == "NoQuant":
        return y.view(np.uint32)
    with np.errstate(all="ignore"):
        cast = y.astype(CASTS[out_dtype])
    values = cast.astype(np.float64)
    bits = cast.view(BITS[out_dtype]).copy()
    largest = float(ml_dtypes.finfo(CASTS[out_dtype]).max) if out_dtype != "hifloat8" else 32768.0
    top = np.array(largest, dtype=np.float64).astype(CASTS[out_dtype]).view(BITS[out_dtype])
    sign = BITS[out_dtype](1 << (8 * np.dtype(BITS[out_dtype]).itemsize - 1))
    over = np.isinf(values) | (np.isnan(values) & ~np.isnan(y))
    bits = np.where(over, np.where(np.signbit(y), top | sign, top), bits)
    bits = np.where(np.isnan(y), 0, bits)
    return bits.astype(BITS[out_dtype])


def _data(rng, l0c_dtype, shape):
    if l0c_dtype == "int32":
        values = (rng.integers(-(1 << 20), 1 << 20, shape) >> rng.integers(0, 20, shape)).astype(np.int32)
        return values.view(np.uint32)
    values = (rng.standard_normal(shape) * np.exp2(rng.integers(-12, 12, shape))).astype(np.float32)
    return values.view(np.uint32)


def _words(rng, n, chip, mode):
    scales = np.exp2(rng.integers(-14, 2, n)) * rng.uniform(1, 2, n) * rng.choice([1, 1, -1], n)
    offsets = rng.integers(-40, 40, n)
    words = [pack_scale(float(s), float(o)) for s, o in zip(scales, offsets)]
    words = [w & ~(1 << 46) if i % 3 == 2 else w for i, w in enumerate(words)]  # some uint8 columns
    if chip == "910B":  # MCB on some columns, with a random N
        words = [w | (1 << 36) | (int(rng.integers(0, 16)) << 32) if i % 4 == 1 else w for i, w in enumerate(words)]
    return np.array(words, dtype=np.uint64)


@pytest.mark.parametrize("relu", [False, True], ids=["plain", "relu"])
@pytest.mark.parametrize("chip,mode", [(c, m) for c, modes in (("910B", MODES_910B), ("950", MODES_950))
                                       for m in sorted(modes)])
def test_every_mode_matches_the_reference(chip, mode, relu):
    spec = QUANT_MODES[mode]
    options = resolve_options(chip, {})
    rng = np.random.default_rng(zlib.crc32(f"{chip} {mode} {relu}".encode()))  # the same data every run
    for l0c_dtype in spec.l0c_dtypes:
        values = _data(rng, l0c_dtype, (24, 16))
        words = _words(rng, 16, chip, mode)
        word_arg = words if spec.form == "vector" else int(words[0])
        per_column = words if spec.form == "vector" else np.full(16, words[0], dtype=np.uint64)
        if spec.form == "none":
            word_arg, per_column = 0, None
        out, out_dtype = quantize(values, l0c_dtype, mode, word_arg, relu, chip, options)
        if out_dtype in ("int8", "uint8"):
            assert out_dtype == ("int8" if int(per_column[0]) >> 46 & 1 else "uint8")
        else:
            assert out_dtype == (l0c_dtype if mode == "NoQuant" else spec.outputs[0])
        if mode == "NoQuant" and l0c_dtype == "int32":
            ints = values.view(np.int32)
            want = (np.maximum(ints, 0) if relu else ints).view(np.uint32)
        elif mode.endswith("HYBRID"):
            continue  # no public oracle: the hand-worked examples below and in the formats tests
        else:
            want = _reference(values, l0c_dtype, mode, per_column, relu, chip, out_dtype)
        wrong = out != want
        print(f"{chip} {mode}{' relu' if relu else ''} {l0c_dtype}: {int(wrong.sum())} mismatches on {out.size}")
        assert not wrong.any(), list(zip(values[wrong][:4], out[wrong][:4], want[wrong][:4]))


def test_hybrid_mode_equals_half_away_for_small_exponents_and_differs_by_cast_md():
    options = resolve_options("950", {})
    one = pack_scale(1.0)
    small = np.array([[1.0625, -3.3, 0.4, 7.9]], dtype=np.float32).view(np.uint32)
    hybrid, _ = quantize(small, "float32", "QF322HIF8_PRE_HYBRID", one, False, "950", options)
    away, _ = quantize(small, "float32", "QF322HIF8_PRE", one, False, "950", options)
    assert np.array_equal(hybrid, away)
    # worked by hand from Cast.md: 16 * (1 + 2**-9) rounds up to 20 under hybrid, stays 16 half-away
    odd = np.array([[0x41804000, 0x41903FFF]], dtype=np.uint32)
    hybrid, _ = quantize(odd, "float32", "VQF322HIF8_PRE_HYBRID", np.array([one, one], dtype=np.uint64), False,
                         "950", options)
    assert hybrid.view(en_dtypes.hifloat8).astype(np.float64).tolist() == [[20.0, 16.0]]


def test_relu_is_folded_into_the_multiply_before_the_offset():
    options = resolve_options("910B", {})
    word = pack_scale(0.5, 5.0)
    values = np.array([[-100, 100]], dtype=np.int32).view(np.uint32)
    out, dtype = quantize(values, "int32", "REQ8", word, True, "910B", options)
    assert dtype == "int8" and out.tolist() == [[5, 55]]  # -100 * M2 (0) + 5, 100 * 0.5 + 5
    out, _ = quantize(values, "int32", "REQ8", word, False, "910B", options)
    assert out.view(np.int8).tolist() == [[-45, 55]]


def test_deqf16_ignores_the_offset_and_qf322b8_ignores_mcb():
    options = resolve_options("910B", {})
    word = pack_scale(0.25, 100.0) | (1 << 36) | (3 << 32)
    ints = np.array([[1000]], dtype=np.int32).view(np.uint32)
    out, _ = quantize(ints, "int32", "DEQF16", word, False, "910B", options)
    assert out.view(np.float16)[0, 0] == 15.5  # (1000 >> 4) * 0.25, no + 100
    floats = np.array([[64.0]], dtype=np.float32).view(np.uint32)
    out, _ = quantize(floats, "float32", "QF322B8_PRE", word, False, "910B", options)
    assert out.view(np.int8)[0, 0] == 116  # 64 * 0.25 + 100, not (64 >> 4) * 0.25 + 100


def test_vector_modes_take_one_word_per_column():
    options = resolve_options("950", {})
    words = np.array([pack_scale(1.0), pack_scale(2.0), pack_scale(-0.5)], dtype=np.uint64)
    values = np.array([[3.0, 3.0, 3.0]], dtype=np.float32).view(np.uint32)
    out, dtype = quantize(values, "float32", "VQF322F16_PRE", words, False, "950", options)
    assert dtype == "float16" and out.view(np.float16).tolist() == [[3.0, 6.0, -1.5]]
    with pytest.raises(ValueError, match="one word per column"):
        quantize(values, "float32", "VQF322F16_PRE", words[:2], False, "950", options)


@pytest.mark.parametrize("chip,mode,l0c,message", [
    ("910B", "QS322BF16_PRE", "int32", "not on 910B"),
    ("910B", "QF322FP8_PRE", "float32", "not on 910B"),
    ("950", "REQ8", "float32", "takes an L0C of int32"),
    ("950", "DEQF32", "int32", "unknown quant mode"),
])
def test_modes_the_chip_lacks_are_refused(chip, mode, l0c, message):
    with pytest.raises(UnsupportedModeError, match=message):
        quantize(np.zeros((1, 1), np.uint32), l0c, mode, pack_scale(1.0), False, chip, resolve_options(chip, {}))


def test_a_forbidden_quant_parameter_faults():
    with pytest.raises(FixpipeParamError, match="denormal"):
        quantize(np.zeros((1, 1), np.uint32), "int32", "REQ8", 0x00400000, False, "910B", resolve_options("910B", {}))


# --- every option that the Fixpipe reads, at every setting, where the settings differ ---

def _one(chip, mode, l0c_dtype, value, word, options, relu=False):
    dtype = np.int32 if l0c_dtype == "int32" else np.float32
    bits = np.array([[value]], dtype=dtype).view(np.uint32)
    out, out_dtype = quantize(bits, l0c_dtype, mode, word, relu, chip, resolve_options(chip, options))
    return int(out[0, 0]), out_dtype


@pytest.mark.parametrize("setting,want", [("ties_even", 2), ("ties_away", 3)])
def test_int8_rounding(setting, want):
    assert _one("910B", "REQ8", "int32", 5, pack_scale(0.5), {"int8_rounding": setting})[0] == want


@pytest.mark.parametrize("setting,want", [("floor", -3), ("toward_zero", -2)])
def test_mcb_shift(setting, want):
    word = pack_scale(1.0) | (1 << 36) | (0 << 32)  # shift by 1
    out = _one("910B", "REQ8", "int32", -5, word, {"mcb_shift": setting})[0]
    assert out - 256 == want


@pytest.mark.parametrize("setting,want", [("plus_one", 25), ("raw", 50)])
def test_mcb_n_code(setting, want):
    word = pack_scale(1.0) | (1 << 36) | (1 << 32)
    assert _one("910B", "REQ8", "int32", 100, word, {"mcb_n_code": setting})[0] == want


@pytest.mark.parametrize("setting,want", [("int16", 32767.0), ("none", 65536.0)])
def test_mcb_int16_saturation(setting, want):
    word = pack_scale(1.0) | (1 << 36) | (0 << 32)
    out, _ = _one("910B", "DEQF16", "int32", 1 << 17, word, {"mcb_int16_saturation": setting,
                                                             "fixpipe_float_overflow": "inf_nan"})
    # 2**16 is past fp16 (DEQF16 always saturates: 65504); 32767 rounds to 32768 in fp16
    assert float(np.array(out, np.uint16).view(np.float16)) == (32768.0 if setting == "int16" else 65504.0)


@pytest.mark.parametrize("setting,want", [("saturate", 0x7BFF), ("inf_nan", 0x7C00)])
def test_fixpipe_float_overflow(setting, want):
    assert _one("950", "QF322F16_PRE", "float32", 70000.0, pack_scale(1.0),
                {"fixpipe_float_overflow": setting})[0] == want
    assert _one("950", "F322F16", "float32", 70000.0, 0, {"fixpipe_float_overflow": setting})[0] == want
    # the modes the docs say do not support INF_NAN saturate at either setting
    assert _one("950", "F322BF16", "float32", np.inf, 0, {"fixpipe_float_overflow": setting})[0] == 0x7F7F
    assert _one("910B", "F322F16", "float32", 70000.0, 0, {"fixpipe_float_overflow": setting})[0] == 0x7BFF
    nan = _one("950", "QF322FP8_PRE", "float32", np.nan, pack_scale(1.0), {"fixpipe_float_overflow": setting})[0]
    assert nan == (0 if setting == "saturate" else 0x7F)


@pytest.mark.parametrize("setting,want", [("fp32_rounded", 0x4B80), ("exact", 0x4B81)])
def test_fixpipe_multiply(setting, want):
    # 2**24 + 2**16 + 1: float32 first rounds it to the bfloat16 tie 2**24 + 2**16 (then even: 2**24);
    # the exact value is above the tie and rounds up to 2**24 + 2**17
    assert _one("950", "QS322BF16_PRE", "int32", 2**24 + 2**16 + 1, pack_scale(1.0),
                {"fixpipe_multiply": setting})[0] == want


@pytest.mark.parametrize("setting,want", [("ties_even", 1.0), ("ties_away", 1.125)])
def test_fixpipe_fp8_rounding(setting, want):
    out = _one("950", "QF322FP8_PRE", "float32", 1.0625, pack_scale(1.0), {"fixpipe_fp8_rounding": setting})[0]
    assert float(np.array(out, np.uint8).view(ml_dtypes.float8_e4m3fn)) == want


@pytest.mark.parametrize("setting", ["reject", "allow"])
def test_fp8_e5m2_output(setting):
    values = np.array([[1.3, -700.0]], dtype=np.float32)
    options = resolve_options("950", {"fp8_e5m2_output": setting})
    if setting == "reject":
        with pytest.raises(UnsupportedModeError, match="float8_e4m3fn only"):
            quantize(values.view(np.uint32), "float32", "QF322FP8_PRE", pack_scale(1.0), False, "950", options,
                     output="float8_e5m2")
    else:
        out, dtype = quantize(values.view(np.uint32), "float32", "QF322FP8_PRE", pack_scale(1.0), False, "950",
                              options, output="float8_e5m2")
        assert dtype == "float8_e5m2"
        assert np.array_equal(out, values.astype(ml_dtypes.float8_e5m2).view(np.uint8))


@pytest.mark.parametrize("setting,want", [("positive_zero", 0x0000), ("product_sign", 0x8000)])
def test_relu_zero_sign(setting, want):
    given = {"relu_zero_sign": setting}
    assert _one("950", "QF322F16_PRE", "float32", -3.0, pack_scale(1.0), given, relu=True)[0] == want
    assert _one("950", "F322F16", "float32", -3.0, 0, {"relu_zero_sign": setting}, relu=True)[0] == want
    # -inf through the scale with ReLU: +0, or the product -inf * (+0) = NaN (kept under inf_nan)
    given = {"relu_zero_sign": setting, "fixpipe_float_overflow": "inf_nan"}
    out = _one("950", "QF322F16_PRE", "float32", -np.inf, pack_scale(1.0), given, relu=True)[0]
    assert out == 0 if setting == "positive_zero" else np.isnan(np.array(out, np.uint16).view(np.float16))


@pytest.mark.consistency
@pytest.mark.parametrize("chip,mode", [(c, m) for c, modes in (("910B", MODES_910B), ("950", MODES_950))
                                       for m in sorted(modes)])
def test_element_steps_end_in_the_bits_quantize_writes(chip, mode):
    spec = QUANT_MODES[mode]
    options = resolve_options(chip, {})
    rng = np.random.default_rng(11)
    for l0c_dtype in spec.l0c_dtypes:
        values = _data(rng, l0c_dtype, (1, 6))
        words = _words(rng, 6, chip, mode)
        for column in range(6):
            word = int(words[column])
            arg = np.array([word], dtype=np.uint64) if spec.form == "vector" else word
            out, out_dtype = quantize(values[:, column:column + 1], l0c_dtype, mode, arg, True, chip, options)
            steps = element_steps(int(values[0, column]), l0c_dtype, mode, word, True, chip, options)
            assert steps[0][0] == "L0C" and steps[-1][0] == "output"
            assert f"({int(out[0, 0]):#0{np.dtype(out.dtype).itemsize * 2 + 2}x})" in steps[-1][1]
            assert out_dtype in steps[-1][1]
