"""The integer outer products and the vertical dots on hand-computed examples: which ZA vectors a
tile is, each narrow element's own predicate bit, signedness, sums wrapping modulo 2^esize, MOPS
subtracting, and the UNDEFINED cases (streaming mode or ZA off, SME_I16I64 not configured)."""

from __future__ import annotations

import numpy as np
import pytest

from smeharness import run, vector, za_elements

ON = 3  # SVCR: streaming mode and ZA on
SVL = 128  # 16 ZA vectors of 16 bytes: a .S tile is 4 x 4, a .D tile 2 x 2
ALL = b"\xff\xff"  # every predicate bit of SVL 128


def changed_rows(machine) -> list[int]:
    return [int(r) for r in np.flatnonzero(machine.state.za.any(axis=1))]


def predicates(**bits: int) -> dict:
    return {name: value.to_bytes(SVL // 64, "little") for name, value in bits.items()}


def test_umopa_adds_the_4_way_dot_of_every_row_and_column_to_the_tile_za1_s():
    # Zn row r = bytes 4r..4r+3 = r+1 each; Zm column c = bytes 4c..4c+3 = 10(c+1) each
    zn = np.repeat(np.arange(1, 5), 4).astype(np.uint8).tobytes()
    zm = np.repeat(np.arange(10, 50, 10), 4).astype(np.uint8).tobytes()
    machine, result = run("umopa za1.s, p0/m, p1/m, z2.b, z3.b", svl=SVL, regs={"svcr": ON},
                          arrays={"z2": zn, "z3": zm, **predicates(p0=0xFFFF, p1=0xFFFF)})
    assert result.fault is None
    assert changed_rows(machine) == [1, 5, 9, 13]  # ZA1.S row r is ZA vector 4r + 1
    for r, vec in enumerate((1, 5, 9, 13)):
        assert list(za_elements(machine, vec, np.uint32)) == [4 * (r + 1) * 10 * (c + 1) for c in range(4)]


def test_each_narrow_element_has_its_own_predicate_bit():
    # Pn: only byte 1 of row 0 and all of row 2; Pm: only byte 1 of each column
    zn = vector([1, 2, 3, 4], np.uint8, SVL)  # element k of each row is k + 1
    zm = vector([5, 6, 7, 8], np.uint8, SVL)
    machine, _ = run("umopa za0.s, p2/m, p3/m, z0.b, z1.b", svl=SVL, regs={"svcr": ON},
                     arrays={"z0": zn, "z1": zm, **predicates(p2=0b0000_1111_0000_0000 | 0b10, p3=0x2222)})
    assert changed_rows(machine) == [0, 8]  # rows 0 and 2 of ZA0.S; rows 1 and 3 have no active element
    assert list(za_elements(machine, 0, np.uint32)) == [2 * 6] * 4  # only pair k = 1
    assert list(za_elements(machine, 8, np.uint32)) == [2 * 6] * 4  # row 2 is all active, Pm leaves k = 1


def test_a_16_bit_element_is_governed_by_its_lowest_predicate_bit_only():
    zn, zm = vector([1], np.uint16, SVL), vector([1], np.uint16, SVL)
    odd = predicates(p0=0xAAAA, p1=0xFFFF)  # the upper bit of every .H element: none is active
    machine, _ = run("umopa za0.d, p0/m, p1/m, z0.h, z1.h", svl=SVL, regs={"svcr": ON},
                     arrays={"z0": zn, "z1": zm, **odd})
    assert changed_rows(machine) == []
    even = predicates(p0=0x5555, p1=0xFFFF)
    machine, _ = run("umopa za7.d, p0/m, p1/m, z0.h, z1.h", svl=SVL, regs={"svcr": ON},
                     arrays={"z0": zn, "z1": zm, **even})
    assert changed_rows(machine) == [7, 15]  # ZA7.D rows are vectors 7 and 15
    assert list(za_elements(machine, 7, np.uint64)) == [4, 4]


@pytest.mark.parametrize("mnemonic, zn, zm, element", [
    ("smopa", -1, 2, -8),  # SInt x SInt: 4 x (-1 x 2)
    ("umopa", 0xFF, 2, 2040),  # UInt x UInt
    ("usmopa", 0xFF, -1, -1020),  # UInt(Zn) x SInt(Zm)
    ("sumopa", -1, 0xFF, -1020),  # SInt(Zn) x UInt(Zm)
    ("smops", -1, 2, 8),  # subtracting
    ("usmops", 0xFF, -1, 1020),
])
def test_signedness_of_the_b_to_s_outer_products(mnemonic, zn, zm, element):
    arrays = {"z0": vector([zn], np.uint8, SVL), "z1": vector([zm], np.uint8, SVL), **predicates(p0=0xFFFF, p1=0xFFFF)}
    machine, _ = run(f"{mnemonic} za2.s, p0/m, p1/m, z0.b, z1.b", svl=SVL, regs={"svcr": ON}, arrays=arrays)
    assert list(za_elements(machine, 2, np.int32)) == [element] * 4


def test_sums_wrap_modulo_2_to_the_esize_both_ways():
    za = np.zeros((16, 4), dtype=np.uint32)
    za[0] = 0xFFFFFFFF
    arrays = {"z0": vector([1], np.uint8, SVL), "z1": vector([1], np.uint8, SVL), "za": za.tobytes(),
              **predicates(p0=0xFFFF, p1=0xFFFF)}
    machine, _ = run("umopa za0.s, p0/m, p1/m, z0.b, z1.b", svl=SVL, regs={"svcr": ON}, arrays=arrays)
    assert list(za_elements(machine, 0, np.uint32)) == [3] * 4  # 0xffffffff + 4
    machine, _ = run("umops za1.s, p0/m, p1/m, z0.b, z1.b", svl=SVL, regs={"svcr": ON}, arrays=arrays)
    assert list(za_elements(machine, 1, np.uint32)) == [0xFFFFFFFC] * 4  # 0 - 4
    big = {"z0": vector([0xFFFF], np.uint16, SVL), "z1": vector([0xFFFF], np.uint16, SVL),
           **predicates(p0=0xFFFF, p1=0xFFFF)}
    machine, _ = run("umopa za0.d, p0/m, p1/m, z0.h, z1.h", svl=SVL, regs={"svcr": ON}, arrays=big)
    assert list(za_elements(machine, 0, np.uint64)) == [4 * 0xFFFF * 0xFFFF] * 2  # 64 bits hold it exactly


def test_the_2_way_h_to_s_form_sums_pairs():
    arrays = {"z0": vector([3, -2], np.uint16, SVL), "z1": vector([5, 7], np.uint16, SVL),
              **predicates(p0=0xFFFF, p1=0xFFFF)}
    machine, _ = run("smopa za3.s, p0/m, p1/m, z0.h, z1.h", svl=SVL, regs={"svcr": ON}, arrays=arrays)
    assert list(za_elements(machine, 3, np.int32)) == [3 * 5 - 2 * 7] * 4
    machine, _ = run("umopa za3.s, p0/m, p1/m, z0.h, z1.h", svl=SVL, regs={"svcr": ON}, arrays=arrays)
    assert list(za_elements(machine, 3, np.uint32)) == [3 * 5 + 0xFFFE * 7] * 4


@pytest.mark.parametrize("svcr, rule", [(0, "PSTATE.SM"), (1, "PSTATE.ZA"), (2, "PSTATE.SM")])
def test_undefined_with_streaming_mode_or_za_off(svcr, rule):
    machine, result = run("umopa za0.s, p0/m, p1/m, z0.b, z1.b", svl=SVL, regs={"svcr": svcr})
    assert result.fault is not None and result.fault.kind == "UNDEFINED" and rule in result.fault.rule


def test_the_h_to_d_forms_need_sme_i16i64_and_the_others_do_not():
    _, result = run("smopa za0.d, p0/m, p1/m, z0.h, z1.h", svl=SVL, regs={"svcr": ON}, features=["SME2"])
    assert result.fault is not None and result.fault.kind == "UNDEFINED" and "SME_I16I64" in result.fault.rule
    _, result = run("uvdot za.d[w8, 0, vgx4], {z0.h-z3.h}, z4.h[0]", svl=SVL, regs={"svcr": ON}, features=["SME2"])
    assert result.fault is not None and "SME_I16I64" in result.fault.rule
    _, result = run("smopa za0.s, p0/m, p1/m, z0.b, z1.b", svl=SVL, regs={"svcr": ON}, features=["SME2"])
    assert result.fault is None


# ---- the vertical dots ----------------------------------------------------------------------------

def test_uvdot_sums_the_same_position_of_the_four_registers():
    # z<i> byte 4e + j = 10 i + j; z4 group 0 of each segment = 1, 2, 3, 4.  ZA vector r of the group,
    # element e = sum over i of (10 i + r) x (i + 1) = 200 + 10 r.  (A horizontal UDOT would read
    # z<r> bytes 4e..4e+3 instead: 100 r + 20.)
    arrays = {f"z{i}": vector([10 * i + j for j in range(4)], np.uint8, SVL) for i in range(4)}
    arrays["z4"] = vector([1, 2, 3, 4], np.uint8, SVL)
    machine, _ = run("uvdot za.s[w8, 0, vgx4], {z0.b-z3.b}, z4.b[0]", svl=SVL, regs={"svcr": ON}, arrays=arrays)
    assert changed_rows(machine) == [0, 4, 8, 12]  # vstride = 16 / 4
    for r, vec in enumerate((0, 4, 8, 12)):
        assert list(za_elements(machine, vec, np.uint32)) == [200 + 10 * r] * 4


def test_svdot_2_way_takes_the_indexed_pair_in_every_segment():
    # z0.h = -1, 2, ...; z1.h = 3, -4, ...; z2.h[1] is h elements 2, 3 of each 128-bit segment = 5, 6
    arrays = {"z0": vector([-1, 2], np.uint16, SVL), "z1": vector([3, -4], np.uint16, SVL),
              "z2": vector([0, 0, 5, 6, 0, 0, 0, 0], np.uint16, SVL)}
    machine, _ = run("svdot za.s[w9, 3, vgx2], {z0.h-z1.h}, z2.h[1]", svl=SVL, regs={"svcr": ON, "x9": 0x1_0000_0006},
                     arrays=arrays)
    # vstride 8; vec = (6 + 3) mod 8 = 1: vectors 1 and 9
    assert changed_rows(machine) == [1, 9]
    assert list(za_elements(machine, 1, np.int32)) == [-1 * 5 + 3 * 6] * 4  # position 2e + 0 of z0, z1
    assert list(za_elements(machine, 9, np.int32)) == [2 * 5 - 4 * 6] * 4  # position 2e + 1


def test_usvdot_and_suvdot_signedness():
    arrays = {f"z{i}": vector([0xFF], np.uint8, SVL) for i in range(4)}
    arrays["z4"] = vector([1], np.uint8, SVL)
    machine, _ = run("usvdot za.s[w8, 0, vgx4], {z0.b-z3.b}, z4.b[2]", svl=SVL, regs={"svcr": ON}, arrays=arrays)
    assert list(za_elements(machine, 0, np.int32)) == [4 * 255] * 4  # UInt(Zn) x SInt(Zm = 1)
    machine, _ = run("suvdot za.s[w8, 0, vgx4], {z0.b-z3.b}, z4.b[2]", svl=SVL, regs={"svcr": ON}, arrays=arrays)
    assert list(za_elements(machine, 0, np.int32)) == [-4] * 4  # SInt(Zn = -1) x UInt(Zm = 1)
