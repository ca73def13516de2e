"""ascend_cube's page views of the fixpipe buffer FB (the per-channel quant words, with their bit fields) and the
bias table BT: the fields decode words as Huawei packs them and as the guide's table lays them out, the views
cover the words and the bias row the program's instructions read, their cells after the copies hold the qbmm
example's own inputs, and every view fits its panel when the page model is built."""

from __future__ import annotations

import json
import struct
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from isasim.ascend_cube.numerics.quant_word import FixpipeParamError, decode_quant_word
from isasim.core.isa import get_isa
from isasim.core.trace import Init
from isasim.core.trace_page.model import build_model, view_offsets
from page_replay import panels_after

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "ascend_cube"
GOLDENS = ROOT / "tests" / "ascend_cube" / "goldens"
ISA = get_isa("ascend_cube")


def field_value(word: int, field):
    """A PageField's reading of a cell, as its declaration says the page reads it (written here from the
    PageField docstring, not from the ISA's code): unsigned/signed integers plus ``add``, or the field as the top
    bits of a binary32."""
    raw = (word >> field.first_bit) & ((1 << field.width) - 1)
    if field.kind == "unsigned":
        return raw + field.add
    if field.kind == "signed":
        return raw - (1 << field.width) * (raw >> (field.width - 1)) + field.add
    assert field.kind == "float_top", field
    return struct.unpack("<f", struct.pack("<I", raw << (32 - field.width)))[0]


def fields_of(config: dict) -> dict:
    """The FB view's fields for ``config`` (from a program whose vector-mode Fixpipe reads FB)."""
    program = ISA.assemble("SetFixPipeConfig(quantPre=FB[64])\n"
                           "Fixpipe(dst=GM[0x1000], src=L0C[0], srcType=int32, dstType=float16, nSize=20, mSize=16, "
                           "srcStride=16, dstStride=20, quantPre=VDEQF16)")
    (view,) = ISA.page_views(ISA.configure(config), program)
    return view, {field.name: field for field in view.fields}


@pytest.mark.parametrize("config", [{"chip": "910B"}, {"chip": "950"},
                                    {"chip": "910B", "options": "mcb_n_code=raw"}])
def test_the_fields_decode_random_words_as_decode_quant_word_does(config):
    """Consistency test (not outside truth): the page's field definitions agree with numerics.quant_word's
    decoder, the one the Fixpipe runs, on random words, field for field, for each chip and N-code option."""
    config = ISA.configure(config)
    _view, fields = fields_of(config)
    rng = np.random.default_rng(31)
    refused = 0
    for word in map(int, rng.integers(0, 1 << 64, 3000, dtype=np.uint64)):
        m1 = field_value(word, fields["M1"])
        try:
            decoded = decode_quant_word(word, config["chip"], config["options"])
        except FixpipeParamError:  # an inf, NaN or denormal scale, which the page shows as that float
            assert not np.isfinite(m1) or (m1 != 0 and abs(m1) < 2.0 ** -126), hex(word)
            refused += 1
            continue
        assert {name for _bit, _width, name, _value, _meaning in decoded.fields} == set(fields)
        for first_bit, width, name, _value, _meaning in decoded.fields:
            assert (fields[name].first_bit, fields[name].width) == (first_bit, width), name
        assert Fraction(m1) == Fraction(decoded.m1) and bool(np.signbit(m1)) == bool(decoded.m1_bits >> 18)
        assert field_value(word, fields["offset"]) == decoded.offset
        assert field_value(word, fields["sign"]) == int(decoded.signed)
        if config["chip"] == "910B":
            assert field_value(word, fields["N"]) == decoded.n_shift
            assert field_value(word, fields["MCB"]) == int(decoded.mcb)
    assert 0 < refused < 100  # a few random exponents are 0 or 255


def _decodable(word: int) -> bool:
    exponent = (word >> 23) & 0xFF
    return exponent not in (0, 0xFF)


