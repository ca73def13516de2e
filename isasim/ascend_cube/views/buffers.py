"""What ``isasim run`` and ``isasim step`` show of the Ascend cube: the control registers (the quant
word decoded field by field), the buffers as typed grids, and L0C as the matrix its Nz fractals hold.

A buffer is shown in rows of 32 bytes (one C0 row of a fractal); L0C's default view is its
fractals, 16 x 16 elements each (``p l0c fp32``), and ``p l0c.nd[MxN]`` reads the M x N matrix
that Mmad and Fixpipe see there.
"""

from __future__ import annotations

import re

import numpy as np
from rich.console import Group
from rich.text import Text

from isasim.core.errors import IsasimError
from isasim.core.isa import WatchTarget
from isasim.core.numerics import ELEMENT_TYPES
from isasim.core.render import grid, hex_preview, key_value_table

from ..config import BUFFER_NAMES
from ..operands import LITERAL, NumberError, read_integer, shown
from ..state import ATOMIC_MODES, REGISTER_NAMES, AscendState, array_name
from ..sync.events import PIPES

ROW_BYTES = {"L1": 32, "L0A": 32, "L0B": 32, "L0C": 64, "BT": 64, "FB": 64}
VIEWS = {"L1": ("uint8", "int8", "fp16", "bf16", "int32", "fp32"),
         "L0A": ("int8", "uint8", "fp16", "bf16", "fp32"), "L0B": ("int8", "uint8", "fp16", "bf16", "fp32"),
         "L0C": ("int32", "fp32", "uint32"), "BT": ("fp32", "int32"), "FB": ("uint64", "uint8")}
BY_ARRAY = {array_name(b): b for b in BUFFER_NAMES}
MAX_ROWS = 16
GM_WRITES_SHOWN = 4


