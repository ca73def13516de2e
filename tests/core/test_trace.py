"""The isasim-trace/1 format: reading, writing, replaying, and the errors for malformed files."""

from __future__ import annotations

import copy
import json

import pytest

from isasim.core.errors import TraceFormatError
from isasim.core.replay import replay
from isasim.core.output import OutputError
from isasim.core.trace import parse_trace, read_trace, trace_json, write_trace

CFG = bytes([1, 0] + [0] * 14 + [64, 0] * 3 + [0] * 10 + [0] * 16 + [16] * 3 + [0] * 13)

VALID = {
    "format": "isasim-trace/1",
    "isa": "x86_amx",
    "config": {"cpu": "emerald-rapids"},
    "producer": "hand-written example",
    "program": ["ldtilecfg [rcx]", "tilezero tmm0", "tilestored [rdx+rsi*1], tmm0"],
    "init": {
        "regs": {"rcx": "0x10000", "rdx": 0x20000, "rsi": "64"},
        "memory": [{"addr": "0x10000", "hex": CFG.hex()}, {"addr": "0x20000", "hex": "ff" * 1024}],
    },
    "expect": {"regs": {"rsi": "0x40"}, "memory": [{"addr": "0x20000", "hex": "00" * 1024}], "fault": None,
               "tiles": {"tmm0": "00" * 1024}},
}


def test_a_valid_trace_replays_with_no_difference():
    final, diffs = replay(parse_trace(copy.deepcopy(VALID)))
    assert diffs == [] and final.steps == 3


def test_a_wrong_expectation_is_reported_with_location_and_both_values():
    data = copy.deepcopy(VALID)
    data["expect"]["memory"][0]["hex"] = "00" * 1000 + "01" + "00" * 23
    _final, diffs = replay(parse_trace(data))
    assert len(diffs) == 1
    text = diffs[0].describe()
    assert "expect.memory[0x20000]" in text and "byte 1000" in text and "0x01 vs 0x00" in text


def test_an_expected_fault_is_checked_by_kind_and_index():
    data = copy.deepcopy(VALID)
    data["program"][1] = "tilezero tmm7"  # tmm7 is not configured
    data["expect"] = {"fault": {"kind": "UD", "index": 1}}
    assert replay(parse_trace(data))[1] == []
    data["expect"] = {"fault": {"kind": "#GP", "index": 1}}
    (diff,) = replay(parse_trace(data))[1]
    assert diff.where == "expect.fault" and "#UD" in diff.actual


def test_write_then_read_round_trips(tmp_path):
    trace = parse_trace(copy.deepcopy(VALID))
    path = tmp_path / "t.trace.json"
    write_trace(trace, path)
    again = read_trace(path)
    assert trace_json(again) == trace_json(trace)


def test_writing_never_overwrites_an_existing_file(tmp_path):
    path = tmp_path / "t.trace.json"
    path.write_text("precious")
    with pytest.raises(OutputError, match="refusing to overwrite"):
        write_trace(parse_trace(copy.deepcopy(VALID)), path)
    assert path.read_text() == "precious"


def test_typed_values_and_named_regions():
    data = copy.deepcopy(VALID)
    data["init"]["memory"].append({"name": "A", "addr": "0x30000", "type": "bf16", "values": [1.0, -2.5],
                                   "shape": [1, 2]})
    data["init"]["memory"].append({"addr": "0x40000", "type": "int8", "values": [-1, 127, "0x10"]})
    trace = parse_trace(data)
    assert trace.init.memory[2][1] == bytes.fromhex("803f20c0")
    assert trace.init.memory[3][1] == bytes([0xFF, 0x7F, 0x10])
    assert trace.init.views[0].name == "A" and trace.init.views[0].shape == (1, 2)


BAD = [
    (lambda d: d.update(format="isasim-trace/3"), "format"),
    (lambda d: d.pop("isa"), "isa"),
    (lambda d: d.update(program="ldtilecfg [rcx]"), "program"),
    (lambda d: d.update(program=[1, 2]), "program"),
    (lambda d: d["init"]["regs"].update(rax="zz"), "init.regs.rax"),
    (lambda d: d["init"]["regs"].update(rax=2**64), "init.regs.rax"),
    (lambda d: d["init"]["regs"].update(rax=True), "init.regs.rax"),
    (lambda d: d["init"]["memory"][0].update(hex="abc"), "init.memory[0].hex"),
    (lambda d: d["init"]["memory"][0].update(hex="zz"), "init.memory[0].hex"),
    (lambda d: d["init"]["memory"][0].pop("addr"), "init.memory[0]"),
    (lambda d: d["init"]["memory"][0].update(size=4), "init.memory[0]"),
    (lambda d: d["init"]["memory"][1].update(addr="0x10010"), "overlap"),
    (lambda d: d["init"]["memory"].append({"addr": 0, "type": "int9", "values": [1]}), "type"),
    (lambda d: d["init"]["memory"].append({"addr": 0, "type": "int8", "values": [300]}), "values[0]"),
    (lambda d: d["init"]["memory"].append({"addr": 2**64 - 1, "hex": "0000"}), "address space"),
    (lambda d: d["init"]["memory"].append({"addr": 0, "size": 2**40}), "limit"),
    (lambda d: d["expect"].update(fault={"index": 1}), "expect.fault"),
    (lambda d: d["expect"].update(tiles=["tmm0"]), "expect.tiles"),
    (lambda d: d.update(steps={"index": 0}), "steps"),
]


@pytest.mark.parametrize("mutate,words", BAD)
def test_malformed_traces_name_the_field(mutate, words):
    data = copy.deepcopy(VALID)
    mutate(data)
    with pytest.raises(TraceFormatError) as error:
        parse_trace(data, source="t.trace.json")
    text = str(error.value)
    assert text.startswith("t.trace.json: ") and words in text and "\n" not in text


def test_invalid_json_names_the_line(tmp_path):
    path = tmp_path / "bad.trace.json"
    path.write_text('{\n  "format": "isasim-trace/1",\n  oops\n}\n')
    with pytest.raises(TraceFormatError, match=r"bad.trace.json:3: not valid JSON"):
        read_trace(path)


def test_recorded_steps_are_checked():
    data = copy.deepcopy(VALID)
    data["steps"] = [
        {"index": 0, "text": "ldtilecfg [rcx]", "writes": [{"kind": "tilecfg", "where": "palette", "new": "0x1"}]},
    ]
    _final, diffs = replay(parse_trace(data))
    # the recorded first step lists only one of its writes, so the first difference is in step 0
    assert diffs and diffs[0].where.startswith("step 0 (ldtilecfg [rcx])")
    json.dumps(trace_json(parse_trace(data)))
