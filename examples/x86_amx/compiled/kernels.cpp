// The seed article's AMX kernels as C++ with the _tile_* intrinsics, and their BF16 variants, for
// `isasim run kernels.o --function NAME --init NAME.init.json` (see README.md beside this file).
//
//   g++ -c -O2 -mamx-tile -mamx-int8 -mamx-bf16 kernels.cpp -o kernels.o
//
// Each tile is 16 rows of 64 bytes.  int8: C (16 x 16 int32) += A (16 x 64 uint8) x B, B packed four
// K values per column (16 x 64 int8).  bf16: C (16 x 16 fp32) += A (16 x 32 bf16) x B, B packed two
// K values per column (16 x 32 pairs).  All but bf16_block are extern "C"; bf16_block keeps C++
// linkage, so its symbol is the mangled _Z10bf16_blockPKtS0_Pf.
#include <immintrin.h>
#include <cstdint>

// The 64-byte operand of LDTILECFG (palette 1).
struct TileConfig {
    std::uint8_t palette_id;
    std::uint8_t start_row;
    std::uint8_t reserved[14];
    std::uint16_t colsb[16];
    std::uint8_t rows[16];
};

#define AMX_KERNEL __attribute__((target("amx-tile,amx-int8,amx-bf16"), noinline))

// Tiles 0 .. count-1 as 16 rows of 64 bytes (inlined at every -O level: no call to run).
static inline __attribute__((always_inline)) void full_tiles(TileConfig& config, int count) {
    config.palette_id = 1;
    for (int t = 0; t < count; ++t) {
        config.rows[t] = 16;
        config.colsb[t] = 64;
    }
}

// ---- int8 (TDPBUSD: uint8 A, int8 B, int32 C) ----------------------------------------------------

// One 16 x 16 block, K = 64.
extern "C" AMX_KERNEL void amx_block(const std::uint8_t* a, const std::int8_t* packed_b, std::int32_t* c) {
    TileConfig config{};
    full_tiles(config, 3);
    _tile_loadconfig(&config);
    _tile_zero(0);
    _tile_loadd(1, a, 64);
    _tile_loadd(2, packed_b, 64);
    _tile_dpbusd(0, 1, 2);
    _tile_stored(0, c, 64);
    _tile_release();
}

// The same block with the tile configuration given by the caller (no stack frame to build).
extern "C" AMX_KERNEL void amx_block_configured(const TileConfig* config, const std::uint8_t* a,
                                                const std::int8_t* packed_b, std::int32_t* c) {
    _tile_loadconfig(config);
    _tile_zero(0);
    _tile_loadd(1, a, 64);
    _tile_loadd(2, packed_b, 64);
    _tile_dpbusd(0, 1, 2);
    _tile_stored(0, c, 64);
    _tile_release();
}

// count blocks of A (16 x 64 each, one after another) times one packed B: count C blocks.
extern "C" AMX_KERNEL void amx_batch(const std::uint8_t* a, const std::int8_t* packed_b, std::int32_t* c,
                                     int count) {
    TileConfig config{};
    full_tiles(config, 3);
    _tile_loadconfig(&config);
    _tile_loadd(2, packed_b, 64);
    for (int i = 0; i < count; ++i) {
        _tile_zero(0);
        _tile_loadd(1, a + i * 1024, 64);
        _tile_dpbusd(0, 1, 2);
        _tile_stored(0, c + i * 256, 64);
    }
    _tile_release();
}

