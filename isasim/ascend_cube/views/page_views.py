"""The trace page's views of the Ascend cube's buffers:

- L0C: the M x N matrix C of the program's first Mmad, read from its Nz fractals with the layout
  ``p l0c.nd[MxN]`` reads (buffers.l0c_nd_offsets), so the page and the stepper agree;
- FB: the per-channel 64-bit quant words a vector-mode Fixpipe reads (one word per output column, from fpc on),
  one channel a row, with the word's bit fields as the configured chip reads them (numerics.quant_word);
- BT: the bias row an Mmad with cmatrixSource starts C from, one element per column, int32 or float32 as the
  Mmad's accumulator type (what mmad reads from BT[bias ..+ 4n]).

A view of FB or BT is given only when the program uses that buffer, so a program that does not sees L0C alone.
"""

from __future__ import annotations

import numpy as np

from ...core.isa import PageField, PageView
from ...core.program import Program
from ..config import CHIPS, ELEMENT_BYTES
from ..semantics.fixpipe import QUANT_WORD_BYTES, is_vector_mode
from ..semantics.mmad import accumulator_type
from ..state import array_name
from .buffers import l0c_nd_offsets

INTEGER_TYPES = ("int8", "uint8", "int16", "int32")
BT_ELEMENT_BYTES = 4  # the bias table holds float32 or int32, whatever it was copied from (copy_l1_to_bt)
FB_WORDS_WITHOUT_A_FIXPIPE = 16  # FB written but no vector-mode Fixpipe reads it: the first words written
_PAGE_ELEMENT = {"int32": "int32", "float32": "fp32"}  # the accumulator type as the panel's element types name it


def page_views(config: dict, program: Program | None) -> list[PageView]:
    """L0C as C of the first Mmad; FB's quant words when the program has a vector-mode Fixpipe or writes FB; the
    bias row when an Mmad starts from it or the program writes BT; [] without a program."""
    if program is None:
        return []
    steps = [(ins, dict(zip(ins.form.operand_names, ins.operands))) for ins in program.instructions
             if getattr(ins, "form", None) is not None and hasattr(ins.form, "operand_names")]
    return [view for view in (_l0c(steps), _fb(config, steps), _bt(config, steps)) if view is not None]


def _whole(*values) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def _l0c(steps) -> PageView | None:
    for instruction, args in steps:
        if instruction.form.name != "Mmad":
            continue
        rows, cols, c = args["m"], args["n"], args["c"]
        if not _whole(rows, cols, c) or rows < 1 or cols < 1:
            return None
        element = "int32" if args["aType"] in INTEGER_TYPES else "fp32"
        name = f"l0c[{c}].nd[{rows}x{cols}]" if c else f"l0c.nd[{rows}x{cols}]"  # as the stepper's p reads it
        return PageView(name, array_name("L0C"), element, l0c_nd_offsets(rows, cols, c),
                        note=f"the {rows} x {cols} matrix the Mmad at instruction {instruction.index} writes from "
                             f"L0C[{c}] as Nz fractals (p l0c[{c}].nd[{rows}x{cols}])",
                        show=True)
    return None


# ---- FB: the quant words --------------------------------------------------------------------------------------


def quant_word_fields(chip: str, options: dict) -> tuple[PageField, ...]:
    """The quant word's bit fields as ``chip`` reads them (numerics.quant_word's table: M1, on the 910B N and MCB,
    offset, sign), for the page to decode each FB word."""
    fields = [PageField("M1", 13, 19, "float_top",
                        note="the scale: bits 31..13 are the top 19 bits of a float32 (sign, exponent, 10 mantissa "
                             "bits)")]
    if CHIPS[chip].quant_word_has_mcb:
        plus_one = options.get("mcb_n_code", "plus_one") == "plus_one"
        fields.append(PageField("N", 32, 4, "unsigned", add=1 if plus_one else 0,
                                note="the shift when MCB = 1: " + ("code + 1 (b'0000 means 1, b'1111 means 16)"
                                                                   if plus_one else "the code itself "
                                                                   "(option mcb_n_code=raw)")))
        fields.append(PageField("MCB", 36, 1, "unsigned",
                                note="1: int32 >> N, then int16, then float (DEQF16 / REQ8); 0: int32 to float"))
    fields.append(PageField("offset", 37, 9, "signed",
                            note="9-bit two's complement, added after the scale (REQ8 / QF322B8_PRE)"))
    fields.append(PageField("sign", 46, 1, "unsigned", note="1: signed int8 result, 0: unsigned (REQ8 / QF322B8_PRE)"))
    return tuple(fields)


