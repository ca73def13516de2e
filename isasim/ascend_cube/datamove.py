"""Data movement: GM -> L1 (ND and Nd2Nz), L1 -> L0A/L0B (2-D fractal loads), L1 -> BT, L1 -> FB.

Each function's docstring is the pseudocode ``isasim explain`` shows.  Every check comes
before the first write, so a faulting instruction changes nothing.
"""

from __future__ import annotations

import numpy as np

from isasim.core.faults import Fault

from .chips import ELEMENT_BYTES

BLOCK = 32  # the burst and stride unit of DataCopyParams, and one C0 row of a fractal: 32 bytes
FRACTAL = 512  # one L0A/L0B fractal: 16 rows x 32 bytes


def _bursts(ctx, p: dict, dst_buffer: str, src_buffer: str | None, src_unit_bytes: int = BLOCK,
            dst_scale: int = 1):
    """The (source, destination) byte offsets of each burst, checked: alignment, and the whole
    destination inside its buffer."""
    count, length = p["blockCount"], p["blockLen"] * src_unit_bytes
    ctx.check_aligned(dst_buffer, p["dst"], "dst")
    if src_buffer is not None:
        ctx.check_aligned(src_buffer, p["src"], "src")
    src_step = length + p["srcStride"] * src_unit_bytes
    dst_step = length * dst_scale + p["dstStride"] * src_unit_bytes * dst_scale
    last_dst = p["dst"] + (count - 1) * dst_step
    ctx.check_inside(dst_buffer, last_dst, length * dst_scale, "dst")
    if src_buffer is not None:
        ctx.check_inside(src_buffer, p["src"] + (count - 1) * src_step, length, "src")
    return [(p["src"] + i * src_step, p["dst"] + i * dst_step, length) for i in range(count)]


def copy_gm_to_l1(ctx, form, p):
    """FOR i = 0 .. blockCount-1:
        L1[dst + i*(blockLen+dstStride)*32 ..+ blockLen*32] = GM[src + i*(blockLen+srcStride)*32 ..+ blockLen*32]"""
    bursts = _bursts(ctx, p, "L1", None)
    data = [ctx.gm_read(src, length) for src, _dst, length in bursts]  # every read before any write
    for (_src, dst, _length), chunk in zip(bursts, data):
        ctx.write("L1", dst, chunk, "dst")


