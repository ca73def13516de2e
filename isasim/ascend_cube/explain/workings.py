"""The trace viewer's click-for-working for the Ascend cube (``Isa.element_workings``): for an Mmad, each L0C
element it wrote, worked from the row of A and the column of B it read; for a Fixpipe, each output element, worked
from its L0C value and quant word; for an Nd2Nz DataCopy (GM -> L1) and a LoadData (L1 -> L0A/L0B, LoadData2DParams),
each destination element, from the source bytes the instruction's address rule picks.  The accounts and addresses
are :mod:`.worked`'s, the ones ``isasim explain`` uses for its worked example, called here with the step's own
state (the machine before and after the step), so the page and the terminal share one piece of arithmetic.  The
other data movement forms (DataCopy GM -> L1 bursts, L1 -> BT, L1 -> FB, LoadData2DParamsV2) are worked in
:mod:`.workings_moves`.
"""

from __future__ import annotations

from isasim.core.explain.model import ElementWorking, Paragraph

from ..config import ELEMENT_BYTES
from ..state import ATOMIC_MODES, array_name
from . import worked
from .moved_elements import moved as _moved

L0C_ELEMENT_BYTES = 4  # int32 or float32, whatever the Mmad's types
# the data movement forms whose accounts are in workings_moves (by the function there)
MORE_MOVES = {"DataCopy_GM_to_L1": "gm_to_l1", "DataCopy_L1_to_BT": "l1_to_bt", "DataCopy_L1_to_FB": "l1_to_fb",
              "LoadData_L1_to_L0A_V2": "load_2d_v2", "LoadData_L1_to_L0B_V2": "load_2d_v2"}


def element_workings(instruction, before, after) -> list[ElementWorking]:
    """One ElementWorking per element an Mmad or a Fixpipe wrote (``before``/``after``: core Machines just
    before and just after the step, only read); [] for any other instruction, a step that faulted, or an Mmad
    that is a NOP."""
    form = instruction.form
    moves = form.id == "DataCopy_GM_to_L1_Nd2Nz" or form.id in ("LoadData_L1_to_L0A", "LoadData_L1_to_L0B")
    more = form.id in MORE_MOVES
    if form.id != "Mmad" and form.name != "Fixpipe" and not moves and not more:
        return []
    if after.fault is not None and after.fault.index == instruction.index:
        return []  # it wrote nothing
    p = dict(zip(form.operand_names, instruction.operands))
    if more:
        from . import workings_moves

        if form.marker == "mStartPosition":
            return workings_moves.load_2d_v2(form, p, before, after)
        return getattr(workings_moves, MORE_MOVES[form.id])(p, before, after)
    if form.id == "DataCopy_GM_to_L1_Nd2Nz":
        return _nd2nz(p, before, after)
    if moves:
        return _load_2d(form, p, before, after)
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


# ---- data movement: each destination element from the source bytes the address rule picks ------------------


def _nd2nz(p, before, after) -> list[ElementWorking]:
    """Element (r, d) of each source matrix t: the GM bytes at its ND address, to its Nz place in L1."""
    size, dtype = ELEMENT_BYTES[p["dtype"]], p["dtype"]
    # the memory's unrecorded read, as the Fixpipe's account reads: this is no access of the program
    read_gm = before.memory._read  # noqa: SLF001
    l1_after = after.state.buffers["L1"]
    elements = []
    for t in range(p["ndNum"]):
        for r in range(p["nValue"]):
            for d in range(p["dValue"]):
                src, dst = worked.nd2nz_element(p, t, r, d)
                elements.append((dst, f"GM {src:#x}", read_gm(src, size),
                                 f"element ({r}, {d}) of source matrix {t}"))
    rule = (f"Nd2Nz DataCopy of {dtype}: element (r, d) of matrix t is read from GM src + (t*srcNdMatrixStride + "
            f"r*srcDValue + d)*{size} and written to L1 dst + t*dstNzMatrixStride*{size} + ((d / C0)*dstNzC0Stride "
            f"+ r*dstNzNStride)*32 + (d MOD C0)*{size}, C0 = {32 // size}; here src = {p['src']:#x}, dst = "
            f"{p['dst']}, srcDValue = {p['srcDValue']}, srcNdMatrixStride = {p['srcNdMatrixStride']}, "
            f"dstNzC0Stride = {p['dstNzC0Stride']}, dstNzNStride = {p['dstNzNStride']}, dstNzMatrixStride = "
            f"{p['dstNzMatrixStride']}.")
    return _moved("L1", dtype, elements, l1_after, rule)


def _load_2d(form, p, before, after) -> list[ElementWorking]:
    """Each destination element of each 512-byte fractal: the L1 bytes the fractal rule (and a transpose) picks."""
    buffer, dtype = form.buffers["dst"], p["dtype"]
    size = ELEMENT_BYTES[dtype]
    l1 = before.state.buffers["L1"]
    elements = []
    for i in range(p["repeatTimes"]):
        fractal = worked.load_2d_destination(p, i)
        for byte in range(0, worked.FRACTAL, size):
            sources = [worked.load_2d_source(p, i, byte + b) for b in range(size)]
            where = f"L1[{sources[0]}]" if sources == list(range(sources[0], sources[0] + size)) else \
                "L1[" + ", ".join(map(str, sources)) + "]"
            elements.append((fractal + byte, where, bytes(int(l1[at]) for at in sources),
                             f"byte {byte} of destination fractal {i}"))
    rule = (f"LoadData of {dtype} to {buffer}: destination fractal i (512 bytes at dst + i*(1+dstGap)*512) is L1 "
            f"fractal startIndex + i*srcStride from src"
            + (", transposed as 16 x 16 elements of 2 bytes (destination row r, column c from source row c, "
               "column r)" if p["ifTranspose"] else ", byte for byte")
            + f"; here dst = {p['dst']}, src = {p['src']}, startIndex = {p['startIndex']}, srcStride = "
              f"{p['srcStride']}, dstGap = {p['dstGap']}, repeatTimes = {p['repeatTimes']}.")
    return _moved(buffer, dtype, elements, after.state.buffers[buffer], rule)
