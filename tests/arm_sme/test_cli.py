"""isasim run/record/replay/asm/disasm with --isa arm_sme and --svl, through the generic core."""

from __future__ import annotations

import json

import pytest

from cli_harness import error_line
from isasim import cli
from isasim.arm_sme.config import FEATURES

PROGRAM = """        mov x8, #3
        udot za.s[w8, 1, vgx2], {z0.b-z1.b}, z4.b
        ldr x5, [x0]
        ret
"""


def _init(svl: int) -> dict:
    n = svl // 8
    return {"regs": {"x0": "0x20000", "svcr": "0x3"},
            "memory": [{"name": "M", "addr": "0x20000", "type": "int64", "shape": [1, 2], "values": [40, 0]}],
            "arrays": {"z0": "01" * n, "z1": "02" * n, "z4": "03" * n}}


@pytest.mark.parametrize("svl", [128, 256, 512, 1024, 2048])
def test_record_and_replay_at_every_svl(svl, tmp_path, capsys):
    program, init, trace = tmp_path / "p.s", tmp_path / "i.json", tmp_path / "t.trace.json"
    program.write_text(PROGRAM)
    init.write_text(json.dumps(_init(svl)))
    assert cli.main(["record", str(program), "--init", str(init), "--isa", "arm_sme", "--svl", str(svl),
                     "-o", str(trace)]) == 0
    written = json.loads(trace.read_text())
    assert written["isa"] == "arm_sme" and written["config"]["svl"] == svl
    za = bytes.fromhex(written["expect"]["arrays"]["za"])
    assert len(za) == (svl // 8) ** 2
    vstride = svl // 16
    row = (3 + 1) % vstride
    assert za[row * svl // 8:row * svl // 8 + 4] == (4 * 3).to_bytes(4, "little")  # 4 x (1 x 3)
    capsys.readouterr()
    assert cli.main(["replay", str(trace)]) == 0
    assert capsys.readouterr().out.startswith("ok ")


def test_an_unknown_svl_is_one_error(tmp_path, capsys):
    program = tmp_path / "p.s"
    program.write_text(PROGRAM)
    error_line(capsys, ["run", str(program), "--isa", "arm_sme", "--svl", "384"], "384", "streaming vector length")
    # Python's int() reads Arabic-Indic digits and underscores; an SVL is written in ASCII digits (issue 25)
    for spelling in ("٥١٢", "5_12", "0x200"):
        error_line(capsys, ["run", str(program), "--isa", "arm_sme", "--svl", spelling], "streaming vector length")
    error_line(capsys, ["kernel", "udot_gemm", "--isa", "arm_sme", "--svl", "٥١٢", "--run"], "--svl must be one of")


def test_arrays_of_another_svl_are_refused_naming_the_array(tmp_path, capsys):
    program, init = tmp_path / "p.s", tmp_path / "i.json"
    program.write_text(PROGRAM)
    init.write_text(json.dumps(_init(256)))
    error_line(capsys, ["run", str(program), "--init", str(init), "--isa", "arm_sme", "--svl", "128"],
               "init.arrays.z0", "SVL 128")


def test_asm_and_disasm(tmp_path, capsys):
    program = tmp_path / "p.s"
    program.write_text(PROGRAM)
    assert cli.main(["asm", str(program), "--isa", "arm_sme"]) == 0
    out = capsys.readouterr().out
    assert "11 14 24 c1" in out and "udot za.s[w8, 1, vgx2], { z0.b, z1.b }, z4.b" in out
    assert cli.main(["disasm", "18147ac1", "--isa", "arm_sme"]) == 0
    assert "udot za.s[w8, 0, vgx4], { z0.h - z3.h }, z10.h" in capsys.readouterr().out


@pytest.mark.parametrize("line, words", [
    ("udot za.s[w8, 0, vgx4], {z1.b-z4.b}, {z4.b-z7.b}", "multiple of 4"),
    ("udot za.s[w8, 0, vgx2], {z0.h-z1.h}, z16.h", "z0-z15"),
    ("udot za.s[w12, 0, vgx4], {z0.b-z3.b}, z4.b", "w8-w11"),
    ("udot za.s[w8, 8, vgx4], {z0.b-z3.b}, z4.b", "0-7"),
    ("sudot za.s[w8, 0, vgx4], {z0.b-z3.b}, {z4.b-z7.b}", "no multi-vector SUDOT"),
    ("tdpbusd tmm0, tmm1, tmm2", "unknown instruction"),
])
def test_assembler_errors_are_one_line_naming_file_and_line(line, words, tmp_path, capsys):
    program = tmp_path / "bad.s"
    program.write_text("nop\n" + line + "\n")
    error_line(capsys, ["asm", str(program), "--isa", "arm_sme"], f"{program}:2:", words)


def test_features_option_turns_a_feature_off_and_refuses_an_unknown_one(tmp_path, capsys):
    program = tmp_path / "p.s"
    program.write_text("smstart\nsdot za.d[w8, 0, vgx2], {z0.h-z1.h}, z2.h\n")
    assert cli.main(["run", str(program), "--isa", "arm_sme", "--no-color"]) == 0  # SME_I16I64 is on by default
    assert "fault" not in capsys.readouterr().out
    assert cli.main(["run", str(program), "--isa", "arm_sme", "--features", "SME2", "--no-color"]) != 0
    out = " ".join(capsys.readouterr().out.split())
    assert "fault UNDEFINED at instruction 1" in out and "FEAT_SME_I16I64 is not implemented" in out
    error_line(capsys, ["run", program, "--isa", "arm_sme", "--features", "SME9"],
               "unknown arm_sme feature 'SME9' (known: " + ", ".join(FEATURES) + ")")
