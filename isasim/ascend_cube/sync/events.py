"""The AI Core cube's pipes, Ascend C's HardEvent names for the events between them, and the event IDs.

The AI Core issues each instruction from its scalar unit into the queue of the pipe that runs it (the Ascend C
guide's programming model): PIPE_MTE2 moves GM -> L1, PIPE_MTE1 moves L1 -> L0A/L0B and L1 -> BT, PIPE_M
runs Mmad, PIPE_FIX runs Fixpipe (L0C -> GM/L1) and the copy L1 -> FB, PIPE_S is the scalar unit itself (the setters).  The queues
run in parallel; only ``SetFlag<HardEvent>``/``WaitFlag<HardEvent>`` pairs and ``PipeBarrier<pipe>`` order
them:

- SetFlag (issued into the event's source pipe) "starts once every read and write of the instructions before it
  has completed, and sets the event's flag to 1";
- WaitFlag (issued into the destination pipe): "if the flag is 0 the queue's later instructions are blocked;
  if it is 1 it is set to 0 and they go on";
- a flag may not be set twice without a wait between (the CCE intrinsics' set_flag page: illegal).

(SetFlag/WaitFlag and PipeBarrier pages of the Ascend C API reference, hiascend.com, atlasascendc_api_07_0270
and _0181; CCE intrinsics cceapi_0106.)  The HardEvent enum names an event SRC_DST; of its names those between
the cube's pipes are the cube's (the others name the vector core's PIPE_V or PIPE_MTE3).  The copy L1 -> FB
runs on the FIX pipe (asc-devkit's 基本架构.md, table 2: FixPipe moves L0C -> GM/L1 and L1 -> FP buffer).  Both
modelled chips take event IDs 0-7 (the page's ranges for the Atlas A2/A3 series (910B) and Ascend 950PR/DT).
"""

from __future__ import annotations

# The cube core's pipes, in the order the page's tracks and the timeline show them.
PIPES = ("S", "MTE2", "MTE1", "M", "FIX")
PIPE_NAMES = {pipe: f"PIPE_{pipe}" for pipe in PIPES}  # as Ascend C spells them (pipe_t)
BARRIER_PIPES = (*PIPE_NAMES.values(), "PIPE_ALL")

# Ascend C's HardEvent enum, in its order (the API reference's list); SRC_DST: DST waits for SRC.
HARD_EVENTS = ("MTE2_MTE1", "MTE1_MTE2", "MTE1_M", "M_MTE1", "MTE2_V", "V_MTE2", "MTE3_V", "V_MTE3", "M_V", "V_M",
               "V_V", "MTE3_MTE1", "MTE1_MTE3", "MTE1_V", "MTE2_M", "M_MTE2", "V_MTE1", "M_FIX", "FIX_M",
               "MTE3_MTE2", "MTE2_MTE3", "S_V", "V_S", "S_MTE2", "MTE2_S", "S_MTE3", "MTE3_S", "MTE2_FIX",
               "FIX_MTE2", "FIX_S", "M_S", "FIX_MTE3",
               # added after the API page's list, in asc-devkit's kernel headers' HardEvent enum and the AIC
               # table of 核内同步能力概述.md (SetFlag<MTE1_FIX> orders an L1 write before the FIX pipe reads it)
               "MTE1_FIX", "FIX_MTE1", "FIX_FIX")


def event_pipes(event: str) -> tuple[str, str]:
    """(source pipe, destination pipe) of a HardEvent name."""
    source, _, destination = event.partition("_")
    return source, destination


# the events between the cube's pipes (FIX_FIX orders the FIX pipe with itself): what a cube program may use
CUBE_EVENTS = tuple(e for e in HARD_EVENTS if all(p in PIPES for p in event_pipes(e)))
EVENT_IDS = {"910B": 8, "950": 8}  # IDs 0 .. n-1 per chip


def ordering_event(earlier: str, later: str) -> str | None:
    """The HardEvent that makes pipe ``later`` wait for pipe ``earlier``, if Ascend C has one."""
    name = f"{earlier}_{later}"
    return name if name in CUBE_EVENTS else None
