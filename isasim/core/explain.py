"""``isasim explain``: what an explanation is, and how it is shown.

An ISA's explainer (``isasim.<isa>.explain``) turns one instruction into an
:class:`Explanation`: the encoding field by field, the operands, the operation
(the docstring of the semantics function the simulator executes), the faults
it can raise, and a worked example whose numbers come from running the real
:class:`~isasim.core.machine.Machine` on the real instruction.  This module
knows nothing about any ISA.  It holds

* the data model: :class:`Explanation` made of :class:`Section` s of blocks
  (:class:`Paragraph`, :class:`Code`, :class:`Table`, :class:`Grid`,
  :class:`Encoding`, :class:`Check`), and a :class:`Figure` (grids and an
  encoding strip laid out in rows, with arrows between cells);
* the renderers: the terminal (rich), plain text, a self-contained SVG of the
  figure, a self-contained HTML page, and the Markdown of a reference page.

Highlighted cells carry a *role* ("a", "b", "c", "k3", "even", "field2", ...);
every renderer maps roles to the same palette, so a colour means the same thing
in the terminal, the picture and the page.  Plain text marks a highlighted cell
with brackets instead.
"""

from __future__ import annotations

import html
import io
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from rich.console import Console, Group
from rich.rule import Rule
from rich.table import Table as RichTable
from rich.text import Text as RichText

from .errors import ConfigError, IsasimError


class ExplainError(IsasimError):
    """An instruction or option ``isasim explain`` cannot work with."""


# ---------------------------------------------------------------------------
# Roles and their colours (one palette for every renderer)
# ---------------------------------------------------------------------------

# role -> (SVG/HTML fill, rich style)
_ROLES: dict[str, tuple[str, str]] = {
    "a": ("#cfe2ff", "bold blue"),
    "b": ("#ffe3c2", "bold dark_orange"),
    "c": ("#ffc9d6", "bold red"),
    "result": ("#ffc9d6", "bold red"),
    "even": ("#c8f0d4", "bold green"),
    "odd": ("#e6d4ff", "bold magenta"),
    "addr": ("#c9f1f4", "bold cyan"),
    "kept": ("#e9e9e9", "dim"),
    "zeroed": ("#f4f4f4", "dim"),
    "dim": ("#f4f4f4", "dim"),
    "ok": ("#c8f0d4", "bold green"),
    "bad": ("#ffb3b3", "bold red"),
    "changed": ("#fff1a8", "bold yellow"),
}
# cycles for indices (k of a dot product) and for fields of a byte layout
_CYCLE_FILLS = ["#ffd6a5", "#caffbf", "#9bf6ff", "#bdb2ff", "#ffadad", "#fdffb6", "#a0c4ff", "#ffc6ff"]
_CYCLE_STYLES = ["bold dark_orange", "bold green", "bold cyan", "bold blue", "bold red", "bold yellow",
                 "bold bright_blue", "bold magenta"]


def role_fill(role: str | None) -> str | None:
    if role is None:
        return None
    if role in _ROLES:
        return _ROLES[role][0]
    m = re.fullmatch(r"(k|field)(\d+)", role)
    if m:
        return _CYCLE_FILLS[int(m.group(2)) % len(_CYCLE_FILLS)]
    return None


def role_style(role: str | None) -> str:
    if role is None:
        return ""
    if role in _ROLES:
        return _ROLES[role][1]
    m = re.fullmatch(r"(k|field)(\d+)", role)
    if m:
        return _CYCLE_STYLES[int(m.group(2)) % len(_CYCLE_STYLES)]
    return ""


def _is_highlight(role: str | None) -> bool:
    return role is not None and role not in ("dim", "kept", "zeroed")


# ---------------------------------------------------------------------------
# The data model
# ---------------------------------------------------------------------------


@dataclass
class Cell:
    """A value in a table or grid, optionally highlighted with a role; ``note`` is a tooltip."""

    text: str
    role: str | None = None
    note: str = ""


