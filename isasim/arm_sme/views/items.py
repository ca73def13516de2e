"""The stepper's ``p WHAT`` and ``w WHAT`` on SME2 state (the names: locations.py)."""

from __future__ import annotations

import re

import numpy as np
from rich.console import Group
from rich.text import Text

from ...core.errors import IsasimError
from ...core.isa import WatchTarget
from ...core.numerics import ELEMENT_TYPES
from ...core.program import Program
from ...core.render import grid
from ..semantics import za_tiles
from ..state import ArmSmeState
from . import locations
from .locations import Predicate, Tile, VectorGroup, ZaVector, ZRegister
from .pictures import (digits_for, predicate_view, register_text, registers_table, tile_view, typed, vector_group_view,
                       z_grid, za_grid, za_off_text)
from .types import PREDICATE_VIEWS, VECTOR_VIEWS, element_type, sized_type, suffix_of

STEPPER_LOCATIONS = """    x0 ... x30, sp, nzcv, svcr, pc  registers (p, w); w0 ... w30 (p)
    regs                     every register (p)
    za [TYPE] [hex] [all]    ZA's vectors that are not zero (all: every one)
    za.b, za.h, za.s, za.d   ZA in lanes of that size (p)
    za[i]                    one vector of ZA (p, w)
    za.s[w8, 0, vgx4]        a vector group: its ZA vectors, and why (p)
    za1.s, za1h.s            a ZA tile as its rows (p, w)
    za1v.s                   a tile's columns, shown as rows (p, w)
    za1h.s[i], za1v.s[i]     horizontal or vertical slice i of a tile (p, w)
    za1h.s[i][j]             element j of slice i (of column i, za1v.s[i][j])
    z0 ... z31 [TYPE]        a Z register as lanes (p, w)
    z4.h [TYPE], z4.s[3]     lanes of one size (TYPE of that size); one lane
    p0 ... p15, p2.s, ffr    a predicate: one mark per element, 1 active (p, w)
    zt0 [TYPE]               the ZT0 table register (p, w)"""


def _one_type(words: list[str]) -> str | None:
    return next((word for word in words if word in ELEMENT_TYPES), None)


def _refuse_unknown(location: str, words: list[str], types: tuple[str, ...]) -> None:
    unknown = [w for w in words if w not in types and w not in ("hex", "all")]
    if unknown:
        raise IsasimError(f"{location} is shown as {', '.join(types)}, not '{unknown[0]}'")


def item_view(state: ArmSmeState, what: str, args: list[str], program: Program | None = None, *,
              width: int = 100, **_options):
    """The renderable for ``p WHAT ARGS``, or None when WHAT is no SME2 location (the stepper then
    tries memory and init regions)."""
    name = what.lower().strip()
    hex_values = "hex" in args
    if name in ("regs", "registers"):
        return registers_table(state)
    if name in state.register_names():
        value = state.read_register(name)
        return Text(f"{name} = {register_text(name, value)} ({value})")
    if re.fullmatch(r"w(0|[1-9][0-9]?)", name) and int(name[1:]) < 31:  # as the assembler spells them
        value = state.read_register(f"x{name[1:]}") & 0xFFFFFFFF
        return Text(f"{name} = {value:#x} ({value}), the low 32 bits of x{name[1:]}")
    if name in ("za", "za.b", "za.h", "za.s", "za.d"):
        preferred = element_type("za", None, None, program)
        if name == "za":
            _refuse_unknown("za", args, VECTOR_VIEWS)
            element = _one_type(args) or preferred
        else:
            element = sized_type(name[-1], args, preferred, name)
        shown = za_grid(state, element, hex_values=hex_values, width=width,
                        rows=list(range(state.svlb)) if "all" in args else None)
        off = za_off_text(state, program)
        return shown if off is None else Group(Text(off + " ('back' steps to before it)"), shown)
    if name == "zt0":
        _refuse_unknown(name, args, VECTOR_VIEWS)
        element = _one_type(args) or element_type(name, None, None, program)
        values, kind = typed(state.zt0.reshape(1, -1), element)
        return grid(values, kind, title=f"zt0  {values.shape[1]} {element}", hex_digits=digits_for(element, hex_values),
                    width=width, row_labels=["zt0"])
    if name == "ffr":
        return predicate_view(name, "b", state.array_bytes(name), width=width)
    location = locations.parse(name, state.svlb)
    if location is None:
        return None
    if isinstance(location, ZaVector):
        _refuse_unknown(name, args, VECTOR_VIEWS)
        element = _one_type(args) or element_type("za", None, None, program)
        return za_grid(state, element, hex_values=hex_values, width=width, rows=[location.row])
    if isinstance(location, VectorGroup):
        element = sized_type(location.suffix, args, element_type("za", None, None, program), location.text)
        return vector_group_view(state, location, element, hex_values=hex_values, width=width)
    if isinstance(location, Tile):
        element = sized_type(location.suffix, args, element_type("za", None, None, program), name)
        return tile_view(state, location, element, hex_values=hex_values, width=width)
    if isinstance(location, ZRegister):
        preferred = element_type(f"z{location.number}", None, None, program)
        if location.suffix is None:
            _refuse_unknown(name, args, VECTOR_VIEWS)
            element = _one_type(args) or preferred
        else:
            element = sized_type(location.suffix, args, preferred, name)
        if location.lane is None:
            return z_grid(state, [location.number], element, hex_values=hex_values, width=width)
        values, kind = typed(state.z[location.number].reshape(1, -1), element)
        lane = values[:, location.lane:location.lane + 1]
        return grid(lane, kind, title=f"{name}  {element}", hex_digits=digits_for(element, hex_values),
                    row_labels=[name])
    if isinstance(location, Predicate):
        _refuse_unknown(name, args, PREDICATE_VIEWS)
        suffix = location.suffix or suffix_of(element_type(f"p{location.number}", None, None, program))
        return predicate_view(f"p{location.number}", suffix, state.array_bytes(f"p{location.number}"), width=width)
    return None


