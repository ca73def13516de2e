"""``--timeline FILE.json``: the run's schedule as Chrome trace-event JSON (Google's Trace Event Format: "X"
complete events, "M" thread_name metadata, "s"/"f" flow events sharing an id).

What the timeline must show is read from the program text (examples/ascend_cube/int8_gemm.s) with the public
rules transcribed in tests/ascend_example_pipes.py (each form's pipe; SetFlag<SRC_DST> on SRC,
WaitFlag on DST; a WaitFlag clears the flag the latest SetFlag of its event and ID set).
"""

from __future__ import annotations

import json
import re

import numpy as np

from ascend_example_pipes import SOURCE, TRACE, expected_pipe
from isasim import cli
from isasim.core.isa import get_isa
from isasim.core.machine import Machine

FLAG = re.compile(r"(SetFlag|WaitFlag)\(event=(\w+), id=(\d+)\)")


def source_instructions() -> list[tuple[int, str]]:
    """(file line number, text) of each instruction of the example, in program order."""
    return [(number, line.strip()) for number, line in enumerate(SOURCE.read_text().splitlines(), start=1)
            if line.strip() and not line.lstrip().startswith("#")]


def expected_pairs(lines: list[str]) -> list[tuple[int, int]]:
    """(SetFlag index, WaitFlag index) as the program text pairs them: a wait clears the latest set before it."""
    latest, pairs = {}, []
    for index, line in enumerate(lines):
        match = FLAG.fullmatch(line)
        if match and match.group(1) == "SetFlag":
            latest[match.group(2, 3)] = index
        elif match:
            pairs.append((latest.pop(match.group(2, 3)), index))
    return pairs


def write_timeline(tmp_path, capsys, *args, command="run", target=TRACE) -> dict:
    out = tmp_path / "timeline.json"
    code = cli.main([command, str(target), "--no-color", "--timeline", str(out), *args])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f"wrote {out}" in captured.out
    return json.loads(out.read_text())


def boxes(document: dict) -> list[dict]:
    return [event for event in document["traceEvents"] if event["ph"] == "X"]


def track_names(document: dict) -> dict[int, str]:
    return {event["tid"]: event["args"]["name"] for event in document["traceEvents"]
            if event["ph"] == "M" and event["name"] == "thread_name"}


def flows(document: dict) -> dict[int, dict[str, dict]]:
    out: dict[int, dict[str, dict]] = {}
    for event in document["traceEvents"]:
        if event["ph"] in ("s", "f"):
            assert event["ph"] not in out.setdefault(event["id"], {})
            out[event["id"]][event["ph"]] = event
    return out


def box_holding(document: dict, event: dict) -> dict:
    """The box a flow event binds to: the one on its track whose span holds its ts."""
    [box] = [b for b in boxes(document) if b["tid"] == event["tid"] and b["ts"] <= event["ts"] < b["ts"] + b["dur"]]
    return box


def test_one_track_per_pipe_the_program_uses(tmp_path, capsys):
    document = write_timeline(tmp_path, capsys)
    names = track_names(document)
    assert len(set(names.values())) == len(names)  # no pipe twice
    assert set(names.values()) == {expected_pipe(line) for _number, line in source_instructions()}
    assert set(names.values()) == {"PIPE_MTE2", "PIPE_MTE1", "PIPE_M", "PIPE_FIX"}


def test_every_instruction_once_on_its_pipes_track_in_run_order(tmp_path, capsys):
    document = write_timeline(tmp_path, capsys)
    lines = [line for _number, line in source_instructions()]
    shown = sorted(boxes(document), key=lambda box: box["ts"])
    assert sorted(box["args"]["index"] for box in shown) == list(range(len(lines)))
    names = track_names(document)
    for box in shown:
        line = lines[box["args"]["index"]]
        assert names[box["tid"]] == expected_pipe(line)
        assert box["args"]["text"].startswith(line.split("(", 1)[0] + "(")
    # every flag of this program lets the next instruction run at once: the inorder schedule is program order
    assert [box["args"]["index"] for box in shown] == list(range(len(lines)))
    assert [box["ts"] for box in shown] == list(range(len(lines)))  # ts: the step, one unit a box
    assert "not how many cycles" in document["otherData"]["time"]
    assert document["otherData"]["schedule"] == "inorder"


