"""A kernel simulated part by part on a :class:`~isasim.core.parallel.Pool`, its output assembled here.

A kernel whose output blocks are independent (each computed from the same inputs by its own stretch of
instructions) offers ``parts(pieces)``: a list of :class:`Part`, each the program text of a contiguous
range of its blocks, the registers that differ from the kernel's initial ones (where that range starts,
how many blocks it has) and the bytes of the output it owns, as :class:`Span` rectangles.  The parts' spans
are disjoint and cover the output; :func:`run_parts` checks that before anything runs, since a gap or an
overlap would make the assembled output differ from a single run without any part being wrong.

Each part runs on a fresh :class:`~isasim.core.machine.Machine` loaded with the kernel's whole initial state
(the inputs are the same for every part); the client starts from the output's initial bytes and overlays
each part's spans.  The initial state goes through ``pool.share`` (one copy per Dask worker rather than one
per task); the program text and the spans go with each task.  Nothing here names an ISA.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from .errors import IsasimError
from .trace import Init


class PartFault(IsasimError):
    """A part of the kernel raised an architectural fault, or ran past its step limit."""


@dataclass(frozen=True)
class Span:
    """``rows`` runs of ``row_bytes`` bytes, the first at ``address``, each ``stride`` bytes after the one
    before: a block of a row-major matrix (one contiguous range is rows = 1)."""

    address: int
    rows: int
    row_bytes: int
    stride: int = 0

    @property
    def extent(self) -> int:
        """Bytes from the first byte to one past the last."""
        return (self.rows - 1) * self.stride + self.row_bytes if self.rows else 0

    def window(self, buffer: np.ndarray, start: int) -> np.ndarray:
        """The span's bytes as a (rows, row_bytes) view of ``buffer`` (a uint8 array whose byte 0 is at
        address ``start`` and which reaches at least a whole stride past the span's last row)."""
        offset = self.address - start
        step = self.stride if self.rows > 1 else self.row_bytes
        return buffer[offset:offset + self.rows * step].reshape(self.rows, step)[:, :self.row_bytes]


def contiguous(address: int, size: int) -> Span:
    return Span(address, 1, size, size)


@dataclass(frozen=True)
class Part:
    """One independent piece of a kernel's run (see the module)."""

    label: str  # what a fault message names: "blocks 4..7"
    lines: tuple[str, ...]  # the program
    owns: tuple[Span, ...]  # the output bytes this part computes
    regs: dict = field(default_factory=dict)  # registers set on top of the kernel's initial ones
    max_steps: int = 0  # 0: the length of the program, for straight-line code, plus DEFAULT_STEP_LIMIT


def block_ranges(blocks: int, pieces: int) -> list[range]:
    """``blocks`` cut into at most ``pieces`` contiguous ranges whose lengths differ by at most one (the
    longer first), so that the slowest part is as short as it can be."""
    pieces = max(1, min(pieces, blocks))
    size, extra = divmod(blocks, pieces)
    ranges, start = [], 0
    for index in range(pieces):
        stop = start + size + (index < extra)
        ranges.append(range(start, stop))
        start = stop
    return ranges


# ---------------------------------------------------------------------------
# The worker's side
# ---------------------------------------------------------------------------


def run_part(isa: str, config: dict, init: Init, part: Part) -> tuple[str, list[bytes]]:
    """The bytes of ``part``'s spans after it runs on a fresh machine, and '' (or the fault that stopped it,
    described as the engine describes it: the instruction, its index, the rule).  Module-level: a pool
    pickles it by reference."""
    from .machine import DEFAULT_STEP_LIMIT, Machine

    machine = Machine(isa, config)
    program = machine.assemble("\n".join(part.lines), source=part.label)
    machine.load(program, regs={**init.regs, **part.regs}, memory=init.memory, arrays=init.arrays)
    limit = part.max_steps or len(program.instructions) + DEFAULT_STEP_LIMIT
    try:
        result = machine.run(max_steps=limit)
    except IsasimError as error:  # the step limit: a fault of the part, reported the same way
        return f"{part.label}: {error}", []
    if result.fault is not None:
        return f"{part.label}: {result.fault.describe()}", []
    return "", [_read_span(machine.memory, span) for span in part.owns]