// count 32 x 32 blocks of C (row stride 32 int32), K = 64 * steps: A packed per block as
// [steps][2 row halves][16][64], B as [steps][2 column halves][16][64]; four accumulators.
extern "C" AMX_KERNEL void amx_gemm32_batch(const std::uint8_t* a, const std::int8_t* b, std::int32_t* c,
                                            int steps, int count) {
    TileConfig config{};
    full_tiles(config, 8);
    _tile_loadconfig(&config);
    for (int block = 0; block < count; ++block) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        _tile_stream_loadd(4, a, 64);
        _tile_stream_loadd(5, a + 1024, 64);
        _tile_loadd(6, b, 64);
        _tile_loadd(7, b + 1024, 64);
        for (int s = 1; s < steps; ++s) {  // the next step's loads between this step's products
            _tile_dpbusd(0, 4, 6);
            _tile_dpbusd(1, 4, 7);
            _tile_stream_loadd(4, a + s * 2048, 64);
            _tile_dpbusd(2, 5, 6);
            _tile_loadd(6, b + s * 2048, 64);
            _tile_dpbusd(3, 5, 7);
            _tile_stream_loadd(5, a + s * 2048 + 1024, 64);
            _tile_loadd(7, b + s * 2048 + 1024, 64);
        }
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        _tile_dpbusd(2, 5, 6);
        _tile_dpbusd(3, 5, 7);
        _tile_stored(0, c, 128);
        _tile_stored(1, c + 16, 128);
        _tile_stored(2, c + 512, 128);
        _tile_stored(3, c + 528, 128);
        a += steps * 2048;
        c += 1024;
    }
    _tile_release();
}

// ---- bf16 (TDPBF16PS: bf16 A and B as their 16-bit patterns, fp32 C) --------------------------------

// One 16 x 16 block, K = 32; C++ linkage (a mangled symbol).
AMX_KERNEL void bf16_block(const std::uint16_t* a, const std::uint16_t* packed_b, float* c) {
    TileConfig config{};
    full_tiles(config, 3);
    _tile_loadconfig(&config);
    _tile_zero(0);
    _tile_loadd(1, a, 64);
    _tile_loadd(2, packed_b, 64);
    _tile_dpbf16ps(0, 1, 2);
    _tile_stored(0, c, 64);
    _tile_release();
}

extern "C" AMX_KERNEL void amx_bf16_batch(const std::uint16_t* a, const std::uint16_t* packed_b, float* c,
                                          int count) {
    TileConfig config{};
    full_tiles(config, 3);
    _tile_loadconfig(&config);
    _tile_loadd(2, packed_b, 64);
    for (int i = 0; i < count; ++i) {
        _tile_zero(0);
        _tile_loadd(1, a + i * 512, 64);
        _tile_dpbf16ps(0, 1, 2);
        _tile_stored(0, c + i * 256, 64);
    }
    _tile_release();
}

// As amx_gemm32_batch with K = 32 * steps; a step's tiles are 1024 bytes = 512 bf16.
extern "C" AMX_KERNEL void amx_bf16_gemm32_batch(const std::uint16_t* a, const std::uint16_t* b, float* c,
                                                 int steps, int count) {
    TileConfig config{};
    full_tiles(config, 8);
    _tile_loadconfig(&config);
    for (int block = 0; block < count; ++block) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        _tile_stream_loadd(4, a, 64);
        _tile_stream_loadd(5, a + 512, 64);
        _tile_loadd(6, b, 64);
        _tile_loadd(7, b + 512, 64);
        for (int s = 1; s < steps; ++s) {
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_stream_loadd(4, a + s * 1024, 64);
            _tile_dpbf16ps(2, 5, 6);
            _tile_loadd(6, b + s * 1024, 64);
            _tile_dpbf16ps(3, 5, 7);
            _tile_stream_loadd(5, a + s * 1024 + 512, 64);
            _tile_loadd(7, b + s * 1024 + 512, 64);
        }
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
        _tile_stored(0, c, 128);
        _tile_stored(1, c + 16, 128);
        _tile_stored(2, c + 512, 128);
        _tile_stored(3, c + 528, 128);
        a += steps * 1024;
        c += 1024;
    }
    _tile_release();
}

// Calls another function (not inlined): isasim runs both (CALL and RET on the simulated stack).
extern "C" AMX_KERNEL void amx_block_twice(const std::uint8_t* a, const std::int8_t* packed_b, std::int32_t* c) {
    amx_block(a, packed_b, c);
    amx_block(a, packed_b, c + 256);
}
