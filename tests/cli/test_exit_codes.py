"""The isasim command, run as a user runs it: exit codes, one-line errors, nothing overwritten."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "x86_amx"


def isasim(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "isasim.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=120)


def assert_one_line_error(done, *words):
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isasim: error: "), done.stderr
    assert "Traceback" not in done.stderr
    for word in words:
        assert word in lines[0]


def test_main_example_prints_the_result_matrix():
    done = isasim("run", EXAMPLE / "int8_block.trace.json", "--no-color")
    assert done.returncode == 0, done.stderr
    # C[0][0..3] of the seed article's data: sum over k of a[0][k] * b[k][n]
    a0 = [(13 * k) % 256 for k in range(64)]
    expected = [sum(a0[k] * ((11 * k + 7 * n) % 31 - 15) for k in range(64)) for n in range(4)]
    lines = done.stdout.splitlines()
    title = next(i for i, line in enumerate(lines) if line.startswith("C @ 0xa00000  16x16 int32"))
    header, row0 = lines[title + 1].split(), lines[title + 2].split()
    assert header[:4] == ["0", "1", "2", "3"]
    assert row0[0] == "0" and row0[1:5] == [str(v) for v in expected]
    assert "PASS: every expectation" in done.stdout


def test_unknown_mnemonic_names_file_and_line(tmp_path):
    src = tmp_path / "k.s"
    src.write_text("ldtilecfg [rcx]\n\n  tilezerox tmm0\n")
    assert_one_line_error(isasim("run", src), f"{src}:3:", "unknown mnemonic 'tilezerox'")


def test_bad_operand_names_the_rule(tmp_path):
    src = tmp_path / "k.s"
    src.write_text("tdpbusd tmm0, tmm1, tmm1\n")
    assert_one_line_error(isasim("asm", src), f"{src}:1:", "must be different")


def test_missing_file_and_directory():
    assert_one_line_error(isasim("run", "no/such/file.s"), "no such file")
    assert_one_line_error(isasim("run", "examples"), "directory")


def test_bad_init_file(tmp_path):
    init = tmp_path / "init.json"
    init.write_text('{"regs": {"rdi": "0xzz"}}')
    assert_one_line_error(isasim("run", EXAMPLE / "int8_block.s", "--init", init), "init.regs.rdi")


def test_a_trace_whose_expectation_fails_says_fail(tmp_path):
    data = json.loads((EXAMPLE / "int8_block.trace.json").read_text())
    data["expect"]["memory"][0]["hex"] = "00" + data["expect"]["memory"][0]["hex"][2:]
    bad = tmp_path / "bad.trace.json"
    bad.write_text(json.dumps(data))
    done = isasim("run", bad, "--no-color")
    assert done.returncode == 1 and "FAIL: expect.memory[0xa00000]" in done.stdout


def test_undecodable_bytes():
    assert_one_line_error(isasim("disasm", "0f0b"), "cannot decode")
    assert_one_line_error(isasim("disasm", "xyz"), "hex")


def test_disasm_explains_an_undefined_encoding():
    done = isasim("disasm", "c4e2715ec0", "c4e27f49c0")
    assert done.returncode == 0
    assert "tdpbusd tmm0,tmm0,tmm1" in done.stdout and "VEX.L=1" in done.stdout


def test_fault_exit_status_and_message(tmp_path):
    src = tmp_path / "k.s"
    src.write_text("tilezero tmm0\n")
    done = isasim("run", src, "--no-color")
    assert done.returncode == 3
    assert "#UD at instruction 0" in done.stdout and "not configured" in done.stdout


def test_step_limit(tmp_path):
    src = tmp_path / "loop.s"
    src.write_text("top: jmp top\n")
    assert_one_line_error(isasim("run", src, "--max-steps", "50"), "step limit of 50")


def test_record_then_replay_and_never_overwrite(tmp_path):
    out = tmp_path / "block.trace.json"
    done = isasim("record", EXAMPLE / "int8_block.trace.json", "-o", out, "--steps")
    assert done.returncode == 0, done.stderr
    assert isasim("replay", out).returncode == 0
    before = out.read_text()
    assert_one_line_error(isasim("record", EXAMPLE / "int8_block.trace.json", "-o", out), "refusing to overwrite")
    assert out.read_text() == before
    data = json.loads(before)
    data["expect"]["memory"][-1]["hex"] = "ff" + data["expect"]["memory"][-1]["hex"][2:]
    bad = tmp_path / "bad.trace.json"
    bad.write_text(json.dumps(data))
    done = isasim("replay", bad, "--no-color")
    assert done.returncode == 1 and "DIFFERENT" in done.stdout and "byte 0" in done.stdout


@pytest.mark.parametrize("args", [["frobnicate"], ["run"], ["run", "x.s", "--max-steps", "zero"], ["--bogus"]])
def test_usage_errors_are_one_line(args):
    assert_one_line_error(isasim(*args))


def test_a_large_region_prints_its_first_and_last_rows_unless_all_rows(tmp_path):
    trace = tmp_path / "mk.trace.json"
    assert isasim("kernel", "int8_microkernel", "--count", "2", "--k", "64", "-o", trace).returncode == 0

    def first_block_labels(stdout: str) -> list[str]:
        """The row labels of C's first column block (after its title and column header)."""
        lines = stdout.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("C @")) + 2
        labels = []
        for line in lines[start:]:
            labels.append(line.split()[0])
            if labels[-1] == "63":  # C's last row
                break
        return labels

    summary = isasim("run", trace, "--no-color", "--region", "C")  # C is 64 x 32 int32
    assert summary.returncode == 0, summary.stderr
    assert first_block_labels(summary.stdout) == [str(r) for r in range(16)] + ["..."] + [str(r) for r in range(48, 64)]
    assert "(32 of 64 rows not shown)" in summary.stdout and "PASS" in summary.stdout
    everything = isasim("run", trace, "--no-color", "--region", "C", "--all-rows")
    assert first_block_labels(everything.stdout) == [str(r) for r in range(64)]
    assert "not shown" not in everything.stdout
