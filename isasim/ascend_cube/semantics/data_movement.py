"""Data movement: GM -> L1 (ND and Nd2Nz), L1 -> L0A/L0B (2-D fractal loads), L1 -> BT, L1 -> FB.

Each function's docstring is the pseudocode ``isasim explain`` shows.  Every check comes
before the first write, so a faulting instruction changes nothing; the checks its data does not
decide are its form's ``*_access`` function (:mod:`.access`), which the semantics call first and
explain calls before it builds example data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import faults
from ..config import ELEMENT_BYTES
from .access import Access, Span, contiguous, track_rows

BLOCK = 32  # the burst and stride unit of DataCopyParams, and one C0 row of a fractal: 32 bytes
FRACTAL = 512  # one L0A/L0B fractal: 16 rows x 32 bytes


@dataclass(frozen=True)
class Bursts:
    """DataCopyParams' bursts: ``count`` of ``length`` source bytes from ``src``, ``src_step`` apart, each to
    ``dst`` + i * ``dst_step`` (``dst_length`` bytes there: a widening copy writes more than it reads)."""

    src: int
    dst: int
    count: int
    length: int
    src_step: int
    dst_step: int
    dst_length: int

    def pieces(self) -> list[tuple[int, int, int]]:
        """(source, destination, source bytes) of each burst."""
        return [(self.src + i * self.src_step, self.dst + i * self.dst_step, self.length) for i in range(self.count)]

    def access(self, src_space: str, dtype: str = "uint8") -> Access:
        """What the bursts read (their destination is on chip)."""
        return Access(reads=(Span(src_space, self.src, self.count, self.length, self.src_step, dtype),))


def burst_plan(p: dict, src_unit_bytes: int = BLOCK, dst_scale: int = 1) -> Bursts:
    """The bursts of DataCopyParams ``p``, unchecked (the trace page's outlines read them too)."""
    count, length = p["blockCount"], p["blockLen"] * src_unit_bytes
    src_step = length + p["srcStride"] * src_unit_bytes
    dst_step = length * dst_scale + p["dstStride"] * src_unit_bytes * dst_scale
    return Bursts(p["src"], p["dst"], count, length, src_step, dst_step, length * dst_scale)


def _bursts(ctx, p: dict, dst_buffer: str, src_buffer: str | None, src_unit_bytes: int = BLOCK,
            dst_scale: int = 1) -> Bursts:
    """The bursts, checked: alignment, and the whole destination (and an on-chip source) inside its buffer."""
    plan = burst_plan(p, src_unit_bytes, dst_scale)
    ctx.check_aligned(dst_buffer, p["dst"], "dst")
    if src_buffer is not None:
        ctx.check_aligned(src_buffer, p["src"], "src")
    ctx.check_inside(dst_buffer, p["dst"] + (plan.count - 1) * plan.dst_step, plan.dst_length, "dst")
    if src_buffer is not None:
        ctx.check_inside(src_buffer, p["src"] + (plan.count - 1) * plan.src_step, plan.length, "src")
    return plan


def gm_to_l1_access(ctx, form, p) -> Access:
    return _bursts(ctx, p, "L1", None).access("GM")


def copy_gm_to_l1(ctx, form, p):
    """FOR i = 0 .. blockCount-1:
        L1[dst + i*(blockLen+dstStride)*32 ..+ blockLen*32] = GM[src + i*(blockLen+srcStride)*32 ..+ blockLen*32]"""
    bursts = _bursts(ctx, p, "L1", None).pieces()
    data = [ctx.gm_read(src, length) for src, _dst, length in bursts]  # every read before any write
    for (_src, dst, _length), chunk in zip(bursts, data):
        ctx.write("L1", dst, chunk, "dst")


def _nd2nz_checked(ctx, p) -> tuple[int, int]:
    """Nd2NzParams checked (alignment, the source pitch, the furthest destination element inside L1); the
    element size and C0."""
    size = ELEMENT_BYTES[p["dtype"]]
    c0 = BLOCK // size
    ctx.check_aligned("L1", p["dst"], "dst")
    if p["dValue"] > p["srcDValue"]:
        raise faults.param_range(f"dValue {p['dValue']} exceeds the source row pitch srcDValue {p['srcDValue']}")
    if p["ndNum"] * p["nValue"] * p["dValue"] * size > ctx.chip.buffers["L1"]:
        raise faults.param_range(f"Nd2Nz of {p['ndNum']} x {p['nValue']} x {p['dValue']} elements moves more "
                                 f"than L1 holds, so its destination rows overlap (isasim refuses that)")
    last = (p["dst"] + (p["ndNum"] - 1) * p["dstNzMatrixStride"] * size
            + (((p["dValue"] - 1) // c0) * p["dstNzC0Stride"] + (p["nValue"] - 1) * p["dstNzNStride"]) * BLOCK
            + (min(c0, p["dValue"]) - 1) * size)
    ctx.check_inside("L1", p["dst"], last + size - p["dst"], "dst")  # the furthest element, before any work
    return size, c0


def nd2nz_access(ctx, form, p) -> Access:
    """Each source matrix's nValue rows of dValue elements, srcDValue elements apart; the destination as the
    L1 range from dst to the furthest element."""
    size, _c0 = _nd2nz_checked(ctx, p)
    reads = tuple(Span("GM", p["src"] + t * p["srcNdMatrixStride"] * size, p["nValue"], p["dValue"] * size,
                       p["srcDValue"] * size, p["dtype"]) for t in range(p["ndNum"]))
    return Access(reads=reads)


def copy_gm_to_l1_nd2nz(ctx, form, p):
    """C0 = 32 / sizeof(dtype)
    FOR t < ndNum, r < nValue, d < dValue:
        element (r, d) of matrix t = GM[src + (t*srcNdMatrixStride + r*srcDValue + d) * sizeof(dtype)]
        goes to L1[dst + t*dstNzMatrixStride*sizeof(dtype)
                   + ((d / C0)*dstNzC0Stride + r*dstNzNStride) * 32 + (d MOD C0)*sizeof(dtype)]
    (the rest of each 32-byte row is left as it was)"""
    size, c0 = _nd2nz_checked(ctx, p)
    if 0 in (p["ndNum"], p["nValue"], p["dValue"]):
        dst = nd2nz_destinations(p)  # (empty: the min below raises as it always has)
        ctx.check_inside("L1", int(dst.min()), int(dst.max()) - int(dst.min()) + size, "dst")
    rows_32 = _nd2nz_rows(p, size, c0)
    low, high = rows_32.low, rows_32.high
    ctx.check_inside("L1", low, high - low, "dst")
    matrices = [_nd_rows(ctx, p["src"] + ti * p["srcNdMatrixStride"] * size, p["srcDValue"] * size, p["nValue"],
                         p["dValue"] * size) for ti in range(p["ndNum"])]
    rows = matrices[0][None] if len(matrices) == 1 else np.stack(matrices)  # ndNum x nValue x dValue*size bytes
    if rows_32.disjoint:  # each destination row written once: a strided view of L1 takes them in any order
        if rows.size == high - low:  # and they cover [low, high) whole
            image = np.empty(high - low, dtype=np.uint8)
        else:
            image = ctx.state.buffers["L1"][low:high].copy()
        _nd2nz_place(image, rows, p, size, c0, low)
        ctx.write("L1", low, image, "dst")
        return
    dst = nd2nz_destinations(p)
    image = ctx.state.buffers["L1"].copy()
    targets = dst[..., None] + np.arange(size)
    image[targets.reshape(-1)] = rows.reshape(-1)
    low, high = int(dst.min()), int(dst.max()) + size
    ctx.write("L1", low, image[low:high], "dst")


@dataclass(frozen=True)
class _Nd2NzRows:
    """Where an Nd2Nz writes, by destination rows (the run of a source row's elements in one C0 block): the first
    byte, one past the last, and whether no two rows share a byte."""

    low: int
    high: int
    disjoint: bool


def _nd2nz_rows(p: dict, size: int, c0: int) -> _Nd2NzRows:
    """The destination rows of an Nd2Nz with ndNum, nValue and dValue > 0: nd2nz_destinations' span, from the
    rows' starts (ndNum x nValue x blocks of C0) rather than every element."""
    blocks = -(-p["dValue"] // c0)
    last_width = (p["dValue"] - (blocks - 1) * c0) * size
    axes = [(p["dstNzMatrixStride"] * size, p["ndNum"]), (p["dstNzNStride"] * BLOCK, p["nValue"]),
            (p["dstNzC0Stride"] * BLOCK, blocks)]
    if all(stride >= 0 for stride, _count in axes):
        # the rows' starts are an affine grid: the first at dst, the furthest at the last index of each axis
        furthest = p["dst"] + sum(stride * (count - 1) for stride, count in axes)
        high = furthest + last_width
        if blocks > 1:  # the last block may be part-filled: the one before it may reach further
            high = max(high, furthest - axes[2][0] + c0 * size)
        # no two rows meet when, the axes taken by stride, each step clears the whole span of the axes inside
        span = c0 * size
        nested = True
        for stride, count in sorted((a for a in axes if a[1] > 1)):
            nested = nested and stride >= span
            span = stride * (count - 1) + span
        if nested:
            return _Nd2NzRows(p["dst"], high, True)
    t, r, j = np.meshgrid(np.arange(p["ndNum"]), np.arange(p["nValue"]), np.arange(blocks), indexing="ij")
    starts = (p["dst"] + t * p["dstNzMatrixStride"] * size + (j * p["dstNzC0Stride"] + r * p["dstNzNStride"])
              * BLOCK).reshape(-1)
    widths = np.minimum(c0, p["dValue"] - j * c0).reshape(-1) * size  # bytes of each row (the last block's fewer)
    order = np.argsort(starts, kind="stable")
    ends = starts[order] + widths[order]
    disjoint = bool(np.all(ends[:-1] <= starts[order][1:]))
    return _Nd2NzRows(int(starts.min()), int((starts + widths).max()), disjoint)


def _nd2nz_place(image: np.ndarray, rows: np.ndarray, p: dict, size: int, c0: int, low: int) -> None:
    """Write ``rows`` (ndNum x nValue x dValue*size bytes) into ``image`` (L1 from byte ``low``) where Nd2Nz puts
    them, through strided views: the whole C0 blocks, then a part-filled last block."""
    nd, n, d = p["ndNum"], p["nValue"], p["dValue"]
    full, rest = divmod(d, c0)
    row = c0 * size
    strides = (p["dstNzMatrixStride"] * size, p["dstNzNStride"] * BLOCK, p["dstNzC0Stride"] * BLOCK, 1)
    first = p["dst"] - low
    view = np.lib.stride_tricks.as_strided
    if full:
        target = view(image[first:], shape=(nd, n, full, row), strides=strides)
        target[...] = rows[:, :, :full * row].reshape(nd, n, full, row)
    if rest:
        target = view(image[first + full * p["dstNzC0Stride"] * BLOCK:], shape=(nd, n, rest * size),
                      strides=strides[:2] + (1,))
        target[...] = rows[:, :, full * row:]


def nd2nz_destinations(p: dict) -> np.ndarray:
    """The L1 offset of element (t, r, d) of an Nd2Nz copy, as an ndNum x nValue x dValue array (the pseudocode's
    destination; the trace page's outlines read it too)."""
    size = ELEMENT_BYTES[p["dtype"]]
    c0 = BLOCK // size
    t, r, d = np.meshgrid(np.arange(p["ndNum"]), np.arange(p["nValue"]), np.arange(p["dValue"]), indexing="ij")
    return (p["dst"] + t * p["dstNzMatrixStride"] * size
            + ((d // c0) * p["dstNzC0Stride"] + r * p["dstNzNStride"]) * BLOCK + (d % c0) * size)


def _nd_rows(ctx, first: int, pitch: int, count: int, size: int) -> np.ndarray:
    """``count`` rows of ``size`` bytes, ``pitch`` apart from GM ``first``: one strided read when they lie in
    one mapped region, else row by row (so an unmapped row faults as the copy would)."""
    rows = ctx.memory.read_rows(first, pitch, count, size)
    if rows is not None:
        if pitch == size:  # the race check sees the rows it read
            ctx.track("GM", first, count * size, write=False)
        else:
            track_rows(ctx, "GM", first, count, size, pitch, write=False)
        return rows  # a view onto GM: the caller copies it into L1 before anything writes GM
    return np.stack([ctx.gm_read(first + r * pitch, size) for r in range(count)])


def check_bias_types(chip, p) -> None:
    """(srcType, dstType) is one of the chip's L1 -> bias table pairs."""
    pair = (p["srcType"], p["dstType"])
    if pair not in chip.bias_types:
        raise faults.unsupported(f"DataCopy L1 -> BT from {pair[0]} to {pair[1]}: {chip.name} takes "
                                 + ", ".join(f"{a} -> {b}" for a, b in chip.bias_types))


def check_transpose(chip, p) -> None:
    """A transposing LoadData is of a type the chip transposes."""
    if p["ifTranspose"] and p["dtype"] not in chip.transpose_types:
        raise faults.unsupported(f"LoadData transpose of {p['dtype']}: {chip.name} transposes "
                                 f"{' and '.join(chip.transpose_types)} only")


def l1_to_bt_access(ctx, form, p) -> Access:
    scale = ELEMENT_BYTES[p["dstType"]] // ELEMENT_BYTES[p["srcType"]]
    return _bursts(ctx, p, "BT", "L1", dst_scale=scale).access("L1", p["srcType"])


def copy_l1_to_bt(ctx, form, p):
    """(srcType, dstType) is one of the chip's bias pairs: half/bf16 -> float32 widen exactly, others copy
    FOR i = 0 .. blockCount-1: BT[dst + i*...] = widen(L1[src + i*(blockLen+srcStride)*32 ..+ blockLen*32])"""
    pair = (p["srcType"], p["dstType"])
    scale = ELEMENT_BYTES[pair[1]] // ELEMENT_BYTES[pair[0]]
    for src, dst, length in _bursts(ctx, p, "BT", "L1", dst_scale=scale).pieces():
        ctx.write("BT", dst, widen_bias(ctx.read("L1", src, length, "src"), p["srcType"]), "dst")


def widen_bias(data: np.ndarray, src_type: str) -> np.ndarray:
    """A bias as BT holds it: float16 and bfloat16 become float32 exactly (every half and bf16 value is a
    float32); float32 and int32 are copied."""
    if src_type == "float16":
        return data.view(np.float16).astype(np.float32).view(np.uint8)
    if src_type == "bfloat16":
        return (data.view(np.uint16).astype(np.uint32) << 16).view(np.uint8)
    return data


def l1_to_fb_access(ctx, form, p) -> Access:
    return _bursts(ctx, p, "FB", "L1").access("L1")


def copy_l1_to_fb(ctx, form, p):
    """FOR i = 0 .. blockCount-1: FB[dst + i*(blockLen+dstStride)*32 ..+ blockLen*32] = L1[src + ...]
    (the per-channel quant words, 8 bytes each, that SetFixPipeConfig then points at)"""
    for src, dst, length in _bursts(ctx, p, "FB", "L1").pieces():
        ctx.write("FB", dst, ctx.read("L1", src, length, "src"), "dst")


def load_2d_access(ctx, form, p) -> Access:
    """LoadData2DParams checked: the transpose, alignment, the furthest source and destination fractals."""
    buffer = form.buffers["dst"]
    ctx.check_aligned(buffer, p["dst"], "dst")
    ctx.check_aligned("L1", p["src"], "src")
    count = p["repeatTimes"]
    first = p["src"] + p["startIndex"] * FRACTAL
    ctx.check_inside("L1", first + (count - 1) * p["srcStride"] * FRACTAL, FRACTAL, "src")
    ctx.check_inside(buffer, p["dst"] + (count - 1) * (1 + p["dstGap"]) * FRACTAL, FRACTAL, "dst")
    return Access(reads=(Span("L1", first, count, FRACTAL, p["srcStride"] * FRACTAL, p["dtype"]),))


def load_2d(ctx, form, p):
    """FOR i = 0 .. repeatTimes-1:
        f = L1[src + (startIndex + i*srcStride)*512 ..+ 512]          one 512-byte fractal
        IF ifTranspose: f = transpose(f as 16x16 elements of 2 bytes)
        dstBuffer[dst + i*(1+dstGap)*512 ..+ 512] = f"""
    source = load_2d_access(ctx, form, p).reads[0]
    fractals = [ctx.read("L1", source.start + i * source.stride, FRACTAL, "src") for i in range(source.rows)]
    for i, fractal in enumerate(fractals):
        if p["ifTranspose"]:
            fractal = fractal.view(np.uint16).reshape(16, 16).T.copy().view(np.uint8)
        ctx.write(form.buffers["dst"], p["dst"] + i * (1 + p["dstGap"]) * FRACTAL, fractal, "dst")


# LoadData with LoadData2DParamsV2 (Ascend C "LoadData（2D矩阵搬运V2）", 950 only): the chips that have it and the
# element types its impl's static_assert takes (the fp4 pairs isasim does not model; no int16)
LOAD2D_V2_CHIPS = ("950",)
LOAD2D_V2_TYPES = ("int8", "uint8", "hifloat8", "float8_e5m2", "float8_e4m3fn", "float16", "bfloat16", "int32",
                   "float32")


def check_load2d_v2(chip, p) -> None:
    """The chip has LoadData2DParamsV2, and for the element type."""
    if chip.name not in LOAD2D_V2_CHIPS:
        raise faults.unsupported(f"LoadData with LoadData2DParamsV2 (mStartPosition): {chip.name} has no "
                                 f"such load (only {', '.join(LOAD2D_V2_CHIPS)}; it uses LoadData2DParams)")
    if p["dtype"] not in LOAD2D_V2_TYPES:
        raise faults.unsupported(f"LoadData with LoadData2DParamsV2 of {p['dtype']}: it takes "
                                 f"{', '.join(LOAD2D_V2_TYPES)}")


@dataclass(frozen=True)
class _LoadV2:
    """A LoadData2DParamsV2 load, checked: the destination fractals' rows x cols (after any transpose) and the
    first and last source fractal it reads (from src, in 512-byte units)."""

    rows: int
    cols: int
    first: int
    last: int


def _load_2d_v2_checked(ctx, form, p) -> _LoadV2 | None:
    """Every check of the load, or None when mStep or kStep is 0 (a NOP, after the checks it still makes)."""
    buffer = form.buffers["dst"]
    ctx.check_aligned(buffer, p["dst"], "dst")
    ctx.check_aligned("L1", p["src"], "src")
    c0 = BLOCK // ELEMENT_BYTES[p["dtype"]]
    m_step, k_step = p["mStep"], p["kStep"]
    if p["ifTranspose"]:
        # the transposed block is square (b8: 32x32 = two fractals along M, b32: 16x16 = two along K), so the
        # region must tile into whole blocks: the documented mStep / kStep rules
        if (m_step * 16) % c0:
            raise faults.param_range(f"LoadData transpose of {p['dtype']}: mStep {m_step} must be a multiple of "
                                     f"{c0 // 16}")
        if (k_step * c0) % 16:
            raise faults.param_range(f"LoadData transpose of {p['dtype']}: kStep {k_step} must be a multiple of "
                                     f"{16 // c0}")
    if m_step == 0 or k_step == 0:
        return None  # documented: a NOP
    rows, cols = (k_step * c0 // 16, m_step * 16 // c0) if p["ifTranspose"] else (m_step, k_step)
    if cols > 1 and p["dstStride"] < rows:
        # one load's fractals would land on each other, in an order the docs do not give (the QBMM kernel
        # splits such loads into several): isasim refuses rather than pick one
        raise faults.param_range(f"LoadData dstStride {p['dstStride']} is less than the {rows} destination "
                                 f"fractals of a column, so the load's destination fractals overlap")
    first = p["kStartPosition"] * p["srcStride"] + p["mStartPosition"]
    last = (p["kStartPosition"] + k_step - 1) * p["srcStride"] + p["mStartPosition"] + m_step - 1
    ctx.check_inside("L1", p["src"] + last * FRACTAL, FRACTAL, "src")
    ctx.check_inside(buffer, p["dst"] + ((cols - 1) * p["dstStride"] + rows - 1) * FRACTAL, FRACTAL, "dst")
    return _LoadV2(rows, cols, first, last)


def load_2d_v2_access(ctx, form, p) -> Access:
    """L1 from the first source fractal to the last (the fractals between them are read and not used)."""
    load = _load_2d_v2_checked(ctx, form, p)
    if load is None:
        return Access()
    return Access(reads=(contiguous("L1", p["src"] + load.first * FRACTAL, (load.last - load.first + 1) * FRACTAL,
                                    p["dtype"]),))


def load_2d_v2(ctx, form, p):
    """C0 = 32 / sizeof(dtype)                     a fractal is 16 rows (M) x 32 bytes (C0 elements along K)
    source fractal (m, k), m < mStep, k < kStep:   L1[src + ((kStartPosition + k)*srcStride + mStartPosition + m)*512]
    X = the (mStep*16) x (kStep*C0) matrix those fractals tile (fractal (m, k) is rows m*16.., columns k*C0..)
    IF ifTranspose: X = transpose(X)            (kStep*C0) x (mStep*16); b8: mStep even, b32: kStep even
    FOR each 16 x C0 fractal (a, b) of X (a along its rows, b along its columns):
        dstBuffer[dst + (b*dstStride + a)*512 ..+ 512] = fractal (a, b)
    (so a b8 transpose turns each 32x32-byte block of two stacked source fractals into two stacked destination
    fractals; mStep = 0 or kStep = 0 moves nothing; destination fractals of one load may not overlap)"""
    load = _load_2d_v2_checked(ctx, form, p)
    if load is None:
        return
    buffer = form.buffers["dst"]
    size = ELEMENT_BYTES[p["dtype"]]
    c0 = BLOCK // size
    m_step, k_step, rows, cols, first = p["mStep"], p["kStep"], load.rows, load.cols, load.first
    start, length = p["src"] + first * FRACTAL, (load.last - first + 1) * FRACTAL
    ctx.check_inside("L1", start, length, "src")
    ctx.track("L1", start, length, write=False)
    span = ctx.state.buffers["L1"][start:start + length]  # a view, read before anything is written
    # source fractal (m, k) is span's fractal k*srcStride + m (first is where (0, 0) starts)
    fractals = np.lib.stride_tricks.as_strided(span, shape=(k_step, m_step, 16, c0, size),
                                               strides=(p["srcStride"] * FRACTAL, FRACTAL, BLOCK, size, 1))
    if p["ifTranspose"]:
        x = fractals.transpose(1, 2, 0, 3, 4).reshape(m_step * 16, k_step * c0, size).transpose(1, 0, 2)
        out = x.reshape(rows, 16, cols, c0, size).transpose(2, 0, 1, 3, 4).reshape(cols, rows * FRACTAL)
    else:  # X's fractal (a, b) is source fractal (m = a, k = b) itself: rows = mStep, cols = kStep
        out = fractals.reshape(cols, rows * FRACTAL)
    # destination fractal (a, b) at (b*dstStride + a)*512: column b's rows fractals one after another
    high = ((cols - 1) * p["dstStride"] + rows) * FRACTAL
    ctx.check_inside(buffer, p["dst"], high, "dst")
    ctx.track(buffer, p["dst"], high, write=False)  # (the bytes between columns stay as they were)
    if cols == 1 or p["dstStride"] == rows:
        image = np.empty(high, dtype=np.uint8)  # the columns cover it all
    else:
        image = ctx.state.buffers[buffer][p["dst"]:p["dst"] + high].copy()
    np.lib.stride_tricks.as_strided(image, shape=(cols, rows * FRACTAL), strides=(p["dstStride"] * FRACTAL, 1))[...] \
        = out
    ctx.write(buffer, p["dst"], image, "dst")
