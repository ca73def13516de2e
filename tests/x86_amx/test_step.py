"""isasim step and isasim show, driven as a user drives them: scripted, and at a real terminal (a pty)."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from isasim.core.machine import Machine

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "x86_amx"
KERNEL = [EXAMPLE / "int8_block.trace.json"]


def isasim(*args):
    return subprocess.run([sys.executable, "-m", "isasim.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def step(commands: str, *extra):
    done = isasim("step", *KERNEL, "--no-color", "--commands", commands, *extra)
    assert done.returncode == 0, done.stderr
    return done.stdout


def stepper_on(trace_path):
    """The stepper in this process, on a trace, printing into a string."""
    from rich.console import Console

    from isasim.core.stepper import Stepper
    from isasim.core.trace import read_trace

    trace = read_trace(str(trace_path))
    screen = io.StringIO()
    out = Console(file=screen, width=120, no_color=True, highlight=False)
    return Stepper(trace.isa, dict(trace.config), Machine(trace.isa, trace.config).assemble("\n".join(trace.program)),
                   trace.init, out=out), screen


def a_row_c0():
    """C[0][0..3] by the seed article's definition (an INT64 reference of its data)."""
    a0 = [(13 * k) % 256 for k in range(64)]
    return [sum(a0[k] * ((11 * k + 7 * n) % 31 - 15) for k in range(64)) for n in range(4)]


def test_step_shows_each_change_and_tmm0_fills():
    out = step("s 5; s; p tmm0 int32")
    assert "[0] #0 0x400000  ldtilecfg [rcx]" in out and "palette     0 -> 1" in out
    assert "r8  0x0 -> 0x40" in out
    assert "tmm0  16x16 int32  (256 element(s) changed)" in out  # the TDPBUSD step
    lines = out.splitlines()
    title = max(i for i, line in enumerate(lines) if line.startswith("tmm0  16x16 int32"))
    row0 = lines[title + 2].split()  # the title, the column header, then row 0
    assert [str(v) for v in a_row_c0()] == row0[1:5]


def test_breakpoints_by_label_index_and_address_and_continue():
    out = step("b 5; c; p tmm0 int32 hex")
    assert "breakpoint 1 before #5" in out and "next: #5 0x40001d  tdpbusd tmm0,tmm1,tmm2" in out
    out = step("b 0x400022; c")
    assert "next: #6 0x400022  tilestored" in out
    out = step("b amx_block; s; c")  # the label is at #0: continue runs to the end
    assert "the program has ended" in out


def test_watch_a_tile_element_stops_where_it_changes():
    out = step("w tmm0[0][1]; c")
    expected = a_row_c0()[1] % (1 << 32)
    assert "[5] #5 0x40001d  tdpbusd tmm0,tmm1,tmm2" in out
    signed = expected - (1 << 32) if expected >= 1 << 31 else expected
    assert f"watch tmm0[0][1] changed: 0 -> {signed}" in out  # the int32 (-141), not its bits (0xffffff73)


def test_watches_show_typed_values_of_tile_elements_and_memory():
    """A tile element as int32 or the type asked for; memory in its init region's element type."""
    out = step("w 0xa00000; w tmm0[0][1] uint8; w rax; i; c; c")
    assert "watch 1: 0xa00000 = 0" in out and "watch 2: tmm0[0][1] = [0, 0, 0, 0]" in out
    assert "watch 3: rax = 0x0 (0)" in out
    assert "watch tmm0[0][1] changed: [0, 0, 0, 0] -> [115, 255, 255, 255]" in out  # -141 byte by byte
    assert "watch 0xa00000 changed: 0 -> 4916" in out  # C[0][0], an int32 of the region C


def test_back_replays_to_the_same_state():
    out = step("s 6; p rdx; back 4; p r8; back 1; p r8; goto 6; p tmm0 int32")
    assert "at step 2 (replayed from the start)" in out and "r8 = 0x40 (64)" in out
    assert "at step 1 (replayed from the start)" in out and "r8 = 0x0 (0)" in out
    assert "at step 6" in out


def test_print_memory_regions_and_registers():
    out = step("c; p C; p 0xa00000 32; p rflags")
    assert "C @ 0xa00000  16x16 int32" in out
    assert "0xa00000: 34 13 00 00" in out  # C[0][0] = 4916 = 0x1334, little-endian
    assert "rflags = 0x202" in out
    for bad, why in [("p bogus", "cannot print 'bogus'"), ("p tmm9", "cannot print 'tmm9'")]:
        done = isasim("step", *KERNEL, "--no-color", "--commands", bad)
        assert done.returncode == 2 and f"error: {why}" in done.stdout, done.stdout


