"""examples/ascend_cube: the int8 GEMM's expected C is numpy's INT64 product of the init's A and B (worked
out here, not taken from the trace), the trace replays, and the program, init and trace agree.

The replay test is marked ``consistency`` (today's isasim against the trace an earlier isasim recorded); its
evidence is test_the_expected_c_is_numpys_product_of_the_inputs: the trace's C is numpy's product."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from isasim import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "ascend_cube"


def _region(init: dict, name: str) -> dict:
    return next(r for r in init["memory"] if r.get("name") == name)


def test_the_expected_c_is_numpys_product_of_the_inputs():
    trace = json.loads((EXAMPLES / "int8_gemm.trace.json").read_text())
    a_region, bt_region, c_region = (_region(trace["init"], n) for n in ("A", "Bt", "C"))
    a = np.array(a_region["values"], dtype=np.int64).reshape(a_region["shape"])
    b = np.array(bt_region["values"], dtype=np.int64).reshape(bt_region["shape"]).T
    expected = next(r for r in trace["expect"]["memory"] if int(r["addr"], 16) == int(c_region["addr"], 16))
    c = np.frombuffer(bytes.fromhex(expected["hex"]), dtype=np.int32).reshape(c_region["shape"])
    assert (c == a @ b).all()


@pytest.mark.consistency
def test_the_trace_replays_and_runs_pass(capsys):
    assert cli.main(["replay", str(EXAMPLES / "int8_gemm.trace.json"), "--no-color"]) == 0
    assert cli.main(["run", str(EXAMPLES / "int8_gemm.trace.json"), "--no-color"]) == 0
    assert "PASS" in capsys.readouterr().out


def test_the_program_file_and_init_are_the_traces():
    trace = json.loads((EXAMPLES / "int8_gemm.trace.json").read_text())
    lines = [line for line in (EXAMPLES / "int8_gemm.s").read_text().splitlines() if line and not line.startswith("#")]
    assert lines == trace["program"]
    assert json.loads((EXAMPLES / "int8_gemm.init.json").read_text()) == trace["init"]
