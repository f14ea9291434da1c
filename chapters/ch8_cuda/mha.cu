// mha.cu - chapter 2's multi-head attention on the GPU. The head split
// and merge are one thread per float of the (B, NH, T, HS) side, so both
// directions are one gather; the layer itself (at the bottom) is the CPU
// layer's list of calls with each call's kernel.
#include "cuda_rt.h"

extern "C" {
#include "attention.cuh"
#include "error.h"
#include "gemm.cuh"
#include "flash.cuh"
#include "linear.cuh"
#include "mha.cuh"
}

// i indexes (b, h, t, s) of the heads' layout; its channel is h*HS + s.
__device__ static inline size_t stream_index(size_t i, int ld, int NH,
                                             int T, int HS) {
    int s = (int)(i % HS);
    size_t r = i / HS;
    int t = (int)(r % T);
    r /= T;
    int h = (int)(r % NH);
    size_t b = r / NH;
    return (b * T + t) * ld + (size_t)h * HS + s;
}

__global__ void heads_split_kernel(float *out, const float *inp, int ld,
                                   int NH, int T, int HS, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = inp[stream_index(i, ld, NH, T, HS)];
}

__global__ void heads_merge_kernel(float *out, const float *inp, int ld,
                                   int NH, int T, int HS, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[stream_index(i, ld, NH, T, HS)] = inp[i];
}

void heads_split_cuda(float *out, const float *inp, int ld, int B, int T,
                      int C, int NH) {
    size_t n = (size_t)B * T * C;
    if (n == 0) return;
    LAUNCH(heads_split_kernel, ceil_div(n, 256), 256, 0, out, inp, ld, NH,
           T, C / NH, n);
}

void heads_merge_cuda(float *out, const float *inp, int ld, int B, int T,
                      int C, int NH) {
    size_t n = (size_t)B * T * C;
    if (n == 0) return;
    LAUNCH(heads_merge_kernel, ceil_div(n, 256), 256, 0, out, inp, ld, NH,
           T, C / NH, n);
}

// ---- the layer ---------------------------------------------------------------
// mha_forward and mha_backward of chapter 2, call for call, but for one
// difference. Chapter 2 copies the heads out of the linear layer's
// (B, T, 3C) output into (B, NH, T, HS) and copies the result back; on
// the GPU those copies cost as much as the softmax (an H100's profile
// gave them 14% of a bf16 step), and cuBLAS does not need them: a head's
// q is a (T, HS) matrix inside qkv with rows 3C floats apart, which its
// leading dimension says. So the (T, T) path hands attention.cu the
// arrays where they are, and writes each head's output straight into
// its columns of y. The fused path (flash.cu), whose kernels read packed
// heads, keeps chapter 2's split and merge. And where chapter 2 clears
// dy and dqkv and then adds into them, the backward pass here sets them
// (linear_backward_set_cuda, and attention's accumulate = false): a pass
// over memory each way fewer.

// Causal blocks of 128 query rows: at T = 256 (nanoGPT's block) the
// products cover 3/4 of the T x T square, at T = 1,024 36/64, in calls
// over 128 rows of every head, large enough to fill the GPU.
static int block_rows = 128;

void mha_set_causal_block(int rows) { block_rows = rows > 0 ? rows : 0; }
int mha_causal_block(void) { return block_rows; }

// In bf16 mode the fused path runs on the tensor cores (flash_tc.cu)
// when the head size is one they take; ./ch8 refuses --bf16 --flash with
// another, and the tests' small models (heads of 8 or 12) take the fp32
// kernels of flash.cu.
static bool flash_on_tensor_cores(int HS) {
    return gemm_bf16() && attention_flash_tc_supports(HS);
}

//> mha-cuda
// The heads of qkv, attention, the heads merged into y.
static void attend_cuda(MhaCacheCuda *c, const int *key_mask, bool causal,
                        int B, int T, int C, int NH) {
    int HS = C / NH;
    if (c->att) {
        HeadsLayout lqkv = heads_in_rows(T, 3 * C, HS);
        size_t n = (size_t)B * T * 3 * C;
        if (c->qkv16)   // q, k, v rounded at once, kept for the backward
            gemm_bf16_pin(c->qkv, n, c->qkv16);
        else
            gemm_bf16_prepare(c->qkv, n);
        c->block = causal ? block_rows : 0;
        attention_forward_strided_cuda(c->y, heads_in_rows(T, C, HS), c->att,
                                       c->att16, c->qkv, lqkv, c->qkv + C,
                                       c->qkv + 2 * C, lqkv, key_mask,
                                       causal, c->block, B, NH, T, T, HS);
    } else {
        if (key_mask || !causal)
            die("mha_forward_cuda: the fused path is causal self-attention "
                "without a key mask");
        heads_split_cuda(c->q, c->qkv, 3 * C, B, T, C, NH);
        heads_split_cuda(c->k, c->qkv + C, 3 * C, B, T, C, NH);
        heads_split_cuda(c->v, c->qkv + 2 * C, 3 * C, B, T, C, NH);
        if (flash_on_tensor_cores(HS))
            attention_forward_flash_tc_cuda(c->yh, c->lse, c->q, c->k, c->v,
                                            B, NH, T, HS);
        else
            attention_forward_flash_cuda(c->yh, c->lse, c->q, c->k, c->v, B,
                                         NH, T, HS);
        heads_merge_cuda(c->y, c->yh, C, B, T, C, NH);
    }
    gemm_bf16_pin(c->y, (size_t)B * T * C, c->y16);   // c_proj's input
}

