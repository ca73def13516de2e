"""SME2's operations on groups of Z registers (issue 29: forms/multi_vector.py and multi_vector_fp.py) executed by
isasim and by QEMU (>= 10.1) at the five SVLs, compared through everything the harness observes.

Each case is one random encoding of a form (test_sve_forms_vs_qemu.sve_case) on a state whose Z registers hold
values worth comparing: for the integer forms, lanes at the ends of their range (0, 1, -1, the most negative and
positive: SQDMULH's one overflow, the narrows' saturation), shift amounts around +-esize (SRSHL/URSHL) and random
bits; for the FP forms, NaNs (quiet and signalling, both signs), infinities, zeros of both signs, denormals, the
largest finite values, values with half-way fractions (ties of FRINTN/FRINTA, of a narrowing FCVT) and integers
out of a conversion's range.  ISASIM_SME_MULTI_CASES (default 1) is the number of cases per form and SVL.
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from differential import compare_with_qemu
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.oracle.qemu import SVLS



def _load_sve_case():
    """test_sve_forms_vs_qemu.sve_case (the random encoding and state of one case), loaded from beside this file."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("_sve_forms_vs_qemu", Path(__file__).with_name("test_sve_forms_vs_qemu.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.sve_case


sve_case = _load_sve_case()
pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

SEED = 20291206
CASES_PER_FORM = int(os.environ.get("ISASIM_SME_MULTI_CASES", "1"))
MODULES = ("multi_vector_integer", "multi_vector_fp")


def _module(form) -> str:
    return getattr(getattr(form.execute, "func", form.execute), "__module__", "").rsplit(".", 1)[-1]


FORMS_HERE = [form for form in FORMS if _module(form) in MODULES and form.feature != "SVE_BFSCALE"]
# FEAT_SVE_B16B16's forms run where the configuration lists it; QEMU has it only with SVE on (config.py)
B16B16_CONFIG = ["SME2", "SME_I16I64", "SVE", "SVE_B16B16"]
_DTYPES = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def _esize(form) -> int:
    suffix = form.id.rsplit("_", 1)[-1]
    return {"b": 8, "h": 16, "s": 32, "d": 64, "q": 64}.get(suffix, 32)


def _integer_lanes(rng: random.Random, count: int, esize: int) -> list[int]:
    top = 1 << esize
    edges = [0, 1, top - 1, 1 << (esize - 1), (1 << (esize - 1)) - 1, (1 << (esize - 1)) + 1, 2, top - 2]
    lanes = []
    for _ in range(count):
        pick = rng.random()
        if pick < 0.3:
            lanes.append(rng.choice(edges))
        elif pick < 0.5:  # a shift amount (the low byte) around +-esize
            lanes.append((rng.getrandbits(esize) & ~0xFF | (rng.randrange(-esize - 3, esize + 4) & 0xFF)) % top)
        elif pick < 0.7:  # small, either sign
            lanes.append(rng.randrange(-300, 300) % top)
        else:
            lanes.append(rng.getrandbits(esize))
    return lanes


# FP special values per width: zeros, infinities, quiet and signalling NaNs (with payloads), denormals, the
# smallest normal, 1, -1, 0.5, 1.5, 2.5 (ties), the largest finite, and integers at the edge of int32/uint32
_SPECIAL = {
    16: [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7D01, 0xFC01, 0x0001, 0x83FF, 0x0400, 0x3C00, 0xBC00,
         0x3800, 0x3E00, 0x4100, 0x7BFF, 0xFBFF],
    32: [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00001, 0x7F800001, 0xFF812345,
         0x00000001, 0x807FFFFF, 0x00800000, 0x3F800000, 0xBF800000, 0x3F000000, 0x3FC00000, 0x40200000,
         0x7F7FFFFF, 0xFF7FFFFF, 0x4F000000, 0xCF000000, 0x4F800000, 0x4EFFFFFF, 0xCF000001, 0x477FF000,
         0x477FF800, 0x38800000, 0x387FE000, 0x33000000, 0x33800001],
    64: [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001, 1,
         0x3FF0000000000000, 0xBFF0000000000000, 0x3FE0000000000000, 0x7FEFFFFFFFFFFFFF],
}
_BF16 = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x0001, 0x807F, 0x0080, 0x3F80, 0xBF80, 0x7F7F,
         0x3F00, 0x3FC0]


