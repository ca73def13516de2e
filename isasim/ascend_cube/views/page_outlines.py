"""The trace page's outlines of an Ascend cube instruction's operands (``Isa.page_outlines``): the buffer bytes
it reads and writes, read from its parameters and (for a Fixpipe's per-channel words) the fpc register before the
step.  Only the on-chip buffers are outlined (GM is memory, not one of the page's arrays).

What is written is the bytes the instruction stores a value in, not the padding around them a write passes
over unchanged: C's m x n elements in L0C's Nz fractals, an Nd2Nz copy's elements in L1, an L1 output's rows.
"""

from __future__ import annotations

import numpy as np

from ...core.faults import Fault
from ...core.isa import PageOutline
from ..config import CHIPS, ELEMENT_BYTES
from ..semantics import data_movement as data_movement_semantics
from ..semantics import fixpipe as fixpipe_semantics
from ..semantics import mmad as mmad_semantics
from ..state import array_name
from .buffers import l0c_nd_offsets

BLOCK = 32  # DataCopyParams' unit and one fractal row
FRACTAL = 512  # one L0A/L0B fractal
QUANT_WORD_BYTES = 8
BT_ELEMENT_BYTES = 4


def page_outlines(instruction, before) -> list[PageOutline]:
    """The operands of ``instruction`` as PageOutlines (``before``: the core Machine before the step, only read);
    [] for an instruction that moves no buffer bytes, or an Mmad that is a NOP or of a pair the chip lacks."""
    form = getattr(instruction, "form", None)
    if form is None or not hasattr(form, "operand_names"):
        return []
    p = dict(zip(form.operand_names, instruction.operands))
    chip = CHIPS[before.state.config["chip"]]
    handler = _HANDLERS.get(form.id) or (_load_2d_v2 if form.marker == "mStartPosition" else None)
    if handler is None:
        return []
    try:
        return handler(form, p, chip, before.state)
    except Fault:  # a type pair or mode the chip lacks: the step faults before it moves a byte
        return []


def spans_of(starts, size: int) -> tuple[tuple[int, int], ...]:
    """[start, start + size) of each start, sorted and joined where they touch or overlap."""
    return _joined((start, size) for start in np.unique(np.asarray(starts, dtype=np.int64).reshape(-1)).tolist())


def _range(start: int, size: int) -> tuple[tuple[int, int], ...]:
    return ((start, start + size),) if size > 0 else ()


def _outline(buffer: str, spans, label: str, role: str) -> PageOutline:
    return PageOutline(array_name(buffer), tuple(spans), label, role)


def _where(buffer: str, spans) -> str:
    """The spans as the stepper would name them: ``L0A[0..3071]``, or the first and last and how many."""
    if len(spans) == 1:
        return f"{buffer}[{spans[0][0]}..{spans[0][1] - 1}]"
    return f"{buffer}[{spans[0][0]}..{spans[-1][1] - 1}] in {len(spans)} runs"


# ---- Mmad ----------------------------------------------------------------------------------------------------


def _mmad(form, p, chip, state) -> list[PageOutline]:
    m, n, k = p["m"], p["n"], p["k"]
    if 0 in (m, n, k):
        return []  # a NOP: it reads and writes nothing
    c_type = mmad_semantics.accumulator_type(chip, p["aType"], p["bType"])
    layout = mmad_semantics.a_layout(chip, m, p["disableGemv"])
    a = _range(p["a"], mmad_semantics.matrix_bytes("L0A", layout, m, k, p["aType"]))
    b = _range(p["b"], mmad_semantics.matrix_bytes("L0B", "Zn", k, n, p["bType"]))
    c = spans_of(l0c_nd_offsets(m, n, p["c"]), 4)
    out = [_outline("L0A", a, f"A: {m} x {k} {p['aType']} ({layout}), {_where('L0A', a)}", "read"),
           _outline("L0B", b, f"B: {k} x {n} {p['bType']} (Zn), {_where('L0B', b)}", "read")]
    start = mmad_semantics._starts_from(p)  # noqa: SLF001 - the Mmad's own reading of its three flags
    if start == "bias":
        bias = _range(p["bias"], BT_ELEMENT_BYTES * n)
        out.append(_outline("BT", bias, f"the bias row: {n} {c_type}, {_where('BT', bias)}", "read"))
    out.append(_outline("L0C", c, f"C: {m} x {n} {c_type} (Nz), {_where('L0C', c)}"
                        + (", accumulated onto" if start == "c" else ""),
                        "read and written" if start == "c" else "written"))
    return out


# ---- Fixpipe -------------------------------------------------------------------------------------------------


def _fixpipe(form, p, chip, state) -> list[PageOutline]:
    m, n, mode = p["mSize"], p["nSize"], p["quantPre"]
    src = _range(p["src"], fixpipe_semantics.l0c_bytes(n, p["srcStride"]))
    out = [_outline("L0C", src, f"C: {m} x {n} {p['srcType']} (Nz, srcStride {p['srcStride']}), "
                                f"{_where('L0C', src)}", "read")]
    if fixpipe_semantics.is_vector_mode(mode):
        words = _range(state.regs["fpc"], QUANT_WORD_BYTES * n)
        out.append(_outline("FB", words, f"{mode}: {n} per-channel quant words from fpc, {_where('FB', words)}",
                            "read"))
    if form.buffers["dst"] == "L1":
        size = ELEMENT_BYTES[p["dstType"]]
        rows = [(span.start + i * span.stride, span.row_bytes)
                for span, _column in fixpipe_semantics.output_spans(p, "L1", size) for i in range(span.rows)]
        written = _joined(rows)
        out.append(_outline("L1", written, f"the {m} x {n} {p['dstType']} output ({'ND' if p['nz2nd'] else 'Nz'}), "
                                           f"{_where('L1', written)}", "written"))
    return out