def cell(value: Any) -> Cell:
    return value if isinstance(value, Cell) else Cell(str(value))


@dataclass
class Paragraph:
    text: str


@dataclass
class Code:
    """Preformatted text: pseudocode, a program listing."""

    text: str


@dataclass
class Table:
    columns: list[str]
    rows: list[list[Any]]  # Cell or anything str() can show
    title: str = ""


@dataclass
class Grid:
    """A matrix of values (a tile, a memory block, a byte layout) with highlighted cells."""

    title: str
    cells: list[list[Cell]]
    row_labels: list[str] | None = None
    col_labels: list[str] | None = None
    group: int = 1  # a heavier line every ``group`` columns (e.g. 4 bytes = one dword)
    caption: str = ""
    show_text: bool | None = None  # None: show values when the grid is small enough to read

    @property
    def shape(self) -> tuple[int, int]:
        return len(self.cells), (len(self.cells[0]) if self.cells else 0)


@dataclass
class BitField:
    """One field of an encoded byte: its name, its bits as written, what they mean."""

    name: str
    bits: str
    meaning: str
    ok: bool | None = None  # True: matches the definition; False: breaks it; None: no rule
    role: str | None = None


@dataclass
class EncodedPart:
    """Consecutive bytes of an encoding with one name (a prefix byte, ModRM, disp32, ...)."""

    offset: int
    data: bytes
    name: str
    fields: list[BitField] = field(default_factory=list)


@dataclass
class Encoding:
    parts: list[EncodedPart]
    title: str = ""


@dataclass
class Check:
    """A number the explanation derived, and the same number as the machine computed it."""

    what: str
    explained: str
    machine: str

    @property
    def equal(self) -> bool:
        return self.explained == self.machine


@dataclass
class Section:
    title: str
    blocks: list[Any] = field(default_factory=list)


@dataclass
class Arrow:
    """From cell (row, col) of the ``src`` panel to cell (row, col) of the ``dst`` panel (panel titles)."""

    src: str
    src_cell: tuple[int, int]
    dst: str
    dst_cell: tuple[int, int]
    role: str | None = None
    label: str = ""
    src_side: str = "center"  # where on the cell the arrow starts: center, left, right, top, bottom
    dst_side: str = "center"


@dataclass
class Figure:
    title: str
    rows: list[list[Grid | Encoding]]
    arrows: list[Arrow] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)  # (role, meaning)
    caption: str = ""


@dataclass
class Explanation:
    isa: str
    title: str  # e.g. "TDPBUSD tmm1, tmm2, tmm3"
    text: str  # the instruction explained, canonical, e.g. "tdpbusd tmm0,tmm1,tmm2"
    encoding: bytes
    summary: str
    facts: list[tuple[str, str]] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    figure: Figure | None = None
    command: str = ""  # the isasim command that reproduces this explanation

    def section(self, title: str) -> Section:
        for s in self.sections:
            if s.title == title:
                return s
        raise KeyError(title)

    @property
    def checks(self) -> list[Check]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Check)]


# ---------------------------------------------------------------------------
# What the command passes to an ISA's explainer
# ---------------------------------------------------------------------------


@dataclass
class ExplainOptions:
    cpu: str | None = None
    element: tuple[int | None, int | None] = (None, None)  # (m, n) of a matrix instruction's output
    shape: tuple[int, ...] | None = None
    seed: int = 1
    init: Any = None  # an isasim.core.trace.Init
    init_source: str | None = None
    start_row: int | None = None
    max_steps: int = 10_000


# The ISAs with an explainer: those of core.isa.KNOWN_ISAS whose ISA object has the ``explainer`` hook.
# One registry (KNOWN_ISAS), so a new ISA is added in one place; a name-only view so that listing
# them (docs) needs no import.
class _Explainers:
    def __iter__(self):
        from .isa import KNOWN_ISAS

        return iter([name for name in sorted(KNOWN_ISAS) if _has_explainer(name)])

    def __contains__(self, name) -> bool:
        from .isa import KNOWN_ISAS

        return name in KNOWN_ISAS and _has_explainer(name)


