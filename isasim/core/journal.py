"""The record of state writes.

Every architectural state change goes through an accessor that calls
:meth:`Journal.record`, so one step returns exactly what it changed.  Step-through
display, traces, stepping backwards and lockstep comparison all read these
records (Spike's commit log and Sail's write hooks play the same part).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Write:
    """One state change.

    kind:  what was written: ``"reg"``, ``"flags"``, ``"pc"``, ``"tilecfg"``,
           ``"tile"`` (one tile row), ``"mem"`` (a byte range), ...
    where: the location in the ISA's own words: ``"rax"``, ``"tmm0[3]"``,
           ``"start_row"``, or a memory address.
    old, new: the values before and after (ints for registers and fields, bytes
           for tile rows and memory).
    """

    kind: str
    where: Any
    old: Any
    new: Any

    def describe(self) -> str:
        def show(v: Any) -> str:
            if isinstance(v, (bytes, bytearray)):
                return v.hex()
            if isinstance(v, int):
                return hex(v)
            return str(v)

        where = hex(self.where) if isinstance(self.where, int) else str(self.where)
        return f"{self.kind} {where}: {show(self.old)} -> {show(self.new)}"


class Journal:
    """Collects the writes of the current step; recording can be switched off for speed."""

    def __init__(self) -> None:
        self.writes: list[Write] = []
        self.enabled = True

    def record(self, kind: str, where: Any, old: Any, new: Any) -> None:
        if self.enabled and old != new:
            self.writes.append(Write(kind, where, old, new))

    def take(self) -> list[Write]:
        writes, self.writes = self.writes, []
        return writes
