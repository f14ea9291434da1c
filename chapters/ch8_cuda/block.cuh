// block.cuh - chapter 4's Pre-LN Transformer block (block.h) on the GPU.
#ifndef CH8_BLOCK_CUH
#define CH8_BLOCK_CUH

#include <stdbool.h>
#include <stdint.h>

#include "block.h"     // BlockWeights: the same views, device pointers
#include "ffn.cuh"
#include "mha.cuh"
#include "residual.h"  // Sublayer: the same views, device pointers

#ifdef __cplusplus
extern "C" {
#endif

// BlockCache's views on the device. sa.mask and ff.mask are NULL in a
// model without dropout (nothing is dropped, so there is no mask).
typedef struct {
    Sublayer sa, ff;      // ln_1 / ln_2: output, statistics, dropout mask
    MhaCacheCuda attn;
    FfnCacheCuda mlp;
    float *res1;          // (B, T, C) the stream after the attention's add
    uint16_t *sa_norm16, *ff_norm16;   // bf16 mode: sa.norm's, ff.norm's
                                       // copies, kept; or NULL
    float dropout_p;      // of the last forward pass
    Activation act;       // the FFN's GELU in the last forward pass
} BlockCacheCuda;

// BlockScratch's views on the device: one serves every layer.
typedef struct {
    float *dres, *dsub, *dy;   // (B, T, C)
    MhaScratchCuda attn;
    FfnScratchCuda mlp;
} BlockScratchCuda;

// As block_forward and block_backward (causal: the GPT's block; act is
// GELU_EXACT or GELU_TANH, and the backward pass uses the one its
// forward pass did, as on the CPU), device pointers. Dropout draws from
// the counter-based generator of dropout.cu: site s of the pass (0 the
// attention's output, 1 the FFN's) uses the counters offset + s * B*T*C
// onwards, under seed.
void block_forward_cuda(float *out, BlockCacheCuda *cache, const float *inp,
                        const BlockWeights *w, Activation act,
                        float dropout_p, uint64_t seed, uint64_t offset,
                        int B, int T, int C, int NH, int F);
// block_backward_set_cuda sets dinp to its gradient instead of adding
// to it (no clearing first); the weights' gradients in g are added to,
// as on the CPU.
void block_backward_set_cuda(float *dinp, const BlockWeights *g,
                             BlockScratchCuda *scratch, const float *dout,
                             const BlockCacheCuda *cache, const float *inp,
                             const BlockWeights *w, int B, int T, int C,
                             int NH, int F);

// Whether the two functions above take their fused forms (on, the
// default) or the plain ones, call for call block.c's (off): the same
// results to rounding, with fewer passes over memory (block.cu). For
// the whole program, as gemm_set_bf16; the caches of the two forms
// differ (the fused one keeps c_fc's output without its bias), so it is
// set before a forward pass and kept until its backward pass.
void block_set_fused(bool on);
bool block_fused(void);

#ifdef __cplusplus
}
#endif

#endif