def buffer_grid(state: AscendState, buffer: str, element: str, *, first: int = 0, size: int | None = None,
                hex_values: bool = False, width: int = 100, max_rows: int | None = MAX_ROWS,
                changed: tuple[int, int] | None = None) -> Group:
    """Bytes first .. first+size of ``buffer`` as rows of ROW_BYTES, labelled by byte offset."""
    storage, kind = ELEMENT_TYPES[element]
    row_bytes = ROW_BYTES[buffer]
    size = state.buffers[buffer].size - first if size is None else size
    start = first - first % row_bytes
    end = -(-(first + size) // row_bytes) * row_bytes
    data = state.buffers[buffer][start:end]
    values = data.view(storage).reshape(-1, row_bytes // np.dtype(storage).itemsize)
    mask = None
    if changed is not None:
        byte_mask = np.zeros(end - start, dtype=bool)
        byte_mask[changed[0] - start : changed[1] - start] = True
        mask = byte_mask.reshape(values.shape[0], -1, np.dtype(storage).itemsize).any(axis=2)
    labels = [f"{buffer}[{start + r * row_bytes}]" for r in range(values.shape[0])]
    digits = 2 * np.dtype(storage).itemsize if hex_values else None
    return grid(values, kind, title=f"{buffer}  {element}  (rows of {row_bytes} B)", hex_digits=digits,
                changed=mask, width=width, max_rows=max_rows, row_labels=labels)


def l0c_nd_offsets(rows: int, cols: int, offset: int = 0) -> np.ndarray:
    """The byte offsets in L0C of the rows x cols matrix whose Nz fractals start at L0C[offset], as Mmad
    writes C and Fixpipe reads it (columns in blocks of 16, each block ceil16(rows) rows of 16 four-byte
    elements): element (i, j) at offset + ((j / 16) * ceil16(rows) + i) * 64 + (j MOD 16) * 4."""
    padded = -(-rows // 16) * 16
    i = np.arange(rows)[:, None]
    j = np.arange(cols)[None, :]
    return offset + ((j // 16) * padded + i) * 64 + (j % 16) * 4


def l0c_matrix(state: AscendState, rows: int, cols: int, element: str, *, offset: int = 0,
               hex_values: bool = False, width: int = 100) -> Group:
    """The rows x cols matrix whose Nz fractals start at L0C[offset] (see l0c_nd_offsets)."""
    if rows < 1 or cols < 1:
        raise IsasimError(f"a {rows} x {cols} matrix: M and N of .nd[MxN] are at least 1")
    storage, kind = ELEMENT_TYPES[element]
    offsets = l0c_nd_offsets(rows, cols, offset)
    if int(offsets.max()) + 4 > state.buffers["L0C"].size:
        raise IsasimError(f"a {rows} x {cols} matrix at L0C[{offset}] runs past the end of L0C")
    # each element's four bytes gathered (an offset need not be a multiple of 4), read little-endian
    words = np.ascontiguousarray(state.buffers["L0C"][offsets[..., None] + np.arange(4)]).view("<u4")[..., 0]
    values = words.view(storage) if np.dtype(storage).itemsize == 4 else words
    return grid(values, kind, title=f"L0C[{offset}] as a {rows} x {cols} {element} matrix (Nz fractals)",
                hex_digits=8 if hex_values else None, width=width)


def quant_word_rows(word: int, chip: str) -> list[tuple[str, str]]:
    """The scalar quant word, field by field (quant_word.decode_quant_word), or why it does not decode."""
    try:
        from ..numerics.quant_word import decode_quant_word

        decoded = decode_quant_word(word, chip)
    except ImportError:
        return []
    except ValueError as error:
        return [("  (invalid)", str(error))]
    return [(f"  {name} [{first + width - 1}:{first}]", f"{value} ({meaning})")
            for first, width, name, value, meaning in decoded.fields]


def registers_table(state: AscendState, highlight: set[str] | None = None):
    rows = []
    for name in REGISTER_NAMES:
        value = state.regs[name]
        note = f" ({ATOMIC_MODES[value]})" if name == "atomic" else ""
        rows.append((name, f"{value:#x}{note}"))
        if name == "quant_pre" and value:
            rows.extend(quant_word_rows(value, state.chip.name))
    rows.append(("pc", f"{state.pc:#x}"))
    return key_value_table(f"registers ({state.chip.name})", rows, highlight=highlight)


# the view names of the Ascend C element types a parameter gives (the rest have no typed view)
_VIEW_OF_DTYPE = {"int8": "int8", "uint8": "uint8", "float16": "fp16", "bfloat16": "bf16", "int32": "int32",
                  "float32": "fp32"}


def _element(buffer: str, element_types: dict | None, written_as: str | None = None) -> str:
    """--show's type, else the type the instruction wrote the buffer in (if it has a view), else its default."""
    chosen = (element_types or {}).get(array_name(buffer))
    if chosen:
        return chosen
    view = _VIEW_OF_DTYPE.get(written_as or "")
    return view if view in VIEWS[buffer] else VIEWS[buffer][0]


def written_type(instruction, buffer: str) -> str | None:
    """The element type the instruction writes ``buffer`` in, from its own parameters: the destination's
    dtype / dstType, or for Mmad's L0C the accumulator (int32 for int8 inputs, float32 otherwise)."""
    if instruction is None or getattr(instruction, "form", None) is None:
        return None
    form = instruction.form
    params = dict(zip(form.operand_names, instruction.operands))
    if form.name == "Mmad":
        return "int32" if params.get("aType") in ("int8", "uint8") else "float32"
    if form.buffers.get("dst") == buffer:
        return params.get("dstType") or params.get("dtype")
    return None


def state_view(state: AscendState, *, element_types: dict[str, str] | None = None, hex_values: bool = False,
               width: int = 100, **_options) -> Group:
    """The registers, then every buffer that holds a non-zero byte (the others are as reset left them)."""
    parts = [registers_table(state)]
    for buffer in BUFFER_NAMES:
        if state.buffers[buffer].any():
            parts.append(buffer_grid(state, buffer, _element(buffer, element_types), hex_values=hex_values,
                                     width=width, size=_used(state, buffer)))
    return Group(*parts)


def _used(state: AscendState, buffer: str) -> int:
    """Bytes up to the last non-zero one, in whole rows (so a grid ends where the data does)."""
    last = int(np.flatnonzero(state.buffers[buffer]).max()) + 1
    row = ROW_BYTES[buffer]
    return -(-last // row) * row


def pipe_line(record, state: AscendState) -> Text | None:
    """The step's pipe and the event flags set after it: "pipe PIPE_MTE1 · cleared MTE2_MTE1#0 (set by #2) ·
    flags set: none" (a flag is EVENT#ID; a set flag is one no WaitFlag has cleared yet).  None without pipes
    (a lone instruction)."""
    pipes = state.pipes
    instruction = getattr(record, "instruction", None)
    if pipes is None or instruction is None or not 0 <= instruction.index < len(pipes.issued):
        return None
    info = pipes.issued[instruction.index]
    pieces = [f"pipe PIPE_{PIPES[info.pipe]}"]
    if info.sync == "wait":
        setters = [setter for setter, waiter in pipes.pairs if waiter == info.index]
        if setters:
            pieces.append(f"cleared {info.event[0]}#{info.event[1]} (set by #{setters[-1]})")
    elif info.sync == "barrier":
        pieces.append(f"barrier {info.barrier}")
    flags = ", ".join(f"{event}#{event_id}" for event, event_id in pipes.flags)
    pieces.append(f"flags set: {flags or 'none'}")
    return Text(" · ".join(pieces), style="cyan")


def step_view(record, state: AscendState, *, element_types: dict[str, str] | None = None, hex_values: bool = False,
              width: int = 100, **_options) -> Group:
    parts = []
    pipes = pipe_line(record, state)
    registers = [(str(w.where), f"{w.old:#x} -> {w.new:#x}") for w in record.writes if w.kind == "reg"]
    if registers:
        parts.append(key_value_table("registers", registers))
        if any(w.where == "quant_pre" for w in record.writes if w.kind == "reg"):
            parts.append(key_value_table("quant_pre decoded", quant_word_rows(state.regs["quant_pre"],
                                                                                state.chip.name)))
    spans: dict[str, list[int]] = {}
    for w in record.writes:
        if w.kind == "array":
            buffer = BY_ARRAY[w.where.name]
            low, high = w.where.subscript, w.where.subscript + len(w.new)
            span = spans.setdefault(buffer, [low, high])
            span[0], span[1] = min(span[0], low), max(span[1], high)
    for buffer, (low, high) in spans.items():
        element = _element(buffer, element_types, written_type(getattr(record, "instruction", None), buffer))
        parts.append(buffer_grid(state, buffer, element, first=low, size=high - low,
                                 hex_values=hex_values, width=width, changed=(low, high)))
    memory = [w for w in record.writes if w.kind == "mem"]
    for w in memory[:GM_WRITES_SHOWN]:  # a Fixpipe writes one GM row per output row: the first few say enough
        parts.append(Text(f"GM {w.where:#x}: {hex_preview(w.old, 16)} -> "
                          f"{hex_preview(w.new, 16)}"))
    if len(memory) > GM_WRITES_SHOWN:
        parts.append(Text(f"... and {len(memory) - GM_WRITES_SHOWN} more GM writes, "
                          f"{sum(len(w.new) for w in memory[GM_WRITES_SHOWN:])} bytes", style="dim"))
    if not parts:
        parts.append(Text("(no state changed)", style="dim"))
    return Group(*([pipes] if pipes is not None else []), *parts)


# a buffer, an optional [offset] and an optional .nd[MxN]: the numbers are read by numbers.read_integer (C++
# literals, as in the program text), so the brackets take any text and a bad number is named, not ignored
_ITEM = re.compile(r"([a-z0-9]+)(?:\[([^\]]*)\])?(?:\.nd\[([^\]]*)\])?", re.ASCII)
# M x N: two literals and an x between them (the regex tries the hex reading of "0x..." first, then backs off)
_SHAPE = re.compile(rf"\s*({LITERAL})\s*x\s*({LITERAL})\s*", re.ASCII)


def location_number(text: str, what: str) -> int:
    """A number of a stepper location (an offset, a row or a count), read as the program text reads numbers."""
    try:
        return read_integer(text.strip(" \t"))
    except NumberError as error:  # the message starts with the text (": no number" when there is none)
        raise IsasimError(f"{what}: {error.message.lstrip(': ')}") from None


def item_view(state: AscendState, what: str, args: list[str], *, width: int = 100):
    """``p WHAT [TYPE] [hex] [all]``: a register, ``regs``, a buffer (``l0a``), a buffer from a byte offset
    (``l1[4096]``), or the M x N matrix L0C's Nz fractals hold (``l0c.nd[30x40]``, ``l0c[2048].nd[16x16]``)."""
    name = what.lower()
    if name in ("regs", "registers"):
        return registers_table(state)
    if name in state.register_names():
        value = state.read_register(name)
        lines = [Text(f"{name} = {value:#x} ({value})")]
        if name == "quant_pre":
            lines += [Text(f"{field}: {text}") for field, text in quant_word_rows(value, state.chip.name)]
        return Group(*lines)
    m = _ITEM.fullmatch(name)
    if not m or m.group(1) not in BY_ARRAY:
        return None
    buffer = BY_ARRAY[m.group(1)]
    offset = location_number(m.group(2), f"{m.group(1)}[...]") if m.group(2) is not None else 0
    if offset >= state.buffers[buffer].size:
        raise IsasimError(f"{buffer} is {state.buffers[buffer].size} bytes: [{offset}] is past its end")
    words = [a.lower() for a in args]
    if m.group(3) is not None:
        if buffer != "L0C":
            raise IsasimError(f".nd[MxN] reads L0C's Nz fractals; {buffer} has no such view")
        shape = _SHAPE.fullmatch(m.group(3))
        if not shape:
            raise IsasimError(f".nd[{shown(m.group(3))}]: expected .nd[MxN], M rows and N columns (.nd[30x40])")
        rows, cols = (location_number(shape.group(i), f".nd[{shown(m.group(3))}]") for i in (1, 2))
        element = next((w for w in words if w in VIEWS["L0C"]), "int32")
        return l0c_matrix(state, rows, cols, element, offset=offset, hex_values="hex" in words, width=width)
    unknown = [w for w in words if w not in VIEWS[buffer] and w not in ("hex", "all")]
    if unknown:
        raise IsasimError(f"{name} is shown as {', '.join(VIEWS[buffer])}, not '{unknown[0]}'")
    element = next((w for w in words if w in VIEWS[buffer]), VIEWS[buffer][0])
    return buffer_grid(state, buffer, element, first=offset, hex_values="hex" in words, width=width,
                       max_rows=None if "all" in words else MAX_ROWS)


def watch_value(state: AscendState, what: str, element_types: dict[str, str]) -> WatchTarget | None:
    """A register (a number), a whole buffer, or a byte range of one (``l0c[1024:2048]``)."""
    name = what.lower()
    if name in state.register_names():
        return WatchTarget(state.read_register(name))
    m = re.fullmatch(r"([a-z0-9]+)(?:\[([^\]:]*)(?::([^\]]*))?\])?", name, re.ASCII)
    if not m or m.group(1) not in BY_ARRAY:
        return None
    buffer = BY_ARRAY[m.group(1)]
    data = state.buffers[buffer]
    element = element_types.get(m.group(1), VIEWS[buffer][0])
    if m.group(2) is None:
        return WatchTarget(data.tobytes(), element)
    low = location_number(m.group(2), f"{m.group(1)}[...]")
    high = (location_number(m.group(3), f"{m.group(1)}[...]") if m.group(3) is not None
            else low + np.dtype(ELEMENT_TYPES[element].storage).itemsize)
    if not low < high <= data.size:
        raise IsasimError(f"{buffer} is {data.size} bytes: [{low}:{high}] is not a range of it")
    return WatchTarget(data[low:high].tobytes(), element)
