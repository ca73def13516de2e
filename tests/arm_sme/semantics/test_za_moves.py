"""LDR/STR ZA and MOVA (MOV) between Z registers and horizontal and vertical ZA tile slices:
hand-worked examples of the tile geometry (row r of ZAt of esize bits is ZA vector r*esize/8 + t),
the slice index (Ws + offset, modulo the tile's slices), merging predication, and the faults."""

from __future__ import annotations

import numpy as np
import pytest

from isasim.arm_sme.semantics import za_tiles
from smeharness import run

ON = {"svcr": 3}
DATA = 0x40000


def test_tile_rows_interleave():
    assert list(za_tiles.tile_rows(1, 32, 16)) == [1, 5, 9, 13]  # ZA1.S at SVL 128
    assert list(za_tiles.tile_rows(0, 8, 16)) == list(range(16))
    assert list(za_tiles.tile_rows(15, 128, 64)) == [15, 31, 47, 63]


@pytest.mark.parametrize("svl", [128, 512])
def test_ldr_str_za_use_the_offset_for_both_the_vector_and_the_address(svl):
    svlb = svl // 8
    image = bytes(range(256)) * (16 * svlb // 256 + 1)
    memory = [(DATA, image[:16 * svlb], True)]
    program = "ldr za[w12, 3], [x0, #3, mul vl]\nstr za[w12, 3], [x1, #3, mul vl]"
    # w12's upper bits are ignored; vec = (w12 + 3) mod SVL/8
    machine, result = run(program, svl=svl, regs={"svcr": 2, "x12": (7 << 32) | (svlb - 1), "x0": DATA,
                                                  "x1": DATA + 8 * svlb}, memory=memory)
    assert result.fault is None
    vec = (svlb - 1 + 3) % svlb
    assert machine.state.za[vec].tobytes() == image[3 * svlb:4 * svlb]
    assert machine.memory.read(DATA + 11 * svlb, svlb) == image[3 * svlb:4 * svlb]


def test_ldr_za_from_unmapped_memory_is_a_translation_fault_naming_the_address():
    _, result = run("ldr za[w12, 1], [x0, #1, mul vl]", svl=128, regs={"svcr": 2, "x0": 0x9000})
    assert result.fault.kind == "TRANSLATION" and result.fault.address == 0x9010


def test_ldr_za_needs_za_not_streaming():
    _, result = run("ldr za[w12, 0], [x0]", regs={"svcr": 1, "x0": DATA}, memory=[(DATA, bytes(64), True)])
    assert result.fault.kind == "UNDEFINED" and "PSTATE.ZA" in result.fault.rule


def test_mova_horizontal_and_vertical_slices_to_vector_merge():
    svl = 128
    za = np.arange(256, dtype=np.uint8).reshape(16, 16)
    p = {"p1": bytes([0x11, 0x01])}  # .s elements 0, 1 and 2 active (bits 0, 4, 8), element 3 not
    z = {"z5": bytes([0xEE]) * 16, "z6": bytes([0xEE]) * 16}
    program = "mov z5.s, p1/m, za1h.s[w13, 2]\nmov z6.s, p1/m, za1v.s[w13, 1]"
    machine, _ = run(program, svl=svl, regs={**ON, "x13": 5}, arrays={"za": za.tobytes(), **p, **z})
    # horizontal slice (5 + 2) mod 4 = 3 of ZA1.S is ZA vector 3*4 + 1 = 13
    row = za[13].tobytes()
    assert machine.state.z[5].tobytes() == row[:12] + bytes([0xEE]) * 4
    # vertical slice (5 + 1) mod 4 = 2: element 2 (bytes 8-11) of ZA vectors 1, 5, 9, 13
    column = b"".join(za[r, 8:12].tobytes() for r in (1, 5, 9))
    assert machine.state.z[6].tobytes() == column + bytes([0xEE]) * 4


def test_mova_vector_to_vertical_slice_writes_only_active_elements():
    svl = 256
    zn = np.arange(1, 17, dtype=np.uint16)  # 16 .h elements
    p = {"p2": bytes([0x55, 0x55, 0x00, 0x00])}  # .h elements 0-7 active (every other bit), 8-15 not
    machine, _ = run("mov za1v.h[w12, 7], p2/m, z3.h", svl=svl, regs={**ON, "x12": 0xFFFF_FFFF},
                     arrays={"z3": zn.tobytes(), **p})
    column = (0xFFFF_FFFF + 7) % 16  # = 6
    za = machine.state.za.view(np.uint16)  # 32 vectors of 16 .h elements
    rows = za_tiles.tile_rows(1, 16, 32)
    assert list(za[rows, column]) == [1, 2, 3, 4, 5, 6, 7, 8] + [0] * 8
    assert int(np.count_nonzero(za)) == 8


def test_mova_q_slices():
    svl = 512
    z = np.arange(64, dtype=np.uint8)
    machine, _ = run("ptrue p0.d\nmov za15h.q[w12, 0], p0/m, z0.q\nmov z1.q, p0/m, za15h.q[w12, 0]", svl=svl,
                     regs={**ON, "x12": 2}, arrays={"z0": z.tobytes()})
    assert machine.state.za[2 * 16 + 15].tobytes() == z.tobytes()  # row 2 of ZA15.Q is ZA vector 47
    assert machine.state.z[1].tobytes() == z.tobytes()


@pytest.mark.parametrize("svcr", [0, 1, 2])
def test_mova_needs_streaming_mode_and_za(svcr):
    _, result = run("mov z0.b, p0/m, za0h.b[w12, 0]", regs={"svcr": svcr})
    assert result.fault.kind == "UNDEFINED"


@pytest.mark.parametrize("nreg", [2, 4])
def test_mova_of_za_vector_groups_round_trips(nreg):
    svl = 512
    svlb = svl // 8
    za = bytes((3 * i) % 251 for i in range(svlb * svlb))
    vstride = svlb // nreg
    program = (f"mov {{z4.s-z{3 + nreg}.s}}, za.s[w9, 5, vgx{nreg}]\n"
               f"mov za.b[w10, 0, vgx{nreg}], {{z4.b-z{3 + nreg}.b}}")
    machine, _ = run(program, svl=svl, regs={**ON, "x9": vstride - 2, "x10": 1}, arrays={"za": za})
    vec = (vstride - 2 + 5) % vstride  # = 3
    rows = np.frombuffer(za, dtype=np.uint8).reshape(svlb, svlb)
    for r in range(nreg):
        assert machine.state.z[4 + r].tobytes() == rows[vec + r * vstride].tobytes()
        assert machine.state.za[1 + r * vstride].tobytes() == rows[vec + r * vstride].tobytes()
