"""The worked examples of ``isasim explain``: an instruction's result worked out here from the pseudocode,
by other means than the machine (element loops over the documented address formulas, exact fractions for
float sums), beside the machine's.  The data it runs on is :mod:`.example_data`'s.
"""

from __future__ import annotations

import functools
import hashlib
import re
import struct
from fractions import Fraction

import numpy as np

from isasim.core.explain import Cell, Check, Grid, Paragraph, Table

from ..config import CHIPS, ELEMENT_BYTES

BLOCK, FRACTAL = 32, 512


def quant_word(p, rng) -> int:
    """A quant word as aclnnTransQuantParam packs it: a scale (and an offset for the int8 outputs), bit 46 set
    for a signed int8 output."""
    from ..numerics.quant_word import pack_scale

    int8_out = p["dstType"] in ("int8", "uint8")
    scale = rng.choice([2.0 ** -rng.randrange(6, 12), rng.uniform(0.001, 0.02)]) if int8_out else \
        rng.uniform(0.01, 2.0)
    word = pack_scale(scale, float(rng.randrange(-20, 20)) if int8_out else None)
    return word if p["dstType"] != "uint8" else word & ~(1 << 46)


def example_regs(form, p, rng) -> dict:
    """The registers the example sets: a scalar-mode Fixpipe's quant word (a V mode's words are data in FB)."""
    mode = p.get("quantPre") if form.name == "Fixpipe" else None
    if mode is None or mode.startswith("V") or mode in ("NoQuant", "F322F16", "F322BF16"):
        return {}
    return {"quant_pre": quant_word(p, rng)}


def _decode(bits: np.ndarray, dtype: str) -> np.ndarray:
    """8-bit float codes as their values (the exact decoders of numerics.formats)."""
    from ..numerics import formats

    return np.asarray(formats.decode(bits, dtype), dtype=np.float64)


# ---- the checks ------------------------------------------------------------------------------------


def _digest(data: bytes) -> str:
    return f"{len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}"


def _bytes_grid(title: str, data: bytes, changed: bool = False) -> Grid:
    shown = data[:32]
    return Grid(title, [[Cell(f"{b:02x}", "changed" if changed else None) for b in shown]],
                col_labels=[str(i) for i in range(len(shown))], group=4)


def work(form, p, run, chip: str, options: dict):
    before, state, memory = run.before, run.machine.state, run.machine.memory
    fid = form.id
    if form.name in ("SetFixpipePreQuantFlag", "SetFixPipeConfig", "SetAtomicAdd", "SetAtomicNone"):
        return _register_check(form, p, state)
    if form.sync:
        return _sync_check(form, p, before, state)
    if fid == "Mmad":
        return _mmad(p, before, state, chip, options)
    if form.name == "Fixpipe":
        return _fixpipe(form, p, before, state, memory, chip, options)
    expected = _moved_bytes(form, p, before, run)
    blocks, panels = [], []
    for buffer, offset, data in expected:
        machine = state.buffers[buffer][offset : offset + len(data)].tobytes()
        blocks.append(Check(f"{buffer}[{offset}] .. {buffer}[{offset + len(data) - 1}]", _digest(data),
                            _digest(machine)))
        panels.append([_bytes_grid(f"expected {buffer}[{offset}..]", data),
                       _bytes_grid(f"machine {buffer}[{offset}..]", machine, True)])
    return blocks, panels


def burst_addresses(p, dst_scale: int = 1):
    """(burst i, source offset, destination offset, source bytes) of each DataCopyParams burst, as the pseudocode
    reads: the source at src + i*(blockLen + srcStride)*32, the destination at dst + i*(blockLen + dstStride)*32
    (times the widening of a copy whose destination element is wider than its source's)."""
    length = p["blockLen"] * BLOCK
    for i in range(p["blockCount"]):
        yield (i, p["src"] + i * (p["blockLen"] + p["srcStride"]) * BLOCK,
               p["dst"] + i * (p["blockLen"] + p["dstStride"]) * BLOCK * dst_scale, length)


