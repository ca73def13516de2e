"""An explanation as a self-contained HTML page: the text sections, with the figure's SVG inline.

Each block type has its renderer in ``_BLOCK_RENDERERS``.
"""

from __future__ import annotations

import html
from typing import Any, Callable

from .model import Cell, Check, Code, Encoding, Explanation, Grid, Paragraph, Table, cell, listed_fields
from .palette import CYCLE_FILLS, ROLES, cycle_position
from .svg import render_svg
from .terminal import ENCODING_COLUMNS

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #111; max-width: 1400px; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; border-bottom: 1px solid #ccc; margin-top: 1.6em; }
pre { background: #f6f6f6; padding: .6em; overflow-x: auto; }
table { border-collapse: collapse; margin: .5em 0; font-family: monospace; font-size: 12px; }
td, th { border: 1px solid #ddd; padding: 1px 6px; text-align: right; }
th { background: #f0f0f0; } td.l, th.l { text-align: left; }
table.grid td { min-width: 1.5em; } .caption { color: #555; font-size: .9em; }
.ok { color: #070; font-weight: bold; } .bad { color: #b00; font-weight: bold; }
figure { margin: 1em 0; overflow-x: auto; }
"""


def _role_css() -> str:
    rules = [f".r-{name} {{ background: {fill}; font-weight: bold; }}" for name, (fill, _) in ROLES.items()]
    rules += [f".r-k{i}, .r-field{i} {{ background: {fill}; font-weight: bold; }}" for i, fill in enumerate(CYCLE_FILLS)]
    return "\n".join(rules)


def _html_cell(c: Any, tag: str = "td", left: bool = False) -> str:
    c = cell(c)
    classes = []
    if c.role:
        position = cycle_position(c.role)
        classes.append(f"r-{position[0]}{position[1]}" if position else f"r-{c.role}")
    if left:
        classes.append("l")
    cls = f' class="{" ".join(classes)}"' if classes else ""
    title = f' title="{html.escape(c.note)}"' if c.note else ""
    return f"<{tag}{cls}{title}>{html.escape(c.text)}</{tag}>"


def _table(block: Table) -> str:
    title = f"<caption>{html.escape(block.title)}</caption>" if block.title else ""
    head = "".join(f'<th class="l">{html.escape(c)}</th>' for c in block.columns)
    body = "".join("<tr>" + "".join(_html_cell(c, left=True) for c in row) + "</tr>" for row in block.rows)
    return f"<table>{title}<tr>{head}</tr>{body}</table>"


def _grid(block: Grid) -> str:
    rows, cols = block.shape
    col_labels = block.col_labels or [str(c) for c in range(cols)]
    row_labels = block.row_labels or [str(r) for r in range(rows)]
    head = "<tr><th></th>" + "".join(f"<th>{html.escape(x)}</th>" for x in col_labels) + "</tr>"
    body = "".join("<tr><th>" + html.escape(row_labels[r]) + "</th>" + "".join(_html_cell(c) for c in block.cells[r])
                   + "</tr>" for r in range(rows))
    caption = f'<div class="caption">{html.escape(block.caption)}</div>' if block.caption else ""
    return f"<h3>{html.escape(block.title)}</h3>{caption}<table class=\"grid\">{head}{body}</table>"


def _encoding(block: Encoding) -> str:
    head = "".join(f'<th class="l">{x}</th>' for x in ENCODING_COLUMNS)
    body = []
    for unit in block.units:
        for i, f in enumerate(listed_fields(unit)):
            mark = "" if f.ok is None else (' <span class="ok">✓</span>' if f.ok else ' <span class="bad">✗</span>')
            body.append("<tr>" + "".join(f'<td class="l">{html.escape(x)}</td>' for x in (
                f"+{unit.offset}" if i == 0 else "", unit.data.hex(" ") if i == 0 else "",
                unit.name if i == 0 else "")) + _html_cell(Cell(f.name, f.role), left=True)
                + f'<td class="l">{html.escape(f.bits)}</td><td class="l">{html.escape(f.meaning)}{mark}</td></tr>')
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _check(block: Check) -> str:
    verdict = '<span class="ok">equal ✓</span>' if block.equal else '<span class="bad">DIFFERENT ✗</span>'
    return (f"<p>{html.escape(block.what)}: explained <code>{html.escape(block.explained)}</code>, "
            f"machine <code>{html.escape(block.machine)}</code> {verdict}</p>")


# block type -> renderer
_BLOCK_RENDERERS: dict[type, Callable[[Any], str]] = {
    Paragraph: lambda b: f"<p>{html.escape(b.text)}</p>",
    Code: lambda b: f"<pre>{html.escape(b.text)}</pre>",
    Table: _table,
    Grid: _grid,
    Encoding: _encoding,
    Check: _check,
}


def html_block(block: Any) -> str:
    renderer = _BLOCK_RENDERERS.get(type(block))
    if renderer is None:
        raise TypeError(f"not an explanation block: {block!r}")
    return renderer(block)


def render_html(expl: Explanation) -> str:
    """A self-contained HTML page: the text sections, with the figure's SVG inline."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(expl.title)}</title>", f"<style>{_CSS}\n{_role_css()}</style></head><body>",
             f"<h1>{html.escape(expl.title)}</h1>"]
    if expl.summary:
        parts.append(f"<p>{html.escape(expl.summary)}</p>")
    if expl.facts:
        parts.append(html_block(Table(["", ""], [[Cell(k), v] for k, v in expl.facts])))
    if expl.figure is not None:
        parts.append(f"<figure>{render_svg(expl.figure)}</figure>")
    for section in expl.sections:
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        parts.extend(html_block(b) for b in section.blocks)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
