"""What ``isasim run`` and ``isasim step`` show of an SME2 core: registers, modes, Z, P and ZA.

ZA is shown as SVL/8 rows (its array vectors) of elements; Z and P registers as one row each.
Only the vectors that are not zero (or, in a step, that were written) are listed, so a
2048-bit ZA does not fill the terminal with zeros.
"""

from __future__ import annotations

import re

import numpy as np
from rich.console import Group
from rich.text import Text

from ..core.errors import IsasimError
from ..core.isa import WatchTarget
from ..core.numerics import ELEMENT_TYPES
from ..core.render import grid, key_value_table
from . import tiles
from .state import P_NAMES, Z_NAMES, ArmSmeState

VECTOR_VIEWS = ("int32", "uint8", "int8", "int16", "uint16", "uint32", "int64", "uint64")
PREDICATE_VIEWS = ("uint8",)
ZA_VIEWS = VECTOR_VIEWS


def views_of(name: str) -> tuple[str, ...]:
    return PREDICATE_VIEWS if name in P_NAMES or name == "ffr" else VECTOR_VIEWS


def _typed(data: bytes, element: str, rows: int) -> tuple[np.ndarray, str]:
    storage, kind = ELEMENT_TYPES[element]
    return np.frombuffer(data, dtype=storage).reshape(rows, -1), kind


def array_grid(state: ArmSmeState, name: str, element: str, *, hex_values: bool = False, width: int = 100,
               changed_rows: set[int] | None = None, every_row: bool = False):
    data = state.array_bytes(name)
    rows = state.svlb if name == "za" else 1
    values, kind = _typed(data, element, rows)
    storage = ELEMENT_TYPES[element][0]
    digits = 2 * np.dtype(storage).itemsize if hex_values else None
    if name == "za" and not every_row:
        keep = sorted(set(np.flatnonzero(state.za.any(axis=1)).tolist()) | (changed_rows or set()))
        if not keep:
            return Text(f"za  {element}: all {state.svlb} vectors zero")
        parts = [Text(f"za  {element}: {len(keep)} of {state.svlb} vectors are not zero")]
        for r in keep:  # one grid per vector, titled by its index (grid rows would be numbered from 0)
            changed = np.ones(values[r:r + 1].shape, dtype=bool) if r in (changed_rows or ()) else None
            parts.append(grid(values[r:r + 1], kind, title=f"za[{r}]", hex_digits=digits, width=width,
                              changed=changed))
        return Group(*parts)
    mask = None
    if changed_rows:
        mask = np.zeros(values.shape, dtype=bool)
        for r in changed_rows:
            mask[r] = True
    return grid(values, kind, title=f"{name}  {element}", hex_digits=digits, changed=mask, width=width)


def registers_table(state: ArmSmeState, highlight: set[str] | None = None):
    rows = [(name, f"{state.read_register(name):#x}") for name in state.register_names()]
    return key_value_table("registers", rows, highlight=highlight)


def state_view(state: ArmSmeState, *, element_types: dict[str, str] | None = None, hex_values: bool = False,
               width: int = 100, **_options) -> Group:
    element_types = element_types or {}
    parts = [registers_table(state),
             Text(f"SVL {state.svl}: PSTATE.SM={int(state.sm)} PSTATE.ZA={int(state.za_enabled)}")]
    for name in Z_NAMES:
        if state.z[Z_NAMES.index(name)].any() or name in element_types:
            parts.append(array_grid(state, name, element_types.get(name, VECTOR_VIEWS[0]), hex_values=hex_values,
                                    width=width))
    parts.append(array_grid(state, "za", element_types.get("za", ZA_VIEWS[0]), hex_values=hex_values, width=width))
    return Group(*parts)


def step_view(record, state: ArmSmeState, *, element_types: dict[str, str] | None = None, hex_values: bool = False,
              width: int = 100, **_options) -> Group:
    element_types = element_types or {}
    parts = []
    registers = [(str(w.where), f"{w.old:#x} -> {w.new:#x}") for w in record.writes if w.kind == "reg"]
    if registers:
        parts.append(key_value_table("registers", registers))
    za_rows = {w.where.subscript for w in record.writes if w.kind == "array" and w.where.name == "za"}
    others = sorted({w.where.name for w in record.writes if w.kind == "array" and w.where.name != "za"})
    for name in others:
        parts.append(array_grid(state, name, element_types.get(name, views_of(name)[0]), hex_values=hex_values,
                                width=width, changed_rows={0}))
    if za_rows:
        parts.append(array_grid(state, "za", element_types.get("za", ZA_VIEWS[0]), hex_values=hex_values,
                                width=width, changed_rows=za_rows))
    for w in record.writes:
        if w.kind == "mem":
            parts.append(Text(f"memory {w.where:#x}: {w.old.hex(' ')} -> {w.new.hex(' ')}"))
    return Group(*parts) if parts else Text("(no state changed)", style="dim")


