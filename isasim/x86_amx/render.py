"""Rich views of x86/AMX state: TILECFG as a table, tiles as typed grids, the GPRs."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text

from ..core.program import Program
from ..core.render import grid, key_value_table
from .operands import Reg
from .registers import GPR64
from .state import ELEMENT_TYPES, FLAG_NAMES, MAX_TILES, X86AmxState

# What each TMUL instruction's operands hold, for choosing how to show a tile.
_TMUL_TYPES = {
    "tdpbssd": ("int32", "int8", "int8"), "tdpbsud": ("int32", "int8", "uint8"),
    "tdpbusd": ("int32", "uint8", "int8"), "tdpbuud": ("int32", "uint8", "uint8"),
    "tdpbf16ps": ("fp32", "bf16", "bf16"), "tdpfp16ps": ("fp32", "fp16", "fp16"),
}


def infer_element_types(program: Program | None) -> dict[int, str]:
    """Guess each tile's element type from how the program uses it (a TMUL's C, A or B)."""
    types: dict[int, str] = {}
    for ins in program.instructions if program else []:
        roles = _TMUL_TYPES.get(ins.mnemonic)
        if roles and ins.undefined is None:
            for operand, element in zip(ins.operands, roles):
                if isinstance(operand, Reg):
                    types.setdefault(int(operand.name[3:]), element)
    return types


def tilecfg_table(state: X86AmxState) -> Group:
    cfg = state.tilecfg
    table = Table(box=None, padding=(0, 1))
    table.add_column("tile", style="bold")
    table.add_column("rows", justify="right")
    table.add_column("colsb", justify="right")
    for t in range(MAX_TILES):
        if cfg.rows[t] or cfg.colsb[t]:
            table.add_row(f"tmm{t}", str(cfg.rows[t]), str(cfg.colsb[t]))
    heading = Text(f"TILECFG  palette={cfg.palette}  start_row={cfg.start_row}", style="bold")
    if not cfg.configured:
        return Group(heading, Text("  INIT: tiles not configured"))
    return Group(heading, table)


def tile_grid(state: X86AmxState, t: int, element: str, *, hex_values: bool = False, whole: bool = False,
              width: int = 100):
    values = state.tile_view(t, element, whole=whole)
    dtype, kind = ELEMENT_TYPES[element]
    digits = 2 * values.dtype.itemsize if hex_values else None
    rows, colsb = state.tile_shape(t)
    title = f"tmm{t}  {values.shape[0]}x{values.shape[1]} {element}" + ("  (all 16x64 bytes)" if whole else "")
    return grid(values, kind, title=title, hex_digits=digits, width=width)


def registers_table(state: X86AmxState, *, only_nonzero: bool = True) -> Table:
    rows = [(name, f"{state.read_register(name):#x}") for name in GPR64
            if state.read_register(name) or not only_nonzero]
    flags = " ".join(name for name, bit in FLAG_NAMES.items() if state.rflags & bit) or "-"
    rows.append(("rflags", f"{state.rflags:#x}  [{flags}]"))
    rows.append(("rip", f"{state.rip:#x}"))
    return key_value_table("registers", rows)


def state_view(state: X86AmxState, program: Program | None = None, *, element_types: dict[int, str] | None = None,
               hex_values: bool = False, tiles: list[int] | None = None, width: int = 100) -> Group:
    inferred = infer_element_types(program)
    inferred.update(element_types or {})
    parts = [registers_table(state), tilecfg_table(state)]
    if state.tilecfg.configured:
        for t in tiles if tiles is not None else range(MAX_TILES):
            rows, colsb = state.tile_shape(t)
            if rows and colsb:
                parts.append(tile_grid(state, t, inferred.get(t, "int32"), hex_values=hex_values, width=width))
    return Group(*parts)
