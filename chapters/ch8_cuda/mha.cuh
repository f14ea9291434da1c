// mha.cuh - chapter 2's multi-head attention (mha.h) on the GPU: the
// head split and merge, and the whole layer, forward and backward.
#ifndef CH8_MHA_CUH
#define CH8_MHA_CUH

#include <stdbool.h>
#include <stdint.h>

#include "mha.h"

#ifdef __cplusplus
extern "C" {
#endif

// As heads_split and heads_merge; device pointers.
void heads_split_cuda(float *out,        // (B, NH, T, HS)
                      const float *inp,  // (B, T, ld)
                      int ld, int B, int T, int C, int NH);
void heads_merge_cuda(float *out,        // (B, T, ld), channels 0..C-1
                      const float *inp,  // (B, NH, T, HS)
                      int ld, int B, int T, int C, int NH);

// What mha_forward_cuda keeps for the backward pass: MhaCache's views, on
// the device, except that the (T, T) weights are optional. With att NULL
// the layer takes the fused path (flash.cu): no weights are stored, only
// the log-sum-exp of each query row, in lse, and the heads are copied
// out of qkv into q, k and v, which the backward pass reads; qkv is then
// work space only the forward pass uses, so the layers of a model share
// one. With att, the products read the heads inside qkv (mha.cu), q, k,
// v and yh are unused (NULL), and each layer keeps its own qkv.
typedef struct {
    float *qkv;        // (B, T, 3C)     c_attn's output
    float *q, *k, *v;  // (B, NH, T, HS) the heads (fused path)
    float *att;        // (B, NH, T, T)  weights, or NULL: the fused path
    float *lse;        // (B, NH, T)     the fused path's row statistics
    float *yh;         // (B, NH, T, HS) each head's output (fused path)
    float *y;          // (B, T, C)      merged: c_proj's input
    // bf16 mode, (T, T) path: the bf16 copies of qkv, att and y, kept for
    // the backward pass (gemm_bf16_pin), or NULL
    uint16_t *qkv16, *att16, *y16;
    int block;         // the forward pass's causal blocks (attention.cuh)
} MhaCacheCuda;

// MhaScratch's views on the device (datt for the (T, T) path only; dyh,
// dq, dk and dv for the fused path only).
typedef struct {
    float *dy, *dyh, *dq, *dk, *dv, *datt, *dqkv;
} MhaScratchCuda;

// Rows per causal block of the (T, T) path's products (attention.cuh):
// 128 unless set; 0 computes the whole T x T square.
void mha_set_causal_block(int rows);
int mha_causal_block(void);

// As mha_forward and mha_backward (chapter 2), device pointers. The fused
// path takes no key_mask (a GPT has none): pass NULL.
void mha_forward_cuda(float *out, MhaCacheCuda *cache, const float *inp,
                      const float *c_attn_w, const float *c_attn_b,
                      const float *c_proj_w, const float *c_proj_b,
                      const int *key_mask, bool causal, int B, int T, int C,
                      int NH);
// mha_backward_set_cuda sets dinp to its gradient instead of adding to
// it (no clearing first); the weights' gradients are added to, as on the
// CPU.
void mha_backward_set_cuda(float *dinp, float *dc_attn_w, float *dc_attn_b,
                           float *dc_proj_w, float *dc_proj_b,
                           MhaScratchCuda *scratch, const float *dout,
                           const MhaCacheCuda *cache, const float *inp,
                           const float *c_attn_w, const float *c_proj_w,
                           int B, int T, int C, int NH);

#ifdef __cplusplus
}
#endif

#endif
