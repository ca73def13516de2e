"""Pictures of a ZA vector group: the integer and FP dots (Zn beside the group's ZA vectors, Zm on the
other side, the lanes feeding element 0 of the first vector drawn as arrows) and MOVA of a group.

The group's vectors are the ZA vectors the machine's journal wrote, in the order it wrote them
(r = 0, 1, ...); each row is coloured by its r, and so are the Z registers that feed it.
"""

from __future__ import annotations

from ...core.explain import Arrow, Cell, Grid
from ..semantics.za_tiles import vector_group_rows
from .drawing import (
    MAX_GROUP_ELEMENTS, element_bits, elided, example_figure, fp_text, hex_text, int_text, join_captions, window,
)

LANE_BEND = 64.0  # how far above the panels the lane arrows arc: clear of the grids' titles


def written_za_vectors(run) -> list[int]:
    """The ZA vectors the step's journal wrote, in the order it wrote them."""
    return [w.where.subscript for w in run.record.writes if getattr(w.where, "name", None) == "za"]


class _DotGeometry:
    """What the form's shape says about its operands: element widths, lanes, how values are written."""

    def __init__(self, form):
        shape = form.extra["shape"]
        self.nreg, self.second = shape.nreg, shape.second
        if form.group == "fp_dot":
            self.esize, self.ways, self.vertical = 32, 2, False
            self.source_kind = "fp16" if shape.kind == "fdot" else "bf16"
            self.signed1 = self.signed2 = False
        else:
            self.esize, self.ways, self.vertical = shape.esize, shape.ways, shape.vertical
            self.source_kind = None
            self.signed1, self.signed2 = shape.signed1, shape.signed2
        self.source_bits = self.esize // self.ways
        self.narrow = "bhsd"[(self.source_bits // 8).bit_length() - 1]  # the sources' element suffix

    def source_text(self, bits: int, signed: bool) -> str:
        if self.source_kind:
            return fp_text(bits, self.source_kind)
        return int_text(bits, self.source_bits, signed)

    def result_text(self, bits: int) -> str:
        return fp_text(bits, "fp32") if self.source_kind else hex_text(bits, self.esize // 8)


def _z_cells(z, register: int, columns: range, nbytes: int, text, role_of) -> list[Cell]:
    cells = []
    for j in columns:
        bits = element_bits(z[register], j, nbytes)
        cells.append(Cell(text(bits), role_of(j), f"z{register} element {j} = {hex_text(bits, nbytes)}"))
    return cells


def _zn_panel(geo: _DotGeometry, n: int, z, lanes: range):
    """Zn's registers before the step, and the cells holding the lanes of ZA element 0 of r = 0.

    A horizontal dot's vector r reads register n+r (elements ways*e + i): its row is coloured r.  A
    vertical dot's vector r reads position ways*e + r of each register n+i: there the columns carry r."""
    ways = geo.ways
    if geo.vertical:
        registers = [(n + i) % 32 for i in range(ways)]
        role = lambda i, j: "a" if j == 0 else f"k{j % ways}"  # noqa: E731
        labels = [f"z{reg} (i = {i})" for i, reg in enumerate(registers)]
        lane_cells = [(i, 0) for i in range(ways)]
        title = f"Zn..Zn+{ways - 1} before"
    else:
        registers = [(n + r) % 32 for r in range(geo.nreg)]
        role = lambda r, j: "a" if r == 0 and j < ways else f"k{r}"  # noqa: E731
        labels = [f"z{reg} (r = {r})" for r, reg in enumerate(registers)]
        lane_cells = [(0, i) for i in range(ways)]
        title = "Zn list before"
    cells = [_z_cells(z, reg, lanes, geo.source_bits // 8, lambda b: geo.source_text(b, geo.signed1),
                      lambda j, row=row: role(row, j)) for row, reg in enumerate(registers)]
    grid = Grid(title, cells, labels, [str(j) for j in lanes], group=ways, show_text=True,
                caption=f".{geo.narrow} elements ({geo.source_kind or ('signed' if geo.signed1 else 'unsigned')})")
    return grid, lane_cells, registers


def _zm_panel(geo: _DotGeometry, m, z, lanes: range):
    """Zm before the step: one register read by every r (single, indexed) or register m+r for vector r
    (multiple); and the cells holding the lanes of ZA element 0 of r = 0."""
    ways = geo.ways
    if geo.second == "multiple":
        registers = [(m + r) % 32 for r in range(geo.nreg)]
        role = lambda r, j: "b" if r == 0 and j < ways else f"k{r}"  # noqa: E731
        labels = [f"z{reg} (r = {r})" for r, reg in enumerate(registers)]
        title, first = "Zm list before", 0
    elif geo.second == "indexed":
        zm, index = m
        registers, labels, title, first = [zm], [f"z{zm}"], f"Zm = z{zm}[{index}] before", ways * index
        per_segment = 128 // geo.esize  # ZA elements per 128-bit segment; each reads group `index` of its segment

        def role(r, j):
            group = j // ways
            if group % per_segment != index:
                return "dim"  # no ZA element reads it
            return "b" if group == index else None
    else:
        registers, labels, title, first = [m], [f"z{m}"], f"Zm = z{m} before", 0
        role = lambda r, j: "b" if j < ways else None  # noqa: E731
    cells = [_z_cells(z, reg, lanes, geo.source_bits // 8, lambda b: geo.source_text(b, geo.signed2),
                      lambda j, row=row: role(row, j)) for row, reg in enumerate(registers)]
    grid = Grid(title, cells, labels, [str(j) for j in lanes], group=ways, show_text=True,
                caption=f".{geo.narrow} elements ({geo.source_kind or ('signed' if geo.signed2 else 'unsigned')})")
    return grid, [(0, first + i) for i in range(ways)]


def dot_figure(ins, encoding, run):
    """Zn | the group's ZA vectors after the step | Zm, with the lanes of ZA element 0 of r = 0."""
    geo = _DotGeometry(ins.form)
    (v, offset), n, m = ins.operands
    state, before = run.machine.state, run.before
    rows = written_za_vectors(run)
    if not rows:  # nothing was journalled: draw the group the operands name (it was left as it was)
        rows = vector_group_rows(state.svlb, before["regs"][f"x{v}"], offset, geo.nreg)
    ways, ebytes = geo.ways, geo.esize // 8
    elements = state.svl // geo.esize
    shown = window(elements, MAX_GROUP_ELEMENTS)
    lanes = range(shown.stop * ways)  # the narrow elements that feed the drawn ZA elements
    zn_grid, zn_lanes, zn_registers = _zn_panel(geo, n, before["z"], lanes)
    zm_grid, zm_lanes = _zm_panel(geo, m, before["z"], lanes)
    za_cells = []
    for r, row in enumerate(rows):
        cells = []
        for e in shown:
            bits = element_bits(state.za[row], e, ebytes)
            old = element_bits(before["za"][row], e, ebytes)
            cells.append(Cell(geo.result_text(bits), "c" if (r, e) == (0, 0) else f"k{r}",
                              f"ZA[{row}] element {e}: {hex_text(old, ebytes)} -> {hex_text(bits, ebytes)}"))
        za_cells.append(cells)
    suffix = "S" if geo.esize == 32 else "D"
    za_grid = Grid(f"ZA.{suffix} group after", za_cells, [f"r = {r}: ZA[{row}]" for r, row in enumerate(rows)],
                   [str(e) for e in shown], show_text=True,
                   caption=f"{geo.esize}-bit elements" + (", fp32" if geo.source_kind else ", hex"))
    arrows = [Arrow(zn_grid.title, cell, za_grid.title, (0, 0), "a", "", "top", "top", LANE_BEND)
              for cell in zn_lanes]
    arrows += [Arrow(zm_grid.title, cell, za_grid.title, (0, 0), "b", "", "top", "top", LANE_BEND)
               for cell in zm_lanes]
    legend = [(f"k{r}", f"r = {r}: ZA[{row}]" + ("" if geo.vertical else f", fed by z{zn_registers[r]}"))
              for r, row in enumerate(rows)]
    legend += [("a", f"the {ways} Zn lanes of ZA[{rows[0]}] element 0"),
               ("b", f"the {ways} Zm lanes of ZA[{rows[0]}] element 0"),
               ("c", f"ZA[{rows[0]}] element 0 (r = 0), the sum of those {ways} products added to it")]
    if geo.second == "indexed":
        legend.append(("dim", "Zm elements no ZA element reads (another index of their 128-bit segment)"))
    caption = join_captions(elided("ZA elements", shown, elements),
                            elided(f".{geo.narrow} source elements", lanes, state.svl // geo.source_bits),
                            f"the other {state.svlb - len(rows)} ZA vectors are not touched")
    return example_figure(ins, encoding, [[zn_grid, za_grid, zm_grid]], arrows, legend, caption)


def move_figure(ins, encoding, run):
    """MOVA of a vector group: Z register r to or from the group's vector r, row by row."""
    form = ins.form
    nreg = int(form.id[-1])
    to_vectors = form.id.startswith("MOVA_z_")
    (v, offset), first = (ins.operands[1], ins.operands[0]) if to_vectors else (ins.operands[0], ins.operands[1])
    state, before = run.machine.state, run.before
    if to_vectors:  # the journal names the Z registers written; the group's rows are the operand's
        rows = vector_group_rows(state.svlb, before["regs"][f"x{v}"], offset, nreg)
    else:
        rows = written_za_vectors(run) or vector_group_rows(state.svlb, before["regs"][f"x{v}"], offset, nreg)
    registers = [(first + r) % 32 for r in range(nreg)]
    elements = state.svlb // 8
    shown = window(elements, MAX_GROUP_ELEMENTS)

    def cells(vectors, r):
        return [Cell(hex_text(element_bits(vectors, e, 8), 8), f"k{r}") for e in shown]

    z_source = state.z if to_vectors else before["z"]
    z_grid = Grid("Z list after" if to_vectors else "Z list", [cells(z_source[reg], r) for r, reg in
                                                               enumerate(registers)],
                  [f"z{reg} (r = {r})" for r, reg in enumerate(registers)], [str(e) for e in shown], show_text=True,
                  caption="64-bit elements, hex")
    za_grid = Grid("ZA.D group" + ("" if to_vectors else " after"), [cells(state.za[row], r) for r, row in
                                                                      enumerate(rows)],
                   [f"r = {r}: ZA[{row}]" for r, row in enumerate(rows)], [str(e) for e in shown], show_text=True,
                   caption="64-bit elements, hex")
    last = len(shown) - 1
    if to_vectors:
        panels = [[za_grid, z_grid]]
        arrows = [Arrow(za_grid.title, (r, last), z_grid.title, (r, 0), f"k{r}", "", "right", "left")
                  for r in range(nreg)]
    else:
        panels = [[z_grid, za_grid]]
        arrows = [Arrow(z_grid.title, (r, last), za_grid.title, (r, 0), f"k{r}", "", "right", "left")
                  for r in range(nreg)]
    legend = [(f"k{r}", f"r = {r}: z{registers[r]} {'<-' if to_vectors else '->'} ZA[{row}]")
              for r, row in enumerate(rows)]
    caption = join_captions(elided("elements", shown, elements), "every element moves (no predicate)")
    return example_figure(ins, encoding, panels, arrows, legend, caption)
