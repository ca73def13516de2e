/* Two SME2 kernels as a kernel author writes them with the ACLE intrinsics (arm_sme.h), to run from their
 * object file with isasim (examples/arm_sme/README.md):
 *
 *   zig cc -target aarch64-linux-gnu -mcpu=generic+sme2 -fno-sanitize=all -O0 -c tile_kernels.c -o /tmp/tiles.o
 *   isasim run /tmp/tiles.o --function umopa_tile --init examples/arm_sme/compiled/umopa_tile.init.json
 *
 * umopa_tile: C (an SVL/32 x SVL/32 tile of uint32) = the sum over k4 steps of the outer products of a's and
 * b's uint8 vectors taken four bytes at a time (UMOPA into ZA0.S), the tile stored slice by slice (ST1W).
 * sum_rows: the same tile, then each row summed into sums[i] with UADDV after a MOVA of the slice.
 */
#include <arm_sme.h>
#include <stdint.h>

void umopa_tile(const uint8_t *a, const uint8_t *b, uint32_t *c, uint64_t k4) __arm_streaming __arm_inout("za") {
    svbool_t all = svptrue_b8();
    svzero_za();
    for (uint64_t t = 0; t < k4; t++)
        svmopa_za32_u8_m(0, all, all, svld1_u8(all, a + t * svcntb()), svld1_u8(all, b + t * svcntb()));
    for (uint64_t i = 0; i < svcntw(); i++)
        svst1_hor_za32(0, i, svptrue_b32(), c + i * svcntw());
}

void sum_rows(const uint8_t *a, const uint8_t *b, uint64_t *sums, uint64_t k4) __arm_streaming __arm_inout("za") {
    svbool_t all = svptrue_b8();
    svzero_za();
    for (uint64_t t = 0; t < k4; t++)
        svmopa_za32_u8_m(0, all, all, svld1_u8(all, a + t * svcntb()), svld1_u8(all, b + t * svcntb()));
    for (uint64_t i = 0; i < svcntw(); i++)
        sums[i] = svaddv_u32(svptrue_b32(), svread_hor_za32_u32_m(svdup_u32(0), svptrue_b32(), 0, i));
}
