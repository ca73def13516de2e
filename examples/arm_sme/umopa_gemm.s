// C[20,18] += A[20,12] x B[12,18] (uint8 -> int32) with UMOPA ZA0.S at SVL 512: for each
// 16 x 16 block of C, load it into ZA0 by horizontal slices, add one outer product per four
// k, store it back.  WHILELT predicates cut the last blocks to M rows and N columns.
// x0 = A panels, x1 = B panels, x2 = C, x3 = M, x4 = N, x5 = k groups, x6 = C row stride.
        smstart                                     // streaming mode and ZA on
        cntw x7                                     // dim: 32-bit lanes per vector, the rows and columns of ZA0.S
        lsl x8, x3, #2                              // 4M: the byte lanes of an A panel that hold rows of A
        lsl x19, x4, #2                             // 4N: the byte lanes of a B panel that hold columns of B
        mov x9, #0                                  // i0: the first row of this row block
row_block:
        lsl x15, x9, #2
        whilelt p0.b, x15, x8                       // the rows of this block that exist, four k bytes each
        mov x10, #0                                 // j0: the first column of this column block
        mov x11, x1                                 // B cursor: every row block walks all of B
        mov x13, x2                                 // C cursor at (i0, j0)
col_block:
        lsl x15, x10, #2
        whilelt p1.b, x15, x19                      // the columns of this block that exist, four k bytes each
        whilelt p2.s, x10, x4                       // the same columns as 32-bit elements, for the C slices
        mov w12, #0
        mov x14, x13
load_c:
        ld1w {za0h.s[w12, 0]}, p2/z, [x14]          // row w12 of the block from C
        add x14, x14, x6
        add w12, w12, #1
        add x15, x9, x12                            // the row of C the next slice would be
        cmp x15, x3
        b.hs load_c_done                            // past M
        cmp x12, x7
        b.lo load_c                                 // or past the block
load_c_done:
        mov x16, x0                                 // A cursor: this row block's panels
        mov x17, x5                                 // k groups to go
k_group:
        ld1b {z0.b}, p0/z, [x16]                    // four k of each row of the block
        ld1b {z1.b}, p1/z, [x11]                    // the same four k of each column
        umopa za0.s, p0/m, p1/m, z0.b, z1.b         // ZA0[i][j] += the 4-way dot of row i and column j
        addvl x16, x16, #1
        addvl x11, x11, #1                          // the next column block's panels follow these
        subs x17, x17, #1
        b.ne k_group
        mov w12, #0
        mov x14, x13
store_c:
        st1w {za0h.s[w12, 0]}, p2, [x14]            // row w12 of the block to C
        add x14, x14, x6
        add w12, w12, #1
        add x15, x9, x12                            // the row of C the next slice would be
        cmp x15, x3
        b.hs store_c_done                           // past M
        cmp x12, x7
        b.lo store_c                                // or past the block
store_c_done:
        add x13, x13, x7, lsl #2                    // C cursor: dim columns on
        add x10, x10, x7
        cmp x10, x4
        b.lo col_block
        mov x0, x16                                 // the next row block's A panels follow this one's
        mul x15, x6, x7                             // dim rows of C, in bytes
        add x2, x2, x15
        add x9, x9, x7
        cmp x9, x3
        b.lo row_block
        smstop
        ret
