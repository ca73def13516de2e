// Float code that surrounds AMX kernels, in the project's own words (issue 27): what a tile store is followed by
// (int32 accumulators to float with a scale and a per-column bias), how a quantisation scale is found (the
// largest magnitude of a row), and how a row is requantised to int8 (round half away from zero, clamp).
// Compiled by tests/x86_amx/test_compiled_float_code.py at several levels and targets; no library calls.

#include <stdint.h>

extern "C" {

__attribute__((noinline)) void accumulators_to_float(const int32_t* acc, const float* bias, float* out, int rows,
                                                     int cols, float scale) {
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c)
            out[r * cols + c] = (float)acc[r * cols + c] * scale + bias[c];
}

__attribute__((noinline)) float largest_magnitude_scale(const float* row, int n) {
    float largest = 0.0f;
    for (int i = 0; i < n; ++i) {
        float v = row[i] < 0.0f ? -row[i] : row[i];
        largest = v > largest ? v : largest;
    }
    return largest == 0.0f ? 1.0f : largest / 127.0f;
}

__attribute__((noinline)) void requantize_row(const int32_t* acc, int8_t* out, int n, float scale) {
    for (int i = 0; i < n; ++i) {
        float v = (float)acc[i] * scale;
        v = v < -128.0f ? -128.0f : v > 127.0f ? 127.0f : v;
        out[i] = (int8_t)(int)(v + (v < 0.0f ? -0.5f : 0.5f));
    }
}

}
