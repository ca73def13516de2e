"""The QEMU differential harness itself (tests/arm_sme/differential.py): it compares what it
claims to compare, so a planted semantic bug, a wrong fault and a changed memory byte are found."""

from __future__ import annotations

import random

import pytest

from isasim.arm_sme.semantics import integer_dots
from differential import address_in, compare_with_qemu, first_difference, random_state, run_isasim

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]
SVL = 256


def _cases(rng):
    cases = []
    for i in range(4):
        state = random_state(rng, SVL)
        cases.append((f"udot {i}", "udot za.s[w8, 1, vgx2], {z0.b-z1.b}, z4.b", state))
    state = random_state(rng, SVL)
    state["x"][3] = address_in(rng, state, 64)
    cases.append(("store", "ptrue p0.s\nst1w {z1.s}, p0, [x3]", state))  # memory changes
    state = random_state(rng, SVL)
    state["x"][3] = 0x40  # unmapped: both fault at instruction 1
    cases.append(("fault", "ptrue p0.s\nld1w {z1.s}, p0/z, [x3]", state))
    state = random_state(rng, SVL, svcr=0)
    cases.append(("undefined", "udot za.s[w8, 1, vgx2], {z0.b-z1.b}, z4.b", state))  # SM off: SIGILL
    return cases


def test_agreeing_cases_agree_and_change_state():
    comparison = compare_with_qemu(_cases(random.Random(1)), SVL)
    assert not comparison.mismatches, comparison.report(SVL)
    assert comparison.compared == comparison.changed == 7


def test_a_planted_bug_is_found(monkeypatch):
    real = integer_dots.za_dot

    def off_by_one(cpu, shape, group, n, m):
        real(cpu, shape, group, n, (m + 1) % 32 if shape.second == "single" else m)

    monkeypatch.setattr(integer_dots, "za_dot", off_by_one)
    monkeypatch.setenv("ISASIM_ENGINE", "python")  # the bug is planted in the Python semantics: UDOT's compiled body has none
    comparison = compare_with_qemu(_cases(random.Random(1))[:4], SVL)
    assert len(comparison.mismatches) == 4 and all("za row" in m for m in comparison.mismatches), comparison.mismatches


def test_a_wrong_fault_index_and_a_memory_byte_are_found():
    rng = random.Random(2)
    state = random_state(rng, SVL)
    state["x"][3] = address_in(rng, state, 64)
    cases = [("store", "ptrue p0.s\nst1w {z1.s}, p0, [x3]", state)]
    comparison = compare_with_qemu(cases, SVL, deviations=lambda *args: "known")
    assert comparison.deviations == {} and comparison.compared == 1  # agreeing cases never reach the hook
    # two isasim runs of programs that differ in one register number: the store's bytes differ
    ours = run_isasim("ptrue p0.s\nst1w {z1.s}, p0, [x3]", state, SVL)
    theirs = run_isasim("ptrue p0.s\nst1w {z2.s}, p0, [x3]", state, SVL)
    assert first_difference(ours, theirs, SVL).startswith("memory 0x")
    faulting = run_isasim("nop\nnop\nudf #0", state, SVL)
    assert first_difference(faulting, run_isasim("nop\nudf #0", state, SVL), SVL) == \
        "isasim ('UNDEFINED', 2), qemu ('UNDEFINED', 1)"
