"""The forms that order the pipes: SetFlag<HardEvent>(id), WaitFlag<HardEvent>(id) and PipeBarrier<pipe>
(the Ascend C API reference's SetFlag/WaitFlag and PipeBarrier pages; sync/events.py has the pipes, the
HardEvent names and the ID ranges)."""

from __future__ import annotations

from ..faults import SYNC_HANG, SYNC_PAIRING
from ..semantics import sync
from ..sync.events import BARRIER_PIPES, CUBE_EVENTS, EVENT_IDS, event_pipes
from .base import FORMS, AscendForm, Param

_EVENT = Param("event", "mode", "the HardEvent SRC_DST: pipe DST waits for pipe SRC", choices=CUBE_EVENTS)
_ID = Param("id", "int", "the event ID", lo=0, hi=min(EVENT_IDS.values()) - 1)

for _form in (
    AscendForm("SetFlag", "", (_EVENT, _ID),
               "in the event's source pipe, once its earlier instructions are done: set the event's flag",
               sync.set_flag, ((SYNC_PAIRING, "the flag is already set (no WaitFlag since the last SetFlag), or "
                                              "the program ends with a flag set"),),
               group="sync", pipe=lambda p: event_pipes(p["event"])[0], sync="set"),
    AscendForm("WaitFlag", "", (_EVENT, _ID),
               "in the event's destination pipe: wait until the flag is set, then clear it",
               sync.wait_flag, ((SYNC_HANG, "no SetFlag of the event and ID can run before it: the NPU hangs"),),
               group="sync", pipe=lambda p: event_pipes(p["event"])[1], sync="wait"),
    AscendForm("PipeBarrier", "", (Param("pipe", "mode", "the pipe (PIPE_ALL: every pipe)", choices=BARRIER_PIPES),),
               "the pipe's earlier instructions complete before its later ones start",
               sync.pipe_barrier, group="sync",
               pipe=lambda p: "S" if p["pipe"] == "PIPE_ALL" else p["pipe"].removeprefix("PIPE_"), sync="barrier"),
):
    FORMS.add(_form)
