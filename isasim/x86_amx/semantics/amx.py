"""The semantics of the Intel AMX instructions, each reading like the SDM's Operation section; its
docstring is the text ``explain`` prints.  The forms that run them are declared in forms/amx.py.

Where the SDM is silent, the semantics follow what was measured on Emerald Rapids
silicon (rows beyond the configured shape are zeroed; start_row is reset by every
tile instruction; a #PF leaves start_row at the faulting row; the TDPBF16PS lane
structure with its DAZ/FTZ/NaN rules).

The TMUL semantics hand their products to ``X86AmxState.accumulate``: a plain run
lets a kernel's products wait and computes them together (numerics/products.py),
stepping applies each at once; the two give the same bits.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ...core import numerics
from ...core.faults import Fault
from ..context import X86Context
from ..faults import GP, UD
from ..numerics.products import DwordDotProducts, PairDotProducts
from ..operands import GPR_VIEWS, Mem
from ..state import BYTES_PER_ROW, MAX_ROWS, MAX_TILES, TILECFG_RESERVED, TileConfig


# ---------------------------------------------------------------------------
# Shared pseudocode helpers (the SDM's names)
# ---------------------------------------------------------------------------


def check_tiles_configured(cpu: X86Context, mnemonic: str) -> None:
    if not cpu.state.tilecfg.configured:
        raise UD(f"{mnemonic}: tiles are not configured (TILECFG palette is 0; run LDTILECFG first)")


def check_tile_valid(cpu: X86Context, t: int, mnemonic: str) -> None:
    """A tile is usable only if its rows and colsb are both non-zero."""
    rows, colsb = cpu.state.tile_shape(t)
    if t >= cpu.model.max_names or rows == 0 or colsb == 0:
        raise UD(f"{mnemonic}: tmm{t} is not configured (rows={rows}, colsb={colsb})")


def check_colsb_dword_multiple(cpu: X86Context, t: int, mnemonic: str) -> None:
    colsb = cpu.state.tilecfg.colsb[t]
    if colsb % 4:
        raise UD(f"{mnemonic}: tmm{t}.colsb={colsb} is not a multiple of 4")


def check_start_row(cpu: X86Context, t: int, mnemonic: str) -> None:
    start, rows = cpu.state.tilecfg.start_row, cpu.state.tilecfg.rows[t]
    if start >= rows:
        raise UD(f"{mnemonic}: start_row={start} is not below tmm{t}.rows={rows}")


def check_load_store(cpu: X86Context, t: int, mnemonic: str) -> None:
    """The SDM's exception class AMX-E3 (TILELOADD, TILELOADDT1, TILESTORED)."""
    if ("E3", t) not in cpu.state.checks_passed:  # else the configuration's part passed before
        check_tiles_configured(cpu, mnemonic)
        check_tile_valid(cpu, t, mnemonic)
        check_colsb_dword_multiple(cpu, t, mnemonic)
        cpu.state.checks_passed["E3", t] = ()
    check_start_row(cpu, t, mnemonic)


def zero_tilecfg_start(cpu: X86Context) -> None:
    if cpu.state.tilecfg.start_row:  # (almost always 0 already)
        cpu.state.set_start_row(0)


def signed64(value: int) -> int:
    """A 64-bit register value read as a signed stride (the index register is signed)."""
    value %= 1 << 64
    return value - (1 << 64) if value >> 63 else value


class BoundSib:
    """A sibmem operand as translation binds it: the views of its base and index registers found once,
    so that row_addresses reads the GPRs straight from the state (the same values as by name)."""

    __slots__ = ("mem", "base", "index", "scale", "disp")

    def __init__(self, mem: Mem, base, index):
        self.mem, self.base, self.index, self.scale, self.disp = mem, base, index, mem.scale, mem.disp

    @classmethod
    def of(cls, mem):
        """``mem`` bound, or ``mem`` itself when it names a register that is no GPR view (then by name)."""
        if not isinstance(mem, Mem) or (mem.base and mem.base not in GPR_VIEWS):
            return mem
        has_index = mem.index and mem.index != "riz"
        if has_index and mem.index not in GPR_VIEWS:
            return mem
        return cls(mem, GPR_VIEWS[mem.base] if mem.base else None, GPR_VIEWS[mem.index] if has_index else None)


