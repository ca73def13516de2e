"""What ``isasim run`` shows of the final state and ``isasim step`` of one step: registers (NZCV as
flags), Z registers as lanes of the instruction's element type, predicates as one mark per element,
ZA as a grid of its vectors with the written ones highlighted, ZT0 and memory."""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.text import Text

from ...core.program import Program
from ...core.render import grid, key_value_table
from ..state import P_NAMES, Z_NAMES, ArmSmeState
from .pictures import (memory_text, predicate_view, register_text, registers_table, svcr_text, typed, z_grid,
                       za_grid, za_off_text, digits_for)
from .types import element_type, suffix_of

STEP_ZA_ROWS = 16  # a step shows at most this many ZA vectors (the written ones first); `p za` shows them all


def _z_grids(state: ArmSmeState, numbers: list[int], typeof, *, hex_values: bool, width: int,
             old: dict[int, bytes] | None = None) -> list:
    """One grid per element type, each of the registers of that type, in register order."""
    by_type: dict[str, list[int]] = {}
    for n in sorted(numbers):
        by_type.setdefault(typeof(f"z{n}"), []).append(n)
    return [z_grid(state, group, element, hex_values=hex_values, width=width, old=old)
            for element, group in by_type.items()]


def _zt0_grid(state: ArmSmeState, element: str, *, hex_values: bool, width: int, changed: bool = False):
    values, kind = typed(state.zt0.reshape(1, -1), element)
    return grid(values, kind, title=f"zt0  {values.shape[1]} {element}", hex_digits=digits_for(element, hex_values),
                width=width, changed=np.full(values.shape, changed), row_labels=["zt0"])


def step_view(record, state: ArmSmeState, program: Program | None = None, *,
              element_types: dict[str, str] | None = None, hex_values: bool = False, width: int = 100,
              **_options) -> Group:
    """What one step changed, from its journal writes, in the types the instruction gives its operands
    (the user's --show choices first, then the program's first use)."""
    instruction = record.instruction

    def typeof(name: str) -> str:
        return element_type(name, element_types, instruction, program)

    parts = []
    registers = [(str(w.where), f"{register_text(w.where.name, w.old)} -> {register_text(w.where.name, w.new)}")
                 for w in record.writes if w.kind == "reg"]
    if registers:
        parts.append(key_value_table("registers", registers, highlight={name for name, _ in registers}))
    z_old: dict[int, bytes] = {}
    za_old: dict[int, bytes] = {}
    predicates: dict[str, bytes] = {}
    zt0 = False
    for w in record.writes:  # the first write of a location holds its value before the step
        if w.kind != "array":
            continue
        name = w.where.name
        if name == "za":
            za_old.setdefault(w.where.subscript, w.old)
        elif name in Z_NAMES:
            z_old.setdefault(Z_NAMES.index(name), w.old)
        elif name in P_NAMES or name == "ffr":
            predicates.setdefault(name, w.old)
        elif name == "zt0":
            zt0 = True
    parts += _z_grids(state, list(z_old), typeof, hex_values=hex_values, width=width, old=z_old)
    for name, old in predicates.items():
        parts.append(predicate_view(name, suffix_of(typeof(name)), state.array_bytes(name), old, width=width))
    if za_old:
        shown = sorted(set(np.flatnonzero(state.za.any(axis=1)).tolist()) | set(za_old))
        note = ""
        if len(shown) > STEP_ZA_ROWS:
            shown = sorted(za_old)[:STEP_ZA_ROWS]
            note = (f"(showing {len(shown)} written vector(s); p za for all)" if len(za_old) > STEP_ZA_ROWS
                    else "(showing the written vectors; p za for all)")
        parts.append(za_grid(state, typeof("za"), hex_values=hex_values, width=width, written=za_old, rows=shown,
                             note=note))
    if zt0:
        parts.append(_zt0_grid(state, typeof("zt0"), hex_values=hex_values, width=width, changed=True))
    for w in record.writes:
        if w.kind == "mem":
            parts.append(memory_text(w.where, w.old, w.new, width))
    return Group(*parts) if parts else Text("(no state changed)", style="dim")


def state_view(state: ArmSmeState, program: Program | None = None, *, element_types: dict[str, str] | None = None,
               hex_values: bool = False, width: int = 100, **_options) -> Group:
    """The whole state: registers, the modes, the Z registers and predicates that are not zero (or that
    --show names), ZA's vectors that are not zero, and ZT0 if it is not zero."""
    element_types = element_types or {}

    def typeof(name: str) -> str:
        return element_type(name, element_types, None, program)

    parts = [registers_table(state),
             Text(f"SVL {state.svl}: PSTATE.{svcr_text(state.svcr).replace(' ', ' PSTATE.')}")]
    numbers = [n for n, name in enumerate(Z_NAMES) if state.z[n].any() or name in element_types]
    parts += _z_grids(state, numbers, typeof, hex_values=hex_values, width=width)
    for name in P_NAMES + ("ffr",):
        data = state.array_bytes(name)
        if any(data) or name in element_types:
            parts.append(predicate_view(name, suffix_of(typeof(name)), data, width=width))
    off = za_off_text(state, program)
    if off is None:
        parts.append(za_grid(state, typeof("za"), hex_values=hex_values, width=width))
    else:  # a kernel's closing SMSTOP: show what it left in ZA, said to be from before
        parts.append(Text(off + "; as it was before:"))
        parts.append(za_grid(state, typeof("za"), hex_values=hex_values, width=width, za=state.za_turned_off.za,
                             note="(before ZA was turned off)"))
    if state.zt0.any() or "zt0" in element_types:
        parts.append(_zt0_grid(state, typeof("zt0"), hex_values=hex_values, width=width))
    return Group(*parts)
