"""The run's schedule as a Chrome trace-event document, for ``--timeline FILE.json``.

The document is the JSON object form of the Trace Event Format (Google's "Trace Event Format" document, the one
chrome://tracing and Perfetto's JSON importer read): ``{"traceEvents": [...], "otherData": {...}}``.

- one track per pipe that ran an instruction: a thread (``tid``) per pipe, named PIPE_S, PIPE_MTE2 ... by a
  ``thread_name`` metadata event ("ph": "M"), ordered as sync/events.py lists the pipes (``thread_sort_index``);
- one complete event ("ph": "X") per instruction run, on its pipe's track, with the instruction's text, its index
  in the program and its step in ``args``;
- a flow arrow from each SetFlag to the WaitFlag that cleared it: a flow start ("ph": "s") inside the SetFlag's
  box and a flow end ("ph": "f", "bp": "e", binding to the enclosing box) inside the WaitFlag's, with one ``id``.

Time is not modelled: ``ts`` is the instruction's step in the order the run took (0, 1, 2 ...) and every box is
one unit long, so the picture shows which pipe ran what, in what order, and what each flag ordered, never how
long anything took.  ``otherData`` says so, with the schedule and seed that gave the order.
"""

from __future__ import annotations

from ..sync.events import PIPES

PID = 1
TIME_NOTE = ("ts is the instruction's step in the order this run took them (0, 1, 2 ...), each box one unit long: "
             "isasim models the order the pipes run their instructions in, not how many cycles they take; "
             "no time or cycle count is claimed")


def _tid(pipe: int) -> int:
    return pipe + 1  # tid 0 reads as "no thread" in some viewers


def box_name(info) -> str:
    """What a box is labelled: the form's name, and the flag or barrier a sync instruction names."""
    name = info.text.split("(", 1)[0].strip()
    if info.event is not None:
        return f"{name} {info.event[0]}#{info.event[1]}"
    if info.barrier is not None:
        return f"{name} {info.barrier}"
    return name


def timeline(state) -> dict | None:
    """The trace-event document of the instructions ``state``'s run has completed (None without pipes)."""
    pipes = state.pipes
    if pipes is None:
        return None
    step_of = {index: step for step, index in enumerate(pipes.order)}
    used = sorted({pipes.issued[index].pipe for index in pipes.order})
    events: list[dict] = [{"ph": "M", "pid": PID, "tid": 0, "name": "process_name",
                           "args": {"name": f"ascend_cube {state.config['chip']}"}}]
    for pipe in used:
        events.append({"ph": "M", "pid": PID, "tid": _tid(pipe), "name": "thread_name",
                       "args": {"name": f"PIPE_{PIPES[pipe]}"}})
        events.append({"ph": "M", "pid": PID, "tid": _tid(pipe), "name": "thread_sort_index",
                       "args": {"sort_index": pipe}})
    for step, index in enumerate(pipes.order):
        info = pipes.issued[index]
        events.append({"ph": "X", "pid": PID, "tid": _tid(info.pipe), "name": box_name(info),
                       "cat": info.sync or "instruction", "ts": step, "dur": 1,
                       "args": {"index": index, "step": step, "text": info.text}})
    for flow, (setter, waiter) in enumerate(pipes.pairs):
        if setter not in step_of or waiter not in step_of:
            continue
        event, event_id = pipes.issued[setter].event
        common = {"pid": PID, "name": f"{event}#{event_id}", "cat": "flag", "id": flow}
        events.append({"ph": "s", "tid": _tid(pipes.issued[setter].pipe), "ts": step_of[setter] + 0.5, **common})
        events.append({"ph": "f", "bp": "e", "tid": _tid(pipes.issued[waiter].pipe), "ts": step_of[waiter] + 0.5,
                       **common})
    config = state.config
    return {"traceEvents": events,
            "otherData": {"isa": "ascend_cube", "chip": config["chip"], "schedule": config.get("schedule", "inorder"),
                          "seed": int(config.get("seed", 0)), "instructions_run": len(pipes.order),
                          "time": TIME_NOTE}}
