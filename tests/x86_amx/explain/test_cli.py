"""``isasim explain`` of x86_amx instructions from the command line: input handling, x86's own options,
the SVG and HTML it writes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from isasim import cli
from isasim.core.errors import AssemblyError, DecodeError
from isasim.core.explain import Check, ExplainError, split_instruction_argument, terminal_svg

from explain_helpers import ex


def test_instruction_argument():
    assert split_instruction_argument(["c4e2695ec1"]) == (None, bytes.fromhex("c4e2695ec1"))
    assert split_instruction_argument(["c4 e2 69", "5e c1"]) == (None, bytes.fromhex("c4e2695ec1"))
    assert split_instruction_argument(["add"]) == ("add", None)
    with pytest.raises(ExplainError):
        split_instruction_argument(["c4e"])
    with pytest.raises(AssemblyError, match="unknown mnemonic"):
        ex("tilezerox tmm0")
    with pytest.raises(DecodeError):
        ex(code=bytes.fromhex("0f0b"))
    with pytest.raises(ExplainError, match="one instruction"):
        ex("add rax, rbx; ret")


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv,words", [
    (["explain", "tdpbusdx tmm0, tmm1, tmm2"], ["unknown mnemonic"]),
    (["explain", "c4e"], ["not hex bytes"]),
    (["explain", "0f0b"], ["cannot decode"]),
    (["explain", "c4", "e2"], ["cannot decode"]),
    (["explain"], ["needs an instruction"]),
    (["explain", "tdpbusd tmm0, tmm1, tmm2", "--m", "9"], ["outside"]),
    (["explain", "tdpbusd tmm0, tmm1, tmm2", "--shape", "4x4"], ["--shape"]),
    (["explain", "tdpbusd tmm0, tmm1, tmm2", "--init", "no/such.json"], ["no such file"]),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, words):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("isasim: error: ") and "Traceback" not in err
    for word in words:
        assert word in lines[0]


def test_command_writes_svg_and_html(capsys, tmp_path):
    svg, page = tmp_path / "e.svg", tmp_path / "e.html"
    code, out, err = run_cli(capsys, "explain", "tdpbf16ps tmm0, tmm1, tmm2", "--m", "2", "--n", "3",
                             "--seed", "4", "--no-color", "--svg", svg, "--html", page)
    assert code == 0, err
    assert "C[2][3] (fp32): explained" in out and "equal ✓" in out
    root = ET.fromstring(svg.read_text())
    assert root.tag.endswith("svg") and len(root.findall(".//{http://www.w3.org/2000/svg}rect")) > 50
    html = page.read_text()
    assert "<svg" in html and "Worked example" in html and "http" not in html.replace("http://www.w3.org", "")


def test_command_with_hex_and_an_example_trace(capsys):
    code, out, _ = run_cli(capsys, "explain", "c4e2695ec1", "--init",
                           "examples/x86_amx/int8_block.trace.json", "--m", "2", "--n", "3", "--no-color",
                           "--width", "140")
    assert code == 0
    a_row = [(13 * k + 2 * 17) % 256 for k in range(64)]  # the example's A: row m is 13k + 17m mod 256
    assert "C[2][3] (int32): explained" in out and "equal ✓" in out
    assert " ".join(map(str, a_row[:4])) in out


def test_terminal_screenshot_is_rich_svg():
    svg = terminal_svg(ex("tdpbusd tmm0, tmm1, tmm2"))
    ET.fromstring(svg)
    assert "tdpbusd" in svg
    assert isinstance(ex("tdpbusd tmm0, tmm1, tmm2").checks[0], Check)
