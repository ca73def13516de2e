"""How SME2 state is drawn: registers and flags, ZA as a grid of its vectors, Z registers as typed
lanes, predicates as one mark per element, and a vector group with the rows it names and why."""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.text import Text

from ...core.numerics import ELEMENT_TYPES
from ...core.render import grid, hex_preview, key_value_table
from ..semantics import za_tiles
from ..state import SVCR_SM, SVCR_ZA, ArmSmeState
from .locations import Tile, VectorGroup
from .types import element_bytes, suffix_of

MARK_GROUP = 4  # predicate marks are written in groups of this many elements
WRITTEN_NAMED = 8  # a ZA grid's title names up to this many written vectors (else counts them)


def flags_text(nzcv: int) -> str:
    """NZCV as flags, set ones in capitals: 0x60000000 is nZCv."""
    return "".join(flag.upper() if nzcv >> (31 - bit) & 1 else flag for bit, flag in enumerate("nzcv"))


def svcr_text(svcr: int) -> str:
    return f"SM={int(bool(svcr & SVCR_SM))} ZA={int(bool(svcr & SVCR_ZA))}"


def register_text(name: str, value: int) -> str:
    """A register's value as the step and print views show it: NZCV and SVCR with their flags."""
    if name == "nzcv":
        return f"{value:#x} [{flags_text(value)}]"
    if name == "svcr":
        return f"{value:#x} [{svcr_text(value)}]"
    return f"{value:#x}"


def registers_table(state: ArmSmeState, highlight: set[str] | None = None):
    rows = [(name, register_text(name, state.read_register(name))) for name in state.register_names()]
    return key_value_table("registers", rows, highlight=highlight)


def typed(data: np.ndarray, element: str) -> tuple[np.ndarray, str]:
    """Rows of bytes as rows of elements (the bit patterns, for a float type) and the grid's kind."""
    storage, kind = ELEMENT_TYPES[element]
    return np.ascontiguousarray(data).view(storage), kind


def digits_for(element: str, hex_values: bool) -> int | None:
    """The hex digits of one element when hex is asked for, else None (decimal)."""
    return 2 * element_bytes(element) if hex_values else None


def changed_lanes(old: bytes, new: bytes, size: int) -> np.ndarray:
    """Which elements of ``size`` bytes differ between two byte strings of one vector."""
    a = np.frombuffer(old, dtype=np.uint8).reshape(-1, size)
    b = np.frombuffer(new, dtype=np.uint8).reshape(-1, size)
    return (a != b).any(axis=1)


def vector_name(row: int, last: int) -> str:
    """za[row], padded to the width of za[last] so that labels "r: za[row]" line up."""
    return f"za[{row}]".rjust(len(f"za[{last}]"))


def za_off_text(state: ArmSmeState, program=None) -> str | None:
    """Why ZA reads as zero, when it is off because an instruction turned it off (None otherwise)."""
    off = state.za_turned_off
    if state.za_enabled or off is None:
        return None
    by = program.at(off.at) if program is not None else None
    where = f"{by.text} (instruction {by.index}, {off.at:#x})" if by is not None else f"the instruction at {off.at:#x}"
    return f"ZA is off (PSTATE.ZA=0) since {where} turned it off, and a ZA that is off reads as zero"


def za_grid(state: ArmSmeState, element: str, *, hex_values: bool = False, width: int = 100,
            written: dict[int, bytes] | None = None, rows: list[int] | None = None, note: str = "",
            za: np.ndarray | None = None):
    """ZA's vectors as one grid of ``element`` lanes, labelled za[i]: ``rows`` (default: the vectors that
    are not zero and those written), the ``written`` ones (vector -> its old bytes) highlighted.  ``za``:
    other contents than the state's (what ZA held before it was turned off)."""
    written = written or {}
    za = state.za if za is None else za
    nonzero = np.flatnonzero(za.any(axis=1)).tolist()
    keep = sorted(set(nonzero) | set(written)) if rows is None else rows
    head = f"za  {element} (.{suffix_of(element)}), {state.svlb} vectors"
    if not keep:
        return Text(f"{head}: all zero", style="bold")
    values, kind = typed(za, element)
    changed = np.zeros(values.shape, dtype=bool)
    for row, old in written.items():
        changed[row] = changed_lanes(old, za[row].tobytes(), element_bytes(element))
    facts = []
    if written:
        names = " ".join(f"za[{r}]" for r in sorted(written)) if len(written) <= WRITTEN_NAMED else str(len(written))
        facts.append(f"{names} written")
    facts.append(f"{len(nonzero)} not zero")
    title = f"{head}: {', '.join(facts)}" + (f" {note}" if note else "")
    return grid(values, kind, title=title, hex_digits=digits_for(element, hex_values), changed=changed, width=width,
                rows=keep, row_labels=[f"za[{r}]" for r in range(state.svlb)], marked_rows=set(written))


