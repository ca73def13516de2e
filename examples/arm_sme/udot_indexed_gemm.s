// C[40,10] += A[40,9] x B[9,10] (uint8 -> int32) with the indexed UDOT VGx4 at SVL 512:
// z4 holds four columns of B (one per 32-bit element of each 128-bit segment), so the four
// UDOTs z4.b[0..3] serve four columns; z0-z3 are the A panels of four row blocks of dim rows.
// ZA vector i + r*dim accumulates column 4c + i over row block r: C is kept transposed (C^T).
// x0 = A panels, x1 = B quads, x2 = C^T, x3 = superblocks of 4 dim rows, x4 = column quads,
// x5 = k groups, x6 = C^T row stride.
        smstart                                     // streaming mode and ZA on; Z and P zero
        ptrue p0.b                                  // whole vectors: the padding makes every lane real
        cntw x7                                     // dim: the vector group's stride, VL/4 ZA vectors
        mov w8, #0                                  // the vector groups w8 + i: ZA vectors i, i + dim, i + 2dim, i + 3dim
col_quad:
        mov x10, x0                                 // A cursor: every column quad walks all of A
        mov x11, x2                                 // C^T cursor: column 4c, row 0
        mov x13, x3                                 // superblocks to go
super_block:
        mov x14, x11                                // column 4c + i, row block r of C into ZA vector i + r*dim
        mov w12, #0
        mov x17, x14
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        add x14, x14, x6                            // the next column of C
        mov w12, #1
        mov x17, x14
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        add x14, x14, x6                            // the next column of C
        mov w12, #2
        mov x17, x14
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        add x14, x14, x6                            // the next column of C
        mov w12, #3
        mov x17, x14
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        ldr za[w12, 0], [x17]
        mov x15, x1                                 // B cursor: this column quad's k groups
        mov x16, x5                                 // k groups to go
k_group:
        ld1b {z4.b}, p0/z, [x15]                    // four columns' four k, in every 128-bit segment
        ld1b {z0.b}, p0/z, [x10, #0, mul vl]        // row block 0: lane e = row e's four k
        ld1b {z1.b}, p0/z, [x10, #1, mul vl]        // row block 1: lane e = row e's four k
        ld1b {z2.b}, p0/z, [x10, #2, mul vl]        // row block 2: lane e = row e's four k
        ld1b {z3.b}, p0/z, [x10, #3, mul vl]        // row block 3: lane e = row e's four k
        udot za.s[w8, 0, vgx4], {z0.b-z3.b}, z4.b[0]// ZA vector 0 + r*dim, lane e += row e of block r . column 4c + 0
        udot za.s[w8, 1, vgx4], {z0.b-z3.b}, z4.b[1]// ZA vector 1 + r*dim, lane e += row e of block r . column 4c + 1
        udot za.s[w8, 2, vgx4], {z0.b-z3.b}, z4.b[2]// ZA vector 2 + r*dim, lane e += row e of block r . column 4c + 2
        udot za.s[w8, 3, vgx4], {z0.b-z3.b}, z4.b[3]// ZA vector 3 + r*dim, lane e += row e of block r . column 4c + 3
        addvl x15, x15, #1
        addvl x10, x10, #4                          // the next k group's four panels
        subs x16, x16, #1
        b.ne k_group
        mov x14, x11                                // ZA vector i + r*dim back to column 4c + i, row block r
        mov w12, #0
        mov x17, x14
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        add x14, x14, x6                            // the next column of C
        mov w12, #1
        mov x17, x14
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        add x14, x14, x6                            // the next column of C
        mov w12, #2
        mov x17, x14
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        add x14, x14, x6                            // the next column of C
        mov w12, #3
        mov x17, x14
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        add w12, w12, w7                            // the vector group's next vector
        addvl x17, x17, #1                          // the next row block
        str za[w12, 0], [x17]
        addvl x11, x11, #4                          // C^T cursor: 4 dim rows of C on
        subs x13, x13, #1
        b.ne super_block
        mov x1, x15                                 // the next column quad's B follows this one's
        add x2, x2, x6, lsl #2                      // C^T: four columns of C on
        subs x4, x4, #1
        b.ne col_quad
        smstop
        ret
