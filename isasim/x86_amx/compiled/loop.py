"""The compiled run loop: one numba function that dispatches on each instruction's form number (lowering.py)
and runs its body over the state's arrays, until the program ends, the step budget is spent, or an
instruction must be handed back to the Python semantics.

Every body checks what could fault, or what it does not model, before it writes anything (the contract of
isasim.core.compiled); where a check fails the loop stops with the index of that instruction, unexecuted,
and the status HANDBACK.  The arrays (see program.py for how they are made from the state):

    gpr      int64[16]      the GPRs' bits
    scalars  int64[3]       rflags, call depth, how many checks passed here (the loop counts them)
    cfg      int64[18]      TILECFG: palette, start_row, colsb[0..7], rows[0..7]
    limits   int64[3]       the CPU model's max_names, tmul_maxk, tmul_maxn (bytes)
    tiles    uint8[8,16,64] the tile data (the state's own array, written in place)
    regions  8 x uint8[:]   views onto memory regions' bytes; table int64[8, 3]: start, end, writable
    passed   int8[keys]     which TILECFG checks passed (state.checks_passed): 1 before this run, 2 in it
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import lowering as L
from .tmul import tmul_float, tmul_integer

ENDED, HANDBACK, BUDGET = 0, 1, 2  # (isasim.core.compiled's statuses)
CF, PF, AF, ZF, SF, OF = 1 << 0, 1 << 2, 1 << 4, 1 << 6, 1 << 7, 1 << 11
STATUS_FLAGS = CF | PF | AF | ZF | SF | OF
SIGN_BIT = np.int64(-9223372036854775807 - 1)
PARITY = np.array([0 if bin(byte).count("1") % 2 else PF for byte in range(256)], dtype=np.int64)

CFG_PALETTE, CFG_START_ROW, CFG_COLSB, CFG_ROWS = 0, 1, 2, 10
LIMIT_NAMES, LIMIT_MAXK, LIMIT_MAXN = 0, 1, 2


# ---- scalar helpers -----------------------------------------------------------------------------------------
@njit(cache=True)
def below(x, y):
    """x < y as unsigned 64-bit numbers."""
    return (x ^ SIGN_BIT) < (y ^ SIGN_BIT)


@njit(cache=True)
def result_flags(r, bits, parity):
    return ((SF if (r >> (bits - 1)) & 1 else 0) | (0 if r else ZF) | parity[r & 0xFF])


@njit(cache=True)
def add_flags(a, b, r, bits, mask, parity):
    carry = below(r, a) if bits == 64 else ((a + b) >> 32) & 1
    return ((CF if carry else 0) | (OF if (((a ^ r) & (b ^ r)) >> (bits - 1)) & 1 else 0)
            | (AF if (a ^ b ^ r) & 0x10 else 0) | result_flags(r, bits, parity))


@njit(cache=True)
def sub_flags(a, b, r, bits, mask, parity):
    return ((CF if below(a, b) else 0) | (OF if (((a ^ b) & (a ^ r)) >> (bits - 1)) & 1 else 0)
            | (AF if (a ^ b ^ r) & 0x10 else 0) | result_flags(r, bits, parity))


@njit(cache=True)
def condition(code, flags):
    """Jcc's condition ``code`` (scalar.CONDITIONS order: o no b ae e ne be a s ns p np l ge le g)."""
    kind = code >> 1
    sign_differs = ((flags & SF) != 0) != ((flags & OF) != 0)
    if kind == 0:
        holds = (flags & OF) != 0
    elif kind == 1:
        holds = (flags & CF) != 0
    elif kind == 2:
        holds = (flags & ZF) != 0
    elif kind == 3:
        holds = (flags & (CF | ZF)) != 0
    elif kind == 4:
        holds = (flags & SF) != 0
    elif kind == 5:
        holds = (flags & PF) != 0
    elif kind == 6:
        holds = sign_differs
    else:
        holds = (flags & ZF) != 0 or sign_differs
    return holds != ((code & 1) == 1)


@njit(cache=True)
def address_of(row, gpr):
    """base + index * scale + disp of the address in ops columns 2-7 (64-bit wrap-around)."""
    address = row[7]
    if row[2] >= 0:
        address += gpr[row[2]] & row[3]
    if row[4] >= 0:
        address += (gpr[row[4]] & row[5]) * row[6]
    return address


# ---- memory -------------------------------------------------------------------------------------------------
@njit(cache=True)
def region_of(table, regions_used, address, size, write):
    """The slot of the region holding all ``size`` bytes at ``address`` (and writable, for a write), or -1."""
    if address < 0:
        return -1  # (above 2^63: no slot holds such a region)
    for slot in range(regions_used):
        if table[slot, 0] <= address and address + size <= table[slot, 1]:
            if write and table[slot, 2] == 0:
                return -1
            return slot
    return -1


