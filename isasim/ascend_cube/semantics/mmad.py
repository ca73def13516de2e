"""Mmad: C = A.B on the cube unit, with C from zero, from the bias table, or accumulated.

The buffers hold fractals (A: Zz on 910B and Nz on 950 in L0A; B: Zn in L0B; C: Nz 16x16 in
L0C); :mod:`..numerics.layouts` turns them into matrices and back, and
:func:`..numerics.mmad_math.mmad` does the arithmetic, exactly as the options say.  m, n and k are
padded to whole fractals in the buffers; the padding is neither read into the product nor written.
"""

from __future__ import annotations

import numpy as np

from isasim.core.errors import IsasimError

from .. import faults
from ..config import ELEMENT_BYTES
from ..numerics import layouts, mmad_math
from .access import Access, contiguous

MAX_DIMENSION = 4095  # MmadParams m, n, k: each in [0, 4095]


def accumulator_type(chip, a_type: str, b_type: str) -> str:
    """What ``chip``'s Mmad of aType by bType accumulates in (UNSUPPORTED where the chip has no such pair)."""
    for a, b, c in chip.mmad_types:
        if (a, b) == (a_type, b_type):
            return c
    raise faults.unsupported(f"Mmad {a_type} x {b_type}: {chip.name} multiplies "
                             + ", ".join(f"{a} x {b} -> {c}" for a, b, c in chip.mmad_types))


def _storage(size: int):
    return {1: np.uint8, 2: np.uint16, 4: np.uint32}[size]


def a_layout(chip, m: int, disable_gemv: bool) -> str:
    """A's layout in L0A: the chip's (Zz on 910B, Nz on 950), except on the 950 with m = 1, where GEMV mode
    reads A as an ND row unless disableGemv (Mmad.md, MmadParams.disableGemv)."""
    if chip.arch == 3510 and m == 1 and not disable_gemv:
        return "ND"
    return chip.a_layout


def matrix_bytes(buffer: str, layout: str, rows: int, cols: int, dtype: str) -> int:
    """Bytes of a rows x cols matrix in ``layout`` in ``buffer``, padded to whole fractals (L0C's are 16 x 16
    whatever the type; L0A's and L0B's 16 x 32 bytes); an ND (GEMV) row is not padded."""
    size = ELEMENT_BYTES[dtype]
    if layout == "ND":
        return rows * cols * size
    padded = layouts.padded_shape(rows, cols, _fractal_along(buffer, layout, dtype))
    return padded[0] * padded[1] * size


def _fractal_along(buffer: str, layout: str, dtype: str) -> tuple[int, int]:
    fractal = layouts.L0C_FRACTAL if buffer == "L0C" else layouts.fractal_shape(dtype)
    return (fractal[1], fractal[0]) if layout == "Zn" else fractal  # Zn: (K0 rows of K, N0 columns)


def read_matrix(ctx, buffer: str, offset: int, layout: str, rows: int, cols: int, dtype: str) -> np.ndarray:
    """The rows x cols matrix (element bits) whose fractals start at buffer[offset], in ``layout``."""
    size = ELEMENT_BYTES[dtype]
    nbytes = matrix_bytes(buffer, layout, rows, cols, dtype)
    if layout == "ND":  # a GEMV row: cols elements in a row
        return ctx.read(buffer, offset, nbytes, buffer).view(_storage(size)).reshape(rows, cols)
    # the unpacking below copies, so it reads the buffer in place (checked and tracked as ctx.read does)
    ctx.check_inside(buffer, offset, nbytes, buffer)
    ctx.track(buffer, offset, nbytes, write=False)
    data = ctx.state.buffers[buffer][offset:offset + nbytes].view(_storage(size))
    fractal = layouts.L0C_FRACTAL if buffer == "L0C" else layouts.fractal_shape(dtype)
    unpack = {"Zz": layouts.zz_to_nd, "Nz": layouts.nz_to_nd, "Zn": layouts.zn_to_nd}[layout]
    return unpack(data, rows, cols, dtype, fractal)


def write_matrix(ctx, offset: int, matrix: np.ndarray, dtype: str) -> None:
    """Write ``matrix`` (element bits) into L0C's Nz fractals at offset, leaving the padding as it was."""
    rows, cols = matrix.shape
    padded = layouts.padded_shape(rows, cols, layouts.L0C_FRACTAL)
    if padded == (rows, cols):  # no padding to keep: the fractals are the matrix's alone (still read, as below)
        ctx.check_inside("L0C", offset, rows * cols * 4, "c")
        ctx.track("L0C", offset, rows * cols * 4, write=False)
        packed = layouts.nd_to_nz(matrix, dtype, layouts.L0C_FRACTAL)
        ctx.write("L0C", offset, np.ascontiguousarray(packed, dtype=np.uint32).view(np.uint8), "c")
        return
    current = ctx.read("L0C", offset, padded[0] * padded[1] * 4, "c").view(np.uint32)
    image = layouts.nz_to_nd(current, *padded, dtype, layouts.L0C_FRACTAL)
    image[:rows, :cols] = matrix
    packed = layouts.nd_to_nz(image, dtype, layouts.L0C_FRACTAL)
    ctx.write("L0C", offset, np.ascontiguousarray(packed, dtype=np.uint32).view(np.uint8), "c")