def watch_value(state: ArmSmeState, what: str, element_types: dict[str, str]) -> WatchTarget | None:
    """The current value of a watched location: a register (a number), an array, one ZA vector, a tile,
    slice or element of one, a Z register or one lane (bytes, with the type they are shown in)."""
    name = what.lower().strip()
    if name in state.register_names():
        return WatchTarget(state.read_register(name))
    if name in ("za", "zt0"):
        return WatchTarget(state.array_bytes(name), element_types.get(name, VECTOR_VIEWS[0]))
    if name == "ffr":
        return WatchTarget(state.array_bytes(name))
    location = locations.parse(name, state.svlb)
    if location is None:
        return None
    if isinstance(location, VectorGroup):
        raise IsasimError(f"{location.text} names other vectors when W{location.v} changes: watch one, za[i]")
    if isinstance(location, ZaVector):
        return WatchTarget(state.za[location.row].tobytes(), element_types.get("za", VECTOR_VIEWS[0]))
    if isinstance(location, Predicate):
        return WatchTarget(state.array_bytes(f"p{location.number}"))
    if isinstance(location, ZRegister):
        data = state.z[location.number]
        if location.suffix is None:
            return WatchTarget(data.tobytes(), element_types.get(name, VECTOR_VIEWS[0]))
        size = za_tiles.ELEMENT_BYTES[location.suffix]
        element = sized_type(location.suffix, [], element_types.get(f"z{location.number}"), name)
        if location.lane is not None:
            data = data[location.lane * size:(location.lane + 1) * size]
        return WatchTarget(data.tobytes(), element)
    element = sized_type(location.suffix, [], element_types.get("za"), name)
    if location.slice is None:
        rows = za_tiles.tile_rows(location.tile, location.esize, state.svlb)
        return WatchTarget(state.za[rows].tobytes(), element)
    data = za_tiles.read_slice(state.za, location.tile, location.esize, location.vertical, location.slice)
    if location.element is not None:
        size = location.esize // 8
        data = data[location.element * size:(location.element + 1) * size]
    return WatchTarget(data.tobytes(), element)


def tile_values(state: ArmSmeState, name: str):
    """A ZA tile as rows of bytes (za1.s, za1h.s: its rows in tile_rows' order; za1v.s: its columns) or one
    slice (za1h.s[2], za1v.s[2]: one row), its element size letter and its name; None if ``name`` is no tile."""
    location = locations.parse(name.lower(), state.svlb)
    if not isinstance(location, Tile):
        return None
    slices = range(state.svl // location.esize) if location.slice is None else [location.slice]
    data = np.stack([za_tiles.read_slice(state.za, location.tile, location.esize, location.vertical, i)
                     for i in slices])
    return data, location.suffix, name


