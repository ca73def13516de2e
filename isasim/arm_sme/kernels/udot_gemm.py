"""The UDOT VGx4 GEMMs: ``udot_gemm`` (.B, 4-way), ``udot16_gemm`` (.H, 2-way) and ``udot_indexed_gemm``
(the indexed form: one Zm serves four columns).

Packing (every panel is one VL-byte vector, loaded with a single LD1B):

* ``udot_gemm`` (UDOT ZA.S[w8, 0, VGx4], {z0.B-z3.B}, z4.B: four ZA vectors each gain the 4-way dot
  of the same lanes of one Zn and of Zm) and ``udot16_gemm`` (the same with .H, 2-way): Zm is the B
  panel of umopa_gemm (lane j holds column cb*dim + j's kpl k values); each Zn is one row of
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
"""

from __future__ import annotations

import numpy as np

from ...core.trace import Init
from ..config import DEFAULT_SVL
from .kernel import Assembly, Kernel, check_memory, check_sizes, contiguous_span, layout_regions
from .packing import operands, pack_a_broadcast, pack_a_panels, pack_b_panels, reference


def _udot_gemm(name: str, element_bits: int, M: int, N: int, K: int, svl: int) -> Kernel:
    check_sizes(name, M, N, K, svl)
    dim, vl = svl // 32, svl // 8
    kpl = 32 // element_bits  # k values one 32-bit lane reduces: 4 bytes or 2 halfwords
    suffix = "b" if element_bits == 8 else "h"
    groups, quads, col_blocks = -(-K // kpl), -(-M // 4), -(-N // dim)
    Mp, Np = quads * 4, col_blocks * dim
    check_memory(name, (quads * 4 + col_blocks) * groups * vl + 2 * Mp * Np * 4)
    a, b, c0 = operands(M, N, K, element_bits)
    c_padded = np.zeros((Mp, Np), np.int32)
    c_padded[:M, :N] = c0
    expected = np.zeros((Mp, Np), np.int32)
    expected[:M, :N] = reference(a, b, c0)  # the padding rows and columns stay 0: zero data adds nothing
    element = "uint8" if element_bits == 8 else "uint16"
    a_bcast = pack_a_broadcast(a, dim, kpl)
    b_panels = pack_b_panels(b, dim, kpl)
    (a_addr, b_addr, c_addr), memory, views = layout_regions([
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
                (contiguous_span(c_addr + group.start * 4 * Np * 4, len(group) * 4 * Np * 4),))

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


def udot_indexed_gemm(M: int = 40, N: int = 10, K: int = 9, svl: int = DEFAULT_SVL) -> Kernel:
    """C^T += (A x B)^T with UDOT ZA.S[w8, i, VGx4], {z0.B-z3.B}, z4.B[i] for i = 0..3 per k group."""
    name = "udot_indexed_gemm"
    check_sizes(name, M, N, K, svl)
    dim, vl, kpl = svl // 32, svl // 8, 4
    groups, supers, quads = -(-K // kpl), -(-M // (4 * dim)), -(-N // 4)
    Mp, Np = supers * 4 * dim, quads * 4
    check_memory(name, (supers * 4 + quads) * groups * vl + 2 * Mp * Np * 4)
    a, b, c0 = operands(M, N, K, 8)
    a_padded = np.zeros((Mp, K), np.uint8)
    a_padded[:M] = a  # zero rows: the padding of C^T stays what it was, 0
    a_super = pack_a_panels(a_padded, dim, kpl).reshape(supers, 4, groups, vl).transpose(0, 2, 1, 3)
    b_quads = np.tile(pack_b_panels(b, 4, kpl), (1, 1, vl // 16))  # [quad][g][VL]: 16 bytes per segment
    ct_padded = np.zeros((Np, Mp), np.int32)
    ct_padded[:N, :M] = c0.T
    expected = np.zeros((Np, Mp), np.int32)
    expected[:N, :M] = reference(a, b, c0).T
    (a_addr, b_addr, c_addr), memory, views = layout_regions([
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
        from ...core.kernel_parallel import Span

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
