// attention.cu - chapter 2's softmax and attention on the GPU, the way
// that keeps the (Tq, Tk) matrix of weights: the matrix products of all
// B * NH heads go to cuBLAS, one strided-batched call each, and the
// softmax between them is a kernel of our own, one warp per row.
//
// How this differs from attention.c:
//  - attention_forward_cuda returns nothing and takes no Error: the
//    caller has checked the sizes with the CPU's rules.
//  - The CPU computes, 32 query rows at a time, only the scores that the
//    causal mask keeps. Here one batched call computes every score of
//    every head, and the softmax writes zeros over the hidden ones: under
//    the causal mask up to twice the arithmetic, but three large calls
//    keep the whole GPU busy where thousands of small ones would leave
//    most of it waiting. (The backward likewise works on the full matrix;
//    the zeros of att make the hidden part pass nothing back.)
//  - The scale 1/sqrt(HS) is applied inside the two softmax kernels,
//    where each value is in a register anyway, instead of as the alpha of
//    a product: the same single multiplication.
//  - softmax_forward_cuda is the masked softmax with no mask; a row of
//    nothing but -inf comes out as zeros there, where the CPU gives NaN.
#include "cuda_rt.h"

#include <math.h>

extern "C" {
#include "attention.cuh"
#include "gemm.cuh"
}

#define WARP 32
#define FULL_MASK 0xffffffffu               // every lane of the warp
#define ROW_WARPS 4                          // rows per block, a warp each
#define ROW_THREADS (ROW_WARPS * WARP)       // 128 threads per block

// How many keys the causal mask lets query t see: keys 0 .. n-1, with
// query t at key position t + Tk - Tq (bottom-right aligned), exactly as
// attention_causal_visible of attention.c, which the GPU cannot call.
__device__ static inline int causal_visible(bool causal, int t, int Tq,
                                            int Tk) {
    if (!causal) return Tk;
    long long n = (long long)t + Tk - Tq + 1;   // keys 0 .. t + Tk - Tq
    return n < 0 ? 0 : n > Tk ? Tk : (int)n;
}