_ADDRESS_MASK = (1 << 64) - 1


def row_addresses(cpu: X86Context, mem: Mem | BoundSib):
    """TILELOADD/TILESTORED addressing: row r is at base + disp + r * (index << scale)."""
    if type(mem) is BoundSib:  # (X86Context.effective_address and read_gpr, with the views found)
        gpr = cpu.state.gpr
        address, stride = mem.disp, 0
        if mem.base is not None:
            view = mem.base
            address += (gpr[view.number] & view.mask) >> view.shift
        if mem.index is not None:
            view = mem.index
            stride = signed64(((gpr[view.number] & view.mask) >> view.shift) * mem.scale)
        return address & _ADDRESS_MASK, stride
    stride = 0
    if mem.index and mem.index != "riz":
        stride = signed64(cpu.state.read_gpr(GPR_VIEWS[mem.index]) * mem.scale)  # the index register is signed
    return cpu.effective_address(mem, with_index=False), stride


# ---------------------------------------------------------------------------
# AMX-TILE: configuration
# ---------------------------------------------------------------------------


def ldtilecfg(cpu: X86Context, m512: Mem) -> None:
    """Load the tile configuration from 64 bytes of memory.

    Palette 0 returns the tiles to the INIT state (as TILERELEASE).  Otherwise the
    configuration is checked and any violation raises #GP with no state changed;
    a valid configuration is loaded and ALL tile data is zeroed.  start_row is
    loaded as given.  colsb need not be a multiple of 4 here: that is checked when
    a tile is used.

        mem := read 64 bytes at m512
        if mem.palette == 0: TILES_CONFIGURED := 0; zero all tile data
        else:
            #GP if palette > max_palette, reserved bytes 2-15 != 0,
                bytes 32-47 (colsb of tiles >= max_names) != 0, bytes 56-63 != 0,
                colsb[t] > bytes_per_row, rows[t] > max_rows,
                or exactly one of rows[t], colsb[t] is 0
            TILECFG := mem; zero all tile data; TILES_CONFIGURED := 1
    """
    image = cpu.read_memory(cpu.effective_address(m512), 64)
    config = checked_tilecfg(image, cpu.model)
    if not config.configured:
        cpu.state.release_tiles()
        return
    cpu.state.set_tilecfg(config)
    cpu.state.zero_all_tiles()


_RESERVED_BITS = sum(0xFF << (8 * offset) for offset in TILECFG_RESERVED)  # of the image read as one number


def checked_tilecfg(image: bytes, model) -> TileConfig:
    """The configuration LDTILECFG loads from ``image``, or the #GP it raises (also used to seed a
    trace's ``init.arrays.tilecfg``, which must be a configuration LDTILECFG would accept)."""
    palette = image[0]
    if palette == 0:
        return TileConfig()
    if palette > model.max_palette:
        raise GP(f"ldtilecfg: palette {palette} is not supported (max_palette is {model.max_palette})")
    for offset in TILECFG_RESERVED if int.from_bytes(image, "little") & _RESERVED_BITS else ():
        if image[offset]:
            raise GP(f"ldtilecfg: reserved byte {offset} of the configuration is {image[offset]:#04x}, not 0")
    config = TileConfig.from_bytes(image)
    for t in range(MAX_TILES):
        rows, colsb = config.rows[t], config.colsb[t]
        if colsb > model.bytes_per_row:
            raise GP(f"ldtilecfg: tmm{t}.colsb={colsb} exceeds bytes_per_row={model.bytes_per_row}")
        if rows > model.max_rows:
            raise GP(f"ldtilecfg: tmm{t}.rows={rows} exceeds max_rows={model.max_rows}")
        if (rows == 0) != (colsb == 0):
            raise GP(f"ldtilecfg: tmm{t} has rows={rows} but colsb={colsb}; both must be 0 or both non-zero")
    return config


