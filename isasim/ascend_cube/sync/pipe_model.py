"""One run's pipes: which pipe runs each instruction, the pipes' clocks, the event flags, the race check and the
schedule (see events.py, race_check.py, schedule.py).  The state holds it (``AscendState.pipes``) once a
machine has loaded a program, so checkpoints copy it with the buffers.

The instructions call it: ``begin(k)`` before instruction k's semantics, ``access(...)`` for every buffer or GM
access they make, the flag semantics ``set_flag``/``wait_flag``/``barrier``, and ``finish(k)`` after, which
returns the address of the instruction the schedule runs next.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import faults
from .events import PIPES, event_pipes, ordering_event
from .race_check import RaceCheck, lookup
from .schedule import Schedule

PIPE_NUMBER = {pipe: n for n, pipe in enumerate(PIPES)}
SCALAR = PIPE_NUMBER["S"]


@dataclass(frozen=True)
class Issued:
    """What the model knows of one instruction of the program."""

    index: int
    address: int
    text: str
    pipe: int
    sync: str | None  # "set", "wait", "barrier" or None
    event: tuple[str, int] | None  # (HardEvent name, id) of a SetFlag / WaitFlag
    barrier: str | None  # the pipe name of a PipeBarrier ("PIPE_M", "PIPE_ALL")


def instruction_info(instruction, names: dict | None = None) -> Issued:
    """``names``: a cache of each form's operand names (by the form's id), for a whole program's instructions."""
    form = instruction.form
    operand_names = form.operand_names if names is None else names.get(id(form))
    if operand_names is None:
        operand_names = names[id(form)] = form.operand_names
    params = dict(zip(operand_names, instruction.operands))
    pipe = form.pipe_of(params)
    sync = getattr(form, "sync", None)
    event = (params["event"], params["id"]) if sync in ("set", "wait") else None
    barrier = params["pipe"] if sync == "barrier" else None
    return Issued(instruction.index, instruction.address, instruction.text, PIPE_NUMBER[pipe], sync, event, barrier)