def _moved_bytes(form, p, before, run) -> list[tuple[str, int, bytes]]:
    """(buffer, offset, bytes) the pseudocode says the data movement writes, worked out element by element."""
    fid = form.id

    if fid in ("DataCopy_GM_to_L1", "DataCopy_L1_to_FB"):
        out = []
        for _i, start, dst, length in burst_addresses(p):
            burst = (run.machine.memory.read(start, length) if fid == "DataCopy_GM_to_L1"
                     else before["buffers"]["L1"][start:start + length].tobytes())
            out.append((form.buffers["dst"], dst, burst))
        return out
    if fid == "DataCopy_GM_to_L1_Nd2Nz":
        size = ELEMENT_BYTES[p["dtype"]]
        image = bytearray(before["buffers"]["L1"].tobytes())
        lowest, highest = len(image), 0
        for t in range(p["ndNum"]):
            for r in range(p["nValue"]):
                row_start, _dst = nd2nz_element(p, t, r, 0)
                row = run.machine.memory.read(row_start, p["dValue"] * size)  # one GM read per source row
                for d in range(p["dValue"]):
                    src, dst = nd2nz_element(p, t, r, d)
                    image[dst : dst + size] = row[src - row_start : src - row_start + size]
                    lowest, highest = min(lowest, dst), max(highest, dst + size)
        return [("L1", lowest, bytes(image[lowest:highest]))]
    if fid == "DataCopy_L1_to_BT":
        out = []
        l1 = before["buffers"]["L1"].tobytes()
        scale = ELEMENT_BYTES[p["dstType"]] // ELEMENT_BYTES[p["srcType"]]
        for i in range(p["blockCount"]):
            start = p["src"] + i * (p["blockLen"] + p["srcStride"]) * BLOCK
            chunk = l1[start : start + p["blockLen"] * BLOCK]
            if p["srcType"] == "float16":  # each half value, as a Python float, packed as float32
                chunk = b"".join(struct.pack("<f", struct.unpack("<e", chunk[k:k + 2])[0])
                                 for k in range(0, len(chunk), 2))
            elif p["srcType"] == "bfloat16":
                chunk = b"".join(b"\0\0" + chunk[k:k + 2] for k in range(0, len(chunk), 2))
            out.append(("BT", p["dst"] + i * (p["blockLen"] + p["dstStride"]) * BLOCK * scale, chunk))
        return out
    if form.marker == "mStartPosition":
        return _load_2d_v2_bytes(form, p, before)
    # LoadData: each fractal, transposed element by element where asked
    out = []
    l1 = before["buffers"]["L1"].tobytes()
    for i in range(p["repeatTimes"]):
        fractal = bytes(l1[load_2d_source(p, i, byte)] for byte in range(FRACTAL))
        out.append((form.buffers["dst"], load_2d_destination(p, i), fractal))
    return out


