"""What an instruction reads and writes, worked out from its parameters before it moves a byte.

Each data-moving form declares an ``access`` function, ``access(ctx, p) -> Access``: it makes every check
of the instruction's parameters and buffer addresses (alignment, ranges, the end of each buffer) and says
which bytes the instruction will read and write.  The form's semantics call it first, so the checks exist
once; ``isasim explain`` calls it before it builds example data, so it fills exactly the bytes the
instruction reads, and an instruction that faults on its parameters faults before any data is built.

GM is the one thing access functions do not check: whether GM is mapped depends on the memory a run was
given, so the semantics check it (before their first write) when they touch it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """``rows`` runs of ``row_bytes`` bytes in ``space`` (a buffer, or "GM"), the first at ``start`` and each
    ``stride`` bytes after the one before; the bytes hold ``dtype`` elements (for the quant words, uint64)."""

    space: str
    start: int
    rows: int
    row_bytes: int
    stride: int
    dtype: str = "uint8"

    @property
    def end(self) -> int:
        """One past the last byte."""
        return self.start + (self.rows - 1) * self.stride + self.row_bytes if self.rows else self.start


def contiguous(space: str, start: int, size: int, dtype: str = "uint8") -> Span:
    return Span(space, start, 1, size, size, dtype)


@dataclass(frozen=True)
class Access:
    """The bytes an instruction reads, on chip and in GM, and the GM it writes (what a run must map; the
    on-chip buffers it writes are there whatever the run)."""

    reads: tuple[Span, ...] = ()
    gm_writes: tuple[Span, ...] = ()


def track_rows(ctx, space: str, start: int, rows: int, row_bytes: int, stride: int, *, write: bool) -> None:
    """``ctx.track`` of each of ``rows`` rows of ``row_bytes`` bytes, ``stride`` apart from ``start``, in order:
    what the race check sees of a strided access, checked in one go (the same faults as row by row)."""
    pipes = ctx.state.pipes
    if pipes is None:
        return
    pipes.access_rows(space, start, rows, row_bytes, stride, write)
