"""The qemu backend through the command line: `isasim diff --against qemu` (its default for arm_sme)."""

from pathlib import Path

import pytest

from cli_harness import error_line
from isasim import cli

pytestmark = [pytest.mark.needs_qemu, pytest.mark.needs_clang]

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "arm_sme"
ARGS = [str(EXAMPLE / "udot_vgx4.s"), "--init", str(EXAMPLE / "udot_vgx4.init.json"), "--isa", "arm_sme", "--no-color"]


def test_diff_compares_with_qemu_by_default_and_agrees_on_the_example(capsys):
    assert cli.main(["diff", *ARGS]) == 0
    assert "sim and qemu agree" in capsys.readouterr().out


def test_lockstep_against_qemu_agrees_on_the_example_at_every_step(capsys):
    assert cli.main(["diff", *ARGS, "--lockstep"]) == 0
    assert "sim and qemu agree (lockstep, 3 instructions)" in capsys.readouterr().out


def test_lockstep_against_qemu_is_one_error_line_for_a_program_it_cannot_straight_line(tmp_path, capsys, monkeypatch):
    # A branch that writes a register (BL's link) cannot be replaced by what isasim did; no such
    # form exists yet, so CBZ pretends to write x5 as it branches.
    from smeharness import plant

    def linking(context, run, instruction):
        context.state.write_x(5, 1)
        return run()

    plant(monkeypatch, "CBZ_64", linking)
    program = tmp_path / "link.s"
    program.write_text("cbz x3, done\ndone: nop\n")
    error_line(capsys, ["diff", str(program), "--isa", "arm_sme", "--lockstep"], "writes a register", "qemu")


def test_record_steps_on_qemu_writes_a_trace_of_every_step_that_replays(tmp_path, capsys):
    out = tmp_path / "udot.trace.json"
    assert cli.main(["record", *ARGS, "--backend", "qemu", "--steps", "-o", str(out)]) == 0
    assert "expectations from qemu: " in capsys.readouterr().out
    assert cli.main(["replay", str(out), "--no-color"]) == 0
    assert "(3 steps)" in capsys.readouterr().out


def test_a_qemu_that_dies_on_a_program_is_a_divergence_not_a_crash(monkeypatch, capsys):
    # As QEMU 11.1.3 does on a ZA tile-slice element split across the end of mapped memory
    # (docs/known-oracle-deviations.md, entry 2): the process ends with no result.
    from isasim.arm_sme.oracle import backend
    from isasim.arm_sme.oracle.qemu import OracleError

    def dies(*args, **kwargs):
        raise OracleError("the test program under QEMU gave no result: ERROR: sme_ld1: code should not be reached")

    monkeypatch.setattr(backend, "run_many", dies)
    assert cli.main(["diff", *ARGS]) == 1
    out = capsys.readouterr().out
    assert "DIVERGENCE" in out and "QEMU aborted" in out and "sme_ld1" in out, out


def test_a_program_that_names_x30_is_refused_in_one_line(tmp_path, capsys):
    program = tmp_path / "x30.s"
    program.write_text("mov x1, #2\nadd x30, x1, #1\nret\n")
    error_line(capsys, ["diff", program, "--isa", "arm_sme", "--against", "qemu"],
               "instruction 1 (add x30, x1, #1) uses x30", "the QEMU harness's return address")


@pytest.mark.parametrize("features, expect", [("SME2,SME_I16I64", "UNDEFINED"), ("SME2,SME_I16I64,SVE", None)])
def test_the_sve_feature_reaches_qemu(features, expect):
    # outside streaming mode, CNTB is UNDEFINED on a core without SVE and counts SVL/8 with it, on both
    from isasim.arm_sme import ISA
    from isasim.arm_sme.oracle.backend import QemuBackend
    from isasim.core.trace import Init

    config = ISA.configure({"svl": 256, "features": features})
    outcome = QemuBackend().run("arm_sme", config, ISA.assemble("cntb x0\nret"), Init(regs={"svcr": 0}))
    if expect is None:
        assert outcome.fault is None and outcome.observed["regs"]["x0"] == 32
    else:
        assert outcome.fault is not None and outcome.fault.kind == expect and outcome.fault.index == 0
