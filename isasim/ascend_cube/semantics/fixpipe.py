"""The fixpipe: L0C -> GM or L1 with quantization, ReLU, Nz -> ND and atomic add; and its control.

The arithmetic of every quant mode is :func:`isasim.ascend_cube.numerics.fixpipe_math.quantize`
(pure, element by element); this module reads L0C, the quant words and the control
state, checks what the hardware checks, and writes the result where FixpipeParams say.
"""

from __future__ import annotations

import numpy as np

from .. import faults
from ..config import ELEMENT_BYTES
from ..numerics import fixpipe_math
from ..numerics.atomic_math import atomic_add
from ..numerics.quant_word import FixpipeParamError
from ..state import ATOMIC_MODES
from .access import Access, Span, contiguous

L0C_FRACTAL_SIDE = 16  # L0C holds 16x16 fractals of 4-byte elements
QUANT_WORD_BYTES = 8


def is_vector_mode(mode: str) -> bool:
    """A V-prefixed mode takes one quant word per output column from FB (the per-channel form)."""
    return mode.startswith("V")


def check_mode(chip, mode: str, src_type: str, dst_type: str) -> None:
    if mode not in chip.quant_modes:
        raise faults.unsupported(f"quantPre={mode}: {chip.name} has no such Fixpipe mode")
    e5m2 = mode.endswith("QF322FP8_PRE") and dst_type == "float8_e5m2"  # option fp8_e5m2_output decides
    if (src_type, dst_type) not in chip.fixpipe_types and not e5m2:
        raise faults.unsupported(f"Fixpipe {src_type} -> {dst_type}: {chip.name} has no such output "
                                 f"(its pairs: {', '.join(f'{a}->{b}' for a, b in chip.fixpipe_types)})")
    spec = fixpipe_math.QUANT_MODES[mode]
    outputs = spec.outputs
    if mode == "NoQuant":
        if dst_type != src_type:
            raise faults.unsupported(f"quantPre=NoQuant moves {src_type} unchanged, not to {dst_type}")
        return
    if src_type not in spec.l0c_dtypes or (dst_type not in outputs and not e5m2):
        raise faults.unsupported(f"quantPre={mode} converts {' or '.join(spec.l0c_dtypes)} to "
                                 f"{' or '.join(outputs)}, not {src_type} to {dst_type}")


def check_params(chip, p) -> None:
    """The chip has the Fixpipe's mode and its (srcType, dstType) pair."""
    check_mode(chip, p["quantPre"], p["srcType"], p["dstType"])


def quant_words(ctx, mode: str, n: int):
    """The scalar quant word (quant_pre), or for a vector mode the n per-channel words FB holds at fpc."""
    if not is_vector_mode(mode):
        return ctx.reg("quant_pre")
    return ctx.read("FB", ctx.reg("fpc"), QUANT_WORD_BYTES * n, "the per-channel quant words at fpc").view(np.uint64)