def _fp_lanes(rng: random.Random, count: int, esize: int, bf16: bool) -> list[int]:
    specials = _BF16 if bf16 else _SPECIAL[esize]
    fraction = {16: 7 if bf16 else 10, 32: 23, 64: 52}[esize]
    exponent_bits = esize - 1 - fraction
    bias = (1 << (exponent_bits - 1)) - 1
    lanes = []
    for _ in range(count):
        pick = rng.random()
        if pick < 0.35:
            lanes.append(rng.choice(specials))
        elif pick < 0.65:  # near 1 with a short fraction: ties when rounded to an integer or narrowed
            exponent = bias + rng.randrange(-2, 12)
            keep = rng.randrange(1, 6)
            frac = rng.getrandbits(keep) << (fraction - keep)
            if esize == 32 and rng.random() < 0.3:  # exactly half an FP16/BF16 ulp beyond a short fraction
                frac = (rng.getrandbits(10) << 13) | (1 << 12)
            lanes.append((rng.getrandbits(1) << (esize - 1)) | (exponent << fraction) | frac)
        elif pick < 0.8:  # near the ends of the range, and the denormals
            exponent = rng.choice((0, 1, 2, (1 << exponent_bits) - 2, bias + 30, bias + 31, bias + 32))
            lanes.append((rng.getrandbits(1) << (esize - 1)) | (exponent << fraction) | rng.getrandbits(fraction))
        else:
            lanes.append(rng.getrandbits(esize))
    return lanes


def multi_case(rng: random.Random, form, svl: int):
    label, text, state = sve_case(rng, form, svl)
    if form.mnemonic == "movprfx":  # a MOVPRFX comes before the destructive instruction it prefixes
        d = int(text.split()[1].strip("z,"))
        text += f"\nsclamp z{d}.s, z{(d + 1) % 32}.s, z{(d + 2) % 32}.s"
    esize = _esize(form)
    fp = _module(form) == "multi_vector_fp"
    source = {8: 8, 16: 16, 32: 32, 64: 64}[esize]
    if fp:
        if any(w in form.id for w in ("FCVT_", "FCVTN_", "BFCVT")):
            source = 32
        elif any(w in form.id for w in ("SCVTF", "UCVTF")):
            fp = False
    elif any(w in form.id for w in ("CVT", "RSHR")):  # the narrows read the wider elements
        source = {"_x2_h": 32, "_x4_b": 32, "_x4_h": 64}.get(form.id[-5:], 32)
    bf16 = form.mnemonic.startswith("bf") and "CVT" not in form.id
    for i in range(32):
        if rng.random() < 0.85:
            count = svl // source
            lanes = _fp_lanes(rng, count, source, bf16) if fp else _integer_lanes(rng, count, source)
            state["z"][i] = np.array(lanes, dtype=_DTYPES[source]).tobytes()
    return label, text, state


def test_the_forms_are_here():
    assert len(FORMS_HERE) >= 305, len(FORMS_HERE)


@pytest.mark.parametrize("svl", SVLS)
def test_every_multi_vector_form_agrees_with_qemu(svl):
    rng = random.Random(SEED + svl)
    cases = [multi_case(rng, form, svl) for form in FORMS_HERE for _ in range(CASES_PER_FORM)]
    b16b16 = {form.id for form in FORMS_HERE if form.feature == "SVE_B16B16"}
    for features, chosen in ((None, [c for c in cases if c[0] not in b16b16]),
                             (B16B16_CONFIG, [c for c in cases if c[0] in b16b16])):
        comparison = compare_with_qemu(chosen, svl, features=features)
        assert not comparison.mismatches, comparison.report(svl)
        assert comparison.deviations == {}
        assert comparison.changed >= 0.8 * comparison.compared, \
            f"only {comparison.changed} of {comparison.compared} cases changed state on QEMU: nothing was compared"


def test_b16b16_forms_are_undefined_without_the_feature():
    """BFMAX... with the default configuration (no SVE_B16B16) are UNDEFINED, as on QEMU's -cpu max,sve=off."""
    rng = random.Random(SEED)
    cases = [multi_case(rng, form, 256) for form in FORMS_HERE if form.feature == "SVE_B16B16"][:4]
    comparison = compare_with_qemu(cases, 256)
    assert not comparison.mismatches, comparison.report(256)
    assert comparison.compared == len(cases) == 4


# ---- BFMUL, BFSCALE (FEAT_SVE_BFSCALE): QEMU 11.1 does not have them, so hand-worked values from the Arm rules ------

def _bf16_machine():
    from isasim.arm_sme.context import SmeContext
    from isasim.arm_sme.state import ArmSmeState
    from isasim.core.journal import Journal

    state = ArmSmeState(Journal(), {"svl": 128, "features": ["SME2", "SVE_BFSCALE"]})
    state.sm = True
    return SmeContext(state, None)


