"""The quant word: packing against the documented examples and rules (facts/ascend.md 2.1, 2.2),
decoding against the bit tables of 随路量化.md, and the option that reads the N field."""

import numpy as np
import pytest

from isasim.ascend_cube.numerics.quant_word import (FixpipeParamError, decode_quant_word, double_scale_word, pack_scale)
from isasim.ascend_cube.options import resolve_options


def _bits(value):
    return int(np.array(value, dtype=np.float32).view(np.uint32))


def _from_bits(bits):
    return float(np.array(bits, dtype=np.uint32).view(np.float32))


def _m1_bits(word):
    return word & 0xFFFFFFFF


def test_the_documented_example_truncates_or_rounds_0_7():
    truncated = decode_quant_word(pack_scale(0.7), "910B").m1
    rounded = decode_quant_word(pack_scale(0.7, round_mode=1), "910B").m1
    assert round(truncated, 9) == 0.699707031
    assert round(rounded, 9) == 0.700195312


def test_round_mode_0_is_the_documented_mask_and_bit_46():
    rng = np.random.default_rng(2)
    scales = (rng.standard_normal(2000) * np.exp2(rng.integers(-60, 60, 2000))).astype(np.float32)
    offsets = rng.uniform(-400, 400, 2000).astype(np.float32)
    for scale, offset in zip(scales, offsets):
        word = pack_scale(scale, float(offset))
        # aclnnTransQuantParam: (bits & 0xFFFFE000) | 1 << 46, then the offset rounded (np.round: ties
        # to even, the kernel's CAST_RINT), clamped to [-256, 255], & 0x1FF << 37
        want = (_bits(scale) & 0xFFFFE000) | 1 << 46
        want = (want & 0x4000FFFFFFFF) | ((int(np.clip(np.round(offset), -256, 255)) & 0x1FF) << 37)
        assert word == want
    assert pack_scale(1.0) == 0x3F800000 | 1 << 46


@pytest.mark.parametrize("f32_bits,rounded", [
    (0x3F801000, 0x3F800000),  # round bit set, sticky clear, even lsb: stays (tie to even)
    (0x3F803000, 0x3F804000),  # the same tie with an odd lsb: rounds up
    (0x3F801001, 0x3F802000),  # round bit and a sticky bit: up
    (0x3F800FFF, 0x3F800000),  # below half: down
    (0x3FFFF000, 0x40000000),  # a carry out of the mantissa bumps the exponent
    (0x7F7FFFFF, 0x7F800000),  # exponent overflow: the inf pattern
    (0x00000001, 0x00000000),  # a denormal: zero
    (0x80400000, 0x80000000),  # a negative denormal: negative zero
    (0xBF803000, 0xBF804000),  # the sign is kept
])
def test_round_mode_1_rounds_to_nearest_even_at_bit_13(f32_bits, rounded):
    word = pack_scale(np.float32(_from_bits(f32_bits)), round_mode=1)
    assert _m1_bits(word) == rounded
    assert word >> 46 == 1


@pytest.mark.parametrize("offset,stored", [(2.5, 2), (3.5, 4), (-2.5, -2), (-3.5, -4), (0.4999, 0),
                                           (300.0, 255), (-1000.0, -256), (255.4, 255), (-255.6, -256)])
def test_offset_is_rounded_ties_to_even_clamped_and_stored_in_bits_37_to_45(offset, stored):
    word = pack_scale(1.0, offset)
    assert (word >> 37) & 0x1FF == stored & 0x1FF
    assert decode_quant_word(word, "910B").offset == stored
    assert decode_quant_word(word, "950").offset == stored


def test_a_bad_round_mode_is_refused():
    with pytest.raises(ValueError, match="round_mode"):
        pack_scale(1.0, round_mode=2)


def test_decoding_follows_the_bit_tables_of_each_chip():
    word = (0x3FC00000 & 0xFFFFE000) | (0b0011 << 32) | (1 << 36) | ((-5 & 0x1FF) << 37) | (0 << 46) | (0x1FFF)
    a2 = decode_quant_word(word, "910B")
    assert a2.m1 == 1.5 and a2.offset == -5 and not a2.signed
    assert a2.mcb and a2.n_shift == 4  # code 3 means a shift of 4 ("b'0000 means 1")
    names = [field[2] for field in a2.fields]
    assert names == ["M1", "N", "MCB", "offset", "sign"]
    assert [(f[0], f[1]) for f in a2.fields] == [(13, 19), (32, 4), (36, 1), (37, 9), (46, 1)]
    a5 = decode_quant_word(word | 1 << 46, "950")  # 950 has no N and no MCB
    assert a5.n_shift is None and a5.mcb is False and a5.signed
    assert [field[2] for field in a5.fields] == ["M1", "offset", "sign"]
    assert a5.m1_bits == 0x3FC00000 >> 13


def test_the_n_code_option_reads_the_field_as_the_shift_or_the_shift_minus_one():
    word = pack_scale(1.0) | (1 << 36) | (0b0000 << 32)
    assert decode_quant_word(word, "910B", resolve_options("910B", {"mcb_n_code": "plus_one"})).n_shift == 1
    assert decode_quant_word(word, "910B", resolve_options("910B", {"mcb_n_code": "raw"})).n_shift == 0
    top = pack_scale(1.0) | (0b1111 << 32)
    assert decode_quant_word(top, "910B", resolve_options("910B", {"mcb_n_code": "plus_one"})).n_shift == 16
    assert decode_quant_word(top, "910B", resolve_options("910B", {"mcb_n_code": "raw"})).n_shift == 15


@pytest.mark.parametrize("chip", ["910B", "950"])
@pytest.mark.parametrize("m1_bits,kind", [(0x7F800000, "inf"), (0xFF800000, "inf"), (0x7FC00000, "NaN"),
                                          (0x00400000, "denormal"), (0x80002000, "denormal")])
def test_inf_nan_and_denormal_m1_are_refused_naming_the_rule(chip, m1_bits, kind):
    with pytest.raises(FixpipeParamError, match=f"M1 is {kind}.*cannot be inf/nan or denormal"):
        decode_quant_word(m1_bits | 1 << 46, chip)


def test_a_denormal_below_bit_13_is_zero_not_denormal():
    # bits 12..0 are ignored, so a float32 denormal that lives there reads as M1 = 0
    assert decode_quant_word(0x00001FFF, "910B").m1 == 0.0
    assert decode_quant_word(0x80000000, "950").m1 == 0.0


def test_the_double_scale_is_a_float32_product_then_truncated():
    rng = np.random.default_rng(9)
    a = rng.uniform(1e-3, 10, 500).astype(np.float32)
    b = rng.uniform(1e-3, 10, 500).astype(np.float32)
    differs = 0
    for x, y in zip(a, b):
        want = int((x * y).view(np.uint32)) & 0xFFFFE000  # numpy's float32 multiply, then the mask
        assert double_scale_word(x, y) == want
        assert double_scale_word(x, y) >> 46 == 0  # the arch35 kernel does not set bit 46
        truncated_first = np.float32(_from_bits(_bits(x) & 0xFFFFE000)) * np.float32(_from_bits(_bits(y) & 0xFFFFE000))
        differs += want != (int(truncated_first.view(np.uint32)) & 0xFFFFE000)
    assert differs > 0  # multiplying the truncated scales instead would give other words