def test_the_fields_read_a_word_made_by_hand_from_the_guides_table():
    """随路量化.md table 1, by hand: scale 0.5 (float32 0x3F000000) in bits 31..13, offset -3 (9-bit 0x1FD) in
    bits 45..37, bit 46 (signed) set: 0x3F000000 + 0x1FD * 2**37 + 2**46 = 0x00007FA03F000000.  On the 910B, a
    second word: scale 1.0, MCB (bit 36) set, N code 3 in bits 35..32, so a shift of 4: 0x000000133F800000."""
    for chip in ("910B", "950"):
        _view, fields = fields_of({"chip": chip})
        word = 0x00007FA03F000000
        assert (field_value(word, fields["M1"]), field_value(word, fields["offset"]),
                field_value(word, fields["sign"])) == (0.5, -3, 1)
        if chip == "910B":
            assert (field_value(word, fields["N"]), field_value(word, fields["MCB"])) == (1, 0)
            mcb = 0x000000133F800000
            assert (field_value(mcb, fields["M1"]), field_value(mcb, fields["N"]), field_value(mcb, fields["MCB"]),
                    field_value(mcb, fields["offset"]), field_value(mcb, fields["sign"])) == (1.0, 4, 1, 0, 0)
        else:
            assert "N" not in fields and "MCB" not in fields  # the 950's word has no shift


def test_the_fields_read_huaweis_packed_words_back_to_their_scale_and_offset():
    """Words packed by Huawei's own code (op-plugin npu_trans_quant_param; ops-nn TransQuantParamV2 with an
    offset): M1 reads back the float32 scale with its low 13 bits cleared, offset the float offset rounded to
    nearest even and clamped to 9 bits, and sign is 1."""
    _view, fields = fields_of({"chip": "950"})
    plain = json.loads((GOLDENS / "opp_npu_trans_quant_param_pack.json").read_text())
    with_offset = json.loads((GOLDENS / "opsnn_trans_quant_param_v2_pack.json").read_text())
    checked = 0
    for golden in (plain, with_offset):
        offsets = golden.get("offset", [None] * len(golden["scale"]))
        for scale_hex, offset_hex, word_hex in zip(golden["scale"], offsets, golden["word"]):
            scale, word = int(scale_hex, 16), int(word_hex, 16)
            if not _decodable(scale):
                continue
            truncated = struct.unpack("<f", struct.pack("<I", scale & 0xFFFFE000))[0]
            assert field_value(word, fields["M1"]) == truncated, word_hex
            assert field_value(word, fields["sign"]) == 1
            if offset_hex is not None:
                offset = struct.unpack("<f", struct.pack("<I", int(offset_hex, 16)))[0]
                if np.isfinite(offset):
                    want = max(-256, min(255, round(Fraction(offset))))  # Fraction rounds half to even
                    assert field_value(word, fields["offset"]) == want, (word_hex, offset)
            checked += 1
    assert checked > 400


def test_the_fb_view_is_where_the_vector_fixpipe_reads_its_words():
    """nSize words from the fpc the last SetFixPipeConfig set (the Fixpipe reads FB[fpc + 8j] for column j)."""
    view, _fields = fields_of({"chip": "910B"})
    assert (view.panel, view.element, view.show) == ("fb", "uint64", True)
    assert np.array_equal(np.asarray(view.offsets).reshape(-1), 64 + 8 * np.arange(20))
    # no FB use, no bias: L0C alone (the seed's int8 GEMM)
    gemm = ISA.assemble((EXAMPLES / "int8_gemm.s").read_text())
    assert [v.panel for v in ISA.page_views(ISA.configure({"chip": "910B"}), gemm)] == ["l0c"]


def _qbmm(name: str):
    from isasim.ascend_cube.kernels.qbmm import build
    from isasim.ascend_cube.kernels.qbmm_case_file import load_case

    case = load_case(EXAMPLES / name / "case.json")
    kernel = build(case)
    config = ISA.configure({"chip": case.chip, "options": dict(case.options)})
    program = ISA.assemble("\n".join(kernel.program_lines))
    return config, program, kernel.init()


