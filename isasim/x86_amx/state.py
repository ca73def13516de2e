"""Architectural state of an x86-64 core with AMX: GPRs, RIP, RFLAGS, TILECFG and tmm0-7.

Every write goes through an accessor that records it in the journal, so a step
reports exactly what it changed.  Tile data is kept as the full 8 x 16 x 64 bytes
the hardware holds (XTILEDATA), including the bytes beyond a tile's configured
shape, because instructions zero those and XSAVE-based comparisons see them.
TMUL products may wait to be added into their accumulator during a plain run
(``accumulate``); every read of tile data makes them first.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from ..core import numerics
from ..core.errors import IsasimError
from ..core.journal import Journal, Location
from .operands import GPR_VIEWS, GPR64, GprView, vector_register
from .operands.masking import OPMASK_REGISTERS as OPMASK_NAMES

MAX_TILES = 8  # palette 1: max_names
MAX_ROWS = 16  # palette 1: max_rows
BYTES_PER_ROW = 64  # palette 1: bytes_per_row

# TILECFG's palette-1 layout, 64 bytes (Intel SDM Vol. 1, "Tile Configuration"): the one
# definition; TileConfig, the kernels, LDTILECFG's checks and the views all use it.
TILECFG_BYTES = 64
TILECFG_PALETTE = 0  # byte 0: palette
TILECFG_START_ROW = 1  # byte 1: start_row
TILECFG_RESERVED = tuple(range(2, 16)) + tuple(range(32, 48)) + tuple(range(56, 64))  # must be 0


def colsb_bytes(t: int) -> slice:
    """Where colsb[t] is in TILECFG: 16-bit little-endian at bytes 16 + 2t and 17 + 2t."""
    return slice(16 + 2 * t, 18 + 2 * t)


def rows_byte(t: int) -> int:
    """Where rows[t] is in TILECFG: byte 48 + t."""
    return 48 + t


def tilecfg_image(palette: int, start_row: int, colsb, rows) -> bytes:
    """The 64 TILECFG bytes with these fields (``colsb``, ``rows``: per tile) and every reserved byte 0."""
    image = bytearray(TILECFG_BYTES)
    image[TILECFG_PALETTE], image[TILECFG_START_ROW] = palette, start_row
    for t, (c, r) in enumerate(zip(colsb, rows)):
        image[colsb_bytes(t)] = c.to_bytes(2, "little")
        image[rows_byte(t)] = r
    return bytes(image)


def tile_config(shapes: dict[int, tuple[int, int]], start_row: int = 0, *, palette: int = 1) -> bytes:
    """The 64-byte configuration (palette 1 unless told); shapes maps tile -> (rows, colsb)."""
    rows = [shapes.get(t, (0, 0))[0] for t in range(MAX_TILES)]
    colsb = [shapes.get(t, (0, 0))[1] for t in range(MAX_TILES)]
    return tilecfg_image(palette, start_row, colsb, rows)


def observed_arrays(tilecfg: bytes, xtiledata: bytes) -> dict[str, bytes]:
    """What a trace sees of the tiles (the one definition, for the simulator's state and silicon's):
    TILECFG as STTILECFG stores it (64 zero bytes while unconfigured), and each configured tile with a
    non-empty shape as its rows x colsb bytes, what TILESTORED would store.  ``xtiledata``: tmm0-7's
    8 x 16 x 64 bytes, XSAVE's XTILEDATA layout."""
    config = TileConfig.from_bytes(tilecfg) if tilecfg[TILECFG_PALETTE] else None
    arrays = {"tilecfg": bytes(tilecfg) if config else bytes(TILECFG_BYTES)}
    for t in range(MAX_TILES if config else 0):
        rows, colsb = config.rows[t], config.colsb[t]
        if rows and colsb:
            tile = xtiledata[t * MAX_ROWS * BYTES_PER_ROW:(t + 1) * MAX_ROWS * BYTES_PER_ROW]
            arrays[f"tmm{t}"] = b"".join(tile[r * BYTES_PER_ROW:r * BYTES_PER_ROW + colsb] for r in range(rows))
    return arrays


# RFLAGS bits the scalar subset computes (the "status flags").
CF, PF, AF, ZF, SF, OF = 1 << 0, 1 << 2, 1 << 4, 1 << 6, 1 << 7, 1 << 11
FLAG_NAMES = {"CF": CF, "PF": PF, "AF": AF, "ZF": ZF, "SF": SF, "OF": OF}  # as the views print them
STATUS_FLAGS = sum(FLAG_NAMES.values())
DF = 1 << 10  # the direction flag (CLD, STD): string instructions step back while it is set
RFLAGS_RESET = 0x202  # bit 1 is always 1; IF is set in a Linux user process

