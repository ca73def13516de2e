"""The qemu backend through the command line: `isasim diff --against qemu` (its default for arm_sme)."""

from pathlib import Path

import pytest

from cli_harness import error_line
from isasim import cli

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "arm_sme"
ARGS = [str(EXAMPLE / "udot_vgx4.s"), "--init", str(EXAMPLE / "udot_vgx4.init.json"), "--isa", "arm_sme", "--no-color"]


def test_diff_compares_with_qemu_by_default_and_agrees_on_the_example(capsys):
    assert cli.main(["diff", *ARGS]) == 0
    assert "sim and qemu agree" in capsys.readouterr().out


def test_lockstep_against_qemu_says_it_reports_only_end_states(capsys):
    error_line(capsys, ["diff", *ARGS, "--lockstep"], "qemu", "only the end of a run")
