"""The trace page's view of L0C: the M x N matrix C of the program's first Mmad, read from its Nz fractals
with the layout ``p l0c.nd[MxN]`` reads (buffers.l0c_nd_offsets), so the page and the stepper agree."""

from __future__ import annotations

from ...core.isa import PageView
from ...core.program import Program
from ..state import array_name
from .buffers import l0c_nd_offsets

INTEGER_TYPES = ("int8", "uint8", "int16", "int32")


def page_views(config: dict, program: Program | None) -> list[PageView]:
    """L0C as C (m x n at the Mmad's c offset), from the first Mmad of ``program``; none without one."""
    for instruction in program.instructions if program is not None else ():
        form = getattr(instruction, "form", None)
        if form is None or getattr(form, "name", None) != "Mmad":
            continue
        args = dict(zip((param.name for param in form.params), instruction.operands))
        rows, cols, c = args["m"], args["n"], args["c"]
        if not (isinstance(rows, int) and isinstance(cols, int) and isinstance(c, int)) or rows < 1 or cols < 1:
            return []
        element = "int32" if args["aType"] in INTEGER_TYPES else "fp32"
        name = f"l0c[{c}].nd[{rows}x{cols}]" if c else f"l0c.nd[{rows}x{cols}]"  # as the stepper's p reads it
        return [PageView(name, array_name("L0C"), element, l0c_nd_offsets(rows, cols, c),
                         note=f"the {rows} x {cols} matrix the Mmad at instruction {instruction.index} writes from "
                              f"L0C[{c}] as Nz fractals (p l0c[{c}].nd[{rows}x{cols}])",
                         show=True)]
    return []
