"""The SME2 floating-point multiply-adds and adds into ZA and the remaining FP/bitwise outer products
(forms/za_fp_multiply_add.py: FMLA/FMLS .S .D .H, BFMLA/BFMLS, FMLAL/FMLSL/BFMLAL/BFMLSL, FADD/FSUB/BFADD/BFSUB,
FVDOT/BFVDOT, FMOPA/FMOPS .D .H, BFMOPA/BFMOPS .H, BMOPA/BMOPS) executed by isasim and by QEMU (>= 10.1, -cpu
max: it has FEAT_SME_F64F64, FEAT_SME_F16F16 and FEAT_SME_B16B16), compared at the five SVLs through everything
the harness observes.

Each case is one random encoding of a form on a state whose Z registers and ZA hold the values where floating
point goes wrong, in the form's own formats (the sources' and the accumulator's): NaNs (quiet and signalling),
infinities, zeros of both signs, denormals, the smallest normals, the largest finite values, short mantissas
(products exactly half an ulp over: ties), values near the square root of the smallest normal (products in
the denormal range), and ZA addends that are the negated products of the values the Z registers hold (exact
cancellation, or a rounding error left alone); the vector select registers W8-W11 hold edge values (0,
vstride - 1, vstride, 2^31 - 1, 2^32 - 1, junk above bit 31); predicates are random or all true.
ISASIM_SME_FP_ZA_CASES (default 1) is the number of cases per form and SVL.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from differential import compare_with_qemu, random_instruction, random_state
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.oracle.qemu import SVLS

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

SEED = 20291206
CASES_PER_FORM = int(os.environ.get("ISASIM_SME_FP_ZA_CASES", "1"))
FORMS_HERE = [form for form in FORMS if "fp_shape" in form.extra]
# (exponent bits, fraction bits) of each format
LAYOUT = {"h": (5, 10), "bf": (8, 7), "s": (8, 23), "d": (11, 52)}
WIDTH = {"h": 16, "bf": 16, "s": 32, "d": 64}


def specials(fmt: str) -> list[int]:
    """Each format's special values as bit patterns: zeros, infinities, quiet and signalling NaNs, the
    smallest and largest denormals, the smallest normal, one, one half, the largest finite value."""
    e, f = LAYOUT[fmt]
    top = ((1 << e) - 1) << f
    bias = (1 << (e - 1)) - 1
    sign = 1 << (e + f)
    values = [0, top, top | (1 << (f - 1)), top | 1, top | (1 << (f - 1)) | 3, 1, (1 << f) - 1, 1 << f,
              bias << f, (bias - 1) << f, top - 1]
    return values + [v | sign for v in values]


def _short_mantissa(rng: random.Random, fmt: str, tiny: bool) -> int:
    """A value whose fraction keeps only its top half (products of two such round with ties), near 1.0,
    near either end of the range, or near the square root of the smallest normal."""
    e, f = LAYOUT[fmt]
    bias = (1 << (e - 1)) - 1
    near_root = bias + rng.randrange(-bias // 2 - 3, -bias // 2 + 3)
    exponent = near_root if tiny else rng.choice([bias + rng.randrange(-6, 7), rng.randrange(1, bias // 2),
                                                  rng.randrange(bias + bias // 2, 2 * bias + 1), near_root])
    keep = (f + 1) // 2 + 1
    return (rng.getrandbits(1) << (e + f)) | (exponent << f) | (rng.getrandbits(keep) << (f - keep))


def lanes(rng: random.Random, fmt: str, count: int, tiny: bool, pool: list[int]) -> list[int]:
    e, f = LAYOUT[fmt]
    width = WIDTH[fmt]
    out = []
    for _ in range(count):
        pick = rng.random()
        if pick < 0.25:
            out.append(rng.choice(specials(fmt)))
        elif pick < 0.35:  # a normal just above the smallest: sums landing below it underflow
            out.append((rng.getrandbits(1) << (width - 1)) | (rng.randrange(1, 3) << f) | rng.getrandbits(f))
        elif pick < 0.55 and pool:  # the values whose products ZA holds negated
            out.append(rng.choice(pool))
        elif pick < 0.85:
            out.append(_short_mantissa(rng, fmt, tiny))
        else:
            out.append(rng.getrandbits(width))
    return out


def _pack(values: list[int], fmt: str) -> bytes:
    return np.array(values, dtype={16: np.uint16, 32: np.uint32, 64: np.uint64}[WIDTH[fmt]]).tobytes()


def _to_float(bits: int, fmt: str) -> float:
    if fmt == "bf":
        return float(np.array([bits << 16], np.uint32).view(np.float32)[0])
    dtype = {"h": np.float16, "s": np.float32, "d": np.float64}[fmt]
    return float(np.array([bits], dtype={16: np.uint16, 32: np.uint32, 64: np.uint64}[WIDTH[fmt]]).view(dtype)[0])


def _from_float(value: float, fmt: str) -> int:
    with np.errstate(all="ignore"):  # an input generator, not a model: host rounding is fine here
        if fmt == "bf":
            return int(np.array([value], np.float32).view(np.uint32)[0]) >> 16
        dtype = {"h": np.float16, "s": np.float32, "d": np.float64}[fmt]
        return int(np.array([value], dtype).view({16: np.uint16, 32: np.uint32, 64: np.uint64}[WIDTH[fmt]])[0])


def formats(form) -> tuple[str, str]:
    """(the sources' format, ZA's format) of a form."""
    shape = form.extra["fp_shape"]
    if shape.fmt == "bits":
        return "s", "s"
    if getattr(shape, "op", "outer") in ("mlal", "vdot"):
        return shape.fmt, "s"
    return shape.fmt, shape.fmt


def fp_case(rng: random.Random, form, svl: int) -> tuple[str, str, dict]:
    text = random_instruction(rng, form)
    assert text is not None, form.id
    state = random_state(rng, svl, memory_bytes=4096)
    svlb = svl // 8
    source, accumulator = formats(form)
    tiny = rng.random() < 0.3
    pool = [_short_mantissa(rng, source, tiny) for _ in range(3)] + [rng.choice(specials(source))]
    if form.extra["fp_shape"].fmt != "bits":
        for i in range(32):
            state["z"][i] = _pack(lanes(rng, source, svlb * 8 // WIDTH[source], tiny, pool), source)
    products = [_from_float(-_to_float(a, source) * _to_float(b, source), accumulator) for a in pool for b in pool]
    za = lanes(rng, accumulator, svlb * svlb * 8 // WIDTH[accumulator], tiny, [])
    for k in range(len(za)):
        if rng.random() < 0.3:
            za[k] = rng.choice(products)
    state["za"] = _pack(za, accumulator)
    if rng.random() < 0.4:
        state["p"] = [b"\xff" * (svlb // 8)] * 16
    for v in range(8, 12):
        vstride = svlb // max(getattr(form.extra["fp_shape"], "nreg", 1), 1)
        state["x"][v] = rng.choice([0, 1, vstride - 1, vstride, 0x7FFFFFFF, 0xFFFFFFFF,
                                    0xDEADBEEF_00000000 | (vstride + 1), rng.getrandbits(64)])
    return form.id, text, state


def test_the_forms_are_here():
    assert len(FORMS_HERE) == 106, len(FORMS_HERE)


@pytest.mark.parametrize("svl", SVLS)
def test_every_fp_za_form_agrees_with_qemu(svl):
    rng = random.Random(SEED + svl)
    cases = [fp_case(rng, form, svl) for form in FORMS_HERE for _ in range(CASES_PER_FORM)]
    comparison = compare_with_qemu(cases, svl)
    assert not comparison.mismatches, comparison.report(svl)
    assert comparison.changed >= 0.9 * comparison.compared, \
        f"only {comparison.changed} of {comparison.compared} cases changed anything on QEMU: nothing was compared"


def test_the_states_hold_what_they_claim():
    """The generator really puts NaNs, infinities, denormals and negated products where the form reads."""
    rng = random.Random(1)
    form = next(f for f in FORMS_HERE if f.id == "FMLA_zad_single_vgx2")
    state = fp_case(rng, form, 512)[2]
    words = np.concatenate([np.frombuffer(z, dtype=np.uint64) for z in state["z"]])
    exponent, fraction = (words >> np.uint64(52)) & np.uint64(0x7FF), words & np.uint64((1 << 52) - 1)
    assert ((exponent == 0x7FF) & (fraction != 0)).any() and ((exponent == 0x7FF) & (fraction == 0)).any()
    assert ((exponent == 0) & (fraction != 0)).any()


def test_planted_bugs_are_found(monkeypatch):
    """Two planted misreadings of the ASL must show as mismatches: BFMLA rounding like BFDOT (to single
    precision, then truncated) instead of once to BFloat16 by the FPCR's mode, and FMLAL leaving out
    ``vec = vec - (vec MOD 2)`` (an odd Wv + offset then writes the wrong pair of ZA vectors)."""
    from isasim.arm_sme.numerics import fp_asl
    from isasim.arm_sme.semantics import za_fp_multiply_add as sem

    original = sem._mul_add

    def truncating(fmt, addend, op1, op2):
        if fmt != "bf":
            return original(fmt, addend, op1, op2)
        rule = lambda a, x, y: fp_asl.FPMulAdd_ZA(a << 16, x << 16, y << 16, fp_asl.FP32, fp_asl.FPCR_DEFAULT) >> 16
        return sem._elementwise(rule, np.uint16, addend, op1, op2)

    def no_even(cpu, shape, group, n, m):
        v, offset = group
        odd = ((cpu.X(v) & 0xFFFFFFFF) + offset) % 2
        original_long(cpu, shape, (v, offset + odd), n, m)  # the next even vector: as if vec were not rounded down

    original_long = sem.za_multiply_add_long
    monkeypatch.setattr(sem, "_mul_add", truncating)
    rng = random.Random(SEED)
    bf = [fp_case(rng, form, 256) for form in FORMS_HERE if form.id == "BFMLA_zah_single_vgx2" for _ in range(4)]
    assert compare_with_qemu(bf, 256).mismatches
    monkeypatch.setattr(sem, "_mul_add", original)
    fmlal = next(form for form in FORMS_HERE if form.id == "FMLAL_zas_h_single_vgx1")
    cases = []
    while len(cases) < 4:
        label, text, state = fp_case(rng, fmlal, 256)
        v = int(text.split("[w")[1].split(",")[0])
        offset = int(text.split(",")[1].split(":")[0])
        if ((state["x"][v] & 0xFFFFFFFF) + offset) % (256 // 8) % 2:
            cases.append((label, text, state))
    execute = fmlal.execute
    object.__setattr__(fmlal, "execute", sem.bound(no_even, fmlal.extra["fp_shape"]))  # a frozen declaration
    try:
        assert len(compare_with_qemu(cases, 256).mismatches) == 4
    finally:
        object.__setattr__(fmlal, "execute", execute)


# ---- hand-worked cases: QEMU and isasim give the value the Arm rules give by hand ---------------------

HAND_SVL = 128  # 16-byte vectors: za.s[w8, 0, vgx2] with W8 = 0 is ZA vectors 0 and 8; ZA1.S row 0 is vector 1
# (label, instruction, Z lanes {register: (dtype, lanes)}, ZA fill (dtype, value), ZA vector, element dtype,
#  the hand value of that vector's element 0)
HAND_CASES = [
    ("FMLA .D is fused: x*x - round(x*x) = 2^-60 for x = 1 + 2^-30", "fmla za.d[w8, 0, vgx2], {z0.d-z1.d}, z2.d",
     {0: (np.uint64, [0x3FF0000000400000]), 2: (np.uint64, [0x3FF0000000400000])},
     (np.uint64, 0xBFF0000000800000), 0, np.uint64, 0x3C30000000000000),
    ("FMLAL widens first: 2^-24 * 2^-24 = 2^-48 in single precision (0 in half)", "fmlal za.s[w8, 0:1], z0.h, z1.h",
     {0: (np.uint16, [0x0001]), 1: (np.uint16, [0x0001])}, (np.uint32, 0), 0, np.uint32, 0x27800000),
    ("BFMLA rounds to nearest even: 1 + 2^-7 + 2^-8 ties to 1 + 2^-6", "bfmla za.h[w8, 0, vgx2], {z0.h-z1.h}, z2.h",
     {0: (np.uint16, [0x3F80]), 2: (np.uint16, [0x3F81])}, (np.uint16, 0x3B80), 0, np.uint16, 0x3F82),
    ("FSUB is ZA - Z: (-0) - (+0) = -0", "fsub za.s[w8, 0, vgx2], {z0.s-z1.s}",
     {0: (np.uint32, [0])}, (np.uint32, 0x80000000), 0, np.uint32, 0x80000000),
    ("BMOPA counts the matching bits: 100 + popcount(NOT(0xF0F0F0F0 EOR 0xF0F00000)) = 124",
     "bmopa za1.s, p0/m, p0/m, z1.s, z2.s", {1: (np.uint32, [0xF0F0F0F0]), 2: (np.uint32, [0xF0F00000])},
     (np.uint32, 100), 1, np.uint32, 124),
]


def _hand_state(z: dict, fill) -> dict:
    svlb = HAND_SVL // 8
    dtype, value = fill
    state = {"x": [0] * 31, "svcr": 3, "z": [bytes(svlb)] * 32, "p": [b"\xff" * (svlb // 8)] * 16,
             "za": np.full(svlb * svlb // np.dtype(dtype).itemsize, value, dtype=dtype).tobytes(), "zt0": bytes(64)}
    for n, (lane, values) in z.items():
        state["z"][n] = np.resize(np.array(values, dtype=lane), svlb // np.dtype(lane).itemsize).tobytes()
    return state


def test_hand_worked_values_agree_with_qemu():
    from isasim.arm_sme.oracle.qemu import run_many

    cases = [(label, text, _hand_state(z, fill)) for label, text, z, fill, *_ in HAND_CASES]
    comparison = compare_with_qemu(cases, HAND_SVL)
    assert not comparison.mismatches, comparison.report(HAND_SVL)
    results = run_many([(text, state) for _, text, state in cases], HAND_SVL)
    svlb = HAND_SVL // 8
    for (label, _, _, _, vector, dtype, expected), theirs in zip(HAND_CASES, results):
        got = int(np.frombuffer(theirs["za"][vector * svlb:(vector + 1) * svlb], dtype=dtype)[0])
        assert got == expected, f"{label}: QEMU {got:#x}, the hand value {expected:#x}"