def z_grid(state: ArmSmeState, numbers: list[int], element: str, *, hex_values: bool = False, width: int = 100,
           old: dict[int, bytes] | None = None):
    """Z registers as rows of ``element`` lanes, labelled z<n>.<T>; with ``old`` (number -> bytes) the lanes
    that changed are highlighted and counted."""
    suffix = suffix_of(element)
    values, kind = typed(state.z[numbers], element)
    names = [f"z{n}.{suffix}" for n in numbers]
    which = " ".join(names) if len(names) <= 4 else f"{names[0]} ... {names[-1]} ({len(names)} registers)"
    title = f"{which}  {values.shape[1]} lanes of {element}"
    changed = None
    if old:
        changed = np.array([changed_lanes(old.get(n, state.z[n].tobytes()), state.z[n].tobytes(),
                                          element_bytes(element)) for n in numbers])
        title += f"  ({int(changed.sum())} lane(s) changed)"
    return grid(values, kind, title=title, hex_digits=digits_for(element, hex_values), changed=changed, width=width,
                row_labels=names)


def active_elements(predicate: bytes, size: int) -> np.ndarray:
    """Which elements of ``size`` bytes a predicate makes active: element e's bit is bit e * size."""
    bits = np.unpackbits(np.frombuffer(predicate, dtype=np.uint8), bitorder="little")
    return bits[::size].astype(bool)


def _marks(active: np.ndarray) -> list[str]:
    return ["".join("1" if a else "0" for a in active[i:i + MARK_GROUP]) for i in range(0, len(active), MARK_GROUP)]