def test_each_flow_joins_a_setflag_to_the_waitflag_that_cleared_it(tmp_path, capsys):
    document = write_timeline(tmp_path, capsys)
    numbered = source_instructions()
    lines = [line for _number, line in numbered]
    joined = set()
    for flow in flows(document).values():
        start, end = flow["s"], flow["f"]
        assert end["bp"] == "e" and start["name"] == end["name"]
        joined.add((box_holding(document, start)["args"]["index"], box_holding(document, end)["args"]["index"]))
    assert joined == set(expected_pairs(lines))
    # by the file's own line numbers: MTE2_MTE1 is set on line 6 and waited for on line 7
    by_line = {(numbered[s][0], numbered[w][0]) for s, w in joined}
    setter = next(n for n, line in numbered if line == "SetFlag(event=MTE2_MTE1, id=0)")
    waiter = next(n for n, line in numbered if line == "WaitFlag(event=MTE2_MTE1, id=0)")
    assert (setter, waiter) == (6, 7) and (6, 7) in by_line
    assert len(joined) == 3  # MTE2_MTE1, MTE1_M, M_FIX


def test_step_and_replay_write_the_same_timeline_as_run(tmp_path, capsys):
    for folder in "rsp":
        (tmp_path / folder).mkdir()
    ran = write_timeline(tmp_path / "r", capsys)
    stepped = write_timeline(tmp_path / "s", capsys, "--commands", "c", command="step")
    replayed = write_timeline(tmp_path / "p", capsys, command="replay")
    assert ran == stepped == replayed


def test_a_step_session_writes_the_run_as_far_as_it_went(tmp_path, capsys):
    document = write_timeline(tmp_path, capsys, "--commands", "s 4", command="step")
    assert sorted(box["args"]["index"] for box in boxes(document)) == [0, 1, 2, 3]
    assert len(flows(document)) == 1


# ---- a schedule with room: two buffers, each with its own event ID ---------------------------------------------

PING_PONG = ["DataCopy(dst=L1[0], src=GM[0x100000], blockLen=16)", "SetFlag(event=MTE2_MTE1, id=0)",
             "DataCopy(dst=L1[8192], src=GM[0x100200], blockLen=16)", "SetFlag(event=MTE2_MTE1, id=1)",
             "WaitFlag(event=MTE2_MTE1, id=0)", "LoadData(dst=L0A[0], src=L1[0], dtype=int8)",
             "SetFlag(event=MTE1_M, id=0)",
             "WaitFlag(event=MTE2_MTE1, id=1)", "LoadData(dst=L0B[0], src=L1[8192], dtype=int8)",
             "SetFlag(event=MTE1_M, id=1)",
             "WaitFlag(event=MTE1_M, id=0)", "WaitFlag(event=MTE1_M, id=1)",
             "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32)"]


def ping_pong_timeline(**config) -> dict:
    machine = Machine("ascend_cube", {"chip": "910B", **config})
    gm = np.random.default_rng(1).integers(0, 256, 1024, dtype=np.uint8).tobytes()
    machine.load(machine.assemble("\n".join(PING_PONG)), memory=[(0x100000, gm, True)])
    machine.run()
    assert machine.fault is None
    return get_isa("ascend_cube").timeline(machine.state)


def test_a_random_schedule_differs_from_inorder_yet_keeps_each_pipes_program_order():
    inorder = ping_pong_timeline()
    assert [box["args"]["index"] for box in sorted(boxes(inorder), key=lambda b: b["ts"])] == \
        list(range(len(PING_PONG)))
    differing = 0
    for seed in range(16):
        document = ping_pong_timeline(schedule="random", seed=seed)
        assert document["otherData"]["schedule"] == "random" and document["otherData"]["seed"] == seed
        order = [box["args"]["index"] for box in sorted(boxes(document), key=lambda b: b["ts"])]
        assert sorted(order) == list(range(len(PING_PONG)))
        differing += order != list(range(len(PING_PONG)))
        for tid in track_names(document):
            on_track = [b["args"]["index"] for b in sorted(boxes(document), key=lambda b: b["ts"]) if b["tid"] == tid]
            assert on_track == sorted(on_track)  # each pipe runs its queue in program order
        pairs = expected_pairs(PING_PONG)
        for flow in flows(document).values():
            setter, waiter = (box_holding(document, flow[ph])["args"]["index"] for ph in "sf")
            assert (setter, waiter) in pairs and flow["s"]["ts"] < flow["f"]["ts"]
        assert len(flows(document)) == len(pairs)
    assert differing > 0


def test_the_timeline_of_a_run_stopped_by_a_race_ends_before_the_racing_instruction(tmp_path):
    lines = [line for _number, line in source_instructions() if "event=MTE2_MTE1" not in line]
    program = tmp_path / "racy.s"
    program.write_text("\n".join(lines) + "\n")
    out = tmp_path / "racy.json"
    init = SOURCE.with_name("int8_gemm.init.json")
    code = cli.main(["run", str(program), "--isa", "ascend_cube", "--init", str(init), "--no-color",
                     "--timeline", str(out)])
    assert code == 3  # the fault
    document = json.loads(out.read_text())
    first_load = next(k for k, line in enumerate(lines) if line.startswith("LoadData"))
    assert sorted(box["args"]["index"] for box in boxes(document)) == list(range(first_load))
