"""Pictures of data moving between memory, Z registers and ZA: a tile slice (LD1B/ST1W ... of
za0h.s[w12, 0] or za0v.s[w12, 0], MOVA tile <-> vector) with the slice highlighted in the tile,
horizontal (a row) or vertical (a column); a ZA vector (LDR/STR za); a Z or P register (LD1W z,
ST1B z, LDR z ...).  Elements a predicate leaves inactive are grey (zeroed by a load, not stored,
kept by MOVA).  Addresses come from the operands and the example's registers, values from the
machine (memory and registers after the step, ZA and Z before it where the step read them).
"""

from __future__ import annotations

from ...core.errors import IsasimError
from ...core.explain import Arrow, Cell, Grid
from ...core.faults import Fault
from ..semantics.za_tiles import ELEMENT_BYTES, slice_rows, tile_rows, tile_text
from ..state import MASK64, X_NAMES
from .drawing import (
    INACTIVE, MAX_SLICE_ELEMENTS, WINDOW_ROWS, element_bits, elided, example_figure, hex_text, join_captions,
    predicate, predicate_active, tile_vectors_text, window,
)

SLICE_BEND = 30.0  # how far the arrow to a vertical slice arcs below the grids
STACK_BEND = 36.0  # how far an arrow between two stacked rows curves out to their right


def _x(regs, n: int, sp: bool) -> int:
    """X[n] as the example held it before the step (n = 31: SP or XZR, as the operand says)."""
    if n == 31:
        return regs["sp"] if sp else 0
    return regs[X_NAMES[n]]


def _memory_cells(run, start: int, elements: range, mbytes: int, active) -> list[Cell]:
    """Memory element e at start + e*mbytes after the step ("--" where it is not mapped)."""
    cells = []
    for e in elements:
        address = (start + e * mbytes) & MASK64
        try:
            text = hex_text(int.from_bytes(run.machine.memory.read(address, mbytes), "little"), mbytes)
        except (IsasimError, Fault):  # a --init that leaves it unmapped (the step faulted)
            text = "--"
        cells.append(Cell(text, "addr" if active(e) else INACTIVE, f"{address:#x}"))
    return cells


def _slice_partner(ins, run, along: range, eb: int, active, to_tile: bool):
    """The other end of a slice's move, elements ``along``: memory (LD1*/ST1*) or a Z register (MOVA),
    as (cells, title, name)."""
    ops, regs = ins.operands, run.before["regs"]
    if ins.form.group == "za_memory":
        n, m = ops[2]
        start = (_x(regs, n, True) + _x(regs, m, False) * eb) & MASK64
        title = f"memory at {start:#x}" + (" after" if not to_tile else "")
        return _memory_cells(run, start, along, eb, active), title, "memory"
    register = ops[0] if not to_tile else ops[2]
    z = run.machine.state.z[register] if not to_tile else run.before["z"][register]
    cells = [Cell(hex_text(element_bits(z, e, eb), eb), "addr" if active(e) else INACTIVE, f"element {e}")
             for e in along]
    return cells, f"z{register}" + (" after" if not to_tile else ""), f"z{register}"


