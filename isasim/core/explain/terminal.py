"""An explanation on the terminal (rich), as plain text, and as a rich-recorded SVG screenshot.

Each block type has its renderer in ``_BLOCK_RENDERERS``; in plain text a highlighted
cell is written [like this], in colour it is styled by its role.
"""

from __future__ import annotations

import io
from typing import Any, Callable

from rich.console import Console, Group
from rich.rule import Rule
from rich.table import Table as RichTable
from rich.text import Text as RichText

from .model import Cell, Check, Code, Encoding, Explanation, Grid, Paragraph, Table, cell, listed_fields
from .palette import is_highlight, role_style

ENCODING_COLUMNS = ("byte", "hex", "part", "field", "bits", "meaning")


def _style(style: str, plain: bool) -> str:
    return "" if plain else style


def _rich_cell(c: Any, plain: bool) -> RichText:
    c = cell(c)
    return RichText(c.text, style=_style(role_style(c.role), plain))


def _rich_table(t: Table, plain: bool, width: int):
    table = RichTable(box=None, header_style=_style("bold", plain), padding=(0, 1), show_edge=False,
                      show_header=any(t.columns))
    for name in t.columns:
        table.add_column(RichText(name), overflow="fold")
    for row in t.rows:
        table.add_row(*[_rich_cell(c, plain) for c in row])
    if t.title:
        return Group(RichText(t.title, style=_style("bold", plain)), table)
    return table


def grid_lines(g: Grid, *, plain: bool, width: int = 100) -> list[RichText]:
    """A grid as lines of text, split into column blocks that fit ``width``."""
    rows, cols = g.shape
    texts = [[c.text for c in row] for row in g.cells]
    col_labels = g.col_labels or [str(c) for c in range(cols)]
    row_labels = g.row_labels or [str(r) for r in range(rows)]
    cellw = max([len(t) for row in texts for t in row] + [len(x) for x in col_labels] + [1])
    labelw = max([len(x) for x in row_labels] + [1])
    slot = cellw + 2
    per_block = max(1, (width - labelw - 1) // slot)
    if g.group > 1 and per_block > g.group:
        per_block -= per_block % g.group  # a block never splits a group (a dword)
    lines: list[RichText] = []
    for first in range(0, max(cols, 1), per_block):
        last = min(cols, first + per_block)
        head = RichText(" " * (labelw + 1), style="dim")
        for c in range(first, last):
            head.append(col_labels[c].rjust(cellw + 1) + " ", style="dim")
        lines.append(head)
        for r in range(rows):
            line = RichText(row_labels[r].rjust(labelw) + " ", style="dim")
            for c in range(first, last):
                cl = g.cells[r][c]
                if plain and is_highlight(cl.role):
                    line.append("[" + cl.text.rjust(cellw) + "]")
                else:
                    line.append(" " + cl.text.rjust(cellw) + " ", style=_style(role_style(cl.role), plain))
            lines.append(line)
    return lines


def _rich_grid(g: Grid, plain: bool, width: int):
    parts: list[Any] = [RichText(g.title, style=_style("bold", plain))]
    if g.caption:
        parts.append(RichText(g.caption, style=_style("dim", plain)))
    parts.extend(grid_lines(g, plain=plain, width=width))
    return Group(*parts)


def _rich_encoding(e: Encoding, plain: bool, width: int):
    table = RichTable(box=None, header_style=_style("bold", plain), padding=(0, 1), show_edge=False)
    for name in ENCODING_COLUMNS:
        table.add_column(RichText(name), overflow="fold")
    for unit in e.units:
        for i, f in enumerate(listed_fields(unit)):
            meaning = RichText(f.meaning)
            if f.ok is not None:
                meaning.append(" ✓" if f.ok else " ✗", style=_style("bold green" if f.ok else "bold red", plain))
            table.add_row(f"+{unit.offset}" if i == 0 else "", unit.data.hex(" ") if i == 0 else "",
                          unit.name if i == 0 else "", RichText(f.name, style=_style(role_style(f.role), plain)),
                          RichText(f.bits), meaning)
    return table


def _rich_check(c: Check, plain: bool, width: int):
    t = RichText()
    t.append(f"{c.what}: explained {c.explained}, machine {c.machine}  ")
    if c.equal:
        t.append("equal ✓", style=_style("bold green", plain))
    else:
        t.append("DIFFERENT ✗", style=_style("bold red", plain))
    return t


# block type -> renderer(block, plain, width)
_BLOCK_RENDERERS: dict[type, Callable[[Any, bool, int], Any]] = {
    Paragraph: lambda b, plain, width: RichText(b.text),
    Code: lambda b, plain, width: RichText(b.text, style=_style("cyan", plain)),
    Table: _rich_table,
    Grid: _rich_grid,
    Encoding: _rich_encoding,
    Check: _rich_check,
}


def render_block(block: Any, *, plain: bool, width: int):
    renderer = _BLOCK_RENDERERS.get(type(block))
    if renderer is None:
        raise TypeError(f"not an explanation block: {block!r}")
    return renderer(block, plain, width)


def renderables(expl: Explanation, *, plain: bool = False, width: int = 100) -> list[Any]:
    out: list[Any] = [RichText(expl.title, style=_style("bold", plain))]
    if expl.summary:
        out.append(RichText(expl.summary))
    if expl.facts:
        out.append(_rich_table(Table(["", ""], [[Cell(k, "dim"), v] for k, v in expl.facts]), plain, width))
    for section in expl.sections:
        out.append(RichText(""))
        out.append(Rule(RichText(section.title), align="left", style=_style("bold", plain)))
        for block in section.blocks:
            out.append(render_block(block, plain=plain, width=width))
    return out


def print_explanation(expl: Explanation, console: Console, *, plain: bool = False) -> None:
    for r in renderables(expl, plain=plain, width=console.width):
        console.print(r)


def _recording_console(width: int, color: bool) -> Console:
    # force_jupyter=False: inside a notebook rich would also display every line it records
    return Console(record=True, width=width, file=io.StringIO(), force_terminal=color, no_color=not color,
                   color_system="truecolor" if color else None, highlight=False, soft_wrap=False,
                   legacy_windows=False, emoji=False, force_jupyter=False)


def to_text(expl: Explanation, *, width: int = 100) -> str:
    """Plain text, as ``isasim explain --no-color`` prints it."""
    con = _recording_console(width, False)
    print_explanation(expl, con, plain=True)
    return "\n".join(line.rstrip() for line in con.export_text().splitlines()) + "\n"


def terminal_svg(expl: Explanation, *, width: int = 100, title: str | None = None) -> str:
    """The coloured terminal output, as rich records it (a screenshot of the command)."""
    con = _recording_console(width, True)
    print_explanation(expl, con)
    return con.export_svg(title=title or f"isasim explain {expl.text}")
