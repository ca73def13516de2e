"""Every SME floating-point form (FMOPA/FMOPS .S and widening .H->.S, BFMOPA/BFMOPS, FDOT/BFDOT into ZA
vector groups) executed by isasim and by QEMU (>= 10.1), compared at all five SVLs.

Per SVL and form: random encodings of the form on states of random bits, and on biased states whose
Z registers and ZA hold the values where floating point goes wrong: NaNs (quiet and signalling),
infinities, zeros of both signs, denormals, the largest finite values (overflow), short mantissas
(products with exactly half an ulp over: rounding ties), element pairs whose products cancel
exactly, and ZA addends that cancel a product; predicates with random bits or all true.  The
harness (differential.py) compares every register, ZA and memory byte.  FPCR is the reset value on
both sides (QEMU's linux-user start state; isasim models only that FPCR).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from differential import compare_with_qemu, random_instruction, random_state
from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

SVLS = (128, 256, 512, 1024, 2048)
RANDOM_CASES, BIASED_CASES = 2, 6  # per form and SVL: 18 forms x 8 = 144 cases per SVL
SEED = 20261201
FP_FORMS = [form for form in FORMS if form.group in ("fp_outer", "fp_dot")]

# special values of each format, as bit patterns
HALF = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7D01, 0xFC01, 0x0001, 0x8001, 0x03FF, 0x0400,
        0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x3800, 0x0200]
BFLOAT = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x0001, 0x807F, 0x0080, 0x3F80, 0xBF80,
          0x7F7F, 0xFF7F, 0x0100, 0x3F00]
SINGLE = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0xFF812345,
          0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFF7FFFFF,
          0x00400000, 0x33800000]


def _short_mantissa(rng: random.Random, exponent_bits: int, fraction_bits: int, keep: int, tiny: bool) -> int:
    """A random value whose fraction has only its top ``keep`` bits (products of two such round with
    ties), any sign, an exponent near 1.0, near either end of the range (products that underflow or
    overflow), or near the square root of the smallest normal (products near the denormal range; only
    those when ``tiny``)."""
    bias = (1 << (exponent_bits - 1)) - 1
    near_root = rng.randrange(-bias // 2 - 3, -bias // 2 + 3)
    exponent = bias + (near_root if tiny else rng.choice([rng.randrange(-6, 7), rng.randrange(1 - bias, -bias // 2),
                                                          rng.randrange(bias // 2, bias + 1), near_root]))
    fraction = rng.getrandbits(keep) << (fraction_bits - keep)
    return (rng.getrandbits(1) << (exponent_bits + fraction_bits)) | (exponent << fraction_bits) | fraction


def _biased_lanes(rng: random.Random, count: int, width: int, specials: list[int], tiny: bool = False) -> list[int]:
    exponent_bits, fraction_bits = {16: (5, 10) if specials is HALF else (8, 7), 32: (8, 23)}[width]
    lanes = []
    for _ in range(count):
        pick = rng.random()
        if tiny:  # nearly every lane near the square root of the smallest normal
            pick = 0.1 + 0.6 * pick
        if pick < 0.3:
            lanes.append(rng.choice(specials))
        elif pick < 0.4 and not tiny:  # a normal just above the smallest (a sum landing below it underflows)
            lanes.append((rng.getrandbits(1) << (width - 1)) | (rng.randrange(1, 3) << fraction_bits)
                         | rng.getrandbits(fraction_bits))
        elif pick < 0.7:
            lanes.append(_short_mantissa(rng, exponent_bits, fraction_bits, (fraction_bits + 1) // 2 + 1, tiny))
        else:
            lanes.append(rng.getrandbits(width))
    return lanes


def _pack(lanes: list[int], width: int) -> bytes:
    return np.array(lanes, dtype=np.uint16 if width == 16 else np.uint32).tobytes()


def biased_state(rng: random.Random, svl: int, form, text: str) -> dict:
    state = random_state(rng, svl, memory_bytes=4096)
    svlb = svl // 8
    src16 = "_h" in form.id
    specials = (BFLOAT if form.mnemonic.startswith("bf") else HALF) if src16 else SINGLE
    width = 16 if src16 else 32
    tiny = rng.random() < 0.3  # products and sums around the smallest normal: underflow, denormal rounding
    for i in range(32):
        lanes = _biased_lanes(rng, svlb * 8 // width, width, specials, tiny)
        if src16 and rng.random() < 0.4:  # pairs whose two products cancel: (a, -a) . (b, b)
            for e in range(0, len(lanes), 2):
                lanes[e + 1] = lanes[e] ^ 0x8000 if i % 2 else lanes[e]
        state["z"][i] = _pack(lanes, width)
    za = _biased_lanes(rng, svlb * svlb // 4, 32, SINGLE)
    if form.group == "fp_outer" and rng.random() < 0.5:
        fields = ISA.assemble(text).instructions[0].extra["fields"]
        kind = "bf16" if form.mnemonic.startswith("bf") else "f16" if src16 else "f32"
        za = _cancelling_addends(rng, state, svlb, za, fields["Zn"], fields["Zm"], kind)
    state["za"] = _pack(za, 32)
    if rng.random() < 0.4:
        state["p"] = [b"\xff" * (svlb // 8)] * 16  # all true
    return state


def _as_float64(data: bytes, kind: str) -> np.ndarray:
    if kind == "f32":
        return np.frombuffer(data, dtype=np.float32).astype(np.float64)
    if kind == "f16":
        return np.frombuffer(data, dtype=np.float16).astype(np.float64)
    return (np.frombuffer(data, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def _cancelling_addends(rng, state, svlb, za, n, m, kind):
    """Some ZA elements set to about -(row of Zn . column of Zm) for the instruction's Zn and Zm (the
    product, or the 2-way sum of products): the result is then the rounding error or a small
    difference (below the smallest normal in the tiny states), which only the exact rule gets right."""
    za = list(za)
    with np.errstate(all="ignore"):  # an input generator only, not a model: host float64 is fine here
        zn, zm = _as_float64(state["z"][n], kind), _as_float64(state["z"][m], kind)
        if kind == "f32":
            dot = zn[:, None] * zm[None, :]
        else:
            dot = zn[0::2, None] * zm[None, 0::2] + zn[1::2, None] * zm[None, 1::2]
        bits = (-dot).astype(np.float32).view(np.uint32)
    dim = svlb // 4
    for vector in range(svlb):  # ZA vector v is row v // 4 of tile v % 4
        for col in range(dim):
            if rng.random() < 0.5:
                za[vector * dim + col] = int(bits[vector // 4, col])
    return za


def edge_wv(rng: random.Random, svl: int, nreg: int) -> int:
    vstride = svl // 8 // nreg
    return rng.choice([0, vstride - 1, vstride, 0x7FFFFFFF, 0xFFFFFFFF, 0xDEADBEEF_00000000 | (vstride + 1),
                       rng.getrandbits(64)])


def cases_for(svl: int) -> list[tuple[str, str, dict]]:
    rng = random.Random(SEED + svl)
    cases = []
    for form in FP_FORMS:
        for k in range(RANDOM_CASES + BIASED_CASES):
            text = random_instruction(rng, form)
            assert text is not None, form.id
            biased = k >= RANDOM_CASES
            state = biased_state(rng, svl, form, text) if biased else random_state(rng, svl, memory_bytes=4096)
            if form.group == "fp_dot":
                for v in range(8, 12):
                    state["x"][v] = edge_wv(rng, svl, form.extra["shape"].nreg)
            cases.append((f"{form.id} ({'biased' if biased else 'random'})", text, state))
    return cases


@pytest.mark.parametrize("svl", SVLS)
def test_every_fp_form_agrees_with_qemu(svl):
    cases = cases_for(svl)
    assert {label.split()[0] for label, _, _ in cases} == {form.id for form in FP_FORMS}
    comparison = compare_with_qemu(cases, svl)
    assert not comparison.mismatches, comparison.report(svl)
    assert comparison.changed >= 0.9 * comparison.compared, \
        f"only {comparison.changed} of {comparison.compared} cases changed anything on QEMU: nothing was compared"


def test_the_biased_states_hold_what_they_claim():
    """The biased generator really produces NaNs, infinities, denormals, ties and cancelling pairs."""
    rng = random.Random(1)
    form = next(f for f in FP_FORMS if f.id.startswith("FDOT"))
    halves = np.concatenate([np.frombuffer(z, dtype=np.uint16) for _ in range(4)
                             for z in biased_state(rng, 512, form, "fdot za.s[w8, 0], {z0.h-z1.h}, z2.h")["z"]])
    exponent, fraction = (halves >> 10) & 0x1F, halves & 0x3FF
    assert ((exponent == 0x1F) & (fraction != 0)).any() and ((exponent == 0x1F) & (fraction == 0)).any()
    assert ((exponent == 0) & (fraction != 0)).any()


# ---- hand-worked cases: QEMU gives the values numerics/test_fp_asl.py derives from the Arm rules -----

HAND_SVL = 128  # 16-byte vectors; ZA0.S is ZA vectors 0, 4, 8, 12


def _hand_state(text: str, z: dict, p: dict, za_fill: int) -> dict:
    """Z registers filled with repeated lanes (32-bit for the .S outer products, else 16-bit), the
    given predicates (others all false), ZA filled with one single-precision value."""
    svlb = HAND_SVL // 8
    lane = np.uint32 if ".s, z" in text else np.uint16
    state = {"x": [0] * 31, "svcr": 3, "z": [bytes(svlb)] * 32, "p": [bytes(svlb // 8)] * 16,
             "za": np.full(svlb * svlb // 4, za_fill, dtype=np.uint32).tobytes(), "zt0": bytes(64)}
    for n, lanes in z.items():
        state["z"][n] = np.resize(np.array(lanes, dtype=lane), svlb // np.dtype(lane).itemsize).tobytes()
    for n, bits in p.items():
        state["p"][n] = bytes(bits)
    return state


# (label, instruction, Z lanes, predicates, ZA fill, the hand value of ZA vector 1 element 0 (za1 / vec 1))
HAND_CASES = [
    ("fused: a*a - round(a*a) = 2^-24", "fmopa za1.s, p0/m, p0/m, z1.s, z2.s",
     {1: [0x3F800800], 2: [0x3F800800]}, {0: [0xFF, 0xFF]}, 0xBF801000, 0x33800000),
    ("widening FMOPS: an inactive element is +0, not negated", "fmops za1.s, p0/m, p1/m, z1.h, z2.h",
     {1: [0x0000], 2: [0x3C00]}, {0: [0x11, 0x11], 1: [0x55, 0x55]}, 0x80000000, 0x00000000),
    ("BFMOPS: an inactive element is +0, not negated", "bfmops za1.s, p0/m, p1/m, z1.h, z2.h",
     {1: [0x0000], 2: [0x3F80]}, {0: [0x11, 0x11], 1: [0x55, 0x55]}, 0x80000000, 0x00000000),
    ("FDOT rounds the dot, then the sum", "fdot za.s[w8, 1, vgx2], {z2.h-z3.h}, z4.h",
     {2: [0x3C00, 0x0001], 3: [0x3C00, 0x0001], 4: [0x3C00]}, {}, 0x28000000, 0x3F800000),
    ("BFDOT rounds to odd", "bfdot za.s[w8, 1, vgx2], {z2.h-z3.h}, z4.h",
     {2: [0x3F80, 0x3800], 3: [0x3F80, 0x3800], 4: [0x3F80, 0x3800]}, {}, 0x00000000, 0x3F800001),
    ("a signalling NaN gives the default NaN in ZA", "fmopa za1.s, p0/m, p0/m, z1.s, z2.s",
     {1: [0x7F80000C], 2: [0x3F800000]}, {0: [0xFF, 0xFF]}, 0x3F800000, 0x7FC00000),
]


def _hand_cases():
    return [(label, text, _hand_state(text, z, p, fill)) for label, text, z, p, fill, _ in HAND_CASES]


def test_hand_worked_values_agree_with_qemu():
    from isasim.arm_sme.oracle.qemu import run_many

    cases = _hand_cases()
    comparison = compare_with_qemu(cases, HAND_SVL)
    assert not comparison.mismatches, comparison.report(HAND_SVL)
    results = run_many([(text, state) for _, text, state in cases], HAND_SVL)
    for (label, *_, expected), theirs in zip(HAND_CASES, results):
        got = int.from_bytes(theirs["za"][HAND_SVL // 8:HAND_SVL // 8 + 4], "little")  # ZA vector 1, element 0
        assert got == expected, f"{label}: QEMU {got:#010x}, the hand value {expected:#010x}"


def test_a_planted_rounding_bug_is_found(monkeypatch):
    """Rounding FMOPA's product before the add (two roundings) must show as a mismatch.  The bug is
    planted in the array form the instruction executes (fp_products calls FPMulAdd_ZA_array), as the
    per-element FPMul and FPAdd applied to each element."""
    from isasim.arm_sme.numerics import fp_asl
    from isasim.arm_sme.semantics import fp_products
    from dataclasses import replace

    def unfused(addend, op1, op2):
        fpcr = replace(fp_asl.FPCR_DEFAULT, DN=1)
        product = fp_asl.FPMul(int(op1), int(op2), fp_asl.FP32, fpcr)
        return fp_asl.FPAdd(int(addend), product, fp_asl.FP32, fpcr)

    monkeypatch.setattr(fp_products, "FPMulAdd_ZA_array", np.vectorize(unfused, otypes=[np.uint32]))
    comparison = compare_with_qemu(_hand_cases()[:1], HAND_SVL)
    assert len(comparison.mismatches) == 1 and "za row 1" in comparison.mismatches[0], comparison.mismatches


def test_qemu_runs_the_snippets_with_the_reset_fpcr():
    """The comparison assumes QEMU's FPCR is the one isasim models (all zero): read it there."""
    from isasim.arm_sme.oracle.qemu import run_many

    (result,) = run_many([("mrs x0, fpcr", {"x": [0xFFFF] * 31})], HAND_SVL)
    assert result["x"][0] == 0, f"QEMU's FPCR is {result['x'][0]:#x}"
