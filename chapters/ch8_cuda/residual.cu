// residual.cu - chapter 4's residual connection on the GPU, and the add
// half of its sub-layer wrapper, out = x + dropout(out), in one pass.
//
// How the wrapper differs from the CPU's sublayer_add, which takes a
// Sublayer* and an Rng*: the GPU functions take the mask itself, and the
// dropout's (seed, offset) instead of a generator (the GPU's dropout is
// counter-based: see dropout.cuh), so
//
//   sublayer_add_cuda(out, mask, x, p, seed, offset, n)
//   sublayer_add_backward_cuda(dx, dy, dout, mask, n)
//
// With p = 0 the forward pass writes no mask and the backward pass takes
// mask = NULL for "all ones", so a model without dropout keeps no mask.
// The CPU runs dropout and then the residual add, two passes over n
// floats; here one kernel does both, reading out and x once.
#include "cuda_rt.h"

#ifdef __CUDACC__
#include <cuda_bf16.h>
#endif

extern "C" {
#include "dropout.cuh"
#include "layernorm.h"   // LAYERNORM_EPS
#include "residual.cuh"
}

typedef __nv_bfloat16 bf16;

#define RESIDUAL_THREADS 256   // threads per block

//> residual-cuda
// out = a + b, one thread per element.
__global__ void residual_forward_kernel(float *out, const float *a,
                                        const float *b, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

// Both branches get the gradient unchanged: da += dout, db += dout.
__global__ void residual_backward_kernel(float *da, float *db,
                                         const float *dout, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float g = dout[i];
    da[i] += g;
    db[i] += g;
}

// out = x + dropout(out), element i's draw being dropout_uniform(seed,
// offset + i), exactly as dropout_forward_cuda would draw it. With
// p = 0 (mask NULL) it is the plain residual add.
__global__ void sublayer_add_kernel(float *out, float *mask, const float *x,
                                    float p, float scale, uint64_t seed,
                                    uint64_t offset, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float y = out[i];
    if (mask) {
        float m = dropout_uniform(seed, offset + i) < p ? 0.0f : scale;
        mask[i] = m;
        y *= m;
    }
    out[i] = x[i] + y;
}

// out = x + y * mask: dx += dout (the skip), dy += dout * mask; or =
// instead of += where add_dx or add_dy is false (block.cu's set form).
__global__ void sublayer_add_backward_kernel(float *dx, float *dy,
                                             const float *dout,
                                             const float *mask, bool add_dx,
                                             bool add_dy, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float g = dout[i], gy = mask ? g * mask[i] : g;
    dx[i] = add_dx ? dx[i] + g : g;
    dy[i] = add_dy ? dy[i] + gy : gy;
}
//< residual-cuda

void residual_forward_cuda(float *out, const float *a, const float *b,
                           size_t n) {
    if (n == 0) return;
    LAUNCH(residual_forward_kernel, ceil_div(n, RESIDUAL_THREADS),
           RESIDUAL_THREADS, 0, out, a, b, n);
}

void residual_backward_cuda(float *da, float *db, const float *dout,
                            size_t n) {
    if (n == 0) return;
    LAUNCH(residual_backward_kernel, ceil_div(n, RESIDUAL_THREADS),
           RESIDUAL_THREADS, 0, da, db, dout, n);
}

void sublayer_add_cuda(float *out, float *mask, const float *x, float p,
                       uint64_t seed, uint64_t offset, size_t n) {
    if (!(p >= 0.0f && p < 1.0f))   // also catches NaN
        cuda_fail("sublayer_add_cuda", "p must be in [0, 1)", __FILE__,
                  __LINE__);
    if (p > 0.0f && !mask)
        cuda_fail("sublayer_add_cuda", "p > 0 needs a mask to write",
                  __FILE__, __LINE__);
    if (n == 0) return;
    // The kernel tells p = 0 by a NULL mask: then it is never touched.
    LAUNCH(sublayer_add_kernel, ceil_div(n, RESIDUAL_THREADS),
           RESIDUAL_THREADS, 0, out, p > 0.0f ? mask : (float *)NULL, x, p,
           1.0f / (1.0f - p), seed, offset, n);
}

void sublayer_add_backward_cuda(float *dx, float *dy, const float *dout,
                                const float *mask, size_t n) {
    if (n == 0) return;
    LAUNCH(sublayer_add_backward_kernel, ceil_div(n, RESIDUAL_THREADS),
           RESIDUAL_THREADS, 0, dx, dy, dout, mask, true, true, n);
}

void sublayer_add_backward_set_cuda(float *dx, bool add_dx, float *dy,
                                    const float *dout, const float *mask,
                                    size_t n) {
    if (n == 0) return;
    LAUNCH(sublayer_add_backward_kernel, ceil_div(n, RESIDUAL_THREADS),
           RESIDUAL_THREADS, 0, dx, dy, dout, mask, add_dx, false, n);
}

// ---- fused with their neighbours -------------------------------------------
// The block's two sub-layers end in a linear layer whose bias the
// unfused way writes into every row before the product (a pass of
// writes, and the product then reads it back), and the sub-layer's add
// then reads f's output and the stream and writes the sum (a pass of its
// own). The fused forms let the product write f's output without its
// bias and add the bias in the add's own pass: the bias costs nothing.
// After the attention's add, the next thing the block does is ln_2 of
// the new stream, which reads the whole stream again; the fused kernel
// normalises each row while it is still in the warp's hands. Dropout
// draws the same counters as sublayer_add_cuda: the same masks.

#define FULL_MASK 0xffffffffu
#define RES_LN_WARPS 4   // rows (warps) per block: 128 threads

// The sum of v over the warp's 32 lanes, in every lane (layernorm.cu
// explains the butterfly).
__device__ static inline float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_xor_sync(FULL_MASK, v, offset);
    return v;
}