def nd2nz_element(p, t: int, r: int, d: int) -> tuple[int, int]:
    """Where an Nd2Nz DataCopy (Nd2NzParams) takes element (r, d) of source matrix t and where it puts it: (GM
    address, L1 offset) of the element's first byte, by the pseudocode's formulas (C0 = 32 / sizeof(dtype))."""
    size = ELEMENT_BYTES[p["dtype"]]
    c0 = BLOCK // size
    src = p["src"] + (t * p["srcNdMatrixStride"] + r * p["srcDValue"] + d) * size
    dst = (p["dst"] + t * p["dstNzMatrixStride"] * size
           + ((d // c0) * p["dstNzC0Stride"] + r * p["dstNzNStride"]) * BLOCK + (d % c0) * size)
    return src, dst


def load_2d_destination(p, i: int) -> int:
    """The offset of a LoadData's (LoadData2DParams) ``i``-th destination fractal in L0A/L0B."""
    return p["dst"] + i * (1 + p["dstGap"]) * FRACTAL


def load_2d_source(p, i: int, byte: int) -> int:
    """The L1 offset a LoadData (LoadData2DParams) reads for byte ``byte`` of its ``i``-th destination fractal:
    fractal startIndex + i*srcStride from src, the same byte, or with ifTranspose the byte of the 16 x 16
    fractal of 2-byte elements at the transposed row and column."""
    start = p["src"] + (p["startIndex"] + i * p["srcStride"]) * FRACTAL
    if p["ifTranspose"]:
        row, rest = divmod(byte, 32)
        column, within = divmod(rest, 2)
        byte = (column * 16 + row) * 2 + within
    return start + byte


def _load_2d_v2_bytes(form, p, before) -> list[tuple[str, int, bytes]]:
    """LoadData2DParamsV2 element by element: element (i, j) of the loaded matrix X is row i MOD 16, element
    j MOD C0 of source fractal (i / 16, j / C0); with ifTranspose the destination holds X's transpose; the
    destination's fractal (a, b) (a along its rows) is at dst + (b*dstStride + a)*512."""
    size = ELEMENT_BYTES[p["dtype"]]
    c0 = BLOCK // size
    if p["mStep"] == 0 or p["kStep"] == 0:
        return []
    height, width = p["mStep"] * 16, p["kStep"] * c0
    if p["ifTranspose"]:
        height, width = width, height
    l1 = before["buffers"]["L1"].tobytes()
    buffer = form.buffers["dst"]
    image = bytearray(before["buffers"][buffer].tobytes())
    lowest, highest = len(image), 0
    for i in range(height):
        for j in range(width):
            si, sj = (j, i) if p["ifTranspose"] else (i, j)
            fractal = (p["kStartPosition"] + sj // c0) * p["srcStride"] + p["mStartPosition"] + si // 16
            src = p["src"] + fractal * FRACTAL + (si % 16) * BLOCK + (sj % c0) * size
            dst = (p["dst"] + ((j // c0) * p["dstStride"] + i // 16) * FRACTAL + (i % 16) * BLOCK
                   + (j % c0) * size)
            image[dst : dst + size] = l1[src : src + size]
            lowest, highest = min(lowest, dst), max(highest, dst + size)
    return [(buffer, lowest, bytes(image[lowest:highest]))]


def _register_check(form, p, state):
    from ..state import ATOMIC_MODES

    name, value = {"SetFixpipePreQuantFlag": ("quant_pre", lambda: p["config"]),
                   "SetFixPipeConfig": ("fpc", lambda: p["quantPre"]),
                   "SetAtomicAdd": ("atomic", lambda: ATOMIC_MODES.index(p["dtype"])),
                   "SetAtomicNone": ("atomic", lambda: 0)}[form.name]
    blocks = [Check(name, f"{value():#x}", f"{state.regs[name]:#x}")]
    if name == "quant_pre":
        from ..views.buffers import quant_word_rows

        rows = quant_word_rows(state.regs[name], state.chip.name)
        if rows:
            blocks.insert(0, Table(["field", "value"], [list(r) for r in rows], title="The quant word, field by field"))
    return blocks, [[Grid("registers after", [[Cell(f"{state.regs[name]:#x}", "changed")]], col_labels=[name])]]


def _sync_check(form, p, before, state):
    """SetFlag sets its event's flag and publishes its pipe's progress; WaitFlag clears it and its pipe takes
    that progress on; PipeBarrier orders its pipe.  Shown as the flags and the pipes' clocks before and after."""
    from ..sync.events import PIPES

    pipes = state.pipes
    table = lambda clocks: Table(["pipe", *PIPES], [[f"PIPE_{pipe}", *map(str, row)]  # noqa: E731
                                                   for pipe, row in zip(PIPES, clocks.tolist())])
    blocks = [Paragraph("Each pipe's row says, for every pipe, how many of that pipe's instructions are complete "
                        "before the row's pipe runs its next one (its clock)."),
              table(before["clocks"]), table(pipes.clocks)]
    if form.sync in ("set", "wait"):
        key = (p["event"], p["id"])
        want = "set" if form.sync == "set" else "clear"
        blocks.insert(0, Paragraph(f"flag {p['event']} #{p['id']}: {'set' if key in before['flags'] else 'clear'} "
                                   f"before the step"))
        blocks.append(Check(f"flag {p['event']} #{p['id']} after the step", want,
                            "set" if key in pipes.flags else "clear"))
        if form.sync == "wait":
            source = PIPES.index(p["event"].split("_")[0])
            destination = PIPES.index(p["event"].split("_")[1])
            published = before["flags"][key][0]
            # the waiting pipe's clock takes on the SetFlag's: at least its pipe's instructions up to the SetFlag
            blocks.append(Check(f"PIPE_{PIPES[destination]} now runs after PIPE_{PIPES[source]}'s instructions up "
                                f"to the SetFlag (its {int(published[source])} of them)", "yes",
                                "yes" if pipes.clocks[destination, source] >= published[source] else "no"))
    else:
        blocks.append(Check("clocks after the barrier are at least those before",
                            "yes", "yes" if (pipes.clocks >= before["clocks"]).all() else "no"))
    return blocks, []


# ---- Mmad: one element of C worked through -----------------------------------------------------------


def _element(data: np.ndarray, offset: int, dtype: str):
    size = ELEMENT_BYTES[dtype]
    return _value(data[offset : offset + size].tobytes(), dtype)


@functools.lru_cache(maxsize=1 << 16)  # a whole Mmad's workings read each element of A and B many times
def _value(raw: bytes, dtype: str):
    """An element's bits as its exact value (int for the integer types, Fraction for the float types)."""
    if dtype == "int8":
        return struct.unpack("<b", raw)[0]
    if dtype == "uint8":
        return raw[0]
    if dtype == "float16":
        return Fraction(struct.unpack("<e", raw)[0])
    if dtype == "bfloat16":
        return Fraction(struct.unpack("<f", b"\0\0" + raw)[0])
    if dtype == "float32":
        return Fraction(struct.unpack("<f", raw)[0])
    return Fraction(float(_decode(np.frombuffer(raw, dtype=np.uint8), dtype)[0]))  # fp8, HiFloat8: exact


def a_offset(layout: str, i: int, kk: int, m: int, k: int, k0: int) -> int:
    """Index of A(i, kk) in L0A, in elements: Zz (M1, K1, M0, K0), Nz (K1, M1, M0, K0) or a GEMV row (ND)."""
    m1, k1 = -(-m // 16), -(-k // k0)
    if layout == "ND":
        return i * k + kk
    if layout == "Zz":
        return ((i // 16) * k1 + kk // k0) * 16 * k0 + (i % 16) * k0 + kk % k0
    return ((kk // k0) * m1 + i // 16) * 16 * k0 + (i % 16) * k0 + kk % k0


def b_offset(kk: int, j: int, n: int, k0: int) -> int:
    """B(kk, j) in L0B, in elements: Zn (K1, N1, N0, K0)."""
    n1 = -(-n // 16)
    return ((kk // k0) * n1 + j // 16) * 16 * k0 + (j % 16) * k0 + kk % k0


def c_offset(i: int, j: int, m: int) -> int:
    """C(i, j) in L0C, in 4-byte elements: Nz (N1, M1, 16, 16)."""
    return ((j // 16) * -(-m // 16) + i // 16) * 256 + (i % 16) * 16 + j % 16


def round_to_f32(value: Fraction) -> int:
    """An exact value rounded once to float32, to nearest with ties to even (finite results only)."""
    if value == 0:
        return 0
    sign = 0x80000000 if value < 0 else 0
    value = abs(value)
    exponent = value.numerator.bit_length() - value.denominator.bit_length()
    if Fraction(2) ** exponent > value:
        exponent -= 1
    exponent = max(exponent, -126)  # below it the spacing stays 2^-149 (subnormals)
    scaled = value / Fraction(2) ** (exponent - 23)
    whole = scaled.numerator // scaled.denominator
    rest = scaled - whole
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2):
        whole += 1
    return sign | struct.unpack("<I", struct.pack("<f", float(whole * Fraction(2) ** (exponent - 23))))[0]


def _f32(bits: int) -> Fraction:
    return Fraction(struct.unpack("<f", struct.pack("<I", bits))[0])


def _mmad(p, before, state, chip: str, options: dict):
    m, n, k = p["m"], p["n"], p["k"]
    if 0 in (m, n, k):
        return [Paragraph("m, n or k is 0: Mmad is a NOP and wrote nothing."),
                Check("bytes written", "0", "0")], []
    i, j = (7 * m) // 11, (5 * n) // 9
    blocks, a, b = mmad_element(p, i, j, before["buffers"], state.buffers["L0C"], chip, options)
    check = blocks[-1]
    panels = [[Grid(f"A row {i}", [[Cell(str(x)) for x in a[:16]]], col_labels=[str(c) for c in range(min(k, 16))]),
               Grid(f"B column {j}", [[Cell(str(x)) for x in b[:16]]], col_labels=[str(c) for c in range(min(k, 16))])],
              [Grid(f"C[{i}][{j}] after", [[Cell(check.machine, "changed")]])]]
    return blocks, panels


def mmad_a_layout(p, chip: str) -> str:
    """A's layout in L0A for this Mmad: the chip's, or an ND row for a 950 GEMV (m = 1, not disableGemv)."""
    return "ND" if CHIPS[chip].arch == 3510 and p["m"] == 1 and not p["disableGemv"] else CHIPS[chip].a_layout


def mmad_element(p, i: int, j: int, buffers, l0c_after, chip: str, options: dict, *, products_shown: int | None = 8,
                 locations: bool = False):
    """Element C(i, j) of an Mmad worked out from the buffers it read (``buffers``: L0A, L0B, BT, L0C by name, as
    they were before the step) beside what the machine wrote (``l0c_after``: L0C after it); the account's blocks
    ([the products table, the sum, the Check]) and A's row and B's column as read.  ``products_shown``: how many
    products the table lists (None: all k); ``locations``: the table also names each operand's byte in L0A and
    L0B (their fractal layouts)."""
    m, n, k = p["m"], p["n"], p["k"]
    a_type, b_type = p["aType"], p["bType"]
    k0 = BLOCK // ELEMENT_BYTES[a_type]
    layout = mmad_a_layout(p, chip)
    a_data, b_data = buffers["L0A"], buffers["L0B"]
    sa, sb = ELEMENT_BYTES[a_type], ELEMENT_BYTES[b_type]
    a_at = [p["a"] + sa * a_offset(layout, i, kk, m, k, k0) for kk in range(k)]
    b_at = [p["b"] + sb * b_offset(kk, j, n, k0) for kk in range(k)]
    a = [_element(a_data, at, a_type) for at in a_at]
    b = [_element(b_data, at, b_type) for at in b_at]
    integer = isinstance(a[0], int)
    if not p["cmatrixInitVal"] and p["cmatrixSource"]:
        raw = buffers["BT"][p["bias"] + 4 * j : p["bias"] + 4 * j + 4].tobytes()
        start, start_note = (struct.unpack("<i", raw)[0] if integer else Fraction(struct.unpack("<f", raw)[0])), \
            f"bias BT[{p['bias'] + 4 * j}]"
    elif not p["cmatrixInitVal"] or p["isBias"]:
        at = p["c"] + 4 * c_offset(i, j, m)
        raw = buffers["L0C"][at : at + 4].tobytes()
        start, start_note = (struct.unpack("<i", raw)[0] if integer else Fraction(struct.unpack("<f", raw)[0])), \
            f"C before, L0C[{at}]"
    else:
        start, start_note = 0, "0 (cmatrixInitVal)"
    products = [x * y for x, y in zip(a, b)]
    shown = k if products_shown is None else min(k, products_shown)
    if locations:
        header = ["k", f"L0A ({layout})", f"A[{i}][k]", "L0B (Zn)", f"B[k][{j}]", "product (exact)"]
        rows = [[str(kk), f"[{a_at[kk]}]", str(a[kk]), f"[{b_at[kk]}]", str(b[kk]), str(products[kk])]
                for kk in range(shown)]
    else:
        header = ["k", f"A[{i}][k]", f"B[k][{j}]", "product (exact)"]
        rows = [[str(kk), str(a[kk]), str(b[kk]), str(products[kk])] for kk in range(shown)]
    if k > shown:
        rows.append(["...", *[""] * (len(header) - 2), f"({k - shown} more)"])
    table = Table(header, rows, title=f"C[{i}][{j}]: its k products")
    at = p["c"] + 4 * c_offset(i, j, m)
    machine_bits = int.from_bytes(l0c_after[at : at + 4].tobytes(), "little")
    if integer:
        total = start + sum(products)
        if options.get("l0c_int32_overflow") == "saturate":
            result = max(-(1 << 31), min((1 << 31) - 1, total))
        else:
            result = (total + (1 << 31)) % (1 << 32) - (1 << 31)
        note = Paragraph(f"C[{i}][{j}] = {start_note} + sum of products = {total}, as int32 "
                         f"({options.get('l0c_int32_overflow')}): {result}")
        check = Check(f"C[{i}][{j}] (L0C[{at}], int32)", str(result),
                      str(machine_bits - (1 << 32) if machine_bits >> 31 else machine_bits))
    else:
        if options.get("mmad_float_accumulation") == "fp32_per_k_step":
            bits = round_to_f32(Fraction(start))
            for product in products:
                bits = round_to_f32(_f32(bits) + product)
        else:
            bits = round_to_f32(start + sum(products))
        note = Paragraph(f"C[{i}][{j}] = {start_note} + the products, rounded to float32 "
                         f"({options.get('mmad_float_accumulation')}): {float(_f32(bits))!r}")
        check = Check(f"C[{i}][{j}] (L0C[{at}], float32 bits)", f"{bits:#010x}", f"{machine_bits:#010x}")
    return [table, note, check], a, b


# ---- Fixpipe: one element through every step ---------------------------------------------------------


def _fixpipe(form, p, before, state, memory, chip: str, options: dict):
    i, j = (p["mSize"] - 1) // 2, (p["nSize"] - 1) // 3
    if form.buffers["dst"] == "GM":
        read_output = memory.read
    else:
        read_output = lambda offset, size: state.buffers["L1"][offset : offset + size].tobytes()  # noqa: E731
    blocks = fixpipe_element(p, i, j, before["buffers"], before["regs"], read_output, chip, options)
    return blocks, [[Grid("output element", [[Cell(blocks[-1].machine, "changed")]])]]


def fixpipe_l0c_offset(p, i: int, j: int) -> int:
    """The byte in L0C of a Fixpipe's element (i, j): Nz fractals, srcStride rows per 16-column block."""
    return p["src"] + 4 * (((j // 16) * p["srcStride"] + i) * 16 + j % 16)


def fixpipe_output_offset(p, i: int, j: int) -> int:
    """Where a Fixpipe writes its output element (i, j): an address in GM or a byte of L1."""
    size = ELEMENT_BYTES[p["dstType"]]
    if p["nz2nd"]:
        return p["dst"] + (i * p["dstStride"] + j) * size
    # Nz: blocks of 16 columns (32 for int8), dstStride x 32 B apart
    per_row = 32 if size == 1 else 16
    return p["dst"] + (j // per_row) * p["dstStride"] * 32 + (i * per_row + j % per_row) * size


def fixpipe_word(p, j: int, buffers, regs) -> tuple[int, str]:
    """The quant word output column j takes, and where it came from: quant_pre (a per-tensor mode), or column j's
    64-bit word in FB from fpc on (a V mode, per channel)."""
    if p["quantPre"].startswith("V"):
        at = regs["fpc"] + 8 * j
        return int.from_bytes(buffers["FB"][at : at + 8].tobytes(), "little"), f"column {j}'s word, FB[{at}]"
    return regs["quant_pre"], "quant_pre"


def fixpipe_element(p, i: int, j: int, buffers, regs, read_output, chip: str, options: dict, *,
                    gm_before: bytes | None = None):
    """Output element (i, j) of a Fixpipe worked out from what it read (``buffers``: L0C and FB by name, and
    ``regs``: quant_pre, fpc, atomic, as they were before the step) beside what the machine wrote
    (``read_output(offset, size)``: the output's bytes after the step); the account's blocks ([the steps table,
    how the check is made, the Check]).  ``gm_before``: the output's bytes before the step, for an atomic add."""
    from ..numerics import fixpipe_math
    from .fixpipe_check import explained_output

    at = fixpipe_l0c_offset(p, i, j)
    value = int.from_bytes(buffers["L0C"][at : at + 4].tobytes(), "little")
    mode = p["quantPre"]
    word, _source = fixpipe_word(p, j, buffers, regs)
    steps = fixpipe_math.element_steps(value, p["srcType"], mode, word, p["reluEn"], chip, options)
    table = Table(["step", "value"], [list(s) for s in steps], title=f"C[{i}][{j}] (L0C[{at}]) through the fixpipe")
    size = ELEMENT_BYTES[p["dstType"]]
    offset = fixpipe_output_offset(p, i, j)
    machine = read_output(offset, size)
    own = explained_output(value, p["srcType"], mode, word, p["reluEn"], chip, options)
    if own is not None:
        note = Paragraph("The check works the element out again here with exact fractions from the L0C value and "
                         "the word's fields (M1 as (1,8,10), the 9-bit offset, the sign bit), in the documented "
                         "order, each rounding once where the table says.")
        expected = own
    else:  # the 950's fp8/HiFloat8 outputs, MCB shifts, ReLU on a plain cast: the steps' own result
        note = Paragraph("The check's explained side is the last step's bits above (this mode is not worked out "
                         "a second time here).")
        expected = int(re.findall(r"0x[0-9a-f]+", steps[-1][1])[-1], 16)  # the output step ends with the bits
    blocks = [table, note]
    if gm_before is not None:
        expected = _atomic_sum(blocks, gm_before, expected, p["dstType"], options)
    blocks.append(Check(f"output element ({i}, {j}) bits", f"{expected:#0{2 + 2 * size}x}",
                        f"{int.from_bytes(machine, 'little'):#0{2 + 2 * size}x}"))
    return blocks


def _atomic_sum(blocks: list, old: bytes, out: int, dtype: str, options: dict) -> int:
    """SetAtomicAdd: the element GM held plus the Fixpipe's output, in the atomic type (the one atomic add of
    numerics.atomic_math, with its overflow option); a paragraph on ``blocks`` says so."""
    from ..numerics.atomic_math import atomic_add

    size = ELEMENT_BYTES[dtype]
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32}[size]
    total = int(atomic_add(np.frombuffer(old, dtype=bits), np.array([out], dtype=bits), dtype, options)[0])
    blocks.append(Paragraph(f"SetAtomicAdd({dtype}): GM held {int.from_bytes(old, 'little'):#0{2 + 2 * size}x}; "
                            f"it adds the output {out:#0{2 + 2 * size}x}: {total:#0{2 + 2 * size}x}"))
    return total
