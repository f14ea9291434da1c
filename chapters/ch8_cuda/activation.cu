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
#include "linear.cuh"   // the column sums' chunks, for the bias's gradient
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

// ---- fused with the bias ------------------------------------------------
// The feed-forward layer's first product h = inp @ w^T + bias is followed
// at once by a = GELU(h). The unfused way spends a pass writing the bias
// into every row of h (so that cuBLAS adds the product to it, reading h
// once more) and another pass for the GELU. Here the product writes h
// without its bias, and the GELU's pass adds the bias on the fly, as it
// reads each float anyway: the bias costs no pass at all. h stays
// without its bias (writing h + bias back would cost a pass of writes),
// so the backward pass adds the bias again where it needs the GELU's
// input. In the backward pass, the bias's gradient is the column sums of
// dh = da * GELU'(h + bias), which the GELU's backward kernel has in its
// hands: the same kernel sums them, and no pass reads dh again.

//> bias-gelu-cuda
// a = GELU(h + bias) (bias (F,) or NULL), and its bf16 copy into a16
// unless NULL. h is left as it is.
__global__ void bias_gelu_forward_kernel(float *a, bf16 *a16, const float *h,
                                         const float *bias, Activation kind,
                                         int F, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = h[i] + (bias ? bias[i % F] : 0.0f);
    float y = gelu_of(x, kind);
    a[i] = y;
    if (a16) a16[i] = __float2bfloat16(y);
}

// dh = da * GELU'(h + bias), set (and its bf16 copy into dh16 unless
// NULL), for rows [chunk * rows, (chunk + 1) * rows) of GELU_TILE
// columns; with part, also those rows' column sums of dh into
// part[chunk, column]. The block is column_sums_cuda's (linear.cu), and
// so is the order of the additions: the bias's gradient comes out the
// same bits as the unfused pair of kernels gives.
#define GELU_TILE 32   // columns per block
#define GELU_LANES 8   // row lanes per column: 256 threads

__global__ void gelu_backward_bias_kernel(float *dh, bf16 *dh16, float *part,
                                          const float *da, const float *h,
                                          const float *bias,
                                          Activation kind, int N, int F,
                                          int rows) {
    __shared__ float s[GELU_LANES][GELU_TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int c = blockIdx.x * GELU_TILE + tx;
    int r0 = blockIdx.y * rows;
    int r1 = r0 + rows < N ? r0 + rows : N;
    float sum = 0.0f;
    if (c < F) {
        float b = bias ? bias[c] : 0.0f;
        for (int r = r0 + ty; r < r1; r += GELU_LANES) {
            size_t i = (size_t)r * F + c;
            float g = da[i] * gelu_grad(h[i] + b, kind);
            dh[i] = g;
            if (dh16) dh16[i] = __float2bfloat16(g);
            sum += g;
        }
    }
    s[ty][tx] = sum;
    __syncthreads();   // every lane's sum is in shared memory
    if (part && ty == 0 && c < F) {
        for (int k = 1; k < GELU_LANES; k++) sum += s[k][tx];
        part[(size_t)blockIdx.y * F + c] = sum;
    }
}
//< bias-gelu-cuda

void bias_gelu_forward_cuda(float *a, uint16_t *a16, const float *h,
                            const float *bias, Activation kind, int N,
                            int F) {
    size_t n = (size_t)N * F;
    if (n == 0) return;
    const unsigned threads = 256;
    LAUNCH(bias_gelu_forward_kernel, ceil_div(n, threads), threads, 0, a,
           (bf16 *)a16, h, bias, kind, F, n);
}

void gelu_backward_bias_cuda(float *dh, uint16_t *dh16, float *dbias,
                             const float *da, const float *h,
                             const float *bias, Activation kind, int N,
                             int F) {
    if (N <= 0 || F <= 0) return;
    ColumnChunks k = column_chunks(N);
    float *part = dbias ? column_scratch((size_t)k.chunks * F) : NULL;
    LAUNCH(gelu_backward_bias_kernel,
           dim3(ceil_div((size_t)F, GELU_TILE), k.chunks),
           dim3(GELU_TILE, GELU_LANES), 0, dh, (bf16 *)dh16, part, da, h,
           bias, kind, N, F, k.rows);
    if (dbias) column_sums_finish_cuda(dbias, part, k.chunks, F);
}
