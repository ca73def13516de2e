"""``--timeline FILE`` on run, step and replay: refused in one line (exit 2) before anything runs for an ISA
without the Isa.timeline hook, and for a FILE that cannot or must not be written."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_harness import error_line
from isasim import cli
from isasim.core.isa import Isa, get_isa
from isasim.cli.timeline_option import has_timeline

ROOT = Path(__file__).resolve().parents[2]
X86 = ROOT / "examples" / "x86_amx" / "int8_block.trace.json"
ASCEND = ROOT / "examples" / "ascend_cube" / "int8_gemm.trace.json"


def test_only_ascend_cube_has_a_timeline():
    assert [name for name in ("x86_amx", "arm_sme", "ascend_cube") if has_timeline(get_isa(name))] == ["ascend_cube"]
    assert Isa().timeline(object()) is None  # the default: no timeline


@pytest.mark.parametrize("command", [["run"], ["step", "--commands", "c"], ["replay"]])
def test_an_isa_without_a_timeline_is_refused_before_the_run(tmp_path, capsys, command):
    out = tmp_path / "t.json"
    code = cli.main([command[0], str(X86), *command[1:], "--timeline", str(out), "--no-color"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""  # nothing ran, nothing was printed
    [line] = captured.err.strip().splitlines()
    assert line.startswith("isasim: error: --timeline: x86_amx has no timeline")
    assert not out.exists()


def test_a_directory_is_refused_in_one_line(tmp_path, capsys):
    error_line(capsys, ["run", ASCEND, "--timeline", tmp_path], "is a directory")
    assert capsys.readouterr().out == ""


def test_an_existing_file_is_kept_without_force_and_replaced_with_it(tmp_path, capsys):
    taken = tmp_path / "t.json"
    taken.write_text("mine")
    error_line(capsys, ["run", ASCEND, "--timeline", taken], "refusing to overwrite", "--force")
    assert taken.read_text() == "mine"
    assert cli.main(["run", str(ASCEND), "--timeline", str(taken), "--force", "--no-color"]) == 0
    assert taken.read_text().startswith('{"traceEvents": [')


def test_the_timeline_may_not_replace_the_program(tmp_path, capsys):
    copy = tmp_path / "gemm.json"
    copy.write_text(ASCEND.read_text())
    error_line(capsys, ["run", copy, "--timeline", copy, "--force"], "which this command reads")
    assert copy.read_text() == ASCEND.read_text()


def test_replay_takes_one_trace_for_a_timeline(tmp_path, capsys):
    error_line(capsys, ["replay", ASCEND, ASCEND, "--timeline", tmp_path / "t.json"], "one TRACE")


def test_step_html_takes_no_timeline(tmp_path, capsys):
    error_line(capsys, ["step", ASCEND, "--html", tmp_path / "p.html", "--timeline", tmp_path / "t.json"],
               "--timeline")
