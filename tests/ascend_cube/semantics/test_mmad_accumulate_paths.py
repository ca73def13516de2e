"""An int8 Mmad accumulating into L0C (cmatrixInitVal false) against numpy's int64 sum worked out here: the
semantics add in L0C's Nz order when the matrix is whole fractals (issue 33) and through the ND matrix when it
is padded; both must give the exact sum, wrapped or saturated, and leave L0C's padding as it was."""

from __future__ import annotations

import numpy as np
import pytest

from isasim.ascend_cube.numerics import layouts
from isasim.core.machine import Machine
from isasim.core.trace import Init

L0C_BYTES = {"910B": 128 * 1024, "950": 256 * 1024}


@pytest.mark.parametrize("chip", ["910B", "950"])
@pytest.mark.parametrize("overflow", ["wrap", "saturate"])
@pytest.mark.parametrize("m, n, k", [(32, 48, 64), (16, 16, 1024), (20, 36, 40)])
def test_int8_mmad_accumulates_the_exact_sum(chip, overflow, m, n, k):
    rng = np.random.default_rng(m * n + k)
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (k, n)).astype(np.int8)
    a[0], b[:, 0] = -128, -128  # the largest sum, onto the largest accumulator
    pm, pn = layouts.padded_shape(m, n, layouts.L0C_FRACTAL)
    c = rng.integers(-(1 << 31), 1 << 31, (pm, pn)).astype(np.int32)
    c[0, 0] = (1 << 31) - 1
    l0a_layout = layouts.nd_to_zz if chip == "910B" else layouts.nd_to_nz
    l0a = np.zeros(64 * 1024, dtype=np.uint8)
    l0b = np.zeros(64 * 1024, dtype=np.uint8)
    packed_a = l0a_layout(a.view(np.uint8), "int8").reshape(-1)
    packed_b = layouts.nd_to_zn(b.view(np.uint8), "int8").reshape(-1)
    l0a[:packed_a.size], l0b[:packed_b.size] = packed_a, packed_b
    l0c = rng.integers(0, 256, L0C_BYTES[chip], dtype=np.uint8)
    packed_c = layouts.nd_to_nz(c.view(np.uint32), "int32", layouts.L0C_FRACTAL).reshape(-1).view(np.uint8)
    l0c[:packed_c.size] = packed_c
    machine = Machine("ascend_cube", {"chip": chip, "options": {"l0c_int32_overflow": overflow}})
    program = machine.assemble(f"Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m={m}, n={n}, k={k}, "
                               "cmatrixInitVal=false, disableGemv=true)")
    machine.load_init(program, Init(arrays={"l0a": l0a.tobytes(), "l0b": l0b.tobytes(), "l0c": l0c.tobytes()}))
    result = machine.run(max_steps=2)
    assert result.fault is None, result.fault.describe()
    total = a.astype(np.int64) @ b.astype(np.int64) + c[:m, :n]
    if overflow == "saturate":
        total = np.clip(total, -(1 << 31), (1 << 31) - 1)
    expect = c.copy()
    expect[:m, :n] = total.astype(np.int64).astype(np.uint32).view(np.int32)  # the padding keeps its values
    want = l0c.copy()
    want[:packed_c.size] = layouts.nd_to_nz(expect.view(np.uint32), "int32",
                                            layouts.L0C_FRACTAL).reshape(-1).view(np.uint8)
    np.testing.assert_array_equal(machine.state.buffers["L0C"], want)
