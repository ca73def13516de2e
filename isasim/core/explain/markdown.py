"""An explanation as the Markdown of a reference page (``isasim docs``).

Each block type has its renderer in ``_BLOCK_RENDERERS``; a highlighted cell is bold,
a grid is its plain-text lines in a code block.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from .model import Check, Code, Encoding, Explanation, Grid, Paragraph, Table, cell, listed_fields
from .palette import is_highlight
from .terminal import ENCODING_COLUMNS, grid_lines


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _md_cell(c: Any) -> str:
    c = cell(c)
    text = _md_escape(c.text)
    if not text:
        return ""
    return f"**{text}**" if is_highlight(c.role) else text


def _table(block: Table, width: int) -> str:
    if not block.rows:
        return ""
    cols = block.columns if any(block.columns) else ["" for _ in block.columns]
    lines = []
    if block.title:
        lines.append(f"*{block.title}*\n")
    lines.append("| " + " | ".join(_md_escape(c) for c in cols) + " |")
    lines.append("|" + "|".join(" --- " for _ in cols) + "|")
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in block.rows]
    return "\n".join(lines)


def _grid(block: Grid, width: int) -> str:
    text = "\n".join(line.plain.rstrip() for line in grid_lines(block, plain=True, width=width))
    caption = f"{block.caption}\n\n" if block.caption else ""
    return f"**{block.title}**  \n{caption}```text\n{text}\n```"


def _encoding(block: Encoding, width: int) -> str:
    rows = []
    for unit in block.units:
        for i, f in enumerate(listed_fields(unit)):
            mark = "" if f.ok is None else (" ✓" if f.ok else " ✗")
            rows.append([f"+{unit.offset}" if i == 0 else "", unit.data.hex(" ") if i == 0 else "",
                         unit.name if i == 0 else "", f.name, f"`{f.bits}`" if f.bits else "", f.meaning + mark])
    return _table(Table(list(ENCODING_COLUMNS), rows), width)


def _check(block: Check, width: int) -> str:
    verdict = "equal ✓" if block.equal else "DIFFERENT ✗"
    return f"{block.what}: explained `{block.explained}`, machine `{block.machine}`: **{verdict}**"


# block type -> renderer(block, width)
_BLOCK_RENDERERS: dict[type, Callable[[Any, int], str]] = {
    Paragraph: lambda b, width: b.text,
    Code: lambda b, width: "```text\n" + b.text.rstrip("\n") + "\n```",
    Table: _table,
    Grid: _grid,
    Encoding: _encoding,
    Check: _check,
}


def markdown_block(block: Any, width: int) -> str:
    renderer = _BLOCK_RENDERERS.get(type(block))
    if renderer is None:
        raise TypeError(f"not an explanation block: {block!r}")
    return renderer(block, width)


def render_markdown(expl: Explanation, *, figure_file: str | None = None, width: int = 100,
                    preamble: Iterable[str] = ()) -> str:
    lines = [f"# {expl.title}", ""]
    lines.extend(preamble)
    if expl.summary:
        lines += [expl.summary, ""]
    if expl.facts:
        lines += [_table(Table(["", ""], [[k, v] for k, v in expl.facts]), width), ""]
    if figure_file:
        lines += [f"![{expl.figure.title if expl.figure else expl.title}]({figure_file})", ""]
    for section in expl.sections:
        lines += [f"## {section.title}", ""]
        for block in section.blocks:
            text = markdown_block(block, width)
            if text:
                lines += [text, ""]
    return "\n".join(lines).rstrip("\n") + "\n"
