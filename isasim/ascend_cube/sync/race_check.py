"""The race check: is every access to a buffer or GM ordered after the earlier conflicting accesses of other pipes?

Happens-before is kept as vector clocks (Lamport; Fidge and Mattern).  Each pipe numbers its instructions 1, 2,
3 ... in program order (``seq``).  A pipe's *clock* says, for every pipe, up to which of its instructions
everything is known to be complete before the pipe's next instruction starts: a WaitFlag joins in the clock its
SetFlag published, and (under the default ``pipe_order=program``) each instruction's own pipe entry moves on as
the pipe runs in order.  An earlier access by instruction j is ordered before instruction i iff
``seq(j) <= clock_i[pipe(j)]``.

Shadow memory keeps, for every byte of L1, L0A, L0B, L0C, BT, FB and the GM that is touched, its last writer
and, per pipe, its last reader (pipe, seq, instruction index).  The last ones are enough: the earlier accesses of
the same pipe are ordered before them (program order), and the earlier writes before the last write (a race
between them would have stopped the run).  A read checks the last write (read after write); a write checks the
last write (write after write) and every pipe's last read (write after read).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .events import PIPES

NONE = -1  # no access yet (a byte the initial state holds)
UNORDERED = np.iinfo(np.int32).max  # the clock entry of "no pipe": never unordered
GM_PAGE = 1 << 16  # GM's shadow is kept in pages of this many bytes, made as they are touched


@dataclass(frozen=True)
class Conflict:
    """An access not ordered after an earlier conflicting one: the other instruction, its pipe, the kind
    ("read after write" ...), the space ("L1", "GM") and the bytes [start, end) of the first run of them."""

    kind: str
    space: str
    start: int
    end: int
    other_index: int
    other_pipe: str


class Shadow:
    """The last accesses of each byte of one space (a buffer, or one GM page)."""

    __slots__ = ("write_pipe", "write_seq", "write_index", "read_seq", "read_index")

    def __init__(self, size: int):
        self.write_pipe = np.full(size, NONE, dtype=np.int8)
        self.write_seq = np.zeros(size, dtype=np.int32)
        self.write_index = np.full(size, NONE, dtype=np.int32)
        self.read_seq = np.zeros((len(PIPES), size), dtype=np.int32)  # 0: no read by that pipe
        self.read_index = np.full((len(PIPES), size), NONE, dtype=np.int32)


class RaceCheck:
    """The shadow of every space a run touches, and the check of one access against it."""

    def __init__(self, buffer_sizes: dict[str, int]):
        self.sizes = dict(buffer_sizes)
        self.shadows: dict[str, Shadow] = {}
        self.gm_pages: dict[int, Shadow] = {}

    def _pieces(self, space: str, start: int, size: int):
        """(shadow, first byte there, last + 1, address of the shadow's byte 0) for the bytes [start, start+size)."""
        if space != "GM":
            shadow = self.shadows.get(space)
            if shadow is None:
                shadow = self.shadows[space] = Shadow(self.sizes[space])
            yield shadow, start, start + size, 0
            return
        address, end = start, start + size
        while address < end:
            page = address // GM_PAGE
            shadow = self.gm_pages.get(page)
            if shadow is None:
                shadow = self.gm_pages[page] = Shadow(GM_PAGE)
            base = page * GM_PAGE
            stop = min(end, base + GM_PAGE)
            yield shadow, address - base, stop - base, base
            address = stop

    def access(self, space: str, start: int, size: int, write: bool, pipe: int, seq: int, index: int,
               clock: np.ndarray) -> Conflict | None:
        """Check one access by instruction ``index`` (its pipe's number ``pipe``, its ``seq`` there, its clock
        with UNORDERED appended: see ``lookup``) and record it; the first conflict found (nothing is recorded
        then), or None."""
        if size <= 0:
            return None
        pieces = list(self._pieces(space, start, size))
        for shadow, a, b, base in pieces:
            writer = shadow.write_pipe[a:b]
            unordered = (shadow.write_seq[a:b] > clock[writer]) & (shadow.write_index[a:b] != index)
            if unordered.any():
                return _conflict("write after write" if write else "read after write", space, base + a, unordered,
                                 shadow.write_index[a:b], writer)
            if write:
                for other in range(len(PIPES)):
                    unordered = (shadow.read_seq[other, a:b] > clock[other]) & (shadow.read_index[other, a:b] != index)
                    if unordered.any():
                        return _conflict("write after read", space, base + a, unordered,
                                         shadow.read_index[other, a:b], np.full(b - a, other, dtype=np.int8))
        for shadow, a, b, _base in pieces:
            if write:
                shadow.write_pipe[a:b], shadow.write_seq[a:b], shadow.write_index[a:b] = pipe, seq, index
            else:
                shadow.read_seq[pipe, a:b], shadow.read_index[pipe, a:b] = seq, index
        return None


def lookup(clock: np.ndarray) -> np.ndarray:
    """A pipe's clock as ``access`` reads it: indexed by a writer's pipe number, where NONE (-1) picks the
    appended last entry, which never conflicts."""
    return np.append(clock.astype(np.int32), UNORDERED)


def _conflict(kind: str, space: str, start: int, unordered: np.ndarray, indexes: np.ndarray,
              pipes: np.ndarray) -> Conflict:
    """The first run of conflicting bytes with the same other instruction."""
    first = int(np.flatnonzero(unordered)[0])
    other = int(indexes[first])
    same = unordered[first:] & (indexes[first:] == other)
    run = int(np.argmin(same)) if not same.all() else same.size
    return Conflict(kind, space, start + first, start + first + run, other, PIPES[int(pipes[first])])
