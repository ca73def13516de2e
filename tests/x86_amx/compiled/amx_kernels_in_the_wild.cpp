// AMX kernels written the way application code writes them, for tests/x86_amx/test_compiled_kernels.py.
//
// Unlike examples/x86_amx/compiled/kernels.cpp (the seed article's kernels), these take their sizes from
// their arguments and keep their tile configuration in an aligned struct on the stack, filled by a helper
// function that is not inlined and that clears the struct with memset; the int8 kernel runs its K loop in
// tiles of 64 and finishes the remainder in scalar C; the bf16 kernel converts float32 inputs to bfloat16
// with AVX-512 BF16 before the tiles.  Every local aggregate makes -fstack-protector-strong guard the frame.

#include <immintrin.h>
#include <stdint.h>
#include <string.h>

struct alignas(64) TileConfig {
    uint8_t palette_id;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

// C (tile 0): m rows of n dwords; A (tile 1): m rows of one 64-byte K step; B (tile 2): 16 rows of n dwords,
// the VNNI layout in which each dword holds K-consecutive elements of one column.
__attribute__((noinline)) static void configure_tiles(TileConfig *config, int m, int n, int a_row_bytes) {
    memset(config, 0, sizeof *config);
    config->palette_id = 1;
    config->rows[0] = (uint8_t)m;
    config->colsb[0] = (uint16_t)(n * 4);
    config->rows[1] = (uint8_t)m;
    config->colsb[1] = (uint16_t)a_row_bytes;
    config->rows[2] = 16;
    config->colsb[2] = (uint16_t)(n * 4);
    _tile_loadconfig(config);
}

// C[m x n] += A[m x k] * B[k x n] in int8 -> int32, m, n <= 16.  A is row-major, k bytes a row;
// b_vnni holds B as k/4 rows of n dwords (B[4r + j][col] is byte 4 * col + j of row r), padded with zero
// rows to a multiple of 4; C is row-major, n elements a row.
extern "C" void gemm_s8s8_k_tail(const int8_t *a, const int8_t *b_vnni, int32_t *c, int m, int n, int k) {
    const int lda = k, ldc = n;
    TileConfig config;
    configure_tiles(&config, m, n, 64);
    const int k_tiled = k & ~63;
    _tile_loadd(0, c, ldc * 4);
    for (int step = 0; step < k_tiled; step += 64) {
        _tile_loadd(1, a + step, lda);
        _tile_loadd(2, b_vnni + (step / 4) * n * 4, n * 4);
        _tile_dpbssd(0, 1, 2);
    }
    _tile_stored(0, c, ldc * 4);
    _tile_release();
    for (int row = 0; row < m; ++row) {
        for (int col = 0; col < n; ++col) {
            int32_t sum = 0;
            for (int i = k_tiled; i < k; ++i) {
                sum += a[row * lda + i] * b_vnni[(i / 4) * n * 4 + col * 4 + i % 4];
            }
            c[row * ldc + col] += sum;
        }
    }
}

// The same product in uint8 x int8 over whole 64-byte steps only (k a multiple of 64), accumulating
// from zero: C = A * B.
extern "C" void gemm_u8s8(const uint8_t *a, const int8_t *b_vnni, int32_t *c, int m, int n, int k) {
    TileConfig config;
    configure_tiles(&config, m, n, 64);
    _tile_zero(0);
    for (int step = 0; step < k; step += 64) {
        _tile_loadd(1, a + step, k);
        _tile_loadd(2, b_vnni + (step / 4) * n * 4, n * 4);
        _tile_dpbusd(0, 1, 2);
    }
    _tile_stored(0, c, n * 4);
    _tile_release();
}

// C[m x n] += bf16(A)[m x 32] * bf16(B)[32 x n] in float32, m, n <= 16, A and B row-major float32: each
// input is rounded to bfloat16 (VCVTNE2PS2BF16 for A's rows, VCVTNEPS2BF16 for B's) before the tiles.
extern "C" void gemm_bf16_from_f32(const float *a, const float *b, float *c, int m, int n) {
    alignas(64) uint16_t a_bf16[16 * 32];
    alignas(64) uint16_t b_pairs[16 * 32];
    for (int row = 0; row < m; ++row) {
        __m512 low = _mm512_loadu_ps(a + row * 32);
        __m512 high = _mm512_loadu_ps(a + row * 32 + 16);
        __m512bh both = _mm512_cvtne2ps_pbh(high, low);
        _mm512_store_si512((__m512i *)(a_bf16 + row * 32), (__m512i)both);
    }
    alignas(64) uint16_t b_row[32][16];
    for (int i = 0; i < 32; ++i) {
        __m512 values = _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), b + i * n);
        __m256bh rounded = _mm512_cvtneps_pbh(values);
        _mm256_store_si256((__m256i *)b_row[i], (__m256i)rounded);
    }
    for (int pair = 0; pair < 16; ++pair) {  // the VNNI layout: the two K-consecutive values of a column together
        for (int col = 0; col < n; ++col) {
            b_pairs[pair * 2 * n + 2 * col] = b_row[2 * pair][col];
            b_pairs[pair * 2 * n + 2 * col + 1] = b_row[2 * pair + 1][col];
        }
    }
    TileConfig config;
    configure_tiles(&config, m, n, 64);
    _tile_loadd(0, c, n * 4);
    _tile_loadd(1, a_bf16, 64);
    _tile_loadd(2, b_pairs, n * 4);
    _tile_dpbf16ps(0, 1, 2);
    _tile_stored(0, c, n * 4);
    _tile_release();
}
