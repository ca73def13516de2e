"""The pictures the x86 views are made of: TILECFG as a table, a tile as a typed grid, the GPRs and RFLAGS."""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.table import Table
from rich.text import Text

from ...core.program import Program
from ...core.render import grid, key_value_table
from ..operands import GPR64, Reg, tile_number
from ..state import ELEMENT_TYPES, FLAG_NAMES, MAX_TILES, X86AmxState


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
