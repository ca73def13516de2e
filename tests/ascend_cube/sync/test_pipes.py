"""The cube's pipes and flags on small programs: races found with both instructions, the pipes, the bytes and the
event that would order them; hangs and pairing errors; barriers; schedules.

The rules come from the Ascend C API reference (SetFlag/WaitFlag: "SetFlag starts once every read and write of
the instructions before it has completed, and sets the flag; WaitFlag blocks the queue's later instructions
until the flag is set, then clears it"; set twice without a wait is illegal (CCE set_flag page)); the programs
here are worked examples of those rules.  The seed's QBMM kernel with the flags Huawei's ops-nn issues, run
clean and bit-exact against Huawei's goldens, is the outside check (tests/ascend_cube/kernels/).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from isasim import cli
from isasim.core.machine import Machine

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "ascend_cube" / "int8_gemm.trace.json"
A_GM, C_GM = 0x100000, 0x300000

COPY_A = "DataCopy(dst=L1[0], src=GM[0x100000], blockLen=2)"  # 64 bytes of GM to L1[0:64]
LOAD_A = "LoadData(dst=L0A[0], src=L1[0], dtype=int8)"  # one 512-byte fractal of L1[0:512]
COPY_OVER = "DataCopy(dst=L1[0], src=GM[0x100000], blockLen=1)"  # 32 bytes over L1[0:32]


def run(lines: list[str], *, options: dict | None = None, gm: bytes = bytes(1024), **config):
    machine = Machine("ascend_cube", {"chip": "910B", "options": options or {}, **config})
    machine.load(machine.assemble("\n".join(lines)), memory=[(A_GM, gm, True), (C_GM, bytes(4096), True)])
    machine.run()
    return machine


def flag(event: str, event_id: int = 0) -> list[str]:
    return [f"SetFlag(event={event}, id={event_id})", f"WaitFlag(event={event}, id={event_id})"]


def test_a_load_of_what_a_copy_wrote_needs_the_copys_flag():
    racing = run([COPY_A, LOAD_A])
    fault = racing.fault
    assert fault is not None and fault.kind == "SYNC_RACE" and fault.index == 1
    assert fault.rule.startswith("read after write on L1[0:64] not ordered: instruction 0 (DataCopy")
    assert "on PIPE_MTE2, then instruction 1 (LoadData" in fault.rule and "on PIPE_MTE1" in fault.rule
    assert "SetFlag<MTE2_MTE1> after the first and WaitFlag<MTE2_MTE1> before the second" in fault.rule
    assert run([COPY_A, *flag("MTE2_MTE1"), LOAD_A]).fault is None


def test_overwriting_what_another_pipe_still_reads_is_a_write_after_read():
    fault = run([LOAD_A, COPY_OVER]).fault
    assert fault.kind == "SYNC_RACE" and fault.index == 1
    assert fault.rule.startswith("write after read on L1[0:32]") and "MTE1_MTE2" in fault.rule
    assert run([LOAD_A, *flag("MTE1_MTE2"), COPY_OVER]).fault is None


def test_gm_written_by_the_fixpipe_and_read_by_a_copy_needs_fix_mte2():
    fixpipe = ("Fixpipe(dst=GM[0x100000], src=L0C[0], srcType=int32, dstType=int32, nSize=16, mSize=16, "
               "srcStride=16, dstStride=16)")
    fault = run([fixpipe, COPY_A]).fault
    assert fault.kind == "SYNC_RACE" and fault.rule.startswith("read after write on GM[0x100000:0x100040]")
    assert "FIX_MTE2" in fault.rule
    assert run([fixpipe, *flag("FIX_MTE2"), COPY_A]).fault is None


def test_a_chain_of_flags_orders_transitively_and_pipe_all_orders_everything():
    """MTE2 -> MTE1 -> M: the Mmad reads L0A after the load that read L1 after the copy."""
    mmad = "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32)"
    assert run([COPY_A, *flag("MTE2_MTE1"), LOAD_A, *flag("MTE1_M"), mmad]).fault is None
    assert run([COPY_A, LOAD_A.replace("L0A", "L0B"), "PipeBarrier(pipe=PIPE_ALL)", mmad]).fault.index == 1
    assert run([COPY_A, "PipeBarrier(pipe=PIPE_ALL)", LOAD_A, "PipeBarrier(pipe=PIPE_ALL)", mmad]).fault is None
    # the wrong event orders nothing between these pipes
    fault = run([COPY_A, *flag("MTE2_M"), LOAD_A]).fault
    assert fault.kind == "SYNC_RACE" and "MTE2_MTE1" in fault.rule


def test_a_wait_nothing_sets_hangs_and_names_the_pipes_positions():
    fault = run([COPY_A, "WaitFlag(event=MTE2_MTE1, id=3)", LOAD_A]).fault
    assert fault.kind == "SYNC_HANG" and fault.index == 1
    assert fault.rule.startswith("WaitFlag<MTE2_MTE1>(3) would wait forever (the NPU hangs): no SetFlag")
    assert "PIPE_MTE1 at instruction 1 (WaitFlag(event=MTE2_MTE1, id=3))" in fault.rule


def test_a_wait_before_its_set_in_program_order_runs_once_the_other_pipe_sets_it():
    """The scalar unit issues the wait into MTE1's queue and goes on; MTE2's copy and SetFlag run, then MTE1."""
    machine = run(["WaitFlag(event=MTE2_MTE1, id=0)", LOAD_A, COPY_A, "SetFlag(event=MTE2_MTE1, id=0)"],
                  gm=bytes(range(64)) + bytes(960))
    assert machine.fault is None
    assert machine.state.pipes.order == [2, 3, 0, 1]
    assert machine.state.buffers["L0A"][:64].tobytes() == bytes(range(64))  # the load saw the copy's bytes


def test_setting_a_flag_twice_and_leaving_one_set_are_pairing_faults():
    fault = run([COPY_A, "SetFlag(event=MTE2_MTE1, id=1)", "SetFlag(event=MTE2_MTE1, id=1)"]).fault
    assert fault.kind == "SYNC_PAIRING" and fault.index == 2 and "set again before a WaitFlag" in fault.rule
    fault = run([COPY_A, "SetFlag(event=MTE2_MTE1, id=1)"]).fault
    assert fault.kind == "SYNC_PAIRING" and "ends with SetFlag<MTE2_MTE1>(1) still set" in fault.rule
    assert run([COPY_A, "SetFlag(event=MTE2_MTE1, id=1)"], options={"sync_check": "off"}).fault is None


def test_sync_check_off_runs_a_racy_program_in_program_order():
    machine = run([COPY_A, LOAD_A], options={"sync_check": "off"}, gm=bytes(range(64)) + bytes(960))
    assert machine.fault is None and machine.state.buffers["L0A"][:64].tobytes() == bytes(range(64))


def test_under_pipe_order_barrier_a_pipe_orders_only_across_its_barrier():
    mmad = "Mmad(c=L0C[0], a=L0A[0], b=L0B[0], aType=int8, bType=int8, m=16, n=16, k=32{})"
    twice = [mmad.format(""), mmad.format(", cmatrixInitVal=false")]
    assert run(twice).fault is None  # the default: program order within a pipe
    fault = run(twice, options={"pipe_order": "barrier"}).fault
    assert fault.kind == "SYNC_RACE" and "PipeBarrier<PIPE_M>" in fault.rule
    assert run([twice[0], "PipeBarrier(pipe=PIPE_M)", twice[1]], options={"pipe_order": "barrier"}).fault is None


def test_bad_events_ids_and_barriers_are_refused_before_the_run(tmp_path, capsys):
    for line, words in (("SetFlag(event=MTE2_V, id=0)", "unknown mode"), ("WaitFlag(event=MTE2_MTE1, id=8)", "id"),
                        ("PipeBarrier(pipe=PIPE_V)", "unknown mode")):
        program = tmp_path / "bad.s"
        program.write_text(line + "\n")
        assert cli.main(["run", str(program), "--isa", "ascend_cube", "--no-color"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and words in err and "bad.s:1" in err, err


def _example(**config):
    trace = json.loads(EXAMPLE.read_text())
    machine = Machine("ascend_cube", {"chip": "910B", **config})
    memory = [(int(r["addr"], 16), bytes(np.asarray(r["values"], dtype=np.int8).tobytes()) if "values" in r
               else bytes(r["size"]), True) for r in trace["init"]["memory"]]
    want = bytes.fromhex(trace["expect"]["memory"][0]["hex"])
    return machine, trace["program"], memory, want


def test_every_random_schedule_of_the_flagged_example_computes_numpys_c():
    """The example's flags order every dependence, so any interleaving they allow gives the same C: the
    trace's expected C, numpy's int64 product (make_example.py)."""
    for seed in range(12):
        machine, program, memory, want = _example(schedule="random", seed=seed)
        machine.load(machine.assemble("\n".join(program)), memory=memory)
        machine.run()
        assert machine.fault is None, (seed, machine.fault)
        assert machine.memory.read(C_GM, len(want)) == want


def test_ping_pong_buffers_interleave_under_a_random_schedule_and_keep_their_data():
    """Two L1 buffers, each with its own event ID (the ping-pong of double buffering): A's load may run before
    B's copy; every schedule loads GM's bytes."""
    program = ["DataCopy(dst=L1[0], src=GM[0x100000], blockLen=16)", "SetFlag(event=MTE2_MTE1, id=0)",
               "DataCopy(dst=L1[4096], src=GM[0x100200], blockLen=16)", "SetFlag(event=MTE2_MTE1, id=1)",
               "WaitFlag(event=MTE2_MTE1, id=0)", "LoadData(dst=L0A[0], src=L1[0], dtype=int8)",
               "WaitFlag(event=MTE2_MTE1, id=1)", "LoadData(dst=L0B[0], src=L1[4096], dtype=int8)"]
    gm = np.random.default_rng(5).integers(0, 256, 1024, dtype=np.uint8).tobytes()
    orders = set()
    for seed in range(16):
        machine = run(program, gm=gm, schedule="random", seed=seed)
        assert machine.fault is None
        assert machine.state.buffers["L0A"][:512].tobytes() == gm[:512]
        assert machine.state.buffers["L0B"][:512].tobytes() == gm[512:]
        orders.add(tuple(machine.state.pipes.order))
    assert len(orders) > 1  # the loads of A did run before B's copy in some


def test_a_random_schedule_without_the_copies_flag_loses_c():
    """Without MTE2 -> MTE1's flag the loads may run before the copies fill L1 (race check off, so the run goes
    on): some seed gives a C unlike numpy's, as the NPU's timing would."""
    wrong = 0
    for seed in range(12):
        machine, program, memory, want = _example(schedule="random", seed=seed, options={"sync_check": "off"})
        program = [line for line in program if "MTE2_MTE1" not in line]
        machine.load(machine.assemble("\n".join(program)), memory=memory)
        machine.run()
        assert machine.fault is None
        wrong += machine.memory.read(C_GM, len(want)) != want
    assert wrong > 0


def test_a_checkpoint_restores_the_pipes_with_the_buffers():
    machine, program, memory, want = _example()
    machine.load(machine.assemble("\n".join(program)), memory=memory)
    for _ in range(5):
        machine.step()
    saved = machine.checkpoint()
    machine.run()
    assert machine.fault is None
    machine.restore(saved)
    machine.run()
    assert machine.fault is None and machine.memory.read(C_GM, len(want)) == want


def test_the_schedule_options_are_checked_and_named_in_one_line(tmp_path, capsys):
    example = str(EXAMPLE)
    assert cli.main(["run", example, "--schedule", "sideways", "--no-color"]) == 2
    assert "unknown schedule 'sideways'" in capsys.readouterr().err
    assert cli.main(["run", example, "--schedule", "random", "--schedule-seed", "x", "--no-color"]) == 2
    assert "seed must be a whole number" in capsys.readouterr().err
    assert cli.main(["run", example, "--schedule", "random", "--schedule-seed", "7", "--no-color"]) == 0
    assert "PASS" in capsys.readouterr().out
