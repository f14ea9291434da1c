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

extern "C" {
#include "dropout.cuh"
#include "residual.cuh"
}

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
