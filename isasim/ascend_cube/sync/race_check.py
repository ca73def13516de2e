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

Speed (issue 33), with the same faults and the same shadow contents:

* a shadow keeps one record per 32-byte granule while every access to it has covered whole granules (the
  cube's buffers and a kernel's GM rows are 32-byte aligned), which is the per-byte shadow with each record
  written 32 times; the first access that splits a granule turns it into the per-byte shadow (``refine``);
* the check and record of one access, or of many equal rows ``stride`` apart (an Nd2Nz's source rows, a
  Fixpipe's ND rows), is one compiled loop (numba) when numba is there, row after row exactly as one
  ``access`` per row would go; on a conflict the numpy path, the reference, says which bytes and whom;
* the compiled loop skips the check of a 4 KiB chunk whose summary (each pipe's latest seq that wrote or read
  there; seqs only grow) is already ordered before the access: no record in it can then be unordered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .events import PIPES

try:  # the compiled check; without numba every access takes the numpy path (slower, the same results)
    from numba import njit
except ImportError:  # pragma: no cover - numba is optional
    njit = None

NONE = -1  # no access yet (a byte the initial state holds)
UNORDERED = np.iinfo(np.int32).max  # the clock entry of "no pipe": never unordered
GM_PAGE = 1 << 16  # GM's shadow is kept in pages of this many bytes, made as they are touched
GRANULE = 32  # bytes per record while every access to a shadow covers whole granules of this size
CHUNK = 4096  # bytes per entry of a shadow's summary: the latest seq each pipe wrote or read there
LATEST, LATEST_INDEX, BEFORE = 0, 1, 2  # the summary's rows


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
    """The last accesses of each byte of one space (a buffer, or one GM page): one record per ``granule`` bytes
    (every byte of a granule has had the same accesses), or per byte once ``refine`` has run."""

    __slots__ = ("write_pipe", "write_seq", "write_index", "read_seq", "read_index", "granule", "chunk_write",
                 "chunk_read")

    def __init__(self, size: int, granule: int = GRANULE):
        if granule < 1 or size % granule:
            granule = 1
        units = size // granule
        self.granule = granule
        self.write_pipe = np.full(units, NONE, dtype=np.int8)
        self.write_seq = np.zeros(units, dtype=np.int32)
        self.write_index = np.full(units, NONE, dtype=np.int32)
        self.read_seq = np.zeros((len(PIPES), units), dtype=np.int32)  # 0: no read by that pipe
        self.read_index = np.full((len(PIPES), units), NONE, dtype=np.int32)
        # per CHUNK bytes and pipe: [LATEST] the seq of the latest instruction that wrote / read a byte there (0:
        # none), [LATEST_INDEX] its index, [BEFORE] the seq of the one before it (seqs only grow, so every record of
        # the chunk other than the latest instruction's holds at most BEFORE): what the compiled check skips by
        chunks = -(-size // CHUNK)
        self.chunk_write = np.zeros((3, len(PIPES), chunks), dtype=np.int32)
        self.chunk_read = np.zeros((3, len(PIPES), chunks), dtype=np.int32)
        self.chunk_write[LATEST_INDEX] = NONE
        self.chunk_read[LATEST_INDEX] = NONE

    def note_chunks(self, a: int, b: int, write: bool, pipe: int, seq: int, index: int) -> None:
        """Bytes [a, b) were written (or read) by instruction ``index`` (``pipe``'s ``seq``): their chunks' summary."""
        _note_chunks(self.chunk_write if write else self.chunk_read, a // CHUNK, (b - 1) // CHUNK + 1, pipe, seq,
                     index)

    @property
    def size(self) -> int:
        return self.write_pipe.shape[0] * self.granule

    def refine(self) -> None:
        """One record per byte from now on (each granule's record copied to its bytes)."""
        if self.granule == 1:
            return
        g = self.granule
        self.write_pipe = np.repeat(self.write_pipe, g)
        self.write_seq = np.repeat(self.write_seq, g)
        self.write_index = np.repeat(self.write_index, g)
        self.read_seq = np.repeat(self.read_seq, g, axis=1)
        self.read_index = np.repeat(self.read_index, g, axis=1)
        self.granule = 1

    def units(self, a: int, b: int) -> tuple[int, int]:
        """The records of bytes [a, b): refined first when the range splits a granule."""
        g = self.granule
        if g > 1 and (a % g or b % g or a < 0):
            self.refine()
            return a, b
        return a // g, b // g

    def bytes_view(self) -> tuple[np.ndarray, ...]:
        """The per-byte records (copies when kept per granule): for comparing shadows."""
        g = self.granule
        return (np.repeat(self.write_pipe, g), np.repeat(self.write_seq, g), np.repeat(self.write_index, g),
                np.repeat(self.read_seq, g, axis=1), np.repeat(self.read_index, g, axis=1))


class RaceCheck:
    """The shadow of every space a run touches, and the check of one access against it.  ``granule``: 1 keeps
    a record per byte from the start; ``compiled`` False takes the numpy path even with numba there."""

    def __init__(self, buffer_sizes: dict[str, int], granule: int = GRANULE, compiled: bool | None = None):
        self.sizes = dict(buffer_sizes)
        self.granule = granule
        self.shadows: dict[str, Shadow] = {}
        self.gm_pages: dict[int, Shadow] = {}
        self.kernel = _check_record_rows if compiled is not False else None

    def _buffer_shadow(self, space: str) -> Shadow:
        shadow = self.shadows.get(space)
        if shadow is None:
            shadow = self.shadows[space] = Shadow(self.sizes[space], self.granule)
        return shadow

    def _page_shadow(self, page: int) -> Shadow:
        shadow = self.gm_pages.get(page)
        if shadow is None:
            shadow = self.gm_pages[page] = Shadow(GM_PAGE, self.granule)
        return shadow

    def _pieces(self, space: str, start: int, size: int):
        """(shadow, first byte there, last + 1, address of the shadow's byte 0) for the bytes [start, start+size)."""
        if space != "GM":
            yield self._buffer_shadow(space), start, start + size, 0
            return
        address, end = start, start + size
        while address < end:
            page = address // GM_PAGE
            shadow = self._page_shadow(page)
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
        if self.kernel is not None:  # one shadow holds the bytes: the compiled check and record
            if space != "GM":
                shadow, a = self._buffer_shadow(space), start
            else:
                page = start // GM_PAGE
                shadow = self._page_shadow(page) if (start + size - 1) // GM_PAGE == page else None
                a = start - page * GM_PAGE
            if shadow is not None and 0 <= a and a + size <= shadow.size:
                lo, hi = shadow.units(a, a + size)
                if self.kernel(shadow.write_pipe, shadow.write_seq, shadow.write_index, shadow.read_seq,
                               shadow.read_index, shadow.chunk_write, shadow.chunk_read, CHUNK // shadow.granule,
                               lo, 1, hi - lo, 0, write, pipe, seq, index, clock) == 1:
                    return None  # checked and recorded
        return self._access_numpy(space, list(self._pieces(space, start, size)), write, pipe, seq, index, clock)

    def _access_numpy(self, space: str, pieces: list, write: bool, pipe: int, seq: int, index: int,
                      clock: np.ndarray) -> Conflict | None:
        """``access`` in numpy: every piece checked, then every piece recorded."""
        for shadow, a, b, base in pieces:
            lo, hi = shadow.units(a, b)
            if shadow.granule > 1:
                if _any_unordered(shadow, lo, hi, write, index, clock):  # to name the bytes: per byte, and again
                    shadow.refine()
                    return self._access_numpy(space, pieces, write, pipe, seq, index, clock)
                continue
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
            lo, hi = shadow.units(a, b)
            if write:
                shadow.write_pipe[lo:hi], shadow.write_seq[lo:hi], shadow.write_index[lo:hi] = pipe, seq, index
            else:
                shadow.read_seq[pipe, lo:hi], shadow.read_index[pipe, lo:hi] = seq, index
            shadow.note_chunks(max(a, 0), min(b, shadow.size), write, pipe, seq, index)
        return None

    def access_rows(self, space: str, start: int, rows: int, row_bytes: int, stride: int, write: bool, pipe: int,
                    seq: int, index: int, clock: np.ndarray) -> int:
        """``access`` of each of ``rows`` rows of ``row_bytes`` bytes, ``stride`` apart from ``start``, in order:
        how many were checked and recorded before the first with a conflict (``rows`` when none has one; that
        row's ``access`` then names the conflict)."""
        done = 0
        while done < rows:
            first = start + done * stride
            count, shadow, a = self._run_in_one_shadow(space, first, rows - done, row_bytes, stride)
            if count == 0:  # this row alone (it crosses a GM page, or the compiled loop cannot take it)
                if self.access(space, first, row_bytes, write, pipe, seq, index, clock) is not None:
                    return done
                done += 1
                continue
            g = shadow.granule
            if g > 1 and (a % g or row_bytes % g or stride % g):
                shadow.refine()
                g = 1
            passed = self.kernel(shadow.write_pipe, shadow.write_seq, shadow.write_index, shadow.read_seq,
                                 shadow.read_index, shadow.chunk_write, shadow.chunk_read, CHUNK // g, a // g, count,
                                 row_bytes // g, stride // g, write, pipe, seq, index, clock)
            done += passed
            if passed < count:
                return done
        return done

    def _run_in_one_shadow(self, space: str, first: int, rows: int, row_bytes: int, stride: int):
        """(how many of the rows from ``first`` on lie in one shadow, that shadow, the first row's offset there),
        for the compiled loop; (0, None, 0) when it cannot take the first row."""
        if self.kernel is None or row_bytes <= 0 or stride < 0 or (rows > 1 and stride < row_bytes):
            return 0, None, 0  # (overlapping rows: one at a time, as the numpy path has them)
        if space != "GM":
            shadow = self._buffer_shadow(space)
            base, end = 0, shadow.size
        else:
            page = first // GM_PAGE
            base, end = page * GM_PAGE, (page + 1) * GM_PAGE
            shadow = None
        if first < base or first + row_bytes > end:
            return 0, None, 0
        count = rows if stride == 0 else min(rows, (end - row_bytes - first) // stride + 1)
        if shadow is None:
            shadow = self._page_shadow(first // GM_PAGE)
        return count, shadow, first - base


def _any_unordered(shadow: Shadow, lo: int, hi: int, write: bool, index: int, clock: np.ndarray) -> bool:
    """Records [lo, hi) hold an access the one being checked is not ordered after."""
    if ((shadow.write_seq[lo:hi] > clock[shadow.write_pipe[lo:hi]]) & (shadow.write_index[lo:hi] != index)).any():
        return True
    return write and any(((shadow.read_seq[other, lo:hi] > clock[other]) & (shadow.read_index[other, lo:hi] != index))
                         .any() for other in range(len(PIPES)))


def lookup(clock: np.ndarray) -> np.ndarray:
    """A pipe's clock as ``access`` reads it: indexed by a writer's pipe number, where NONE (-1) picks the
    appended last entry, which never conflicts."""
    out = np.empty(clock.size + 1, dtype=np.int32)
    out[:-1] = clock
    out[-1] = UNORDERED
    return out


def _conflict(kind: str, space: str, start: int, unordered: np.ndarray, indexes: np.ndarray,
              pipes: np.ndarray) -> Conflict:
    """The first run of conflicting bytes with the same other instruction."""
    first = int(np.flatnonzero(unordered)[0])
    other = int(indexes[first])
    same = unordered[first:] & (indexes[first:] == other)
    run = int(np.argmin(same)) if not same.all() else same.size
    return Conflict(kind, space, start + first, start + first + run, other, PIPES[int(pipes[first])])


def _check_record_rows_py(write_pipe, write_seq, write_index, read_seq, read_index, chunk_write, chunk_read,
                          chunk_units, first, rows, length, stride, write, pipe, seq, index, clock):
    """The compiled loop: check and record each row of ``length`` records at ``first`` + r * ``stride`` in turn;
    the number of rows recorded before the first whose check finds an unordered record.  ``chunk_units``: records
    per summary chunk."""
    unordered_limit = clock[clock.shape[0] - 1]  # a record no one wrote (writer NONE) is never unordered
    pipes = read_seq.shape[0]
    for r in range(rows):
        a = first + r * stride
        b = a + length
        for chunk in range(a // chunk_units, (b - 1) // chunk_units + 1):
            ordered = True
            for other in range(pipes):
                # the latest instruction's seq, or the one's before when the latest is this instruction itself
                # (its own records never conflict)
                latest = 1 if chunk_write[1, other, chunk] == index else 0
                if chunk_write[2 * latest, other, chunk] > clock[other]:
                    ordered = False
                if write:
                    latest = 1 if chunk_read[1, other, chunk] == index else 0
                    if chunk_read[2 * latest, other, chunk] > clock[other]:
                        ordered = False
            if ordered:
                continue  # every record in the chunk is ordered before this access
            lo = max(a, chunk * chunk_units)
            hi = min(b, (chunk + 1) * chunk_units)
            for x in range(lo, hi):
                writer = write_pipe[x]
                limit = clock[writer] if writer >= 0 else unordered_limit
                if write_seq[x] > limit and write_index[x] != index:
                    return r
            if write:
                for other in range(pipes):
                    limit = clock[other]
                    for x in range(lo, hi):
                        if read_seq[other, x] > limit and read_index[other, x] != index:
                            return r
        if write:
            for x in range(a, b):
                write_pipe[x] = pipe
                write_seq[x] = seq
                write_index[x] = index
        else:
            for x in range(a, b):
                read_seq[pipe, x] = seq
                read_index[pipe, x] = index
        _note_chunks(chunk_write if write else chunk_read, a // chunk_units, (b - 1) // chunk_units + 1, pipe, seq,
                     index)
    return rows


def _note_chunks_py(summary, first, end, pipe, seq, index):
    """Chunks [first, end) of a summary (see Shadow) now hold a record of instruction ``index``, ``pipe``'s ``seq``."""
    for chunk in range(first, end):
        if summary[1, pipe, chunk] != index:
            summary[2, pipe, chunk] = summary[0, pipe, chunk]
            summary[0, pipe, chunk] = seq
            summary[1, pipe, chunk] = index


if njit is not None:
    _note_chunks = njit(cache=True, nogil=True)(_note_chunks_py)
    _check_record_rows = njit(cache=True, nogil=True)(_check_record_rows_py)
else:  # pragma: no cover - numba is optional
    _note_chunks, _check_record_rows = _note_chunks_py, None