def predicate_view(name: str, suffix: str, new: bytes, old: bytes | None = None, *, width: int = 100) -> Group:
    """A predicate as one mark per element of size ``suffix`` (1 active, 0 not), in groups of MARK_GROUP,
    folded to ``width``; with ``old``, the old marks above the new."""
    size = za_tiles.ELEMENT_BYTES[suffix]
    now = active_elements(new, size)
    title = f"{name}.{suffix}  {len(now)} elements of {8 * size} bits: {int(now.sum())} active"
    lines = [("new", now)]
    if old is not None:
        before = active_elements(old, size)
        title += f" (was {int(before.sum())})"
        lines.insert(0, ("old", before))
    label = len(str(len(now) - 1)) + (5 if old is not None else 1)
    groups = max(1, (width - label - 2) // (MARK_GROUP + 1))
    if groups >= 4:
        groups -= groups % 4  # whole runs of 16 elements per line
    parts = [Text(title, style="bold")]
    for start in range(0, len(now), groups * MARK_GROUP):
        for word, active in lines:
            marks = " ".join(_marks(active[start:start + groups * MARK_GROUP]))
            prefix = (f"{word} " if old is not None else "") + f"{start:>{len(str(len(now) - 1))}}"
            parts.append(Text(f"  {prefix}  {marks}", style="bold yellow" if word == "new" and old is not None else ""))
    return Group(*parts)


def memory_text(address: int, old: bytes, new: bytes, width: int) -> Text:
    """A memory write as its address, size and new bytes (as many as fit ``width``)."""
    head = f"memory {address:#x}: {len(new)} byte(s) written: "
    whole = len(head) + 3 * len(new) - 1 <= width
    return Text(head + hex_preview(new, len(new) if whole else max(4, (width - len(head) - 16) // 3)))


def vector_group_view(state: ArmSmeState, group: VectorGroup, element: str, *, hex_values: bool = False,
                      width: int = 100) -> Group:
    """Which ZA vectors a group names, worked out as the ASL does (za_tiles.vector_group_rows, what the
    simulator executes), then those vectors' lanes."""
    xv = state.read_register(f"x{group.v}")
    low = xv & 0xFFFFFFFF
    vstride = state.svlb // group.nreg
    rows = za_tiles.vector_group_rows(state.svlb, xv, group.offset, group.nreg)
    vec = rows[0]
    wrap = (f"; {low} + {group.offset} >= {vstride}, so the MOD wraps it" if low + group.offset >= vstride else "")
    upper = f" (x{group.v}'s upper 32 bits, {xv >> 32:#x}, do not count)" if xv >> 32 else ""
    lines = [
        Text(f"{group.text} at SVL {state.svl}: ZA vectors {', '.join(map(str, rows))}", style="bold"),
        Text(f"  vstride = (SVL/8) / {group.nreg} = {state.svlb} / {group.nreg} = {vstride}"),
        Text(f"  vec = (UInt(W{group.v}) + {group.offset}) MOD vstride = ({low} + {group.offset}) MOD {vstride} = "
             f"{vec}{wrap}{upper}"),
        Text(f"  vector r = ZA[vec + r * vstride], r = 0..{group.nreg - 1}: {', '.join(map(str, rows))}"),
    ]
    values, kind = typed(state.za, element)
    labels = [""] * state.svlb
    for r, row in enumerate(rows):
        labels[row] = f"{r}: {vector_name(row, max(rows))}"
    lines.append(grid(values, kind, title=f"{group.text}  {len(rows)} vectors of {values.shape[1]} {element}",
                      hex_digits=digits_for(element, hex_values), width=width, rows=rows, row_labels=labels))
    return Group(*lines)


def tile_view(state: ArmSmeState, tile: Tile, element: str, *, hex_values: bool = False, width: int = 100):
    """A whole tile (horizontal: its rows, each a ZA vector; vertical: its columns, each shown as a row),
    one slice, or one element."""
    esize, svlb = tile.esize, state.svlb
    rows = za_tiles.tile_rows(tile.tile, esize, svlb)
    name = za_tiles.tile_text(tile.tile, tile.suffix)
    if tile.slice is not None:
        data = za_tiles.read_slice(state.za, tile.tile, esize, tile.vertical, tile.slice)
        values, kind = typed(data.reshape(1, -1), element)
        if tile.element is not None:
            text = grid(values[:, tile.element:tile.element + 1], kind, hex_digits=digits_for(element, hex_values),
                        row_labels=[tile.text])
            return Group(Text(f"{tile.text} = element {tile.element} of slice {tile.slice} of {name} "
                              f"({element})", style="bold"), text)
        where = (f"ZA vector {rows[tile.slice]}" if not tile.vertical else
                 f"element {tile.slice} of ZA vectors {', '.join(map(str, rows[:3]))}, ...")
        return grid(values, kind, title=f"{tile.text}  {values.shape[1]} {element}: {where}",
                    hex_digits=digits_for(element, hex_values), width=width, row_labels=[tile.text])
    count = za_tiles.tile_count(esize)
    if not tile.vertical:
        values, kind = typed(state.za[rows], element)
        title = f"{za_tiles.tile_text(tile.tile, tile.suffix, False)}  the rows of {name}, {len(rows)} x {element}"
        note = f"row i is horizontal slice i, ZA vector {count}i + {tile.tile}"
        labels = [f"{i}: {vector_name(row, rows[-1])}" for i, row in enumerate(rows)]
    else:
        slices = np.stack([za_tiles.read_slice(state.za, tile.tile, esize, True, i) for i in range(len(rows))])
        values, kind = typed(slices, element)
        title = (f"{za_tiles.tile_text(tile.tile, tile.suffix, True)}  the columns of {name} shown as rows, "
                 f"{len(rows)} x {element}")
        note = f"row i is vertical slice i; its element j is in ZA vector {count}j + {tile.tile}"
        labels = [f"{za_tiles.tile_text(tile.tile, tile.suffix, True)}[{i}]" for i in range(len(rows))]
    return Group(Text(title, style="bold"), Text(note, style="dim"),
                 grid(values, kind, hex_digits=digits_for(element, hex_values), width=width, row_labels=labels))
