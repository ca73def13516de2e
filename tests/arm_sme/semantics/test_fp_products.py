"""The SME floating-point outer products and dots (isasim.arm_sme.semantics.fp_products) on a few
hand-computed tiles, and the lines neither isasim nor clang encodes.  The rules each element follows are
worked by hand in numerics/test_fp_asl.py; the differential test against QEMU is test_fp_products_vs_qemu.py.

Bit patterns: single 0x40000000 = 2.0, half 0x3C00 = 1.0.
"""

from __future__ import annotations

import numpy as np
import pytest

from clang_oracle import assert_refused_in_one_line, clang_accepts
from smeharness import run, vector, za_elements

ON = 3
TWO = 0x40000000


# ---- the instructions on hand-computed tiles ----------------------------------------------------------

def test_fmopa_s_updates_only_active_row_column_pairs():
    # SVL 128: ZA0.S is vectors 0, 4, 8, 12; Zn = (1, 2, 3, 4), Zm = 2.0 everywhere; Pn rows 0 and 2, Pm all
    zn = np.array([1, 2, 3, 4], dtype=np.float32).view(np.uint32)
    arrays = {"z1": zn.tobytes(), "z2": vector([TWO], np.uint32, 128),
              "p0": bytes([0x01, 0x01]), "p1": bytes([0x11, 0x11]), "za": bytes(16 * 16)}
    machine, result = run("fmopa za0.s, p0/m, p1/m, z1.s, z2.s", svl=128, regs={"svcr": ON}, arrays=arrays)
    assert result.fault is None
    rows = [za_elements(machine, v, np.float32).tolist() for v in (0, 4, 8, 12)]
    assert rows == [[2.0] * 4, [0.0] * 4, [6.0] * 4, [0.0] * 4]


def test_widening_fmops_leaves_an_inactive_element_plus_zero():
    # Zn all +0, Zm all 1.0; Pn has element 0 of each pair active, element 1 not.  erow_0 = -(+0) = -0,
    # erow_1 = +0 (inactive: FPZero, not negated), so the dot is -0 + +0 = +0 and -0 + +0 = +0 in ZA.
    # Negating the inactive element too would give -0 + -0 = -0.
    arrays = {"z1": bytes(16), "z2": vector([0x3C00], np.uint16, 128), "p0": bytes([0x11, 0x11]),
              "p1": bytes([0x55, 0x55]), "za": vector([0x80000000], np.uint32, 128) * 16}
    machine, _ = run("fmops za1.s, p0/m, p1/m, z1.h, z2.h", svl=128, regs={"svcr": ON}, arrays=arrays)
    assert za_elements(machine, 1, np.uint32).tolist() == [0, 0, 0, 0]
    assert za_elements(machine, 0, np.uint32).tolist() == [0x80000000] * 4  # another tile: untouched


def test_fdot_indexed_takes_the_pair_from_each_128_bit_segment():
    # SVL 256: two segments of Zm; index 1 picks halves 2-3 of each; Zn all 1.0
    zm = np.array([0, 0, 0x4000, 0x4000, 0, 0, 0, 0, 0, 0, 0x4200, 0x4200, 0, 0, 0, 0], dtype=np.uint16)
    arrays = {"z4": vector([0x3C00], np.uint16, 256), "z5": vector([0x3C00], np.uint16, 256),
              "z3": zm.tobytes(), "za": bytes(32 * 32)}
    machine, _ = run("fdot za.s[w8, 0, vgx2], {z4.h-z5.h}, z3.h[1]", svl=256, regs={"svcr": ON}, arrays=arrays)
    assert za_elements(machine, 0, np.float32).tolist() == [4.0] * 4 + [6.0] * 4  # 1*2 + 1*2, 1*3 + 1*3
    assert za_elements(machine, 16, np.float32).tolist() == [4.0] * 4 + [6.0] * 4  # row vec + vstride


def test_fp_forms_need_streaming_mode_and_za():
    machine, result = run("bfmopa za0.s, p0/m, p0/m, z0.h, z0.h", svl=128, regs={"svcr": 2})
    assert result.fault is not None and result.fault.kind == "UNDEFINED"
    machine, result = run("bfdot za.s[w8, 0, vgx2], {z0.h-z1.h}, z0.h", svl=128, regs={"svcr": 1})
    assert result.fault is not None and result.fault.kind == "UNDEFINED"


# ---- what neither assembler accepts ------------------------------------------------------------------

NOT_ENCODABLE = [
    ("fmopa za4.s, p0/m, p1/m, z0.s, z1.s", "za0-za3"),
    ("fmopa za0.s, p8/m, p1/m, z0.s, z1.s", "p0-p7"),
    ("fmops za0.s, p0/m, p1/z, z0.h, z1.h", "merges"),
    ("fmopa za0.s, p0/m, p1/m, z0.s, z1.h", "not this form's .s"),
    ("bfmopa za0.s, p0/m, p1/m, z0.s, z1.s", "not this form's .h"),  # no single-precision BFMOPA
    ("fmopa za8.d, p0/m, p1/m, z0.d, z1.d", "za0-za7"),  # FEAT_SME_F64F64's FMOPA has eight .D tiles
    ("fmopa za2.h, p0/m, p1/m, z0.h, z1.h", "za0-za1"),  # FEAT_SME_F16F16's two .H tiles
    ("fdot za.s[w8, 0, vgx2], {z0.h-z1.h}, z16.h", "z0-z15"),
    ("fdot za.s[w12, 0, vgx2], {z0.h-z1.h}, z1.h", "w8-w11"),
    ("bfdot za.s[w8, 8, vgx4], {z0.h-z3.h}, z1.h", "0-7"),
    ("fdot za.s[w8, 0, vgx2], {z1.h-z2.h}, {z4.h-z5.h}", "multiple of 2"),
    ("bfdot za.s[w8, 0, vgx4], {z0.h-z3.h}, {z2.h-z5.h}", "multiple of 4"),
    ("fdot za.s[w8, 0, vgx4], {z2.h-z5.h}, z1.h[1]", "multiple of 4"),
    ("bfdot za.s[w8, 0, vgx2], {z0.h-z1.h}, z1.h[4]", "0-3"),
    ("fdot za.s[w8, 0, vgx2], {z0.s-z1.s}, z1.s", "not this form's .h"),
    ("fdot za.h[w8, 0, vgx2], {z0.h-z1.h}, z1.h", "not this form's ZA.S"),  # FP8/F16F16 forms: not modelled
    ("fdot za.s[w8, 0, vgx4], {z0.h-z1.h}, z1.h", "not this form's 4"),
]


@pytest.mark.parametrize("line, words", NOT_ENCODABLE)
def test_isasim_refuses_what_cannot_be_encoded_in_one_line(line, words):
    assert_refused_in_one_line(line, words)


@pytest.mark.needs_clang
def test_clang_refuses_the_same_lines():
    assert not clang_accepts([line for line, _ in NOT_ENCODABLE])
