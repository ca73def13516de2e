"""LD1*/ST1* of ZA tile slices and the SVE contiguous LD1*/ST1* (widening loads, truncating stores):
hand-worked examples of the addressing, predication (inactive elements zeroed, never accessed) and
the translation fault of an active element."""

from __future__ import annotations

import numpy as np
import pytest

from isasim.arm_sme.semantics import za_tiles
from smeharness import run

ON = {"svcr": 3}
DATA = 0x40000
IMAGE = bytes((7 * i + 3) % 256 for i in range(4096))


def _p(svl: int, esize: int, active) -> bytes:
    """A predicate with the esize-bit elements in ``active`` active."""
    bits = 0
    for e in active:
        bits |= 1 << (e * esize // 8)
    return bits.to_bytes(svl // 64, "little")


def test_ld1w_vertical_tile_slice_zeroes_inactive_elements():
    svl = 128  # .s tiles of 4 x 4 elements
    za = bytes([0xAA]) * 256
    machine, result = run("ld1w {za2v.s[w14, 1]}, p3/z, [x0, x1, lsl #2]", svl=svl,
                          regs={**ON, "x14": 6, "x0": DATA, "x1": 2},
                          arrays={"za": za, "p3": _p(svl, 32, [0, 2])}, memory=[(DATA, IMAGE, True)])
    assert result.fault is None
    column = (6 + 1) % 4
    got = [za_tiles.read_slice(machine.state.za, 2, 32, True, column)[4 * e:4 * e + 4].tobytes() for e in range(4)]
    start = 2 * 4  # x1 * 4 bytes
    assert got == [IMAGE[start:start + 4], bytes(4), IMAGE[start + 8:start + 12], bytes(4)]
    other = np.delete(machine.state.za.view(np.uint32), [2, 6, 10, 14], axis=0)  # rows outside ZA2.S untouched
    assert (other == 0xAAAAAAAA).all()


def test_st1d_horizontal_tile_slice_writes_only_active_elements():
    svl = 256
    za = np.arange(32 * 32, dtype=np.uint32).astype(np.uint8).tobytes()
    machine, _ = run("st1d {za3h.d[w12, 1]}, p1, [x0]", svl=svl, regs={**ON, "x12": 2, "x0": DATA},
                     arrays={"za": za, "p1": _p(svl, 64, [1, 3])}, memory=[(DATA, bytes(64), True)])
    row = (2 + 1) * 8 + 3  # slice 3 of ZA3.D is ZA vector 27
    source = machine.state.za[row].tobytes()
    assert machine.memory.read(DATA, 32) == bytes(8) + source[8:16] + bytes(8) + source[24:32]


@pytest.mark.parametrize("svl", [128, 1024])
def test_widening_loads_zero_extend(svl):
    machine, _ = run("ptrue p0.s\nld1b {z1.s}, p0/z, [x0, #1, mul vl]\nld1h {z2.d}, p0/z, [x0, x1, lsl #1]", svl=svl,
                     regs={"svcr": 1, "x0": DATA, "x1": 3}, memory=[(DATA, IMAGE, True)])
    n = svl // 32
    assert list(machine.state.z[1].view(np.uint32)) == list(IMAGE[n:2 * n])  # #1, mul vl: n bytes on
    halves = np.frombuffer(IMAGE[6:6 + 2 * (svl // 64)], dtype=np.uint16)
    assert list(machine.state.z[2].view(np.uint64)) == list(halves)


def test_truncating_store_and_a_fault_on_an_active_element_only():
    svl = 128
    z = np.array([0x11223344, 0x55667788, 0x99AABBCC, 0xDDEEFF00], dtype=np.uint32)
    machine, result = run("st1h {z0.s}, p1, [x0, #-1, mul vl]", svl=svl, regs={"svcr": 1, "x0": DATA + 8},
                          arrays={"z0": z.tobytes(), "p1": _p(svl, 32, [0, 1, 3])},
                          memory=[(DATA, bytes(8), True)])
    assert result.fault is None  # DATA + 8 - 8, four halfwords: all within the 8 bytes
    assert machine.memory.read(DATA, 8) == bytes.fromhex("4433 8877 0000 00ff".replace(" ", ""))
    # element 3 of a .s load at DATA + 4 is at DATA + 16, unmapped: the fault names it, not element 0's
    _, result = run("ld1w {z0.s}, p1/z, [x0, x1, lsl #2]", svl=svl, regs={"svcr": 1, "x0": DATA, "x1": 1},
                    arrays={"p1": _p(svl, 32, [0, 3])}, memory=[(DATA, bytes(12), True)])
    assert result.fault.kind == "TRANSLATION" and result.fault.address == DATA + 16
    # the same load with element 3 inactive reads nothing unmapped
    machine, result = run("ld1w {z0.s}, p1/z, [x0, x1, lsl #2]", svl=svl, regs={"svcr": 1, "x0": DATA, "x1": 1},
                          arrays={"p1": _p(svl, 32, [0, 1])}, memory=[(DATA, bytes(range(1, 13)), True)])
    assert result.fault is None and machine.state.z[0].tobytes() == bytes(range(5, 13)) + bytes(8)


def test_ld1b_round_trips_through_st1b_at_2048():
    svl = 2048
    machine, _ = run("ptrue p0.b\nld1b {z0.b}, p0/z, [x0]\nst1b {z0.b}, p0, [x0, x1]", svl=svl,
                     regs={"svcr": 1, "x0": DATA, "x1": 256}, memory=[(DATA, IMAGE[:512], True)])
    assert machine.memory.read(DATA + 256, 256) == IMAGE[:256]


@pytest.mark.parametrize("line, svcr", [("ld1w {z0.s}, p0/z, [x0]", 2), ("ld1w {za0h.s[w12, 0]}, p0/z, [x0]", 1),
                                        ("st1b {za0h.b[w12, 0]}, p0, [x0]", 2)])
def test_loads_and_stores_are_undefined_with_their_mode_off(line, svcr):
    _, result = run(line, regs={"svcr": svcr, "x0": DATA}, memory=[(DATA, bytes(64), True)])
    assert result.fault.kind == "UNDEFINED"


def test_ld1_scalar_plus_scalar_with_xzr_is_refused_by_the_decoder():
    from isasim.arm_sme import ISA
    from isasim.core.errors import DecodeError

    with pytest.raises(DecodeError, match="UNDEFINED"):
        ISA.disassemble((0xA41F4000).to_bytes(4, "little"))  # ld1b {z0.b}, p0/z, [x0, xzr]


@pytest.mark.parametrize("svl", [128, 2048])
def test_ldr_str_of_whole_z_and_p_registers(svl):
    svlb = svl // 8
    image = bytes((5 * i + 1) % 256 for i in range(8 * svlb))
    program = "ldr z7, [x0, #1, mul vl]\nldr p3, [x0, #-2, mul vl]\nstr z7, [x1]\nstr p3, [x1, #-1, mul vl]"
    base = DATA + 4 * svlb
    machine, result = run(program, svl=svl, regs={"svcr": 1, "x0": base, "x1": DATA + 6 * svlb},
                          memory=[(DATA, image, True)])
    assert result.fault is None
    assert machine.state.z[7].tobytes() == image[5 * svlb:6 * svlb]  # #1, mul vl: one vector on
    pl = svlb // 8
    assert machine.state.p[3].tobytes() == image[4 * svlb - 2 * pl:4 * svlb - pl]  # #-2: two predicates back
    assert machine.memory.read(DATA + 6 * svlb, svlb) == image[5 * svlb:6 * svlb]
    assert machine.memory.read(DATA + 6 * svlb - pl, pl) == machine.state.p[3].tobytes()


@pytest.mark.parametrize("program", ["st1w {z1.s}, p0, [x0]", "st1w {za0h.s[w12, 0]}, p0, [x0]"])
def test_a_store_that_faults_part_way_writes_nothing(program):
    # the first active elements are mapped, the last one is not: the fault names that element's
    # address, and no element was written (isasim's documented choice, vector_memory._write_elements)
    svl = 128  # four .s elements in 16 bytes; only the first 12 are mapped
    region = bytes(12)
    machine, result = run(program, svl=svl, regs={**ON, "x0": DATA, "x12": 0}, memory=[(DATA, region, True)],
                          arrays={"z1": bytes([9]) * 16, "p0": _p(svl, 32, range(4)), "za": bytes([9]) * 256})
    assert result.fault is not None and result.fault.kind == "TRANSLATION"
    assert result.fault.address == DATA + 12
    assert machine.memory.read(DATA, 12) == region
