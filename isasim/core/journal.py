"""The record of state writes.

Every architectural state change goes through an accessor that calls
:meth:`Journal.record`, so one step returns exactly what it changed.  Step-through
display, traces, stepping backwards and lockstep comparison all read these
records (Spike's commit log and Sail's write hooks play the same part).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Location(str):
    """Where a write went, in the ISA's own words, with its parts kept apart.

    name:  the register, array or field written (x86_amx: ``rax``, ``tmm0``, ``start_row``; SME: ``za``).
    subscript: which part of it, if one: a row of an array (x86_amx: ``tmm0[3]``), a slice of ZA.
           (Not ``index``: a Location is a str, whose ``index`` method it must keep.)
    field: which field of it, if one (x86_amx: a tile's configured ``colsb``, ``tmm2.colsb``).

    Its text (``str(location)``) is ``name[subscript].field``, which is what traces store in
    ``steps[].writes[].where``; a Location is that string, so it is written, compared and
    hashed as the text it always was, and renderers read ``name``/``subscript``/``field``
    instead of parsing it back.  Build them once (at import) where a hot path records.
    """

    name: str
    subscript: int | None
    field: str | None

    def __new__(cls, name: str, subscript: int | None = None, field: str | None = None) -> "Location":
        text = name + ("" if subscript is None else f"[{subscript}]") + ("" if field is None else f".{field}")
        location = super().__new__(cls, text)
        object.__setattr__(location, "name", name)
        object.__setattr__(location, "subscript", subscript)
        object.__setattr__(location, "field", field)
        return location

    def __setattr__(self, attribute: str, value: Any) -> None:
        raise AttributeError("a Location is immutable")

    def __getnewargs__(self) -> tuple:  # copy and pickle rebuild it from its parts, not its text
        return self.name, self.subscript, self.field

    def __repr__(self) -> str:
        parts = [repr(self.name)] + ([f"subscript={self.subscript}"] if self.subscript is not None else []) + (
            [f"field={self.field!r}"] if self.field is not None else [])
        return f"Location({', '.join(parts)})"


@dataclass(frozen=True)
class Write:
    """One state change.

    kind:  what was written: ``"reg"``, ``"mem"`` (a byte range), or a kind of the
           ISA's own (x86_amx: ``"flags"``, ``"tilecfg"``, ``"tile"`` for one tile row).
    where: a :class:`Location`, or for memory the address (an int).
    old, new: the values before and after (ints for registers and fields, bytes
           for array rows and memory).
    """

    kind: str
    where: Location | int
    old: Any
    new: Any

    def describe(self) -> str:
        return f"{self.kind} {write_value(self.where)}: {write_value(self.old)} -> {write_value(self.new)}"


def write_value(v: Any) -> Any:
    """A journal value or location as a trace holds it (the one formatter of them): bytes as hex, integers
    as "0x" strings, a structured location as its text (``"tmm0[3]"``)."""
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:#x}"
    if v is None or isinstance(v, (str, bool, float)):
        return v
    return str(v)


class Journal:
    """Collects the writes of the current step; recording can be switched off for speed."""

    def __init__(self) -> None:
        self.writes: list[Write] = []
        self.enabled = True

    def record(self, kind: str, where: Location | int, old: Any, new: Any) -> None:
        if self.enabled and old != new:
            self.writes.append(Write(kind, where, old, new))

    def take(self) -> list[Write]:
        writes, self.writes = self.writes, []
        return writes


def record_memory_changes(journal: Journal, regions, memory, previous_image: dict[int, bytes] | None) -> dict[int, bytes]:
    """Journal how each region of ``regions`` ((address, bytes, writable), a trace's init memory)
    changed since ``previous_image`` ({address: bytes}; None: since the regions' initial bytes), as
    another backend's ``memory`` now holds it: one write per region spanning its first to its last
    changed byte.  Returns the new image, the next call's ``previous_image``.  (The stepper and
    ``record --steps`` see another backend's steps this way: it reports states, not writes.)"""
    image = {}
    for address, data, _writable in regions:
        now = memory.read(address, len(data)) if memory is not None else data
        image[address] = now
        before = (previous_image or {}).get(address, data)
        if now != before:
            first = next(i for i, (x, y) in enumerate(zip(before, now)) if x != y)
            last = len(now) - next(i for i, (x, y) in enumerate(zip(before[::-1], now[::-1])) if x != y)
            journal.record("mem", address + first, before[first:last], now[first:last])
    return image