def read_l0c(ctx, offset: int, m: int, n: int, stride: int) -> np.ndarray:
    """The m x n matrix whose Nz fractals start at L0C[offset]: element (i, j) is the 4-byte word at
    offset + ((j / 16) * stride + i) * 16 * 4 + (j MOD 16) * 4 (stride: rows per column block)."""
    blocks = -(-n // L0C_FRACTAL_SIDE)
    data = ctx.read("L0C", offset, l0c_bytes(n, stride), "src").view(np.uint32).reshape(blocks, stride,
                                                                                        L0C_FRACTAL_SIDE)
    return data[:, :m, :].transpose(1, 0, 2).reshape(m, blocks * L0C_FRACTAL_SIDE)[:, :n].copy()


def l0c_bytes(n: int, stride: int) -> int:
    """L0C bytes of n columns: whole column blocks of 16, each ``stride`` rows of 64 bytes."""
    return -(-n // L0C_FRACTAL_SIDE) * stride * L0C_FRACTAL_SIDE * 4


def fixpipe_access(ctx, form, p) -> Access:
    """Every check of a Fixpipe that its data does not decide (the mode and type pair, alignment, strides, the
    quant words' count, L0C, FB and an L1 destination inside their buffers), before it reads a byte: L0C (and
    a V-mode's words in FB) and where the output goes."""
    m, n, mode = p["mSize"], p["nSize"], p["quantPre"]
    ctx.check_aligned("L0C", p["src"], "src")
    if p["srcStride"] < -(-m // L0C_FRACTAL_SIDE) * L0C_FRACTAL_SIDE:
        raise faults.param_range(f"srcStride {p['srcStride']} is less than mSize {m} rounded up to 16")
    if p["nz2nd"] and p["dstStride"] < n:
        raise faults.param_range(f"dstStride {p['dstStride']} is less than nSize {n}: ND rows would overlap")
    reads = []
    if is_vector_mode(mode):
        if n > ctx.chip.quant_params_per_pass:
            raise faults.quant_param(f"{mode} with nSize={n}: one pass takes {ctx.chip.quant_params_per_pass} "
                                     f"per-channel words on {ctx.chip.name} (split N)")
        words = contiguous("FB", ctx.reg("fpc"), QUANT_WORD_BYTES * n, "uint64")
        ctx.check_inside("FB", words.start, words.row_bytes, "the per-channel quant words at fpc")
        reads.append(words)
    ctx.check_inside("L0C", p["src"], l0c_bytes(n, p["srcStride"]), "src")
    reads.append(contiguous("L0C", p["src"], l0c_bytes(n, p["srcStride"]), p["srcType"]))
    outputs = output_spans(p, form.buffers["dst"], ELEMENT_BYTES[p["dstType"]])
    if form.buffers["dst"] == "L1":
        ctx.check_aligned("L1", p["dst"], "dst")
        for span, _column in outputs:
            ctx.check_inside("L1", span.start, span.end - span.start, "dst")
        return Access(reads=tuple(reads))
    return Access(reads=tuple(reads), gm_writes=tuple(span for span, _column in outputs))


def fixpipe(ctx, form, p):
    """check quantPre is a mode of the chip and (srcType, dstType) one of its pairs
    words = quant_pre (scalar mode) or FB[fpc ..+ 8*nSize] (V mode: one 64-bit word per column)
    C = the mSize x nSize matrix of L0C[src] (Nz, srcStride rows per 16-column block)
    out = quantize(C, mode, words, reluEn)       each element: shift, convert, x M1 (x M2 if negative),
                                                 round, + offset, saturate (fixpipe_math)
    nz2nd: dst[i*dstStride + j] = out[i][j]      else Nz: blocks of 16 columns (32 for int8) dstStride x 32 B apart
    GM with SetAtomicAdd: dst = dst + out in the atomic type"""
    fixpipe_access(ctx, form, p)
    m, n, mode = p["mSize"], p["nSize"], p["quantPre"]
    words = quant_words(ctx, mode, n)
    values = read_l0c(ctx, p["src"], m, n, p["srcStride"])
    try:
        out, out_type = fixpipe_math.quantize(values, p["srcType"], mode, words, p["reluEn"], ctx.chip.name,
                                              ctx.options, output=p["dstType"] if p["dstType"] == "float8_e5m2"
                                              else None)
    except fixpipe_math.UnsupportedModeError as error:
        raise faults.unsupported(str(error)) from None
    except FixpipeParamError as error:
        raise faults.quant_param(f"quantPre={mode}: {error}") from None
    if out_type != p["dstType"]:
        raise faults.quant_param(f"quantPre={mode} with this quant word writes {out_type} (bit 46, the sign "
                                 f"bit, selects int8 or uint8), but dstType={p['dstType']}")
    size = ELEMENT_BYTES[out_type]
    out = np.ascontiguousarray(out).view(np.uint8).reshape(m, n * size)
    if form.buffers["dst"] == "GM":
        _write_gm(ctx, p, out, out_type, size)
    else:
        for offset, chunk in _placements(p, out, "L1", size):
            ctx.write("L1", offset, chunk, "dst")


def nz_columns(size: int) -> int:
    """Columns per Nz block of the output: 16 (one L0C fractal's width), except int8, whose two 16-column
    fractals merge into one block of 32 (Int8 Channel Merge), so every output row of a block is whole 32 B."""
    return 32 if size == 1 else 16


def output_spans(p, space: str, size: int) -> list[tuple[Span, int]]:
    """Where the mSize x nSize output goes, as (span, the first byte of an output row it takes): each ND row
    dstStride elements apart (one span), or each Nz block of nz_columns columns, dstStride x 32 B apart, its
    rows one after another."""
    m, row_bytes = p["mSize"], p["nSize"] * size
    if p["nz2nd"]:
        return [(Span(space, p["dst"], m, row_bytes, p["dstStride"] * size), 0)]
    block_bytes = nz_columns(size) * size
    return [(Span(space, p["dst"] + block * p["dstStride"] * 32, m, min(block_bytes, row_bytes - column),
                  block_bytes), column)  # a part-filled last block's rows still start a whole block row apart
            for block, column in enumerate(range(0, row_bytes, block_bytes))]


def _placements(p, out: np.ndarray, space: str, size: int):
    """(destination byte offset, bytes) of each piece of the output, in output_spans' places."""
    return [(span.start + i * span.stride, out[i, column:column + span.row_bytes])
            for span, column in output_spans(p, space, size) for i in range(span.rows)]


_ELEMENT_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def _write_gm(ctx, p, out: np.ndarray, out_type: str, size: int) -> None:
    atomic = ATOMIC_MODES[ctx.reg("atomic")]
    pieces = _placements(p, out, "GM", size)
    if atomic != "none" and atomic != out_type:
        raise faults.unsupported(f"SetAtomicAdd({atomic}) adds {atomic}, but this Fixpipe writes {out_type}")
    if atomic == "none" and _write_gm_rows(ctx, p, out, size):
        return
    for address, chunk in pieces:  # every row's GM mapped before the first is written
        ctx.gm_check(address, chunk.size, "write")
    if atomic == "none":
        for address, chunk in pieces:
            ctx.gm_write(address, chunk)
        return
    bits = _ELEMENT_BITS[ELEMENT_BYTES[atomic]]  # atomic_math adds element bits, not bytes
    sums = [(address, atomic_add(ctx.gm_read(address, chunk.size).view(bits), chunk.view(bits), atomic,
                                 ctx.options).view(np.uint8)) for address, chunk in pieces]
    for address, total in sums:
        ctx.gm_write(address, total)


def _write_gm_rows(ctx, p, out: np.ndarray, size: int) -> bool:
    """The ND rows (nz2nd) of a plain store written in one go: what the row-by-row path does (every row mapped,
    then each row tracked and written in turn, a race stopping at its row), when one writable region holds
    them all and nothing is journalled.  False: the caller takes the row-by-row path."""
    if not p["nz2nd"]:
        return False
    (span, _column), = output_spans(p, "GM", size)
    if span.rows > 1 and span.stride < span.row_bytes:
        return False
    if ctx.memory.span(span.start, span.end - span.start, write=True) is None:
        return False  # (not one writable region, or the journal or an access log wants each row)
    pipes = ctx.state.pipes
    done = span.rows if pipes is None else pipes.rows_ordered("GM", span.start, span.rows, span.row_bytes,
                                                               span.stride, write=True)
    rows = out[:done, :span.row_bytes]
    if done and not ctx.memory.write_rows(span.start, span.stride, rows):
        for r in range(done):
            ctx.memory.write(span.start + r * span.stride, rows[r].tobytes())
    for r in range(done, span.rows):  # a race at row ``done``: its own write raises it, as row by row
        ctx.gm_write(span.start + r * span.stride, out[r, :span.row_bytes])
    return True


def set_pre_quant_flag(ctx, form, p):
    """quant_pre = config      (the scalar quant word of the non-V modes)"""
    ctx.set_reg("quant_pre", p["config"])


def set_fixpipe_config(ctx, form, p):
    """fpc = quantPre          (where in FB the V modes' per-channel words start)"""
    ctx.check_aligned("FB", p["quantPre"], "quantPre")
    ctx.check_inside("FB", p["quantPre"], QUANT_WORD_BYTES, "quantPre")
    ctx.set_reg("fpc", p["quantPre"])


def set_atomic_add(ctx, form, p):
    """atomic = dtype          (the fixpipe's GM writes add to GM in dtype)"""
    if p["dtype"] not in ATOMIC_MODES[1:]:
        raise faults.unsupported(f"SetAtomicAdd<{p['dtype']}>: atomic add takes {', '.join(ATOMIC_MODES[1:])}")
    ctx.set_reg("atomic", ATOMIC_MODES.index(p["dtype"]))


def set_atomic_none(ctx, form, p):
    """atomic = none           (GM writes are plain stores)"""
    ctx.set_reg("atomic", 0)