// The backward pass of attend_cuda: dqkv = (not +=) the gradient of qkv,
// from dy, the gradient of y. Both paths write every float of dqkv, so
// it needs no clearing first.
static void attend_backward_cuda(float *dqkv, MhaScratchCuda *s,
                                 const float *dy, const MhaCacheCuda *c,
                                 int B, int T, int C, int NH) {
    int HS = C / NH;
    size_t btc = (size_t)B * T * C;
    if (c->att) {
        HeadsLayout lqkv = heads_in_rows(T, 3 * C, HS);
        gemm_bf16_prepare(c->qkv, 3 * btc);
        attention_backward_strided_cuda(dqkv, dqkv + C, dqkv + 2 * C, s->datt,
                                        dy, c->att, c->qkv, c->qkv + C,
                                        c->qkv + 2 * C, lqkv, lqkv,
                                        heads_in_rows(T, C, HS), false,
                                        c->block, B, NH, T, T, HS);
        return;
    }
    // y = merge(yh), yh = attention(q, k, v)
    heads_split_cuda(s->dyh, dy, C, B, T, C, NH);
    cuda_zero(s->dq, btc);
    cuda_zero(s->dk, btc);
    cuda_zero(s->dv, btc);
    if (flash_on_tensor_cores(HS))
        attention_backward_flash_tc_cuda(s->dq, s->dk, s->dv, s->dyh, c->yh,
                                         c->lse, c->q, c->k, c->v, B, NH, T,
                                         HS);
    else
        attention_backward_flash_cuda(s->dq, s->dk, s->dv, s->dyh, c->yh,
                                      c->lse, c->q, c->k, c->v, B, NH, T, HS);
    // q, k, v = split(qkv): the merges write all of dqkv
    heads_merge_cuda(dqkv, s->dq, 3 * C, B, T, C, NH);
    heads_merge_cuda(dqkv + C, s->dk, 3 * C, B, T, C, NH);
    heads_merge_cuda(dqkv + 2 * C, s->dv, 3 * C, B, T, C, NH);
}

void mha_forward_cuda(float *out, MhaCacheCuda *cache, const float *inp,
                      const float *c_attn_w, const float *c_attn_b,
                      const float *c_proj_w, const float *c_proj_b,
                      const int *key_mask, bool causal, int B, int T, int C,
                      int NH) {
    MhaCacheCuda *c = cache;
    // qkv (B,T,3C) = inp @ c_attn_w^T + c_attn_b
    linear_forward_cuda(c->qkv, inp, c_attn_w, c_attn_b, B * T, C, 3 * C);
    attend_cuda(c, key_mask, causal, B, T, C, NH);
    linear_forward_cuda(out, c->y, c_proj_w, c_proj_b, B * T, C, C);
}

void mha_backward_set_cuda(float *dinp, float *dc_attn_w, float *dc_attn_b,
                           float *dc_proj_w, float *dc_proj_b,
                           MhaScratchCuda *scratch, const float *dout,
                           const MhaCacheCuda *cache, const float *inp,
                           const float *c_attn_w, const float *c_proj_w,
                           int B, int T, int C, int NH) {
    MhaScratchCuda *s = scratch;
    const MhaCacheCuda *c = cache;
    // out = y @ c_proj_w^T + c_proj_b (dy set, not added to: no clearing)
    linear_backward_set_cuda(s->dy, dc_proj_w, dc_proj_b, dout, c->y,
                             c_proj_w, B * T, C, C);
    // y = the heads' attention over q, k, v, the thirds of qkv
    attend_backward_cuda(s->dqkv, s, s->dy, c, B, T, C, NH);
    // qkv = inp @ c_attn_w^T + c_attn_b (dinp set)
    linear_backward_set_cuda(dinp, dc_attn_w, dc_attn_b, s->dqkv, inp,
                             c_attn_w, B * T, C, 3 * C);
}
//< mha-cuda
