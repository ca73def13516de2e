// Kernels that call: a helper function of their own, memset and memcpy of the C library, a switch g++ and
// clang turn into a jump table, a function pointer.  tests/x86_amx/test_compiled_calls.py compiles them with
// g++ and with zig's clang, with and without -fstack-protector-strong, runs them on isasim from the object
// file and compares each result with a product computed in Python (INT64).
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" {

// The 64-byte tile configuration (palette 1) as the SDM lays it out.
struct TileConfig {
    uint8_t palette;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

// A helper the kernel calls: zero the configuration, give tiles 0-2 their shape, load it.
__attribute__((noinline)) void configure_three_tiles(TileConfig *config, int rows, int colsb) {
    memset(config, 0, sizeof *config);
    config->palette = 1;
    for (int t = 0; t < 3; ++t) {
        config->rows[t] = (uint8_t)rows;
        config->colsb[t] = (uint16_t)colsb;
    }
    _tile_loadconfig(config);
}

// C (16 x 16 int32, rows 64 bytes apart) := A (16 x K int8, rows K bytes apart) times B (K x 16 int8, packed
// four rows to a 64-byte row as TDPBSSD reads it), K a multiple of 64; the configuration lives on the stack.
void amx_block_with_helper(const int8_t *A, const int8_t *B, int32_t *C, int K) {
    TileConfig config;
    configure_three_tiles(&config, 16, 64);
    _tile_zero(0);
    for (int k = 0; k < K; k += 64) {
        _tile_loadd(1, A + k, K);
        _tile_loadd(2, B + (size_t)k * 16, 64);
        _tile_dpbssd(0, 1, 2);
    }
    _tile_stored(0, C, 64);
    _tile_release();
}

// The dot product of two int8 rows, widened to 64 bits: the helper of row_dots.
__attribute__((noinline)) int64_t dot_i8(const int8_t *a, const int8_t *b, int n) {
    int64_t sum = 0;
    for (int i = 0; i < n; ++i)
        sum += (int64_t)a[i] * b[i];
    return sum;
}

// out[r] := the dot product of row r of A (rows x n) with b, through a local array that memset clears and
// memcpy copies out (a local array: -fstack-protector-strong guards this frame); returns their sum.
int64_t row_dots(const int8_t *A, const int8_t *b, int64_t *out, int rows, int n) {
    int64_t partial[32];
    memset(partial, 0, sizeof(int64_t) * (size_t)rows);
    for (int r = 0; r < rows; ++r)
        partial[r] += dot_i8(A + (size_t)r * n, b, n);
    memcpy(out, partial, sizeof(int64_t) * (size_t)rows);
    int64_t total = 0;
    for (int r = 0; r < rows; ++r)
        total += partial[r];
    return total;
}

// What a step of an epilogue does to one accumulator, chosen by a switch (a jump table at -O2).
__attribute__((noinline)) int64_t epilogue(int op, int64_t x, int64_t y) {
    switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return x * 3 + y;
    case 4: return y - 2 * x;
    case 5: return x + 100;
    case 6: return x - 7;
    default: return x;
    }
}

// The dot product of a with b read backwards: the other combiner.
__attribute__((noinline)) int64_t dot_i8_reversed(const int8_t *a, const int8_t *b, int n) {
    int64_t sum = 0;
    for (int i = 0; i < n; ++i)
        sum += (int64_t)a[i] * b[n - 1 - i];
    return sum;
}

typedef int64_t (*Combine)(const int8_t *, const int8_t *, int);
static Combine const combiners[2] = {dot_i8, dot_i8_reversed};

// Combiner `which` (0 or 1), called through a pointer from a table (CALL r/m64), then each op of the
// epilogue in turn.
int64_t apply_epilogues(const int8_t *a, const int8_t *b, int n, const int8_t *ops, int count, int which) {
    Combine volatile how = combiners[which];
    int64_t x = how(a, b, n);
    for (int i = 0; i < count; ++i)
        x = epilogue(ops[i], x, i + 1);
    return x;
}

// Writes one element past the end of a local array when `past` is not 0: -fstack-protector-strong's canary
// catches it on the way out.
__attribute__((noinline)) int64_t clobber(int64_t value, int past) {
    volatile int64_t local[4] = {1, 2, 3, 4};
    local[3 + past] = value;  // past = 1 writes where the canary sits (above the array)
    return local[0] + local[1] + local[2] + local[3];
}

// Eight arguments: the last two arrive on the stack, above the return address (System V passes six in registers).
__attribute__((noinline)) int64_t strided_dot(const int8_t *a, const int8_t *b, int rows, int cols, int lda, int ldb,
                                              int64_t bias, int64_t scale) {
    int64_t sum = bias;
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            sum += scale * a[r * lda + c] * b[r * ldb + c];
    return sum;
}

// A block of accumulators copied and cleared by value: what compilers inline as rep movs / rep stos where they
// choose to (g++ -mstringop-strategy=rep_8byte) or call memcpy / memset for.
struct Accumulators { int32_t v[48]; };

__attribute__((noinline)) int64_t copy_and_clear(Accumulators *dst, const Accumulators *src, Accumulators *cleared) {
    *dst = *src;
    *cleared = Accumulators{};
    int64_t sum = 0;
    for (int i = 0; i < 48; ++i)
        sum += dst->v[i] - cleared->v[i];
    return sum;
}

}  // extern "C"
