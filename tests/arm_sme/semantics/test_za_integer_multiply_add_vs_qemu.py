"""The SME2 integer multiply-adds into ZA and the integer adds into ZA vector groups (issue 29:
forms/za_integer_multiply_add.py: SMLAL/SMLSL/UMLAL/UMLSL, SMLALL/SMLSLL/UMLALL/UMLSLL/USMLALL/SUMLALL, ADD/SUB
into ZA, the multi-vector ADD) executed by isasim and by QEMU at the five SVLs, compared through everything the
harness observes (X, NZCV, Z, P, ZA, ZT0, memory, faults).

Each case is one random encoding of a form on a random state; the vector select register Wv (W8-W11) holds
a small value, an edge (2^31, 2^32 - 1, ...) or random bits, so that the group's MOD and the rounding down to
a multiple of the ways are exercised, and the Z registers hold extreme elements (0, 1, the largest and the
most negative values of each width) beside random ones, so that the products and sums wrap.
ISASIM_SME_ZA_MLA_CASES (default 1) is the number of cases per form and SVL.  A few hand-worked examples and
the lines neither isasim nor clang encodes come first (examples only: QEMU is the oracle).
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

from clang_oracle import assert_refused_in_one_line, clang_accepts
from differential import compare_with_qemu, random_state
from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.oracle.qemu import SVLS

from smeharness import run, vector, za_elements

ON = 3  # SVCR: streaming mode and ZA on

SEED = 20291206
CASES_PER_FORM = int(os.environ.get("ISASIM_SME_ZA_MLA_CASES", "1"))
EDGES = [0, 1, 2, 3, 5, 7, 15, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, (1 << 32) + 3, (1 << 64) - 1]


def _module(form) -> str:
    return getattr(getattr(form.execute, "func", form.execute), "__module__", "").rsplit(".", 1)[-1]


FORMS_HERE = [form for form in FORMS if _module(form) == "za_integer_multiply_add"]


def _extreme_vector(rng: random.Random, svlb: int) -> bytes:
    """A Z register's bytes whose elements (of a random width) are extremes or random."""
    width = rng.choice((1, 2, 4, 8))
    bits = 8 * width
    choices = (0, 1, (1 << bits) - 1, 1 << (bits - 1), (1 << (bits - 1)) - 1)
    return b"".join((rng.choice(choices) if rng.random() < 0.6 else rng.getrandbits(bits)).to_bytes(width, "little")
                    for _ in range(svlb // width))


def za_case(rng: random.Random, form, svl: int) -> tuple[str, str, dict]:
    for _ in range(50):
        fields = {name: rng.randrange(1 << box.width) for name, box in form.encoding.fields.items()}
        try:
            instruction = ISA.disassemble(form.encoding.pack(fields).to_bytes(4, "little")).instructions[0]
        except Exception:
            continue
        if instruction.form is form:
            break
    else:
        raise AssertionError(form.id)
    state = random_state(rng, svl)
    for v in range(8, 12):
        state["x"][v] = rng.choice((rng.randrange(64), rng.choice(EDGES), rng.getrandbits(64)))
    for z in range(32):
        if rng.random() < 0.5:
            state["z"][z] = _extreme_vector(rng, svl // 8)
    return form.id, instruction.text, state


def test_smlal_rounds_the_vector_select_down_and_gives_each_product_its_own_vector():
    # SVL 512: 64 ZA vectors; VGx1: vstride 64; w8 = 5 (junk above bit 31), offset 2 -> 7 -> rounded down to 6
    arrays = {"z0": vector([3, -2], np.int16, 512), "z1": vector([-5], np.int16, 512),
              "za": vector([10], np.int32, 512) * 64}
    machine, result = run("smlal za.s[w8, 2:3], z0.h, z1.h", regs={"svcr": ON, "x8": 0xABCD000000000005},
                          arrays=arrays)
    assert result.fault is None
    assert list(za_elements(machine, 6, np.int32)) == [10 - 15] * 16  # the even elements: 3 x -5
    assert list(za_elements(machine, 7, np.int32)) == [10 + 10] * 16  # the odd elements: -2 x -5
    untouched = [r for r in range(64) if (za_elements(machine, r, np.int32) == 10).all()]
    assert untouched == [r for r in range(64) if r not in (6, 7)]


def test_umlsll_d_indexed_wraps_modulo_2_to_the_64():
    # 4-way, 16-bit into 64-bit: ZA vector vec + i takes element 4e + i of Zn times element `index` of each segment
    arrays = {"z4": vector([0xFFFF, 1, 2, 3], np.uint16, 128),
              "z2": vector([7, 0xFFFF, 0, 0, 0, 0, 0, 0], np.uint16, 128)}
    machine, _ = run("umlsll za.d[w9, 4:7], z4.h, z2.h[1]", svl=128, regs={"svcr": ON, "x9": 0},
                     arrays=arrays, features=["SME_I16I64"])
    products = [0xFFFF * 0xFFFF, 0xFFFF, 2 * 0xFFFF, 3 * 0xFFFF]
    for i, product in enumerate(products):
        assert list(za_elements(machine, 4 + i, np.uint64)) == [(-product) % (1 << 64)] * 2


def test_add_array_results_write_za_and_accumulators_add_to_it():
    arrays = {"z0": vector([1], np.uint32, 128), "z1": vector([2], np.uint32, 128),
              "z5": vector([0xFFFFFFFF], np.uint32, 128), "za": vector([100], np.uint32, 128) * 16}
    machine, _ = run("add za.s[w8, 1, vgx2], {z0.s-z1.s}, z5.s", svl=128, regs={"svcr": ON, "x8": 0}, arrays=arrays)
    assert list(za_elements(machine, 1, np.uint32)) == [0] * 4 and list(za_elements(machine, 9, np.uint32)) == [1] * 4
    machine, _ = run("sub za.s[w8, 1, vgx2], {z0.s-z1.s}", svl=128, regs={"svcr": ON, "x8": 0}, arrays=arrays)
    assert list(za_elements(machine, 1, np.uint32)) == [99] * 4 and list(za_elements(machine, 9, np.uint32)) == [98] * 4


def test_the_views_type_every_register_of_the_lists():
    from isasim.arm_sme import ISA
    from isasim.arm_sme.views.types import operand_types

    add = ISA.assemble("add {z28.h - z31.h}, {z28.h - z31.h}, z15.h").instructions[0]
    assert operand_types(add) == {"z28": "uint16", "z29": "uint16", "z30": "uint16", "z31": "uint16", "z15": "uint16"}
    mla = ISA.assemble("usmlall za.s[w8, 4:7, vgx2], {z31.b, z0.b}, z4.b").instructions[0]
    assert operand_types(mla) == {"za": "int32", "z31": "uint8", "z0": "uint8", "z4": "int8"}


NOT_ENCODABLE = [
    ("smlal za.s[w8, 1:2], z0.h, z0.h", "multiple of 2"),  # the range starts at a multiple of the ways
    ("smlal za.s[w8, 0:2], z0.h, z0.h", "o:o+1"),
    ("smlall za.s[w8, 16:19], z0.b, z0.b", "from 0 to 12"),
    ("smlall za.s[w8, 8:11, vgx2], {z0.b-z1.b}, z0.b", "from 0 to 4"),  # VGx2/VGx4 have one offset bit
    ("smlal za.s[w8, #0:1], z0.h, z0.h", "without '#'"),
    ("smlal za.s[w8, 0:1, vgx1], z0.h, z0.h", "vgx2 or vgx4"),
    ("smlal za.s[w8, 0:1], z0.h, z16.h", "z0-z15"),
    ("smlall za.s[w8, 0:3], z0.b, z0.b[16]", "0-15"),
    ("smlall za.d[w8, 0:3], z0.h, z0.h[8]", "0-7"),
    ("smlal za.s[w12, 0:1], z0.h, z0.h", "w8-w11"),
    ("smlal za.s[w8, 0:1, vgx2], {z1.h-z2.h}, {z4.h-z5.h}", "multiple of 2"),
    ("sumlall za.s[w8, 0:3, vgx2], {z0.b-z1.b}, {z2.b-z3.b}", "use USMLALL"),
    ("add za.s[w8, 8], {z0.s-z1.s}", "0-7"),
    ("add {z0.h-z1.h}, {z2.h-z3.h}, z1.h", "the destination list"),
]


def test_what_neither_encodes_is_refused_in_one_line():
    for line, words in NOT_ENCODABLE:
        assert_refused_in_one_line(line, words)


@pytest.mark.needs_clang
def test_clang_refuses_them_too():
    assert clang_accepts([line for line, _ in NOT_ENCODABLE]) == []


def test_the_sme_i16i64_forms_are_undefined_without_the_feature():
    line = "smlall za.d[w8, 0:3], z0.h, z1.h"
    _, result = run(line, svl=128, regs={"svcr": ON}, features=["SME2"])
    assert result.fault is not None and result.fault.kind == "UNDEFINED", result.fault
    _, result = run(line, svl=128, regs={"svcr": ON}, features=["SME2", "SME_I16I64"])
    assert result.fault is None


@pytest.mark.needs_qemu
@pytest.mark.needs_clang
def test_the_forms_are_here():
    # 2-way: 4 mnemonics x 8 forms; 4-way: 9 families x 8 forms (four .S, USMLALL, four .D), SUMLALL 5;
    # ADD/SUB into ZA: 24; the multi-vector ADD: 8
    assert len(FORMS_HERE) == 32 + 9 * 8 + 5 + 24 + 8, len(FORMS_HERE)


@pytest.mark.needs_qemu
@pytest.mark.needs_clang
@pytest.mark.parametrize("svl", SVLS)
def test_every_form_agrees_with_qemu(svl):
    rng = random.Random(SEED + svl)
    cases = [za_case(rng, form, svl) for form in FORMS_HERE for _ in range(CASES_PER_FORM)]
    comparison = compare_with_qemu(cases, svl)
    assert not comparison.mismatches, comparison.report(svl)
    assert comparison.deviations == {}
    assert comparison.changed >= 0.95 * comparison.compared, \
        f"only {comparison.changed} of {comparison.compared} cases changed state on QEMU: nothing was compared"


@pytest.mark.needs_qemu
@pytest.mark.needs_clang
def test_streaming_mode_or_za_off_faults_as_on_qemu():
    """SVCR 0, 1 (SM only) or 2 (ZA only): the ZA forms are UNDEFINED unless both are on, the multi-vector ADD
    unless streaming mode is; one case per form at SVL 256."""
    rng = random.Random(SEED - 1)
    cases = []
    for form in FORMS_HERE:
        label, text, state = za_case(rng, form, 256)
        state["svcr"] = rng.choice((0, 1, 2))
        cases.append((f"{label} svcr={state['svcr']}", text, state))
    comparison = compare_with_qemu(cases, 256)
    assert not comparison.mismatches, comparison.report(256)
