"""What an explanation is made of: sections of blocks, an encoding in units of bit fields, a figure.

An explainer builds these; the renderers (terminal, svg, html_page, markdown) show
them.  Nothing here knows an ISA: an encoding is a sequence of units (an x86
instruction's prefix, VEX bytes, opcode, ModRM, ...; an A64 instruction's one 32-bit
word), each described as bit ranges (first bit, width, name, value, meaning), so a
field may cross byte boundaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Cell:
    """A value in a table or grid, optionally highlighted with a role (see :mod:`.palette`); ``note`` is a tooltip."""

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
    """``width`` bits of an encoding unit starting at bit ``first`` (bit 0 is the unit's least significant),
    holding ``value`` as stored (an inverted field keeps its stored bits; ``meaning`` says what they encode)."""

    first: int
    width: int
    name: str
    value: int
    meaning: str
    ok: bool | None = None  # True: matches the definition; False: breaks it; None: no rule
    role: str | None = None
    # False for a number (a displacement, an immediate) that ``meaning`` spells out: its bits are not shown
    binary: bool = True

    @property
    def bits(self) -> str:
        """The field's bits as written, most significant first ("" for a number field)."""
        return format(self.value, f"0{self.width}b") if self.binary else ""


@dataclass
class EncodingUnit:
    """Consecutive bytes of an encoding read as one little-endian word and named as one thing (a prefix byte,
    ModRM, a disp32, an A64 instruction word), with its fields listed most significant first."""

    offset: int
    data: bytes
    name: str
    fields: list[BitField] = field(default_factory=list)

    @property
    def width(self) -> int:
        return 8 * len(self.data)

    @property
    def word(self) -> int:
        return int.from_bytes(self.data, "little")

    def bits_at(self, first: int, width: int) -> int:
        """The value of ``width`` bits from bit ``first`` of the word: how an explainer reads a field it declares."""
        return (self.word >> first) & ((1 << width) - 1)

    @property
    def fully_split(self) -> bool:
        """Whether the fields are bit strings that tile the whole unit (so a picture can draw every bit)."""
        return bool(self.fields) and all(f.binary and f.width for f in self.fields) and \
            sum(f.width for f in self.fields) == self.width


@dataclass
class Encoding:
    units: list[EncodingUnit]
    title: str = ""

    @property
    def parts(self) -> list[EncodingUnit]:  # the name earlier callers used
        return self.units


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
    # > 0: the arrow leaves and enters its cells' sides head-on, curving out this far (an arc above two
    # top sides, beside two right sides), so that it passes around the cells in between, not through them
    bend: float = 0.0


@dataclass
class Figure:
    title: str
    rows: list[list[Grid | Encoding]]
    arrows: list[Arrow] = field(default_factory=list)
    legend: list[tuple[str, str]] = field(default_factory=list)  # (role, meaning)
    caption: str = ""


def instruction_figure(text: str, code: bytes, encoding: Encoding, panels: list, arrows=(), legend=(),
                       caption: str = "") -> Figure:
    """An instruction's picture: titled by its text and bytes, its encoding strip on top, then the rows of
    panels (empty rows left out)."""
    return Figure(f"{text}  ({code.hex(' ')})", [[encoding]] + [row for row in panels if row], list(arrows),
                  list(legend), caption)


@dataclass
class Explanation:
    isa: str
    title: str  # the form, as the vendor's manual writes its syntax
    text: str  # the instruction explained, as the disassembler prints it
    encoding: bytes | None  # None for an ISA without a binary encoding
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


@dataclass
class ReferencePage:
    slug: str  # file name without extension
    group: str  # index heading (e.g. the CPUID feature)
    example: str  # the instruction text the page's worked example explains
    title: str = ""
    summary: str = ""
    feature: str = ""  # the architecture feature the form needs, where the index lists it per form ("SME2")
    evidence: str = ""  # the outside oracles the form is held to, where the index lists them ("clang; QEMU")


# The one row a unit without fields is listed with (an empty field, no bits).
NO_FIELD = BitField(0, 0, "", 0, "", binary=False)


def listed_fields(unit: EncodingUnit) -> list[BitField]:
    """The fields a table lists for ``unit``: its own, or one empty row so that the unit still shows."""
    return unit.fields or [NO_FIELD]


@dataclass
class ElementWorking:
    """How one element a step wrote was computed, from that step's own data: what the trace viewer shows when
    the element is clicked (an ISA's ``Isa.element_workings``).  The blocks are made by the same functions
    that write ``isasim explain``'s account of a worked element, so the page and the terminal agree.

    location: the array the element is in, by the ISA's name for it, or "memory" for bytes in memory;
    offset:   its first byte in that array (for memory: its address);
    size:     its bytes;
    title:    what it is, in the ISA's words (e.g. "C[1][2]" and where C's element lies);
    blocks:   the account (Table, Paragraph, Check ...), ending with the Check of the value the machine wrote.
    """

    location: str
    offset: int
    size: int
    title: str
    blocks: list = field(default_factory=list)