def _accumulate_int32(ctx, p, a: np.ndarray, b: np.ndarray, m: int, n: int) -> None:
    """An int8 Mmad accumulating into whole L0C fractals, the sum taken in L0C's Nz order: A.B (exact in int32:
    |A.B| <= 4095 * 2**14) reordered once, C read in place; the same reads, write and bits as read_matrix, mmad
    and write_matrix give."""
    size = m * n * 4
    ctx.check_inside("L0C", p["c"], size, "L0C")  # read_matrix's read of C
    ctx.track("L0C", p["c"], size, write=False)
    c = ctx.state.buffers["L0C"][p["c"]:p["c"] + size].view(np.uint32)
    product = mmad_math.mmad(a, b, None, p["aType"], p["bType"], ctx.options, saturate=ctx.float_saturating)
    total = mmad_math.add_int32(layouts.nd_to_nz(product, "int32", layouts.L0C_FRACTAL).reshape(-1), c,
                                ctx.options["l0c_int32_overflow"])
    ctx.check_inside("L0C", p["c"], size, "c")  # write_matrix's read and write
    ctx.track("L0C", p["c"], size, write=False)
    ctx.write("L0C", p["c"], total.view(np.uint8), "c")


class NotSimulated(IsasimError):
    """An Mmad the chip has that isasim does not simulate: refused in one line rather than guessed at."""


def check_types(chip, p) -> None:
    """The chip multiplies aType by bType (and isasim simulates that product)."""
    accumulator_type(chip, p["aType"], p["bType"])
    try:
        mmad_math.accumulator_dtype(p["aType"], p["bType"])
    except ValueError:
        raise NotSimulated(f"Mmad {p['aType']} x {p['bType']}: the {chip.name} has it, but isasim does not "
                           f"simulate it (how the cube rounds {p['aType']} inputs is not public)") from None


def _starts_from(p) -> str:
    """Where C starts: "zero" (cmatrixInitVal), "bias" (the bias table row: cmatrixSource), or "c" (L0C:
    accumulate, also isBias)."""
    if not p["cmatrixInitVal"] and p["cmatrixSource"]:
        return "bias"
    if not p["cmatrixInitVal"] or p["isBias"]:
        return "c"
    return "zero"


def mmad_access(ctx, form, p) -> Access:
    """Mmad checked (m, n, k, the type pair, alignment, each operand and C inside its buffer): A, B and the
    bias row or C it starts from (nothing for a NOP)."""
    m, n, k = p["m"], p["n"], p["k"]
    for name in ("m", "n", "k"):
        if p[name] > MAX_DIMENSION:
            raise faults.param_range(f"Mmad {name}={p[name]}: m, n and k are at most {MAX_DIMENSION}")
    c_type = accumulator_type(ctx.chip, p["aType"], p["bType"])  # (the pair was checked when bound)
    ctx.check_aligned("L0C", p["c"], "c")
    ctx.check_aligned("L0A", p["a"], "a")
    ctx.check_aligned("L0B", p["b"], "b")
    ctx.check_aligned("BT", p["bias"], "bias")
    if 0 in (m, n, k):
        return Access()
    a_bytes = matrix_bytes("L0A", a_layout(ctx.chip, m, p["disableGemv"]), m, k, p["aType"])
    b_bytes = matrix_bytes("L0B", "Zn", k, n, p["bType"])
    c_bytes = matrix_bytes("L0C", "Nz", m, n, c_type)
    ctx.check_inside("L0A", p["a"], a_bytes, "L0A")
    ctx.check_inside("L0B", p["b"], b_bytes, "L0B")
    reads = [contiguous("L0A", p["a"], a_bytes, p["aType"]), contiguous("L0B", p["b"], b_bytes, p["bType"])]
    start = _starts_from(p)
    if start == "bias":
        ctx.check_inside("BT", p["bias"], n * 4, "bias")
        reads.append(contiguous("BT", p["bias"], n * 4, c_type))
    ctx.check_inside("L0C", p["c"], c_bytes, "c" if start != "c" else "L0C")
    if start == "c":
        reads.append(contiguous("L0C", p["c"], c_bytes, c_type))
    return Access(reads=tuple(reads))


def mmad(ctx, form, p):
    """IF m > 4095 OR n > 4095 OR k > 4095: PARAM_RANGE
    IF m == 0 OR n == 0 OR k == 0: nothing (a NOP, as documented)
    A = L0A[a] as m x k (Zz on 910B, Nz on 950; on 950 with m == 1 and not disableGemv an ND row), B = L0B[b]
        as k x n (Zn)
    C0 = 0                               cmatrixInitVal
       = BT[bias] broadcast over rows    cmatrixSource (cmatrixInitVal false)
       = L0C[c] as m x n (Nz)            otherwise (accumulate; also isBias)
    L0C[c] = C0 + A.B    int8: exact int32 sum (wrap or saturate: option l0c_int32_overflow)
                         float: float32 (option mmad_float_accumulation; CTRL[48] saturation)"""
    if not mmad_access(ctx, form, p).reads:  # every check made; m, n or k is 0: a NOP
        return
    m, n, k = p["m"], p["n"], p["k"]
    c_type = accumulator_type(ctx.chip, p["aType"], p["bType"])
    a = read_matrix(ctx, "L0A", p["a"], a_layout(ctx.chip, m, p["disableGemv"]), m, k, p["aType"])
    b = read_matrix(ctx, "L0B", p["b"], "Zn", k, n, p["bType"])
    initial = None
    start = _starts_from(p)
    if start == "c" and c_type == "int32" and layouts.padded_shape(m, n, layouts.L0C_FRACTAL) == (m, n):
        _accumulate_int32(ctx, p, a, b, m, n)
        return
    if start == "bias":
        row = ctx.read("BT", p["bias"], n * 4, "bias").view(np.uint32)
        initial = np.broadcast_to(row, (m, n)).copy()
    elif start == "c":
        initial = read_matrix(ctx, "L0C", p["c"], "Nz", m, n, c_type)
    result = mmad_math.mmad(a, b, initial, p["aType"], p["bType"], ctx.options,
                            saturate=ctx.float_saturating)
    write_matrix(ctx, p["c"], np.asarray(result, dtype=np.uint32), c_type)