def sttilecfg(cpu: X86Context, m512: Mem) -> None:
    """Store the tile configuration to 64 bytes of memory.

    Stores palette, start_row, colsb[0..7] and rows[0..7] with every reserved byte
    zero; when the tiles are not configured it stores 64 zero bytes.
    """
    cpu.write_memory(cpu.effective_address(m512), cpu.state.tilecfg.to_bytes())


def tilerelease(cpu: X86Context) -> None:
    """Return the tiles to the INIT state: TILECFG becomes all zero and all tile data is zeroed.

    Allowed when the tiles are already released.
    """
    cpu.state.release_tiles()


# ---------------------------------------------------------------------------
# AMX-TILE: data movement
# ---------------------------------------------------------------------------


def tilezero(cpu: X86Context, tdest: int) -> None:
    """Zero all 16 rows x 64 bytes of tdest, whatever its configured shape, and reset start_row.

        #UD if tiles are not configured or tdest is not configured (rows or colsb 0)
        zero all max_rows x bytes_per_row bytes of tdest
        zero_tilecfg_start()

    TILEZERO does not check colsb % 4 nor start_row < rows (both measured on silicon).
    """
    check_tiles_configured(cpu, "tilezero")
    check_tile_valid(cpu, tdest, "tilezero")
    cpu.state.checks_passed["TILEZERO", tdest] = ()  # (for the plain-run path: they depend on TILECFG alone)
    cpu.state.write_tile(tdest, np.zeros((MAX_ROWS, BYTES_PER_ROW), dtype=np.uint8))
    zero_tilecfg_start(cpu)


_ZERO_TILE = bytes(MAX_ROWS * BYTES_PER_ROW)


def tile_load(cpu: X86Context, tdest: int, sibmem: Mem, mnemonic: str) -> None:
    state = cpu.state
    if state.tilecfg.start_row or ("E3", tdest) not in state.checks_passed:
        check_load_store(cpu, tdest, mnemonic)  # (else it passed before, and start_row 0 < rows cannot fail)
    rows, colsb = state.tile_shape(tdest)
    base, stride = row_addresses(cpu, sibmem)
    start = state.tilecfg.start_row
    if stride == colsb == BYTES_PER_ROW and not start and not state.journal.enabled:
        # Whole 64-byte rows back to back (a kernel's packed tiles), nothing recorded: the tile's first
        # rows x 64 bytes are memory's, the rest zero -- one byte copy instead of a strided numpy view
        # and a copy of it (a tile load's largest cost).  Otherwise the general path below.
        size = rows * BYTES_PER_ROW
        data = cpu.memory.span(base, size)
        if data is not None:
            tile = memoryview(state.tile(tdest)).cast("B")  # (settles any products waiting on tdest)
            tile[:size] = data
            if size < len(_ZERO_TILE):
                tile[size:] = _ZERO_TILE[size:]
            return  # start_row is 0 already
    whole = cpu.memory.read_rows((base + start * stride) % (1 << 64), stride, rows - start, colsb)
    if whole is not None:  # every row is mapped: nothing can fault, so load them all at once
        state.write_rows_and_zero(tdest, start, whole)
        zero_tilecfg_start(cpu)
        return
    image = cpu.state.tile(tdest).copy()
    image[start:] = 0  # zero_upper_rows(tdest, start): rows below start_row are kept
    try:
        while start < rows:
            image[start, :colsb] = np.frombuffer(cpu.read_memory(base + start * stride, colsb), dtype=np.uint8)
            start += 1
    except Fault:
        # A #PF is restartable: the rows already loaded stay, and start_row names
        # the row that faulted so the instruction resumes there.
        cpu.state.write_tile(tdest, image)
        cpu.state.set_start_row(start)
        raise
    cpu.state.write_tile(tdest, image)
    zero_tilecfg_start(cpu)


