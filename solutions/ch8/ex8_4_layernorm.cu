// Exercise 8.4 - reference answer: one warp per row, its sums combined
// with butterfly shuffles.
#include "cuda_rt.h"

extern "C" {
#include "ch8_exercises.h"
}

#define LN_WARPS 4   // rows per block (a block of 4 * 32 threads)
#define LN_EPS 1e-5f

// The sum of v over the warp's 32 lanes, in every lane: after the step
// with offset o each lane holds the sum of its group of 2o lanes.
__device__ static float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Warp w of block b normalises row b * LN_WARPS + w; a warp past the last
// row leaves as a whole, so the shuffles of the others are unaffected.
__global__ static void layernorm_kernel(float *out, float *mean, float *rstd,
                                        const float *inp,
                                        const float *weight,
                                        const float *bias, int N, int C) {
    int lane = threadIdx.x % 32;
    int row = blockIdx.x * LN_WARPS + threadIdx.x / 32;
    if (row >= N) return;
    const float *x = inp + (size_t)row * C;
    float *y = out + (size_t)row * C;
    float s = 0.0f;
    for (int i = lane; i < C; i += 32) s += x[i];
    float m = warp_sum(s) / C;
    float v = 0.0f;   // the second pass: no cancellation
    for (int i = lane; i < C; i += 32) v += (x[i] - m) * (x[i] - m);
    float r = 1.0f / sqrtf(warp_sum(v) / C + LN_EPS);
    for (int i = lane; i < C; i += 32)
        y[i] = (x[i] - m) * r * weight[i] + (bias ? bias[i] : 0.0f);
    if (lane == 0) mean[row] = m, rstd[row] = r;
}

void ex_layernorm_forward_cuda(float *out, float *mean, float *rstd,
                               const float *inp, const float *weight,
                               const float *bias, int N, int C) {
    if (N == 0) return;
    LAUNCH(layernorm_kernel, ceil_div((size_t)N, LN_WARPS), LN_WARPS * 32,
           0, out, mean, rstd, inp, weight, bias, N, C);
}
