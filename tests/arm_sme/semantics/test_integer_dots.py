"""The integer ZA dot products on hand-computed examples: which ZA vectors a group selects (only the
low 32 bits of Wv count, the offset, vstride = (SVL/8)/nreg), register lists wrapping from z31 to
z0, signedness, the indexed forms' 128-bit segments, and sums wrapping modulo 2^esize."""

from __future__ import annotations

import numpy as np
import pytest

from smeharness import run, vector, za_elements

ON = 3  # SVCR: streaming mode and ZA on


def changed_rows(machine) -> list[int]:
    return [int(r) for r in np.flatnonzero(machine.state.za.any(axis=1))]


def test_udot_single_vgx2_picks_rows_vec_and_vec_plus_vstride_from_the_low_32_bits_of_wv():
    # SVL 512: 64 ZA vectors, VGx2: vstride 32; w8 = 3 (junk above bit 31), offset 1 -> vec 4
    arrays = {"z0": vector([1], np.uint8, 512), "z1": vector([2], np.uint8, 512), "z2": vector([3], np.uint8, 512)}
    machine, result = run("udot za.s[w8, 1, vgx2], {z0.b-z1.b}, z2.b", regs={"svcr": ON, "x8": 0xDEADBEEF00000003},
                          arrays=arrays)
    assert result.fault is None
    assert changed_rows(machine) == [4, 36]
    assert list(za_elements(machine, 4, np.uint32)) == [12] * 16  # 4 x (1 x 3)
    assert list(za_elements(machine, 36, np.uint32)) == [24] * 16  # 4 x (2 x 3)


@pytest.mark.parametrize("svl, wv, offset, rows", [
    (512, 0xFFFFFFFF, 7, [6, 22, 38, 54]),  # (2^32 - 1 + 7) mod 16 = 6
    (512, 0x7FFFFFFF, 0, [15, 31, 47, 63]),
    (512, 16, 0, [0, 16, 32, 48]),  # vstride itself wraps to 0
    (128, 5, 2, [3, 7, 11, 15]),  # SVL 128: 16 vectors, vstride 4
    (2048, 0, 3, [3, 67, 131, 195]),  # SVL 2048: 256 vectors, vstride 64
])
def test_vgx4_group_rows(svl, wv, offset, rows):
    arrays = {f"z{n}": vector([1], np.uint8, svl) for n in (0, 1, 2, 3, 4)}
    machine, _ = run(f"udot za.s[w10, {offset}, vgx4], {{z0.b-z3.b}}, z4.b", svl=svl, regs={"svcr": ON, "x10": wv},
                     arrays=arrays)
    assert changed_rows(machine) == rows


def test_a_single_form_list_wraps_from_z31_to_z0():
    arrays = {"z30": vector([1], np.uint8, 512), "z31": vector([2], np.uint8, 512), "z0": vector([3], np.uint8, 512),
              "z1": vector([4], np.uint8, 512), "z5": vector([1], np.uint8, 512)}
    machine, _ = run("udot za.s[w8, 0, vgx4], {z30.b, z31.b, z0.b, z1.b}, z5.b", regs={"svcr": ON}, arrays=arrays)
    assert [int(za_elements(machine, r, np.uint32)[0]) for r in (0, 16, 32, 48)] == [4, 8, 12, 16]


def test_sums_wrap_modulo_2_to_the_32():
    za = np.zeros((64, 16), dtype=np.uint32)
    za[0] = 0xFFFFFFFF
    arrays = {"z0": vector([1], np.uint8, 512), "z1": vector([1], np.uint8, 512), "z2": vector([1], np.uint8, 512),
              "za": za.tobytes()}
    machine, _ = run("udot za.s[w8, 0, vgx2], {z0.b-z1.b}, z2.b", regs={"svcr": ON}, arrays=arrays)
    assert list(za_elements(machine, 0, np.uint32)) == [3] * 16  # 0xffffffff + 4


