"""SetFlag, WaitFlag and PipeBarrier: what they do to the run's pipes (sync/pipe_model.py).  They move no data;
a lone one (``isasim explain``, no loaded program) does nothing."""

from __future__ import annotations


def set_flag(ctx, form, p):
    """runs in the event's source pipe, once every earlier instruction of that pipe has completed:
    IF flag[event, id] == 1 THEN fault SYNC_PAIRING (set twice without a wait between)
    flag[event, id] = 1"""
    if ctx.state.pipes is not None:
        ctx.state.pipes.set_flag(p["event"], p["id"])


def wait_flag(ctx, form, p):
    """runs in the event's destination pipe:
    WHILE flag[event, id] == 0: the pipe's later instructions wait (none can ever set it: fault SYNC_HANG)
    flag[event, id] = 0; the pipe's later instructions run after everything before the SetFlag"""
    if ctx.state.pipes is not None:
        ctx.state.pipes.wait_flag(p["event"], p["id"])


def pipe_barrier(ctx, form, p):
    """every earlier instruction of the pipe (of every pipe, for PIPE_ALL) completes
    before any later instruction of it starts"""
    if ctx.state.pipes is not None:
        ctx.state.pipes.barrier(p["pipe"])