def _has_explainer(name: str) -> bool:
    from .isa import get_isa, has_hook

    return has_hook(get_isa(name), "explainer")


EXPLAINERS = _Explainers()

@dataclass
class ReferencePage:
    slug: str  # file name without extension
    group: str  # index heading (e.g. the CPUID feature)
    example: str  # the instruction text the page's worked example explains
    title: str = ""
    summary: str = ""


def explainer(isa: str):
    """The explainer module of ISA ``isa`` (``explain`` and ``reference_pages``), through its ISA object."""
    from .isa import KNOWN_ISAS, get_isa, has_hook

    if isa not in KNOWN_ISAS:
        raise ConfigError(f"isasim explain does not know ISA '{isa}' (known: {', '.join(sorted(EXPLAINERS))})")
    found = get_isa(isa)
    if not has_hook(found, "explainer"):
        raise ConfigError(f"ISA {isa} has no explainer")
    return found.explainer()


_HEX_RE = re.compile(r"(?:[0-9a-f]{2})+")


def split_instruction_argument(words: list[str], *, force_hex: bool = False) -> tuple[str | None, bytes | None]:
    """The explain argument as assembly text, or as bytes when it is all hex digit pairs
    (spaces, commas and 0x prefixes allowed: ``c4e2695ec1``, ``c4 e2 69 5e c1``)."""
    joined = " ".join(words).strip()
    if not joined:
        raise ExplainError("explain needs an instruction, as text ('tdpbusd tmm0, tmm1, tmm2') or hex bytes "
                           "('c4e2695ec1')")
    compact = re.sub(r"0x|[\s,]+", "", joined.lower())
    looks_hex = bool(_HEX_RE.fullmatch(compact))
    if force_hex or looks_hex:
        if not looks_hex:
            raise ExplainError(f"'{joined}' is not hex bytes (two hex digits per byte, e.g. 'c4e2695ec1')")
        return None, bytes.fromhex(compact)
    if re.fullmatch(r"[0-9a-fA-Fx\s,]+", joined) and re.search(r"\d", joined):
        # hex digits, but an odd number of them: meant as bytes, not as a mnemonic
        raise ExplainError(f"'{joined}' is not hex bytes (two hex digits per byte, e.g. 'c4e2695ec1')")
    return joined, None


def explain(isa: str, instruction: str | None = None, code: bytes | None = None,
            options: ExplainOptions | None = None) -> Explanation:
    return explainer(isa).explain(instruction, code, options or ExplainOptions())


# ---------------------------------------------------------------------------
# Terminal rendering (rich)
# ---------------------------------------------------------------------------


def _rich_cell(c: Any, plain: bool) -> RichText:
    c = cell(c)
    return RichText(c.text, style="" if plain else role_style(c.role))


def _rich_table(t: Table, plain: bool):
    table = RichTable(box=None, header_style="bold" if not plain else "", padding=(0, 1), show_edge=False,
                      show_header=any(t.columns))
    for name in t.columns:
        table.add_column(RichText(name), overflow="fold")
    for row in t.rows:
        table.add_row(*[_rich_cell(c, plain) for c in row])
    if t.title:
        return Group(RichText(t.title, style="" if plain else "bold"), table)
    return table