# ---- the tile bodies ------------------------------------------------------------------------------------------
@njit(cache=True)
def tile_valid(cfg, limits, t):
    return t < limits[LIMIT_NAMES] and cfg[CFG_ROWS + t] != 0 and cfg[CFG_COLSB + t] != 0


@njit(cache=True)
def e3_checks(cfg, limits, t):
    """AMX-E3 (TILELOADD, TILELOADDT1, TILESTORED) with start_row 0."""
    return cfg[CFG_PALETTE] != 0 and tile_valid(cfg, limits, t) and cfg[CFG_COLSB + t] % 4 == 0


@njit(cache=True)
def tmul_checks(cfg, limits, c, a, b):
    """check_tmul_shapes (the three tiles differ: lowering made sure)."""
    if cfg[CFG_PALETTE] == 0:
        return False
    if not (tile_valid(cfg, limits, c) and tile_valid(cfg, limits, a) and tile_valid(cfg, limits, b)):
        return False
    if cfg[CFG_COLSB + c] % 4 or cfg[CFG_COLSB + a] % 4 or cfg[CFG_COLSB + b] % 4:
        return False
    if cfg[CFG_COLSB + c] != cfg[CFG_COLSB + b] or cfg[CFG_ROWS + c] != cfg[CFG_ROWS + a]:
        return False
    if cfg[CFG_COLSB + a] // 4 != cfg[CFG_ROWS + b]:
        return False
    return cfg[CFG_COLSB + a] // 4 <= limits[LIMIT_MAXK] and cfg[CFG_COLSB + c] <= limits[LIMIT_MAXN]


@njit(cache=True)
def rows_region(table, regions_used, first, stride, rows, colsb, write):
    """The slot of the one region holding every row (colsb bytes at first + r * stride, r < rows), or -1: rows
    spread over several regions hand back too (rare; the Python semantics split them)."""
    span = (rows - 1) * stride
    low = first if stride >= 0 else first + span
    high = (first + span if stride >= 0 else first) + colsb
    if low < 0 or high < low:
        return -1  # (the rows wrap around the address space, or lie above 2^63)
    return region_of(table, regions_used, low, high - low, write)


@njit(cache=True)
def tile_load(tiles, t, rows, colsb, first, stride, regions, table, regions_used, plant):
    """TILELOADD of rows x colsb bytes at first + r * stride, if one region holds every row; else False.

    Every copy loop indexes a slice from 0 with the loop's own counter: an index numba cannot prove
    non-negative gets a wrap-around check per element, which keeps LLVM from vectorizing the copy (a 1 KiB
    load took 1.2 us that way, 60 ns this way)."""
    slot = rows_region(table, regions_used, first, stride, rows, colsb, False)
    if slot < 0:
        return False
    data = regions[slot]
    base = first - table[slot, 0]
    tile = tiles[t]
    flat = tile.ravel()  # (a view: the tile is C-contiguous)
    if stride == colsb == 64:  # whole rows back to back: one copy
        size = rows * 64
        source = data[base:base + size]
        for j in range(size):
            flat[j] = source[j]
    else:
        for r in range(rows):
            offset = base + r * stride
            source = data[offset:offset + colsb]
            row = tile[r]
            for j in range(colsb):
                row[j] = source[j]
            rest = row[colsb:]
            for j in range(64 - colsb):
                rest[j] = 0
    rest = flat[rows * 64:]
    for j in range(1024 - rows * 64):  # (loops, not slice assignments: numba's cost several times more)
        rest[j] = 0
    if plant:
        tile[0, 0] ^= 1
    return True


@njit(cache=True)
def tile_store(tiles, t, rows, colsb, first, stride, regions, table, regions_used, plant):
    """TILESTORED of rows x colsb bytes to first + r * stride, in row order, if one writable region holds every
    row; else False.  (Slices indexed from 0, as tile_load's.)"""
    slot = rows_region(table, regions_used, first, stride, rows, colsb, True)
    if slot < 0:
        return False
    data = regions[slot]
    base = first - table[slot, 0]
    tile = tiles[t]
    for r in range(rows):
        offset = base + r * stride
        target = data[offset:offset + colsb]
        row = tile[r]
        for j in range(colsb):
            target[j] = row[j]
    if plant:
        data[base] ^= 1
    return True