# The journal's locations, made once so that recording a write costs no allocation.
GPR_LOCATIONS = tuple(Location(name) for name in GPR64)
VECTOR_LOCATIONS = tuple(Location(f"zmm{n}") for n in range(32))
VECTOR_REGISTER_COUNT = 32  # zmm0-31 (AVX-512 in 64-bit mode)
OPMASK_LOCATIONS = tuple(Location(f"k{n}") for n in range(8))  # k0-7, 64 bits each (MAX_KL)
RFLAGS_LOCATION = Location("rflags")
SEGMENT_BASES = {"fs_base": Location("fs_base"), "gs_base": Location("gs_base")}  # the thread pointers
PALETTE_LOCATION, START_ROW_LOCATION = Location("palette"), Location("start_row")
COLSB_LOCATIONS = tuple(Location(f"tmm{t}", field="colsb") for t in range(MAX_TILES))
ROWS_LOCATIONS = tuple(Location(f"tmm{t}", field="rows") for t in range(MAX_TILES))
TILE_ROW_LOCATIONS = tuple(tuple(Location(f"tmm{t}", r) for r in range(MAX_ROWS)) for t in range(MAX_TILES))


_COLSB_FIELDS = struct.Struct(f"<{MAX_TILES}H")  # colsb[0..7]: consecutive 16-bit little-endian fields


@dataclass
class TileConfig:
    """The TILECFG register (palette 1 layout, 64 bytes).

    byte 0: palette; byte 1: start_row; bytes 16-31: colsb[0..7] as 16-bit
    little-endian values; bytes 48-55: rows[0..7].  Everything else is reserved
    and must be zero.  Palette 0 is the INIT state: tiles not configured.
    """

    palette: int = 0
    start_row: int = 0
    colsb: list[int] = field(default_factory=lambda: [0] * MAX_TILES)
    rows: list[int] = field(default_factory=lambda: [0] * MAX_TILES)

    @property
    def configured(self) -> bool:
        return self.palette != 0

    def to_bytes(self) -> bytes:
        if not self.configured:
            return bytes(TILECFG_BYTES)  # STTILECFG of the INIT state stores 64 zero bytes
        return tilecfg_image(self.palette, self.start_row, self.colsb, self.rows)

    @classmethod
    def from_bytes(cls, image: bytes) -> "TileConfig":
        """Read the fields; the caller has already checked the reserved bytes."""
        return cls(
            palette=image[TILECFG_PALETTE],
            start_row=image[TILECFG_START_ROW],
            colsb=list(_COLSB_FIELDS.unpack_from(image, colsb_bytes(0).start)),
            rows=list(image[rows_byte(0):rows_byte(MAX_TILES)]),
        )

    def copy(self) -> "TileConfig":
        return TileConfig(self.palette, self.start_row, list(self.colsb), list(self.rows))


@dataclass(frozen=True)
class ReleasedTiles:
    """The tiles as a release found them: the address of the releasing instruction, the configuration
    and all tile data (8 x 16 x 64 bytes) it discarded."""

    at: int
    tilecfg: TileConfig
    tiles: np.ndarray