@pytest.mark.parametrize("mnemonic, zn, zm, element", [
    ("sdot", -1, 2, -8),  # SInt x SInt: 4 x (-1 x 2)
    ("udot", 0xFF, 2, 2040),  # UInt x UInt: 4 x (255 x 2)
    ("usdot", 0xFF, -1, -1020),  # UInt(Zn) x SInt(Zm)
    ("sudot", -1, 0xFF, -1020),  # SInt(Zn) x UInt(Zm)
])
def test_signedness_of_the_b_to_s_dots(mnemonic, zn, zm, element):
    arrays = {"z0": vector([zn], np.uint8, 512), "z1": vector([zn], np.uint8, 512), "z2": vector([zm], np.uint8, 512)}
    machine, _ = run(f"{mnemonic} za.s[w8, 0, vgx2], {{z0.b-z1.b}}, z2.b", regs={"svcr": ON}, arrays=arrays)
    assert list(za_elements(machine, 0, np.int32)) == [element] * 16


def test_indexed_takes_the_same_element_group_in_every_128_bit_segment():
    # SVL 256: two 128-bit segments; z2.b[1] is bytes 4-7 of each segment
    arrays = {"z0": vector([1], np.uint8, 256), "z1": vector([1], np.uint8, 256),
              "z2": np.arange(32, dtype=np.uint8).tobytes()}
    machine, _ = run("udot za.s[w8, 0, vgx2], {z0.b-z1.b}, z2.b[1]", svl=256, regs={"svcr": ON}, arrays=arrays)
    expected = [4 + 5 + 6 + 7] * 4 + [20 + 21 + 22 + 23] * 4
    assert changed_rows(machine) == [0, 16]
    assert list(za_elements(machine, 0, np.uint32)) == expected == list(za_elements(machine, 16, np.uint32))


def test_two_way_h_to_s_wraps():
    arrays = {"z0": vector([0xFFFF], np.uint16, 512), "z1": vector([0xFFFF], np.uint16, 512),
              "z2": vector([0xFFFF], np.uint16, 512)}
    machine, _ = run("udot za.s[w9, 2, vgx2], {z0.h-z1.h}, z2.h", regs={"svcr": ON, "x9": 0}, arrays=arrays)
    assert list(za_elements(machine, 2, np.uint32)) == [(2 * 0xFFFF * 0xFFFF) % 2**32] * 16


def test_sdot_h_to_d_multiple_pairs_each_zn_with_its_zm():
    arrays = {f"z{n}": vector([-1], np.int16, 512) for n in range(4)}
    arrays.update({f"z{4 + r}": vector([r + 1], np.int16, 512) for r in range(4)})
    machine, _ = run("sdot za.d[w8, 0, vgx4], {z0.h-z3.h}, {z4.h-z7.h}", regs={"svcr": ON}, arrays=arrays)
    assert [list(za_elements(machine, r, np.int64)) for r in (0, 16, 32, 48)] == \
        [[-4 * (r + 1)] * 8 for r in range(4)]


def test_sdot_h_to_d_products_do_not_overflow_before_the_64_bit_sum():
    arrays = {f"z{n}": vector([-32768], np.int16, 512) for n in range(5)}
    machine, _ = run("sdot za.d[w8, 0, vgx4], {z0.h-z3.h}, z4.h", regs={"svcr": ON}, arrays=arrays)
    assert list(za_elements(machine, 0, np.int64)) == [4 * 2**30] * 8


def test_udot_h_to_d_indexed_takes_halfwords_4_to_7_of_each_segment_for_index_1():
    z4 = np.arange(32, dtype=np.uint16)  # SVL 512: four segments of 8 halfwords
    arrays = {f"z{n}": vector([1], np.uint16, 512) for n in range(4)}
    arrays["z4"] = z4.tobytes()
    machine, _ = run("udot za.d[w8, 0, vgx4], {z0.h-z3.h}, z4.h[1]", regs={"svcr": ON}, arrays=arrays)
    expected = [sum(range(8 * s + 4, 8 * s + 8)) for s in range(4) for _ in range(2)]
    assert list(za_elements(machine, 0, np.uint64)) == expected
