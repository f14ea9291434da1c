// attention.cu - chapter 2's softmax and attention on the GPU, the way
// that keeps the (Tq, Tk) matrix of weights: the matrix products of all
// B * NH heads go to cuBLAS, one batched call each, and the softmax
// between them is a kernel of our own, one warp per row.
//
// How this differs from attention.c:
//  - attention_forward_cuda returns nothing and takes no Error: the
//    caller has checked the sizes with the CPU's rules.
//  - The CPU computes, 32 query rows at a time, only the scores that the
//    causal mask keeps. Here one batched call computes a block of rows of
//    every head at once: with `block` rows per block, each over the keys
//    its last row sees. The blocks on the diagonal compute some hidden
//    scores, which the softmax sets to zero (and which then pass nothing
//    back); the part of the matrix beyond them is never computed, written
//    or read. With blocks of 128 at T = 1,024 that is 36/64 of the
//    square; with block 0, one call computes the whole square, and the
//    softmax writes zeros over all the hidden weights, as the CPU's
//    attention_forward does (attention_forward_cuda, chapter 2's API).
//    Far smaller blocks would leave the GPU waiting between small calls.
//  - The scale 1/sqrt(HS) is applied inside the two softmax kernels,
//    where each value is in a register anyway, instead of as the alpha of
//    a product: the same single multiplication.
//  - softmax_forward_cuda is the masked softmax with no mask; a row of
//    nothing but -inf comes out as zeros there, where the CPU gives NaN.
#include "cuda_rt.h"

#include <math.h>

#ifdef __CUDACC__
#include <cuda_bf16.h>
#endif

extern "C" {
#include "attention.cuh"
#include "gemm.cuh"
}

typedef __nv_bfloat16 bf16;

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

