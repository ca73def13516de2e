// An SME int8 matrix multiply, C = A x B, the way an SME kernel computes it: one SMOPA per four k
// (each 32-bit element of tile ZA0.S gains the 4-way dot product of four int8 of A's row with four
// int8 of B's column), then the tile stored row by row.  At SVL 512 the tile is 16 x 16 int32.
// A and B come packed in panels of SVL/8 bytes: panel p holds, for each row i of A (column j of B),
// the four elements k = 4p .. 4p+3.  x0 = A's panels, x1 = B's panels, x2 = C, x3 = K / 4.
        smstart                                     // streaming mode and ZA on: Z, P and ZA start at zero
        ptrue p0.b
        zero {za}
next_k:
        ld1b {z0.b}, p0/z, [x0]                     // four k of every row of A
        ld1b {z1.b}, p0/z, [x1]                     // the same four k of every column of B
        smopa za0.s, p0/m, p0/m, z0.b, z1.b         // ZA0.S[i][j] += sum of A[i][k] * B[k][j] over the four k
        addvl x0, x0, #1
        addvl x1, x1, #1
        subs x3, x3, #1
        b.ne next_k
        cntw x4                                     // rows of the tile: SVL / 32
        mov w12, #0
next_row:
        st1w {za0h.s[w12, 0]}, p0, [x2]             // row w12 of the tile to C
        addvl x2, x2, #1
        add w12, w12, #1
        cmp x12, x4
        b.lo next_row
        smstop
        ret
