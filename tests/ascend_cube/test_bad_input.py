"""Property tests for the Ascend cube's bad input: random program text and traces give a result or a
documented one-line error (the IsasimError family), never a crash; every program that parses prints
back to itself.

The parser test is marked ``consistency``: what it compares is isasim's printer with its own parser.  The
evidence for the syntax is the Ascend C API's parameter names (forms/), and for the values a valid
trace computes, the hand-worked C of test_the_valid_trace_replays."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trace_mutations import json_values, only_documented_errors, paths, replaced

from isasim.core.replay import replay
from isasim.core.trace import parse_trace
from isasim.ascend_cube import ISA
from isasim.ascend_cube.forms import FORMS, QUANT_MODES

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

WORDS = sorted({f.name for f in FORMS} | {p.name for f in FORMS for p in f.params} | set(QUANT_MODES) | {
    "(", ")", "=", ",", "[", "]", "L1", "L0A", "L0B", "L0C", "BT", "FB", "GM", "L0X", "0", "512", "0x10000",
    "-1", "99999999999999999999", "true", "false", "int8", "float16", "#", "//", "\n", " ", "label:", "dst", "src"})
program_text = st.one_of(st.text(max_size=200), st.lists(st.sampled_from(WORDS), max_size=40).map("".join),
                         st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join))


@pytest.mark.consistency
@SETTINGS
@given(program_text)
def test_the_parser_accepts_or_reports_one_line(text):
    program = only_documented_errors(ISA.assemble, text)
    if program is not None:
        again = ISA.assemble("\n".join(i.text for i in program.instructions))
        parsed = [(i.form, i.operands) for i in program.instructions]
        assert [(i.form, i.operands) for i in again.instructions] == parsed


VALID_TRACE = {
    "format": "isasim-trace/2",
    "isa": "ascend_cube",
    "config": {"chip": "910B", "options": {"l0c_int32_overflow": "wrap"}},
    "program": ["DataCopy(dst=L1[0], src=GM[0x10000], dtype=int8, nValue=16, dValue=32, srcDValue=32, "
                "dstNzC0Stride=16)", "SetFlag(event=MTE2_MTE1, id=0)", "WaitFlag(event=MTE2_MTE1, id=0)",
                "LoadData(dst=L0A[0], src=L1[0], dtype=int8)", "LoadData(dst=L0B[0], src=L1[0], dtype=int8)",
                "SetFlag(event=MTE1_M, id=0)", "WaitFlag(event=MTE1_M, id=0)",
                "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32)",
                "SetFixpipePreQuantFlag(config=0x400000002000)",
                "SetFlag(event=M_FIX, id=0)", "WaitFlag(event=M_FIX, id=0)",
                "Fixpipe(dst=GM[0x20000], src=L0C[0], srcType=int32, dstType=int32, nSize=16, mSize=16, "
                "srcStride=16, dstStride=16)"],
    "init": {"regs": {"ctrl": "0x0"}, "memory": [{"addr": "0x10000", "hex": "01" * 512},
                                                 {"addr": "0x20000", "size": 1024}]},
    "expect": {"regs": {"quant_pre": "0x400000002000"}, "fault": None,
               "memory": [{"addr": "0x20000", "hex": "20000000" * 256}]},
}

ALL_PATHS = list(paths(VALID_TRACE))[1:]


def mutate(path, replacement):
    return replaced(VALID_TRACE, path, replacement)


def test_the_valid_trace_replays(tmp_path, capsys):
    """C = A . B of all-ones 16 x 32 and 32 x 16 int8: 32 everywhere (0x20), as the expectation says."""
    from isasim import cli

    path = tmp_path / "valid.trace.json"
    path.write_text(json.dumps(VALID_TRACE))
    assert cli.main(["replay", str(path), "--no-color"]) == 0, capsys.readouterr().out


@SETTINGS
@given(st.sampled_from(ALL_PATHS), json_values | st.sampled_from(["950", "310P", "saturate", "GM_FAULT",
                                                                   "LoadData(dst=L0A[1], src=L1[0], dtype=int8)"]))
def test_a_valid_trace_with_one_value_replaced_parses_and_replays_or_errs_in_one_line(path, replacement):
    data = mutate(path, replacement)
    json.dumps(data)
    trace = only_documented_errors(parse_trace, data)
    if trace is not None:
        only_documented_errors(replay, trace, "sim", 10_000)
