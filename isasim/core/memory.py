"""Sparse byte memory made of mapped regions.

Only what a program's initial state maps exists: any access that is not wholly
inside mapped regions raises :class:`MemoryFault` naming the first byte that is
not covered.  Regions may be read-only, so a store to them faults as a write to a
read-only page would.  Values are little-endian, as on both x86 and AArch64.
"""

from __future__ import annotations

import bisect
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from .errors import TraceFormatError
from .faults import MemoryFault
from .journal import Journal

ADDRESS_LIMIT = 1 << 64


@dataclass
class Region:
    start: int
    data: bytearray  # never resized: writes replace bytes in place
    writable: bool = True

    def __post_init__(self) -> None:
        self.end = self.start + len(self.data)  # just past the last byte


_NO_REGION = Region(0, bytearray())  # holds no address (start == end)


class Memory:
    def __init__(self, journal: Journal | None = None) -> None:
        self.regions: list[Region] = []  # sorted by start, never overlapping
        self._starts: list[int] = []  # their starts, for bisect
        self._last = _NO_REGION  # the region _region_at found last (regions are never unmapped)
        self.journal = journal if journal is not None else Journal()
        # Every access, while record_accesses() runs: ("read", address, size) and ("write", address, bytes),
        # in the order the instruction made them (explain shows which bytes fed which element).  The
        # journal only holds writes that changed something; this holds reads, and writes of equal bytes.
        self.accesses: list[tuple[str, int, object]] | None = None

    @contextmanager
    def record_accesses(self):
        """Note every access made inside the ``with`` block; yields the list they are appended to."""
        saved, self.accesses = self.accesses, []
        try:
            yield self.accesses
        finally:
            self.accesses = saved

    # ---- mapping -------------------------------------------------------
    def map(self, start: int, data: bytes | bytearray | int, *, writable: bool = True) -> Region:
        """Map a region at ``start`` holding ``data`` (or that many zero bytes)."""
        content = bytearray(data) if not isinstance(data, int) else bytearray(data)
        if start < 0 or start + len(content) > ADDRESS_LIMIT:
            raise TraceFormatError(f"region {start:#x}+{len(content)} is outside the 64-bit address space")
        if not content:
            raise TraceFormatError(f"region at {start:#x} is empty")
        region = Region(start, content, writable)
        for other in self.regions:
            if start < other.end and other.start < region.end:
                raise TraceFormatError(
                    f"region {start:#x}..{region.end:#x} overlaps region {other.start:#x}..{other.end:#x}"
                )
        bisect.insort(self.regions, region, key=lambda r: r.start)
        self._starts = [r.start for r in self.regions]
        return region

    def _region_at(self, address: int) -> Region | None:
        last = self._last  # a kernel's accesses mostly fall in the region of the one before: no bisect then
        if last.start <= address < last.end:
            return last
        i = bisect.bisect_right(self._starts, address) - 1
        if i >= 0 and address < self.regions[i].end:
            self._last = self.regions[i]
            return self._last
        return None

    def _pieces(self, address: int, size: int, access: str):
        """Split [address, address+size) into (region, offset, length) pieces or fault."""
        pieces = []
        cursor, remaining = address, size
        while remaining > 0:
            region = self._region_at(cursor % ADDRESS_LIMIT)
            if region is None:
                raise MemoryFault(cursor % ADDRESS_LIMIT, size, access)
            if access == "write" and not region.writable:
                raise MemoryFault(cursor % ADDRESS_LIMIT, size, access, why="is read-only")
            offset = cursor - region.start
            length = min(remaining, region.end - cursor)
            pieces.append((region, offset, length))
            cursor += length
            remaining -= length
        return pieces

    def check(self, address: int, size: int, access: str = "read") -> None:
        """Raise the MemoryFault that a read or write of these bytes would raise, touching nothing
        (an instruction that makes several accesses checks them all before it writes any)."""
        self._pieces(address, size, access)

    def is_mapped(self, address: int, size: int, access: str = "read") -> bool:
        try:
            self._pieces(address, size, access)
        except MemoryFault:
            return False
        return True

    # ---- access ----------------------------------------------------------
    def read(self, address: int, size: int) -> bytes:
        if self.accesses is not None:
            self.accesses.append(("read", address % ADDRESS_LIMIT, size))
        return self._read(address, size)

    def _read(self, address: int, size: int) -> bytes:
        """The bytes, without noting a program access (the journal's own reads)."""
        region = self._region_at(address)
        if region is not None and address + size <= region.end:  # the common case: one region holds them all
            offset = address - region.start
            return bytes(region.data[offset:offset + size])
        out = bytearray()
        for region, offset, length in self._pieces(address, size, "read"):
            out += region.data[offset : offset + length]
        return bytes(out)

    def write(self, address: int, data: bytes) -> None:
        if self.accesses is not None:
            self.accesses.append(("write", address % ADDRESS_LIMIT, bytes(data)))
        pieces = self._pieces(address, len(data), "write")  # fault before changing anything
        old = self._read(address, len(data)) if self.journal.enabled else b""  # the journal's, not a program read
        pos = 0
        for region, offset, length in pieces:
            region.data[offset : offset + length] = data[pos : pos + length]
            pos += length
        self.journal.record("mem", address, old, bytes(data))

    def span(self, address: int, size: int, *, write: bool = False) -> memoryview | None:
        """The ``size`` bytes at ``address`` as a memoryview onto their region, when one mapped (for a write,
        writable) region holds them all and neither accesses nor (for a write) the journal are noting anything;
        otherwise None (the caller then takes the general path, which notes them and faults where the
        hardware does).  A view onto memory: use it at once."""
        if self.accesses is not None or (write and self.journal.enabled):
            return None
        region = self._region_at(address)
        if region is None or address + size > region.end or (write and not region.writable):
            return None
        offset = address - region.start
        return memoryview(region.data)[offset:offset + size]

    # ---- strided rows in one go (a tile load or store; later a ZA slice) ----------------------------
    def _rows_view(self, first: int, stride: int, count: int, size: int, *, write: bool) -> np.ndarray | None:
        """A (count, size) uint8 view of the rows at first + r*stride, if they all lie in one mapped
        (and, for a write, writable) region without wrapping the address space; otherwise None."""
        span = (count - 1) * stride
        low, high = (first, first + span + size) if stride >= 0 else (first + span, first + size)
        if low < 0 or high > ADDRESS_LIMIT:
            return None
        region = self._region_at(low)
        if region is None or high > region.end or (write and not region.writable):
            return None
        if stride >= 0:  # a strided view straight onto the region's bytes
            return np.ndarray((count, size), np.uint8, buffer=region.data, offset=first - region.start,
                              strides=(stride, 1))
        data = np.frombuffer(region.data, dtype=np.uint8)
        return data[(first - region.start + stride * np.arange(count))[:, None] + np.arange(size)]

    def read_rows(self, first: int, stride: int, count: int, size: int) -> np.ndarray | None:
        """Rows of ``size`` bytes at first + r*stride (r < count) as one uint8 array, or None when they are
        not all inside one mapped region (the caller then reads row by row and faults where the hardware does).
        The array may be a view onto memory: copy it before memory changes."""
        view = self._rows_view(first, stride, count, size, write=False)
        if view is not None and self.accesses is not None:
            self.accesses.extend(("read", (first + r * stride) % ADDRESS_LIMIT, size) for r in range(count))
        return view

    def write_rows(self, first: int, stride: int, rows: np.ndarray) -> bool:
        """Write ``rows`` at first + r*stride in one go when nothing is recorded, the rows do not overlap
        and all lie in one writable region; False means the caller must write row by row."""
        count, size = rows.shape
        if self.journal.enabled or (count > 1 and abs(stride) < size):
            return False
        view = self._rows_view(first, stride, count, size, write=True)
        if view is None or stride < 0:  # a negative stride gives a copy, not a view
            return False
        view[...] = rows
        if self.accesses is not None:
            self.accesses.extend(("write", (first + r * stride) % ADDRESS_LIMIT, bytes(row))
                                 for r, row in enumerate(rows))
        return True

    # ---- snapshots ---------------------------------------------------------
    def snapshot(self) -> list[tuple[int, bytes, bool]]:
        return [(r.start, bytes(r.data), r.writable) for r in self.regions]

    def copy(self) -> "Memory":
        twin = Memory()
        for start, data, writable in self.snapshot():
            twin.map(start, data, writable=writable)
        return twin
