"""What ``isasim run`` and ``isasim step`` show of the toy: its registers and the accumulator ``acc``."""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.text import Text

from isasim.core.errors import IsasimError
from isasim.core.isa import WatchTarget
from isasim.core.numerics import ELEMENT_TYPES
from isasim.core.render import grid, key_value_table

from .state import ACC_ELEMENTS, REGISTER_NAMES, ToyState

ACC_VIEWS = ("int32", "uint8")  # the element types acc can be shown as, its default first


def acc_grid(state: ToyState, element: str, *, hex_values: bool = False, width: int = 100,
             changed: set[int] | None = None) -> Group:
    storage, kind = ELEMENT_TYPES[element]
    values = np.frombuffer(state.acc_bytes(), dtype=storage).reshape(1, -1)
    per_element = 4 // np.dtype(storage).itemsize  # acc elements are 4 bytes: how many view cells make one
    mask = None
    if changed:
        mask = np.zeros(values.shape, dtype=bool)
        for i in changed:
            mask[0, i * per_element : (i + 1) * per_element] = True
    digits = 2 * np.dtype(storage).itemsize if hex_values else None
    return grid(values, kind, title=f"acc  {element}", hex_digits=digits, changed=mask, width=width)


def registers_table(state: ToyState, highlight: set[str] | None = None):
    rows = [(name, f"{state.regs[n]:#x}") for n, name in enumerate(REGISTER_NAMES)] + [("pc", f"{state.pc:#x}")]
    return key_value_table("registers", rows, highlight=highlight)


def state_view(state: ToyState, *, element_types: dict[str, str] | None = None, hex_values: bool = False,
               width: int = 100, **_options) -> Group:
    element = (element_types or {}).get("acc", ACC_VIEWS[0])
    return Group(registers_table(state), acc_grid(state, element, hex_values=hex_values, width=width))


def step_view(record, state: ToyState, *, element_types: dict[str, str] | None = None, hex_values: bool = False,
              width: int = 100, **_options) -> Group:
    """The step's journal writes: registers old -> new, the accumulator with the written elements
    highlighted, and memory ranges."""
    parts = []
    registers = [(str(w.where), f"{w.old:#x} -> {w.new:#x}") for w in record.writes if w.kind == "reg"]
    if registers:
        parts.append(key_value_table("registers", registers))
    written = {w.where.subscript for w in record.writes if w.kind == "array" and w.where.name == "acc"}
    if written:
        element = (element_types or {}).get("acc", ACC_VIEWS[0])
        parts.append(acc_grid(state, element, hex_values=hex_values, width=width, changed=written))
    for w in record.writes:
        if w.kind == "mem":
            parts.append(Text(f"memory {w.where:#x}: {w.old.hex(' ')} -> {w.new.hex(' ')}"))
    return Group(*parts) if parts else Text("(no state changed)", style="dim")


def item_view(state: ToyState, what: str, args: list[str], *, width: int = 100):
    """``p WHAT``: a register, ``regs``, or ``acc`` [int32|uint8] [hex]; None for anything else."""
    name = what.lower()
    if name in ("regs", "registers"):
        return registers_table(state)
    if name == "acc":
        unknown = [a for a in args if a not in ACC_VIEWS and a not in ("hex", "all")]
        if unknown:
            raise IsasimError(f"acc is shown as {' or '.join(ACC_VIEWS)}, not '{unknown[0]}'")
        element = next((a for a in args if a in ACC_VIEWS), ACC_VIEWS[0])
        return acc_grid(state, element, hex_values="hex" in args, width=width)
    if name in state.register_names():
        value = state.read_register(name)
        return Text(f"{name} = {value:#x} ({value})")
    return None


def watch_value(state: ToyState, what: str, element_types: dict[str, str]) -> WatchTarget | None:
    """A register (a number), acc (its 16 bytes, in its --show type) or one element acc[i] (4 bytes, int32)."""
    import re

    name = what.lower()
    if name in state.register_names():
        return WatchTarget(state.read_register(name))
    m = re.fullmatch(r"acc(?:\[(\d+)\])?", name)
    if not m:
        return None
    data = state.acc_bytes()
    if m.group(1) is None:
        return WatchTarget(data, element_types.get("acc", ACC_VIEWS[0]))
    i = int(m.group(1))
    if i >= ACC_ELEMENTS:
        raise IsasimError(f"acc has {ACC_ELEMENTS} elements, acc[0] to acc[{ACC_ELEMENTS - 1}], not acc[{i}]")
    return WatchTarget(data[4 * i : 4 * i + 4], "int32")