def _joined(pieces) -> tuple[tuple[int, int], ...]:
    """(start, size) pieces as sorted joined spans."""
    out: list[list[int]] = []
    for start, size in sorted(pieces):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], start + size)
        else:
            out.append([start, start + size])
    return tuple((a, b) for a, b in out)


# ---- data movement ---------------------------------------------------------------------------------------------


def _copy(form, p, chip, state) -> list[PageOutline]:
    src_buffer, dst_buffer = form.buffers["src"], form.buffers["dst"]
    scale = 1
    what = "bytes"
    if form.id == "DataCopy_L1_to_BT":
        scale = ELEMENT_BYTES[p["dstType"]] // ELEMENT_BYTES[p["srcType"]]
        what = f"bias {p['srcType']} -> {p['dstType']}"
    elif form.id == "DataCopy_L1_to_FB":
        what = "quant words"
    bursts = data_movement_semantics.burst_plan(p, dst_scale=scale).pieces()
    out = []
    if src_buffer != "GM":
        source = _joined((src, length) for src, _dst, length in bursts)
        out.append(_outline(src_buffer, source, f"source ({what}): {p['blockCount']} bursts of {p['blockLen']} x 32 "
                                                f"B, {_where(src_buffer, source)}", "read"))
    written = _joined((dst, length * scale) for _src, dst, length in bursts)
    out.append(_outline(dst_buffer, written, f"destination ({what}), {_where(dst_buffer, written)}", "written"))
    return out


def _nd2nz(form, p, chip, state) -> list[PageOutline]:
    """Element (r, d) of matrix t goes to dst + t*dstNzMatrixStride*size + ((d / C0)*dstNzC0Stride +
    r*dstNzNStride)*32 + (d MOD C0)*size (the form's pseudocode)."""
    written = spans_of(data_movement_semantics.nd2nz_destinations(p), ELEMENT_BYTES[p["dtype"]])
    return [_outline("L1", written, f"{p['ndNum']} x {p['nValue']} x {p['dValue']} {p['dtype']} as Nz, "
                                    f"{_where('L1', written)}", "written")]


def _load_2d(form, p, chip, state) -> list[PageOutline]:
    """Fractal i: L1 src + (startIndex + i*srcStride)*512 to dst + i*(1 + dstGap)*512, 512 bytes each."""
    buffer = form.buffers["dst"]
    count = p["repeatTimes"]
    source = spans_of([p["src"] + (p["startIndex"] + i * p["srcStride"]) * FRACTAL for i in range(count)], FRACTAL)
    written = spans_of([p["dst"] + i * (1 + p["dstGap"]) * FRACTAL for i in range(count)], FRACTAL)
    return [_outline("L1", source, f"{count} source fractals, {_where('L1', source)}", "read"),
            _outline(buffer, written, f"{count} destination fractals"
                     + (" (transposed)" if p["ifTranspose"] else "") + f", {_where(buffer, written)}", "written")]


def _load_2d_v2(form, p, chip, state) -> list[PageOutline]:
    """Source fractal (m, k) at src + ((kStartPosition + k)*srcStride + mStartPosition + m)*512; destination
    fractal (a, b) at dst + (b*dstStride + a)*512 for the (transposed) block's rows x cols fractals."""
    m_step, k_step = p["mStep"], p["kStep"]
    if m_step == 0 or k_step == 0:
        return []  # documented: a NOP
    buffer = form.buffers["dst"]
    c0 = BLOCK // ELEMENT_BYTES[p["dtype"]]
    rows, cols = (k_step * c0 // 16, m_step * 16 // c0) if p["ifTranspose"] else (m_step, k_step)
    k, m = np.meshgrid(np.arange(k_step), np.arange(m_step), indexing="ij")
    source = spans_of(p["src"] + ((p["kStartPosition"] + k) * p["srcStride"] + p["mStartPosition"] + m) * FRACTAL,
                      FRACTAL)
    b, a = np.meshgrid(np.arange(cols), np.arange(rows), indexing="ij")
    written = spans_of(p["dst"] + (b * p["dstStride"] + a) * FRACTAL, FRACTAL)
    return [_outline("L1", source, f"{m_step} x {k_step} source fractals (M x K), {_where('L1', source)}", "read"),
            _outline(buffer, written, f"{rows} x {cols} destination fractals"
                     + (" (transposed)" if p["ifTranspose"] else "") + f", {_where(buffer, written)}", "written")]


_HANDLERS = {"Mmad": _mmad, "Fixpipe_L0C_to_GM": _fixpipe, "Fixpipe_L0C_to_L1": _fixpipe,
             "DataCopy_GM_to_L1": _copy, "DataCopy_L1_to_BT": _copy, "DataCopy_L1_to_FB": _copy,
             "DataCopy_GM_to_L1_Nd2Nz": _nd2nz, "LoadData_L1_to_L0A": _load_2d, "LoadData_L1_to_L0B": _load_2d}
