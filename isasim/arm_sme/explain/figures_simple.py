"""The picture of every other form (scalar, control, predicates, counts, modes, ZERO): the encoding
and what the step changed, from the machine's journal: each register's old and new value, a
predicate's elements (active or not), the memory written, the pc.
"""

from __future__ import annotations

from ...core.explain import Cell, Grid
from ...core.render import hex_preview
from .drawing import INACTIVE, example_figure, join_captions, predicate_active, window

MAX_WRITES = 12  # journal writes listed (SMSTART's zeroing writes 48 registers and ZA)
MAX_PREDICATE_ELEMENTS = 32


def _value_text(value) -> str:
    """A register's value in hex, or an array's first bytes."""
    return hex_preview(value, 12) if isinstance(value, (bytes, bytearray)) else f"{value:#x}"


def _predicate_grid(name: str, bits, form, svl: int) -> Grid:
    """Predicate ``name`` after the step, as its elements of the form's size: 1 active, 0 inactive."""
    suffix = form.id.split("_")[1] if form.group == "predicate" else "b"
    ebytes = {"b": 1, "h": 2, "s": 4, "d": 8}.get(suffix, 1)
    elements = svl // (8 * ebytes)
    shown = window(elements, MAX_PREDICATE_ELEMENTS)
    cells = [Cell("1", "ok") if predicate_active(bits, e, ebytes) else Cell("0", INACTIVE) for e in shown]
    count = sum(predicate_active(bits, e, ebytes) for e in range(elements))
    caption = f"{count} of {elements} .{suffix} elements active" + (
        f"; elements {shown.start}-{shown.stop - 1} drawn" if len(shown) < elements else "")
    return Grid(f"{name}.{suffix} after", [cells], [""], [str(e) for e in shown], show_text=True,
                caption=caption)


def changes_figure(ins, encoding, run):
    """The journal's writes as a table of old -> new (and a written predicate drawn element by element)."""
    state, before = run.machine.state, run.before
    writes = run.record.writes
    listed = writes[:MAX_WRITES]
    rows = [[Cell(_value_text(w.old), "kept"), Cell(_value_text(w.new), "changed")] for w in listed]
    labels = [f"memory {w.where:#x}" if w.kind == "mem" else str(w.where) for w in listed]
    rows.append([Cell(f"{before['regs']['pc']:#x}", "kept"), Cell(f"{state.pc:#x}", "changed")])
    labels.append("pc")
    more = len(writes) - len(listed)
    changes = Grid("What the step changed (the machine's journal)", rows, labels, ["before", "after"],
                   show_text=True, caption=join_captions(f"{more} more writes not listed" if more > 0 else "",
                                                         "no register, array or memory written" if not writes else ""))
    panels = [[changes]]
    # a predicate form's Pd, written or not (an unchanged value may not be journalled); else a P the journal names
    if ins.form.group == "predicate":
        predicates = [(f"p{ins.operands[0]}", state.p[ins.operands[0]])]
    else:
        predicates = [(str(w.where), w.new) for w in listed
                      if w.kind == "array" and getattr(w.where, "name", "").startswith("p")][:1]
    if predicates:
        panels.append([_predicate_grid(*predicates[0], ins.form, state.svl)])
    legend = [("kept", "before the step"), ("changed", "after it")]
    if predicates:
        legend += [("ok", "active element (predicate bit 1)"), (INACTIVE, "inactive element (bit 0)")]
    return example_figure(ins, encoding, panels, (), legend)