def _read_span(memory, span: Span) -> bytes:
    step = span.stride if span.rows > 1 else span.row_bytes
    raw = np.frombuffer(memory.read(span.address, span.extent), dtype=np.uint8)
    # the last row stops at row_bytes, not at a whole stride: pad it so that the rows reshape evenly
    padded = np.zeros(span.rows * step, dtype=np.uint8)
    padded[:raw.size] = raw
    return span.window(padded, span.address).tobytes()


# ---------------------------------------------------------------------------
# The client's side
# ---------------------------------------------------------------------------


def initial_bytes(init: Init, output: Span) -> bytes:
    """The bytes the output starts as: the initial memory region that holds it."""
    for address, data, _writable in init.memory:
        if address <= output.address and output.address + output.extent <= address + len(data):
            return bytes(data[output.address - address:output.address - address + output.extent])
    raise IsasimError(f"the output at {output.address:#x} ({output.extent} bytes) is not inside one initial "
                      "memory region")


def check_coverage(parts: list[Part], output: Span) -> None:
    """Every byte of ``output`` (a contiguous range) owned by exactly one part."""
    if output.rows != 1:
        raise IsasimError("the output of a kernel run in parts is one contiguous range of memory")
    counts = np.zeros(output.extent + max((s.stride for p in parts for s in p.owns), default=0), dtype=np.uint16)
    for part in parts:
        for span in part.owns:
            if span.address < output.address or span.address + span.extent > output.address + output.extent:
                raise IsasimError(f"{part.label} writes outside the output ({span.address:#x}, "
                                  f"{span.extent} bytes)")
            span.window(counts, output.address)[...] += 1
    counts = counts[:output.extent]
    if not (counts == 1).all():
        where = int(np.argmax(counts != 1))
        what = "no part" if counts[where] == 0 else f"{int(counts[where])} parts"
        raise IsasimError(f"the kernel's parts do not tile its output: byte {where} ({output.address + where:#x}) "
                          f"is computed by {what}")


def run_parts(pool, isa: str, config: dict, init: Init, parts: list[Part], output: Span) -> bytes:
    """The output's bytes once every part has run on ``pool`` (a PartFault names the first part that
    faulted)."""
    check_coverage(parts, output)
    shared = pool.share(init)
    # a whole stride past the end, so that the last row of any span is a full row of the view
    canvas = np.zeros(output.extent + max(s.stride for p in parts for s in p.owns), dtype=np.uint8)
    canvas[:output.extent] = np.frombuffer(initial_bytes(init, output), dtype=np.uint8)
    tasks = [(isa, config, shared, part) for part in parts]
    for index, (fault, chunks) in pool.run(run_part, tasks):
        if fault:
            raise PartFault(f"part {index + 1} of {len(parts)} faulted: {fault}")
        for span, chunk in zip(parts[index].owns, chunks):
            span.window(canvas, output.address)[...] = np.frombuffer(chunk, dtype=np.uint8).reshape(
                span.rows, span.row_bytes)
    return canvas[:output.extent].tobytes()


def run_whole(isa: str, config: dict, init: Init, lines: Iterable[str], output: Span, max_steps: int = 0,
              source: str = "<kernel>") -> bytes:
    """The output's bytes after the whole program runs in this process: the single-process run the parts
    must reproduce."""
    whole = Part(source, tuple(lines), (output,), {}, max_steps)
    fault, chunks = run_part(isa, config, init, whole)
    if fault:
        raise PartFault(f"the kernel faulted: {fault}")
    return chunks[0]