def tileloadd(cpu: X86Context, tdest: int, sibmem: Mem) -> None:
    """Load tdest row by row from memory: row r comes from base + disp + r * stride, stride = index << scale.

        #UD if tiles or tdest are not configured, tdest.colsb % 4 != 0, or start_row >= tdest.rows
        start := start_row
        zero_upper_rows(tdest, start)           # rows below start_row keep their data
        while start < tdest.rows:
            write_row_and_zero(tdest, start, read_memory(base + start*stride, tdest.colsb), tdest.colsb)
            start := start + 1                  # on #PF: start_row := start (the faulting row)
        zero_tilecfg_start()

    The memory operand must use a SIB byte; with no index register (riz) the
    stride is 0 and every row is read from the same address.  Bytes beyond colsb
    and rows beyond tdest.rows are zeroed.
    """
    tile_load(cpu, tdest, sibmem, "tileloadd")


def tileloaddt1(cpu: X86Context, tdest: int, sibmem: Mem) -> None:
    """TILELOADD with a hint that the data is not reused soon (T1 locality); the result is identical.

    Architecturally the same as TILELOADD in every respect, faults included
    (measured: loads exactly the same data on silicon).
    """
    tile_load(cpu, tdest, sibmem, "tileloaddt1")


def tilestored(cpu: X86Context, sibmem: Mem, tsrc: int) -> None:
    """Store the configured rows of tsrc to memory: colsb bytes of row r go to base + disp + r * stride.

        #UD if tiles or tsrc are not configured, tsrc.colsb % 4 != 0, or start_row >= tsrc.rows
        start := start_row
        while start < tsrc.rows:
            write_memory(base + start*stride, tsrc.row[start], tsrc.colsb)
            start := start + 1                  # on #PF: start_row := start (the faulting row)
        zero_tilecfg_start()

    Exactly colsb bytes are written per row; nothing else in memory is touched.
    """
    check_load_store(cpu, tsrc, "tilestored")
    rows, colsb = cpu.state.tile_shape(tsrc)
    base, stride = row_addresses(cpu, sibmem)
    start = cpu.state.tilecfg.start_row
    first = (base + start * stride) % (1 << 64)
    if stride == colsb == BYTES_PER_ROW and not start:  # whole rows back to back: one byte copy (as tile_load)
        target = cpu.memory.span(first, rows * BYTES_PER_ROW, write=True)
        if target is not None:
            target[:] = memoryview(cpu.state.tile(tsrc)).cast("B")[: rows * BYTES_PER_ROW]
            return  # start_row is 0 already
    if start < rows and cpu.memory.write_rows(first, stride, cpu.state.tile(tsrc)[start:rows, :colsb]):
        start = rows  # stored in one go: every row was mapped and writable
    try:
        while start < rows:
            cpu.write_memory(base + start * stride, cpu.state.tile(tsrc)[start, :colsb].tobytes())
            start += 1
    except Fault:
        cpu.state.set_start_row(start)
        raise
    zero_tilecfg_start(cpu)


# ---------------------------------------------------------------------------
# TMUL: dot products
# ---------------------------------------------------------------------------


