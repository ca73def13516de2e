"""Arm SME2 integer GEMM kernels, C[M,N] += A[M,K] x B[K,N], written from Python as an SME kernel
author writes them, in the shape of :mod:`isasim.x86_amx.kernels`.

Each builder returns a :class:`Kernel`: the program (LLVM syntax, with comments), the initial
registers and named memory regions, and the expected C computed here with an INT64 numpy product
(then wrapped to the hardware's 32-bit accumulators) -- never by running isasim.  ``kernel.trace()``
is an isasim-trace whose expectation is that reference, so ``isasim run`` says PASS or FAIL.

    from isasim.arm_sme import kernels
    k = kernels.build("umopa_gemm", M=20, N=18, K=12, svl=512)
    k.trace()

SVL is the streaming vector length in bits; VL = SVL/8 bytes is one Z register and one ZA vector;
dim = SVL/32 is the number of 32-bit lanes of a vector (the rows and columns of a 32-bit tile).
Kg = ceil(K / kpl), where kpl is how many K values one 32-bit lane reduces (4 for bytes, 2 for
halfwords); K is padded with zeros to Kg * kpl, and zeros add nothing to a dot product.

Packing (every panel is one VL-byte vector, loaded with a single LD1B):

* ``umopa_gemm`` (UMOPA ZA0.S, 4-way .B->.S, an outer product per four k):
  A panels ``a_panel[rb][g][4i + kk] = A[rb*dim + i][4g + kk]`` (row block rb of dim rows, k group
  g) and B panels ``b_panel[cb][g][4j + kk] = B[4g + kk][cb*dim + j]``; lanes past M or N are filled
  with 0xA5 because the WHILELT predicates, not the data, keep them out.  C is M x N int32, row
  major with no padding: the loads and stores of C are LD1W/ST1W of tile slices under a WHILELT
  predicate on the columns, and the row loops stop at M.
* ``udot_gemm`` (UDOT ZA.S[w8, 0, VGx4], {z0.B-z3.B}, z4.B: four ZA vectors each gain the 4-way dot
  of the same lanes of one Zn and of Zm) and ``udot16_gemm`` (the same with .H, 2-way): Zm is the B
  panel of the kernel above (lane j holds column cb*dim + j's kpl k values); each Zn is one row of
  A *broadcast*: ``a_bcast[q][g][r][lane j] = A[4q + r][kpl*g .. kpl*g + kpl-1]`` for every j, so
  ZA vector r*dim (the vector group's r-th vector, vstride = VL/4 = dim) gains row 4q + r of C for
  dim columns.  M is padded with zero rows to a multiple of 4 and N with zero columns to a multiple
  of dim: C is Mp x Np int32 with row stride Np*4, loaded with LDR ZA and stored with STR ZA whole.
* ``udot_indexed_gemm`` (UDOT ZA.S[w8, i, VGx4], {z0.B-z3.B}, z4.B[i]): the indexed form gives every
  32-bit lane the element i of its own 128-bit segment of Zm, so one Zm serves four columns: the B
  quad ``b_quad[c][g][4i + kk] = B[4g + kk][4c + i]`` (16 bytes) repeated in every segment.  Zn_r
  is the A panel (as for UMOPA, zero padded) of row block r of a superblock of 4 dim rows:
  ``a_super[sb][g][r] = a_panel[4sb + r][g]``.  ZA vector i + r*dim, lane e then gains
  C[sb*4dim + r*dim + e][4c + i]: ZA holds C transposed, so C is stored transposed, C^T (Np x Mp
  int32, N padded to a multiple of 4 and M to a multiple of 4 dim), by LDR/STR ZA.

Registers x0-x29 only: the QEMU harness holds its return address in x30.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..core.errors import ConfigError
from ..core.trace import Init, RegionView, Trace
from .config import DEFAULT_SVL, SVLS

A_BASE = 0x100000
REGION_ALIGN = 0x1000  # each region starts on its own page, after the one before it
MAX_KERNEL_MEMORY_BYTES = 32 * 2**20  # as for the AMX kernels: the trace carries every byte as hex
PAD_BYTE = 0xA5  # lanes past M or N in the UMOPA panels: nonzero, so a missing predicate shows


class KernelSizeError(ConfigError):
    """Kernel parameters outside what the kernel can be built with."""


@dataclass
class Kernel:
    name: str
    description: str
    lines: list[str]
    init: Init
    expected: list[tuple[int, bytes]]  # (address, bytes) the run must leave in memory
    macs: int
    svl: int
    reference: np.ndarray | None = field(default=None, repr=False)
    blocks: int = 1  # independent row blocks of C: the unit the kernel splits into parts by
    # row blocks range -> (the registers that start the same program on that range, the C bytes it writes)
    split: Callable[[range], tuple[dict[str, int], tuple]] | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def parts(self, pieces: int) -> list:
        """The kernel as at most ``pieces`` independent parts (isasim.core.kernel_parallel), by row block:
        the program is the same, its A and C pointers and its row count set to a contiguous range of row
        blocks (the loops count rows from the pointers, so a range runs as a smaller GEMM would)."""
        from ..core.kernel_parallel import Part, block_ranges, contiguous

        c_address, c_bytes = self.expected[0]
        if self.split is None or self.blocks == 1:
            return [Part(self.name, tuple(self.lines), (contiguous(c_address, len(c_bytes)),))]
        result = []
        for group in block_ranges(self.blocks, pieces):
            regs, owns = self.split(group)
            result.append(Part(f"{self.name} row blocks {group.start}..{group.stop - 1}", tuple(self.lines), owns,
                               regs))
        return result

    def trace(self, producer: str | None = None) -> Trace:
        return Trace("arm_sme", list(self.lines), {"svl": self.svl},
                     producer or f"reference (INT64 numpy): {self.description}", self.init,
                     {"fault": None, "memory": list(self.expected)}, None, self.name)


class Assembly:
    """Assembly lines with their comments."""

    def __init__(self, title: str):
        self.lines = [f"// {line}" if line else "//" for line in title.splitlines()]

    def __call__(self, instruction: str, comment: str = "") -> None:
        text = f"        {instruction}"
        self.lines.append(f"{text:<52}// {comment}" if comment else text)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")


# ---------------------------------------------------------------------------
# Data and packing
# ---------------------------------------------------------------------------


def operands(M: int, N: int, K: int, element_bits: int, seed: int = 12):
    """Unsigned A (M x K), B (K x N) of ``element_bits`` and a random int32 C0 to accumulate into."""
    rng = np.random.default_rng(seed)
    dtype = np.uint8 if element_bits == 8 else np.uint16
    high = 1 << element_bits
    a = rng.integers(0, high, size=(M, K)).astype(dtype)
    b = rng.integers(0, high, size=(K, N)).astype(dtype)
    c0 = rng.integers(-2**31, 2**31, size=(M, N)).astype(np.int32)
    return a, b, c0


def reference(a: np.ndarray, b: np.ndarray, c0: np.ndarray) -> np.ndarray:
    """C0 + A x B in INT64, then as the 32-bit accumulators hold it (wrapping mod 2^32)."""
    exact = c0.astype(np.int64) + a.astype(np.int64) @ b.astype(np.int64)
    return ((exact + 2**31) % 2**32 - 2**31).astype(np.int32)


def pack_a_panels(a: np.ndarray, dim: int, kpl: int, pad: int = 0) -> np.ndarray:
    """a_panel[rb][g][i*kpl + kk] = A[rb*dim + i][kpl*g + kk]: [row blocks][Kg][dim*kpl]."""
    M, K = a.shape
    blocks, groups = -(-M // dim), -(-K // kpl)
    padded = np.full((blocks * dim, groups * kpl), pad, dtype=a.dtype)
    padded[:, K:] = 0  # the K padding must add nothing, whatever the row
    padded[:M, :K] = a
    return padded.reshape(blocks, dim, groups, kpl).transpose(0, 2, 1, 3).reshape(blocks, groups, dim * kpl)


def pack_b_panels(b: np.ndarray, dim: int, kpl: int, pad: int = 0) -> np.ndarray:
    """b_panel[cb][g][j*kpl + kk] = B[kpl*g + kk][cb*dim + j]: [column blocks][Kg][dim*kpl]."""
    return pack_a_panels(np.ascontiguousarray(b.T), dim, kpl, pad)


def pack_a_broadcast(a: np.ndarray, dim: int, kpl: int) -> np.ndarray:
    """a_bcast[q][g][r][j*kpl + kk] = A[4q + r][kpl*g + kk] for every lane j: [Mp/4][Kg][4][dim*kpl]."""
    M, K = a.shape
    quads, groups = -(-M // 4), -(-K // kpl)
    padded = np.zeros((quads * 4, groups * kpl), dtype=a.dtype)
    padded[:M, :K] = a
    rows = padded.reshape(quads, 4, groups, kpl).transpose(0, 2, 1, 3)  # [q][g][r][kk]
    return np.ascontiguousarray(np.broadcast_to(rows[:, :, :, None, :], (quads, groups, 4, dim, kpl))
                                ).reshape(quads, groups, 4, dim * kpl)


# ---------------------------------------------------------------------------
# Checks and layout
# ---------------------------------------------------------------------------


def _check_sizes(name: str, M: int, N: int, K: int, svl: int) -> None:
    if isinstance(svl, bool) or svl not in SVLS:
        raise KernelSizeError(f"{name}: --svl must be one of {', '.join(map(str, SVLS))}, not {svl}")
    for label, value in (("M", M), ("N", N), ("K", K)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise KernelSizeError(f"{name}: {label} must be a whole number of at least 1, not {value}")


def _check_memory(name: str, needed: int) -> None:
    if needed > MAX_KERNEL_MEMORY_BYTES:
        raise KernelSizeError(f"{name}: this size needs {needed:,} bytes of memory in its trace, more than the "
                              f"limit of {MAX_KERNEL_MEMORY_BYTES:,} ({MAX_KERNEL_MEMORY_BYTES // 2**20} MiB)")


def _contiguous(address: int, size: int):
    from ..core.kernel_parallel import contiguous

    return contiguous(address, size)


def _after(address: int, size: int) -> int:
    return -(-(address + size) // REGION_ALIGN) * REGION_ALIGN


def _regions(parts: list[tuple[str, np.ndarray, str, tuple[int, int], bool]]):
    """Consecutive page-aligned regions from A_BASE: (address of each, memory, views)."""
    address, addresses, memory, views = A_BASE, [], [], []
    for label, data, element, shape, show in parts:
        raw = np.ascontiguousarray(data).tobytes()
        addresses.append(address)
        memory.append((address, raw, True))
        views.append(RegionView(label, address, element, shape, show))
        address = _after(address, max(len(raw), 1))
    return addresses, memory, views


# ---------------------------------------------------------------------------
# (c) UMOPA outer-product GEMM with predicated edges
# ---------------------------------------------------------------------------


def umopa_gemm(M: int = 20, N: int = 18, K: int = 12, svl: int = DEFAULT_SVL) -> Kernel:
    """C += A x B one dim x dim block of ZA0.S at a time: the block of C loaded into ZA0 by tile
    slices, one UMOPA per four k, the block stored back; WHILELT predicates cut the last row and
    column blocks to M and N."""
    name = "umopa_gemm"
    _check_sizes(name, M, N, K, svl)
    dim, vl, kpl = svl // 32, svl // 8, 4
    groups = -(-K // kpl)
    row_blocks, col_blocks = -(-M // dim), -(-N // dim)
    _check_memory(name, (row_blocks + col_blocks) * groups * vl + 2 * M * N * 4)
    a, b, c0 = operands(M, N, K, 8)
    expected = reference(a, b, c0)
    a_panels = pack_a_panels(a, dim, kpl, PAD_BYTE)
    b_panels = pack_b_panels(b, dim, kpl, PAD_BYTE)
    (a_addr, b_addr, c_addr), memory, views = _regions([
        ("A panels", a_panels.reshape(-1, vl), "uint8", (row_blocks * groups, vl), False),
        ("B panels", b_panels.reshape(-1, vl), "uint8", (col_blocks * groups, vl), False),
        ("C", c0, "int32", (M, N), True)])

    asm = Assembly(f"C[{M},{N}] += A[{M},{K}] x B[{K},{N}] (uint8 -> int32) with UMOPA ZA0.S at SVL {svl}: for each\n"
                   f"{dim} x {dim} block of C, load it into ZA0 by horizontal slices, add one outer product per four\n"
                   "k, store it back.  WHILELT predicates cut the last blocks to M rows and N columns.\n"
                   "x0 = A panels, x1 = B panels, x2 = C, x3 = M, x4 = N, x5 = k groups, x6 = C row stride.")
    asm("smstart", "streaming mode and ZA on")
    asm("cntw x7", "dim: 32-bit lanes per vector, the rows and columns of ZA0.S")
    asm("lsl x8, x3, #2", "4M: the byte lanes of an A panel that hold rows of A")
    asm("lsl x19, x4, #2", "4N: the byte lanes of a B panel that hold columns of B")
    asm("mov x9, #0", "i0: the first row of this row block")
    asm.label("row_block")
    asm("lsl x15, x9, #2")
    asm("whilelt p0.b, x15, x8", "the rows of this block that exist, four k bytes each")
    asm("mov x10, #0", "j0: the first column of this column block")
    asm("mov x11, x1", "B cursor: every row block walks all of B")
    asm("mov x13, x2", "C cursor at (i0, j0)")
    asm.label("col_block")
    asm("lsl x15, x10, #2")
    asm("whilelt p1.b, x15, x19", "the columns of this block that exist, four k bytes each")
    asm("whilelt p2.s, x10, x4", "the same columns as 32-bit elements, for the C slices")
    _slice_loop(asm, "load_c", "ld1w {za0h.s[w12, 0]}, p2/z, [x14]", "row w12 of the block from C")
    asm("mov x16, x0", "A cursor: this row block's panels")
    asm("mov x17, x5", "k groups to go")
    asm.label("k_group")
    asm("ld1b {z0.b}, p0/z, [x16]", "four k of each row of the block")
    asm("ld1b {z1.b}, p1/z, [x11]", "the same four k of each column")
    asm("umopa za0.s, p0/m, p1/m, z0.b, z1.b", "ZA0[i][j] += the 4-way dot of row i and column j")
    asm("addvl x16, x16, #1")
    asm("addvl x11, x11, #1", "the next column block's panels follow these")
    asm("subs x17, x17, #1")
    asm("b.ne k_group")
    _slice_loop(asm, "store_c", "st1w {za0h.s[w12, 0]}, p2, [x14]", "row w12 of the block to C")
    asm("add x13, x13, x7, lsl #2", "C cursor: dim columns on")
    asm("add x10, x10, x7")
    asm("cmp x10, x4")
    asm("b.lo col_block")
    asm("mov x0, x16", "the next row block's A panels follow this one's")
    asm("mul x15, x6, x7", "dim rows of C, in bytes")
    asm("add x2, x2, x15")
    asm("add x9, x9, x7")
    asm("cmp x9, x3")
    asm("b.lo row_block")
    asm("smstop")
    asm("ret")
    regs = {"x0": a_addr, "x1": b_addr, "x2": c_addr, "x3": M, "x4": N, "x5": groups, "x6": N * 4}

    def split(group: range):
        # row block rb's panels are groups vectors; its C rows start rb * dim rows down; x3 counts its rows
        first, rows = group.start * dim, min(M, group.stop * dim) - group.start * dim
        return ({"x0": a_addr + group.start * groups * vl, "x2": c_addr + first * N * 4, "x3": rows},
                (_contiguous(c_addr + first * N * 4, rows * N * 4),))

    return Kernel(f"{name}_{M}x{N}x{K}_svl{svl}", f"UMOPA uint8 GEMM M={M} N={N} K={K} at SVL {svl}", asm.lines,
                  Init(regs, memory, views), [(c_addr, expected.tobytes())], M * N * K, svl, expected,
                  row_blocks, split)


def _slice_loop(asm: Assembly, label: str, instruction: str, comment: str) -> None:
    """Rows w12 = 0, 1, ... of the block at x13 (stride x6) while i0 + w12 < M and w12 < dim."""
    asm("mov w12, #0")
    asm("mov x14, x13")
    asm.label(label)
    asm(instruction, comment)
    asm("add x14, x14, x6")
    asm("add w12, w12, #1")
    asm("add x15, x9, x12", "the row of C the next slice would be")
    asm("cmp x15, x3")
    asm(f"b.hs {label}_done", "past M")
    asm("cmp x12, x7")
    asm(f"b.lo {label}", "or past the block")
    asm.label(f"{label}_done")


# ---------------------------------------------------------------------------
# (a), (b) UDOT VGx4 GEMM: .B 4-way and .H 2-way
# ---------------------------------------------------------------------------


def _udot_gemm(name: str, element_bits: int, M: int, N: int, K: int, svl: int) -> Kernel:
    _check_sizes(name, M, N, K, svl)
    dim, vl = svl // 32, svl // 8
    kpl = 32 // element_bits  # k values one 32-bit lane reduces: 4 bytes or 2 halfwords
    suffix = "b" if element_bits == 8 else "h"
    groups, quads, col_blocks = -(-K // kpl), -(-M // 4), -(-N // dim)
    Mp, Np = quads * 4, col_blocks * dim
    _check_memory(name, (quads * 4 + col_blocks) * groups * vl + 2 * Mp * Np * 4)
    a, b, c0 = operands(M, N, K, element_bits)
    c_padded = np.zeros((Mp, Np), np.int32)
    c_padded[:M, :N] = c0
    expected = np.zeros((Mp, Np), np.int32)
    expected[:M, :N] = reference(a, b, c0)  # the padding rows and columns stay 0: zero data adds nothing
    element = "uint8" if element_bits == 8 else "uint16"
    a_bcast = pack_a_broadcast(a, dim, kpl)
    b_panels = pack_b_panels(b, dim, kpl)
    (a_addr, b_addr, c_addr), memory, views = _regions([
        ("A broadcast", a_bcast.reshape(-1, dim * kpl), element, (quads * groups * 4, dim * kpl), False),
        ("B panels", b_panels.reshape(-1, dim * kpl), element, (col_blocks * groups, dim * kpl), False),
        ("C", c_padded, "int32", (Mp, Np), True)])
    ways = "4-way .B" if element_bits == 8 else "2-way .H"
    asm = Assembly(f"C[{M},{N}] += A[{M},{K}] x B[{K},{N}] (uint{element_bits} -> int32) with UDOT VGx4 ({ways}->.S) "
                   f"at SVL {svl}.\n"
                   f"C is {Mp} x {Np} (padded to whole quads of rows and vectors of columns).  For each column\n"
                   f"block of {dim} and each quad of rows: four rows of C into ZA vectors 0, dim, 2dim, 3dim (the\n"
                   "vector group w8 = 0), one UDOT per k group (Zm = the B panel, z0-z3 = the four rows of A\n"
                   "broadcast), the rows stored back.\n"
                   "x0 = A broadcast, x1 = B panels, x2 = C, x3 = row quads, x4 = column blocks, x5 = k groups,\n"
                   "x6 = C row stride.")
    asm("smstart", "streaming mode and ZA on; Z and P zero")
    asm("ptrue p0.b", "whole vectors: the padding makes every lane real")
    asm("cntw x7", "dim: the vector group's stride, VL/4 ZA vectors")
    asm("mov w8, #0", "the vector group: ZA vectors 0, dim, 2dim, 3dim")
    asm.label("col_block")
    asm("mov x10, x0", "A cursor: every column block walks all of A")
    asm("mov x11, x2", "C cursor: row 0 of this column block")
    asm("mov x13, x3", "row quads to go")
    asm.label("row_quad")
    _za_rows(asm, "ldr", "rows 4q + r of C into ZA vectors r*dim, r = 0..3")
    asm("mov x15, x1", "B cursor: this column block's panels")
    asm("mov x16, x5", "k groups to go")
    asm.label("k_group")
    asm(f"ld1{suffix} {{z4.{suffix}}}, p0/z, [x15]", f"lane j: the {kpl} k of column j of the block")
    for r in range(4):
        asm(f"ld1{suffix} {{z{r}.{suffix}}}, p0/z, [x10, #{r}, mul vl]", f"row 4q + {r} of A, its {kpl} k in every lane")
    asm(f"udot za.s[w8, 0, vgx4], {{z0.{suffix}-z3.{suffix}}}, z4.{suffix}",
        "ZA vector r*dim, lane j += the dot of row 4q + r and column j")
    asm("addvl x15, x15, #1")
    asm("addvl x10, x10, #4", "the next k group's four rows")
    asm("subs x16, x16, #1")
    asm("b.ne k_group")
    _za_rows(asm, "str", "ZA vectors r*dim back to rows 4q + r of C, r = 0..3")
    asm("add x11, x11, x6, lsl #2", "C cursor: four rows on")
    asm("subs x13, x13, #1")
    asm("b.ne row_quad")
    asm("mov x1, x15", "the next column block's B panels follow these")
    asm("addvl x2, x2, #1", "C: dim columns on")
    asm("subs x4, x4, #1")
    asm("b.ne col_block")
    asm("smstop")
    asm("ret")
    regs = {"x0": a_addr, "x1": b_addr, "x2": c_addr, "x3": quads, "x4": col_blocks, "x5": groups, "x6": Np * 4}

    def split(group: range):
        # a row block is a quad of rows: its broadcast A is groups x 4 vectors, its C 4 whole padded rows
        return ({"x0": a_addr + group.start * groups * 4 * vl, "x2": c_addr + group.start * 4 * Np * 4,
                 "x3": len(group)},
                (_contiguous(c_addr + group.start * 4 * Np * 4, len(group) * 4 * Np * 4),))

    return Kernel(f"{name}_{M}x{N}x{K}_svl{svl}", f"UDOT VGx4 uint{element_bits} GEMM M={M} N={N} K={K} at SVL {svl}",
                  asm.lines, Init(regs, memory, views), [(c_addr, expected.tobytes())], M * N * K, svl, expected,
                  quads, split)


def _za_rows(asm: Assembly, op: str, comment: str) -> None:
    """LDR or STR of ZA vectors 0, dim, 2dim, 3dim against the four C rows at x11 (stride x6); the
    comment (about row r) goes on the first."""
    asm("mov w12, #0")
    asm("mov x14, x11")
    for r in range(4):
        asm(f"{op} za[w12, 0], [x14]", comment if r == 0 else "")
        if r < 3:
            asm("add w12, w12, w7", "the vector group's next vector")
            asm("add x14, x14, x6", "the next row of C")


def udot_gemm(M: int = 10, N: int = 20, K: int = 24, svl: int = DEFAULT_SVL) -> Kernel:
    """(a) uint8 GEMM with UDOT ZA.S[w8, 0, VGx4], {z0.B-z3.B}, z4.B (4-way)."""
    return _udot_gemm("udot_gemm", 8, M, N, K, svl)


def udot16_gemm(M: int = 10, N: int = 20, K: int = 10, svl: int = DEFAULT_SVL) -> Kernel:
    """(b) uint16 GEMM with UDOT ZA.S[w8, 0, VGx4], {z0.H-z3.H}, z4.H (2-way)."""
    return _udot_gemm("udot16_gemm", 16, M, N, K, svl)


# ---------------------------------------------------------------------------
# (d) the indexed UDOT: one Zm, four columns
# ---------------------------------------------------------------------------


def udot_indexed_gemm(M: int = 40, N: int = 10, K: int = 9, svl: int = DEFAULT_SVL) -> Kernel:
    """C^T += (A x B)^T with UDOT ZA.S[w8, i, VGx4], {z0.B-z3.B}, z4.B[i] for i = 0..3 per k group."""
    name = "udot_indexed_gemm"
    _check_sizes(name, M, N, K, svl)
    dim, vl, kpl = svl // 32, svl // 8, 4
    groups, supers, quads = -(-K // kpl), -(-M // (4 * dim)), -(-N // 4)
    Mp, Np = supers * 4 * dim, quads * 4
    _check_memory(name, (supers * 4 + quads) * groups * vl + 2 * Mp * Np * 4)
    a, b, c0 = operands(M, N, K, 8)
    a_padded = np.zeros((Mp, K), np.uint8)
    a_padded[:M] = a  # zero rows: the padding of C^T stays what it was, 0
    a_super = pack_a_panels(a_padded, dim, kpl).reshape(supers, 4, groups, vl).transpose(0, 2, 1, 3)
    b_quads = np.tile(pack_b_panels(b, 4, kpl), (1, 1, vl // 16))  # [quad][g][VL]: 16 bytes per segment
    ct_padded = np.zeros((Np, Mp), np.int32)
    ct_padded[:N, :M] = c0.T
    expected = np.zeros((Np, Mp), np.int32)
    expected[:N, :M] = reference(a, b, c0).T
    (a_addr, b_addr, c_addr), memory, views = _regions([
        ("A panels", a_super.reshape(-1, vl), "uint8", (supers * groups * 4, vl), False),
        ("B quads", b_quads.reshape(-1, vl), "uint8", (quads * groups, vl), False),
        ("C transposed", ct_padded, "int32", (Np, Mp), True)])
    asm = Assembly(f"C[{M},{N}] += A[{M},{K}] x B[{K},{N}] (uint8 -> int32) with the indexed UDOT VGx4 at SVL {svl}:\n"
                   "z4 holds four columns of B (one per 32-bit element of each 128-bit segment), so the four\n"
                   "UDOTs z4.b[0..3] serve four columns; z0-z3 are the A panels of four row blocks of dim rows.\n"
                   "ZA vector i + r*dim accumulates column 4c + i over row block r: C is kept transposed (C^T).\n"
                   "x0 = A panels, x1 = B quads, x2 = C^T, x3 = superblocks of 4 dim rows, x4 = column quads,\n"
                   "x5 = k groups, x6 = C^T row stride.")
    asm("smstart", "streaming mode and ZA on; Z and P zero")
    asm("ptrue p0.b", "whole vectors: the padding makes every lane real")
    asm("cntw x7", "dim: the vector group's stride, VL/4 ZA vectors")
    asm("mov w8, #0", "the vector groups w8 + i: ZA vectors i, i + dim, i + 2dim, i + 3dim")
    asm.label("col_quad")
    asm("mov x10, x0", "A cursor: every column quad walks all of A")
    asm("mov x11, x2", "C^T cursor: column 4c, row 0")
    asm("mov x13, x3", "superblocks to go")
    asm.label("super_block")
    _za_columns(asm, "ldr", "column 4c + i, row block r of C into ZA vector i + r*dim")
    asm("mov x15, x1", "B cursor: this column quad's k groups")
    asm("mov x16, x5", "k groups to go")
    asm.label("k_group")
    asm("ld1b {z4.b}, p0/z, [x15]", "four columns' four k, in every 128-bit segment")
    for r in range(4):
        asm(f"ld1b {{z{r}.b}}, p0/z, [x10, #{r}, mul vl]", f"row block {r}: lane e = row e's four k")
    for i in range(4):
        asm(f"udot za.s[w8, {i}, vgx4], {{z0.b-z3.b}}, z4.b[{i}]",
            f"ZA vector {i} + r*dim, lane e += row e of block r . column 4c + {i}")
    asm("addvl x15, x15, #1")
    asm("addvl x10, x10, #4", "the next k group's four panels")
    asm("subs x16, x16, #1")
    asm("b.ne k_group")
    _za_columns(asm, "str", "ZA vector i + r*dim back to column 4c + i, row block r")
    asm("addvl x11, x11, #4", "C^T cursor: 4 dim rows of C on")
    asm("subs x13, x13, #1")
    asm("b.ne super_block")
    asm("mov x1, x15", "the next column quad's B follows this one's")
    asm("add x2, x2, x6, lsl #2", "C^T: four columns of C on")
    asm("subs x4, x4, #1")
    asm("b.ne col_quad")
    asm("smstop")
    asm("ret")
    regs = {"x0": a_addr, "x1": b_addr, "x2": c_addr, "x3": supers, "x4": quads, "x5": groups, "x6": Mp * 4}

    def split(group: range):
        # a row block is a superblock of 4 dim rows of C: 4 panels per k group of A, and 4 dim columns of
        # every row of C^T (a strided span, since C is kept transposed)
        from ..core.kernel_parallel import Span

        first = group.start * 4 * dim
        return ({"x0": a_addr + group.start * groups * 4 * vl, "x2": c_addr + first * 4, "x3": len(group)},
                (Span(c_addr + first * 4, Np, len(group) * 4 * dim * 4, Mp * 4),))

    return Kernel(f"{name}_{M}x{N}x{K}_svl{svl}", f"indexed UDOT VGx4 uint8 GEMM M={M} N={N} K={K} at SVL {svl}",
                  asm.lines, Init(regs, memory, views), [(c_addr, expected.tobytes())], M * N * K, svl, expected,
                  supers, split)


def _za_columns(asm: Assembly, op: str, comment: str) -> None:
    """LDR or STR of ZA vectors i + r*dim (i, r = 0..3) against C^T row 4c + i, row block r, at x11."""
    asm("mov x14, x11", comment)
    for i in range(4):
        asm(f"mov w12, #{i}")
        asm("mov x17, x14")
        for r in range(4):
            asm(f"{op} za[w12, 0], [x17]")
            if r < 3:
                asm("add w12, w12, w7", "the vector group's next vector")
                asm("addvl x17, x17, #1", "the next row block")
        if i < 3:
            asm("add x14, x14, x6", "the next column of C")


BUILDERS = {"umopa_gemm": umopa_gemm, "udot_gemm": udot_gemm, "udot16_gemm": udot16_gemm,
            "udot_indexed_gemm": udot_indexed_gemm}


def build(name: str, count: int | None = None, K: int | None = None, M: int | None = None, N: int | None = None,
          svl: int | None = None) -> Kernel:
    """Kernel ``name`` at the given size (None: its default); a size it cannot be built with is refused with
    one line (KernelSizeError) before anything is allocated."""
    if name not in BUILDERS:
        raise KernelSizeError(f"no arm_sme kernel named {name!r} (known: {', '.join(BUILDERS)})")
    if count is not None:
        raise KernelSizeError(f"{name}: arm_sme kernels take --m, --n and --k, not --count")
    if svl is not None and not isinstance(svl, int):
        # only the spellings of the SVLs themselves: int() would also take "٥١٢" and "5_12"
        by_text = {str(value): value for value in SVLS}
        if str(svl) not in by_text:
            raise KernelSizeError(f"{name}: --svl must be one of {', '.join(map(str, SVLS))}, not {str(svl)[:40]!r}")
        svl = by_text[str(svl)]
    options = {key: value for key, value in (("M", M), ("N", N), ("K", K), ("svl", svl)) if value is not None}
    return BUILDERS[name](**options)
