"""The data an explained instruction's example runs on: seeded values in exactly the bytes it reads.

The instruction's own ``access`` function (see :mod:`isasim.ascend_cube.semantics.access`) says which bytes
those are, after every check of its parameters; an instruction that fails them is run on no data at all and
faults as ``isasim run`` faults.  So the data is never larger than what the instruction reads (at most the
buffers it reads from, and the GM bytes it reads), whatever its parameters.

GM is mapped as a few regions around what the instruction reads and writes: rows of a span close enough
together share a region, and rows far apart each get their own.  An example that would map more than
GM_EXAMPLE_BYTES or GM_EXAMPLE_REGIONS is refused in one line (a real run maps what its init file says).
"""

from __future__ import annotations

import bisect

import numpy as np

from isasim.core.explain import ExplainError
from isasim.core.memory import ADDRESS_LIMIT

from ..semantics.access import Access, Span

GM_EXAMPLE_BYTES = 64 * 2**20  # the most GM an example maps
GM_EXAMPLE_REGIONS = 4096  # and in at most this many regions (a DataCopy of 4,095 bursts far apart)
GM_ROWS_SHARE_GAP = 64 * 1024  # rows at most this far apart share a region (the zeros between cost little)


def values(span: Span, rows: int, rng: np.random.Generator, quant_word) -> np.ndarray:
    """rows x span.row_bytes bytes of seeded values of the span's type: any byte for the integer types,
    finite floats small enough that products and sums stay finite, quant words as the toolkit packs them."""
    count = rows * span.row_bytes
    dtype = span.dtype
    if dtype == "uint64":  # per-channel quant words: one per output column
        words = np.array([quant_word() for _ in range(count // 8)], dtype=np.uint64)
        data = words.view(np.uint8)
    elif dtype in ("float16", "bfloat16", "int16"):
        halves = (rng.choice((-1, 1), count // 2) * rng.integers(0, 2048, count // 2) / 64).astype(np.float32)
        data = (halves.astype(np.float16).view(np.uint16) if dtype != "bfloat16"
                else (halves.view(np.uint32) >> 16).astype(np.uint16)).view(np.uint8)
    elif dtype in ("float8_e4m3fn", "float8_e5m2", "hifloat8"):
        from ..numerics.formats import decode

        codes = rng.integers(0, 256, count, dtype=np.uint8)
        finite = np.isfinite(np.asarray(decode(codes, dtype), dtype=np.float64))
        data = np.where(finite, codes, 0).astype(np.uint8)  # Mmad "should avoid NaN inputs"
    elif dtype == "int32":
        data = rng.integers(-5000, 5000, count // 4).astype("<i4").view(np.uint8)
    elif dtype == "float32":
        data = (rng.integers(-50000, 50000, count // 4) / 16).astype("<f4").view(np.uint8)
    else:
        data = rng.integers(0, 256, count, dtype=np.uint8)
    return np.resize(data, count).reshape(rows, span.row_bytes)  # resize: a part-word tail (never needed)


def _row_offsets(span: Span, base: int) -> np.ndarray:
    return span.start - base + np.arange(span.rows, dtype=np.int64) * span.stride


def _place(image: np.ndarray, span: Span, base: int, data: np.ndarray) -> None:
    image[_row_offsets(span, base)[:, None] + np.arange(span.row_bytes)] = data


def seed_buffers(machine, access: Access, rng: np.random.Generator, quant_word) -> None:
    """Fill the on-chip bytes the instruction reads (the access function has checked they are inside)."""
    for span in access.reads:
        if span.space == "GM" or not span.rows:
            continue
        image = machine.state.buffers[span.space].copy()
        _place(image, span, 0, values(span, span.rows, rng, quant_word))
        low, high = span.start, span.end
        machine.state.write_buffer(span.space, low, image[low:high])


def gm_regions(access: Access) -> list[tuple[int, int]]:
    """(start, end) of the GM regions the example maps: every row the instruction reads or writes, rows close
    together merged; a span that would pass 2^64 is left out (the run faults on it, as one without such a
    region does)."""
    spans = [s for s in (*access.reads, *access.gm_writes) if s.space == "GM" and s.rows and s.end <= ADDRESS_LIMIT]
    pieces = []
    for span in spans:
        if span.stride - span.row_bytes <= GM_ROWS_SHARE_GAP:
            pieces.append((span.start, span.end))
            continue
        if span.rows > GM_EXAMPLE_REGIONS:
            _refuse(f"{span.rows:,} GM rows {span.stride:,} bytes apart")
        pieces.extend((start, start + span.row_bytes) for start in range(span.start, span.end, span.stride))
    pieces.sort()
    merged: list[list[int]] = []
    for start, end in pieces:
        if merged and start - merged[-1][1] <= GM_ROWS_SHARE_GAP:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    total = sum(end - start for start, end in merged)
    if len(merged) > GM_EXAMPLE_REGIONS or total > GM_EXAMPLE_BYTES:
        _refuse(f"{total:,} bytes of GM in {len(merged):,} region{'s' * (len(merged) != 1)}")
    return [(start, end) for start, end in merged]


def _refuse(what: str) -> None:
    raise ExplainError(f"the example would map {what}; explain maps at most {GM_EXAMPLE_BYTES // 2**20} MiB in "
                       f"{GM_EXAMPLE_REGIONS:,} regions (run the instruction with an init file instead)")


def map_gm(machine, access: Access, rng: np.random.Generator, quant_word) -> list[tuple[int, int]]:
    """Map the example's GM regions (zeros), with seeded values where the instruction reads; the regions."""
    regions = gm_regions(access)
    images = [np.zeros(end - start, dtype=np.uint8) for start, end in regions]
    starts = [start for start, _end in regions]
    for span in access.reads:
        if span.space != "GM" or not span.rows or span.end > ADDRESS_LIMIT:
            continue
        data = values(span, span.rows, rng, quant_word)
        first = bisect.bisect_right(starts, span.start) - 1
        if span.end <= regions[first][1]:  # the whole span in one region: one placement
            _place(images[first], span, starts[first], data)
            continue
        for row, offset in enumerate(_row_offsets(span, 0)):  # rows in regions of their own (few: bounded above)
            at = bisect.bisect_right(starts, int(offset)) - 1
            images[at][int(offset) - starts[at]:int(offset) - starts[at] + span.row_bytes] = data[row]
    for (start, _end), image in zip(regions, images):
        machine.memory.map(start, image.tobytes())
    return regions
