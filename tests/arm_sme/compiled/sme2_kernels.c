/* SME2 kernels written with the ACLE intrinsics of arm_sme.h, as a kernel author writes them, for isasim's
 * tests of compiled code (tests/arm_sme/compiled/test_compiled_kernels.py).  Every function takes its sizes
 * from its arguments; the test computes each result again in int64 and compares.
 *
 *   udot_groups    UDOT ZA.S[w, 0, VGx4] over blocks of four vectors, the group read back with the
 *                  multi-vector MOVA and stored with ST1W of four vectors
 *   row_sums       a GEMV: per row, UDOT VGx4 into ZA, MOVA of the group back, UADDV to one number
 *   umopa_tile     UMOPA outer products into ZA0.S, the tile stored slice by slice (ST1W ZA0H.S)
 *   tile_then_call a streaming kernel with ZA live that calls a helper which wants ZA for itself, so the SME
 *                  ABI's lazy save commits ZA to the caller's buffer and the caller loads it back
 */
#include <arm_sme.h>
#include <stdint.h>

/* out[g][lane] (g = 0..3, SVL/32 lanes each) = sum over blocks of the 4-byte dot products of a's and b's
 * g-th vector of the block (a block is four vectors of SVL/8 bytes). */
void udot_groups(const uint8_t *a, const uint8_t *b, uint32_t *out, uint64_t blocks)
    __arm_streaming __arm_inout("za") {
    svcount_t all = svptrue_c8();
    uint64_t block_bytes = 4 * svcntb();
    svzero_za();
    for (uint64_t n = 0; n < blocks; n++) {
        svuint8x4_t va = svld1_u8_x4(all, a + n * block_bytes);
        svuint8x4_t vb = svld1_u8_x4(all, b + n * block_bytes);
        svdot_za32_u8_vg1x4(0, va, vb);
    }
    svuint32x4_t sums = svread_za32_u32_vg1x4(0);
    svst1_u32_x4(svptrue_c32(), out, sums);
}

/* out[r] = sum of a[r * n + k] * x[k] for k < n (n a multiple of 4 * SVL/8 bytes). */
void row_sums(const uint8_t *a, const uint8_t *x, uint64_t *out, uint64_t rows, uint64_t n)
    __arm_streaming __arm_inout("za") {
    svcount_t all = svptrue_c8();
    uint64_t block_bytes = 4 * svcntb();
    for (uint64_t r = 0; r < rows; r++) {
        svzero_za();
        for (uint64_t k = 0; k < n; k += block_bytes)
            svdot_za32_u8_vg1x4(0, svld1_u8_x4(all, a + r * n + k), svld1_u8_x4(all, x + k));
        svuint32x4_t part = svread_za32_u32_vg1x4(0);
        svuint32_t both = svadd_u32_x(svptrue_b32(), svget4_u32(part, 0), svget4_u32(part, 1));
        svuint32_t rest = svadd_u32_x(svptrue_b32(), svget4_u32(part, 2), svget4_u32(part, 3));
        out[r] = svaddv_u32(svptrue_b32(), svadd_u32_x(svptrue_b32(), both, rest));
    }
}

/* c[i][j] (an SVL/32 x SVL/32 tile) = sum over t < k4 and q < 4 of a[t * SVL/8 + 4i + q] * b[t * SVL/8 + 4j + q]. */
void umopa_tile(const uint8_t *a, const uint8_t *b, uint32_t *c, uint64_t k4) __arm_streaming __arm_inout("za") {
    svbool_t all = svptrue_b8();
    svzero_za();
    for (uint64_t t = 0; t < k4; t++)
        svmopa_za32_u8_m(0, all, all, svld1_u8(all, a + t * svcntb()), svld1_u8(all, b + t * svcntb()));
    for (uint64_t i = 0; i < svcntw(); i++)
        svst1_hor_za32(0, i, svptrue_b32(), c + i * svcntw());
}

/* The signed twin of umopa_tile: int8 inputs, SMOPA, int32 sums. */
void smopa_tile(const int8_t *a, const int8_t *b, int32_t *c, uint64_t k4) __arm_streaming __arm_inout("za") {
    svbool_t all = svptrue_b8();
    svzero_za();
    for (uint64_t t = 0; t < k4; t++)
        svmopa_za32_s8_m(0, all, all, svld1_s8(all, a + t * svcntb()), svld1_s8(all, b + t * svcntb()));
    for (uint64_t i = 0; i < svcntw(); i++)
        svst1_hor_za32(0, i, svptrue_b32(), c + i * svcntw());
}

/* A helper that takes ZA for itself: its caller's ZA must be saved first (the lazy save).  Through ZA, it
 * writes into w[j] (SVL/32 lanes) twice the 4-byte dot product of v[0..3] and u[4j..4j+3]. */
__arm_new("za") __arm_locally_streaming __attribute__((noinline)) void doubled_through_za(const uint8_t *v,
                                                                                           const uint8_t *u,
                                                                                           uint32_t *w) {
    svbool_t all = svptrue_b8();
    svmopa_za32_u8_m(0, all, all, svld1_u8(all, v), svld1_u8(all, u));
    svmopa_za32_u8_m(0, all, all, svld1_u8(all, v), svld1_u8(all, u));
    svst1_hor_za32(0, 0, svptrue_b32(), w);
}

/* The UMOPA tile of umopa_tile with a call of the helper in the middle of the sums: ZA is live across the
 * call.  c gets the tile, w the helper's row. */
void tile_then_call(const uint8_t *a, const uint8_t *b, uint32_t *c, uint64_t k4, uint32_t *w)
    __arm_streaming __arm_inout("za") {
    svbool_t all = svptrue_b8();
    svzero_za();
    for (uint64_t t = 0; t < k4; t++) {
        svmopa_za32_u8_m(0, all, all, svld1_u8(all, a + t * svcntb()), svld1_u8(all, b + t * svcntb()));
        if (t == 0)
            doubled_through_za(a, b, w);
    }
    for (uint64_t i = 0; i < svcntw(); i++)
        svst1_hor_za32(0, i, svptrue_b32(), c + i * svcntw());
}

/* An ordinary function: it knows nothing of ZA. */
__attribute__((noinline)) uint64_t plain_sum(const uint8_t *v, uint64_t n) {
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; i++)
        sum += v[i];
    return sum;
}

/* A function that keeps whatever ZA state its caller has (__arm_agnostic): around its call of plain_sum
 * clang puts __arm_sme_state_size, __arm_sme_save and __arm_sme_restore, so ZA comes back as it was. */
uint64_t keeps_za(const uint8_t *v, uint64_t n) __arm_agnostic("sme_za_state") {
    return plain_sum(v, n) + 1;
}