def _fb(config: dict, steps) -> PageView | None:
    """The words of the first vector-mode Fixpipe (at the fpc its last SetFixPipeConfig set; 0 before any), else
    the first FB words the program's first DataCopy L1 -> FB writes."""
    fpc = 0
    for instruction, args in steps:
        form = instruction.form
        if form.name == "SetFixPipeConfig" and _whole(args["quantPre"]):
            fpc = args["quantPre"]
        elif form.name == "Fixpipe" and is_vector_mode(str(args["quantPre"])) and _whole(args["nSize"]):
            where = (f"the {args['nSize']} per-channel quant words the {args['quantPre']} Fixpipe at instruction "
                     f"{instruction.index} reads from FB[{fpc}] (fpc), one output column's word a row")
            return _fb_view(config, fpc, args["nSize"], where)
    for instruction, args in steps:
        if instruction.form.id == "DataCopy_L1_to_FB" and _whole(args["dst"], args["blockLen"], args["blockCount"]):
            burst = args["blockLen"] * 32
            written = burst * args["blockCount"] if args["dstStride"] == 0 else burst  # the first run of bytes
            count = min(written // QUANT_WORD_BYTES, FB_WORDS_WITHOUT_A_FIXPIPE)
            where = (f"the first {count} quant words the DataCopy at instruction {instruction.index} writes to "
                     f"FB[{args['dst']}] (no vector-mode Fixpipe reads FB), one word a row")
            return _fb_view(config, args["dst"], count, where)
    return None


def _fb_view(config: dict, first: int, count: int, where: str) -> PageView | None:
    size = CHIPS[config["chip"]].buffers["FB"]
    count = min(count, (size - first) // QUANT_WORD_BYTES)  # the Fixpipe itself faults on words past FB's end
    if count < 1:
        return None
    offsets = first + QUANT_WORD_BYTES * np.arange(count)[:, None]
    name = f"fb[{first}].quant[{count}]" if first else f"fb.quant[{count}]"
    return PageView(name, array_name("FB"), "uint64", offsets, note=where, show=True,
                    fields=quant_word_fields(config["chip"], config.get("options") or {}))


# ---- BT: the bias row --------------------------------------------------------------------------------------


def _starts_from_bias(args) -> bool:
    """Mmad's C starts from the bias table: cmatrixSource with cmatrixInitVal false (semantics.mmad)."""
    return args["cmatrixInitVal"] is False and args["cmatrixSource"] is True


def _bt(config: dict, steps) -> PageView | None:
    """The bias row of the first Mmad that starts from BT, else what the first DataCopy L1 -> BT writes."""
    chip = CHIPS[config["chip"]]
    for instruction, args in steps:
        if instruction.form.name == "Mmad" and _starts_from_bias(args) and _whole(args["n"], args["bias"]) \
                and args["n"] > 0 and min(args["m"], args["k"]) > 0:
            try:
                c_type = accumulator_type(chip, args["aType"], args["bType"])
            except Exception:  # a type pair the chip lacks: the Mmad faults, and there is no row to show
                return None
            where = (f"the {c_type} bias row (one per column of C) the Mmad at instruction {instruction.index} "
                     f"starts C from: BT[{args['bias']} ..+ 4 x {args['n']}]")
            return _bt_view(chip, args["bias"], args["n"], _PAGE_ELEMENT[c_type], where)
    for instruction, args in steps:
        if instruction.form.id == "DataCopy_L1_to_BT" and _whole(args["dst"], args["blockLen"]):
            dst_type = args["dstType"]
            if dst_type not in _PAGE_ELEMENT:
                return None
            scale = ELEMENT_BYTES[dst_type] // max(1, ELEMENT_BYTES.get(args["srcType"], 4))
            count = args["blockLen"] * 32 * scale // BT_ELEMENT_BYTES  # the first burst
            where = (f"the {count} {dst_type} values the first burst of the DataCopy at instruction "
                     f"{instruction.index} writes to BT[{args['dst']}] (no Mmad starts from BT)")
            return _bt_view(chip, args["dst"], count, _PAGE_ELEMENT[dst_type], where)
    return None


def _bt_view(chip, first: int, count: int, element: str, where: str) -> PageView | None:
    count = min(count, (chip.buffers["BT"] - first) // BT_ELEMENT_BYTES)
    if count < 1:
        return None
    offsets = first + BT_ELEMENT_BYTES * np.arange(count)[None, :]
    name = f"bt[{first}].bias[{count}]" if first else f"bt.bias[{count}]"
    return PageView(name, array_name("BT"), element, offsets, note=where, show=True)
