"""The quant-word packing and decoding against Huawei's own golden scripts.

Vectors in tests/ascend_cube/goldens/ were recorded by running the scripts named in its README.md
(OPSNN TransQuantParamV2 executor, OPP npu_trans_quant_param test, OPSNN matmul_quant_util);
nothing here computes an expectation. The packing is exact bit arithmetic in those scripts,
so every comparison is bit-exact.
"""

import json
from pathlib import Path

import numpy as np

from isasim.ascend_cube.numerics import quant_word

GOLDENS = Path(__file__).parents[1] / "goldens"


def _load(name):
    return json.loads((GOLDENS / name).read_text())


def _f32(hexbits):
    return np.uint32(int(hexbits, 16)).view(np.float32)


def _report(label, equal):
    equal = np.asarray(equal, dtype=bool)
    print(f"{label}: bit-exact {int(equal.sum())}/{equal.size} ({100.0 * equal.mean():.2f}%)")


def test_trans_quant_param_v2_scale_and_offset_round_mode_0():
    data = _load("opsnn_trans_quant_param_v2_pack.json")
    got = [quant_word.pack_scale(_f32(s), float(_f32(o)), round_mode=0) for s, o in zip(data["scale"], data["offset"])]
    want = [int(w, 16) for w in data["word"]]
    equal = [g == w for g, w in zip(got, want)]
    _report("OPSNN TransQuantParamV2 executor (scale + offset, round_mode 0)", equal)
    bad = [(s, o, hex(g), hex(w)) for s, o, g, w in zip(data["scale"], data["offset"], got, want) if g != w]
    assert not bad, f"{len(bad)} words differ (scale, offset, ours, golden), first: {bad[:5]}"


def test_npu_trans_quant_param_scale_only():
    data = _load("opp_npu_trans_quant_param_pack.json")
    got = [quant_word.pack_scale(_f32(s)) for s in data["scale"]]
    want = [int(w, 16) for w in data["word"]]
    equal = [g == w for g, w in zip(got, want)]
    _report("OPP npu_trans_quant_param golden (scale only)", equal)
    bad = [(s, hex(g), hex(w)) for s, g, w in zip(data["scale"], got, want) if g != w]
    assert not bad, f"{len(bad)} words differ (scale, ours, golden), first: {bad[:5]}"


def test_pack_u64_scale_fields():
    # pack_u64_scale keeps the float32's bits 12..0 (the hardware ignores them, facts 8.1):
    # compare M1 (31..13), offset (45..37) and sign (46).
    pack = _load("opsnn_matmul_quant_util.json")["pack"]
    fields = (0xFFFFE000) | (0x1FF << 37) | (1 << 46)
    got = [quant_word.pack_scale(_f32(s), float(_f32(o))) & fields for s, o in zip(pack["scale"], pack["offset"])]
    want = [int(w, 16) & fields for w in pack["word"]]
    equal = [g == w for g, w in zip(got, want)]
    _report("OPSNN pack_u64_scale (bits 13-31, 37-46)", equal)
    assert all(equal), [(s, o, hex(g), hex(w)) for s, o, g, w in
                        zip(pack["scale"], pack["offset"], got, want) if g != w][:5]
    # the low 13 bits really are where that golden and the documented packing part
    assert any(int(w, 16) & 0x1FFF for w in pack["word"])


def test_u64_to_deq_scale_and_offset_decode():
    dec = _load("opsnn_matmul_quant_util.json")["decode"]
    m1_equal, off_equal, bad = [], [], []
    for word, m1, off in zip(dec["word"], dec["m1_f32"], dec["offset"]):
        q = quant_word.decode_quant_word(int(word, 16), dec["chip"])
        m1_equal.append(q.m1 == float(_f32(m1)))
        off_equal.append(q.offset == off)
        if not (m1_equal[-1] and off_equal[-1]):
            bad.append((word, q.m1, float(_f32(m1)), q.offset, off))
    _report("OPSNN u64_to_deq_scale (M1)", m1_equal)
    _report("OPSNN u64_to_offset (9-bit signed offset)", off_equal)
    assert not bad, (f"{len(bad)} words decode differently "
                     f"(word, our M1, golden M1, our offset, golden offset): {bad[:5]}")
    assert min(dec["offset"]) < 0 < max(dec["offset"])


def test_double_scale_word_matches_qbmmv3_golden():
    # T-T double scale (950 fp8/hif8): scale * pertoken in float32, then & 0xFFFFE000 (scale_generate)
    groups = [g for g in _load("opsnn_qbmmv3_kernel_golden.json")["groups"] if "pertoken_f32" in g["params"]]
    assert groups
    bad = []
    for g in groups:
        got = quant_word.double_scale_word(_f32(g["params"]["scale_f32"]), _f32(g["params"]["pertoken_f32"]))
        if got != int(g["word"], 16):
            bad.append((g["case"], hex(got), g["word"]))
    _report("OPSNN qbmmv3 golden merged double-scale word", [True] * (len(groups) - len(bad)) + [False] * len(bad))
    assert not bad, bad