//> residual-fused-cuda
// out = x + dropout(out + bias), bias (C,) added to every row of n / C.
__global__ void sublayer_bias_add_kernel(float *out, float *mask,
                                         const float *x, const float *bias,
                                         float p, float scale, uint64_t seed,
                                         uint64_t offset, int C, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float y = out[i] + (bias ? bias[i % C] : 0.0f);
    if (mask) {
        float m = dropout_uniform(seed, offset + i) < p ? 0.0f : scale;
        mask[i] = m;
        y *= m;
    }
    out[i] = x[i] + y;
}

// Warp w of block b takes row r = b * RES_LN_WARPS + w: the stream
// res = x + dropout(y + bias) (y may be res: each lane reads its floats
// before it writes them), then norm = LayerNorm(res) as
// layernorm_forward_kernel computes it, mean and rstd kept, norm's bf16
// copy into norm16 unless NULL. Each lane reads back only the floats it
// wrote itself, so the row needs no barrier.
__global__ void residual_layernorm_kernel(
    float *res, float *norm, bf16 *norm16, float *mean, float *rstd,
    float *mask, const float *x, const float *y, const float *bias,
    float p, float scale, uint64_t seed, uint64_t offset,
    const float *ln_w, const float *ln_b, int N, int C) {
    int lane = threadIdx.x % 32;
    int r = blockIdx.x * RES_LN_WARPS + threadIdx.x / 32;
    if (r >= N) return;   // the whole warp leaves together
    size_t row = (size_t)r * C;
    float sum = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float v = y[row + i] + (bias ? bias[i] : 0.0f);
        if (mask) {
            float m = dropout_uniform(seed, offset + row + i) < p ? 0.0f
                                                                  : scale;
            mask[row + i] = m;
            v *= m;
        }
        v += x[row + i];
        res[row + i] = v;
        sum += v;
    }
    float m = warp_sum(sum) / C;
    float sq = 0.0f;
    for (int i = lane; i < C; i += 32)
        sq += (res[row + i] - m) * (res[row + i] - m);
    float s = rsqrtf(warp_sum(sq) / C + LAYERNORM_EPS);
    for (int i = lane; i < C; i += 32) {
        float o = (res[row + i] - m) * s * ln_w[i] + (ln_b ? ln_b[i] : 0.0f);
        norm[row + i] = o;
        if (norm16) norm16[row + i] = __float2bfloat16(o);
    }
    if (lane == 0) {
        mean[r] = m;
        rstd[r] = s;
    }
}
//< residual-fused-cuda

// The checks sublayer_add_cuda makes of p and the mask.
static void check_dropout_args(const char *who, float p, const float *mask) {
    if (!(p >= 0.0f && p < 1.0f))   // also catches NaN
        cuda_fail(who, "p must be in [0, 1)", __FILE__, __LINE__);
    if (p > 0.0f && !mask)
        cuda_fail(who, "p > 0 needs a mask to write", __FILE__, __LINE__);
}

void sublayer_bias_add_cuda(float *out, float *mask, const float *x,
                            const float *bias, float p, uint64_t seed,
                            uint64_t offset, int N, int C) {
    check_dropout_args("sublayer_bias_add_cuda", p, mask);
    size_t n = (size_t)N * C;
    if (n == 0) return;
    LAUNCH(sublayer_bias_add_kernel, ceil_div(n, RESIDUAL_THREADS),
           RESIDUAL_THREADS, 0, out, p > 0.0f ? mask : (float *)NULL, x,
           bias, p, 1.0f / (1.0f - p), seed, offset, C, n);
}

void residual_layernorm_forward_cuda(float *res, float *norm,
                                     uint16_t *norm16, float *mean,
                                     float *rstd, float *mask,
                                     const float *x, const float *y,
                                     const float *bias, float p,
                                     uint64_t seed, uint64_t offset,
                                     const float *ln_w, const float *ln_b,
                                     int N, int C) {
    check_dropout_args("residual_layernorm_forward_cuda", p, mask);
    if (N <= 0 || C <= 0) return;
    LAUNCH(residual_layernorm_kernel, ceil_div((size_t)N, RES_LN_WARPS),
           RES_LN_WARPS * 32, 0, res, norm, (bf16 *)norm16, mean, rstd,
           p > 0.0f ? mask : (float *)NULL, x, y, bias, p,
           1.0f / (1.0f - p), seed, offset, ln_w, ln_b, N, C);
}