def check_tmul_shapes(cpu: X86Context, mnemonic: str, tsrcdest: int, tsrc1: int, tsrc2: int) -> tuple[int, int, int]:
    """The checks every TMUL instruction makes; returns (M, K, N) in dwords.

        #UD if tiles are not configured, or any two of the three tiles are the same register,
            or any of them is not configured, or any colsb is not a multiple of 4,
            or tsrcdest.colsb != tsrc2.colsb, tsrcdest.rows != tsrc1.rows,
            tsrc1.colsb / 4 != tsrc2.rows, K > tmul_maxk or N > tmul_maxn
    """
    passed = cpu.state.checks_passed.get(("TMUL", tsrcdest, tsrc1, tsrc2))
    if passed is not None:  # the same three tiles passed under this configuration before
        return passed
    check_tiles_configured(cpu, mnemonic)
    if len({tsrcdest, tsrc1, tsrc2}) != 3:
        raise UD(f"{mnemonic}: the three tile registers must differ (tmm{tsrcdest}, tmm{tsrc1}, tmm{tsrc2})")
    for t in (tsrcdest, tsrc1, tsrc2):
        check_tile_valid(cpu, t, mnemonic)
    for t in (tsrcdest, tsrc1, tsrc2):
        check_colsb_dword_multiple(cpu, t, mnemonic)
    cfg = cpu.state.tilecfg
    if cfg.colsb[tsrcdest] != cfg.colsb[tsrc2]:
        raise UD(f"{mnemonic}: C=tmm{tsrcdest}.colsb={cfg.colsb[tsrcdest]} differs from B=tmm{tsrc2}.colsb={cfg.colsb[tsrc2]}")
    if cfg.rows[tsrcdest] != cfg.rows[tsrc1]:
        raise UD(f"{mnemonic}: C=tmm{tsrcdest}.rows={cfg.rows[tsrcdest]} differs from A=tmm{tsrc1}.rows={cfg.rows[tsrc1]}")
    if cfg.colsb[tsrc1] // 4 != cfg.rows[tsrc2]:
        raise UD(
            f"{mnemonic}: A=tmm{tsrc1}.colsb/4={cfg.colsb[tsrc1] // 4} differs from B=tmm{tsrc2}.rows={cfg.rows[tsrc2]}"
        )
    M, K, N = cfg.rows[tsrcdest], cfg.colsb[tsrc1] // 4, cfg.colsb[tsrcdest] // 4
    if K > cpu.model.tmul_maxk:
        raise UD(f"{mnemonic}: K={K} exceeds tmul_maxk={cpu.model.tmul_maxk}")
    if N * 4 > cpu.model.tmul_maxn:
        raise UD(f"{mnemonic}: N={N} dwords exceeds tmul_maxn={cpu.model.tmul_maxn} bytes")
    cpu.state.checks_passed["TMUL", tsrcdest, tsrc1, tsrc2] = M, K, N
    return M, K, N


def integer_dot_product(cpu: X86Context, mnemonic: str, tsrcdest: int, tsrc1: int, tsrc2: int,
                        a_signed: bool, b_signed: bool) -> None:
    """DPBD: C[m][n] += sum over k and i<4 of ext(A[m].byte[4k+i]) * ext(B[k].byte[4n+i]), mod 2^32."""
    M, K, N = check_tmul_shapes(cpu, mnemonic, tsrcdest, tsrc1, tsrc2)
    # The hardware's 32-bit accumulator wraps, and with wrap-around the order of the
    # additions cannot be observed: one exact sum, then one addition modulo 2^32
    # (unsigned 32-bit arithmetic), is the same thing.  Rows beyond M and bytes beyond
    # 4N of C are zeroed.
    cpu.state.accumulate(tsrcdest, M, N, DwordDotProducts,
                         cpu.state.tile(tsrc1), cpu.state.tile(tsrc2), K, a_signed, b_signed)
    zero_tilecfg_start(cpu)