class PipeModel:
    def __init__(self, program, config: dict, buffer_sizes: dict[str, int]):
        options = config["options"]
        self.checking = options.get("sync_check", "on") == "on"
        self.program_order = options.get("pipe_order", "program") == "program"
        names: dict = {}
        self.issued = [instruction_info(instruction, names) for instruction in program.instructions]
        self.end_address = program.end
        self.clocks = np.zeros((len(PIPES), len(PIPES)), dtype=np.int32)  # row p: pipe p's next instruction's
        self.counts = np.zeros(len(PIPES), dtype=np.int32)  # instructions each pipe has started
        self.flags: dict[tuple[str, int], tuple[np.ndarray, int]] = {}  # set flags: (published clock, setter)
        self.race = RaceCheck(buffer_sizes) if self.checking else None
        fenced = [info.pipe == SCALAR for info in self.issued]
        self.schedule = Schedule([info.pipe for info in self.issued], fenced, config.get("schedule", "inorder"),
                                 int(config.get("seed", 0)))
        self.current: tuple[int, int, int, np.ndarray] | None = None  # (index, pipe, seq, clock)
        self.order: list[int] = []  # the instructions in the order they ran
        self.pairs: list[tuple[int, int]] = []  # (SetFlag index, WaitFlag index): each wait and the set it cleared

    def first_address(self) -> int:
        """Where the run starts: the first instruction the schedule runs (the program's first, unless that is a
        WaitFlag whose SetFlag comes later in another pipe's queue)."""
        ready = self.schedule.ready(self._can_run)
        if ready:  # the first the scalar unit issues that can run (no draw of the random schedule is spent)
            return self.issued[ready[0]].address
        heads = self.schedule.heads_now()
        return self.issued[heads[0]].address if heads else self.end_address

    # ---- one instruction ---------------------------------------------------------------------------
    def begin(self, index: int) -> None:
        info = self.issued[index]
        self.counts[info.pipe] += 1
        # the clock as the race check reads it, made once for all of the instruction's accesses
        self.current = (index, info.pipe, int(self.counts[info.pipe]), lookup(self.clocks[info.pipe]))

    def abandon(self) -> None:
        """The instruction faulted: it did not run (its pipe's count goes back)."""
        if self.current is not None:
            self.counts[self.current[1]] -= 1
            self.current = None

    def finish(self, index: int) -> int:
        """Instruction ``index`` is done: its pipe moves on; the address of the next instruction to run (the
        program's end when every instruction has run)."""
        _index, pipe, seq, _clock = self.current
        self.current = None
        if self.program_order:
            self.clocks[pipe, pipe] = seq
        self.schedule.ran(index)
        self.order.append(index)
        if self.schedule.finished:
            if self.flags and self.checking:
                (event, event_id), (_clock, setter) = next(iter(self.flags.items()))
                raise faults.sync_pairing(
                    f"the program ends with SetFlag<{event}>({event_id}) still set: instruction {setter} "
                    f"({self.issued[setter].text}) set it and no WaitFlag<{event}>({event_id}) waited for it "
                    f"(set/wait pairs must match)" + self._others_left())
            return self.end_address
        chosen = self.schedule.next(self._can_run)
        if chosen is not None:
            return self.issued[chosen].address
        # nothing can run: the NPU would hang; run the first blocked wait, which says so
        return self.issued[self.schedule.heads_now()[0]].address

    def _others_left(self) -> str:
        more = len(self.flags) - 1
        return f"; {more} more event{'s' * (more > 1)} left set" if more > 0 else ""

    def _can_run(self, k: int) -> bool:
        info = self.issued[k]
        return info.sync != "wait" or info.event in self.flags

    # ---- accesses ----------------------------------------------------------------------------------
    def access(self, space: str, start: int, size: int, write: bool) -> None:
        if self.race is None or self.current is None:
            return
        index, pipe, seq, clock = self.current
        conflict = self.race.access(space, start, size, write, pipe, seq, index, clock)
        if conflict is not None:
            raise faults.sync_race(self._race_rule(conflict))

    def access_rows(self, space: str, start: int, rows: int, row_bytes: int, stride: int, write: bool) -> None:
        """``access`` of ``rows`` rows of ``row_bytes`` bytes, ``stride`` apart from ``start``, one after another
        (what as many ``access`` calls do, in one go where the race check can)."""
        done = 0
        while done < rows:
            done += self.rows_ordered(space, start + done * stride, rows - done, row_bytes, stride, write)
            if done < rows:  # this row has the conflict: its own access names it
                self.access(space, start + done * stride, row_bytes, write)
                done += 1

    def rows_ordered(self, space: str, start: int, rows: int, row_bytes: int, stride: int, write: bool) -> int:
        """How many of those rows, from the first, are ordered after what came before; they are recorded as
        ``access`` records them.  The next row (if any is left) has a conflict, which its ``access`` raises."""
        if self.race is None or self.current is None:
            return rows
        index, pipe, seq, clock = self.current
        return self.race.access_rows(space, start, rows, row_bytes, stride, write, pipe, seq, index, clock)

    def _race_rule(self, conflict) -> str:
        index, pipe, _seq, _clock = self.current
        mine, other = PIPES[pipe], conflict.other_pipe
        event = ordering_event(other, mine)
        if other == mine:
            fix = f"PipeBarrier<PIPE_{mine}> between them (pipe_order=barrier: a pipe orders only across a barrier)"
        elif event is not None:
            fix = f"SetFlag<{event}> after the first and WaitFlag<{event}> before the second would order them"
        else:
            fix = (f"no HardEvent makes PIPE_{mine} wait for PIPE_{other}: PipeBarrier<PIPE_ALL> between them "
                   f"would order them")
        space = conflict.space
        where = (f"GM[{conflict.start:#x}:{conflict.end:#x}]" if space == "GM"
                 else f"{space}[{conflict.start}:{conflict.end}]")
        return (f"{conflict.kind} on {where} not ordered: instruction {conflict.other_index} "
                f"({self.issued[conflict.other_index].text}) on PIPE_{other}, then instruction {index} "
                f"({self.issued[index].text}) on PIPE_{mine}, with no SetFlag/WaitFlag or PipeBarrier chain between "
                f"them; {fix}")

    # ---- the flags ----------------------------------------------------------------------------------
    def set_flag(self, event: str, event_id: int) -> None:
        index, pipe, seq, clock = self.current
        key = (event, event_id)
        if key in self.flags:
            setter = self.flags[key][1]
            raise faults.sync_pairing(f"SetFlag<{event}>({event_id}) is set again before a WaitFlag cleared it: "
                                      f"instruction {setter} ({self.issued[setter].text}) set it (a flag may not "
                                      f"be set twice without a wait between)")
        published = clock[:-1].copy()  # (without lookup's extra entry)
        published[pipe] = seq  # SetFlag starts once every earlier instruction of its pipe is complete
        self.flags[key] = (published, index)

    def wait_flag(self, event: str, event_id: int) -> None:
        index, pipe, _seq, _clock = self.current
        key = (event, event_id)
        if key not in self.flags:
            raise faults.sync_hang(self._hang_rule(event, event_id))
        published, setter = self.flags.pop(key)
        self.pairs.append((setter, index))
        np.maximum(self.clocks[pipe], published, out=self.clocks[pipe])  # the pipe's later instructions

    def _hang_rule(self, event: str, event_id: int) -> str:
        source, _destination = event_pipes(event)
        later = [info for info in self.issued if info.sync == "set" and info.event == (event, event_id)
                 and not self.schedule.done[info.index]]
        why = (f"its SetFlag (instruction {later[0].index}) cannot run before it" if later
               else f"no SetFlag<{event}>({event_id}) is left to run on PIPE_{source}")
        positions = "; ".join(f"PIPE_{PIPES[self.issued[k].pipe]} at instruction {k} ({self.issued[k].text})"
                              for k in self.schedule.heads_now())
        return (f"WaitFlag<{event}>({event_id}) would wait forever (the NPU hangs): {why}; the pipes stand at: "
                f"{positions}")

    def barrier(self, pipe_name: str) -> None:
        """PipeBarrier<pipe>: every earlier instruction of the pipe (every pipe for PIPE_ALL) completes before
        any later one of it starts."""
        if pipe_name == "PIPE_ALL":
            everything = self.clocks.max(axis=0)
            np.maximum(everything, self.counts, out=everything)
            np.maximum(self.clocks, everything, out=self.clocks)
            return
        pipe = PIPE_NUMBER[pipe_name.removeprefix("PIPE_")]
        _index, _own, seq, _clock = self.current
        # the barrier itself runs in that pipe's queue, so the pipe's instructions before it are counted
        self.clocks[pipe, pipe] = max(int(self.clocks[pipe, pipe]), seq)
