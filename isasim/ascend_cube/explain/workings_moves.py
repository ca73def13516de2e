"""The click-for-working of the data movement forms :mod:`.workings` does not cover itself: DataCopy GM -> L1
(DataCopyParams' bursts), DataCopy L1 -> BT (the bias, widened from half or bf16 to float32), DataCopy L1 -> FB
(the per-channel quant words, each decoded field by field) and LoadData with LoadData2DParamsV2 (the 950's M x K
block of fractals, transposed if asked).  Each account names the source bytes by the docs' address rule, reads
them from the state before the step, converts them where the form converts, and ends with a Check against the
destination's bytes after the step.  The address arithmetic is written out here from the pseudocode in the
forms' docstrings, not taken from the semantics the machine runs, so a check compares two workings.
"""

from __future__ import annotations

import struct

from isasim.core.explain.model import Check, ElementWorking, Paragraph, Table

from ..config import ELEMENT_BYTES
from ..numerics.quant_word import FixpipeParamError, decode_quant_word
from ..state import array_name
from .moved_elements import moved as _moved
from .worked import burst_addresses

BLOCK = 32  # DataCopyParams' unit: blockLen, srcStride and dstStride count 32-byte blocks
FRACTAL = 512  # one L0A/L0B fractal: 16 rows of 32 bytes
QUANT_WORD_BYTES = 8
BT_ELEMENT_BYTES = 4


def _burst_rule(p, what: str, unit: str = "32 B") -> str:
    return (f"{what}: burst i (i < blockCount = {p['blockCount']}) reads blockLen = {p['blockLen']} blocks of "
            f"{unit} from src + i*(blockLen + srcStride)*32 and writes them to dst + i*(blockLen + dstStride)*32; "
            f"here src = {p['src']:#x}, dst = {p['dst']}, srcStride = {p['srcStride']}, dstStride = "
            f"{p['dstStride']}.")


def gm_to_l1(p, before, after) -> list[ElementWorking]:
    """DataCopy GM -> L1: each destination byte the GM byte its burst reads (bytes, no conversion)."""

    read_gm = before.memory._read  # noqa: SLF001 - the memory's unrecorded read: no access of the program
    elements = []
    for i, src, dst, length in burst_addresses(p):
        data = read_gm(src, length)
        elements.extend((dst + b, f"GM {src + b:#x}", data[b : b + 1], f"byte {b} of burst {i}")
                        for b in range(length))
    return _moved("L1", "uint8", elements, after.state.buffers["L1"],
                  _burst_rule(p, "DataCopy GM -> L1 (DataCopyParams), bytes unchanged"))


def l1_to_fb(p, before, after) -> list[ElementWorking]:
    """DataCopy L1 -> FB: each 64-bit quant word the burst carries, decoded as the chip will read it."""
    l1, fb_after = before.state.buffers["L1"], after.state.buffers["FB"]
    chip, options = after.state.chip.name, after.state.config["options"]
    rule = Paragraph(_burst_rule(p, "DataCopy L1 -> FB (DataCopyParams), bytes unchanged: the per-channel quant "
                                    "words, 8 bytes each, that SetFixPipeConfig then points a vector-mode "
                                    "Fixpipe at"))
    out = []
    for i, src, dst, length in burst_addresses(p):
        for w in range(0, length, QUANT_WORD_BYTES):
            raw = l1[src + w : src + w + QUANT_WORD_BYTES].tobytes()
            word = int.from_bytes(raw, "little")
            machine = fb_after[dst + w : dst + w + QUANT_WORD_BYTES].tobytes()
            blocks = [rule, _word_table(word, chip, options),
                      Check(f"FB[{dst + w}..{dst + w + 7}] (little-endian word)", f"{word:#018x}",
                            f"{int.from_bytes(machine, 'little'):#018x}")]
            out.append(ElementWorking(array_name("FB"), dst + w, QUANT_WORD_BYTES,
                                      f"FB[{dst + w}] = quant word from L1[{src + w}] (burst {i})", blocks))
    return out


def _word_table(word: int, chip: str, options: dict):
    """The word's fields as the chip reads them (numerics.quant_word's table), or why the chip refuses it."""
    try:
        fields = decode_quant_word(word, chip, options).fields
    except FixpipeParamError as error:
        return Paragraph(f"The word {word:#018x} as a quant word: {error} (a Fixpipe reading it faults).")
    return Table(["bits", "field", "value", "meaning"],
                 [[f"{first + width - 1}..{first}" if width > 1 else str(first), name, str(value), meaning]
                  for first, width, name, value, meaning in fields],
                 title=f"The word as the {chip} reads it")


