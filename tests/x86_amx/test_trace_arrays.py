"""x86_amx's arrays in traces: TILECFG and tmm0-7 seeded by init.arrays and checked by expect.arrays
(isasim-trace/2), and the isasim-trace/1 keys (expect.tiles, expect.tilecfg) still read as the same arrays.

What a tile holds after a store is established by the silicon traces (tests/test_golden_traces.py); these
tests are about the file format and its errors, so they use small hand-written examples.
"""

from __future__ import annotations

import copy
import json

import pytest

from cli_harness import error_line
from isasim import cli
from isasim.core.replay import replay
from isasim.core.trace import FORMAT, parse_trace, read_trace, trace_json

# a 2 x 8 int32 tile: rows 2, colsb 32
TILECFG = bytearray(64)
TILECFG[0], TILECFG[16], TILECFG[48] = 1, 32, 2
TILE = bytes(range(64))

STORE_PROGRAM = ["mov rdx, 32", "tilestored [rdi+rdx*1], tmm0", "ret"]


def seeded_trace() -> dict:
    return {"format": FORMAT, "isa": "x86_amx", "program": STORE_PROGRAM,
            "init": {"regs": {"rdi": "0x10000"}, "memory": [{"addr": "0x10000", "size": 64}],
                     "arrays": {"tilecfg": bytes(TILECFG).hex(), "tmm0": TILE.hex()}},
            "expect": {"fault": None, "memory": [{"addr": "0x10000", "hex": TILE.hex()}],
                       "arrays": {"tmm0": TILE.hex(), "tilecfg": bytes(TILECFG).hex()}}}


def test_seeded_arrays_are_what_the_program_sees_and_what_expect_checks():
    _final, diffs = replay(parse_trace(seeded_trace()))
    assert diffs == []


def test_an_expected_array_that_differs_is_named_by_row_and_dword():
    data = seeded_trace()
    wrong = bytearray(TILE)
    wrong[32 + 9] ^= 0xFF  # row 1, byte 9: dword 2
    data["expect"]["arrays"]["tmm0"] = wrong.hex()
    _final, diffs = replay(parse_trace(data))
    assert [d.where for d in diffs] == ["expect.arrays.tmm0[1]"]
    assert "dword 2" in diffs[0].describe()


def test_an_expected_array_the_state_does_not_hold_says_so():
    data = seeded_trace()
    data["expect"]["arrays"]["tmm5"] = "00" * 4  # tmm5 is not configured
    _final, diffs = replay(parse_trace(data))
    assert [d.where for d in diffs] == ["expect.arrays.tmm5"]
    assert "does not hold tmm5" in diffs[0].describe()


def test_version_1_tiles_and_tilecfg_read_as_the_arrays_and_write_as_version_2():
    data = seeded_trace()
    data["format"] = "isasim-trace/1"
    arrays = data["expect"].pop("arrays")
    data["expect"]["tiles"] = {"tmm0": arrays["tmm0"]}
    data["expect"]["tilecfg"] = arrays["tilecfg"]
    old = parse_trace(data)
    assert old.format == "isasim-trace/1"
    assert old.expect["arrays"] == {"tmm0": TILE, "tilecfg": bytes(TILECFG)}
    assert replay(old)[1] == []
    written = trace_json(old)
    assert written["format"] == FORMAT == "isasim-trace/2"
    assert "tiles" not in written["expect"] and written["expect"]["arrays"]["tmm0"] == TILE.hex()
    # in a version 2 file the old keys are not arrays: an unknown key is ignored, as always
    again = copy.deepcopy(written)
    again["expect"]["tiles"] = {"tmm0": "00"}
    assert parse_trace(again).expect["arrays"] == old.expect["arrays"]


@pytest.mark.parametrize("arrays,words", [
    ({"tmm9": "00"}, ["init.arrays.tmm9", "no array"]),
    ({"tilecfg": "00" * 63}, ["init.arrays.tilecfg", "64 bytes"]),
    ({"tilecfg": "01" + "00" * 63, "tmm0": "00"}, ["init.arrays.tmm0", "not configured"]),
    ({"tilecfg": bytes(TILECFG).hex(), "tmm0": "00" * 63}, ["init.arrays.tmm0", "64 bytes", "not 63"]),
    ({"tilecfg": "0100ff" + "00" * 61}, ["init.arrays.tilecfg", "LDTILECFG would refuse", "reserved byte 2"]),
    ({"tilecfg": "zz"}, ["init.arrays.tilecfg", "hex"]),
])
def test_bad_seeds_are_one_line_errors_naming_the_array(tmp_path, capsys, arrays, words):
    data = seeded_trace()
    data["init"]["arrays"] = arrays
    path = tmp_path / "bad.trace.json"
    path.write_text(json.dumps(data))
    error_line(capsys, ["run", path, "--no-color"], *words)


def test_record_writes_the_arrays_the_run_ends_with(tmp_path, capsys):
    program = tmp_path / "p.s"
    program.write_text("ldtilecfg [rsi]\nmov rdx, 32\ntileloadd tmm0, [rdi+rdx*1]\nret\n")
    init = tmp_path / "init.json"
    init.write_text(json.dumps({"regs": {"rsi": "0x20000", "rdi": "0x10000"},
                                "memory": [{"addr": "0x10000", "hex": TILE.hex()},
                                           {"addr": "0x20000", "hex": bytes(TILECFG).hex()}]}))
    out = tmp_path / "out.trace.json"
    assert cli.main(["record", str(program), "--init", str(init), "-o", str(out), "--no-color"]) == 0
    trace = read_trace(out)
    assert trace.format == FORMAT
    assert trace.expect["arrays"] == {"tilecfg": bytes(TILECFG), "tmm0": TILE}
    capsys.readouterr()
    # and the trace it wrote can be a seed: the same tile, without the loads
    data = json.loads(out.read_text())
    data["init"]["arrays"] = data["expect"]["arrays"]
    data["program"] = ["ret"]
    data["expect"] = {"arrays": data["expect"]["arrays"]}
    seeded = tmp_path / "seeded.trace.json"
    seeded.write_text(json.dumps(data))
    assert cli.main(["replay", str(seeded), "--no-color"]) == 0


@pytest.mark.needs_silicon
def test_silicon_refuses_to_seed_arrays_with_a_reason(tmp_path, capsys):
    data = seeded_trace()
    data["program"] = ["ret"]
    data["expect"] = {}
    path = tmp_path / "seeded.trace.json"
    path.write_text(json.dumps(data))
    error_line(capsys, ["replay", path, "--backend", "silicon", "--no-color"], "cannot seed init.arrays")
