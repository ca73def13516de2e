"""ascend_cube's click-for-working (Isa.element_workings): every element an Mmad or a Fixpipe of an example writes
gets an account whose Check agrees with the machine, and whose numbers agree with outside truth: numpy's INT64
product of the int8 GEMM example's A and B (the trace's expected C is that product), numpy/ml_dtypes' exact
products and sums of the fp8 QBMM example's inputs, and Huawei's golden C for that example (hicann/ops-nn's
qbmmv3_kernel_golden.py output, under its own compare rule)."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from isasim.core.explain.model import Check, Paragraph, Table
from isasim.core.isa import get_isa
from isasim.core.machine import Machine
from isasim.core.trace import Init, read_trace

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "ascend_cube"
ISA = get_isa("ascend_cube")
TITLE = re.compile(r"C\[(\d+)\]\[(\d+)\]")


def _steps_with_workings(config: dict, program_text: str, init, wanted):
    """{instruction index: (instruction, workings)} for each step whose form ``wanted`` accepts, made from a
    machine just before and one just after that step."""
    before, after = Machine("ascend_cube", config), Machine("ascend_cube", config)
    program = before.assemble(program_text)
    for machine in (before, after):
        machine.load_init(program, init)
    out = {}
    while not after.finished:
        record = after.step()
        assert record.fault is None
        if wanted(record.instruction):
            out[record.instruction.index] = (record.instruction,
                                             ISA.element_workings(record.instruction, before, after))
        before.step()
    return out


def _check(working) -> Check:
    check = working.blocks[-1]
    assert isinstance(check, Check), working.title
    assert check.explained == check.machine, (working.title, check)
    return check


def _products_table(working) -> Table:
    return next(b for b in working.blocks if isinstance(b, Table))


def _region(init: dict, name: str) -> dict:
    return next(r for r in init["memory"] if r.get("name") == name)


@pytest.fixture(scope="module")
def gemm():
    trace = read_trace(EXAMPLES / "int8_gemm.trace.json")
    data = json.loads((EXAMPLES / "int8_gemm.trace.json").read_text())
    a_region, bt_region, c_region = (_region(data["init"], n) for n in ("A", "Bt", "C"))
    a = np.array(a_region["values"], dtype=np.int64).reshape(a_region["shape"])
    b = np.array(bt_region["values"], dtype=np.int64).reshape(bt_region["shape"]).T
    expected = next(r for r in data["expect"]["memory"] if int(r["addr"], 16) == int(c_region["addr"], 16))
    c = np.frombuffer(bytes.fromhex(expected["hex"]), dtype="<i4").reshape(c_region["shape"])
    steps = _steps_with_workings(trace.config, "\n".join(trace.program), trace.init, lambda ins: True)
    return {"a": a, "b": b, "c": c, "c_address": int(c_region["addr"], 16), "steps": steps}


def test_the_gemm_mmad_works_every_element_from_numpys_inputs(gemm):
    a, b = gemm["a"], gemm["b"]
    (instruction, workings), = [s for s in gemm["steps"].values() if s[0].form.id == "Mmad"]
    m, n, k = a.shape[0], b.shape[1], a.shape[1]
    assert len(workings) == m * n
    seen = set()
    for working in workings:
        i, j = map(int, TITLE.search(working.title).groups())
        seen.add((i, j))
        # L0C holds C as 16 x 16 fractals of 4-byte elements, column blocks of 32 rows (m = 30 rounded up)
        assert (working.location, working.offset, working.size) == ("l0c", ((j // 16) * 32 + i) * 64 + (j % 16) * 4, 4)
        table = _products_table(working)
        assert len(table.rows) == k  # every product listed
        columns = {name: index for index, name in enumerate(table.columns)}
        for kk, row in enumerate(table.rows):
            assert int(row[columns[f"A[{i}][k]"]]) == a[i, kk]
            assert int(row[columns[f"B[k][{j}]"]]) == b[kk, j]
            assert int(row[columns["product (exact)"]]) == a[i, kk] * b[kk, j]
        assert f"sum of products = {(a[i] * b[:, j]).sum()}," in " ".join(
            p.text for p in working.blocks if isinstance(p, Paragraph))
        assert int(_check(working).explained) == a[i] @ b[:, j]
    assert len(seen) == m * n


def test_the_gemm_fixpipe_works_every_element_to_the_expected_c(gemm):
    c = gemm["c"]
    (instruction, workings), = [s for s in gemm["steps"].values() if s[0].form.name == "Fixpipe"]
    assert len(workings) == c.size
    offsets = set()
    for working in workings:
        check = _check(working)
        assert working.location == "memory" and working.size == 4
        index, rest = divmod(working.offset - gemm["c_address"], 4)
        assert rest == 0
        i, j = divmod(index, c.shape[1])
        assert int(check.explained, 16) == int(c[i, j]) & 0xFFFFFFFF
        offsets.add(working.offset)
    assert len(offsets) == c.size


def test_an_instruction_without_an_account_has_none():
    # the control-register instructions write no array element: nothing to account for
    steps = _steps_with_workings({"chip": "910B"}, "SetAtomicAdd(dtype=int32)\nSetAtomicNone()", Init(),
                                 lambda ins: True)
    assert len(steps) == 2 and all(workings == [] for _instruction, workings in steps.values())


@pytest.fixture(scope="module")
def fp8_qbmm():
    from isasim.ascend_cube.kernels.qbmm import build
    from isasim.ascend_cube.kernels.qbmm_case_file import load_case

    folder = EXAMPLES / "qbmm_fp8_pertensor"
    case = load_case(folder / "case.json")
    kernel = build(case)
    config = {"chip": case.chip, "options": dict(case.options)}
    mmads = []

    def wanted(instruction):  # the second Mmad (it accumulates onto the first) and the Fixpipe: the slow part
        if instruction.form.id == "Mmad":
            mmads.append(instruction)
            return len(mmads) == 2
        return instruction.form.name == "Fixpipe"

    steps = _steps_with_workings(config, "\n".join(kernel.program_lines), kernel.init(), wanted)
    values = lambda name: np.load(folder / f"{name}.npy")  # noqa: E731
    return {"case": json.loads((folder / "case.json").read_text()), "steps": list(steps.values()),
            "a": values("a").view(ml_dtypes.float8_e4m3fn).astype(np.float64).reshape(64, 256),
            "b": values("b").view(ml_dtypes.float8_e4m3fn).astype(np.float64).reshape(256, 48),
            "c": values("c").view(ml_dtypes.bfloat16).astype(np.float64).reshape(64, 48),
            "c_address": kernel.c_address}


def test_the_fp8_mmad_sums_are_numpys(fp8_qbmm):
    """The kernel splits k = 256 into two Mmads of 128; the second starts from the first's float32 C.  fp8
    products and sums of 128 of them are exact in float64, so numpy gives the exact sums to round once."""
    a, b = fp8_qbmm["a"], fp8_qbmm["b"]
    (instruction, workings), = [s for s in fp8_qbmm["steps"] if s[0].form.id == "Mmad"]
    first = (a[:, :128] @ b[:128]).astype(np.float32)
    expected = (first.astype(np.float64) + a[:, 128:] @ b[128:]).astype(np.float32)
    assert len(workings) == a.shape[0] * b.shape[1]
    for working in workings:
        i, j = map(int, TITLE.search(working.title).groups())
        table = _products_table(working)
        column = table.columns.index("product (exact)")
        assert [Fraction(row[column]) for row in table.rows] == [Fraction(float(a[i, 128 + kk] * b[128 + kk, j]))
                                                                 for kk in range(128)]
        bits = int(_check(working).explained, 16)
        assert bits == int(expected[i, j:j + 1].view(np.uint32)[0]), working.title


def test_the_fp8_fixpipe_matches_huaweis_golden(fp8_qbmm):
    golden, compare = fp8_qbmm["c"], fp8_qbmm["case"]["expect"]["compare"]
    (instruction, workings), = [s for s in fp8_qbmm["steps"] if s[0].form.name == "Fixpipe"]
    assert len(workings) == golden.size
    got = np.full(golden.shape, np.nan)
    for working in workings:
        bits = int(_check(working).explained, 16)
        i, j = divmod((working.offset - fp8_qbmm["c_address"]) // 2, golden.shape[1])
        got[i, j] = np.array([bits], dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)[0]
    assert not np.isnan(got).any()
    # the golden's own rule (isclose_compare): at most ptol of the elements outside rtol/atol
    outside = ~np.isclose(got, golden, rtol=compare["rtol"], atol=compare["atol"], equal_nan=True)
    assert outside.mean() <= compare["ptol"]


# ---- the data movement: DataCopy GM -> L1 (Nd2Nz) and LoadData L1 -> L0A/L0B ------------------------------------
# The truth is the trace's init A and Bt laid out by numpy reshapes in the layouts Huawei documents (Nz in L1: column
# blocks of 32 int8 bytes, each nValue rows padded to dstNzC0Stride rows; Zz in L0A: row blocks of 16 rows, then
# k blocks; Zn in L0B: k blocks, then 16-column blocks), not the address formulas the code uses.
SOURCE = re.compile(r"^(?:GM (0x[0-9a-f]+)|L1\[(\d+)\])$")


def _padded(values: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """The matrix in a zero ``rows`` x ``cols`` (the bytes the copy leaves alone are L1's zeros at the start)."""
    out = np.zeros((rows, cols), dtype=values.dtype)
    out[: values.shape[0], : values.shape[1]] = values
    return out


def _nz(matrix: np.ndarray) -> np.ndarray:
    """An int8 matrix (rows a multiple of 16, columns of 32) as Nz bytes: column blocks of 32, each all its rows."""
    rows, cols = matrix.shape
    return matrix.reshape(rows, cols // 32, 32).transpose(1, 0, 2).reshape(-1)


@pytest.fixture(scope="module")
def moves(gemm):
    data = json.loads((EXAMPLES / "int8_gemm.trace.json").read_text())
    regions = {name: _region(data["init"], name) for name in ("A", "Bt")}
    a = np.array(regions["A"]["values"], dtype=np.int8).reshape(regions["A"]["shape"])
    bt = np.array(regions["Bt"]["values"], dtype=np.int8).reshape(regions["Bt"]["shape"])
    a_rows, bt_rows = 32, 48  # the program's dstNzC0Stride: 30 and 40 rows rounded up to 16s
    l1 = np.zeros(3072 + bt_rows * 96, dtype=np.int8)
    l1[: a_rows * 96] = _nz(_padded(a, a_rows, 96))
    l1[3072:] = _nz(_padded(bt, bt_rows, 96))
    # Zz: (M1, K1, 16, 32) of A; Zn: (K1, N1, 16, 32) of B = Bt's rows as the 16s
    l0a = _padded(a, a_rows, 96).reshape(2, 16, 3, 32).transpose(0, 2, 1, 3).reshape(-1)
    l0b = _padded(bt, bt_rows, 96).reshape(3, 16, 3, 32).transpose(2, 0, 1, 3).reshape(-1)
    steps = [s for s in gemm["steps"].values() if s[0].form.name in ("DataCopy", "LoadData")]
    return {"a": a, "bt": bt, "addresses": {n: int(r["addr"], 16) for n, r in regions.items()}, "l1": l1,
            "l0a": l0a, "l0b": l0b, "steps": steps}


def _rows(working) -> list[dict]:
    table = _products_table(working)
    return [dict(zip(table.columns, row)) for row in table.rows]


def test_the_nd2nz_copies_put_every_element_of_a_and_bt_where_numpys_nz_layout_has_it(moves):
    copies = [s for s in moves["steps"] if s[0].form.name == "DataCopy"]
    assert len(copies) == 2
    for (instruction, workings), name, at in zip(copies, ("A", "Bt"), (0, 3072)):
        matrix = moves["a" if name == "A" else "bt"]
        assert len(workings) == matrix.size  # 2100 and 2800 bytes: one account each
        # which element of the matrix (row-major index) sits at each byte of the Nz image
        rows = 32 if name == "A" else 48
        index_image = _nz(_padded(np.arange(matrix.size).reshape(matrix.shape) + 1, rows, 96)) - 1
        seen = set()
        for working in workings:
            check = _check(working)
            assert working.location == "l1" and working.size == 1 and "int8" in working.title
            flat = int(index_image[working.offset - at])
            assert flat >= 0, working.title  # a byte the copy writes, not padding
            seen.add(flat)
            (row,) = _rows(working)
            assert row["destination"] == f"L1[{working.offset}]"
            gm = int(SOURCE.match(row["source"]).group(1), 16)
            assert gm == moves["addresses"][name] + flat  # int8: one byte per element, rows of 70
            assert int(row["value (int8)"]) == matrix.flat[flat] == moves["l1"][working.offset]
            assert bytes.fromhex(check.machine) == matrix.flat[flat : flat + 1].tobytes()
        assert len(seen) == matrix.size


def test_the_loads_fill_l0a_and_l0b_as_numpys_zz_and_zn_layouts(moves):
    loads = [s for s in moves["steps"] if s[0].form.name == "LoadData"]
    assert len(loads) == 3
    covered = {"l0a": set(), "l0b": set()}
    for instruction, workings in loads:
        location = instruction.form.buffers["dst"].lower()
        expected = moves[location]
        moved = instruction.operands[instruction.form.operand_names.index("repeatTimes")] * 512
        grouped = moved > 4096  # L0B's 9 fractals: 4608 bytes, one account per 4
        assert len(workings) == (moved // 4 if grouped else moved)
        for working in workings:
            check = _check(working)
            assert working.location == location
            assert working.size == (4 if grouped else 1) and ("group of 4" in working.title) == grouped
            want = expected[working.offset : working.offset + working.size]
            assert bytes.fromhex(check.machine) == want.tobytes(), working.title
            for k, row in enumerate(_rows(working)):
                assert row["destination"] == f"{location.upper()}[{working.offset + k}]"
                source = int(SOURCE.match(row["source"]).group(2))
                assert moves["l1"][source] == want[k] == int(row["value (int8)"])
            covered[location].update(range(working.offset, working.offset + working.size))
    assert covered["l0a"] == set(range(3072)) and covered["l0b"] == set(range(4608))


def test_a_transposing_load_of_halves_is_numpys_transpose():
    """LoadData with ifTranspose on float16: each 16 x 16 fractal of 2-byte elements arrives transposed."""
    l1 = np.random.default_rng(31).integers(0, 0x3C00, 3 * 256, dtype=np.uint16)  # finite halves
    image = l1.tobytes() + bytes(512 * 1024 - l1.nbytes)  # the 910B's whole L1
    program = ("LoadData(dst=L0A[0], src=L1[0], dtype=float16, startIndex=1, repeatTimes=2, srcStride=1, "
               "ifTranspose=true)")
    ((instruction, workings),) = _steps_with_workings({"chip": "910B"}, program, Init(arrays={"l1": image}),
                                                      lambda ins: True).values()
    expected = l1.reshape(3, 16, 16)[1:].transpose(0, 2, 1).reshape(-1)
    assert len(workings) == expected.size
    for working in workings:
        check = _check(working)
        element = working.offset // 2
        assert working.location == "l0a" and working.size == 2
        assert bytes.fromhex(check.machine) == expected[element : element + 1].tobytes()
        (row,) = _rows(working)
        assert float(row["value (float16)"]) == float(expected[element : element + 1].view(np.float16)[0])
        fractal, (r, c) = element // 256, divmod(element % 256, 16)
        # destination (r, c) of fractal f is source element (c, r) of L1 fractal 1 + f, two bytes each
        assert int(SOURCE.match(row["source"]).group(2)) == ((1 + fractal) * 256 + c * 16 + r) * 2
