"""The Ascend int8 GEMM example's files and the pipe each of its lines runs on, by the rules the Ascend C API
reference states, transcribed here for the pipe view's and the timeline's tests: DataCopy GM -> L1 runs on
PIPE_MTE2, LoadData on PIPE_MTE1, Mmad on PIPE_M, Fixpipe on PIPE_FIX (asc-devkit's 基本架构.md, table 2);
SetFlag<SRC_DST> is issued into pipe SRC, WaitFlag<SRC_DST> into pipe DST (atlasascendc_api_07_0270)."""

from __future__ import annotations

import re
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "ascend_cube"
TRACE = EXAMPLES / "int8_gemm.trace.json"
SOURCE = EXAMPLES / "int8_gemm.s"
FORM_PIPES = {"DataCopy": "MTE2", "LoadData": "MTE1", "Mmad": "M", "Fixpipe": "FIX"}  # the example's forms


def expected_pipe(line: str) -> str:
    """The pipe a line of the example runs on, by the rules above."""
    name = line.split("(", 1)[0]
    event = re.search(r"event=(\w+)", line)
    if name == "SetFlag":
        return "PIPE_" + event.group(1).split("_")[0]
    if name == "WaitFlag":
        return "PIPE_" + event.group(1).split("_")[1]
    return "PIPE_" + FORM_PIPES[name]
