// activation.cu - chapter 3's GELU on the GPU: one thread per element.
//
// The CPU computes Phi(x) with a polynomial that vectorises; a GPU thread
// has erfcf in hardware-friendly form, so here Phi(x) = erfc(-x/sqrt 2)/2,
// which keeps its accuracy far into the negative tail (no 1 + erf to
// cancel). The two agree to about 2e-7.
#include "cuda_rt.h"

#ifdef __CUDACC__
#include <cuda_bf16.h>
#endif

extern "C" {
#include "activation.cuh"
}

typedef __nv_bfloat16 bf16;

#define INV_SQRT2 0.70710678118654752440f      // 1 / sqrt(2)
#define INV_SQRT_2PI 0.39894228040143267794f   // 1 / sqrt(2 pi)
#define SQRT_2_OVER_PI 0.79788456080286535588f // sqrt(2 / pi)
#define GELU_CUBIC 0.044715f

__device__ static inline float normal_cdf(float x) {
    return 0.5f * erfcf(-x * INV_SQRT2);
}

__device__ static inline float gelu_of(float x, Activation kind) {
    if (kind == GELU_TANH) {
        float u = SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x);
        return x / (1.0f + expf(-2.0f * u));
    }
    return x * normal_cdf(x);
}

__device__ static inline float gelu_grad(float x, Activation kind) {
    if (kind == GELU_TANH) {
        float u = SQRT_2_OVER_PI * (x + GELU_CUBIC * x * x * x);
        float du = SQRT_2_OVER_PI * (1.0f + 3.0f * GELU_CUBIC * x * x);
        float e = expf(-2.0f * u), s = 1.0f / (1.0f + e);
        return s + 2.0f * x * s * (e * s) * du;
    }
    return normal_cdf(x) + x * INV_SQRT_2PI * expf(-0.5f * x * x);
}

//> gelu-kernel
// Thread i of the grid handles element i; the last block's threads past
// the end do nothing. With out16, the result rounded to bf16 goes there
// too (bf16 mode: the copy the next matrix product reads).
__global__ void gelu_forward_kernel(float *out, bf16 *out16,
                                    const float *inp, Activation kind,
                                    size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float y = gelu_of(inp[i], kind);
        out[i] = y;
        if (out16) out16[i] = __float2bfloat16(y);
    }
}
//< gelu-kernel

// dinp += dout * GELU'(inp), or dinp = when not accumulate; with dinp16,
// dinp's new value rounded to bf16 goes there too.
__global__ void gelu_backward_kernel(float *dinp, bf16 *dinp16,
                                     const float *dout, const float *inp,
                                     Activation kind, bool accumulate,
                                     size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float g = dout[i] * gelu_grad(inp[i], kind);
        if (accumulate) g += dinp[i];
        dinp[i] = g;
        if (dinp16) dinp16[i] = __float2bfloat16(g);
    }
}

//> gelu-launch
void gelu_forward_cuda_block(float *out, const float *inp, Activation kind,
                             size_t n, unsigned threads) {
    if (n == 0) return;
    LAUNCH(gelu_forward_kernel, ceil_div(n, threads), threads, 0, out,
           (bf16 *)NULL, inp, kind, n);
}
//< gelu-launch

void gelu_forward_cuda(float *out, const float *inp, Activation kind,
                       size_t n) {
    gelu_forward_cuda_block(out, inp, kind, n, 256);
}

void gelu_backward_cuda(float *dinp, const float *dout, const float *inp,
                        Activation kind, size_t n) {
    if (n == 0) return;
    const unsigned threads = 256;
    LAUNCH(gelu_backward_kernel, ceil_div(n, threads), threads, 0, dinp,
           (bf16 *)NULL, dout, inp, kind, true, n);
}

void gelu_forward_copy_cuda(float *out, uint16_t *out16, const float *inp,
                            Activation kind, size_t n) {
    if (n == 0) return;
    const unsigned threads = 256;
    LAUNCH(gelu_forward_kernel, ceil_div(n, threads), threads, 0, out,
           (bf16 *)out16, inp, kind, n);
}

void gelu_backward_set_cuda(float *dinp, uint16_t *dinp16, const float *dout,
                            const float *inp, Activation kind, size_t n) {
    if (n == 0) return;
    const unsigned threads = 256;
    LAUNCH(gelu_backward_kernel, ceil_div(n, threads), threads, 0, dinp,
           (bf16 *)dinp16, dout, inp, kind, false, n);
}
