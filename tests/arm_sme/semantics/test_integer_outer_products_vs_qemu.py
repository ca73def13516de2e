"""Every integer outer-product form (UMOPA ... SUMOPS: 4-way .B->.S, 4-way .H->.D, 2-way .H->.S)
executed by isasim and by QEMU (>= 10.1), compared through the shared harness (differential.py).

For each SVL and each form: random encodings (random ZAda, Pn, Pm, Zn, Zm, so Zn = Zm and Pn = Pm
happen too), random Z and ZA, and the two governing predicates drawn from patterns: random bits
(every narrow element's own bit decides, including the bits of a .H element that are not its
lowest), all true, all false, a leading run (as WHILELT makes), and a single active element.
Everything both can observe must agree; a few cases with streaming mode or ZA off must be
UNDEFINED on both.
"""

from __future__ import annotations

import random

import pytest

from differential import compare_with_qemu, random_instruction, random_state
from isasim.arm_sme.forms import FORMS

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

SVLS = (128, 256, 512, 1024, 2048)
CASES_PER_FORM = 6  # per SVL: 20 forms x 6 = 120 cases, 600 over the five SVLs
SEED = 20261202
OUTERS = [form for form in FORMS if form.group == "outer"]


def predicate_pattern(rng: random.Random, svl: int) -> bytes:
    """One predicate register (SVL/8 bits) of a random kind."""
    bits = svl // 8
    kind = rng.choice(["random", "random", "random", "all", "leading", "one", "none"])
    if kind == "random":
        return rng.randbytes(bits // 8)
    if kind == "all":
        value = (1 << bits) - 1
    elif kind == "none":
        value = 0
    elif kind == "leading":
        value = (1 << rng.randrange(bits + 1)) - 1
    else:
        value = 1 << rng.randrange(bits)
    return value.to_bytes(bits // 8, "little")


def outer_cases(rng: random.Random, svl: int) -> list:
    cases = []
    for form in OUTERS:
        for _ in range(CASES_PER_FORM):
            text = random_instruction(rng, form)
            assert text is not None, form.id
            state = random_state(rng, svl)
            state["p"] = [predicate_pattern(rng, svl) for _ in range(16)]
            cases.append((form.id, text, state))
    return cases


def mode_off_cases(rng: random.Random, svl: int, count: int = 6) -> list:
    """Random outer products with streaming mode, ZA or both off: UNDEFINED (SIGILL) on both, at index 0."""
    cases = []
    for _ in range(count):
        form = rng.choice(OUTERS)
        state = random_state(rng, svl, svcr=rng.choice((0, 1, 2)))
        cases.append((f"{form.id} mode off", random_instruction(rng, form), state))
    return cases


def test_there_are_twenty_outer_product_forms():
    assert len(OUTERS) == 20  # 4 mnemonics x MOPA/MOPS x (.B->.S, .H->.D) + U/S x MOPA/MOPS 2-way .H->.S


@pytest.mark.parametrize("svl", SVLS)
def test_every_outer_product_form_agrees_with_qemu(svl):
    cases = outer_cases(random.Random(SEED + svl), svl)
    assert {label for label, _text, _state in cases} == {form.id for form in OUTERS}
    comparison = compare_with_qemu(cases + mode_off_cases(random.Random(SEED - svl), svl), svl)
    assert not comparison.mismatches, comparison.report(svl)
    assert comparison.deviations == {}
    # a case with Pn or Pm all false changes nothing; most cases must change ZA for the test to mean anything
    assert comparison.changed >= 0.5 * comparison.compared, f"only {comparison.changed} cases changed state"


def test_a_planted_predicate_bug_is_found(monkeypatch):
    """The comparison can fail: governing the narrow elements by the predicate bit of their wide
    (esize) container, a plausible misreading of the ASL, disagrees with QEMU."""
    import numpy as np

    from isasim.arm_sme.semantics import integer_outer_products

    def wide_predicate(cpu, z, g, shape, signed):
        dim = cpu.VL // shape.esize
        elements = cpu.Z(z).view(integer_outer_products.SOURCE_TYPES[shape.source_bits, signed]).astype(np.int64)
        active = cpu.ActiveElements(g, shape.esize)
        return np.where(active[:, None], elements.reshape(dim, shape.ways), 0)

    monkeypatch.setattr(integer_outer_products, "_masked_operand", wide_predicate)
    monkeypatch.setenv("ISASIM_ENGINE", "python")  # planted in the Python semantics, which the compiled MOPA bypasses
    svl = 256
    comparison = compare_with_qemu(outer_cases(random.Random(SEED), svl)[:40], svl)
    assert len(comparison.mismatches) >= 10, comparison.report(svl)