// The sum of v over the 32 lanes of the warp, in every lane: at each
// step a lane adds the value of the lane whose number differs in one bit,
// so after 5 steps every lane holds the same total, added in a fixed order.
__device__ static inline float warp_sum(float v) {
    for (int o = WARP / 2; o > 0; o /= 2)
        v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

// What a softmax needs to know of some values x_i, gathered in one pass:
// their maximum m, and l = sum_i exp(x_i - m). Nothing yet: m = -inf, l = 0.
struct SoftmaxStats {
    float m, l;
};

// Adds x to s. When x is a new maximum, every term so far was taken
// against too small an m; multiplying l by exp(m_old - x) moves them all
// to the new one at once. A value of -inf adds exp(-inf) = 0: skipped.
__device__ static inline void stats_add(SoftmaxStats &s, float x) {
    if (x > s.m) {
        s.l = s.l * expf(s.m - x) + 1.0f;      // exp(x - x) = 1
        s.m = x;
    } else if (x > -INFINITY) {
        s.l += expf(x - s.m);
    }
}

// The statistics of two sets of values together. Both terms are moved to
// the larger maximum; an empty side (m = -inf) contributes exp(-inf) = 0.
// The same result whichever side is a: the two lanes of a shuffle agree.
__device__ static inline SoftmaxStats stats_merge(SoftmaxStats a,
                                                  SoftmaxStats b) {
    float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return a;              // both empty
    SoftmaxStats s = {m, a.l * expf(a.m - m) + b.l * expf(b.m - m)};
    return s;
}

// The statistics of the whole warp's values, in every lane (as warp_sum).
__device__ static inline SoftmaxStats warp_stats(SoftmaxStats s) {
    for (int o = WARP / 2; o > 0; o /= 2) {
        SoftmaxStats other = {__shfl_xor_sync(FULL_MASK, s.m, o),
                              __shfl_xor_sync(FULL_MASK, s.l, o)};
        s = stats_merge(s, other);
    }
    return s;
}

//> attention-cuda
// out[row] = the softmax of scale * inp[row] over the keys that both
// masks let this row see; every other key gets exactly 0, and a row that
// sees no key at all is all zeros. Row r is query t = r % Tq of head
// r / Tq, which belongs to sequence b = r / Tq / NH of key_mask (B, Tk).
//
// One warp per row: lane j reads keys j, j + 32, j + 64, ..., so the 32
// lanes read 32 neighbouring floats at a time (one coalesced access).
// A first pass gathers the maximum and the sum of exponentials together
// (SoftmaxStats), the shuffles combine the lanes', and a second pass
// writes the weights: the row is read twice, not three times. out may be
// inp: each lane overwrites only what it read itself, after the shuffles,
// which every lane reaches only once the whole warp has finished reading.
__global__ void masked_softmax_kernel(float *out, const float *inp,
                                      const int *key_mask, bool causal,
                                      float scale, int rows, int NH, int Tq,
                                      int Tk) {
    int row = blockIdx.x * ROW_WARPS + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    if (row >= rows) return;                   // the whole warp leaves
    const int *real = key_mask ? key_mask + (size_t)(row / Tq / NH) * Tk
                               : NULL;
    int visible = causal_visible(causal, row % Tq, Tq, Tk);
    const float *x = inp + (size_t)row * Tk;
    float *y = out + (size_t)row * Tk;

    SoftmaxStats s = {-INFINITY, 0.0f};
    for (int i = lane; i < visible; i += WARP)
        if (!real || real[i]) stats_add(s, scale * x[i]);
    s = warp_stats(s);

    // l >= 1 when any key is seen (its maximum gave exp(0)); l = 0: none.
    float inv = s.l > 0.0f ? 1.0f / s.l : 0.0f;
    for (int i = lane; i < Tk; i += WARP) {
        bool seen = i < visible && (!real || real[i]) && s.l > 0.0f;
        y[i] = seen ? expf(scale * x[i] - s.m) * inv : 0.0f;
    }
}

// The softmax's backward pass, row by row, with the scale that came
// before it folded in:
//   g = scale * y * (dy - sum_i dy_i y_i)
// and dinp = g, or dinp += g when accumulate. One warp per row, as the
// forward. dinp may be dout (attention computes dscores over datt): as
// there, a lane writes only what it read, after the shuffles.
__global__ void softmax_backward_kernel(float *dinp, const float *dout,
                                        const float *out, float scale,
                                        bool accumulate, int rows, int D) {
    int row = blockIdx.x * ROW_WARPS + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    if (row >= rows) return;
    const float *dy = dout + (size_t)row * D, *y = out + (size_t)row * D;
    float *dx = dinp + (size_t)row * D;
    float dot = 0.0f;
    for (int i = lane; i < D; i += WARP) dot += dy[i] * y[i];
    dot = warp_sum(dot);
    for (int i = lane; i < D; i += WARP) {
        float g = scale * y[i] * (dy[i] - dot);
        dx[i] = accumulate ? dx[i] + g : g;
    }
}

// Blocks of ROW_WARPS warps to give each of rows rows its own warp.
static unsigned row_blocks(int rows) {
    return ceil_div((size_t)rows, ROW_WARPS);
}

void attention_forward_cuda(float *out, float *att, const float *q,
                            const float *k, const float *v,
                            const int *key_mask, bool causal, int B, int NH,
                            int Tq, int Tk, int HS) {
    int Z = B * NH, rows = Z * Tq;             // heads, and rows of att
    long long qs = (long long)Tq * HS, ks = (long long)Tk * HS;
    long long as = (long long)Tq * Tk;         // one head's floats of each
    // for every head: scores (Tq, Tk) = q (Tq, HS) @ k^T (HS, Tk), into att
    gemm_batched_cuda(false, true, Tq, Tk, HS, 1.0f, q, HS, qs, k, HS, ks,
                      0.0f, att, Tk, as, Z);
    // att = the masked softmax of each row of scores / sqrt(HS), in place
    LAUNCH(masked_softmax_kernel, row_blocks(rows), ROW_THREADS, 0, att,
           att, key_mask, causal, 1.0f / sqrtf((float)HS), rows, NH, Tq,
           Tk);
    // out (Tq, HS) = att (Tq, Tk) @ v (Tk, HS): weighted sums of values
    gemm_batched_cuda(false, false, Tq, HS, Tk, 1.0f, att, Tk, as, v, HS,
                      ks, 0.0f, out, HS, qs, Z);
}

void attention_backward_cuda(float *dq, float *dk, float *dv, float *datt,
                             const float *dout, const float *att,
                             const float *q, const float *k, const float *v,
                             int B, int NH, int Tq, int Tk, int HS) {
    int Z = B * NH, rows = Z * Tq;
    long long qs = (long long)Tq * HS, ks = (long long)Tk * HS;
    long long as = (long long)Tq * Tk;
    // through out = att @ v: dv += att^T @ dout, datt = dout @ v^T
    gemm_batched_cuda(true, false, Tk, HS, Tq, 1.0f, att, Tk, as, dout, HS,
                      qs, 1.0f, dv, HS, ks, Z);
    gemm_batched_cuda(false, true, Tq, Tk, HS, 1.0f, dout, HS, qs, v, HS,
                      ks, 0.0f, datt, Tk, as, Z);
    // through the softmax and the scale, in place: datt becomes dscores
    LAUNCH(softmax_backward_kernel, row_blocks(rows), ROW_THREADS, 0, datt,
           datt, att, 1.0f / sqrtf((float)HS), false, rows, Tk);
    // through scores = q k^T: dq += dscores @ k, dk += dscores^T @ q
    gemm_batched_cuda(false, false, Tq, HS, Tk, 1.0f, datt, Tk, as, k, HS,
                      ks, 1.0f, dq, HS, qs, Z);
    gemm_batched_cuda(true, false, Tk, HS, Tq, 1.0f, datt, Tk, as, q, HS,
                      qs, 1.0f, dk, HS, ks, Z);
}
//< attention-cuda

void softmax_forward_cuda(float *out, const float *inp, int N, int D) {
    if (N == 0 || D == 0) return;
    // one head of N queries, none of them masked
    LAUNCH(masked_softmax_kernel, row_blocks(N), ROW_THREADS, 0, out, inp,
           (const int *)NULL, false, 1.0f, N, 1, N, D);
}

void softmax_backward_cuda(float *dinp, const float *dout, const float *out,
                           int N, int D) {
    if (N == 0 || D == 0) return;
    LAUNCH(softmax_backward_kernel, row_blocks(N), ROW_THREADS, 0, dinp,
           dout, out, 1.0f, true, N, D);
}
