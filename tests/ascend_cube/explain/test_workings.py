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
from isasim.core.trace import read_trace

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


def test_an_instruction_without_an_account_has_none(gemm):
    others = [s for s in gemm["steps"].values() if s[0].form.id != "Mmad" and s[0].form.name != "Fixpipe"]
    assert others and all(workings == [] for _instruction, workings in others)


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
