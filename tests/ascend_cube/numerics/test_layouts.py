"""Fractal layouts against the Ascend C guide's formulas (关键分形格式详解.md, facts/ascend.md 4.2).

The expected position of every element is written out from the guide's index formulas, one
element at a time, independently of the reshapes the module uses:

- Zz: (M, K) -> (M1, M0, K1, K0) -> (M1, K1, M0, K0)
- Zn: (K, N) -> (K1, K0, N1, N0) -> (K1, N1, N0, K0)
- Nz: (M, N) -> (M1, M0, N1, N0) -> (N1, M1, M0, N0)
"""

import numpy as np
import pytest

from isasim.ascend_cube.numerics import layouts


def test_fractal_shapes_are_16_rows_of_32_bytes():
    assert layouts.fractal_shape("float16") == (16, 16)
    assert layouts.fractal_shape("bfloat16") == (16, 16)
    for name in ("int8", "uint8", "float8_e4m3fn", "float8_e5m2", "hifloat8"):
        assert layouts.fractal_shape(name) == (16, 32)
    assert layouts.fractal_shape("float32") == (16, 8)
    assert layouts.L0C_FRACTAL == (16, 16)
    with pytest.raises(ValueError, match="unknown cube dtype"):
        layouts.fractal_shape("int4")


def _matrix(rows, cols, dtype=np.int32):
    return (np.arange(rows * cols, dtype=np.int64) + 1).reshape(rows, cols).astype(dtype)


def _expected(kind, matrix, r0, c0):
    """The flat buffer, element by element from the guide's formula (padding zero)."""
    rows, cols = matrix.shape
    if kind == "zn":  # matrix is (K, N); fractal (N0, K0) = (r0, c0)
        k1, n1 = -(-rows // c0), -(-cols // r0)
        flat = np.zeros(k1 * n1 * r0 * c0, dtype=matrix.dtype)
        for k in range(rows):
            for n in range(cols):
                flat[((k // c0 * n1 + n // r0) * r0 + n % r0) * c0 + k % c0] = matrix[k, n]
        return flat
    m1, n1 = -(-rows // r0), -(-cols // c0)
    flat = np.zeros(m1 * n1 * r0 * c0, dtype=matrix.dtype)
    for i in range(rows):
        for j in range(cols):
            if kind == "zz":
                index = ((i // r0 * n1 + j // c0) * r0 + i % r0) * c0 + j % c0
            else:  # nz
                index = ((j // c0 * m1 + i // r0) * r0 + i % r0) * c0 + j % c0
            flat[index] = matrix[i, j]
    return flat


@pytest.mark.parametrize("dtype,rows,cols", [("float16", 30, 70), ("int8", 17, 65), ("float32", 16, 8),
                                             ("hifloat8", 1, 1), ("bfloat16", 48, 16)])
def test_zz_zn_nz_place_every_element_where_the_formula_says(dtype, rows, cols):
    matrix = _matrix(rows, cols)
    r0, c0 = layouts.fractal_shape(dtype)
    zz = layouts.nd_to_zz(matrix, dtype)
    assert np.array_equal(zz.ravel(), _expected("zz", matrix, r0, c0))
    assert np.array_equal(layouts.zz_to_nd(zz.ravel(), rows, cols, dtype), matrix)
    zn = layouts.nd_to_zn(matrix, dtype)
    assert np.array_equal(zn.ravel(), _expected("zn", matrix, r0, c0))
    assert np.array_equal(layouts.zn_to_nd(zn, rows, cols, dtype), matrix)
    nz = layouts.nd_to_nz(matrix, dtype)
    assert np.array_equal(nz.ravel(), _expected("nz", matrix, r0, c0))
    assert np.array_equal(layouts.nz_to_nd(nz.ravel(), rows, cols, dtype), matrix)


def test_l0c_nz_is_16_by_16_whatever_the_dtype():
    matrix = _matrix(20, 40)
    nz = layouts.nd_to_nz(matrix, "float32", fractal=layouts.L0C_FRACTAL)
    assert nz.shape == (3, 2, 16, 16)
    assert np.array_equal(nz.ravel(), _expected("nz", matrix, 16, 16))
    assert np.array_equal(layouts.nz_to_nd(nz, 20, 40, "float32", fractal=layouts.L0C_FRACTAL), matrix)


def test_the_mmad_pages_tail_example_pads_to_whole_fractals():
    # Mmad.md: M=30, K=70, N=40 in half -> 2 x 5 L0A fractals and 2 x 3 L0C fractals
    a = layouts.nd_to_zz(_matrix(30, 70, np.uint16), "float16")
    assert a.shape[:2] == (2, 5)
    assert a.size * 2 == 2 * 5 * layouts.FRACTAL_BYTES
    c = layouts.nd_to_nz(_matrix(30, 40), "float32", fractal=layouts.L0C_FRACTAL)
    assert c.shape[:2] == (3, 2)  # (N1, M1)
    # the padding is zero
    padded = layouts.zz_to_nd(a, 32, 80, "float16")
    assert not padded[30:, :].any() and not padded[:, 70:].any()


def test_a_buffer_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError, match="do not make fractal blocks"):
        layouts.nz_to_nd(np.zeros(100), 16, 16, "float16")
