"""What ``isasim step`` and ``run`` show of the Ascend cube: the values shown follow from the machine state
(L0C as the ND matrix equals what Fixpipe wrote to GM; the quant word's fields are the ones packed).

The L0C test is marked ``consistency`` (a view against the run's own GM); the evidence that the GEMM's C is
right is numpy's product (test_example.py, test_gemm.py)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from isasim import cli
from isasim.ascend_cube.numerics.quant_word import pack_scale

import pytest

TRACE = Path(__file__).resolve().parents[3] / "examples" / "ascend_cube" / "int8_gemm.trace.json"


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # a 40-column matrix on one line


def _step(capsys, commands: str, *extra) -> str:
    code = cli.main(["step", str(TRACE), "--no-color", "--commands", commands, *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


@pytest.mark.consistency
def test_l0c_as_the_nd_matrix_is_what_fixpipe_writes(capsys):
    import json

    out = _step(capsys, "s 10; p l0c.nd[30x40]")  # through the Mmad (instruction 9)
    expected = json.loads(TRACE.read_text())["expect"]["memory"][0]["hex"]
    c = np.frombuffer(bytes.fromhex(expected), dtype=np.int32).reshape(30, 40)
    shown = out[out.index("as a 30 x 40 int32 matrix"):]
    lines = shown.splitlines()[2:]  # after the title and the column numbers
    for row in (0, 17, 29):
        line = next(l for l in lines if re.match(rf"\s*{row}\s", l))
        assert [int(v) for v in line.split()[1:]] == c[row].tolist()


def test_a_step_shows_the_written_buffer_range_highlighted(capsys):
    out = _step(capsys, "s 5")  # through the first LoadData (instruction 4)
    assert "L0A  int8" in out and "L0A[0]" in out


def test_the_quant_word_is_decoded_field_by_field(capsys, tmp_path):
    word = pack_scale(0.7, offset=-3)
    program = tmp_path / "q.s"
    program.write_text(f"SetFixpipePreQuantFlag(config={word:#x})\n")
    code = cli.main(["step", str(program), "--isa", "ascend_cube", "--no-color", "--commands",
                     "s; p quant_pre"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"quant_pre = {word:#x}" in out
    assert re.search(r"M1.*0\.69970703125", out)  # 0.7 truncated to (1,8,10), as the docs pack it
    assert re.search(r"[Oo]ffset.*-3", out)


def test_watch_a_buffer_range_and_print_a_buffer_as_another_type(capsys):
    out = _step(capsys, "w l0c[0:4]; c; p l0c[1024] fp32; p bt")
    assert "watch l0c[0:4] changed" in out or "watch 1" in out
    assert "L0C  fp32" in out and "L0C[1024]" in out


def test_a_fixpipe_step_shows_its_first_gm_rows_and_counts_the_rest(capsys):
    out = _step(capsys, "s 13")  # through the Fixpipe (instruction 12)
    assert out.count("GM 0x3") == 4  # rows 0..3 of C, 40 int32 = 160 bytes apart
    assert "GM 0x3000a0:" in out and "... and 26 more GM writes, 4160 bytes" in out


def test_a_step_shows_what_it_wrote_in_the_type_it_wrote(capsys):
    """The Nd2Nz DataCopy of int8 shows L1 as int8 (A's first values, negative ones among them), Mmad's
    L0C as int32; --show l1:uint8 overrides."""
    import json

    trace = json.loads(TRACE.read_text())
    a = trace["init"]["memory"][0]["values"]  # A (int8) at GM 0x100000: its row 0 starts L1's first 32-byte row
    out = _step(capsys, "s 1")
    assert "L1  int8" in out
    row = next(line for line in out.splitlines() if line.strip().startswith("L1[0]"))
    assert [int(v) for v in row.split()[1:9]] == a[:8] and min(a[:8]) < 0
    assert "L0C  int32" in _step(capsys, "s 10")
    assert "L1  uint8" in _step(capsys, "s 1", "--show", "l1:uint8")
