"""What ``isasim step`` says of each Ascend cube step's pipe and flags: "pipe PIPE_MTE1 · cleared MTE2_MTE1#0 (set
by #2) · flags set: none".

The expectations are read from the example's program text (examples/ascend_cube/int8_gemm.s) with the rules the
Ascend C API reference states, transcribed here: DataCopy GM -> L1 runs on PIPE_MTE2, LoadData on PIPE_MTE1, Mmad
on PIPE_M, Fixpipe on PIPE_FIX (asc-devkit's 基本架构.md, table 2); SetFlag<SRC_DST> is issued into pipe SRC and
sets the flag, WaitFlag<SRC_DST> into pipe DST and clears it (the SetFlag/WaitFlag page, atlasascendc_api_07_0270).
"""

from __future__ import annotations

import re

import pytest

from ascend_example_pipes import SOURCE, TRACE, expected_pipe
from isasim import cli

def program_lines() -> list[str]:
    return [line.strip() for line in SOURCE.read_text().splitlines() if line.strip() and not line.startswith("#")]


@pytest.fixture(autouse=True)
def wide(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")


def pipe_lines(capsys, commands: str) -> list[str]:
    code = cli.main(["step", str(TRACE), "--no-color", "--commands", commands])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return [line for line in captured.out.splitlines() if line.startswith("pipe PIPE_")]


def test_every_step_names_its_pipe_and_the_flags_left_set(capsys):
    lines = program_lines()
    shown = pipe_lines(capsys, f"s {len(lines)}")
    assert len(shown) == len(lines)
    pending: dict[str, int] = {}  # EVENT#ID -> the instruction that set it
    for index, (line, step) in enumerate(zip(lines, shown)):
        parts = step.split(" · ")
        assert parts[0] == f"pipe {expected_pipe(line)}", (line, step)
        flag = re.search(r"event=(\w+), id=(\d+)", line)
        if line.startswith("SetFlag"):
            pending[f"{flag.group(1)}#{flag.group(2)}"] = index
        elif line.startswith("WaitFlag"):
            key = f"{flag.group(1)}#{flag.group(2)}"
            assert parts[1] == f"cleared {key} (set by #{pending.pop(key)})"
        assert parts[-1] == f"flags set: {', '.join(pending) or 'none'}"


def test_the_flag_is_listed_between_its_set_and_its_wait(capsys):
    lines = program_lines()
    setter = lines.index("SetFlag(event=MTE2_MTE1, id=0)")
    shown = pipe_lines(capsys, f"s {setter + 1}")
    assert shown[-1] == "pipe PIPE_MTE2 · flags set: MTE2_MTE1#0"


def test_stepping_back_forgets_the_flag(capsys):
    lines = program_lines()
    setter = lines.index("SetFlag(event=MTE2_MTE1, id=0)")
    waiter = lines.index("WaitFlag(event=MTE2_MTE1, id=0)")
    # run past the wait, back to before it, and run it again: it clears the flag the same SetFlag set
    shown = pipe_lines(capsys, f"s {waiter + 1}; back; s")
    assert shown[-1] == shown[-2] == f"pipe PIPE_MTE1 · cleared MTE2_MTE1#0 (set by #{setter}) · flags set: none"
