"""PTRUE, WHILELT/WHILELO, CNTB/CNTH/CNTW/CNTD, RDSVL, ADDVL, ADDSVL and ADDSPL: hand-worked
examples of the Arm ARM's DecodePredCount, the WHILE comparisons and their flags, and the
vector-length arithmetic, at several SVLs."""

from __future__ import annotations

import pytest

from isasim.arm_sme.semantics.predicates_and_counts import pred_count
from smeharness import run

STREAMING = {"svcr": 1}


def active(machine, p: int, esize: int) -> list[int]:
    """The elements of p<p> (esize bits each) that are active: bit e*esize/8 of the predicate."""
    bits = int.from_bytes(machine.state.p[p].tobytes(), "little")
    step = esize // 8
    return [e for e in range(machine.state.svl // esize) if bits >> (e * step) & 1]


@pytest.mark.parametrize("pattern, elements, count", [
    (0, 16, 16), (0, 12, 8), (0, 1, 1), (5, 4, 0), (5, 8, 5), (9, 16, 16), (9, 8, 0), (13, 256, 256),
    (29, 10, 8), (30, 10, 9), (31, 10, 10), (14, 64, 0), (28, 64, 0)])
def test_decode_pred_count(pattern, elements, count):
    assert pred_count(pattern, 8, elements * 8) == count


@pytest.mark.parametrize("svl", [128, 512, 2048])
def test_ptrue_sets_the_lowest_bit_of_each_active_element(svl):
    machine, result = run("ptrue p1.s, vl3\nptrue p2.d\nptrue p3.b, mul3\nptrue p4.h, #20", svl=svl, regs=STREAMING)
    assert result.fault is None
    assert active(machine, 1, 32) == [0, 1, 2]
    bits = int.from_bytes(machine.state.p[2].tobytes(), "little")
    assert bits == sum(1 << (8 * e) for e in range(svl // 64))  # one bit per 8 bytes, the rest clear
    elements = svl // 8
    assert active(machine, 3, 8) == list(range(elements - elements % 3))
    assert not machine.state.p[4].any()


def test_whilelt_is_signed_and_sets_the_flags():
    machine, _ = run("whilelt p0.s, x1, x2", svl=512, regs={**STREAMING, "x1": (1 << 64) - 3, "x2": 2})
    assert active(machine, 0, 32) == [0, 1, 2, 3, 4]  # -3 + e < 2 for e = 0..4
    assert machine.state.nzcv == 0b1010 << 28  # N: the first is active; C: the last is not


def test_whilelo_is_unsigned_and_w_forms_read_32_bits():
    machine, _ = run("whilelo p0.s, x1, x2\nwhilelo p1.b, w3, w4", svl=256,
                     regs={**STREAMING, "x1": (1 << 64) - 3, "x2": 2, "x3": 0xFFFF_FFFF_0000_0001, "x4": 100})
    assert active(machine, 0, 32) == []  # 2^64 - 3 is not below 2
    assert active(machine, 1, 8) == list(range(32))  # w3 = 1: every one of 32 elements is below 100
    assert machine.state.nzcv == 0b1000 << 28  # N set, C clear: the last element is active


def test_whilelt_none_active_sets_z_and_c():
    machine, _ = run("whilelt p5.d, w1, w2", svl=128, regs={**STREAMING, "x1": 7, "x2": 0xFFFF_FFFF})
    assert active(machine, 5, 64) == [] and machine.state.nzcv == 0b0110 << 28  # w2 = -1


@pytest.mark.parametrize("svl", [128, 1024])
def test_counts_and_vector_lengths(svl):
    program = ("cntb x0\ncnth x1, vl4\ncntw x2, all, mul #3\ncntd x3, pow2, mul #2\nrdsvl x4, #-2\n"
               "addvl x5, x10, #3\naddsvl sp, x10, #-1\naddspl x6, x10, #5")
    machine, result = run(program, svl=svl, regs={**STREAMING, "x10": 1000})
    x = machine.state.x
    svlb = svl // 8
    assert result.fault is None
    assert x[0] == svlb and x[1] == 4 and x[2] == 3 * svl // 32 and x[3] == 2 * (svl // 64)
    assert x[4] == (-2 * svlb) % (1 << 64)
    assert x[5] == 1000 + 3 * svlb and machine.state.sp == 1000 - svlb and x[6] == 1000 + 5 * svlb // 8


@pytest.mark.parametrize("line", ["ptrue p0.b", "whilelt p0.b, x0, x1", "cntb x0", "addvl x0, x0, #1"])
def test_sve_instructions_are_undefined_outside_streaming_mode(line):
    _, result = run(line, regs={"svcr": 2})
    assert result.fault.kind == "UNDEFINED" and "streaming" in result.fault.rule


def test_sme_vector_lengths_work_outside_streaming_mode():
    machine, result = run("rdsvl x0, #1\naddsvl x1, x0, #1\naddspl x2, x0, #1", svl=256)
    assert result.fault is None and machine.state.x[:3] == [32, 64, 36]