def _after_first(model: dict, prefix: str) -> int:
    return next(i + 1 for i, s in enumerate(model["steps"])
                if model["listing"][s["instruction"]]["text"].startswith(prefix))


def _cells(model: dict, t: int, name: str, dtype: str) -> np.ndarray:
    view = next(v for v in model["views"] if v["name"] == name)
    data = np.frombuffer(bytes(panels_after(model, t)[view["panel"]][1]), dtype=np.uint8)
    offsets = view_offsets(view)
    return np.ascontiguousarray(data[offsets[..., None] + np.arange(np.dtype(dtype).itemsize)]).view(dtype)[..., 0]


@pytest.mark.parametrize("example", ["qbmm_int8_bf16", "qbmm_fp8_pertensor"])
def test_the_views_fit_their_panels_in_the_qbmm_examples(example):
    config, program, init = _qbmm(example)
    model = build_model("ascend_cube", config, program, init, workings_steps=0)
    assert model["views_error"] is None
    panels = [v["panel"] for v in model["views"]]
    # the int8 example reads per-channel words from FB and starts C from an int32 bias; the fp8 one uses neither
    assert panels == (["l0c", "fb", "bt"] if example == "qbmm_int8_bf16" else ["l0c"])


def test_the_qbmm_views_hold_the_examples_words_and_bias_once_copied():
    """qbmm_int8_bf16: after its first DataCopy to FB the FB view holds the case's scale_b words (packed by
    ops-nn's pack_u64_scale), and after its first DataCopy to BT the BT view holds the case's int32 bias."""
    config, program, init = _qbmm("qbmm_int8_bf16")
    model = build_model("ascend_cube", config, program, init, workings_steps=0)
    fb, bt = (next(v for v in model["views"] if v["panel"] == p) for p in ("fb", "bt"))
    assert (fb["rows"], fb["cols"], bt["rows"], bt["cols"], bt["element"]) == (70, 1, 1, 70, "int32")
    words = np.load(EXAMPLES / "qbmm_int8_bf16" / "scale_b.npy")
    bias = np.load(EXAMPLES / "qbmm_int8_bf16" / "bias.npy")
    assert np.array_equal(_cells(model, _after_first(model, "DataCopy(dst=FB"), fb["name"], "<u8")[:, 0], words)
    assert np.array_equal(_cells(model, _after_first(model, "DataCopy(dst=BT"), bt["name"], "<i4")[0], bias)


def test_a_float_bias_view_is_float32_and_a_program_writing_bt_alone_gets_its_words():
    config = ISA.configure({"chip": "910B"})
    program = ISA.assemble(
        "DataCopy(dst=BT[64], src=L1[0], srcType=float16, dstType=float32, blockCount=1, blockLen=1)\n"
        "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=float16, bType=float16, m=16, n=12, k=16, "
        "cmatrixInitVal=false, cmatrixSource=true, bias=BT[64])")
    (_l0c, bt) = ISA.page_views(config, program)
    assert (bt.panel, bt.element) == ("bt", "fp32")
    assert np.array_equal(np.asarray(bt.offsets), [64 + 4 * np.arange(12)])
    copy_only = ISA.assemble(program.instructions[0].text)
    (bt,) = ISA.page_views(config, copy_only)
    # 32 bytes of halves widen to 16 float32 values: the 64 bytes the copy writes
    assert np.array_equal(np.asarray(bt.offsets), [64 + 4 * np.arange(16)])
    model = build_model("ascend_cube", config, copy_only, Init(arrays={"l1": np.arange(16, dtype=np.float16)
                                                                       .tobytes() + bytes(512 * 1024 - 32)}))
    assert model["views_error"] is None
    assert np.array_equal(_cells(model, 1, bt.name, "<f4")[0], np.arange(16, dtype=np.float32))
