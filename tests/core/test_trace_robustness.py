"""Hostile trace and init files (issue 9): every one is a single typed line and exit 2, never a
traceback or exit 70; square brackets and control bytes in user text are shown as they are.

The commands run in-process through ``isasim.cli.main`` (the function the ``isasim`` script
calls), so each case costs milliseconds, not a Python start-up.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from isasim.cli import main
from isasim.core.errors import TraceFormatError
from isasim.core.trace import parse_init, parse_json_text, parse_trace, printable

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "x86_amx" / "int8_block.trace.json"


def example() -> dict:
    return json.loads(EXAMPLE.read_text())


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = main([*map(str, args), "--no-color"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(result, *words):
    code, out, err = result
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isasim: error: "), err
    assert "internal error" not in err
    for word in words:
        assert word in lines[0], (word, lines[0])


def write(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


# ---- numbers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["run", "replay", "show"])
def test_a_5000_digit_number_in_a_trace_is_one_line(tmp_path, capsys, command):
    text = EXAMPLE.read_text().replace('"regs":{', '"regs":{"rax":' + "7" * 5000 + ",", 1)
    assert "7" * 5000 in text
    path = write(tmp_path, "big.trace.json", text)
    result = run_cli(capsys, command, path)
    assert_one_line_error(result, "big.trace.json", "too many digits")
    assert len(result[2]) < 200  # the number is not echoed


def test_a_5000_digit_number_in_an_init_file_is_one_line(tmp_path, capsys):
    program = write(tmp_path, "p.s", "nop\n")
    init = write(tmp_path, "init.json", '{"regs": {"rax": ' + "1" * 5000 + "}}")
    assert_one_line_error(run_cli(capsys, "run", program, "--init", init), "init.json", "too many digits")


def test_a_5000_digit_string_is_not_echoed_whole():
    with pytest.raises(TraceFormatError, match="is not an integer") as caught:
        parse_init({"regs": {"rax": "9" * 5000}})
    assert len(str(caught.value)) < 200


def test_full_width_digits_are_not_a_register_value():
    for value in ("１２", "٣", "0x１f", "-１"):
        with pytest.raises(TraceFormatError, match="ASCII digits"):
            parse_init({"regs": {"rax": value}})


def test_ascii_register_values_still_read():
    assert parse_init({"regs": {"rax": " 12 ", "rcx": "1_000", "rdx": "0xFF"}}).regs == {
        "rax": 12, "rcx": 1000, "rdx": 255}


@pytest.mark.parametrize("kind", ["fp32", "bf16", "fp16"])
def test_float_values_of_ten_to_the_400_are_an_error(kind):
    with pytest.raises(TraceFormatError, match=f"too large for {kind}"):
        parse_init({"memory": [{"addr": "0x1000", "type": kind, "values": [10**400]}]})
    with pytest.raises(TraceFormatError, match=f"too large for {kind}"):
        parse_init({"memory": [{"addr": "0x1000", "type": kind, "values": ["1e400"]}]})
    # infinity said in words is still infinity
    parse_init({"memory": [{"addr": "0x1000", "type": kind, "values": ["inf", "-inf"]}]})


def test_a_json_float_literal_past_the_double_range_is_an_error():
    with pytest.raises(TraceFormatError, match="out of the range of a double"):
        parse_json_text('{"values": [1e400]}', "x.json")
    assert parse_json_text('{"values": [1e300, 1.5]}', "x.json") == {"values": [1e300, 1.5]}


def test_fp32_of_ten_to_the_400_through_the_command_line(tmp_path, capsys):
    program = write(tmp_path, "p.s", "nop\n")
    init = write(tmp_path, "init.json", '{"memory": [{"addr": "0x1000", "type": "fp32", "values": [1e400]}]}')
    assert_one_line_error(run_cli(capsys, "run", program, "--init", init), "init.json", "range of a double")


# ---- init structure ---------------------------------------------------------------------------------


def test_an_element_type_that_is_a_list_is_one_line(tmp_path, capsys):
    program = write(tmp_path, "p.s", "nop\n")
    init = write(tmp_path, "init.json", {"memory": [{"addr": "0x1000", "type": [2, 2], "values": [1]}]})
    assert_one_line_error(run_cli(capsys, "run", program, "--init", init), "init.memory[0].type",
                          "unknown element type [2, 2]")


def test_a_boolean_shape_is_rejected_before_anything_is_printed(tmp_path, capsys):
    program = write(tmp_path, "p.s", "mov rax, 1\n")
    init = write(tmp_path, "init.json", {"memory": [{"name": "A", "addr": "0x1000", "type": "int8",
                                                     "values": [1] * 16, "shape": [True, 16]}]})
    code, out, err = result = run_cli(capsys, "run", program, "--init", init)
    assert_one_line_error(result, "init.memory[0].shape")
    assert out == ""  # no register dump before the error


# ---- trace steps -------------------------------------------------------------------------------------


BAD_STEPS = {
    "fault is a string": ({"fault": "x"}, "steps[0].fault"),
    "writes is a number": ({"writes": 5}, "steps[0].writes"),
    "a write is a number": ({"writes": [5]}, "steps[0].writes[0]"),
    "a write's kind is a list": ({"writes": [{"kind": [1], "where": "rax", "old": "0x0", "new": "0x1"}]},
                                 "steps[0].writes[0].kind"),
    "a write's where is an object": ({"writes": [{"kind": "reg", "where": {}, "new": "0x1"}]},
                                     "steps[0].writes[0].where"),
    "text is a number": ({"text": 3}, "steps[0].text"),
    "the fault's kind is missing": ({"fault": {"rule": "r"}}, "steps[0].fault"),
}


@pytest.mark.parametrize("command", ["show", "replay", "run"])
@pytest.mark.parametrize("case", sorted(BAD_STEPS))
def test_malformed_steps_are_one_line_in_every_consumer(tmp_path, capsys, command, case):
    step, where = BAD_STEPS[case]
    data = example()
    data["steps"] = [step]
    path = write(tmp_path, "s.trace.json", data)
    code, out, err = result = run_cli(capsys, command, path)
    assert_one_line_error(result, "s.trace.json", where)
    assert out == ""


def test_recorded_steps_still_read(tmp_path, capsys):
    out = tmp_path / "rec.trace.json"
    assert main(["record", str(EXAMPLE), "--steps", "-o", str(out)]) == 0
    trace = parse_trace(json.loads(out.read_text()))
    assert trace.steps and all(isinstance(step["writes"], list) for step in trace.steps)
    capsys.readouterr()
    assert run_cli(capsys, "replay", out)[0] == 0


# ---- square brackets and control bytes -------------------------------------------------------------


def test_a_file_name_with_markup_is_shown_as_it_is(tmp_path, capsys):
    # "x[/b].trace.json" is the file "b].trace.json" in a folder "x[": rich read "[/b]" as a closing tag
    for relative in ("x[/b].trace.json", "y[red].trace.json"):
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(EXAMPLE.read_text())
        for command in ("run", "replay", "show"):
            code, out, err = run_cli(capsys, command, path)
            assert code == 0, (command, err)
            assert relative in out.replace("\n", ""), (command, out[:300])


def test_show_keeps_memory_operands(capsys):
    code, out, _err = run_cli(capsys, "show", EXAMPLE)
    assert code == 0
    assert "tileloadd tmm1,[rdi+r8*1]" in out and "tilestored [rdx+r8*1],tmm0" in out


def test_a_fault_message_keeps_its_memory_operand(tmp_path, capsys):
    program = write(tmp_path, "p.s", "mov rax, QWORD PTR [rbx]\n")
    code, out, _err = run_cli(capsys, "run", program)
    assert code == 3
    assert "(mov rax,QWORD PTR [rbx])" in " ".join(out.split())


def test_a_fault_in_a_trace_keeps_ldtilecfg_operand(tmp_path, capsys):
    data = example()
    data["init"]["memory"] = data["init"]["memory"][1:]  # no TILECFG bytes at rcx: #PF
    data["expect"] = {}
    code, out, _err = run_cli(capsys, "run", write(tmp_path, "f.trace.json", data))
    assert code == 3
    assert "(ldtilecfg [rcx])" in out


def test_show_escapes_markup_in_step_records(tmp_path, capsys):
    data = example()
    data["steps"] = [{"index": 0, "pc": "0x400000", "text": "ldtilecfg [rcx]",
                      "writes": [{"kind": "mem", "where": "[bold]x", "old": "[red]", "new": "[/red]"}],
                      "fault": {"kind": "#GP", "rule": "[b]rule[/b]"}}]
    code, out, err = run_cli(capsys, "show", write(tmp_path, "s.trace.json", data))
    assert code == 0, err
    assert "ldtilecfg [rcx]" in out and "[bold]x: [red] -> [/red]" in out and "[b]rule[/b]" in out


def test_control_bytes_are_escaped_in_error_messages(tmp_path, capsys):
    program = write(tmp_path, "p.s", "nop\0\n")
    result = run_cli(capsys, "run", program)
    assert_one_line_error(result, "'nop\\x00'")
    assert "\0" not in result[2]
    init = write(tmp_path, "init.json", '{"regs": {"rax": "1\\u001b[31m"}}')
    result = run_cli(capsys, "run", program, "--init", init)
    assert_one_line_error(result, "init.regs.rax", "1\\u001b[31m")
    assert "\x1b" not in result[2]


def test_printable_escapes_only_what_is_not_printable():
    assert printable("tileloadd tmm1,[rsi]") == "tileloadd tmm1,[rsi]"
    assert printable("a\0b\nc\x1b") == "a\\x00b\\nc\\x1b"
    assert printable("１２ é") == "１２ é"


def test_the_example_trace_still_passes(capsys):
    code, out, _err = run_cli(capsys, "run", EXAMPLE)
    assert code == 0 and "PASS" in out
    assert parse_trace(copy.deepcopy(example())).init.views


def test_control_bytes_in_a_file_name_are_escaped_in_the_output(tmp_path, capsys):
    path = tmp_path / "bell\x07[red].trace.json"
    path.write_text(EXAMPLE.read_text())
    for command in ("run", "replay", "show"):
        code, out, err = run_cli(capsys, command, path)
        assert code == 0, (command, err)
        assert "\x07" not in out and "bell\\x07[red].trace.json" in out.replace("\n", ""), command


def test_hex_strings_take_ascii_spacing_only():
    region = {"addr": "0x1000", "hex": "01 02\n03\t04"}
    assert parse_init({"memory": [region]}).memory[0][1] == bytes([1, 2, 3, 4])
    for spaced in ("01\u300002", "01\u00a002"):  # an ideographic and a no-break space
        with pytest.raises(TraceFormatError, match="hex string"):
            parse_init({"memory": [{"addr": "0x1000", "hex": spaced}]})


def test_a_key_with_a_newline_or_of_5000_characters_stays_one_short_line():
    for name in ("ra\nx", "r" * 5000):
        with pytest.raises(TraceFormatError) as caught:
            parse_init({"regs": {name: "one"}})
        text = str(caught.value)
        assert "\n" not in text and len(text) < 250 and "is not an integer" in text
