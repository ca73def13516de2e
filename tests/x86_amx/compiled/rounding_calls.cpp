// Quantisation code around AMX kernels that calls the C library's rounding functions (isasim built-ins):
// each float of a row scaled, rounded, clamped to int8; and a row of integral floats made three ways.
#include <math.h>
#include <stdint.h>

extern "C" {

__attribute__((noinline)) void quantize_row(const float *x, int8_t *q, int n, float inverse_scale) {
    for (int i = 0; i < n; ++i) {
        long v = lrintf(x[i] * inverse_scale);
        q[i] = (int8_t)(v < -128 ? -128 : v > 127 ? 127 : v);
    }
}

__attribute__((noinline)) void integral_rows(const float *x, float *nearest, float *away, float *down, int n) {
    for (int i = 0; i < n; ++i) {
        nearest[i] = nearbyintf(x[i]);
        away[i] = roundf(x[i]);
        down[i] = floorf(x[i] * 0.75f);
    }
}

__attribute__((noinline)) long long count_rounded(const float *x, int n) {
    long long sum = 0;
    for (int i = 0; i < n; ++i)
        sum += llroundf(x[i]) + lrintf(x[i] * 3.0f);
    return sum;
}

}  // extern "C"