def tdpbssd(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of signed bytes of tmm2 (A) with signed bytes of tmm3 (B), four per dword, accumulated into the int32 elements of tmm1 (C) with wrap-around.

        for m < C.rows, n < C.colsb/4:
            for k < A.colsb/4:
                C[m].dword[n] += sext(A[m].byte[4k+i]) * sext(B[k].byte[4n+i])  for i = 0..3
        (32-bit two's-complement wrap-around, never saturation)
        zero bytes of C beyond colsb and rows beyond C.rows; zero_tilecfg_start()
    """
    integer_dot_product(cpu, "tdpbssd", tsrcdest, tsrc1, tsrc2, a_signed=True, b_signed=True)


def tdpbsud(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of signed bytes of tmm2 (A) with unsigned bytes of tmm3 (B), accumulated into the int32 elements of tmm1 (C) with wrap-around.

        C[m].dword[n] += sext(A[m].byte[4k+i]) * zext(B[k].byte[4n+i])   (mod 2^32)
    """
    integer_dot_product(cpu, "tdpbsud", tsrcdest, tsrc1, tsrc2, a_signed=True, b_signed=False)


def tdpbusd(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of unsigned bytes of tmm2 (A) with signed bytes of tmm3 (B), accumulated into the int32 elements of tmm1 (C) with wrap-around.

        C[m].dword[n] += zext(A[m].byte[4k+i]) * sext(B[k].byte[4n+i])   (mod 2^32)
    """
    integer_dot_product(cpu, "tdpbusd", tsrcdest, tsrc1, tsrc2, a_signed=False, b_signed=True)


def tdpbuud(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of unsigned bytes of tmm2 (A) with unsigned bytes of tmm3 (B), accumulated into the int32 elements of tmm1 (C) with wrap-around.

        C[m].dword[n] += zext(A[m].byte[4k+i]) * zext(B[k].byte[4n+i])   (mod 2^32)
    """
    integer_dot_product(cpu, "tdpbuud", tsrcdest, tsrc1, tsrc2, a_signed=False, b_signed=False)


def float_pair_dot_product(cpu: X86Context, mnemonic: str, tsrcdest: int, tsrc1: int, tsrc2: int,
                           widen: Callable[[np.ndarray], np.ndarray]) -> None:
    """The TDPBF16PS / TDPFP16PS lane structure (PairDotProducts), for all outputs at once.

        for m < C.rows, n < C.colsb/4:
            E := +0.0; O := +0.0                      # two fp32 lanes, fresh per element
            for k < A.colsb/4 (in increasing k):
                E := FMA32(E, A[m].h[2k],   B[k].h[2n])     # even lane: bits 15:0 of each dword
                O := FMA32(O, A[m].h[2k+1], B[k].h[2n+1])   # odd lane:  bits 31:16
            C[m].fp32[n] := ADD32(C[m].fp32[n], ADD32(E, O))
        rows beyond C.rows and bytes beyond C.colsb are zeroed
    """
    M, K, N = check_tmul_shapes(cpu, mnemonic, tsrcdest, tsrc1, tsrc2)
    cpu.state.accumulate(tsrcdest, M, N, PairDotProducts, cpu.state.tile(tsrc1), cpu.state.tile(tsrc2), K, widen)
    zero_tilecfg_start(cpu)


def tdpbf16ps(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of bf16 pairs of tmm2 (A) and tmm3 (B), accumulated into the fp32 elements of tmm1 (C).

        for m < C.rows, n < C.colsb/4:
            E := +0.0; O := +0.0                      # two fp32 lanes, fresh for every element
            for k < A.colsb/4, in increasing k:
                E := FMA32(E, A[m].bf16[2k],   B[k].bf16[2n])      # even lane
                O := FMA32(O, A[m].bf16[2k+1], B[k].bf16[2n+1])    # odd lane
            C[m].fp32[n] := ADD32(C[m].fp32[n], ADD32(E, O))

    FMA32 computes acc + a*b exactly and rounds once (RNE); ADD32 rounds once (RNE).
    Inputs that are denormal are treated as zero (sign kept); results that are
    tiny after rounding become zero with the sign of the exact result.  NaN: in
    FMA32 a NaN a wins, then b, then the accumulator, quieted; in ADD32 the first
    operand wins (E over O, C over the sum); inf*0 and inf-inf give 0xFFC00000.
    MXCSR is neither read nor written.  This is the SDM pseudocode, and what
    Emerald Rapids silicon does (not the Intrinsics Guide's sequential
    accumulation into C).
    """
    float_pair_dot_product(cpu, "tdpbf16ps", tsrcdest, tsrc1, tsrc2, numerics.bf16_to_fp32)


def tdpfp16ps(cpu: X86Context, tsrcdest: int, tsrc1: int, tsrc2: int) -> None:
    """Dot product of fp16 pairs of tmm2 (A) and tmm3 (B), accumulated into the fp32 elements of tmm1 (C).

    The same lane structure and rounding rules as TDPBF16PS, with each fp16
    element widened exactly to fp32 first.  Granite Rapids only (AMX-FP16);
    on Sapphire and Emerald Rapids it is #UD.
    """
    float_pair_dot_product(cpu, "tdpfp16ps", tsrcdest, tsrc1, tsrc2, numerics.fp16_to_fp32)
