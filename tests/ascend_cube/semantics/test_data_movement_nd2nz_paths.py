"""DataCopy GM -> L1 with Nd2NzParams against the pseudocode worked element by element here (issue 33: the
semantics write whole destination rows through strided views when no two rows share a byte, and fall back to
the per-element scatter when some do): random element sizes, several matrices, part-filled last C0 blocks,
odd strides, and L1 bytes between the rows that must stay as they were."""

from __future__ import annotations

import numpy as np
import pytest

from isasim.core.machine import Machine
from isasim.core.trace import Init

GM_SRC = 0x100000
L1_BYTES = 512 * 1024


def _expected(l1: np.ndarray, gm: np.ndarray, p: dict, size: int) -> np.ndarray:
    """The pseudocode: element (t, r, d) of GM goes to its L1 place, in t, r, d order."""
    out = l1.copy()
    c0 = 32 // size
    for t in range(p["ndNum"]):
        for r in range(p["nValue"]):
            for d in range(p["dValue"]):
                src = (t * p["srcNdMatrixStride"] + r * p["srcDValue"] + d) * size
                dst = (p["dst"] + t * p["dstNzMatrixStride"] * size
                       + ((d // c0) * p["dstNzC0Stride"] + r * p["dstNzNStride"]) * 32 + (d % c0) * size)
                out[dst:dst + size] = gm[src:src + size]
    return out


def _run(p: dict, dtype: str, gm: np.ndarray, l1: np.ndarray) -> np.ndarray:
    machine = Machine("ascend_cube", {"chip": "950"})
    line = (f"DataCopy(dst=L1[{p['dst']}], src=GM[{GM_SRC:#x}], dtype={dtype}, ndNum={p['ndNum']}, "
            f"nValue={p['nValue']}, dValue={p['dValue']}, srcNdMatrixStride={p['srcNdMatrixStride']}, "
            f"srcDValue={p['srcDValue']}, dstNzC0Stride={p['dstNzC0Stride']}, dstNzNStride={p['dstNzNStride']}, "
            f"dstNzMatrixStride={p['dstNzMatrixStride']})")
    program = machine.assemble(line)
    machine.load_init(program, Init(memory=[(GM_SRC, gm.tobytes(), True)], arrays={"l1": l1.tobytes()}))
    result = machine.run(max_steps=2)
    assert result.fault is None, result.fault.describe()
    return machine.state.buffers["L1"].copy()


@pytest.mark.parametrize("seed", range(8))
def test_nd2nz_moves_every_element_where_the_pseudocode_puts_it(seed):
    rng = np.random.default_rng(seed)
    dtype, size = [("int8", 1), ("float16", 2), ("float32", 4)][seed % 3]
    c0 = 32 // size
    n, d = int(rng.integers(1, 40)), int(rng.integers(1, 3 * c0 + 5))
    nd = int(rng.integers(1, 4))
    blocks = -(-d // c0)
    overlapping = seed >= 6  # rows that land on each other (the scatter's path)
    n_stride = 1 if overlapping else int(rng.integers(1, 3))
    c0_stride = int(rng.integers(1, 3)) if overlapping else n * n_stride + int(rng.integers(0, 3))
    matrix_stride = (blocks * c0_stride * 32 // size + int(rng.integers(0, 3)) * c0) if not overlapping else c0
    p = {"dst": 32 * int(rng.integers(0, 64)), "ndNum": nd, "nValue": n, "dValue": d,
         "srcDValue": d + int(rng.integers(0, 5)), "dstNzC0Stride": c0_stride, "dstNzNStride": n_stride,
         "dstNzMatrixStride": matrix_stride}
    p["srcNdMatrixStride"] = n * p["srcDValue"] + int(rng.integers(0, 7))
    gm = rng.integers(0, 256, nd * p["srcNdMatrixStride"] * size + 64, dtype=np.uint8)
    l1 = rng.integers(0, 256, L1_BYTES, dtype=np.uint8)
    got = _run(p, dtype, gm, l1)
    if overlapping:  # which of two elements on one byte wins is numpy's scatter order: check the others
        c0_rows = {}
        for t in range(nd):
            for r in range(n):
                for j in range(blocks):
                    start = (p["dst"] + t * matrix_stride * size + (j * c0_stride + r * n_stride) * 32)
                    c0_rows[start] = c0_rows.get(start, 0) + 1
        assert max(c0_rows.values()) > 1 or nd == 1  # the case does overlap (or is a single matrix)
        untouched = np.ones(L1_BYTES, dtype=bool)
        for start in c0_rows:
            untouched[start:start + 32] = False
        np.testing.assert_array_equal(got[untouched], l1[untouched])
        return
    np.testing.assert_array_equal(got, _expected(l1, gm, p, size))


def test_nd2nz_interleaved_rows_that_do_not_meet():
    """Destination rows interleaved (rows 64 B apart, C0 blocks 96 B apart) yet never sharing a byte."""
    rng = np.random.default_rng(42)
    p = {"dst": 256, "ndNum": 1, "nValue": 3, "dValue": 40, "srcDValue": 41, "srcNdMatrixStride": 0,
         "dstNzC0Stride": 3, "dstNzNStride": 2, "dstNzMatrixStride": 0}
    gm = rng.integers(0, 256, 3 * 41 + 64, dtype=np.uint8)
    l1 = rng.integers(0, 256, L1_BYTES, dtype=np.uint8)
    np.testing.assert_array_equal(_run(p, "int8", gm, l1), _expected(l1, gm, p, 1))