def grid_lines(g: Grid, *, plain: bool, width: int = 100) -> list[RichText]:
    """A grid as lines of text, split into column blocks that fit ``width``.  In plain text a
    highlighted cell is written [like this]; in colour it is styled by its role."""
    rows, cols = g.shape
    texts = [[c.text for c in row] for row in g.cells]
    col_labels = g.col_labels or [str(c) for c in range(cols)]
    row_labels = g.row_labels or [str(r) for r in range(rows)]
    cellw = max([len(t) for row in texts for t in row] + [len(x) for x in col_labels] + [1])
    labelw = max([len(x) for x in row_labels] + [1])
    slot = cellw + 2
    per_block = max(1, (width - labelw - 1) // slot)
    if g.group > 1 and per_block > g.group:
        per_block -= per_block % g.group
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
                if plain and _is_highlight(cl.role):
                    line.append("[" + cl.text.rjust(cellw) + "]")
                else:
                    line.append(" " + cl.text.rjust(cellw) + " ", style="" if plain else role_style(cl.role))
            lines.append(line)
    return lines


def _rich_grid(g: Grid, plain: bool, width: int):
    parts: list[Any] = [RichText(g.title, style="" if plain else "bold")]
    if g.caption:
        parts.append(RichText(g.caption, style="" if plain else "dim"))
    parts.extend(grid_lines(g, plain=plain, width=width))
    return Group(*parts)


def _rich_encoding(e: Encoding, plain: bool):
    table = RichTable(box=None, header_style="bold" if not plain else "", padding=(0, 1), show_edge=False)
    for name in ("byte", "hex", "part", "field", "bits", "meaning"):
        table.add_column(RichText(name), overflow="fold")
    for part in e.parts:
        fields = part.fields or [BitField("", "", "")]
        for i, f in enumerate(fields):
            mark = "" if f.ok is None else (" ✓" if f.ok else " ✗")
            meaning = RichText(f.meaning)
            if mark:
                meaning.append(mark, style="" if plain else ("bold green" if f.ok else "bold red"))
            table.add_row(f"+{part.offset}" if i == 0 else "", part.data.hex(" ") if i == 0 else "",
                          part.name if i == 0 else "", RichText(f.name, style="" if plain else role_style(f.role)),
                          RichText(f.bits), meaning)
    return table


def _rich_check(c: Check, plain: bool):
    t = RichText()
    t.append(f"{c.what}: explained {c.explained}, machine {c.machine}  ")
    if c.equal:
        t.append("equal ✓", style="" if plain else "bold green")
    else:
        t.append("DIFFERENT ✗", style="" if plain else "bold red")
    return t


def renderables(expl: Explanation, *, plain: bool = False, width: int = 100) -> list[Any]:
    out: list[Any] = []
    head = RichText(expl.title, style="" if plain else "bold")
    out.append(head)
    if expl.summary:
        out.append(RichText(expl.summary))
    if expl.facts:
        out.append(_rich_table(Table(["", ""], [[Cell(k, "dim"), v] for k, v in expl.facts]), plain))
    for section in expl.sections:
        out.append(RichText(""))
        out.append(Rule(RichText(section.title), align="left", style="" if plain else "bold"))
        for block in section.blocks:
            out.append(render_block(block, plain=plain, width=width))
    return out


def render_block(block: Any, *, plain: bool, width: int):
    if isinstance(block, Paragraph):
        return RichText(block.text)
    if isinstance(block, Code):
        return RichText(block.text, style="" if plain else "cyan")
    if isinstance(block, Table):
        return _rich_table(block, plain)
    if isinstance(block, Grid):
        return _rich_grid(block, plain, width)
    if isinstance(block, Encoding):
        return _rich_encoding(block, plain)
    if isinstance(block, Check):
        return _rich_check(block, plain)
    raise TypeError(f"not an explanation block: {block!r}")


def print_explanation(expl: Explanation, console: Console, *, plain: bool = False) -> None:
    for r in renderables(expl, plain=plain, width=console.width):
        console.print(r)


def _recording_console(width: int, color: bool) -> Console:
    return Console(record=True, width=width, file=io.StringIO(), force_terminal=color, no_color=not color,
                   color_system="truecolor" if color else None, highlight=False, soft_wrap=False,
                   legacy_windows=False, emoji=False)


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


# ---------------------------------------------------------------------------
# SVG (the figure)
# ---------------------------------------------------------------------------

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
                    weight = "bold" if _is_highlight(cl.role) else "normal"
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
    """An encoding as a strip of bytes, each split into its bit fields."""

    BIT = 20.0

    def __init__(self, e: Encoding):
        self.e = e
        self.boxes = []  # (x offset, width, part)
        x = 0.0
        for part in e.parts:
            bitted = part.fields and all(f.bits and set(f.bits) <= {"0", "1"} for f in part.fields) and \
                sum(len(f.bits) for f in part.fields) == 8 * len(part.data)
            w = 8 * self.BIT if bitted else max(8 * self.BIT, _text_width(part.data.hex(" "), 11) + 16)
            w = max(w, _text_width(part.name, 10) + 8)
            self.boxes.append((x, w, part, bitted))
            x += w + 6
        self.notes = []
        for part in e.parts:
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
                    fw = len(f.bits) * self.BIT
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
            lay = _GridLayout(panel) if isinstance(panel, Grid) else _EncodingLayout(panel)
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
        svg.path(f"M{_x(x1)},{_x(y1)} C{_x(mx)},{_x(y1)} {_x(mx)},{_x(y2)} {_x(x2)},{_x(y2)}", stroke=color)
        if arrow.label:
            svg.text(mx, (y1 + y2) / 2 - 4, arrow.label, size=10, anchor="middle", fill=color)
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


# ---------------------------------------------------------------------------
# HTML (the whole explanation, the figure embedded)
# ---------------------------------------------------------------------------

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
    rules = [f".r-{name} {{ background: {fill}; font-weight: bold; }}" for name, (fill, _) in _ROLES.items()]
    rules += [f".r-k{i}, .r-field{i} {{ background: {fill}; font-weight: bold; }}" for i, fill in enumerate(_CYCLE_FILLS)]
    return "\n".join(rules)


def _html_cell(c: Any, tag: str = "td", left: bool = False) -> str:
    c = cell(c)
    classes = []
    if c.role:
        base = c.role
        m = re.fullmatch(r"(k|field)(\d+)", base)
        if m:
            base = f"{m.group(1)}{int(m.group(2)) % len(_CYCLE_FILLS)}"
        classes.append(f"r-{base}")
    if left:
        classes.append("l")
    cls = f' class="{" ".join(classes)}"' if classes else ""
    title = f' title="{html.escape(c.note)}"' if c.note else ""
    return f"<{tag}{cls}{title}>{html.escape(c.text)}</{tag}>"


def _html_block(block: Any) -> str:
    if isinstance(block, Paragraph):
        return f"<p>{html.escape(block.text)}</p>"
    if isinstance(block, Code):
        return f"<pre>{html.escape(block.text)}</pre>"
    if isinstance(block, Table):
        title = f"<caption>{html.escape(block.title)}</caption>" if block.title else ""
        head = "".join(f'<th class="l">{html.escape(c)}</th>' for c in block.columns)
        body = "".join("<tr>" + "".join(_html_cell(c, left=True) for c in row) + "</tr>" for row in block.rows)
        return f"<table>{title}<tr>{head}</tr>{body}</table>"
    if isinstance(block, Grid):
        rows, cols = block.shape
        col_labels = block.col_labels or [str(c) for c in range(cols)]
        row_labels = block.row_labels or [str(r) for r in range(rows)]
        head = "<tr><th></th>" + "".join(f"<th>{html.escape(x)}</th>" for x in col_labels) + "</tr>"
        body = "".join("<tr><th>" + html.escape(row_labels[r]) + "</th>" + "".join(_html_cell(c) for c in block.cells[r])
                       + "</tr>" for r in range(rows))
        caption = f'<div class="caption">{html.escape(block.caption)}</div>' if block.caption else ""
        return f"<h3>{html.escape(block.title)}</h3>{caption}<table class=\"grid\">{head}{body}</table>"
    if isinstance(block, Encoding):
        head = "".join(f'<th class="l">{x}</th>' for x in ("byte", "hex", "part", "field", "bits", "meaning"))
        body = []
        for part in block.parts:
            for i, f in enumerate(part.fields or [BitField("", "", "")]):
                mark = "" if f.ok is None else (' <span class="ok">✓</span>' if f.ok else ' <span class="bad">✗</span>')
                body.append("<tr>" + "".join(f'<td class="l">{html.escape(x)}</td>' for x in (
                    f"+{part.offset}" if i == 0 else "", part.data.hex(" ") if i == 0 else "",
                    part.name if i == 0 else "")) + _html_cell(Cell(f.name, f.role), left=True)
                    + f'<td class="l">{html.escape(f.bits)}</td><td class="l">{html.escape(f.meaning)}{mark}</td></tr>')
        return f"<table><tr>{head}</tr>{''.join(body)}</table>"
    if isinstance(block, Check):
        verdict = '<span class="ok">equal ✓</span>' if block.equal else '<span class="bad">DIFFERENT ✗</span>'
        return (f"<p>{html.escape(block.what)}: explained <code>{html.escape(block.explained)}</code>, "
                f"machine <code>{html.escape(block.machine)}</code> {verdict}</p>")
    raise TypeError(f"not an explanation block: {block!r}")


def render_html(expl: Explanation) -> str:
    """A self-contained HTML page: the text sections, with the figure's SVG inline."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(expl.title)}</title>", f"<style>{_CSS}\n{_role_css()}</style></head><body>",
             f"<h1>{html.escape(expl.title)}</h1>"]
    if expl.summary:
        parts.append(f"<p>{html.escape(expl.summary)}</p>")
    if expl.facts:
        parts.append(_html_block(Table(["", ""], [[Cell(k), v] for k, v in expl.facts])))
    if expl.figure is not None:
        parts.append(f"<figure>{render_svg(expl.figure)}</figure>")
    for section in expl.sections:
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        parts.extend(_html_block(b) for b in section.blocks)
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------
# Markdown (reference pages)
# ---------------------------------------------------------------------------


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|").replace("\n", " ")


def _md_cell(c: Any) -> str:
    c = cell(c)
    text = _md_escape(c.text)
    if not text:
        return ""
    return f"**{text}**" if _is_highlight(c.role) else text


def _md_block(block: Any, width: int) -> str:
    if isinstance(block, Paragraph):
        return block.text
    if isinstance(block, Code):
        return "```text\n" + block.text.rstrip("\n") + "\n```"
    if isinstance(block, Table):
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
    if isinstance(block, Grid):
        text = "\n".join(line.plain.rstrip() for line in grid_lines(block, plain=True, width=width))
        caption = f"{block.caption}\n\n" if block.caption else ""
        return f"**{block.title}**  \n{caption}```text\n{text}\n```"
    if isinstance(block, Encoding):
        rows = []
        for part in block.parts:
            for i, f in enumerate(part.fields or [BitField("", "", "")]):
                mark = "" if f.ok is None else (" ✓" if f.ok else " ✗")
                rows.append([f"+{part.offset}" if i == 0 else "", part.data.hex(" ") if i == 0 else "",
                             part.name if i == 0 else "", f.name, f"`{f.bits}`" if f.bits else "", f.meaning + mark])
        return _md_block(Table(["byte", "hex", "part", "field", "bits", "meaning"], rows), width)
    if isinstance(block, Check):
        verdict = "equal ✓" if block.equal else "DIFFERENT ✗"
        return f"{block.what}: explained `{block.explained}`, machine `{block.machine}`: **{verdict}**"
    raise TypeError(f"not an explanation block: {block!r}")


def render_markdown(expl: Explanation, *, figure_file: str | None = None, width: int = 100,
                    preamble: Iterable[str] = ()) -> str:
    lines = [f"# {expl.title}", ""]
    lines.extend(preamble)
    if expl.summary:
        lines += [expl.summary, ""]
    if expl.facts:
        lines += [_md_block(Table(["", ""], [[k, v] for k, v in expl.facts]), width), ""]
    if figure_file:
        lines += [f"![{expl.figure.title if expl.figure else expl.title}]({figure_file})", ""]
    for section in expl.sections:
        lines += [f"## {section.title}", ""]
        for block in section.blocks:
            text = _md_block(block, width)
            if text:
                lines += [text, ""]
    return "\n".join(lines).rstrip("\n") + "\n"
