"""Deleting the QBMM stream's flags one at a time: the race check must notice each one that matters.

The case is the smallest example, examples/ascend_cube/qbmm_fp8_pertensor (m 64, n 48, k 256, one block of C),
with a tiling that cuts K into four L1 windows of one 64-deep slice each and ping-pongs two L1 buffers and
both L0 halves, so every L1 buffer and L0 half is loaded twice and every kind of flag is used again.  The
stream has 98 instructions, 72 of them SetFlag / WaitFlag / PipeBarrier.  Each deletion is a run of about
10 ms; the random-schedule test runs 13 flag pairs x 40 seeds (about 6 s here).

- Deleting any one SetFlag or WaitFlag is a fault (default options: race check on, in-order schedule):
  SYNC_RACE naming the accesses' two pipes and the deleted event as what would order them, or SYNC_HANG /
  SYNC_PAIRING naming the deleted event and ID (a set whose wait is gone is set again or left set; a wait whose
  set is gone waits forever or takes a later set).
- Deleting a PipeBarrier changes nothing, and the test says why for each kind: under isasim's default
  ``pipe_order=program`` a pipe's own instructions are ordered anyway, so the PIPE_MTE1 barriers after the
  odd transposing loads and the Fixpipe call's PIPE_FIX barrier order nothing more; PIPE_ALL is the last
  instruction.
- With the race check off and ``schedule=random``, deleting a set with the wait it pairs with (deleting one
  alone stops the run with a pairing fault) lets the pipes run in orders the kernel forbids: for most pairs
  some seed gives a C that is not the golden's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from isasim.ascend_cube.kernels import qbmm
from isasim.ascend_cube.kernels.qbmm_flags import is_sync, parse
from isasim.ascend_cube.kernels.qbmm_run import KernelFault, compare, read_c, run

CASE = Path(__file__).parents[3] / "examples" / "ascend_cube" / "qbmm_fp8_pertensor" / "case.json"
TILING = {"baseM": 64, "baseN": 64, "baseK": 64, "kAL1": 64, "kBL1": 64, "nBufferNum": 2}
SEEDS = range(1, 41)


@pytest.fixture(scope="module")
def kernel():
    case = qbmm.load_case(CASE)
    case.tiling = TILING
    return qbmm.build(case)


def _fault(kernel, lines) -> str:
    with pytest.raises(KernelFault) as raised:
        run(kernel, lines)
    return str(raised.value)


def _deleted(lines, *indices):
    return [line for i, line in enumerate(lines) if i not in indices]


def _pairs(lines):
    """(set index, wait index) of every flag: each WaitFlag takes the earliest set of its event and ID."""
    pending, pairs = {}, []
    for i, line in enumerate(lines):
        if is_sync(line) and not line.startswith("PipeBarrier"):
            kind, event, event_id = parse(line)
            if kind == "SetFlag":
                pending.setdefault((event, event_id), []).append(i)
            else:
                pairs.append((pending[(event, event_id)].pop(0), i))
    assert not any(pending.values())
    return pairs


def test_the_whole_stream_runs_clean_and_gives_the_golden_c(kernel):
    got, _ = run(kernel)
    assert compare(kernel.case, got).passed
    assert sum(map(is_sync, kernel.program_lines)) == 72


def test_deleting_any_set_or_wait_is_a_fault_that_names_its_event(kernel):
    lines = kernel.program_lines
    kinds = {}
    for i, line in enumerate(lines):
        if not is_sync(line) or line.startswith("PipeBarrier"):
            continue
        _kind, event, event_id = parse(line)
        text = _fault(kernel, _deleted(lines, i))
        source, destination = event.split("_")
        if "SYNC_RACE" in text:  # two accesses of the event's pipes, and this event would order them
            assert f"on PIPE_{source}" in text and f"on PIPE_{destination}" in text, (line, text)
            assert f"SetFlag<{event}> after the first and WaitFlag<{event}> before the second" in text, (line, text)
        else:
            assert "SYNC_HANG" in text or "SYNC_PAIRING" in text, (line, text)
            assert f"{event}>({event_id})" in text, (line, text)
        kinds[text.split("faulted: ")[1].split(" ")[0]] = kinds.get(text.split("faulted: ")[1].split(" ")[0], 0) + 1
    # all three kinds occur: a lost wait before a data move races, a lost set hangs, a lost wait re-sets
    assert set(kinds) == {"SYNC_RACE", "SYNC_HANG", "SYNC_PAIRING"}


# why each barrier is redundant for isasim (pipe_order=program): see the module docstring
REDUNDANT = {
    "PipeBarrier(pipe=PIPE_MTE1)": "the odd transposing loads run on one pipe, ordered by program order",
    "PipeBarrier(pipe=PIPE_FIX)": "the Fixpipe call's barrier: nothing else of PIPE_FIX runs before it in this "
                                  "per-tensor case (its scalar word is set by PIPE_S)",
    "PipeBarrier(pipe=PIPE_ALL)": "TPipe::Destroy's, the program's last instruction",
}


def test_deleting_a_barrier_changes_nothing_isasim_models(kernel):
    lines = kernel.program_lines
    golden, _ = run(kernel)
    barriers = [i for i, line in enumerate(lines) if line.startswith("PipeBarrier")]
    assert {lines[i] for i in barriers} == set(REDUNDANT)
    for i in barriers:
        got, _ = run(kernel, _deleted(lines, i))
        assert np.array_equal(got.view(np.uint16), golden.view(np.uint16)), lines[i]


def _run_random(kernel, lines, seed: int):
    from isasim.core.machine import Machine

    case = kernel.case
    machine = Machine("ascend_cube", {"chip": case.chip, "options": {"sync_check": "off"}, "schedule": "random",
                                      "seed": seed})
    program = machine.assemble("\n".join(lines))
    machine.load_init(program, kernel.init())
    result = machine.run(max_steps=len(program.instructions) + 1)
    return result.fault, (read_c(kernel, machine.memory) if result.fault is None else None)


# pairs inside the block whose loss no seed of SEEDS turns into a different C, and why
QUIET = {
    ("MTE2_MTE1", "window 2 and 3"): "the later windows' copies wait only for MTE1's earlier set, the loads also for "
                                     "the M pipe's, so the copy comes first in practically every random order",
    ("M_MTE1", "slice 2 and 3"): "a load overwriting an L0 half before the Mmad two slices back has read it needs "
                                 "MTE1 to run a whole slice ahead of M and MTE2 between",
}


def test_random_schedules_turn_most_deleted_pairs_into_a_wrong_c(kernel):
    lines = kernel.program_lines
    golden, _ = run(kernel)
    first_access = next(i for i, line in enumerate(lines) if not is_sync(line))
    last_access = max(i for i, line in enumerate(lines) if not is_sync(line))
    inside = [(s, w) for s, w in _pairs(lines) if first_access < s and w < last_access]
    assert len(inside) == 13  # the prologue's sets and the epilogue's waits order no access
    wrong, faulted, quiet = [], [], []
    for s, w in inside:
        outcomes = [_run_random(kernel, _deleted(lines, s, w), seed) for seed in SEEDS]
        if any(c is not None and not np.array_equal(c.view(np.uint16), golden.view(np.uint16)) for _, c in outcomes):
            wrong.append(lines[s])
        elif all(f is not None for f, _ in outcomes):
            faulted.append(lines[s])  # every order the pair's loss allows sets a flag twice (SYNC_PAIRING)
        else:
            quiet.append(lines[s])
    assert len(wrong) > len(inside) // 2, (wrong, faulted, quiet)
    # the stand-in's M_FIX: without it the Fixpipe runs ahead and sets FIX_M while the prologue's is still set
    assert faulted == ["SetFlag(event=M_FIX, id=0)"]
    assert sorted(parse(line)[1] for line in quiet) == sorted(2 * [event for event, _ in QUIET]), quiet
