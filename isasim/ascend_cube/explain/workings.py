"""The trace viewer's click-for-working for the Ascend cube (``Isa.element_workings``): for an Mmad, each L0C
element it wrote, worked from the row of A and the column of B it read; for a Fixpipe, each output element, worked
from its L0C value and quant word.  The accounts are :mod:`.worked`'s, the ones ``isasim explain`` prints for its
one worked element, called here with the step's own state (the machine before and after the step), so the page
and the terminal share one piece of arithmetic.
"""

from __future__ import annotations

from isasim.core.explain.model import ElementWorking, Paragraph

from ..config import ELEMENT_BYTES
from ..state import ATOMIC_MODES, array_name
from . import worked

L0C_ELEMENT_BYTES = 4  # int32 or float32, whatever the Mmad's types


def element_workings(instruction, before, after) -> list[ElementWorking]:
    """One ElementWorking per element an Mmad or a Fixpipe wrote (``before``/``after``: core Machines just
    before and just after the step, only read); [] for any other instruction, a step that faulted, or an Mmad
    that is a NOP."""
    form = instruction.form
    if form.id != "Mmad" and form.name != "Fixpipe":
        return []
    if after.fault is not None and after.fault.index == instruction.index:
        return []  # it wrote nothing
    p = dict(zip(form.operand_names, instruction.operands))
    chip, options = after.state.chip.name, after.state.config["options"]
    if form.id == "Mmad":
        return _mmad(p, before, after, chip, options)
    return _fixpipe(form, p, before, after, chip, options)


def _mmad(p, before, after, chip: str, options: dict) -> list[ElementWorking]:
    m, n = p["m"], p["n"]
    if 0 in (m, n, p["k"]):
        return []
    buffers, l0c_after = before.state.buffers, after.state.buffers["L0C"]
    layout = worked.mmad_a_layout(p, chip)
    out = []
    for i in range(m):
        for j in range(n):
            blocks, _a, _b = worked.mmad_element(p, i, j, buffers, l0c_after, chip, options, products_shown=None,
                                                 locations=True)
            offset = p["c"] + L0C_ELEMENT_BYTES * worked.c_offset(i, j, m)
            where = Paragraph(f"C[{i}][{j}] is L0C[{offset}] (Nz: 16 x 16 fractals, {-(-m // 16) * 16} rows per "
                              f"16-column block). Row {i} of A is read from L0A ({layout}) and column {j} of B from "
                              f"L0B (Zn), at the bytes the table names.")
            out.append(ElementWorking(array_name("L0C"), offset, L0C_ELEMENT_BYTES,
                                      f"C[{i}][{j}] = L0C[{offset}]", [where, *blocks]))
    return out


def _fixpipe(form, p, before, after, chip: str, options: dict) -> list[ElementWorking]:
    size = ELEMENT_BYTES[p["dstType"]]
    to_gm = form.buffers["dst"] == "GM"
    if to_gm:
        # the memory's own unrecorded read (as the journal reads): the viewer may be recording the program's
        # accesses on these machines, and this account is no access of the program
        read_output, location = after.memory._read, "memory"  # noqa: SLF001
    else:
        l1 = after.state.buffers["L1"]
        read_output, location = (lambda offset, count: l1[offset : offset + count].tobytes()), array_name("L1")
    regs = before.state.regs
    atomic = to_gm and ATOMIC_MODES[regs["atomic"]] != "none"
    out = []
    for i in range(p["mSize"]):
        for j in range(p["nSize"]):
            offset = worked.fixpipe_output_offset(p, i, j)
            gm_before = before.memory._read(offset, size) if atomic else None  # noqa: SLF001 (as above)
            blocks = worked.fixpipe_element(p, i, j, before.state.buffers, regs, read_output, chip, options,
                                            gm_before=gm_before)
            at = worked.fixpipe_l0c_offset(p, i, j)
            _word, source = worked.fixpipe_word(p, j, before.state.buffers, regs)
            mode = p["quantPre"]
            where = Paragraph(f"Output ({i}, {j}) is {'GM ' + format(offset, '#x') if to_gm else f'L1[{offset}]'} "
                              f"({p['dstType']}, {'ND' if p['nz2nd'] else 'Nz'}), from C[{i}][{j}] at L0C[{at}]; "
                              + ("no quant word (NoQuant)." if mode == "NoQuant"
                                 else f"quantPre={mode}{', ReLU' if p['reluEn'] else ''}, the quant word from "
                                      f"{source}."))
            title = f"out[{i}][{j}] = " + (f"GM {offset:#x}" if to_gm else f"L1[{offset}]")
            out.append(ElementWorking(location, offset, size, title, [where, *blocks]))
    return out