def test_a_fault_stops_on_the_faulting_instruction_with_the_rule(tmp_path):
    src = tmp_path / "k.s"
    src.write_text("ldtilecfg [rcx]\ntilezero tmm0\ntilezero tmm6\ntilezero tmm1\n")
    init = tmp_path / "k.json"
    cfg = "01" + "00" * 15 + "4000" * 3 + "00" * 26 + "10" * 3 + "00" * 13
    init.write_text(json.dumps({"regs": {"rcx": "0x10000"}, "memory": [{"addr": "0x10000", "hex": cfg}]}))
    done = isasim("step", src, "--init", init, "--no-color", "--commands", "c; s")
    assert done.returncode == 0
    assert "[2] #2 0x40000a  tilezero tmm6" in done.stdout
    assert "fault #UD: tilezero: tmm6 is not configured (rows=0, colsb=0)" in done.stdout
    assert "the program has ended with #UD" in done.stdout


def test_bad_commands_keep_an_interactive_session_going():
    term = Terminal("step", *KERNEL, "--no-color")
    term.read_until("(isasim) ")
    for bad, why in [("frob", "unknown command 'frob'"), ("s x", "'x' is not a number"),
                     ("b nowhere", "'nowhere' is not an instruction index, label or address"),
                     ("w 0xzz", "cannot watch '0xzz'"), ("back 5", "there are only 0 steps to go back over")]:
        term.type(bad)
        assert f"error: {why}" in term.read_until("(isasim) ")
    term.type("s")
    assert "[0] #0 0x400000  ldtilecfg [rcx]" in term.read_until("(isasim) ")
    term.type("q")
    assert term.close() == 0


def test_a_scripted_session_stops_at_its_first_failing_command_and_exits_2():
    """As gdb stops a command file at its first error: the commands after it do not run, and the
    exit status and the one-line message say which command failed."""
    done = isasim("step", *KERNEL, "--no-color", "--commands", "s 2; b nowhere; c; p tmm0")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "isasim: error: command 2 of 4 ('b nowhere') failed: 'nowhere' is not an instruction index, label or "
        "address (2 later commands not run)"]
    assert "[1] #1 0x400005  mov r8,0x40" in done.stdout and "instructions run" not in done.stdout
    commands = ROOT / "tests" / "_step_commands.txt"  # --commands-file behaves the same
    try:
        commands.write_text("s\nfrob\ns\n")
        done = isasim("step", *KERNEL, "--no-color", "--commands-file", commands)
    finally:
        commands.unlink()
    assert done.returncode == 2 and "command 2 of 3 ('frob') failed: unknown command 'frob'" in done.stderr
    assert "[1] #1" not in done.stdout
    # a program that ends or faults is not a failed command
    assert isasim("step", *KERNEL, "--no-color", "--commands", "c; s; c").returncode == 0


@pytest.mark.parametrize("command, why", [
    ("p C int4", "unknown element type or option 'int4'"),
    ("p tmm0 int4", "unknown element type or option 'int4'"),
    ("p tmm0 int64", "a tile is shown as int8, uint8, int16, uint16, int32, uint32, bf16, fp16, fp32, not 'int64'"),
    ("p C fp32", "C holds int32 elements; it is printed as int32"),
    ("w 0x100000:999999999999",
     "cannot watch '0x100000:999999999999': memory 0x100000..0xe8d4b50fff is not all mapped"),
    ("w 0xa00000:0", "the size must be at least 1 byte"),
    ("w tmm0[0][1] int4", "unknown element type or option 'int4'"),
    ("w rax int32", "'rax' is a register"),
])
def test_unknown_types_and_impossible_watches_are_one_line_errors(command, why):
    stepper, screen = stepper_on(KERNEL[0])
    failed = stepper.run_script(command)
    assert failed is not None and why in failed and "\n" not in failed
    assert "= None" not in screen.getvalue() and not stepper.watches


def test_a_failing_print_exits_2_with_one_line():
    done = isasim("step", *KERNEL, "--no-color", "--commands", "p C int4")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "command 1 of 1 ('p C int4') failed: unknown element type or option 'int4'" in done.stderr


def test_help_lists_every_command_with_a_line_each():
    out = step("help")
    for line in ["s [N], step [N]", "c, continue", "back [N]", "goto N", "b LOC, break LOC", "w LOC [TYPE], watch",
                 "d N, delete N", "p WHAT [TYPE] [hex]", "l, list", "i, info", "h, help", "q, quit"]:
        assert any(row.lstrip().startswith(line) for row in out.splitlines()), line


@pytest.mark.needs_silicon
def test_step_against_silicon_on_scalar_code(tmp_path):
    src = tmp_path / "k.s"
    src.write_text("mov rax, 0x7fffffffffffffff\nadd rax, 1\nimul rbx, rax, 3\nret\n")
    done = isasim("step", src, "--no-color", "--against", "silicon", "--commands", "c")
    assert done.returncode == 0 and "DIVERGENCE" not in done.stdout and "the program has ended" in done.stdout


