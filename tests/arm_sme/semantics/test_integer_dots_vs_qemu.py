"""Every integer ZA dot form (horizontal and vertical) executed by isasim and by QEMU (>= 10.1, the
first with SME2), compared through the shared harness (differential.py).

For each SVL and each dot form: random encodings of the form (random Zn, Zm, Wv, offset, index),
random Z registers, predicates and ZA, and vector-select registers holding edge values (0,
vstride - 1, vstride, 0x7fffffff, 0xffffffff, junk in the upper 32 bits) or random ones, where
vstride comes from the form's own group size (the vertical dots are VGx2-only or VGx4-only).
QEMU runs every case of one SVL in one process; everything both can observe must agree.
"""

from __future__ import annotations

import random

import pytest

from differential import compare_with_qemu, random_instruction, random_state
from isasim.arm_sme.forms import FORMS

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

SVLS = (128, 256, 512, 1024, 2048)
CASES_PER_FORM = 4  # per SVL: 54 forms (46 + 8 vertical) x 5 SVLs x 4 = 1,080 cases
SEED = 20261201
DOTS = [form for form in FORMS if form.group == "dot"]


def edge_values(vstride: int) -> list[int]:
    return [0, vstride - 1, vstride, 0x7FFFFFFF, 0xFFFFFFFF, 0xDEADBEEF_00000000 | (vstride + 1)]


def dot_case(rng: random.Random, form, svl: int) -> tuple[str, str, dict]:
    """(label, the instruction's text, the state before) for one random encoding of ``form``."""
    text = random_instruction(rng, form)
    assert text is not None, form.id
    vstride = svl // 8 // form.extra["shape"].nreg
    state = random_state(rng, svl, memory_bytes=4096)  # a dot touches no memory: one page is plenty
    for v in range(8, 12):
        state["x"][v] = rng.choice(edge_values(vstride)) if rng.random() < 0.6 else rng.getrandbits(64)
    return form.id, text, state


@pytest.mark.parametrize("svl", SVLS)
def test_every_dot_form_agrees_with_qemu(svl):
    rng = random.Random(SEED + svl)
    cases = [dot_case(rng, form, svl) for form in DOTS for _ in range(CASES_PER_FORM)]
    comparison = compare_with_qemu(cases, svl)
    assert not comparison.mismatches, comparison.report(svl)
    assert comparison.deviations == {}
    assert comparison.changed >= 0.9 * comparison.compared, \
        f"only {comparison.changed} of {comparison.compared} cases changed state on QEMU: nothing was compared"