# (Zn lanes, Zm lanes, BFMUL's lanes, BFSCALE's lanes): 8 BFloat16 lanes of a 128-bit vector
BF16_CASES = [
    # 1.5 * 2; (1 + 2^-7)^2 = 1 + 2^-6 + 2^-14 rounds to nearest (0x3F82), not to odd (0x3F83); sNaN quieted;
    # 0 * inf invalid (the default NaN); -0 * 3 = -0; a denormal times 2^7; the largest finite times 2 overflows
    ([0x3FC0, 0x3F81, 0x7F81, 0x0000, 0x8000, 0x0001, 0x7F7F, 0x3F80],
     [0x4000, 0x3F81, 0x3F80, 0x7F80, 0x4040, 0x4300, 0x4000, 0xBF80],
     [0x4040, 0x3F82, 0x7FC1, 0x7FC0, 0x8000, 0x0080, 0x7F80, 0xBF80]),
]
# BFSCALE: 1.0 * 2^3 = 8 (0x4100), 2^-1, 2^-133 (the smallest denormal), 2^200 overflows, NaN kept quiet,
# -0 stays -0, a denormal * 2^-1 ties to even (0x0001 -> 0), 1.5 * 2^-(126+7) rounds up to 0x0002
BF16_SCALE = ([0x3F80, 0x3F80, 0x3F80, 0x3F80, 0x7F81, 0x8000, 0x0001, 0x3FC0],
              [3, 0xFFFF, (-133) & 0xFFFF, 200, 1, 5, 0xFFFF, (-133) & 0xFFFF],
              [0x4100, 0x3F00, 0x0001, 0x7F80, 0x7FC1, 0x8000, 0x0000, 0x0002])


def test_bfmul_and_bfscale_by_hand():
    from isasim.arm_sme.semantics import multi_vector_fp as mvf

    cpu = _bf16_machine()
    for zn, zm, product in BF16_CASES:
        cpu.set_Z(2, np.array(zn, dtype=np.uint16).view(np.uint8))
        cpu.set_Z(3, np.array(zn, dtype=np.uint16).view(np.uint8))
        cpu.set_Z(4, np.array(zm, dtype=np.uint16).view(np.uint8))
        mvf.bfmul(cpu, 0, 2, 4, nreg=2, single=True)
        for r in (0, 1):
            assert cpu.Z(r).view(np.uint16).tolist() == product
    zn, scale, scaled = BF16_SCALE
    for r in (6, 7):
        cpu.set_Z(r, np.array(zn, dtype=np.uint16).view(np.uint8))
    cpu.set_Z(8, np.array(scale, dtype=np.uint16).view(np.uint8))
    mvf.bfscale(cpu, 6, 6, 8, nreg=2, single=True)
    assert cpu.Z(6).view(np.uint16).tolist() == scaled == cpu.Z(7).view(np.uint16).tolist()


@pytest.mark.needs_clang
def test_movprfx_and_its_partner_agree_with_clang():
    """MOVPRFX (unpredicated) beside the SCLAMP it prefixes (clang refuses it before anything else): 60 random pairs
    give clang's words and print as clang prints them (test_encoding_vs_clang leaves out the "prefix" forms)."""
    from clang_oracle import clang_encode
    from isasim.arm_sme import ISA

    rng = random.Random(SEED)
    lines = []
    for _ in range(60):
        d, n = rng.randrange(32), rng.randrange(32)
        lines += [f"movprfx z{d}, z{n}", f"sclamp z{d}.h, z{(d + 1) % 32}.h, z{(d + 5) % 32}.h"]
    for line, (clang_text, clang_word) in zip(lines, clang_encode(lines)):
        instruction = ISA.assemble(line).instructions[0]
        assert clang_word == int.from_bytes(instruction.encoding, "little"), (line, clang_text)
        assert " ".join(clang_text.split()) == ISA.disassemble(instruction.encoding).instructions[0].text, line


def test_bfmul_needs_its_feature():
    """FEAT_SVE_BFSCALE is off by default (QEMU 11.1 has none): BFMUL is UNDEFINED there and runs where it is named."""
    from differential import random_state, run_isasim

    state = random_state(random.Random(SEED), 128, memory_bytes=4096)
    text = "bfmul { z0.h, z1.h }, { z2.h, z3.h }, z4.h"
    assert run_isasim(text, state, 128).get("fault", ("none",))[0] == "UNDEFINED"
    ran = run_isasim(text, state, 128, ["SME2", "SVE_BFSCALE"])
    assert "fault" not in ran or ran["fault"] is None, ran.get("fault")
