// C[10,20] += A[10,24] x B[24,20] (uint8 -> int32) with UDOT VGx4 (4-way .B->.S) at SVL 512.
// C is 12 x 32 (padded to whole quads of rows and vectors of columns).  For each column
// block of 16 and each quad of rows: four rows of C into ZA vectors 0, dim, 2dim, 3dim (the
// vector group w8 = 0), one UDOT per k group (Zm = the B panel, z0-z3 = the four rows of A
// broadcast), the rows stored back.
// x0 = A broadcast, x1 = B panels, x2 = C, x3 = row quads, x4 = column blocks, x5 = k groups,
// x6 = C row stride.
        smstart                                     // streaming mode and ZA on; Z and P zero
        ptrue p0.b                                  // whole vectors: the padding makes every lane real
        cntw x7                                     // dim: the vector group's stride, VL/4 ZA vectors
        mov w8, #0                                  // the vector group: ZA vectors 0, dim, 2dim, 3dim
col_block:
        mov x10, x0                                 // A cursor: every column block walks all of A
        mov x11, x2                                 // C cursor: row 0 of this column block
        mov x13, x3                                 // row quads to go
row_quad:
        mov w12, #0
        mov x14, x11
        ldr za[w12, 0], [x14]                       // rows 4q + r of C into ZA vectors r*dim, r = 0..3
        add w12, w12, w7                            // the vector group's next vector
        add x14, x14, x6                            // the next row of C
        ldr za[w12, 0], [x14]
        add w12, w12, w7                            // the vector group's next vector
        add x14, x14, x6                            // the next row of C
        ldr za[w12, 0], [x14]
        add w12, w12, w7                            // the vector group's next vector
        add x14, x14, x6                            // the next row of C
        ldr za[w12, 0], [x14]
        mov x15, x1                                 // B cursor: this column block's panels
        mov x16, x5                                 // k groups to go
k_group:
        ld1b {z4.b}, p0/z, [x15]                    // lane j: the 4 k of column j of the block
        ld1b {z0.b}, p0/z, [x10, #0, mul vl]        // row 4q + 0 of A, its 4 k in every lane
        ld1b {z1.b}, p0/z, [x10, #1, mul vl]        // row 4q + 1 of A, its 4 k in every lane
        ld1b {z2.b}, p0/z, [x10, #2, mul vl]        // row 4q + 2 of A, its 4 k in every lane
        ld1b {z3.b}, p0/z, [x10, #3, mul vl]        // row 4q + 3 of A, its 4 k in every lane
        udot za.s[w8, 0, vgx4], {z0.b-z3.b}, z4.b   // ZA vector r*dim, lane j += the dot of row 4q + r and column j
        addvl x15, x15, #1
        addvl x10, x10, #4                          // the next k group's four rows
        subs x16, x16, #1
        b.ne k_group
        mov w12, #0
        mov x14, x11
        str za[w12, 0], [x14]                       // ZA vectors r*dim back to rows 4q + r of C, r = 0..3
        add w12, w12, w7                            // the vector group's next vector
        add x14, x14, x6                            // the next row of C
        str za[w12, 0], [x14]
        add w12, w12, w7                            // the vector group's next vector
        add x14, x14, x6                            // the next row of C
        str za[w12, 0], [x14]
        add w12, w12, w7                            // the vector group's next vector
        add x14, x14, x6                            // the next row of C
        str za[w12, 0], [x14]
        add x11, x11, x6, lsl #2                    // C cursor: four rows on
        subs x13, x13, #1
        b.ne row_quad
        mov x1, x15                                 // the next column block's B panels follow these
        addvl x2, x2, #1                            // C: dim columns on
        subs x4, x4, #1
        b.ne col_block
        smstop
        ret
