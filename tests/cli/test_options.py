"""The small things of issue 9: --version, python -m isasim, help for every option, sizes and counts refused
before anything is built, no empty TILECFG block for a scalar program, "1 instruction"."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_harness import error_line
from isasim import cli
from isasim.core.trace import parse_trace, trace_json
from isasim.x86_amx.kernels import article as kernels

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_TRACE = ROOT / "examples" / "x86_amx" / "int8_block.trace.json"


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith("isasim ") and len(out.split()) >= 2


def test_python_dash_m_isasim_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "isasim", "--version"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("isasim ")


def _all_parsers(parser: argparse.ArgumentParser):
    yield parser.prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"isasim {name}", sub


def test_every_option_and_positional_has_help():
    missing = []
    for prog, parser in _all_parsers(cli.build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{prog} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, missing


# ---- counts, sizes and widths refused up front ----------------------------------------------


@pytest.mark.parametrize("argv, words", [
    (["run", EXAMPLE_TRACE, "--max-steps", "-1"], ["--max-steps", "at least 1"]),
    (["replay", EXAMPLE_TRACE, "--max-steps", "0"], ["--max-steps", "at least 1"]),
    (["replay", EXAMPLE_TRACE, "--max-report", "-3"], ["--max-report", "at least 1"]),
    (["step", EXAMPLE_TRACE, "--max-steps", "-5", "--commands", "s"], ["--max-steps", "at least 1"]),
    (["kernel", "int8_batch", "--count", "-1", "-o", "k.json"], ["--count", "at least 1"]),
    (["kernel", "int8_batch", "--count", "0", "-o", "k.json"], ["--count", "at least 1"]),
    (["kernel", "int8_microkernel", "--k", "0", "-o", "k.json"], ["--k", "at least 1"]),
    (["kernel", "int8_microkernel", "--k", "100", "-o", "k.json"], ["multiple of 64", "100"]),
    (["kernel", "bf16_block", "--k", "33", "-o", "k.json"], ["1..32", "33"]),
    (["kernel", "int8_batch", "--k", "64", "-o", "k.json"], ["takes no K"]),
    (["kernel", "int8_block", "--count", "2", "-o", "k.json"], ["takes no count"]),
    (["explain", "tilezero tmm0", "--seed", "-1"], ["--seed", "at least 0"]),
    (["explain", "tilezero tmm0", "--width", "0"], ["--width", "at least 1"]),
    (["explain", "tdpbusd tmm0, tmm1, tmm2", "--m", "-1"], ["--m", "at least 0"]),
    (["explain", "tileloadd tmm0, [rax+rbx*1]", "--start-row", "-2"], ["--start-row", "at least 0"]),
    (["step", EXAMPLE_TRACE, "--svg-width", "0", "--commands", "s"], ["--svg-width", "at least 1"]),
    (["kernel", "int8_batch", "--count", "١٠", "-o", "k.json"], ["--count", "expected an integer"]),
    (["kernel", "int8_batch", "--count", "1_0", "-o", "k.json"], ["--count", "expected an integer"]),
    (["fuzz", "--against", "sim", "--shrink-seconds", "-1"], ["--shrink-seconds", "expected a number of seconds"]),
    (["fuzz", "--against", "sim", "--shrink-seconds", "nan"], ["--shrink-seconds", "expected a number of seconds"]),
    (["disasm", "90", "--base", "١٠"], ["--base", "expected an address"]),
    (["disasm", "90", "--base", "0x1_0"], ["--base", "expected an address"]),
])
def test_bad_numbers_are_one_line_errors(tmp_path, capsys, monkeypatch, argv, words):
    monkeypatch.chdir(tmp_path)
    error_line(capsys, argv, *words)
    assert not (tmp_path / "k.json").exists()


def test_a_kernel_too_large_is_refused_with_its_size_before_anything_is_built(tmp_path, capsys, monkeypatch):
    def must_not_build(*args, **kwargs):
        raise AssertionError("the kernel was built before its size was checked")

    monkeypatch.setattr(kernels, "_microkernel", must_not_build)  # what int8_microkernel() builds with
    line = error_line(capsys, ["kernel", "int8_microkernel", "--count", "100000", "-o", tmp_path / "mk.json"],
                      f"{kernels.memory_bytes('int8_microkernel', 100000, 1280):,} bytes",
                      f"{kernels.MAX_KERNEL_MEMORY_BYTES:,}")
    assert "32 MiB" in line
    assert not (tmp_path / "mk.json").exists()


def test_memory_bytes_is_what_the_trace_carries():
    for name, options in [("int8_batch", {"count": 3}), ("int8_microkernel", {"count": 2, "K": 128}),
                          ("bf16_microkernel", {"count": 1, "K": 64}), ("int8_block", {"K": 16})]:
        kernel = kernels.build(name, **options)
        carried = sum(len(data) for _address, data, _writable in kernel.init.memory)
        carried += sum(len(data) for _address, data in kernel.expected)
        assert kernels.memory_bytes(name, options.get("count", 1), options.get("K", 64)) == carried, name


def test_count_zero_cannot_be_built_from_python_either():
    with pytest.raises(kernels.KernelSizeError, match="at least 1"):
        kernels.int8_batch(0)
    with pytest.raises(kernels.KernelSizeError, match="at least 1"):
        kernels.int8_microkernel(0, 64)


def test_a_large_batch_kernel_keeps_its_regions_apart():
    # 7169 blocks of A (16 x 64 bytes each) no longer fit below the usual address of packed B; the trace
    # was rejected by its own reader ("regions ... overlap") before the layout made room.
    kernel = kernels.build("int8_batch", count=7169)
    trace = parse_trace(json.loads(json.dumps(trace_json(kernel.trace()))), "large")
    spans = sorted((address, address + len(data)) for address, data, _writable in trace.init.memory)
    assert all(end <= start for (_s, end), (start, _e) in zip(spans, spans[1:]))
    assert kernel.init.regs["rsi"] > kernels.B_BASE


def test_small_kernels_keep_their_usual_addresses():
    kernel = kernels.build("int8_batch", count=4)
    assert (kernel.init.regs["rdi"], kernel.init.regs["rsi"], kernel.init.regs["rdx"]) == (
        kernels.A_BASE, kernels.B_BASE, kernels.C_BASE)


# ---- what run prints --------------------------------------------------------------------


def test_a_scalar_program_prints_no_empty_tilecfg_block(tmp_path, capsys):
    program = tmp_path / "scalar.s"
    program.write_text(".intel_syntax noprefix\nmov rax, 5\n")
    assert cli.main(["run", str(program), "--no-color"]) == 0
    out = capsys.readouterr().out
    assert "TILECFG" not in out and "rax" in out


def test_an_amx_program_still_shows_tilecfg_when_unconfigured(tmp_path, capsys):
    program = tmp_path / "amx.s"
    program.write_text(".intel_syntax noprefix\nmov rax, 5\ntilerelease\n")
    assert cli.main(["run", str(program), "--no-color"]) == 0
    assert "INIT: tiles not configured" in capsys.readouterr().out


def test_one_instruction_is_singular(tmp_path, capsys):
    program = tmp_path / "one.s"
    program.write_text(".intel_syntax noprefix\nmov rax, 5\n")
    assert cli.main(["run", str(program), "--no-color"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # rich wraps a long temporary path at 80 columns
    assert ": 1 instruction on " in out and "1 instructions" not in out
    program.write_text(".intel_syntax noprefix\nmov rax, 5\nmov rbx, 6\n")
    assert cli.main(["run", str(program), "--no-color"]) == 0
    assert ": 2 instructions on " in " ".join(capsys.readouterr().out.split())


def test_an_unknown_register_in_an_init_file_names_the_file(tmp_path, capsys):
    program, init = tmp_path / "one.s", tmp_path / "init.json"
    program.write_text("nop\n")
    init.write_text('{"regs": {"rzz": 1}}')
    line = error_line(capsys, ["run", program, "--init", init], "unknown register 'rzz'")
    assert line.startswith(f"isasim: error: {init}:")


def test_an_unknown_cpu_model_is_quoted_briefly_and_names_its_file(tmp_path, capsys):
    program, init = tmp_path / "one.s", tmp_path / "init.json"
    program.write_text("nop\n")
    init.write_text(json.dumps({"config": {"cpu": "x" * 3000}}))
    line = error_line(capsys, ["run", program, "--init", init], "unknown CPU model")
    assert line.startswith(f"isasim: error: {init}:") and len(line) < 300
