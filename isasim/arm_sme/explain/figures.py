"""The picture ``isasim explain --svg/--html`` and ``isasim docs`` draw for an arm_sme form.

:func:`figure` picks the picture by the form's family; one module per kind of picture:
figures_group (a ZA vector group: the dots, MOVA of a group), figures_outer (an outer product
filling a tile), figures_slices (tile slices, ZA vectors and Z registers to and from memory or Z)
and figures_simple (everything else: the registers, predicate or memory the step changed).
Every value drawn is read from the worked example's run: ``run.before`` (regs, z, za before
the step), ``run.machine`` after it, ``run.record.writes`` (the journal).  What those modules
share is in drawing.py.
"""

from __future__ import annotations

from ...core.explain import Encoding, Figure
from . import checks_sve, figures_group, figures_outer, figures_simple, figures_slices
from .drawing import example_figure


def figure(ins, encoding: Encoding, run) -> Figure:
    """The form's picture, drawn from the worked example's run (the encoding only if it faulted)."""
    if run.fault is not None or not run.before:
        what = run.fault.describe() if run.fault is not None else "the set-up did not reach the instruction"
        return example_figure(ins, encoding, [], caption=f"The example faulted, so nothing was written: {what}")
    form = ins.form
    if checks_sve.applies(form):  # issue 28's SVE and SME2 forms: the registers, predicates or memory changed
        return figures_simple.changes_figure(ins, encoding, run)
    if form.group in ("dot", "fp_dot"):
        return figures_group.dot_figure(ins, encoding, run)
    if form.group == "za_move" and "vgx" in form.id:
        return figures_group.move_figure(ins, encoding, run)
    if form.group in ("outer", "fp_outer"):
        return figures_outer.outer_figure(ins, encoding, run)
    if form.group in ("za_memory", "za_move"):
        return figures_slices.tile_slice_figure(ins, encoding, run)
    if form.id in ("LDR_za", "STR_za"):
        return figures_slices.za_vector_figure(ins, encoding, run)
    if form.group == "z_memory":
        return figures_slices.z_memory_figure(ins, encoding, run)
    return figures_simple.changes_figure(ins, encoding, run)
