"""A figure as a self-contained SVG document (no scripts, fonts or links).

A figure is rows of panels: grids (a tile, a memory block) and encodings (a strip of
units, each split into its bit fields), with arrows from grid cell to grid cell.  Each
panel type has its layout class in ``_PANEL_LAYOUTS``.
"""

from __future__ import annotations

import html
from typing import Any

from .model import Encoding, Figure, Grid
from .palette import is_highlight, role_fill

_FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
_CHAR = 0.61  # character width / font size of a monospace font


def _x(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


class _Svg:
    def __init__(self):
        self.items: list[str] = []

    def rect(self, x, y, w, h, fill="none", stroke="#444", sw=1.0, title: str = "", extra: str = ""):
        body = f'<rect x="{_x(x)}" y="{_x(y)}" width="{_x(w)}" height="{_x(h)}" fill="{fill}" stroke="{stroke}" ' \
               f'stroke-width="{_x(sw)}"{extra}'
        if title:
            self.items.append(body + f"><title>{html.escape(title)}</title></rect>")
        else:
            self.items.append(body + "/>")

    def text(self, x, y, s, size=11, anchor="start", weight="normal", fill="#111"):
        self.items.append(f'<text x="{_x(x)}" y="{_x(y)}" font-size="{_x(size)}" text-anchor="{anchor}" '
                          f'font-weight="{weight}" fill="{fill}">{html.escape(s)}</text>')

    def line(self, x1, y1, x2, y2, stroke="#444", sw=1.0):
        self.items.append(f'<line x1="{_x(x1)}" y1="{_x(y1)}" x2="{_x(x2)}" y2="{_x(y2)}" stroke="{stroke}" '
                          f'stroke-width="{_x(sw)}"/>')

    def path(self, d, stroke="#444", sw=1.5, marker=True):
        end = ' marker-end="url(#arrowhead)"' if marker else ""
        self.items.append(f'<path d="{d}" fill="none" stroke="{stroke}" stroke-width="{_x(sw)}"{end}/>')


def _text_width(s: str, size: float) -> float:
    return len(s) * size * _CHAR


class _GridLayout:
    """Where a grid's cells go, for the SVG."""

    def __init__(self, g: Grid):
        self.g = g
        rows, cols = g.shape
        longest = max([len(c.text) for row in g.cells for c in row] + [1])
        show = g.show_text if g.show_text is not None else (cols <= 32 and rows <= 64 and longest <= 12)
        self.show = show
        self.font = 10.0
        if show:
            self.cw = max(16.0, longest * self.font * _CHAR + 6)
            self.ch = 17.0
        else:
            self.cw, self.ch = 10.0, 10.0
        labels = g.row_labels or [str(r) for r in range(rows)]
        self.label_w = max(_text_width(x, 9) for x in labels) + 6 if rows else 0
        self.head_h = 18.0 + (14.0 if g.caption else 0.0)
        self.col_head = 12.0
        self.width = max(self.label_w + cols * self.cw,
                         _text_width(g.title, 12) + 4, _text_width(g.caption, 10) + 4)
        self.height = self.head_h + self.col_head + rows * self.ch
        self.x = self.y = 0.0

    def cell_box(self, r: int, c: int) -> tuple[float, float, float, float]:
        return (self.x + self.label_w + c * self.cw, self.y + self.head_h + self.col_head + r * self.ch,
                self.cw, self.ch)

    def draw(self, svg: _Svg) -> None:
        g = self.g
        rows, cols = g.shape
        svg.text(self.x, self.y + 12, g.title, size=12, weight="bold")
        if g.caption:
            svg.text(self.x, self.y + 26, g.caption, size=10, fill="#555")
        col_labels = g.col_labels or [str(c) for c in range(cols)]
        row_labels = g.row_labels or [str(r) for r in range(rows)]
        step = 1 if self.show else max(1, g.group if g.group > 1 else 8)
        for c in range(0, cols, step):
            x, y, w, h = self.cell_box(0, c)
            svg.text(x + (w / 2 if self.show else 0), y - 3, col_labels[c], size=8,
                     anchor="middle" if self.show else "start", fill="#777")
        for r in range(rows):
            x, y, w, h = self.cell_box(r, 0)
            if self.show or r % 4 == 0 or rows <= 16:
                svg.text(x - 4, y + h / 2 + 3, row_labels[r], size=8 if not self.show else 9, anchor="end",
                         fill="#777")
            if not self.show:  # small cells: one rectangle per run of equal colour, then the lines
                c = 0
                while c < cols:
                    fill = role_fill(g.cells[r][c].role) or "#ffffff"
                    end = c
                    while end + 1 < cols and (role_fill(g.cells[r][end + 1].role) or "#ffffff") == fill:
                        end += 1
                    x, y, w, h = self.cell_box(r, c)
                    svg.rect(x, y, w * (end - c + 1), h, fill=fill, stroke="none", sw=0)
                    c = end + 1
                continue
            for c in range(cols):
                cl = g.cells[r][c]
                x, y, w, h = self.cell_box(r, c)
                fill = role_fill(cl.role) or "#ffffff"
                svg.rect(x, y, w, h, fill=fill, stroke="#bbb", sw=0.5, title=cl.note)
                if self.show:
                    weight = "bold" if is_highlight(cl.role) else "normal"
                    svg.text(x + w - 3, y + h / 2 + 3.5, cl.text, size=self.font, anchor="end", weight=weight)
        x0, y0, _, _ = self.cell_box(0, 0)
        if not self.show:
            for r in range(1, rows):
                svg.line(x0, y0 + r * self.ch, x0 + cols * self.cw, y0 + r * self.ch, stroke="#ccc", sw=0.5)
            for c in range(1, cols):
                svg.line(x0 + c * self.cw, y0, x0 + c * self.cw, y0 + rows * self.ch, stroke="#ccc", sw=0.5)
        if g.group > 1:
            for c in range(0, cols + 1, g.group):
                x = x0 + c * self.cw
                svg.line(x, y0, x, y0 + rows * self.ch, stroke="#555", sw=1.2)
        svg.rect(x0, y0, cols * self.cw, rows * self.ch, stroke="#333", sw=1.2)


class _EncodingLayout:
    """An encoding as a strip of units; a unit whose fields tile it is drawn bit by bit."""

    BIT = 20.0

    def __init__(self, e: Encoding):
        self.e = e
        self.boxes = []  # (x offset, width, unit, drawn bit by bit)
        x = 0.0
        for unit in e.units:
            bitted = unit.fully_split
            w = unit.width * self.BIT if bitted else max(8 * self.BIT, _text_width(unit.data.hex(" "), 11) + 16)
            w = max(w, _text_width(unit.name, 10) + 8)
            self.boxes.append((x, w, unit, bitted))
            x += w + 6
        self.notes = []
        for part in e.units:
            text = "  ·  ".join((f"{f.name}: " if f.name and f.name != part.name else "") + f.meaning
                                + ("" if f.ok is None else (" ✓" if f.ok else " ✗")) for f in part.fields)
            self.notes.append((f"+{part.offset} {part.name}: {text}", any(f.ok is False for f in part.fields)))
        self.width = max(x - 6, _text_width(e.title, 12) + 4, *[_text_width(t, 9.5) for t, _ in self.notes])
        self.height = 18 + 16 + 36 + 8 + 13 * len(self.notes)
        self.x = self.y = 0.0

    def draw(self, svg: _Svg) -> None:
        top = self.y + 18
        if self.e.title:
            svg.text(self.x, self.y + 12, self.e.title, size=12, weight="bold")
        for x, w, part, bitted in self.boxes:
            bx = self.x + x
            svg.text(bx + w / 2, top + 11, f"+{part.offset} {part.name}", size=10, anchor="middle", weight="bold")
            svg.text(bx + w / 2, top + 24, part.data.hex(" ").upper(), size=10, anchor="middle", fill="#555")
            y = top + 30
            if bitted:
                cx = bx
                for i, f in enumerate(part.fields):
                    fw = f.width * self.BIT
                    fill = "#ffb3b3" if f.ok is False else (role_fill(f.role) or role_fill(f"field{i}"))
                    svg.rect(cx, y, fw, 30, fill=fill, stroke="#333", sw=1, title=f"{f.name} = {f.bits}: {f.meaning}")
                    svg.text(cx + fw / 2, y + 11, f.name, size=9, anchor="middle", fill="#333")
                    for j, bit in enumerate(f.bits):
                        svg.text(cx + (j + 0.5) * self.BIT, y + 25, bit, size=11, anchor="middle", weight="bold")
                    cx += fw
            else:
                fill = role_fill(part.fields[0].role) if part.fields else None
                svg.rect(bx, y, w, 30, fill=fill or "#f2f2f2", stroke="#333", sw=1,
                         title="; ".join(f"{f.name}: {f.meaning}" for f in part.fields))
                label = part.fields[0].name if part.fields else part.name
                svg.text(bx + w / 2, y + 19, label, size=10, anchor="middle")
        ty = top + 30 + 30 + 18
        for text, bad in self.notes:
            svg.text(self.x, ty, text, size=9.5, fill="#b00" if bad else "#333")
            ty += 13


def _anchor(box: tuple[float, float, float, float], side: str) -> tuple[float, float]:
    x, y, w, h = box
    return {"left": (x - 2, y + h / 2), "right": (x + w + 2, y + h / 2), "top": (x + w / 2, y - 2),
            "bottom": (x + w / 2, y + h + 2)}.get(side, (x + w / 2, y + h / 2))


# a cell side -> the direction pointing out of the cell from it (a bent arrow's handles point that way)
_OUTWARD = {"top": (0, -1), "bottom": (0, 1), "left": (-1, 0), "right": (1, 0)}

# panel type -> its layout
_PANEL_LAYOUTS: dict[type, Any] = {Grid: _GridLayout, Encoding: _EncodingLayout}


def render_svg(fig: Figure) -> str:
    """The figure as a self-contained SVG document (no scripts, fonts or links)."""
    svg = _Svg()
    margin, gap_x, gap_y = 16.0, (72.0 if fig.arrows else 40.0), 28.0
    y = margin + 24
    layouts: dict[str, Any] = {}
    width = 0.0
    placed = []
    for row in fig.rows:
        x = margin
        row_h = 0.0
        for panel in row:
            lay = _PANEL_LAYOUTS[type(panel)](panel)
            lay.x, lay.y = x, y
            layouts[panel.title] = lay
            placed.append(lay)
            x += lay.width + gap_x
            row_h = max(row_h, lay.height)
        width = max(width, x - gap_x + margin)
        y += row_h + gap_y
    legend_y = y
    legend_h = 18.0 * len(fig.legend)
    caption_lines = fig.caption.split("\n") if fig.caption else []
    height = legend_y + legend_h + 14 * len(caption_lines) + margin
    width = max(width, _text_width(fig.title, 14) + 2 * margin,
                *[_text_width(line, 10) + 2 * margin for line in caption_lines])
    svg.text(margin, margin + 8, fig.title, size=14, weight="bold")
    for lay in placed:
        lay.draw(svg)
    for arrow in fig.arrows:
        a, b = layouts.get(arrow.src), layouts.get(arrow.dst)
        if not isinstance(a, _GridLayout) or not isinstance(b, _GridLayout):
            continue
        x1, y1 = _anchor(a.cell_box(*arrow.src_cell), arrow.src_side)
        x2, y2 = _anchor(b.cell_box(*arrow.dst_cell), arrow.dst_side)
        color = {"a": "#1f5fbf", "b": "#c36a00", "c": "#c0003a"}.get(arrow.role or "", "#444")
        mx = (x1 + x2) / 2
        if arrow.bend:
            (ax, ay), (bx, by) = (_OUTWARD.get(arrow.src_side, (0, -1)), _OUTWARD.get(arrow.dst_side, (0, -1)))
            c1x, c1y = x1 + ax * arrow.bend, y1 + ay * arrow.bend
            c2x, c2y = x2 + bx * arrow.bend, y2 + by * arrow.bend
            svg.path(f"M{_x(x1)},{_x(y1)} C{_x(c1x)},{_x(c1y)} {_x(c2x)},{_x(c2y)} {_x(x2)},{_x(y2)}", stroke=color)
            mx = (x1 + x2 + 3 * (c1x + c2x)) / 8  # the curve's midpoint
            label_y = (y1 + y2 + 3 * (c1y + c2y)) / 8 - 4
        else:
            svg.path(f"M{_x(x1)},{_x(y1)} C{_x(mx)},{_x(y1)} {_x(mx)},{_x(y2)} {_x(x2)},{_x(y2)}", stroke=color)
            label_y = (y1 + y2) / 2 - 4
        if arrow.label:
            svg.text(mx, label_y, arrow.label, size=10, anchor="middle", fill=color)
    ly = legend_y
    for role, meaning in fig.legend:
        svg.rect(margin, ly, 14, 12, fill=role_fill(role) or "#fff", stroke="#333", sw=0.8)
        svg.text(margin + 20, ly + 10, meaning, size=10)
        ly += 18
    for line in caption_lines:
        svg.text(margin, ly + 10, line, size=10, fill="#444")
        ly += 14
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_x(width)}" height="{_x(height)}" '
            f'viewBox="0 0 {_x(width)} {_x(height)}" font-family="{_FONT}">\n'
            f"<title>{html.escape(fig.title)}</title>\n"
            '<defs><marker id="arrowhead" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>\n'
            f'<rect x="0" y="0" width="{_x(width)}" height="{_x(height)}" fill="#ffffff"/>\n')
    return head + "\n".join(svg.items) + "\n</svg>\n"