class X86AmxState:
    def __init__(self, journal: Journal | None = None, model=None):
        self.journal = journal if journal is not None else Journal()
        self.model = model  # the CpuModel whose features and limits apply
        self.gpr = [0] * 16
        self.pc = 0  # RIP (``rip``): a plain attribute, since the machine's run loop sets it after every instruction
        self.rflags = RFLAGS_RESET
        # zmm0-31 as 512-bit numbers; xmm/ymm are their low bits (registers.VECTOR_REGISTERS)
        self.vectors = [0] * VECTOR_REGISTER_COUNT
        self.opmasks = [0] * 8  # AVX-512's k0-7 (not observed: a trace compares them through memory)
        self.tilecfg = TileConfig()
        self._tiles = np.zeros((MAX_TILES, MAX_ROWS, BYTES_PER_ROW), dtype=np.uint8)
        self._tile_views = list(self._tiles)  # made once: creating a numpy view costs as much as a small copy
        # Additions into tiles not yet made: tile -> its waiting products (a numerics.products.WaitingProducts).
        # See accumulate; every read of tile data settles them first.
        self._deferred: dict[int, object] = {}
        # Shape checks that passed under the current TILECFG, so a kernel's loop does not
        # repeat them on every instruction: they depend only on the configuration (which
        # LDTILECFG and TILERELEASE replace as a whole, clearing this) and the CPU model.
        self.checks_passed: dict[tuple, tuple[int, ...]] = {}
        # What the last release of the tiles discarded, kept for the views only: not architectural (no
        # backend observes it, no trace holds it), so that after a kernel's closing TILERELEASE `run`
        # can still show the configuration the kernel ran with and what its tiles held.
        self.released: ReleasedTiles | None = None
        # The thread pointers of FS- and GS-relative addresses (``mov rax, QWORD PTR fs:0x28``): the bases
        # arch_prctl(ARCH_SET_FS) sets; a trace's init may give them as registers named fs_base and gs_base.
        self.fs_base = 0
        self.gs_base = 0
        # CALLs not yet returned from (not architectural: the return addresses are on the simulated stack).
        # A RET with none pending returns from the function isasim was asked to run: the run ends.
        self.call_depth = 0

    # ---- the core's State protocol -------------------------------------------
    @property
    def rip(self) -> int:
        return self.pc

    @rip.setter
    def rip(self, value: int) -> None:
        self.pc = value

    def register_names(self) -> list[str]:
        # zmm0-31 are not here: a trace's registers are 64-bit numbers; they are arrays (observed_vectors)
        return list(GPR64) + ["rip", "rflags"]

    def observed_vectors(self) -> dict[str, bytes]:
        """Each zmm register that is not zero, as its 64 bytes (little-endian): a program that uses no vector
        register observes (and traces) exactly what it did before vector registers existed."""
        return {f"zmm{n}": v.to_bytes(64, "little") for n, v in enumerate(self.vectors) if v}

    def read_register(self, name: str) -> int:
        name = name.lower()
        if name == "rip":
            return self.rip
        if name == "rflags":
            return self.rflags
        if name in SEGMENT_BASES:
            return getattr(self, name)
        vector = vector_register(name)
        if vector is not None:
            return self.vectors[vector.number] % (1 << vector.bits)
        if name in OPMASK_NAMES:
            return self.opmasks[OPMASK_NAMES.index(name)]
        view = GPR_VIEWS.get(name)
        if view is None:
            raise IsasimError(f"unknown register '{name}'")
        return self.read_gpr(view)

    def write_register(self, name: str, value: int) -> None:
        name = name.lower()
        if name == "rip":
            self.rip = value % (1 << 64)
            return
        if name == "rflags":
            self.set_rflags(value)
            return
        if name in SEGMENT_BASES:
            self.set_segment_base(name, value)
            return
        vector = vector_register(name)
        if vector is not None:
            # seeding a register by name: the bits of the view, the rest zero (as a VEX write leaves them)
            self.write_vector(vector.number, value % (1 << vector.bits))
            return
        if name in OPMASK_NAMES:
            self.write_opmask(OPMASK_NAMES.index(name), value)
            return
        view = GPR_VIEWS.get(name)
        if view is None:
            raise IsasimError(f"unknown register '{name}'")
        self.write_gpr(view, value)

    def read_gpr(self, view: GprView) -> int:
        return (self.gpr[view.number] & view.mask) >> view.shift

    def write_gpr(self, view: GprView, value: int) -> None:
        """Write a GPR view: 32-bit writes zero-extend, 8- and 16-bit writes merge."""
        value %= 1 << view.bits
        old = self.gpr[view.number]
        if view.bits == 32:
            new = value  # 32-bit writes zero-extend to 64 bits
        else:
            new = (old & ~view.mask) | (value << view.shift)
        self.gpr[view.number] = new
        self.journal.record("reg", GPR_LOCATIONS[view.number], old, new)

    def read_vector(self, number: int) -> int:
        """zmm``number``'s 512 bits."""
        return self.vectors[number]

    def write_vector(self, number: int, value: int) -> None:
        """zmm``number`` := value (512 bits); the caller has merged or zeroed the upper bits."""
        old = self.vectors[number]
        self.vectors[number] = value
        self.journal.record("reg", VECTOR_LOCATIONS[number], old, value)

    def read_opmask(self, number: int) -> int:
        """k``number``'s 64 bits."""
        return self.opmasks[number]

    def write_opmask(self, number: int, value: int) -> None:
        """k``number`` := value (64 bits; the caller has zero-extended a narrower result)."""
        value %= 1 << 64
        self.journal.record("reg", OPMASK_LOCATIONS[number], self.opmasks[number], value)
        self.opmasks[number] = value

    def set_rflags(self, value: int) -> None:
        value = (value | 0x2) % (1 << 64)
        self.journal.record("flags", RFLAGS_LOCATION, self.rflags, value)
        self.rflags = value

    def set_segment_base(self, name: str, value: int) -> None:
        """fs_base or gs_base := value (journalled under its name)."""
        value %= 1 << 64
        self.journal.record("reg", SEGMENT_BASES[name], getattr(self, name), value)
        setattr(self, name, value)

    def flag(self, bit: int) -> bool:
        return bool(self.rflags & bit)

    # ---- TILECFG --------------------------------------------------------------
    def set_tilecfg(self, config: TileConfig) -> None:
        old = self.tilecfg
        if self.journal.enabled:
            self.journal.record("tilecfg", PALETTE_LOCATION, old.palette, config.palette)
            self.journal.record("tilecfg", START_ROW_LOCATION, old.start_row, config.start_row)
            for t in range(MAX_TILES):
                self.journal.record("tilecfg", COLSB_LOCATIONS[t], old.colsb[t], config.colsb[t])
                self.journal.record("tilecfg", ROWS_LOCATIONS[t], old.rows[t], config.rows[t])
        self.tilecfg = config
        self.checks_passed = {}

    def release_tiles(self) -> None:
        """Return the tiles to the INIT state (TILECFG all zero, all tile data zero), as TILERELEASE and
        LDTILECFG of palette 0 do, keeping what they discarded in ``released`` for the views."""
        if self.tilecfg.configured:
            self.released = ReleasedTiles(self.pc, self.tilecfg.copy(), self.settled_tiles().copy())
        self.set_tilecfg(TileConfig())
        self.zero_all_tiles()

    def set_start_row(self, value: int) -> None:
        self.journal.record("tilecfg", START_ROW_LOCATION, self.tilecfg.start_row, value)
        self.tilecfg.start_row = value

    # ---- tile data -------------------------------------------------------------
    def settled_tiles(self) -> np.ndarray:
        """tmm0-7 as one 8 x 16 x 64 uint8 array, XTILEDATA's layout, after making every
        deferred TMUL addition (which records its writes, so calling this can change state)."""
        while self._deferred:  # (one settle may make several tiles' products)
            self._settle(next(iter(self._deferred)))
        return self._tiles

    def replace_tiles(self, value: np.ndarray) -> None:
        """All tile data := ``value`` (8 x 16 x 64 bytes), not journalled; deferred products are dropped."""
        self._deferred.clear()
        self._tiles = np.array(value, dtype=np.uint8).reshape(MAX_TILES, MAX_ROWS, BYTES_PER_ROW)
        self._tile_views = list(self._tiles)

    def tile(self, t: int) -> np.ndarray:
        """Tile t's 16 x 64 bytes (a view), with its deferred additions made."""
        if t in self._deferred:
            self._settle(t)
        return self._tile_views[t]

    def write_tile(self, t: int, data: np.ndarray) -> None:
        """Replace all 16 x 64 bytes of tile ``t`` (``data``: a 16 x 64 uint8 array); record each row that changed."""
        old = self.tile(t)
        if self.journal.enabled:
            changed = np.flatnonzero((old != data).any(axis=1))
            for r in changed:
                self.journal.record("tile", TILE_ROW_LOCATIONS[t][r], old[r].tobytes(), data[r].tobytes())
        old[...] = data

    def write_rows_and_zero(self, t: int, first: int, rows: np.ndarray) -> None:
        """The SDM's write_row_and_zero for rows first, first+1, ... of tile t (each row of ``rows``,
        zeros beyond its bytes), then zero_upper_rows: rows after them := 0.  Rows before
        ``first`` keep their bytes."""
        count, size = rows.shape
        if self.journal.enabled or first:
            image = self.tile(t).copy()
            image[first:] = 0
            image[first : first + count, :size] = rows
            self.write_tile(t, image)
            return
        tile = self.tile(t)  # nothing to record: write in place
        tile[:count, :size] = rows
        if size < BYTES_PER_ROW:
            tile[:count, size:] = 0
        if count < MAX_ROWS:
            tile[count:] = 0

    # A TMUL instruction adds its products into C's dwords: every output element is
    # C := C + P for its own P, computed from A and B alone.  While nothing is being
    # recorded (a plain run), a kernel's K loop therefore need not update C as each
    # instruction comes: the instructions' products wait in a batch (with copies of their
    # A and B), and the batch computes all of them at once and applies them to C, in
    # order, when the tile is next read or the batch is full.  The result is
    # bit-identical; what is saved is numpy's per-call cost, which dominates 16 x 16
    # tile arithmetic.
    def accumulate(self, t: int, rows: int, dwords: int, batch_type: type, *operands) -> None:
        """tile t's dwords [:rows, :dwords] := C + P, C their old value and P the product of ``operands``;
        every byte beyond them := 0.

        ``batch_type(rows, dwords)`` collects products: ``add(*operands)``, ``full``, and
        ``apply(C)``, which returns C (a (rows, dwords) uint32 array) with every product
        it holds added, in the order they came.  While the journal is on (stepping) the
        addition is made now and recorded; otherwise it may wait until the tile is next read."""
        waiting = self._deferred.get(t)
        if waiting is not None and (type(waiting) is not batch_type or waiting.shape != (rows, dwords)):
            self._settle(t)
            waiting = None
        if waiting is None:
            waiting = self._deferred[t] = batch_type(rows, dwords)
        waiting.add(*operands)
        if self.journal.enabled or waiting.full:
            self._settle(t)

    def _settle(self, t: int) -> None:
        batch = self._deferred.pop(t)
        rows, dwords = batch.shape
        if self.journal.enabled:  # each tile's rows are recorded as they change
            image = self._tile_views[t].copy()
            accumulators = image.view(np.uint32)[:rows, :dwords]
            accumulators[...] = batch.apply(accumulators)
            image[rows:] = 0
            image[:rows, 4 * dwords:] = 0
            self.write_tile(t, image)
            return
        # Nothing recorded: the other tiles' products of this type and shape are made now too, in one go
        # (a kernel's accumulators are stored one after the other; products wait on copies of their
        # sources, so making them early changes nothing), and the tiles are written in place.
        group = [t] + [u for u, other in self._deferred.items() if type(other) is type(batch) and other.shape == batch.shape]
        batches = [batch] + [self._deferred.pop(u) for u in group[1:]]
        accumulators = [self._tile_views[u].view(np.uint32)[:rows, :dwords] for u in group]
        for u, C, result in zip(group, accumulators, type(batch).apply_all(batches, accumulators)):
            C[...] = result
            tile = self._tile_views[u]
            tile[rows:] = 0
            tile[:rows, 4 * dwords:] = 0

    def zero_all_tiles(self) -> None:
        if not self.journal.enabled:  # nothing to record: products still waiting would only be zeroed
            self._deferred.clear()
            self._tiles.fill(0)
            return
        for t in np.flatnonzero(self.settled_tiles().reshape(MAX_TILES, -1).any(axis=1)):  # the tiles with data
            self.write_tile(int(t), np.zeros((MAX_ROWS, BYTES_PER_ROW), dtype=np.uint8))

    def tile_shape(self, t: int) -> tuple[int, int]:
        """(rows, colsb) of tile t as configured."""
        return self.tilecfg.rows[t], self.tilecfg.colsb[t]

    def tile_view(self, t: int, element: str = "int32", *, whole: bool = False) -> np.ndarray:
        """Tile t as a rows x columns array of ``element`` (int8, uint8, int16, uint16,
        int32, uint32, bf16, fp16, fp32).  Floating types come back as their bit
        patterns (uint16/uint32); ``isasim.core.render`` turns them into numbers.
        ``whole`` shows all 16 x 64 bytes instead of the configured shape."""
        dtype, _ = ELEMENT_TYPES[element]
        rows, colsb = (MAX_ROWS, BYTES_PER_ROW) if whole else self.tile_shape(t)
        raw = np.ascontiguousarray(self.settled_tiles()[t, :rows, :colsb])
        usable = colsb - colsb % np.dtype(dtype).itemsize
        return raw[:, :usable].copy().view(dtype)

    def tile_array(self, t: int, element: str = "int32", *, whole: bool = False) -> np.ndarray:
        """Tile t as numbers of ``element``: like tile_view, but floating types come back as real
        numpy floats (bf16 as ml_dtypes.bfloat16, fp16 as float16, fp32 as float32): the same bits,
        reinterpreted, never converted."""
        bits = self.tile_view(t, element, whole=whole)
        return bits.view(ELEMENT_TYPES[element].value_type)


# The element types a tile can be viewed as: name -> (numpy storage dtype, kind), chosen
# from the core's table (no 64-bit elements: no AMX instruction has them).
ELEMENT_TYPES = {name: numerics.ELEMENT_TYPES[name]
                 for name in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "bf16", "fp16", "fp32")}
