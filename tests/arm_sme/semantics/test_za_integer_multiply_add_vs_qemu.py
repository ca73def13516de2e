"""The SME2 integer multiply-adds into ZA and the integer adds into ZA vector groups (issue 29:
forms/za_integer_multiply_add.py: SMLAL/SMLSL/UMLAL/UMLSL, SMLALL/SMLSLL/UMLALL/UMLSLL/USMLALL/SUMLALL, ADD/SUB
into ZA, the multi-vector ADD) executed by isasim and by QEMU at the five SVLs, compared through everything the
harness observes (X, NZCV, Z, P, ZA, ZT0, memory, faults).

Each case is one random encoding of a form on a random state; the vector select register Wv (W8-W11) holds
a small value, an edge (2^31, 2^32 - 1, ...) or random bits, so that the group's MOD and the rounding down to
a multiple of the ways are exercised, and the Z registers hold extreme elements (0, 1, the largest and the
most negative values of each width) beside random ones, so that the products and sums wrap.
ISASIM_SME_ZA_MLA_CASES (default 1) is the number of cases per form and SVL.
"""

from __future__ import annotations

import os
import random

import pytest

from differential import compare_with_qemu, random_state
from isasim.arm_sme import ISA
from isasim.arm_sme.forms import FORMS
from isasim.arm_sme.oracle.qemu import SVLS

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

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


def test_the_forms_are_here():
    # 2-way: 4 mnemonics x 8 forms; 4-way: 9 families x 8 forms (four .S, USMLALL, four .D), SUMLALL 5;
    # ADD/SUB into ZA: 24; the multi-vector ADD: 8
    assert len(FORMS_HERE) == 32 + 9 * 8 + 5 + 24 + 8, len(FORMS_HERE)


@pytest.mark.parametrize("svl", SVLS)
def test_every_form_agrees_with_qemu(svl):
    rng = random.Random(SEED + svl)
    cases = [za_case(rng, form, svl) for form in FORMS_HERE for _ in range(CASES_PER_FORM)]
    comparison = compare_with_qemu(cases, svl)
    assert not comparison.mismatches, comparison.report(svl)
    assert comparison.deviations == {}
    assert comparison.changed >= 0.95 * comparison.compared, \
        f"only {comparison.changed} of {comparison.compared} cases changed state on QEMU: nothing was compared"
