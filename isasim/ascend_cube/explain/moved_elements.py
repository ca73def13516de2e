"""The accounts of a data move's destination elements, one per element (or per 4-byte group of a long byte move):
which source element went where under the form's rule, and a Check of its bytes against the destination's after
the step.  Shared by workings.py (Nd2Nz, LoadData) and workings_moves.py (the other DataCopy and LoadData forms)."""

from __future__ import annotations

import struct

import numpy as np

from isasim.core.explain.model import Check, ElementWorking, Paragraph, Table

from ..config import ELEMENT_BYTES
from ..state import array_name
from . import worked

BYTE_ELEMENTS_ONE_BY_ONE = 4096  # a move of more 1-byte elements than this gets one account per 4-byte group
GROUP_BYTES = 4
# the 2- and 4-byte float types by struct (bf16: the top half of a float32, so two zero bytes below it)
_STRUCT_FLOATS = {"float16": ("<e", b""), "float32": ("<f", b""), "bfloat16": ("<f", b"\0\0")}


def value_text(raw: bytes, dtype: str) -> str:
    """An element's bytes as a value of its type (explain's decoding; int16/int32 as little-endian integers)."""
    if dtype in ("int16", "int32"):
        return str(int.from_bytes(raw, "little", signed=True))
    try:
        value = worked._value(raw, dtype)  # noqa: SLF001 - explain's own decoding of the element types
    except (ValueError, OverflowError):  # an inf or NaN has no exact value: the float it is
        if dtype in _STRUCT_FLOATS:
            return repr(struct.unpack(_STRUCT_FLOATS[dtype][0], _STRUCT_FLOATS[dtype][1] + raw)[0])
        return repr(float(worked._decode(np.frombuffer(raw, dtype=np.uint8), dtype)[0]))  # noqa: SLF001 (8-bit)
    return str(value) if isinstance(value, int) else repr(float(value))


def moved(buffer: str, dtype: str, elements, destination_after, rule: str) -> list[ElementWorking]:
    """One account per destination element ((offset, source as text, source bytes, which element)), or per
    4-byte group when the elements are bytes and there are more than BYTE_ELEMENTS_ONE_BY_ONE of them; each
    ends with a Check of the source bytes (as the rule picked them, before the step) against the destination's
    bytes after it."""
    size = ELEMENT_BYTES[dtype]
    group = GROUP_BYTES if size == 1 and len(elements) > BYTE_ELEMENTS_ONE_BY_ONE else 1
    location = array_name(buffer)
    out = []
    for first in range(0, len(elements), group):
        chunk = elements[first : first + group]
        offset, end = chunk[0][0], chunk[-1][0] + size
        if [e[0] for e in chunk] != list(range(offset, end, size)):  # not adjacent: one account each
            out.extend(w for e in chunk for w in moved(buffer, dtype, [e], destination_after, rule))
            continue
        explained = b"".join(e[2] for e in chunk)
        machine = destination_after[offset:end].tobytes()
        table = Table(["destination", "source", "which", "bytes (hex)", f"value ({dtype})"],
                      [[f"{buffer}[{e[0]}]", e[1], e[3], e[2].hex(" "), value_text(e[2], dtype)] for e in chunk],
                      title="What went where")
        title = (f"{buffer}[{offset}..{end - 1}] (a group of {len(chunk)} {dtype} bytes: this move writes "
                 f"{len(elements):,} bytes, so each account covers {GROUP_BYTES})" if group > 1
                 else f"{buffer}[{offset}] = {chunk[0][3]} ({dtype})")
        out.append(ElementWorking(location, offset, end - offset, title,
                                  [Paragraph(rule), table,
                                   Check(f"{buffer}[{offset}..{end - 1}] bytes", explained.hex(" "),
                                         machine.hex(" "))]))
    return out
