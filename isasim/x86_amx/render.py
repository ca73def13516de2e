"""Rich views of x86/AMX state: TILECFG as a table, tiles as typed grids, the GPRs."""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..core.errors import IsasimError
from ..core.program import Program
from ..core.render import grid, hex_preview, key_value_table
from .config import uses_amx
from .operands import Reg
from .registers import GPR64, tile_number
from .state import ELEMENT_TYPES, FLAG_NAMES, MAX_TILES, X86AmxState


def infer_element_types(program: Program | None) -> dict[int, str]:
    """Guess each tile's element type from how the program uses it: the element types its
    form declares for it (a TMUL's C, A or B), the first use deciding."""
    types: dict[int, str] = {}
    for ins in program.instructions if program else []:
        if ins.invalid is None:
            for operand, element in zip(ins.operands, ins.form.element_types):
                if isinstance(operand, Reg):
                    types.setdefault(tile_number(operand.name), element)
    return types


def tilecfg_table(state: X86AmxState, program: Program | None = None) -> Group:
    cfg = state.tilecfg
    heading = Text(f"TILECFG  palette={cfg.palette}  start_row={cfg.start_row}", style="bold")
    if cfg.configured:
        return Group(heading, tile_shapes(cfg))
    released = state.released
    if released is None:
        return Group(heading, Text("  INIT: tiles not configured"))
    by = program.at(released.at) if program is not None else None
    where = f"{by.text} (instruction {by.index}, {released.at:#x})" if by is not None else f"the instruction at " \
        f"{released.at:#x}"
    return Group(heading, Text(f"  INIT: {where} released the tiles; as configured before it "
                               f"(palette={released.tilecfg.palette}):"), tile_shapes(released.tilecfg))


def tile_shapes(cfg) -> Table:
    """The configured tiles' rows and colsb, a tile a row."""
    table = Table(box=None, padding=(0, 1))
    table.add_column("tile", style="bold")
    table.add_column("rows", justify="right")
    table.add_column("colsb", justify="right")
    for t in range(MAX_TILES):
        if cfg.rows[t] or cfg.colsb[t]:
            table.add_row(f"tmm{t}", str(cfg.rows[t]), str(cfg.colsb[t]))
    return table


def tile_grid(state: X86AmxState, t: int, element: str, *, hex_values: bool = False, whole: bool = False,
              width: int = 100):
    values = state.tile_view(t, element, whole=whole)
    return _tile_grid(values, f"tmm{t}", element, hex_values=hex_values, width=width,
                      note="  (all 16x64 bytes)" if whole else "")


def released_tile_grid(state: X86AmxState, t: int, element: str, *, hex_values: bool = False, width: int = 100):
    """Tile t as the last release found it (its shape then), titled as such: a kernel's result after its
    closing TILERELEASE."""
    released = state.released
    rows, colsb = released.tilecfg.rows[t], released.tilecfg.colsb[t]
    dtype = ELEMENT_TYPES[element][0]
    usable = colsb - colsb % np.dtype(dtype).itemsize
    values = np.ascontiguousarray(released.tiles[t, :rows, :usable]).view(dtype)
    return _tile_grid(values, f"tmm{t}", element, hex_values=hex_values, width=width,
                      note="  before the release (now zero)")


def _tile_grid(values: np.ndarray, name: str, element: str, *, hex_values: bool, width: int, note: str):
    kind = ELEMENT_TYPES[element][1]
    digits = 2 * values.dtype.itemsize if hex_values else None
    title = f"{name}  {values.shape[0]}x{values.shape[1]} {element}{note}"
    return grid(values, kind, title=title, hex_digits=digits, width=width)


def flags_text(rflags: int) -> str:
    """The status flags set in ``rflags`` by name ("CF ZF"), or "-" when none is."""
    return " ".join(name for name, bit in FLAG_NAMES.items() if rflags & bit) or "-"


def registers_table(state: X86AmxState, *, only_nonzero: bool = True) -> Table:
    rows = [(name, f"{state.read_register(name):#x}") for name in GPR64
            if state.read_register(name) or not only_nonzero]
    rows.append(("rflags", f"{state.rflags:#x}  [{flags_text(state.rflags)}]"))
    rows.append(("rip", f"{state.rip:#x}"))
    return key_value_table("registers", rows)


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


# ---------------------------------------------------------------------------
# Step-through views: what one step changed, and single items on request
# ---------------------------------------------------------------------------

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


def item_view(state: X86AmxState, what: str, args: list[str], program: Program | None, *, width: int = 100):
    """``print`` in the stepper: a register, rflags, TILECFG, a tile in a chosen element type, or all registers.
    Returns None if ``what`` is not an x86 item (the stepper then tries memory)."""
    hex_values = "hex" in args
    element = next((a for a in args if a in ELEMENT_TYPES), None)
    name = what.lower()
    if name in ("regs", "registers"):
        return registers_table(state, only_nonzero=False)
    if name in ("cfg", "tilecfg"):
        return tilecfg_table(state, program)
    if name == "rflags":
        return Text(f"rflags = {state.rflags:#x} [{flags_text(state.rflags)}]")
    if name == "rip":
        return Text(f"rip = {state.rip:#x}")
    t = tile_number(name)
    if t is not None:
        unsupported = [a for a in args if a not in ELEMENT_TYPES and a not in ("hex", "all")]
        if unsupported:  # the stepper knows more types (memory regions) than a tile view has: never fall back
            raise IsasimError(f"a tile is shown as {', '.join(ELEMENT_TYPES)}, not '{unsupported[0]}'")
        rows, colsb = state.tile_shape(t)
        if not (rows and colsb) and "all" not in args:
            if state.tilecfg.configured or state.released is None:
                return Text(f"tmm{t} is not configured (add 'all' to see all 16x64 bytes)")
            return Text(f"tmm{t} is not configured: a release ended the configuration ('p tilecfg' says which, "
                        f"'back' steps to before it, 'all' shows all 16x64 bytes)")
        element = element or infer_element_types(program).get(t, "int32")
        return tile_grid(state, t, element, hex_values=hex_values, whole="all" in args, width=width)
    try:
        value = state.read_register(name)
    except Exception:
        return None
    return Text(f"{name} = {value:#x} ({value})")


def watch_value(state: X86AmxState, what: str):
    """The current value of a watched location: a register, rflags, a tile, or an element tmmN[r][c]
    (a dword), or None if ``what`` is not an x86 location."""
    import re

    name = what.lower()
    m = re.fullmatch(r"tmm([0-7])(?:\[(\d+)\]\[(\d+)\])?", name)
    if m:
        t = int(m.group(1))
        if m.group(2) is None:
            return state.settled_tiles()[t].tobytes()
        r, c = int(m.group(2)), int(m.group(3))
        if r >= 16 or c >= 16:
            return None
        return int.from_bytes(state.settled_tiles()[t, r, 4 * c : 4 * c + 4].tobytes(), "little")  # the dword
    if name == "rflags":
        return state.rflags
    try:
        return state.read_register(name)
    except Exception:
        return None
