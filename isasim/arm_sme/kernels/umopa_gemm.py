"""The UMOPA outer-product GEMM with predicated edges (UMOPA ZA0.S, 4-way .B->.S, an outer product per
four k).

Packing (every panel is one VL-byte vector, loaded with a single LD1B): A panels
``a_panel[rb][g][4i + kk] = A[rb*dim + i][4g + kk]`` (row block rb of dim rows, k group g) and B panels
``b_panel[cb][g][4j + kk] = B[4g + kk][cb*dim + j]``; lanes past M or N are filled with 0xA5 because
the WHILELT predicates, not the data, keep them out.  C is M x N int32, row major with no padding: the
loads and stores of C are LD1W/ST1W of tile slices under a WHILELT predicate on the columns, and the
row loops stop at M.
"""

from __future__ import annotations

from ...core.trace import Init
from ..config import DEFAULT_SVL
from .kernel import Assembly, Kernel, check_memory, check_sizes, contiguous_span, layout_regions
from .packing import PAD_BYTE, operands, pack_a_panels, pack_b_panels, reference


def umopa_gemm(M: int = 20, N: int = 18, K: int = 12, svl: int = DEFAULT_SVL) -> Kernel:
    """C += A x B one dim x dim block of ZA0.S at a time: the block of C loaded into ZA0 by tile
    slices, one UMOPA per four k, the block stored back; WHILELT predicates cut the last row and
    column blocks to M and N."""
    name = "umopa_gemm"
    check_sizes(name, M, N, K, svl)
    dim, vl, kpl = svl // 32, svl // 8, 4
    groups = -(-K // kpl)
    row_blocks, col_blocks = -(-M // dim), -(-N // dim)
    check_memory(name, (row_blocks + col_blocks) * groups * vl + 2 * M * N * 4)
    a, b, c0 = operands(M, N, K, 8)
    expected = reference(a, b, c0)
    a_panels = pack_a_panels(a, dim, kpl, PAD_BYTE)
    b_panels = pack_b_panels(b, dim, kpl, PAD_BYTE)
    (a_addr, b_addr, c_addr), memory, views = layout_regions([
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
                (contiguous_span(c_addr + first * N * 4, rows * N * 4),))

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
