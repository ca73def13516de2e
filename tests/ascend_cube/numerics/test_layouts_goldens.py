"""NZ -> ND against OPSNN's golden converter (matmul_golden_util.nz_to_nd), recorded in tests/ascend_cube/goldens/."""

import json
from pathlib import Path

import numpy as np
import pytest

from isasim.ascend_cube.numerics import layouts

GOLDENS = Path(__file__).parents[1] / "goldens"
CASES = json.loads((GOLDENS / "opsnn_nz_to_nd.json").read_text())["cases"]


@pytest.mark.parametrize("case", CASES, ids=[f"{c['m']}x{c['n']}_{c['m0']}x{c['n0']}_{c['dtype']}" for c in CASES])
def test_nz_to_nd_matches_opsnn(case):
    size = int(np.prod(case["nz_shape"]))
    nz = np.arange(1, size + 1, dtype=np.int64)
    got = layouts.nz_to_nd(nz, case["m"], case["n"], case["dtype"], fractal=(case["m0"], case["n0"]))
    want = np.array(case["nd"], dtype=np.int64).reshape(case["m"], case["n"])
    assert got.shape == want.shape
    equal = got == want
    print(f"nz_to_nd {case['m']}x{case['n']}: exact {int(equal.sum())}/{equal.size}")
    assert equal.all(), f"first differing ND position {np.argwhere(~equal)[0].tolist()}"
    # and the blocked (N1, M1, M0, N0) form gives the same
    blocked = layouts.nz_to_nd(nz.reshape(case["nz_shape"]), case["m"], case["n"], case["dtype"],
                               fractal=(case["m0"], case["n0"]))
    assert np.array_equal(blocked, want)
