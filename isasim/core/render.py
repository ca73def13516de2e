"""Rich views shared by every ISA: typed element grids, register tables, step records.

Floating-point elements are stored as bit patterns; they are shown as the exact
value they encode (shortest repr that round-trips), or as hex on request, never
through a lossy host conversion of a computed result.
"""

from __future__ import annotations

import math
import os

import numpy as np
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from . import numerics


def element_text(bits: int, kind: str, *, hex_digits: int | None = None) -> str:
    """One element as text: ints in decimal, floats as their value, or hex if hex_digits is given."""
    if hex_digits is not None:
        return f"{int(bits) % (1 << (4 * hex_digits)):0{hex_digits}x}"
    if kind == "int":
        return str(int(bits))
    value = {"bf16": numerics.bf16_bits_to_float, "fp16": numerics.fp16_bits_to_float,
             "fp32": numerics.fp32_bits_to_float}[kind](int(bits))
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    if value == int(value) and abs(value) < 1e9:
        return str(int(value))
    return f"{value:.6g}"


def grid(values: np.ndarray, kind: str, *, title: str = "", hex_digits: int | None = None,
         changed: np.ndarray | None = None, width: int = 100, max_rows: int | None = None,
         rows: list[int | None] | None = None, row_labels: list[str] | None = None,
         marked_rows: set[int] | None = None) -> Group:
    """A rows x columns grid of elements, split into column blocks that fit ``width``
    characters (as numpy prints wide arrays); ``changed`` marks cells to highlight.
    With more than ``max_rows`` rows only the first and last max_rows/2 are shown, around
    a row of dots, as numpy summarises a large array.  ``rows`` picks the rows shown instead,
    in order, None standing for a row of dots; ``row_labels`` names every row (default: its
    number), and the labels of ``marked_rows`` are highlighted."""
    total, cols = values.shape
    shown: list[int | None] = list(range(total)) if rows is None else list(rows)
    if rows is None and max_rows is not None and total > max_rows:
        half = max(1, max_rows // 2)
        shown = list(range(half)) + [None] + list(range(total - half, total))
    labels = row_labels if row_labels is not None else [str(r) for r in range(total)]
    texts = {r: [element_text(values[r, c], kind, hex_digits=hex_digits) for c in range(cols)]
             for r in shown if r is not None}
    cell = max([len(t) for row in texts.values() for t in row] + [len(str(cols - 1))]
               + [3 if None in shown else 1])  # a row of dots is 3 wide
    label = max([len(labels[r]) for r in shown if r is not None] + [3 if None in shown else 1])
    per_block = max(1, (width - label - 1) // (cell + 1))
    parts = [Text(title, style="bold")] if title else []
    for first in range(0, cols, per_block):
        last = min(cols, first + per_block)
        table = Table(box=None, show_header=True, header_style="dim", pad_edge=False, padding=(0, 1, 0, 0))
        table.add_column("", justify="right", no_wrap=True)  # each label styles itself: dim, or marked
        for c in range(first, last):
            table.add_column(str(c), justify="right", no_wrap=True, min_width=cell)
        for r in shown:
            if r is None:
                table.add_row(Text("...", style="dim"), *[Text("...", style="dim") for _ in range(first, last)])
                continue
            cells = [Text(texts[r][c], style="bold yellow" if changed is not None and changed[r, c] else "")
                     for c in range(first, last)]
            marked = marked_rows is not None and r in marked_rows
            table.add_row(Text(labels[r], style="bold yellow" if marked else "dim"), *cells)
        parts.append(table)
    hidden = total - sum(r is not None for r in shown)
    if hidden and rows is None:
        parts.append(Text(f"({hidden} of {total} rows not shown)", style="dim"))
    return Group(*parts)


def hex_preview(data: bytes, limit: int) -> str:
    """Bytes as spaced hex pairs, the first ``limit`` of them, saying how many there are when cut."""
    if len(data) <= limit:
        return bytes(data).hex(" ")
    return f"{bytes(data[:limit]).hex(' ')} ... ({len(data)} bytes)"


def markup_safe(text: object) -> str:
    """User- or program-derived text to embed in a rich markup string: square brackets are shown
    rather than read as tags ("[rcx]", a file "y[red].s") and control bytes are written as escapes."""
    from rich.markup import escape

    from .trace import printable

    return escape(printable(str(text)))


def key_value_table(title: str, rows: list[tuple[str, str]], *, highlight: set[str] | None = None) -> Table:
    table = Table(title=title, box=None, show_header=False, title_justify="left", padding=(0, 1))
    table.add_column(style="bold")
    table.add_column()
    for key, value in rows:
        style = "bold yellow" if highlight and key in highlight else ""
        table.add_row(Text(key), Text(value, style=style))  # Text: a key or value is never read as markup
    return table


# What output is laid out for when it is not a terminal and nobody asked for a width: the width the
# grids' column blocks were designed for (COLUMNS, when the environment sets it, overrides it).
PIPED_LAYOUT_WIDTH = 100


class OutputConsole(Console):
    """A command's console.  On a terminal it is rich's console, lines fitted to the terminal.  Elsewhere
    (a pipe, a file, a test's capture) grids, tables and rules are laid out for ``layout_width`` columns,
    but no line of text is wrapped, whatever its length or the path's in it: users grep the output, and a
    file name or a number cut in two is not found."""

    def __init__(self, *, color: bool | None = None, width: int | None = None):
        super().__init__(highlight=False, no_color=color is False, width=width, soft_wrap=False)
        if width is None and not self.is_terminal:
            columns = os.environ.get("COLUMNS", "")
            self.width = int(columns) if columns.isascii() and columns.isdigit() and int(columns) else \
                PIPED_LAYOUT_WIDTH
            self.soft_wrap = True  # text is printed as it is (rich's no_wrap, overflow "ignore")
        self.layout_width = self.width


def console(*, color: bool | None = None, width: int | None = None) -> OutputConsole:
    """The console a command prints on (``width``: lay out and wrap for that many columns, as asked)."""
    return OutputConsole(color=color, width=width)


def layout_width(out: Console) -> int:
    """How wide ``out``'s grids may be: at least 60 columns, else the layout width of a command's console
    or a plain console's width (a recording for an SVG or HTML page)."""
    return max(getattr(out, "layout_width", out.width), 60)


# The older name of numerics.ELEMENT_TYPES, which the stepper still imports.
_REGION_DTYPES = numerics.ELEMENT_TYPES


REGION_ROWS_SHOWN = 32  # a larger region is summarised (its first and last 16 rows)


def region_grid(memory, view, *, hex_values: bool = False, width: int = 100, all_rows: bool = False) -> Group:
    """A named memory region (from an init file) as a typed grid; a region of more than
    REGION_ROWS_SHOWN rows shows its first and last rows unless ``all_rows``."""
    dtype, kind = numerics.ELEMENT_TYPES[view.element]
    rows, cols = view.shape
    raw = memory.read(view.address, rows * cols * np.dtype(dtype).itemsize)
    values = np.frombuffer(raw, dtype=dtype).reshape(rows, cols)
    digits = 2 * np.dtype(dtype).itemsize if hex_values else None
    return grid(values, kind, title=f"{view.name} @ {view.address:#x}  {rows}x{cols} {view.element}",
                hex_digits=digits, width=width, max_rows=None if all_rows else REGION_ROWS_SHOWN)
