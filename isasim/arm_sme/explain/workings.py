"""The trace viewer's click-for-working for arm_sme (``Isa.element_workings``): for a step of an integer or
floating-point dot product into a ZA vector group (UDOT, SDOT, USDOT, SUDOT and the vertical dots; FDOT,
BFDOT) or an outer product into a ZA tile (SMOPA ... USMOPS; FMOPA/FMOPS, BFMOPA/BFMOPS), one
core.explain.model.ElementWorking per ZA element the instruction's Operation writes, made by the very
functions that write ``isasim explain``'s worked element (checks_za.py), fed with the step's live state.

Those functions read a worked example's ``run``: ``run.before`` (the registers, Z, ZA and P before the step)
and ``run.machine`` (the machine after it).  :class:`LiveRun` is that pair made of the viewer's two machines,
so the lanes, predicate bits, products, sums and the final Check are the explain code's, read from the trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...core.explain.model import ElementWorking
from ..semantics.za_tiles import tile_count
from ..state import X_NAMES
from .before_state import first_group_vector
from .checks_za import dot_element_blocks, fp_dot_element_blocks, fp_outer_element_blocks, outer_element_blocks


@dataclass
class LiveRun:
    """What checks_za's functions read of a worked example, from a machine before the step and one after it."""

    before: dict
    machine: Any

    @classmethod
    def of(cls, before, after) -> "LiveRun":
        state = before.state
        snapshot = {"regs": {name: state.x[n] for n, name in enumerate(X_NAMES)},
                    "z": state.z, "za": state.za, "p": state.p}
        return cls(snapshot, after)


def element_workings(instruction, before, after) -> list[ElementWorking]:
    """The account of every ZA element ``instruction`` wrote, or [] for a form without one (or a step that
    faulted: it wrote nothing)."""
    form = getattr(instruction, "form", None)
    if form is None or after.fault is not None or form.group not in _GROUPS:
        return []
    return _GROUPS[form.group](instruction, LiveRun.of(before, after))


def _group_workings(ins, run: LiveRun, esize: int, blocks_of) -> list[ElementWorking]:
    """Element e of each vector r of the ZA vector group (every element of the nreg vectors is written)."""
    shape = ins.form.extra["shape"]
    (v, offset) = ins.operands[0]
    svlb = run.machine.state.svlb
    first = first_group_vector(run, v, offset, shape.nreg)
    eb, letter = esize // 8, "s" if esize == 32 else "d"
    workings = []
    for r in range(shape.nreg):
        vec = first + r * (svlb // shape.nreg)
        for e in range(svlb // eb):
            workings.append(ElementWorking("za", vec * svlb + e * eb, eb,
                                           f"ZA[{vec}].{letter}[{e}] (vector {r} of the group, element {e})",
                                           blocks_of(ins, run, r, e)))
    return workings


def _tile_workings(ins, run: LiveRun, esize: int, blocks_of) -> list[ElementWorking]:
    """Element (row, col) of ZAda: every element of the tile is written (sum unchanged where no pair is active)."""
    da = ins.operands[0]
    svlb = run.machine.state.svlb
    eb, letter = esize // 8, "S" if esize == 32 else "D"
    dim = svlb // eb
    workings = []
    for row in range(dim):
        vector = da + row * tile_count(esize)
        for col in range(dim):
            workings.append(ElementWorking("za", vector * svlb + col * eb, eb,
                                           f"ZA{da}.{letter}[{row}][{col}] = ZA[{vector}].{letter.lower()}[{col}]",
                                           blocks_of(ins, run, row, col)))
    return workings


_GROUPS = {
    "dot": lambda ins, run: _group_workings(ins, run, ins.form.extra["shape"].esize, dot_element_blocks),
    "fp_dot": lambda ins, run: _group_workings(ins, run, 32, fp_dot_element_blocks),
    "outer": lambda ins, run: _tile_workings(ins, run, ins.form.extra["shape"].esize, outer_element_blocks),
    "fp_outer": lambda ins, run: _tile_workings(ins, run, 32, fp_outer_element_blocks),
}