def tile_slice_figure(ins, encoding, run):
    """A tile slice to or from memory (LD1*/ST1* of za<t>h/v) or a Z register (MOVA)."""
    form = ins.form
    suffix = form.id[-1]
    eb = ELEMENT_BYTES[suffix]
    esize = 8 * eb
    state, regs = run.machine.state, run.before["regs"]
    ops = ins.operands
    to_tile = form.mnemonic.startswith("ld") or form.id.startswith("MOVA_za_")
    za_slice, g = (ops[0], ops[1]) if form.group == "za_memory" or form.id.startswith("MOVA_za_") else (ops[2], ops[1])
    tile, vertical, s, offset = za_slice
    dim = state.svl // esize
    index = ((regs[f"x{s}"] & 0xFFFFFFFF) + offset) % dim  # slice = (UInt(X[s, 32]) + offset) MOD dim
    pred = predicate(run, g)
    active = lambda e: predicate_active(pred, e, eb)  # noqa: E731
    limit = MAX_SLICE_ELEMENTS[eb]
    rows = window(dim, WINDOW_ROWS if not vertical else limit, None if vertical else index)
    cols = window(dim, WINDOW_ROWS if vertical else limit, index if vertical else None)
    along = rows if vertical else cols  # the slice's elements drawn
    in_slice = {(vector, e) for vector, start, stop, _ in slice_rows(tile, esize, vertical, index, state.svlb)
                for e in range(start // eb, stop // eb)}  # (ZA vector, element) of the slice's bytes
    vectors = tile_rows(tile, esize, state.svlb)
    za = state.za  # after the step (a store or MOVA to Z leaves it as it was)
    tile_cells = []
    for r in rows:
        vector = int(vectors[r])
        cells = []
        for c in cols:
            bits = element_bits(za[vector], c, eb)
            role = None
            if (vector, c) in in_slice:
                role = "addr" if active(r if vertical else c) else INACTIVE
            cells.append(Cell(hex_text(bits, eb), role, f"ZA[{vector}] element {c}"))
        tile_cells.append(cells)
    name = tile_text(tile, suffix, vertical) + f"[{index}]"
    tile_grid = Grid(f"{tile_text(tile, suffix)}{' after' if to_tile else ''}: slice {name}", tile_cells,
                     [f"{r}: ZA[{int(vectors[r])}]" for r in rows], [str(c) for c in cols], show_text=True,
                     caption=f"{'vertical: column' if vertical else 'horizontal: row'} {index} of {dim}; "
                             f"{esize}-bit elements, hex")
    other, other_title, what = _slice_partner(ins, run, along, eb, active, to_tile)
    if vertical:  # memory (or Z) drawn along the slice: a column beside the tile's column
        other_grid = Grid(other_title, [[c] for c in other], [f"element {e}" for e in along], [""], show_text=True)
        # an arc under both, between the last drawn element and the foot of the slice's column (the space
        # above holds the titles)
        ends = [(other_grid.title, (len(along) - 1, 0)), (tile_grid.title, (len(rows) - 1, cols.index(index)))]
        sides, bend = ("bottom", "bottom"), SLICE_BEND
    else:  # a row right of the tile: the arrow meets the slice's row at its right end, clear of the labels
        other_grid = Grid(other_title, [other], [""], [str(e) for e in along], show_text=True)
        ends = [(other_grid.title, (0, 0)), (tile_grid.title, (rows.index(index), len(cols) - 1))]
        sides, bend = ("left", "right"), 0.0
    if not to_tile:
        ends.reverse()
        sides = sides[::-1]
    panels = [[other_grid, tile_grid] if vertical and to_tile else [tile_grid, other_grid]]
    arrows = [Arrow(ends[0][0], ends[0][1], ends[1][0], ends[1][1], "a", "", sides[0], sides[1], bend)]
    inactive_means = "zeroed" if form.mnemonic.startswith("ld") else ("not stored" if form.mnemonic.startswith("st")
                                                                        else "kept (merging)")
    legend = [("addr", f"the slice's active elements ({what} {'->' if to_tile else '<-'} {name})"),
              (INACTIVE, f"elements p{g} leaves inactive: {inactive_means}")]
    caption = join_captions(elided("tile rows", rows, dim), elided("tile columns", cols, dim),
                            tile_vectors_text(tile_text(tile, suffix), vectors))
    return example_figure(ins, encoding, panels, arrows, legend, caption)


def _stacked(source: Grid, target: Grid):
    """Two one-row grids, the source above the target, and the arrow between their right ends."""
    last = len(source.cells[0]) - 1
    return [[source], [target]], [Arrow(source.title, (0, last), target.title, (0, len(target.cells[0]) - 1),
                                        "a", "", "right", "right", STACK_BEND)]


def za_vector_figure(ins, encoding, run):
    """LDR/STR ZA[Wv, offs]: one ZA vector to or from SVL/8 bytes of memory."""
    state, regs = run.machine.state, run.before["regs"]
    (v, offset), (n, _) = ins.operands
    vec = ((regs[f"x{v}"] & 0xFFFFFFFF) + offset) % state.svlb  # vec = (UInt(X[v, 32]) + offset) MOD dim
    address = (_x(regs, n, True) + offset * state.svlb) & MASK64
    load = ins.form.id == "LDR_za"
    shown = window(state.svlb, 2 * MAX_SLICE_ELEMENTS[1])
    memory = _memory_cells(run, address, shown, 1, lambda e: True)
    za = [Cell(hex_text(int(state.za[vec][e]), 1), "addr") for e in shown]
    memory_grid = Grid(f"memory at {address:#x}" + ("" if load else " after"), [memory], [""],
                       [str(e) for e in shown], group=4, show_text=True)
    za_grid = Grid(f"ZA[{vec}]" + (" after" if load else ""), [za], [""], [str(e) for e in shown], group=4,
                   show_text=True)
    panels, arrows = _stacked(memory_grid, za_grid) if load else _stacked(za_grid, memory_grid)
    caption = join_captions(elided("bytes", shown, state.svlb), f"vec = (w{v} + {offset}) MOD {state.svlb} = {vec}",
                            f"address = x{n} + {offset} × {state.svlb}")
    return example_figure(ins, encoding, panels, arrows, [("addr", "the bytes moved (all: no predicate)")], caption)


def z_memory_figure(ins, encoding, run):
    """LD1*/ST1* of a Z register (widening loads, truncating stores) and LDR/STR of a Z or P register."""
    form = ins.form
    state, regs = run.machine.state, run.before["regs"]
    load = form.mnemonic.startswith("ld")
    if form.id in ("LDR_z", "STR_z", "LDR_p", "STR_p"):
        t, (n, imm) = ins.operands
        size = state.svlb if form.id.endswith("_z") else state.svlb // 8
        start = (_x(regs, n, True) + imm * size) & MASK64
        mb = eb = 1
        elements = size
        active = lambda e: True  # noqa: E731
        register = f"{form.id[-1]}{t}"
        values = state.z[t] if form.id.endswith("_z") else state.p[t]
        governed = ""
    else:
        t, g, (n, k) = ins.operands
        mb = ELEMENT_BYTES[{"b": "b", "h": "h", "w": "s", "d": "d"}[form.mnemonic[3]]]
        eb = ELEMENT_BYTES[form.id.split("_")[2]]
        elements = state.svl // (8 * eb)
        if form.id.endswith("_imm"):  # [Xn, #imm, MUL VL]: imm times one vector's memory elements
            start = _x(regs, n, True) + k * elements * mb
        else:
            start = _x(regs, n, True) + _x(regs, k, False) * mb
        start &= MASK64
        pred = predicate(run, g)
        active = lambda e: predicate_active(pred, e, eb)  # noqa: E731
        register = f"z{t}"
        values = state.z[t]
        governed = f"p{g}"
    shown = window(elements, 2 * MAX_SLICE_ELEMENTS[min(eb, 16)] if eb == 1 else MAX_SLICE_ELEMENTS[eb])
    memory_grid = Grid(f"memory at {start:#x}" + ("" if load else " after"),
                       [_memory_cells(run, start, shown, mb, active)], [""], [str(e) for e in shown],
                       show_text=True, caption=f"{8 * mb}-bit memory elements")
    register_cells = [Cell(hex_text(element_bits(values, e, eb), eb), "addr" if active(e) else INACTIVE)
                      for e in shown]
    register_grid = Grid(register + (" after" if load else ""), [register_cells], [""], [str(e) for e in shown],
                         show_text=True, caption=f"{8 * eb}-bit elements" + (
                             ", each zero-extended" if load and eb > mb else ", each truncated" if eb > mb else ""))
    panels, arrows = _stacked(memory_grid, register_grid) if load else _stacked(register_grid, memory_grid)
    legend = [("addr", "elements moved")]
    if governed:
        legend.append((INACTIVE, f"elements {governed} leaves inactive: " + ("zeroed" if load else "not stored")))
    caption = elided("elements", shown, elements)
    return example_figure(ins, encoding, panels, arrows, legend, caption)