def _array_name(name: str) -> bool:
    return name in Z_NAMES or name in P_NAMES or name in ("za", "zt0", "ffr")


_TILE = re.compile(r"za([0-9]+)([hv]?)\.([bhsdq])(?:\[([0-9]+)\])?")
_TILE_TYPES = {"b": ("uint8", "int8"), "h": ("uint16", "int16"), "s": ("uint32", "int32", "fp32"),
               "d": ("uint64", "int64"), "q": ("uint64",)}  # a .q element is shown as its two 64-bit halves


def tile_values(state: ArmSmeState, name: str) -> tuple[np.ndarray, str, str] | None:
    """A ZA tile (za1.s: its rows, tile_rows' order) or one slice (za1h.s[2], za1v.s[2]) as bytes
    (rows x SVL/8 bytes), its element size letter and the title; None if the name is no tile."""
    m = _TILE.fullmatch(name)
    if not m:
        return None
    number, direction, suffix, index = int(m.group(1)), m.group(2), m.group(3), m.group(4)
    esize = 8 * tiles.ELEMENT_BYTES[suffix]
    count = tiles.tile_count(esize)
    if number >= count:
        raise IsasimError(f"the .{suffix} tiles are za0.{suffix} to za{count - 1}.{suffix}, not za{number}.{suffix}")
    slices = state.svl // esize
    if (index is None) != (direction == ""):
        raise IsasimError(f"'{name}': a tile is za{number}.{suffix}, a slice za{number}h.{suffix}[i] or "
                          f"za{number}v.{suffix}[i]")
    if index is None:
        return state.za[tiles.tile_rows(number, esize, state.svlb)], suffix, f"za{number}.{suffix}"
    if int(index) >= slices:
        raise IsasimError(f"za{number}.{suffix} has {slices} slices at SVL {state.svl}, not {int(index) + 1}")
    data = tiles.read_slice(state.za, number, esize, direction == "v", int(index))
    return data.reshape(1, -1), suffix, name


def item_view(state: ArmSmeState, what: str, args: list[str], *, width: int = 100):
    name = what.lower()
    if name in ("regs", "registers"):
        return registers_table(state)
    tile = tile_values(state, name)
    if tile is not None:
        data, suffix, title = tile
        types = _TILE_TYPES[suffix]
        unknown = [a for a in args if a not in types and a != "hex"]
        if unknown:
            raise IsasimError(f"{name} is shown as {' or '.join(types)}, not '{unknown[0]}'")
        element = next((a for a in args if a in types), types[0])
        storage, kind = ELEMENT_TYPES[element]
        values = np.ascontiguousarray(data).view(storage)
        digits = 2 * np.dtype(storage).itemsize if "hex" in args else None
        return grid(values, kind, title=f"{title}  {element}", hex_digits=digits, width=width)
    if _array_name(name):
        views = views_of(name)
        unknown = [a for a in args if a not in views and a not in ("hex", "all")]
        if unknown:
            raise IsasimError(f"{name} is shown as {' or '.join(views)}, not '{unknown[0]}'")
        element = next((a for a in args if a in views), views[0])
        return array_grid(state, name, element, hex_values="hex" in args, width=width, every_row="all" in args)
    if name in state.register_names():
        value = state.read_register(name)
        return Text(f"{name} = {value:#x} ({value})")
    return None


def watch_value(state: ArmSmeState, what: str, element_types: dict[str, str]) -> WatchTarget | None:
    """A register (a number), a whole array (its bytes), or one ZA vector za[i] (SVL/8 bytes)."""
    name = what.lower()
    if name in state.register_names():
        return WatchTarget(state.read_register(name))
    if _array_name(name):
        return WatchTarget(state.array_bytes(name), element_types.get(name, views_of(name)[0]))
    tile = tile_values(state, name)
    if tile is not None:
        return WatchTarget(tile[0].tobytes(), _TILE_TYPES[tile[1]][0])
    m = re.fullmatch(r"za\[(\d+)\]", name)
    if not m:
        return None
    i = int(m.group(1))
    if i >= state.svlb:
        raise IsasimError(f"ZA has {state.svlb} vectors at SVL {state.svl}, za[0] to za[{state.svlb - 1}], not za[{i}]")
    return WatchTarget(state.za[i].tobytes(), element_types.get("za", ZA_VIEWS[0]))


STEPPER_LOCATIONS = """    x0 ... x30, sp, nzcv, svcr, pc   registers (p, w)
    regs                              every register (p)
    za [TYPE] [hex] [all]             ZA, the vectors that are not zero (all: every one) (p, w)
    za[i]                             one vector of ZA (w)
    za1.s, za1h.s[i], za1v.s[i] [hex] a ZA tile, or its horizontal or vertical slice i (p, w)
    z0 ... z31, p0 ... p15, ffr, zt0  a vector, predicate or ZT0 (p, w)"""