class Terminal:
    """The real program at a pseudo-terminal, as a user types at it."""

    def __init__(self, *args):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(ROOT)
            os.environ["COLUMNS"] = "120"
            os.execv(sys.executable, [sys.executable, "-m", "isasim.cli", *map(str, args)])
        self.output = ""

    def read_until(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while text not in self.output:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"did not see {text!r}; the screen has:\n{self.output[-2000:]}")
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.fd, 65536).decode(errors="replace")
                except OSError:
                    break
                self.output += re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", chunk)
        start = self.output.index(text)
        seen, self.output = self.output[: start + len(text)], self.output[start + len(text):]
        return seen

    def type(self, line: str) -> None:
        os.write(self.fd, (line + "\n").encode())

    def close(self) -> int:
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


def test_interactive_session_at_a_terminal():
    term = Terminal("step", *KERNEL)
    term.read_until("(isasim) ")
    term.type("s 6")
    screen = term.read_until("(isasim) ")
    assert "tdpbusd tmm0,tmm1,tmm2" in screen and "256 element(s) changed" in screen
    term.type("p tmm0 int32")
    screen = term.read_until("(isasim) ")
    assert str(a_row_c0()[0]) in screen
    term.type("back 6")
    assert "at step 0 (replayed from the start)" in term.read_until("(isasim) ")
    term.type("q")
    assert term.close() == 0


def test_ctrl_c_during_continue_returns_to_the_prompt(tmp_path):
    """Ctrl-C at a real terminal while 'c' runs a long loop stops it, as in gdb; the session goes on, and
    Ctrl-C at the prompt only drops the line."""
    src = tmp_path / "spin.s"
    src.write_text("mov rcx, 0x7fffffff\nspin:\ndec rcx\njnz spin\nret\n")
    term = Terminal("step", src, "--no-color", "--max-steps", "4000000000")
    term.read_until("(isasim) ")
    term.type("c")
    time.sleep(1.5)  # the loop is well under way (it would take hours)
    os.write(term.fd, b"\x03")
    screen = term.read_until("(isasim) ")
    assert "interrupted at step" in screen and "next: #" in screen
    time.sleep(0.5)  # readline must be waiting for a key: a signal just before it waits is seen only later
    os.write(term.fd, b"p r\x03")
    term.read_until("(isasim) ")
    term.type("p rcx")
    assert "rcx = 0x" in term.read_until("(isasim) ")
    term.type("q")
    assert term.close() == 0


def test_show_a_trace_in_the_terminal_and_as_html(tmp_path):
    trace = tmp_path / "k.trace.json"
    assert isasim("record", *KERNEL, "-o", trace, "--steps").returncode == 0
    done = isasim("show", trace, "--no-color")
    assert done.returncode == 0
    assert "producer: isasim sim" in done.stdout or "producer: reference" in done.stdout and "tdpbusd tmm0,tmm1,tmm2" in done.stdout
    assert "tile tmm0[0]" in done.stdout and "expectations" in done.stdout
    page = tmp_path / "k.html"
    assert isasim("show", trace, "--html", page).returncode == 0
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "tdpbusd" in html
    again = isasim("show", trace, "--html", page)
    assert again.returncode == 2 and "refusing to overwrite" in again.stderr


def test_print_a_large_region_in_summary_or_all_of_it():
    """The microkernel example's C has 64 rows: 'p C' shows the first and last 16, 'p C all' all 64."""
    kernel = EXAMPLE / "int8_microkernel_2x256.trace.json"
    done = isasim("step", kernel, "--no-color", "--commands", "c; p C; p C all")
    assert done.returncode == 0, done.stderr
    summary, everything = done.stdout.split("C @ ")[1:3]
    labels = lambda text: [line.split()[0] for line in text.splitlines()[2:] if line.strip()]  # noqa: E731
    assert labels(summary)[:33] == [str(r) for r in range(16)] + ["..."] + [str(r) for r in range(48, 64)]
    assert "(32 of 64 rows not shown)" in summary
    assert labels(everything)[:64] == [str(r) for r in range(64)] and "not shown" not in everything


def test_the_session_header_shows_a_file_name_with_brackets_and_counts_one_instruction(tmp_path, capsys):
    """The header is printed through rich: 'y[red]' must not be taken as markup, and one is 'instruction'."""
    from isasim import cli

    marked = tmp_path / "y[red].trace.json"
    marked.write_text(KERNEL[0].read_text())
    assert cli.main(["step", str(marked), "--no-color", "--commands", "s"]) == 0
    unwrapped = "".join(capsys.readouterr().out.split())  # rich wraps the long tmp_path at any width
    assert "y[red].trace.json:9instructionsonemerald-rapids" in unwrapped
    single = tmp_path / "one.s"
    single.write_text("nop\n")
    assert cli.main(["step", str(single), "--no-color", "--commands", "s"]) == 0
    assert "one.s:1instructionon" in "".join(capsys.readouterr().out.split())
