"""The picture of an outer product (UMOPA, SMOPA, FMOPA, BFMOPA ... and their MOPS): one grid with
Zm across the top (column ``col`` is its elements ``ways*col + k``), Zn down the side (row ``row``
is elements ``ways*row + k``) and the tile's cells after the step between them.

A Zn or Zm element whose predicate bit (Pn, Pm) is 0 is grey; so is a tile cell that no pair k
reaches (no k with both ``ways*row + k`` active in Pn and ``ways*col + k`` in Pm): it keeps its value.
"""

from __future__ import annotations

from ...core.explain import Cell, Grid
from ..semantics.za_tiles import tile_rows
from .drawing import (
    INACTIVE, MAX_TILE_ELEMENTS, element_bits, elided, example_figure, fp_text, hex_text, int_text, join_captions,
    predicate, predicate_active, tile_vectors_text, window,
)


class _OuterGeometry:
    """The form's widths and how its values are written."""

    def __init__(self, form):
        shape = form.extra["shape"]
        if form.group == "fp_outer":
            self.esize = 32
            self.ways = 1 if shape.kind == "fmopa" else 2
            self.source_kind = {"fmopa": "fp32", "fmopa_widening": "fp16", "bfmopa": "bf16"}[shape.kind]
            self.signed1 = self.signed2 = False
        else:
            self.esize, self.ways = shape.esize, shape.ways
            self.source_kind = None
            self.signed1, self.signed2 = shape.signed1, shape.signed2
        self.subtract = shape.subtract
        self.source_bytes = self.esize // self.ways // 8

    def source_text(self, bits: int, signed: bool) -> str:
        if self.source_kind:
            return fp_text(bits, self.source_kind)
        return int_text(bits, 8 * self.source_bytes, signed)

    def tile_text(self, bits: int) -> str:
        return fp_text(bits, "fp32") if self.source_kind else hex_text(bits, self.esize // 8)


def outer_figure(ins, encoding, run):
    geo = _OuterGeometry(ins.form)
    da, a, b, n, m = ins.operands
    state, before = run.machine.state, run.before
    ways, nb, eb = geo.ways, geo.source_bytes, geo.esize // 8
    dim = state.svl // geo.esize
    shown = window(dim, MAX_TILE_ELEMENTS)
    pn, pm = predicate(run, a), predicate(run, b)
    zn, zm = before["z"][n], before["z"][m]
    vectors = tile_rows(da, geo.esize, state.svlb)

    def source(z, pred, j, signed, role):
        bits = element_bits(z, j, nb)
        on = predicate_active(pred, j, nb)
        return Cell(geo.source_text(bits, signed), role if on else INACTIVE,
                    f"element {j} = {hex_text(bits, nb)}" + ("" if on else ": inactive, counts as 0"))

    corner = [Cell("") for _ in range(ways)]
    top = [corner + [source(zm, pm, ways * col + k, geo.signed2, "b") for col in shown] for k in range(ways)]
    body = []
    for row in shown:
        cells = [source(zn, pn, ways * row + k, geo.signed1, "a") for k in range(ways)]
        vector = int(vectors[row])
        for col in shown:
            reached = any(predicate_active(pn, ways * row + k, nb) and predicate_active(pm, ways * col + k, nb)
                          for k in range(ways))
            bits = element_bits(state.za[vector], col, eb)
            old = element_bits(before["za"][vector], col, eb)
            role = ("c" if (row, col) == (0, 0) else None) if reached else INACTIVE
            cells.append(Cell(geo.tile_text(bits), role,
                              f"ZA[{vector}] element {col}: {hex_text(old, eb)} -> {hex_text(bits, eb)}"
                              + ("" if reached else " (no active pair: kept)")))
        body.append(cells)
    suffix = "S" if geo.esize == 32 else "D"

    def lane(z, k):  # the label of narrow element k of a row's or column's element group
        return f"z{z} k{k}" if ways > 1 else f"z{z}"

    row_labels = [lane(m, k) for k in range(ways)] + [f"row {row}: ZA[{int(vectors[row])}]" for row in shown]
    col_labels = [lane(n, k) for k in range(ways)] + [f"col {col}" for col in shown]
    sources = geo.source_kind or "integers"
    grid = Grid(f"ZA{da}.{suffix} after: Zn = z{n} (p{a}) down the side, Zm = z{m} (p{b}) across the top",
                top + body, row_labels, col_labels, show_text=True,
                caption=f"sources {sources}; tile {geo.esize}-bit " + ("fp32" if geo.source_kind else "hex"))
    sign = "-" if geo.subtract else "+"
    pair = f"Σk Zn[{ways}·row+k] × Zm[{ways}·col+k]" if ways > 1 else "Zn[row] × Zm[col]"
    legend = [("a", f"Zn elements active in p{a} (Pn, the rows)"),
              ("b", f"Zm elements active in p{b} (Pm, the columns)"),
              (INACTIVE, "inactive elements, and tile cells no active pair reaches (kept)"),
              ("c", f"element (0, 0): ZA[{int(vectors[0])}] element 0")]
    caption = join_captions(f"tile(row, col) {sign}= {pair}, each pair counted when both elements are active",
                            elided("tile rows and columns", shown, dim),
                            tile_vectors_text(f"ZA{da}.{suffix}", vectors))
    return example_figure(ins, encoding, [[grid]], (), legend, caption)