// The maximum of v over the 32 lanes of the warp, in every lane, by the
// same butterfly as warp_sum.
__device__ static inline float warp_max(float v) {
    for (int o = WARP / 2; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}

// How many keys of query t the kernels write (and the products read):
// all Tk, or with causal blocks of `block` rows (block > 0), up to the
// end of t's block: the keys its block's last row sees.
__device__ static inline int block_width(int block, int t, int Tk) {
    if (block == 0) return Tk;
    int end = (t / block + 1) * block;
    return end < Tk ? end : Tk;
}

//> attention-cuda
// out[row] = the softmax of scale * inp[row] over the keys that both
// masks let this row see; every other key of the first block_width gets
// exactly 0 (the rest are left alone), and a row that sees no key at all
// is zeros. Row r is query t = r % Tq of head r / Tq, which belongs to
// sequence b = r / Tq / NH of key_mask (B, Tk).
// With out16 (bf16 mode), the same weights rounded to bf16 go there too:
// the copy the next product needs, made without a pass of its own.
//
// One warp per row: lane j reads keys j, j + 32, j + 64, ..., so the 32
// lanes read 32 neighbouring floats at a time (one coalesced access).
// Three passes, each ending in a butterfly: the maximum, the sum of
// exponentials, the weights. (An online pass gathering the maximum and
// the sum together reads the row once less, and was slower on an H100:
// the row is still in the L1 cache for the second pass, and the online
// rule's rescaling costs an exponential and a branch; section "The
// kernel benchmarks, measured" of the chapter has the numbers.) out may
// be inp: each lane overwrites only what it read itself, after the last
// shuffle, which no lane passes before the whole warp has read.
__global__ void masked_softmax_kernel(float *out, bf16 *out16,
                                      const float *inp, const int *key_mask,
                                      bool causal, int block, float scale,
                                      int rows, int NH, int Tq, int Tk) {
    int row = blockIdx.x * ROW_WARPS + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    if (row >= rows) return;                   // the whole warp leaves
    const int *real = key_mask ? key_mask + (size_t)(row / Tq / NH) * Tk
                               : NULL;
    int visible = causal_visible(causal, row % Tq, Tq, Tk);
    int width = block_width(block, row % Tq, Tk);
    const float *x = inp + (size_t)row * Tk;
    float *y = out + (size_t)row * Tk;

    float m = -INFINITY;                       // over the keys seen
    for (int i = lane; i < visible; i += WARP)
        if (!real || real[i]) m = fmaxf(m, scale * x[i]);
    m = warp_max(m);
    float sum = 0.0f;                          // exp(-inf) adds 0
    if (m > -INFINITY)
        for (int i = lane; i < visible; i += WARP)
            if (!real || real[i]) sum += expf(scale * x[i] - m);
    sum = warp_sum(sum);

    // sum >= 1 when any key is seen (its maximum gave exp(0)); 0: none.
    float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (int i = lane; i < width; i += WARP) {
        bool seen = i < visible && (!real || real[i]) && sum > 0.0f;
        float w = seen ? expf(scale * x[i] - m) * inv : 0.0f;
        y[i] = w;
        if (out16) out16[(size_t)row * Tk + i] = __float2bfloat16(w);
    }
}

// The softmax's backward pass, row by row, with the scale that came
// before it folded in:
//   g = scale * y * (dy - sum_i dy_i y_i)
// and dinp = g, or dinp += g when accumulate, over the block_width of
// the row (row % Tq is its query): one warp per row, as the forward.
// dinp may be dout (attention computes dscores over datt): as there, a
// lane writes only what it read, after the shuffles.
// With dinp16, dinp's new values rounded to bf16 go there too (as the
// forward's out16).
__global__ void softmax_backward_kernel(float *dinp, bf16 *dinp16,
                                        const float *dout, const float *out,
                                        float scale, bool accumulate,
                                        int rows, int D, int Tq, int block) {
    int row = blockIdx.x * ROW_WARPS + threadIdx.x / WARP;
    int lane = threadIdx.x % WARP;
    if (row >= rows) return;
    const float *dy = dout + (size_t)row * D, *y = out + (size_t)row * D;
    float *dx = dinp + (size_t)row * D;
    int width = block_width(block, row % Tq, D);
    float dot = 0.0f;
    for (int i = lane; i < width; i += WARP) dot += dy[i] * y[i];
    dot = warp_sum(dot);
    for (int i = lane; i < width; i += WARP) {
        float g = scale * y[i] * (dy[i] - dot);
        g = accumulate ? dx[i] + g : g;
        dx[i] = g;
        if (dinp16) dinp16[(size_t)row * D + i] = __float2bfloat16(g);
    }
}

// Blocks of ROW_WARPS warps to give each of rows rows its own warp.
static unsigned row_blocks(int rows) {
    return ceil_div((size_t)rows, ROW_WARPS);
}

// The floats an array of `rows` by `cols` matrices spans in layout l,
// from its first to the last of head NH - 1 of sequence B - 1.
static size_t heads_extent(HeadsLayout l, int rows, int cols, int B,
                           int NH) {
    return (size_t)(B - 1) * l.batch + (size_t)(NH - 1) * l.head
           + (size_t)(rows - 1) * l.ld + cols;
}

// In bf16, rounds the heads of x whole, once (gemm.cuh): the products
// that follow, one a block, find their parts in the copy.
static void prepare_heads(const float *x, HeadsLayout l, int rows, int cols,
                          int B, int NH) {
    gemm_bf16_prepare(x, heads_extent(l, rows, cols, B, NH));
}

// For every head of every sequence, C = op(A) @ op(B) + beta * C, each
// array in its own layout: a grid of products, sequences by heads, one
// cuBLAS call (gemm.cuh).
static void heads_gemm(bool ta, bool tb, int M, int N, int K, const float *A,
                       HeadsLayout la, const float *Bm, HeadsLayout lb,
                       float beta, float *C, HeadsLayout lc, int B, int NH) {
    gemm_grid_cuda(ta, tb, M, N, K, 1.0f, A, la.ld, la.batch, la.head, Bm,
                   lb.ld, lb.batch, lb.head, beta, C, lc.ld, lc.batch,
                   lc.head, B, NH);
}

// Rows per causal block, or 0 for the whole (Tq, Tk) matrix: blocks need
// the causal mask on a square matrix, and pay from two blocks on.
static int causal_block(int block, bool causal, int Tq, int Tk) {
    return block > 0 && causal && Tq == Tk && block < Tq ? block : 0;
}

static int min_int(int a, int b) { return a < b ? a : b; }

void attention_forward_strided_cuda(float *out, HeadsLayout lo, float *att,
                                    uint16_t *att16_keep, const float *q,
                                    HeadsLayout lq,
                                    const float *k, const float *v,
                                    HeadsLayout lkv, const int *key_mask,
                                    bool causal, int block, int B, int NH,
                                    int Tq, int Tk, int HS) {
    int rows = B * NH * Tq;                    // rows of att
    HeadsLayout la = heads_packed(NH, Tq, Tk); // att: (B, NH, Tq, Tk)
    int blk = causal_block(block, causal, Tq, Tk), step = blk ? blk : Tq;
    prepare_heads(q, lq, Tq, HS, B, NH);
    prepare_heads(k, lkv, Tk, HS, B, NH);
    // for every head, query rows r0 .. r0 + m - 1 at a time, over the
    // keys they see: scores (m, seen) = q (m, HS) @ k^T (HS, seen)
    for (int r0 = 0; r0 < Tq; r0 += step) {
        int m = min_int(step, Tq - r0), seen = blk ? r0 + m : Tk;
        heads_gemm(false, true, m, seen, HS, q + (size_t)r0 * lq.ld, lq, k,
                   lkv, 0.0f, att + (size_t)r0 * Tk, la, B, NH);
    }
    // att = the masked softmax of each row of scores / sqrt(HS), in place
    // (in bf16, with the copy of att the next product reads)
    size_t na = (size_t)rows * Tk;
    unsigned long before = cuda_writes();
    bf16 *att16 = (bf16 *)gemm_bf16_copy_begin(att, na, att16_keep);
    LAUNCH(masked_softmax_kernel, row_blocks(rows), ROW_THREADS, 0, att,
           att16, att, key_mask, causal, blk, 1.0f / sqrtf((float)HS), rows,
           NH, Tq, Tk);
    gemm_bf16_copy_end(before, att, na);   // q's and k's copies hold too
    // out (m, HS) = att (m, seen) @ v (seen, HS): weighted sums of values
    prepare_heads(v, lkv, Tk, HS, B, NH);
    for (int r0 = 0; r0 < Tq; r0 += step) {
        int m = min_int(step, Tq - r0), seen = blk ? r0 + m : Tk;
        heads_gemm(false, false, m, HS, seen, att + (size_t)r0 * Tk, la, v,
                   lkv, 0.0f, out + (size_t)r0 * lo.ld, lo, B, NH);
    }
}

void attention_backward_strided_cuda(float *dq, float *dk, float *dv,
                                     float *datt, const float *dout,
                                     const float *att, const float *q,
                                     const float *k, const float *v,
                                     HeadsLayout lq, HeadsLayout lkv,
                                     HeadsLayout lo, bool accumulate,
                                     int block, int B, int NH, int Tq,
                                     int Tk, int HS) {
    int rows = B * NH * Tq;
    HeadsLayout la = heads_packed(NH, Tq, Tk);
    float beta = accumulate ? 1.0f : 0.0f;   // for dq, dk, dv
    int blk = causal_block(block, true, Tq, Tk);
    int qstep = blk ? blk : Tq, kstep = blk ? blk : Tk;
    // through out = att @ v. dv (+)= att^T @ dout, keys c0 .. c0 + n - 1
    // at a time, over the queries that see them (from q0 on)
    prepare_heads(att, la, Tq, Tk, B, NH);
    prepare_heads(dout, lo, Tq, HS, B, NH);
    for (int c0 = 0; c0 < Tk; c0 += kstep) {
        int n = min_int(kstep, Tk - c0), q0 = blk ? c0 : 0;
        heads_gemm(true, false, n, HS, Tq - q0, att + (size_t)q0 * Tk + c0,
                   la, dout + (size_t)q0 * lo.ld, lo, beta,
                   dv + (size_t)c0 * lkv.ld, lkv, B, NH);
    }
    // datt = dout @ v^T, query rows r0 .. r0 + m - 1 at a time
    prepare_heads(v, lkv, Tk, HS, B, NH);
    for (int r0 = 0; r0 < Tq; r0 += qstep) {
        int m = min_int(qstep, Tq - r0), seen = blk ? r0 + m : Tk;
        heads_gemm(false, true, m, seen, HS, dout + (size_t)r0 * lo.ld, lo,
                   v, lkv, 0.0f, datt + (size_t)r0 * Tk, la, B, NH);
    }
    // through the softmax and the scale, in place: datt becomes dscores
    size_t na = (size_t)rows * Tk;
    unsigned long before = cuda_writes();
    bf16 *datt16 = (bf16 *)gemm_bf16_copy_begin(datt, na, NULL);
    LAUNCH(softmax_backward_kernel, row_blocks(rows), ROW_THREADS, 0, datt,
           datt16, datt, att, 1.0f / sqrtf((float)HS), false, rows, Tk, Tq,
           blk);
    gemm_bf16_copy_end(before, datt, na);   // and the other copies hold
    // through scores = q k^T: dq (+)= dscores @ k, by blocks of queries
    prepare_heads(k, lkv, Tk, HS, B, NH);
    for (int r0 = 0; r0 < Tq; r0 += qstep) {
        int m = min_int(qstep, Tq - r0), seen = blk ? r0 + m : Tk;
        heads_gemm(false, false, m, HS, seen, datt + (size_t)r0 * Tk, la, k,
                   lkv, beta, dq + (size_t)r0 * lq.ld, lq, B, NH);
    }
    // dk (+)= dscores^T @ q, by blocks of keys
    prepare_heads(q, lq, Tq, HS, B, NH);
    for (int c0 = 0; c0 < Tk; c0 += kstep) {
        int n = min_int(kstep, Tk - c0), q0 = blk ? c0 : 0;
        heads_gemm(true, false, n, HS, Tq - q0, datt + (size_t)q0 * Tk + c0,
                   la, q + (size_t)q0 * lq.ld, lq, beta,
                   dk + (size_t)c0 * lkv.ld, lkv, B, NH);
    }
}
//< attention-cuda

// Chapter 2's own layout, (B, NH, T, HS) for every array.
void attention_forward_cuda(float *out, float *att, const float *q,
                            const float *k, const float *v,
                            const int *key_mask, bool causal, int B, int NH,
                            int Tq, int Tk, int HS) {
    HeadsLayout lq = heads_packed(NH, Tq, HS), lkv = heads_packed(NH, Tk, HS);
    attention_forward_strided_cuda(out, lq, att, NULL, q, lq, k, v, lkv,
                                   key_mask, causal, 0, B, NH, Tq, Tk, HS);
}

void attention_backward_cuda(float *dq, float *dk, float *dv, float *datt,
                             const float *dout, const float *att,
                             const float *q, const float *k, const float *v,
                             int B, int NH, int Tq, int Tk, int HS) {
    HeadsLayout lq = heads_packed(NH, Tq, HS), lkv = heads_packed(NH, Tk, HS);
    attention_backward_strided_cuda(dq, dk, dv, datt, dout, att, q, k, v, lq,
                                    lkv, lq, true, 0, B, NH, Tq, Tk, HS);
}

void softmax_forward_cuda(float *out, const float *inp, int N, int D) {
    if (N == 0 || D == 0) return;
    // one head of N queries, none of them masked
    LAUNCH(masked_softmax_kernel, row_blocks(N), ROW_THREADS, 0, out,
           (bf16 *)NULL, inp, (const int *)NULL, false, 0, 1.0f, N, 1, N,
           D);
}

void softmax_backward_cuda(float *dinp, const float *dout, const float *out,
                           int N, int D) {
    if (N == 0 || D == 0) return;
    LAUNCH(softmax_backward_kernel, row_blocks(N), ROW_THREADS, 0, dinp,
           (bf16 *)NULL, dout, out, 1.0f, true, N, D, 1, 0);
}