# ---- the loop -----------------------------------------------------------------------------------------------
@njit(cache=True)
def run_loop(forms, ops, addresses, count, start, budget, gpr, scalars, cfg, limits, tiles, regions, table,
             regions_used, passed, fp16_table, parity):
    """Run from instruction ``start``; returns (instruction index, pc, steps, status).  The index is -1 where
    the pc is no instruction (the end, or a jump elsewhere)."""
    i, steps = start, 0
    rflags = scalars[0]
    while True:
        if steps >= budget:
            scalars[0] = rflags
            return i, addresses[i], steps, BUDGET
        form = forms[i]
        row = ops[i]
        plant = row[L.PLANT] != 0
        following = i + 1
        if form == L.NONE:
            break
        elif form == L.TDPBF16PS or form == L.TDPFP16PS or (form >= L.TDPBSSD and form <= L.TDPBUUD):
            if cfg[CFG_START_ROW] != 0:
                break
            c, a, b, slot = row[0], row[2], row[3], row[1]
            if not passed[slot]:
                if not tmul_checks(cfg, limits, c, a, b):
                    break
                passed[slot] = 2
                scalars[2] += 1
            M, K, N = cfg[CFG_ROWS + c], cfg[CFG_COLSB + a] // 4, cfg[CFG_COLSB + c] // 4
            if form == L.TDPBF16PS or form == L.TDPFP16PS:
                tmul_float(tiles, c, a, b, M, K, N, form == L.TDPFP16PS, fp16_table, plant)
            else:
                tmul_integer(tiles, c, a, b, M, K, N, form == L.TDPBSSD or form == L.TDPBSUD,
                             form == L.TDPBSSD or form == L.TDPBUSD, plant)
        elif form == L.TILELOADD or form == L.TILELOADDT1 or form == L.TILESTORED:
            t, slot = row[0], row[1]
            if cfg[CFG_START_ROW] != 0:
                break
            if not passed[slot]:
                if not e3_checks(cfg, limits, t):
                    break
                passed[slot] = 2
                scalars[2] += 1
            first = row[7]
            if row[2] >= 0:
                first += gpr[row[2]] & row[3]
            stride = 0
            if row[4] >= 0:
                stride = (gpr[row[4]] & row[5]) * row[6]
            rows, colsb = cfg[CFG_ROWS + t], cfg[CFG_COLSB + t]
            if form == L.TILESTORED:
                done = tile_store(tiles, t, rows, colsb, first, stride, regions, table, regions_used, plant)
            else:
                done = tile_load(tiles, t, rows, colsb, first, stride, regions, table, regions_used, plant)
            if not done:
                break
        elif form == L.TILEZERO:
            t, slot = row[0], row[1]
            if cfg[CFG_START_ROW] != 0:
                break
            if not passed[slot]:
                if not (cfg[CFG_PALETTE] != 0 and tile_valid(cfg, limits, t)):
                    break
                passed[slot] = 2
                scalars[2] += 1
            flat = tiles[t].ravel()
            for j in range(16 * 64):
                flat[j] = 0
            if plant:
                tiles[t, 0, 0] = 1
        elif form == L.JCC:
            taken = condition(row[0], rflags)
            if taken != plant:
                following = row[1]
                if following == -2:
                    steps += 1
                    scalars[0] = rflags
                    return -1, row[2], steps, HANDBACK
        elif form == L.JMP:
            following = row[1]
            if plant:
                gpr[0] ^= 1
            if following == -2:
                steps += 1
                scalars[0] = rflags
                return -1, row[2], steps, HANDBACK
        elif form == L.RET:
            if scalars[1] != 0:
                break  # returns to a caller inside the program: the Python semantics pop the stack
            if plant:
                gpr[0] ^= 1
            following = -1
        elif form == L.NOP:
            if plant:
                gpr[0] ^= 1
        elif form == L.LEA:
            value = address_of(row, gpr) & row[1]
            gpr[row[0]] = value ^ 1 if plant else value
        else:  # the scalar arithmetic: dest (column 0) op source (register 2, or immediate 3)
            mask, bits = row[1], row[4]
            a = gpr[row[0]] & mask
            b = row[3] if row[2] < 0 else gpr[row[2]] & mask
            written = STATUS_FLAGS
            flags = 0
            if form == L.ADD or form == L.INC:
                r = (a + b) & mask
                flags = add_flags(a, b, r, bits, mask, parity)
                if form == L.INC:
                    written = STATUS_FLAGS & ~CF
            elif form == L.SUB or form == L.CMP or form == L.DEC:
                r = (a - b) & mask
                flags = sub_flags(a, b, r, bits, mask, parity)
                if form == L.DEC:
                    written = STATUS_FLAGS & ~CF
            elif form == L.MOV:
                r = b
                written = 0
            elif form == L.XOR:
                r = a ^ b
                flags = result_flags(r, bits, parity)
            elif form == L.AND or form == L.TEST:
                r = a & b
                flags = result_flags(r, bits, parity)
            else:  # OR
                r = a | b
                flags = result_flags(r, bits, parity)
            if form == L.CMP or form == L.TEST:
                if plant:
                    flags ^= ZF
            else:
                gpr[row[0]] = r ^ 1 if plant else r
            if written:
                rflags = (rflags & ~written) | (flags & written) | 2
        steps += 1
        if following == -1 or following == count:
            scalars[0] = rflags
            return -1, addresses[count], steps, ENDED
        i = following
    scalars[0] = rflags
    return i, addresses[i], steps, HANDBACK
