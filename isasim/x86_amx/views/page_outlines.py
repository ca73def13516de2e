"""The trace page's outlines of an AMX step's operands: which bytes of tilecfg, tmm0-7 and zmm0-31 (the arrays
``Isa.arrays`` names) the instruction reads and writes, read from the machine just before the step.

A tile's array is its configured rows x colsb bytes (what observed_arrays gives the page), so byte c of row r
is at r x colsb + c.  A TMUL reads all of A (M rows x 4K bytes) and B (K rows x 4N bytes) and reads and
writes all of C (M rows x 4N bytes): the shapes it checks make each of them the whole configured tile.  A tile
load writes, and a tile store reads, rows start_row..rows-1 (the rows below start_row were moved by the
interrupted instruction before).  Memory is not an array panel: a load's or store's memory operand gets no
outline here.  An instruction that finishes with start_row := 0 gets tilecfg's byte 1 outlined as written
when start_row was not 0 (that byte then changes).
"""

from __future__ import annotations

from ...core.isa import PageOutline
from ..forms.amx import AmxForm
from ..forms.amx_extensions import AmxEvexForm
from ..operands import GPR_VIEWS, Imm, Mem, Reg, operand_text, tile_number
from ..state import TILECFG_BYTES

TILE_LOADS = ("tileloadd", "tileloaddt1", "tileloaddrs", "tileloaddrst1")
START_ROW_BYTE = 1  # TILECFG byte 1 is start_row (the SDM's layout; tilecfg.tilecfg_layout names it)
ROLE_NAMES = {"C": "read and written", "A": "read", "B": "read"}


def page_outlines(instruction, before) -> list[PageOutline]:
    """The PageOutlines of ``instruction``'s array operands, from ``before`` (a core Machine, not changed)."""
    form = instruction.form
    if instruction.invalid is not None:
        return []
    if isinstance(form, AmxEvexForm):
        return _row_form(instruction, before)
    if not isinstance(form, AmxForm):
        return []
    mnemonic, operands = form.mnemonic, instruction.operands
    cfg = before.state.tilecfg
    if mnemonic == "ldtilecfg":
        return [PageOutline("tilecfg", ((0, TILECFG_BYTES),),
                            f"TILECFG: its 64 bytes := the 64 at {_address_text(operands[0], before)}", "written")]
    if mnemonic == "sttilecfg":
        return [PageOutline("tilecfg", ((0, TILECFG_BYTES),),
                            f"TILECFG: its 64 bytes, stored to {_address_text(operands[0], before)}", "read")]
    if mnemonic == "tilerelease":
        if not cfg.configured:
            return []  # TILECFG is all zero already: TILERELEASE changes nothing the page shows
        return [PageOutline("tilecfg", ((0, TILECFG_BYTES),), "TILECFG := 0 (the tiles return to INIT)", "written")]
    if not cfg.configured:
        return []  # no tile array exists; the instruction faults (#UD)
    if form.is_tmul:
        outlines = []
        for role, operand, element in zip(form.operand_roles, operands, form.element_types or ("",) * 3):
            t = tile_number(operand.name)
            rows, colsb = cfg.rows[t], cfg.colsb[t]
            if rows and colsb:
                kind = f" ({element})" if element else ""
                outlines.append(PageOutline(operand.name, ((0, rows * colsb),),
                                            f"{role}: {operand.name}, {rows} rows x {colsb} bytes as configured{kind}",
                                            ROLE_NAMES[role]))
        return outlines + _start_row_reset(cfg)
    if mnemonic == "tilezero":
        t = tile_number(operands[0].name)
        rows, colsb = cfg.rows[t], cfg.colsb[t]
        if not (rows and colsb):
            return []
        return [PageOutline(operands[0].name, ((0, rows * colsb),),
                            f"{operands[0].name} := 0, {rows} rows x {colsb} bytes as configured", "written")
                ] + _start_row_reset(cfg)
    if mnemonic in TILE_LOADS or mnemonic == "tilestored":
        reg = next(o for o in operands if isinstance(o, Reg))
        mem = next(o for o in operands if isinstance(o, Mem))
        t = tile_number(reg.name)
        rows, colsb, start = cfg.rows[t], cfg.colsb[t], cfg.start_row
        if not (rows and colsb) or start >= rows:
            return []  # #UD: nothing moves
        which = f"rows {start}-{rows - 1}" if rows - start > 1 else f"row {start}"
        if mnemonic == "tilestored":
            label, role = f"{reg.name}: {which} x {colsb} bytes, stored to {operand_text(mem)}", "read"
        else:
            label, role = f"{reg.name}: {which} x {colsb} bytes, loaded from {operand_text(mem)}", "written"
        return [PageOutline(reg.name, ((start * colsb, rows * colsb),), label, role)] + _start_row_reset(cfg)
    return []


def _address_text(mem: Mem, before) -> str:
    return f"{operand_text(mem)} ({before.context.effective_address(mem):#x})"


def _start_row_reset(cfg) -> list[PageOutline]:
    if not cfg.start_row:
        return []
    return [PageOutline("tilecfg", ((START_ROW_BYTE, START_ROW_BYTE + 1),),
                        f"TILECFG.start_row: {cfg.start_row} := 0 (the instruction completed)", "written")]


def _row_form(instruction, before) -> list[PageOutline]:
    """TCVTROW* and TILEMOVROW: the part of one tile row they read (row_index and row_chunk from the r32's
    value before the step, or the imm8), and the zmm register they write whole."""
    zmm, tmm, row = instruction.operands
    cfg = before.state.tilecfg
    t = tile_number(tmm.name)
    if not cfg.configured or not (cfg.rows[t] and cfg.colsb[t]):
        return []
    rows, colsb = cfg.rows[t], cfg.colsb[t]
    if isinstance(row, Imm):
        value = row.value & 0xFF
        index, chunk, source = value & 0x3F, (value >> 6) * 64, f"imm8 {value:#x}"
    else:
        value = before.state.read_gpr(GPR_VIEWS[row.name]) & 0xFFFFFFFF
        index, chunk, source = value & 0xFFFF, (value >> 16) * 64, f"{row.name} = {value:#x}"
    if index >= rows:
        return []  # #UD (ROW_BEYOND_ROWS in semantics/amx_extensions.py)
    mnemonic = instruction.form.mnemonic
    # TILEMOVROW moves bytes up to colsb; the conversions take whole dwords below colsb / 4
    end = min(colsb if mnemonic == "tilemovrow" else 4 * (colsb // 4), chunk + 64)
    outlines = []
    if chunk < end:
        outlines.append(PageOutline(tmm.name, ((index * colsb + chunk, index * colsb + end),),
                                    f"{tmm.name} row {index}, bytes {chunk}-{end - 1} ({source})", "read"))
    outlines.append(PageOutline(zmm.name, ((0, 64),), f"{zmm.name}: all 64 bytes", "written"))
    return outlines + (_start_row_reset(cfg) if mnemonic != "tilemovrow" else [])
