"""Hostile arm_sme assembly text and stepper names from issue 25, through the command line.

Each once crashed isasim with exit 70 (an untyped ValueError from int(), a MemoryFault) or made a
program other than the one its text says.  What the text means is checked against clang in
test_assembler_vs_clang.py; here, that the command line answers with a program or exit 2 and one
line, that branch targets are printed so that they read back as the same program (a listing, a
disassembly, a recorded trace), and that the stepper reads numbers as the assembler does.
"""

from __future__ import annotations

import json

import pytest

from cli_harness import error_line
from isasim import cli
from isasim.arm_sme import ISA
from isasim.core.trace import read_trace

LOOP = """        mov x1, #3
loop:   subs x1, x1, #1
        b.ne loop
        cbz x1, done
        nop
done:   ret
"""


def _write(tmp_path, text: str, name: str = "p.s"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _short(value):
    """A readable test id for a parameter that may be thousands of characters long."""
    return value if len(value) <= 40 else f"{value[:30]}...({len(value)} chars)"


@pytest.mark.parametrize("line, words", [
    ("whilelt p012.h, w7, w8", "not a predicate register"),  # LLVM knows p12, not p012
    ("add x0, x1, #08", "octal"),  # a leading 0 is octal, and 8 is no octal digit
    (".inst 09", "octal"),
    (".inst 1_0", "not a number"),
    (".inst \u0663", "U+0663"),  # Python's int() reads an Arabic-Indic three
    ("add\u00a0x0, x1, #1", "U+00A0"),  # str.split() splits at a no-break space
    ("add x0, x1, #1\u2028add x0, x1, #2", "U+2028"),  # str.splitlines() ends a line there
    ("add x0, x1, #1\x85", "U+0085"),
    ("ld1w {z0.s}, p0/z, [x0, #" + "9" * 5000 + ", mul vl]", "5000 digits"),
    ("add x0, x1, #0x" + "f" * 4400, "4402 digits"),
    ("mov { z0.d, z1.d }, za.s[w8, 6, vgx2]", "must agree"),  # was assembled as za.d
    ("cntb x8, vl1, mul 15", "needs its '#'"),
    ("b.ne 0x10000", "label or #offset"),  # isasim printed targets so; clang reads an offset
    ("cbz x0, 16", "label or #offset"),
    ("ldr za[w12], [x0]", "needs its offset"),
], ids=_short)
def test_hostile_text_is_one_error_line(capsys, tmp_path, line, words):
    error_line(capsys, ["asm", _write(tmp_path, line + "\n"), "--isa", "arm_sme"], "p.s:1", words)


@pytest.mark.parametrize("line", ["add x0, x1, #012", "tbz w0, #031, #8", "add x0, x1, #0b1", ".inst 012",
                                  "mov x0, x31", "b #8", "cbz x0, #16", "b.lo #256", "nop; nop", "# a comment"])
def test_spellings_clang_takes_assemble(capsys, tmp_path, line):
    assert cli.main(["asm", str(_write(tmp_path, line + "\n")), "--isa", "arm_sme"]) == 0, capsys.readouterr().err


def test_a_listing_of_branches_reads_back_as_the_same_program(capsys, tmp_path):
    program = ISA.assemble(LOOP)
    texts = [ins.text for ins in program.instructions]
    assert texts[2] == "b.ne #-4  // 0x10004" and texts[3] == "cbz x1, #8  // 0x10014"
    assert ISA.assemble("\n".join(texts)).code == program.code
    assert ISA.assemble("\n".join(texts), base=0x400000).code == program.code  # offsets: the same anywhere
    assert cli.main(["asm", str(_write(tmp_path, LOOP)), "--isa", "arm_sme"]) == 0
    assert "b.ne #-4  // 0x10004" in capsys.readouterr().out
    assert cli.main(["disasm", program.code.hex(), "--isa", "arm_sme"]) == 0
    assert "cbz x1, #8  // 0x10014" in capsys.readouterr().out


def test_a_recorded_trace_of_branches_replays(capsys, tmp_path):
    init = _write(tmp_path, '{"regs": {}}', "i.json")
    trace = tmp_path / "t.trace.json"
    assert cli.main(["record", str(_write(tmp_path, LOOP)), "--init", str(init), "--isa", "arm_sme",
                     "-o", str(trace)]) == 0, capsys.readouterr().err
    program = read_trace(trace).program
    assert "b.ne #-4  // 0x10004" in program
    assert ISA.assemble("\n".join(program)).code == ISA.assemble(LOOP).code
    assert cli.main(["replay", str(trace)]) == 0, capsys.readouterr().err


def _step(capsys, tmp_path, commands: str) -> tuple[int, str, str]:
    init = _write(tmp_path, json.dumps({"regs": {"svcr": "0x3"}}), "i.json")
    code = cli.main(["step", str(_write(tmp_path, LOOP)), "--init", str(init), "--isa", "arm_sme", "--no-color",
                     "--commands", commands])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("command, words", [
    ("p za.s[w8, 012, vgx4]", "0-7, not 10"),  # 012 is ten, as the assembler reads it (int(x, 0) crashed)
    ("p za.s[w8, 08, vgx4]", "octal"),
    ("p za[" + "9" * 5000 + "]", "5000 digits"),
    ("w z4.s[" + "9" * 5000 + "]", "5000 digits"),
    ("p za1h.s[" + "1" * 4400 + "][0]", "4400 digits"),
    ("p z" + "9" * 5000, "32 Z registers"),
    ("p za.s[w8, " + "7" * 5000 + ", vgx4]", "5000 digits"),
], ids=_short)
def test_stepper_names_read_numbers_as_the_assembler_does(capsys, tmp_path, command, words):
    init = _write(tmp_path, json.dumps({"regs": {"svcr": "0x3"}}), "i.json")
    error_line(capsys, ["step", _write(tmp_path, LOOP), "--init", init, "--isa", "arm_sme", "--no-color",
                        "--commands", command], words)


def test_stepper_subscripts_take_the_assemblers_spellings(capsys, tmp_path):
    code, out, err = _step(capsys, tmp_path, "p za.s[w8, 07, vgx4]; p z4.s[0x3]; p za1h.s[02][0b11]; p za[012]")
    assert code == 0, err
    assert "za.s[w8, 7, vgx4]" in out and "ZA vectors" in out