def copy_gm_to_l1_nd2nz(ctx, form, p):
    """C0 = 32 / sizeof(dtype)
    FOR t < ndNum, r < nValue, d < dValue:
        element (r, d) of matrix t = GM[src + (t*srcNdMatrixStride + r*srcDValue + d) * sizeof(dtype)]
        goes to L1[dst + t*dstNzMatrixStride*sizeof(dtype)
                   + ((d / C0)*dstNzC0Stride + r*dstNzNStride) * 32 + (d MOD C0)*sizeof(dtype)]
    (the rest of each 32-byte row is left as it was)"""
    size = ELEMENT_BYTES[p["dtype"]]
    c0 = BLOCK // size
    ctx.check_aligned("L1", p["dst"], "dst")
    if p["dValue"] > p["srcDValue"]:
        raise Fault("PARAM_RANGE", f"dValue {p['dValue']} exceeds the source row pitch srcDValue {p['srcDValue']}")
    if p["ndNum"] * p["nValue"] * p["dValue"] * size > ctx.chip.buffers["L1"]:
        raise Fault("PARAM_RANGE", f"Nd2Nz of {p['ndNum']} x {p['nValue']} x {p['dValue']} elements moves more "
                                   f"than L1 holds, so its destination rows overlap (isasim refuses that)")
    last = (p["dst"] + (p["ndNum"] - 1) * p["dstNzMatrixStride"] * size
            + (((p["dValue"] - 1) // c0) * p["dstNzC0Stride"] + (p["nValue"] - 1) * p["dstNzNStride"]) * BLOCK
            + (min(c0, p["dValue"]) - 1) * size)
    ctx.check_inside("L1", p["dst"], last + size - p["dst"], "dst")  # the furthest element, before any work
    t, r, d = np.meshgrid(np.arange(p["ndNum"]), np.arange(p["nValue"]), np.arange(p["dValue"]), indexing="ij")
    dst = (p["dst"] + t * p["dstNzMatrixStride"] * size
           + ((d // c0) * p["dstNzC0Stride"] + r * p["dstNzNStride"]) * BLOCK + (d % c0) * size)
    ctx.check_inside("L1", int(dst.min()), int(dst.max()) - int(dst.min()) + size, "dst")
    rows = np.stack([np.stack([ctx.gm_read(p["src"] + (ti * p["srcNdMatrixStride"] + ri * p["srcDValue"]) * size,
                                           p["dValue"] * size).reshape(p["dValue"], size)
                               for ri in range(p["nValue"])]) for ti in range(p["ndNum"])])
    image = ctx.state.buffers["L1"].copy()
    targets = dst[..., None] + np.arange(size)
    image[targets.reshape(-1)] = rows.reshape(-1)
    low, high = int(dst.min()), int(dst.max()) + size
    ctx.write("L1", low, image[low:high], "dst")


def check_bias_types(ctx, p) -> None:
    """(srcType, dstType) is one of the chip's L1 -> bias table pairs."""
    pair = (p["srcType"], p["dstType"])
    if pair not in ctx.chip.bias_types:
        raise Fault("UNSUPPORTED", f"DataCopy L1 -> BT from {pair[0]} to {pair[1]}: {ctx.chip.name} takes "
                                   + ", ".join(f"{a} -> {b}" for a, b in ctx.chip.bias_types))


def check_transpose(ctx, p) -> None:
    """A transposing LoadData is of a type the chip transposes."""
    if p["ifTranspose"] and p["dtype"] not in ctx.chip.transpose_types:
        raise Fault("UNSUPPORTED", f"LoadData transpose of {p['dtype']}: {ctx.chip.name} transposes "
                                   f"{' and '.join(ctx.chip.transpose_types)} only")


def copy_l1_to_bt(ctx, form, p):
    """(srcType, dstType) is one of the chip's bias pairs: half/bf16 -> float32 widen exactly, others copy
    FOR i = 0 .. blockCount-1: BT[dst + i*...] = widen(L1[src + i*(blockLen+srcStride)*32 ..+ blockLen*32])"""
    check_bias_types(ctx, p)
    pair = (p["srcType"], p["dstType"])
    scale = ELEMENT_BYTES[pair[1]] // ELEMENT_BYTES[pair[0]]
    bursts = _bursts(ctx, p, "BT", "L1", dst_scale=scale)
    for src, dst, length in bursts:
        ctx.write("BT", dst, widen_bias(ctx.read("L1", src, length, "src"), *pair), "dst")


def widen_bias(data: np.ndarray, src_type: str, dst_type: str) -> np.ndarray:
    """A bias as BT holds it: float16 and bfloat16 become float32 exactly (every half and bf16 value is a
    float32); float32 and int32 are copied."""
    if src_type == "float16":
        return data.view(np.float16).astype(np.float32).view(np.uint8)
    if src_type == "bfloat16":
        return (data.view(np.uint16).astype(np.uint32) << 16).view(np.uint8)
    return data


def copy_l1_to_fb(ctx, form, p):
    """FOR i = 0 .. blockCount-1: FB[dst + i*(blockLen+dstStride)*32 ..+ blockLen*32] = L1[src + ...]
    (the per-channel quant words, 8 bytes each, that SetFixPipeConfig then points at)"""
    for src, dst, length in _bursts(ctx, p, "FB", "L1"):
        ctx.write("FB", dst, ctx.read("L1", src, length, "src"), "dst")


def load_2d(ctx, form, p):
    """FOR i = 0 .. repeatTimes-1:
        f = L1[src + (startIndex + i*srcStride)*512 ..+ 512]          one 512-byte fractal
        IF ifTranspose: f = transpose(f as 16x16 elements of 2 bytes)
        dstBuffer[dst + i*(1+dstGap)*512 ..+ 512] = f"""
    buffer = form.buffers["dst"]
    check_transpose(ctx, p)
    ctx.check_aligned(buffer, p["dst"], "dst")
    ctx.check_aligned("L1", p["src"], "src")
    count = p["repeatTimes"]
    sources = [p["src"] + (p["startIndex"] + i * p["srcStride"]) * FRACTAL for i in range(count)]
    targets = [p["dst"] + i * (1 + p["dstGap"]) * FRACTAL for i in range(count)]
    ctx.check_inside("L1", max(sources), FRACTAL, "src")
    ctx.check_inside(buffer, max(targets), FRACTAL, "dst")
    fractals = [ctx.read("L1", s, FRACTAL, "src") for s in sources]
    for target, fractal in zip(targets, fractals):
        if p["ifTranspose"]:
            fractal = fractal.view(np.uint16).reshape(16, 16).T.copy().view(np.uint8)
        ctx.write(buffer, target, fractal, "dst")
