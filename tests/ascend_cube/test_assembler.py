"""The Ascend cube's program text: every form prints as it parses, parameters in any order with their
defaults, and bad input is one line naming the file, the line and the rule (exit 2, no traceback).

The print-parse round trip is marked ``consistency`` (the printer against isasim's own parser); the syntax's
evidence is the Ascend C API's names and parameter structs, which the declarations in forms/ follow."""

from __future__ import annotations

import json
import random

import pytest

from cli_harness import error_line
from isasim import cli
from isasim.ascend_cube import ISA, assembler
from isasim.ascend_cube.explain import EXAMPLES
from isasim.ascend_cube.forms import FORMS, LOCATION_KINDS


def _random_value(p, rng):
    if p.kind == "GM":
        return rng.randrange(0, 1 << 40)
    if p.kind in LOCATION_KINDS:
        return rng.randrange(0, 1 << 20)
    if p.kind == "int":
        return rng.randint(p.lo, p.hi)
    if p.kind == "bool":
        return rng.random() < 0.5
    return rng.choice(p.choices)


def test_every_form_has_an_example_and_a_syntax_line():
    assert sorted(EXAMPLES) == sorted(form.id for form in FORMS)
    for form in FORMS:
        assert ISA.assemble(EXAMPLES[form.id]).instructions[0].form is form


@pytest.mark.consistency
@pytest.mark.parametrize("form", list(FORMS), ids=lambda f: f.id)
def test_print_parse_print_is_the_same_instruction_for_random_operands(form):
    rng = random.Random(form.id)
    for _ in range(50):
        operands = tuple(_random_value(p, rng) for p in form.params)
        text = assembler.instruction_text(form, operands)
        again = ISA.assemble(text).instructions[0]
        assert (again.form, again.operands, again.text) == (form, operands, text)


def test_parameters_in_any_order_and_defaults_left_out():
    short = ISA.assemble("LoadData(src=L1[0], dtype=int8, dst=L0B[512])").instructions[0]
    full = ISA.assemble("LoadData(dst=L0B[512], src=L1[0], dtype=int8, startIndex=0, repeatTimes=1, srcStride=1, "
                        "dstGap=0, ifTranspose=false)").instructions[0]
    assert (short.form, short.operands, short.text) == (full.form, full.operands, full.text)


def test_the_buffers_choose_the_form():
    ids = [ISA.assemble(line).instructions[0].form.id for line in (
        "DataCopy(dst=L1[0], src=GM[0x10], blockLen=1)",
        "DataCopy(dst=L1[0], src=GM[0x10], dtype=int8, nValue=1, dValue=1, srcDValue=1, dstNzC0Stride=1)",
        "DataCopy(dst=BT[0], src=L1[0], srcType=int32, dstType=int32, blockLen=1)",
        "DataCopy(dst=FB[0], src=L1[0], blockLen=1)",
        "Fixpipe(dst=L1[0], src=L0C[0], srcType=int32, dstType=int32, nSize=1, mSize=1, srcStride=16, dstStride=1)")]
    assert ids == ["DataCopy_GM_to_L1", "DataCopy_GM_to_L1_Nd2Nz", "DataCopy_L1_to_BT", "DataCopy_L1_to_FB",
                   "Fixpipe_L0C_to_L1"]


BAD_LINES = [
    ("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16)", "k is missing"),
    ("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32, q=1)", "no parameter 'q'"),
    ("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int7, bType=int8, m=16, n=16, k=32)", "aType=int7"),
    ("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=70000)", "k=70000"),
    ("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=-1, n=16, k=3)", "m=-1"),
    ("Mmad(c=L0A[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=1, n=1, k=1)", "not L0A"),
    ("Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=1, n=1, k=1, isBias=yes)", "isBias=yes"),
    ("Mmad(c=L0C[0], c=L0C[0])", "given twice"),
    ("LoadData(dst=L0C[0], src=L1[0], dtype=int8)", "no form moving L1 -> L0C"),
    ("LoadData(dst=L0A[0] src=L1[0], dtype=int8)", "expected L0A[offset]"),
    ("Fixpipe(dst=GM[0x0], src=L0C[0], srcType=int32, dstType=int8, nSize=1, mSize=1, srcStride=16, dstStride=1, "
     "quantPre=REQ4)", "quantPre=REQ4"),
    ("mmad(c=L0C[0])", "spelled Mmad"),
    ("loop: SetAtomicNone()", "straight-line"),
    ("SetAtomicNone", "expected SetAtomicNone(name=value, ...)"),
    ("SetFixpipePreQuantFlag(config=0x10000000000000000)", "config"),
]


@pytest.mark.parametrize("line, words", BAD_LINES)
def test_a_bad_line_is_one_error_naming_file_line_and_rule(line, words, capsys, tmp_path):
    program = tmp_path / "bad.s"
    program.write_text("SetAtomicNone()   # fine\n" + line + "\n")
    for command in ("run", "asm"):
        error_line(capsys, [command, program, "--isa", "ascend_cube"], f"{program}:2:", words)


def test_a_text_only_program_lists_without_bytes(capsys, tmp_path):
    program = tmp_path / "p.s"
    program.write_text(EXAMPLES["Mmad"] + "\n")
    assert cli.main(["asm", str(program), "--isa", "ascend_cube"]) == 0
    assert "no binary encoding" in capsys.readouterr().out
    error_line(capsys, ["explain", "0011", "--hex", "--isa", "ascend_cube"], "no binary encoding")


def test_chip_and_options_on_the_command_line_reach_the_trace(capsys, tmp_path):
    program, out = tmp_path / "p.s", tmp_path / "t.trace.json"
    program.write_text("SetAtomicAdd(dtype=float32)\n")
    assert cli.main(["record", str(program), "--isa", "ascend_cube", "--chip", "950", "--option",
                     "l0c_int32_overflow=wrap,int8_rounding=ties_away", "-o", str(out)]) == 0
    config = json.loads(out.read_text())["config"]
    assert config["chip"] == "950"
    assert config["options"]["l0c_int32_overflow"] == "wrap" and config["options"]["int8_rounding"] == "ties_away"
    assert config["options"]["mmad_float_accumulation"] == "exact_single_rounding"  # every setting written


@pytest.mark.parametrize("argv, words", [
    (["--chip", "310P"], ["unknown chip '310P'", "910B"]),
    (["--option", "nosuch=1"], ["nosuch"]),
    (["--option", "l0c_int32_overflow=maybe"], ["l0c_int32_overflow", "saturate"]),
    (["--option", "l0c_int32_overflow"], ["NAME=VALUE"]),
])
def test_a_bad_chip_or_option_is_one_line(argv, words, capsys, tmp_path):
    program = tmp_path / "p.s"
    program.write_text("SetAtomicNone()\n")
    error_line(capsys, ["run", program, "--isa", "ascend_cube", *argv], *words)


def test_an_existing_output_is_not_overwritten_without_force(capsys, tmp_path):
    program, out = tmp_path / "p.s", tmp_path / "t.json"
    program.write_text("SetAtomicNone()\n")
    out.write_text("mine")
    error_line(capsys, ["record", program, "--isa", "ascend_cube", "-o", out], str(out))
    assert out.read_text() == "mine"
