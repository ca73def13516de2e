"""``isasim qbmm`` from the command line: a run writes C and says PASS against the golden; --trace records a
run ``isasim replay`` accepts; --step opens one block in the stepper; --blocks lists them.  Every bad
case file, shape, type, combination, tiling or output path is one line on stderr with exit 2, and nothing
is written (an existing output is never replaced without --force).

test_qbmm_trace_replays is marked ``consistency`` (isasim's replay of isasim's trace); the run's C is checked
against Huawei's golden (test_qbmm_run_writes_c_and_passes_against_the_golden, test_qbmm_goldens.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from isasim.cli import main

CASES = Path(__file__).parents[1] / "qbmm_cases"
SMALL = "i8_bf16_pcu64_biasi32_m257n15k300"  # two blocks, bias, per-channel words


def _copy(tmp_path: Path, name: str = SMALL) -> Path:
    target = tmp_path / name
    shutil.copytree(CASES / name, target)
    return target / "case.json"


def _edit(path: Path, **changes) -> Path:
    data = json.loads(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.write_text(json.dumps(data))
    return path


def _one_line_error(capsys, *words) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("isasim: error: "), err
    for word in words:
        assert word in err, err
    return err


def test_qbmm_run_writes_c_and_passes_against_the_golden(tmp_path, capsys):
    case = _copy(tmp_path)
    out = tmp_path / "c.npy"
    assert main(["qbmm", str(case), "-o", str(out), "--no-color"]) == 0
    text = capsys.readouterr().out
    assert "PASS: 3,855 of 3,855 elements bit-exact" in text and "2 blocks" in text
    c = np.load(out)
    expected = np.load(case.parent / "c.npy")
    assert c.dtype == np.uint16 and c.shape == (1, 1, 1, 1, 257, 15) and (c == expected.reshape(c.shape)).all()


def test_qbmm_a_wrong_expectation_fails_with_exit_1(tmp_path, capsys):
    case = _copy(tmp_path)
    expected = np.load(case.parent / "c.npy")
    expected.reshape(-1)[:20] ^= 0x0100  # 20 elements far off: more than the golden's ptol lets through
    np.save(case.parent / "c.npy", expected)
    assert main(["qbmm", str(case), "--no-color"]) == 1
    assert "FAIL" in capsys.readouterr().out


@pytest.mark.consistency
def test_qbmm_trace_replays(tmp_path, capsys):
    case = _copy(tmp_path)
    trace = tmp_path / "run.trace.json"
    assert main(["qbmm", str(case), "--trace", str(trace), "--no-color"]) == 0
    assert main(["replay", str(trace), "--no-color"]) == 0
    assert "ok" in capsys.readouterr().out
    assert json.loads(trace.read_text())["config"]["chip"] == "950"


def test_qbmm_step_works_one_output_element_through_the_fixpipe(tmp_path, capsys):
    case = _copy(tmp_path)
    expected = np.load(case.parent / "c.npy").reshape(257, 15)
    assert main(["qbmm", str(case), "--step", "--commands", "c; p l0c.nd[4x8]; p fixpipe[3,5]", "--no-color"]) == 0
    text = capsys.readouterr().out
    l0c_row = next(line for line in text.splitlines() if line.startswith("3 "))
    assert f"L0C int32 {l0c_row.split()[6]} " in text  # the element's sum, as the L0C matrix shows it
    assert f"({int(expected[3, 5]):#06x})" in text.split("output")[-1]  # the golden's bf16 bits for C[3, 5]
    assert main(["qbmm", str(case), "--step", "--commands", "p fixpipe[0,0]", "--no-color"]) == 2
    assert "no Fixpipe at or before this step" in capsys.readouterr().err


def test_qbmm_step_opens_one_block(tmp_path, capsys):
    case = _copy(tmp_path)
    assert main(["qbmm", str(case), "--step", "--block", "1", "--commands", "c; p quant_pre; p l0c.nd[16x15]",
                 "--no-color"]) == 0
    text = capsys.readouterr().out
    assert "block 1 of 2" in text and "C rows 256..256" in text
    assert main(["qbmm", str(case), "--blocks", "--no-color"]) == 0
    listing = capsys.readouterr().out
    assert "block 0: core 0, batch 0, C rows 0..255" in listing and "block 1:" in listing


@pytest.mark.parametrize("edit, words", [
    ({"format": "isasim-qbmm/0"}, "format must be 'isasim-qbmm/1'"),
    ({"m": None}, "m must be an integer >= 1"),
    ({"mystery": 1}, "unknown key 'mystery'"),
    ({"chip": "910B"}, "chip 910B has no QBMM Cube kernel"),
    ({"c_type": "float32"}, "no int32 -> float32"),
    ({"bias_type": "float32"}, "bias_type float32 with int8"),
    ({"x1_quant_mode": "pertensor"}, "scale_a must name its .npy file"),
    ({"scale_b_type": "float32"}, "float32 per channel"),
    ({"batch_a": [1, 1, 2, 1]}, "batch_a[2] = 2 does not broadcast"),
    ({"a": "missing.npy"}, "no such file"),
    ({"tiling": {"baseK": 40}}, "baseK 40 must be a multiple of 32"),
    ({"expect": {"c": "c.npy", "compare": "close"}}, "expect.compare must be"),
    ({"k": 301}, "shape [1, 1, 1, 1, 257, 300], the case needs [1, 1, 1, 1, 257, 301]"),
    ({"a_type": "hifloat8"}, "Mmad has no hifloat8 x int8"),
])
def test_qbmm_bad_case_is_one_line(tmp_path, capsys, edit, words):
    case = _edit(_copy(tmp_path), **edit)
    out = tmp_path / "c.npy"
    assert main(["qbmm", str(case), "-o", str(out), "--no-color"]) == 2
    _one_line_error(capsys, words, str(case))
    assert not out.exists()


def test_qbmm_array_of_the_wrong_dtype_is_one_line(tmp_path, capsys):
    case = _copy(tmp_path)
    np.save(case.parent / "a.npy", np.load(case.parent / "a.npy").astype(np.int16))
    assert main(["qbmm", str(case), "--no-color"]) == 2
    _one_line_error(capsys, "int8 is stored as int8", "not int16")


@pytest.mark.parametrize("content, words", [("{", "not valid JSON"), ("[1, 2]", "a qbmm case is a JSON object")])
def test_qbmm_unreadable_case_is_one_line(tmp_path, capsys, content, words):
    case = tmp_path / "case.json"
    case.write_text(content)
    assert main(["qbmm", str(case), "--no-color"]) == 2
    _one_line_error(capsys, words)


def test_qbmm_never_replaces_an_output_without_force(tmp_path, capsys):
    case = _copy(tmp_path)
    out = tmp_path / "c.npy"
    out.write_bytes(b"keep me")
    assert main(["qbmm", str(case), "-o", str(out), "--no-color"]) == 2
    _one_line_error(capsys, "already exists")
    assert out.read_bytes() == b"keep me"
    assert main(["qbmm", str(case), "-o", str(out), "--force", "--no-color"]) == 0
    assert np.load(out).shape == (1, 1, 1, 1, 257, 15)


@pytest.mark.parametrize("args, words", [
    (["--block", "1"], "--block chooses the block --step opens"),
    (["--step", "--block", "5"], "--block 5: the kernel has blocks 0..1"),
    (["--step", "--blocks"], "give one"),
    (["--option", "l0c_int32_overflow=maybe"], "l0c_int32_overflow"),
])
def test_qbmm_bad_options_are_one_line(tmp_path, capsys, args, words):
    case = _copy(tmp_path)
    assert main(["qbmm", str(case), *args, "--no-color"]) == 2
    _one_line_error(capsys, words)


def test_qbmm_case_without_expect_needs_an_output(tmp_path, capsys):
    case = _edit(_copy(tmp_path), expect=None)
    assert main(["qbmm", str(case), "--no-color"]) == 2
    _one_line_error(capsys, "has no expect: give -o")
