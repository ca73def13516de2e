"""The stepper's ``p`` (item_view) and ``w`` (watch_value) on x86 locations: registers, TILECFG, tiles."""

from __future__ import annotations

import re

from rich.text import Text

from ...core.errors import IsasimError
from ...core.program import Program
from ..operands import tile_number
from ..state import ELEMENT_TYPES, X86AmxState
from .pictures import flags_text, infer_element_types, registers_table, tile_grid, tilecfg_table

STEPPER_LOCATIONS = """    rax ... r15, eax ... (any GPR view), rip, rflags   registers (p, w)
    regs, cfg                                           every GPR and RFLAGS; TILECFG (p)
    tmm0 ... tmm7 [TYPE] [hex] [all]                    a tile, int32 unless --show or TYPE (p, w)
    tmmN[r][c]                                          one dword of a tile (w)"""


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