def _widened(raw: bytes, src_type: str) -> tuple[bytes, str]:
    """A bias element as BT holds it, and its value as text: half and bf16 widen exactly to float32 (every half
    and bf16 value is a float32), float32 and int32 are copied."""
    if src_type == "float16":
        value = struct.unpack("<e", raw)[0]
        return struct.pack("<f", value), repr(value)
    if src_type == "bfloat16":
        bits = b"\0\0" + raw  # bf16 is the top half of a float32
        return bits, repr(struct.unpack("<f", bits)[0])
    if src_type == "int32":
        return raw, str(struct.unpack("<i", raw)[0])
    return raw, repr(struct.unpack("<f", raw)[0])


def l1_to_bt(p, before, after) -> list[ElementWorking]:
    """DataCopy L1 -> BT: each bias element, from its srcType element in L1, widened to BT's dstType."""
    src_type, dst_type = p["srcType"], p["dstType"]
    size = ELEMENT_BYTES[src_type]
    scale = BT_ELEMENT_BYTES // size
    l1, bt_after = before.state.buffers["L1"], after.state.buffers["BT"]
    rule = Paragraph(_burst_rule(p, f"DataCopy L1 -> BT of {src_type} to {dst_type}", f"32 B of {src_type}")
                     + (f" Each {src_type} element becomes a float32 (exactly: every {src_type} value is one), so "
                        f"the destination offsets and dstStride count {scale} x the source's bytes."
                        if scale > 1 else " Each element is copied as it is."))
    out = []
    for i, src, dst, length in burst_addresses(p, dst_scale=scale):
        for e in range(length // size):
            at, to = src + e * size, dst + e * BT_ELEMENT_BYTES
            raw = l1[at : at + size].tobytes()
            explained, value = _widened(raw, src_type)
            machine = bt_after[to : to + BT_ELEMENT_BYTES].tobytes()
            table = Table(["source", f"{src_type} bits", "value", f"{dst_type} bits"],
                          [[f"L1[{at}]", raw[::-1].hex(), value, explained[::-1].hex()]], title="The bias element")
            out.append(ElementWorking(array_name("BT"), to, BT_ELEMENT_BYTES,
                                      f"BT[{to}] = element {e} of burst {i} ({dst_type})",
                                      [rule, table, Check(f"BT[{to}..{to + 3}] bits (hex)", explained[::-1].hex(),
                                                          machine[::-1].hex())]))
    return out


def load_2d_v2(form, p, before, after) -> list[ElementWorking]:
    """LoadData with LoadData2DParamsV2: each destination element of the (transposed) M x K block."""

    if p["mStep"] == 0 or p["kStep"] == 0:
        return []  # documented: a NOP
    dtype, buffer = p["dtype"], form.buffers["dst"]
    size = ELEMENT_BYTES[dtype]
    c0 = BLOCK // size
    height, width = p["mStep"] * 16, p["kStep"] * c0  # X: the block the source fractals tile
    transpose = p["ifTranspose"]
    if transpose:
        height, width = width, height
    l1 = before.state.buffers["L1"]
    elements = []
    for i in range(height):
        for j in range(width):
            si, sj = (j, i) if transpose else (i, j)  # the element of X (row along M, column along K) it is
            fractal = (p["kStartPosition"] + sj // c0) * p["srcStride"] + p["mStartPosition"] + si // 16
            src = p["src"] + fractal * FRACTAL + (si % 16) * BLOCK + (sj % c0) * size
            dst = p["dst"] + ((j // c0) * p["dstStride"] + i // 16) * FRACTAL + (i % 16) * BLOCK + (j % c0) * size
            elements.append((dst, f"L1[{src}]", l1[src : src + size].tobytes(),
                             f"X{'ᵀ' if transpose else ''}[{i}][{j}] (X[{si}][{sj}], source fractal {fractal})"))
    elements.sort(key=lambda element: element[0])  # destination order, so neighbouring bytes group
    rule = (f"LoadData (LoadData2DParamsV2) of {dtype} to {buffer}: C0 = 32 / {size} = {c0}; X is the "
            f"{p['mStep'] * 16} x {p['kStep'] * c0} block whose fractal (m, k) (16 rows x C0) is source fractal "
            f"(kStartPosition + k)*srcStride + mStartPosition + m, 512 B each from src; "
            + ("the destination holds X transposed; " if transpose else "")
            + "destination fractal (a, b) (a along its rows, b along its columns) is at dst + (b*dstStride + a)*512, "
              f"row r at + r*32, column c at + c*{size}; here src = {p['src']}, dst = {p['dst']}, mStartPosition = "
              f"{p['mStartPosition']}, kStartPosition = {p['kStartPosition']}, mStep = {p['mStep']}, kStep = "
              f"{p['kStep']}, srcStride = {p['srcStride']}, dstStride = {p['dstStride']}.")
    return _moved(buffer, dtype, elements, after.state.buffers[buffer], rule)

