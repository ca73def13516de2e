"""SME2.2's quarter-tile outer products (FEAT_SME_MOP4, forms/quarter_tile_outer_products.py: SMOP4A/S, UMOP4A/S,
SUMOP4A/S, USMOP4A/S, FMOP4A/S, BFMOP4A/S, 128 forms) executed by isasim and by QEMU 11.1 (-cpu max has
FEAT_SME_MOP4 and the I16I64/F64F64/F16F16/B16B16 features beside it), compared at the five SVLs through
everything the harness observes.

Each case is one random encoding of a form (Zn and Zm one register or a pair) on a state whose Z registers and
ZA hold, for the FP forms, the values where floating point goes wrong in the form's own formats (NaNs quiet and
signalling, infinities, signed zeros, denormals, smallest normals, largest finite values, short mantissas whose
products tie, values near the square root of the smallest normal, ZA addends that are negated products of the Z
values, as test_za_fp_multiply_add_vs_qemu.py fills them), and for the integer forms extreme
elements (0, 1, the largest and most negative of each width) beside random ones, so that sums wrap.
ISASIM_SME_MOP4_CASES (default 1) is the number of cases per form and SVL.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from differential import compare_with_qemu, random_instruction, random_state, run_isasim
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.oracle.qemu import SVLS

SEED = 20291207
CASES_PER_FORM = int(os.environ.get("ISASIM_SME_MOP4_CASES", "1"))
FORMS_HERE = [form for form in FORMS if "mop4_shape" in form.extra]
LAYOUT = {"h": (5, 10), "bf": (8, 7), "s": (8, 23), "d": (11, 52)}  # (exponent bits, fraction bits)
WIDTH = {"h": 16, "bf": 16, "s": 32, "d": 64}
UINT = {16: np.uint16, 32: np.uint32, 64: np.uint64}
FLOAT = {"h": np.float16, "s": np.float32, "d": np.float64}


def specials(fmt: str) -> list[int]:
    """Zeros, infinities, quiet and signalling NaNs, the smallest and largest denormals, the smallest normal, one,
    one half and the largest finite value, of both signs, as bit patterns."""
    e, f = LAYOUT[fmt]
    top, bias = ((1 << e) - 1) << f, (1 << (e - 1)) - 1
    values = [0, top, top | (1 << (f - 1)), top | 1, top | (1 << (f - 1)) | 3, 1, (1 << f) - 1, 1 << f,
              bias << f, (bias - 1) << f, top - 1]
    return values + [v | (1 << (e + f)) for v in values]


def short_mantissa(rng: random.Random, fmt: str, tiny: bool) -> int:
    """A value with only the top half of its fraction (products of two tie), near 1.0, near either end of the
    range or near the square root of the smallest normal (products in the denormals)."""
    e, f = LAYOUT[fmt]
    bias = (1 << (e - 1)) - 1
    near_root = bias + rng.randrange(-bias // 2 - 3, -bias // 2 + 3)
    exponent = near_root if tiny else rng.choice([bias + rng.randrange(-6, 7), rng.randrange(1, bias // 2),
                                                  rng.randrange(bias + bias // 2, 2 * bias + 1), near_root])
    keep = (f + 1) // 2 + 1
    return (rng.getrandbits(1) << (e + f)) | (exponent << f) | (rng.getrandbits(keep) << (f - keep))


def lanes(rng: random.Random, fmt: str, count: int, tiny: bool, pool: list[int]) -> list[int]:
    e, f = LAYOUT[fmt]
    out = []
    for _ in range(count):
        pick = rng.random()
        if pick < 0.25:
            out.append(rng.choice(specials(fmt)))
        elif pick < 0.35:  # just above the smallest normal: sums below it underflow
            out.append((rng.getrandbits(1) << (e + f)) | (rng.randrange(1, 3) << f) | rng.getrandbits(f))
        elif pick < 0.55 and pool:  # the values whose products ZA holds negated
            out.append(rng.choice(pool))
        elif pick < 0.85:
            out.append(short_mantissa(rng, fmt, tiny))
        else:
            out.append(rng.getrandbits(e + f + 1))
    return out


def pack(values: list[int], fmt: str) -> bytes:
    return np.array(values, dtype=UINT[WIDTH[fmt]]).tobytes()


def to_float(bits: int, fmt: str) -> float:
    if fmt == "bf":
        return float(np.array([bits << 16], np.uint32).view(np.float32)[0])
    return float(np.array([bits], UINT[WIDTH[fmt]]).view(FLOAT[fmt])[0])


def from_float(value: float, fmt: str) -> int:
    with np.errstate(all="ignore"):  # an input generator, not a model: host rounding is fine here
        if fmt == "bf":
            return int(np.array([value], np.float32).view(np.uint32)[0]) >> 16
        return int(np.array([value], FLOAT[fmt]).view(UINT[WIDTH[fmt]])[0])


def _formats(shape) -> tuple[str, str]:
    """(the sources' format, ZA's format) of an FP form."""
    source = shape.fmt
    return source, (source if shape.kind == "fp" else "s")


def _extreme_vector(rng: random.Random, svlb: int) -> bytes:
    width = rng.choice((1, 2, 4, 8))
    bits = 8 * width
    choices = (0, 1, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1)
    return b"".join((rng.choice(choices) if rng.random() < 0.6 else rng.getrandbits(bits)).to_bytes(width, "little")
                    for _ in range(svlb // width))


def mop4_case(rng: random.Random, form, svl: int) -> tuple[str, str, dict]:
    text = random_instruction(rng, form)
    assert text is not None, form.id
    state = random_state(rng, svl, memory_bytes=4096)
    svlb = svl // 8
    shape = form.extra["mop4_shape"]
    if shape.kind == "int":
        for z in range(32):
            if rng.random() < 0.6:
                state["z"][z] = _extreme_vector(rng, svlb)
        return form.id, text, state
    source, accumulator = _formats(shape)
    tiny = rng.random() < 0.3
    pool = [short_mantissa(rng, source, tiny) for _ in range(3)] + [rng.choice(specials(source))]
    for z in range(32):
        state["z"][z] = pack(lanes(rng, source, svlb * 8 // WIDTH[source], tiny, pool), source)
    products = [from_float(-to_float(a, source) * to_float(b, source), accumulator) for a in pool for b in pool]
    za = lanes(rng, accumulator, svlb * svlb * 8 // WIDTH[accumulator], tiny, [])
    for k in range(len(za)):
        if rng.random() < 0.3:
            za[k] = rng.choice(products)
    state["za"] = pack(za, accumulator)
    return form.id, text, state


def test_the_forms_are_here():
    assert len(FORMS_HERE) == 128, len(FORMS_HERE)


@pytest.mark.needs_qemu
@pytest.mark.needs_clang
@pytest.mark.parametrize("svl", SVLS)
def test_every_quarter_tile_form_agrees_with_qemu(svl):
    rng = random.Random(SEED + svl)
    cases = [mop4_case(rng, form, svl) for form in FORMS_HERE for _ in range(CASES_PER_FORM)]
    comparison = compare_with_qemu(cases, svl)
    assert not comparison.mismatches, comparison.report(svl)
    assert comparison.changed >= 0.9 * comparison.compared, \
        f"only {comparison.changed} of {comparison.compared} cases changed anything on QEMU: nothing was compared"


@pytest.mark.needs_qemu
@pytest.mark.needs_clang
def test_a_misread_register_choice_is_found(monkeypatch):
    """The ASL's second Zn register feeds the right-hand quarters and the second Zm the lower ones; a reading
    that swaps them (Zn2 for the lower quarters, Zm2 for the right-hand ones, the 'natural' guess) must show as
    mismatches with QEMU for the pair forms."""
    from isasim.arm_sme.semantics import quarter_tile_outer_products as sem

    def swapped(shape, n, m, row_hv, col_hv):
        return n + (shape.nreg - 1) * row_hv, m + (shape.mreg - 1) * col_hv

    monkeypatch.setattr(sem, "_registers", swapped)
    rng = random.Random(SEED)
    forms = [form for form in FORMS_HERE if form.id in ("SMOP4A_zas_b_2x2", "FMOP4A_zas_s_2x1", "BFMOP4S_zas_h_1x2")]
    assert len(forms) == 3
    cases = [mop4_case(rng, form, 256) for form in forms]
    assert len(compare_with_qemu(cases, 256).mismatches) == 3


def _run(text: str, svl: int, state: dict, features=None) -> dict:
    return run_isasim(text, state, svl, features)


def test_one_register_each_is_the_whole_tile_outer_product():
    """With Zn and Zm one register each, the four quarters make the whole-tile outer product: SMOP4A equals
    SMOPA with every predicate element active, FMOP4S equals FMOPS (isasim against itself: an example)."""
    rng = random.Random(3)
    for quarter, whole in (("smop4a za1.s, z2.b, z18.b", "smopa za1.s, p0/m, p1/m, z2.b, z18.b"),
                           ("fmop4s za3.s, z4.s, z20.s", "fmops za3.s, p0/m, p1/m, z4.s, z20.s")):
        for svl in (128, 1024):
            state = random_state(rng, svl)
            state["p"] = [b"\xff" * (svl // 64)] * 16
            assert _run(quarter, svl, state)["za"] == _run(whole, svl, state)["za"]


def test_the_features_beside_mop4_are_checked():
    """SMOP4A .D needs FEAT_SME_I16I64 beside FEAT_SME_MOP4; without either it is UNDEFINED."""
    state = random_state(random.Random(4), 256)
    without = ["SME2", "SME_F64F64", "SME_F16F16", "SME_B16B16", "SME_MOP4"]
    assert _run("smop4a za0.d, z0.h, z16.h", 256, state, without)["fault"][0] == "UNDEFINED"
    assert _run("smop4a za0.s, z0.b, z16.b", 256, state, without[:-1])["fault"][0] == "UNDEFINED"
    assert "fault" not in _run("smop4a za0.s, z0.b, z16.b", 256, state, without)


def test_the_integer_sums_wrap():
    """UMOP4A .H->.D of the largest 16-bit values four times into a ZA element of 2^64 - 1 wraps modulo 2^64."""
    svl = 128
    state = random_state(random.Random(5), svl)
    state["z"][0] = state["z"][16] = b"\xff" * (svl // 8)
    state["za"] = b"\xff" * (svl // 8) ** 2
    za = np.frombuffer(_run("umop4a za0.d, z0.h, z16.h", svl, state)["za"], dtype=np.uint64)
    assert int(za[0]) == (4 * 0xFFFF * 0xFFFF - 1) % (1 << 64)
