"""isasim explain of the TMUL forms: the worked element C[m][n] equals the machine's.

The worked elements are checked three ways: the explanation's own check (its account
against the machine's C[m][n]), an independent recomputation here from the tile bytes
the explanation shows, and a separate run of the same data through the AMX test
harness.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from isasim.core.explain import ExplainError, Grid, Table, to_text
from isasim.core.trace import Init, RegionView
from isasim.x86_amx.explain.tilecfg import tilecfg_image

from amxharness import stored_dwords, tdp_program
from explain_helpers import blocks, ex


def int_element(expl):
    (check,) = expl.checks
    return int(check.explained), int(check.machine)


# ---------------------------------------------------------------------------
# The worked element of the integer dot products
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mnemonic", ["tdpbssd", "tdpbsud", "tdpbusd", "tdpbuud"])
@pytest.mark.parametrize("seed,shape,m,n", [(1, None, None, None), (7, (3, 5, 2), 2, 1), (3, (16, 16, 16), 15, 15)])
def test_int_worked_element_equals_the_machine(mnemonic, seed, shape, m, n):
    expl = ex(f"{mnemonic} tmm0, tmm1, tmm2", seed=seed, shape=shape, element=(m, n))
    explained, machine = int_element(expl)
    assert explained == machine
    # recompute from the tiles the explanation shows (A row m, B's dword n)
    grids = {g.title.split(" = ")[0]: g for g in blocks(expl, "Worked example", Grid) if " = " in g.title}
    A = [[int(c.text) for c in row] for row in grids["A"].cells]
    B = [[int(c.text) for c in row] for row in grids["B"].cells]
    mm = 1 if m is None else m
    nn = (2 if n is None else n) if shape is None or shape[2] > 2 else (n or 0)
    c_before = next(int(x) for x in re.findall(r"before = (-?\d+)", to_text(expl)))
    total = c_before + sum(A[mm][4 * k + i] * B[k][4 * nn + i] for k in range(len(B)) for i in range(4))
    assert (total - machine) % (1 << 32) == 0


def test_int_element_wraps_around_and_matches_the_harness():
    # A = 255, B = 127 everywhere, C = 2^31 - 1: the 32-bit sum wraps
    M = K = N = 2
    a = bytes([255]) * 64 * M
    b = bytes([127]) * 64 * K
    c = np.full((M, 16), 2**31 - 1, dtype=np.int32).tobytes()
    init = Init(regs={}, memory=[(0x100000, a, True), (0x200000, b, True), (0x300000, c, True)],
                views=[RegionView("A", 0x100000, "uint8", (M, 64)), RegionView("B", 0x200000, "int8", (K, 64)),
                       RegionView("C", 0x300000, "int32", (M, 16))])
    shapes = {0: (M, 4 * N), 1: (M, 4 * K), 2: (K, 4 * N)}
    cfg = tilecfg_image(shapes)
    init.memory.append((0x10000, cfg, True))
    init.views.append(RegionView("tilecfg", 0x10000, "uint8", (1, 64)))
    expl = ex("tdpbuud tmm0, tmm1, tmm2", init=init, init_source="test", element=(1, 1))
    explained, machine = int_element(expl)
    expected = (2**31 - 1 + 4 * K * 255 * 127) % 2**32
    assert explained == machine == expected - 2**32
    assert "wraps mod 2^32" in to_text(expl)
    harness = tdp_program("tdpbuud", c, a, b, shapes)
    assert int(stored_dwords(harness, M, N)[1, 1]) == machine


# ---------------------------------------------------------------------------
# The lanes of TDPBF16PS / TDPFP16PS
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("mnemonic", ["tdpbf16ps", "tdpfp16ps"])
@pytest.mark.parametrize("seed", [1, 2, 5])
def test_float_worked_element_follows_the_lanes_and_equals_the_machine(mnemonic, seed):
    expl = ex(f"{mnemonic} tmm3, tmm4, tmm5", seed=seed, shape=(2, 3, 2), element=(1, 0))
    (check,) = expl.checks
    assert check.equal and check.what == "C[1][0] (fp32)"
    lanes = next(t for t in blocks(expl, "Worked example", Table) if "FMA32" in " ".join(t.columns))
    assert [(r[0].text, r[1].text) for r in lanes.rows] == [(str(k), lane) for k in range(3) for lane in "EO"]
    assert all("exact product" in r[6] for r in lanes.rows)  # the numerics reference's notes
    text = to_text(expl)
    assert "ADD32(E, O)" in text and "RNE to 24 bits" in text


def test_fp16_runs_on_a_cpu_that_has_it_and_faults_on_one_that_does_not():
    assert dict(ex("tdpfp16ps tmm0, tmm1, tmm2").facts)["example CPU"] == "granite-rapids"
    expl = ex("tdpfp16ps tmm0, tmm1, tmm2", cpu="emerald-rapids")
    assert not expl.checks
    assert "needs AMX-FP16" in to_text(expl)


def test_a_shape_the_machine_rejects_shows_the_machine_fault():
    expl = ex("tdpbusd tmm0, tmm1, tmm2", shape=(4, 17, 4))  # A.colsb = 68 > 64
    text = to_text(expl)
    assert "#GP" in text and "colsb=68" in text and not expl.checks


def test_element_outside_the_tile_is_an_error():
    with pytest.raises(ExplainError, match="outside C's rows"):
        ex("tdpbusd tmm0, tmm1, tmm2", element=(4, 0))
