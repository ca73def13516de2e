"""What ``isasim run`` shows of the final state (state_view) and ``isasim step`` of one step (step_view)."""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.text import Text

from ...core.program import Program
from ...core.render import grid, hex_preview, key_value_table
from ..config import uses_amx
from ..operands import tile_number
from ..state import ELEMENT_TYPES, MAX_TILES, X86AmxState
from .pictures import flags_text, infer_element_types, registers_table, released_tile_grid, tile_grid, tilecfg_table


def state_view(state: X86AmxState, program: Program | None = None, *, element_types: dict[int, str] | None = None,
               hex_values: bool = False, tiles: list[int] | None = None, width: int = 100) -> Group:
    inferred = infer_element_types(program)
    inferred.update(element_types or {})
    parts = [registers_table(state)]
    # A scalar-only program never touches the tiles: an "INIT: tiles not configured" block would only be noise.
    # With no program to judge by, or once tiles are configured, TILECFG is always shown.
    if state.tilecfg.configured or program is None or uses_amx(program):
        parts.append(tilecfg_table(state, program))
    if state.tilecfg.configured:
        for t in tiles if tiles is not None else range(MAX_TILES):
            rows, colsb = state.tile_shape(t)
            if rows and colsb:
                parts.append(tile_grid(state, t, inferred.get(t, "int32"), hex_values=hex_values, width=width))
    elif state.released is not None:  # the tiles --show names, as the release that ended the run found them
        for t in sorted(element_types or {}):
            if state.released.tilecfg.rows[t] and state.released.tilecfg.colsb[t]:
                parts.append(released_tile_grid(state, t, inferred.get(t, "int32"), hex_values=hex_values,
                                                width=width))
    return Group(*parts)


def changed_elements(old_rows: dict[int, bytes], new_rows: dict[int, bytes], rows: int, cols: int,
                     size: int) -> np.ndarray:
    """A rows x cols mask of the elements (of ``size`` bytes) that differ between old and new rows."""
    mask = np.zeros((rows, cols), dtype=bool)
    for r, new in new_rows.items():
        if r >= rows:
            continue
        old = old_rows.get(r, bytes(64))
        for c in range(cols):
            if old[c * size : (c + 1) * size] != new[c * size : (c + 1) * size]:
                mask[r, c] = True
    return mask


def step_view(record, state: X86AmxState, program: Program | None, *, element_types: dict[int, str] | None = None,
              hex_values: bool = False, width: int = 100) -> Group:
    """What one step changed, from its journal writes: registers and flags (old -> new),
    TILECFG fields, each written tile as a grid with the elements whose bytes the step
    changed highlighted (the grid shows the tile as it is now), and memory ranges."""
    types = infer_element_types(program)
    types.update(element_types or {})
    parts = []
    regs = [(str(w.where), f"{w.old:#x} -> {w.new:#x}") for w in record.writes if w.kind == "reg"]
    regs += [(str(w.where), f"{w.old:#x} [{flags_text(w.old)}] -> {w.new:#x} [{flags_text(w.new)}]")
             for w in record.writes if w.kind == "flags"]
    if regs:
        parts.append(key_value_table("registers", regs, highlight={name for name, _ in regs}))
    cfg = [(str(w.where), f"{w.old} -> {w.new}") for w in record.writes if w.kind == "tilecfg"]
    if cfg:
        parts.append(key_value_table("TILECFG", cfg))
    # Each written tile's rows, before and after, by tile number and row: Location("tmm0", 3) is row 3 of tmm0.
    tiles: dict[int, tuple[dict[int, bytes], dict[int, bytes]]] = {}
    for w in record.writes:
        if w.kind == "tile":
            old, new = tiles.setdefault(tile_number(w.where.name), ({}, {}))
            old[w.where.subscript], new[w.where.subscript] = w.old, w.new
    for t, (old, new) in sorted(tiles.items()):
        rows, colsb = state.tile_shape(t)
        element = types.get(t, "int32")
        if not (rows and colsb):
            parts.append(Text(f"tmm{t}: {len(new)} row(s) zeroed (tile no longer configured)", style="bold"))
            continue
        values = state.tile_view(t, element)
        size = values.dtype.itemsize
        mask = changed_elements(old, new, values.shape[0], values.shape[1], size)
        _dtype, kind = ELEMENT_TYPES[element]
        title = f"tmm{t}  {values.shape[0]}x{values.shape[1]} {element}  ({int(mask.sum())} element(s) changed)"
        parts.append(grid(values, kind, title=title, hex_digits=2 * size if hex_values else None, changed=mask,
                          width=width))
    for w in record.writes:
        if w.kind == "mem":
            parts.append(Text(f"memory {w.where:#x}: {hex_preview(w.new, 32)}"))
    if not parts:
        parts.append(Text("(no state change)", style="dim"))
    return Group(*parts)
