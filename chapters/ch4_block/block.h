// block.h - the Transformer block, as nanoGPT's Block, and its Post-LN
// ancestor from "Attention Is All You Need":
//
//   Pre-LN  (GPT-2, nanoGPT):   x = x + attn(ln_1(x))
//                               x = x + mlp(ln_2(x))
//   Post-LN (the 2017 paper):   x = ln_1(x + attn(x))
//                               x = ln_2(x + mlp(x))
//
// attn is chapter 2's multi-head self-attention (mha_forward: causal in a
// GPT, bidirectional in an encoder, with an optional key padding mask),
// mlp chapter 3's feed-forward network with exact GELU (ffn_forward), ln
// this chapter's LayerNorm. Each Pre-LN sub-layer is wrapped the same way,
// x + dropout(f(ln(x))) (residual.h): with dropout p > 0 the outputs of
// attn and mlp are dropped out before the residual add (nanoGPT's
// resid_dropout and the MLP's dropout); attention weights are not.
//
// The weights are views: a BlockWeights holds pointers, which a model
// (chapter 5) points into its one contiguous parameter buffer with
// block_weights_point. Gradients use the same struct, pointed into the
// gradient buffer. A NULL bias means the layer has none (bias=False).
#ifndef CH4_BLOCK_H
#define CH4_BLOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "ffn.h"
#include "mha.h"
#include "residual.h"
#include "rng.h"

//> block-weights
typedef struct {
    float *ln_1_w, *ln_1_b;                // (C,), (C,)
    float *attn_c_attn_w, *attn_c_attn_b;  // (3C, C), (3C,)
    float *attn_c_proj_w, *attn_c_proj_b;  // (C, C), (C,)
    float *ln_2_w, *ln_2_b;                // (C,), (C,)
    float *mlp_c_fc_w, *mlp_c_fc_b;        // (F, C), (F,)
    float *mlp_c_proj_w, *mlp_c_proj_b;    // (C, F), (C,)
} BlockWeights;
//< block-weights

// The 12 tensors of a block in nanoGPT's order, with their names (as in
// "transformer.h.0.<name>") and shapes; the biases are absent with
// bias=False. Checkpoints, tests and the parameter count walk this list.
typedef struct {
    const char *name;   // "ln_1.weight", "attn.c_attn.weight", ...
    float *data;        // the view
    int ndim;           // 1 or 2
    int shape[2];
} BlockTensor;

#define BLOCK_MAX_TENSORS 12

// Fills out[] with the block's tensors (NULL biases skipped) and returns
// how many: 12 with biases, 6 without.
int block_tensors(BlockTensor out[BLOCK_MAX_TENSORS], const BlockWeights *w,
                  int C, int F);

// Parameters of one block: 4C^2 + 2CF weights, 2C of LayerNorm weight,
// and with bias 3C + C + F + C + 2C more.
size_t block_param_count(int C, int F, bool bias);

// Points every view of w at consecutive pieces of buf, in nanoGPT's order
// (the biases NULL without bias), and returns the end: buf +
// block_param_count(C, F, bias).
float *block_weights_point(BlockWeights *w, float *buf, int C, int F,
                           bool bias);

// The caches, defined in the memory section at the bottom.
typedef struct BlockCache BlockCache;      // one layer's forward pass
typedef struct BlockScratch BlockScratch;  // the backward's work space
typedef struct BlockStep BlockStep;        // decoding, one position

//> block-api
// The Pre-LN block's forward pass. out must not be inp. The masks are
// the attention's (chapter 2): key_mask marks padding (NULL: none), and
// causal lets each token see only itself and earlier ones (a decoder, a
// GPT) or, when false, every token (an encoder). dropout_p = 0
// (evaluation) draws nothing and rng may be NULL. Returns 0, or -1 with a
// message when a size is bad or does not fit the cache, or dropout_p is
// not in [0, 1).
int block_forward(float *out,               // (B, T, C)
                  BlockCache *cache,        // filled in for the backward
                  const float *inp,         // (B, T, C)
                  const BlockWeights *w,
                  const int *key_mask,      // (B, T) 1 = real, or NULL
                  bool causal, float dropout_p, Rng *rng,
                  int B, int T, int C, int NH, int F, Error *err);

// Its backward pass, after a block_forward with the same arguments that
// returned 0: accumulates (+=) into dinp and every gradient of g (the
// bias gradients are NULL exactly where the biases are).
void block_backward(float *dinp,              // (B, T, C)
                    const BlockWeights *g,    // gradients, +=
                    BlockScratch *scratch,    // work space, overwritten
                    const float *dout,        // (B, T, C)
                    const BlockCache *cache,  // from block_forward
                    const float *inp,         // (B, T, C)
                    const BlockWeights *w,
                    int B, int T, int C, int NH, int F);
//< block-api

//> block-step-api
// One new position of B sequences through the Pre-LN block, for decoding:
// its attention reads the keys and values of the earlier positions from
// the cache of s (chapter 2's mha_step) and appends its own; no dropout.
// What block_forward computes for the last position of a sequence, one
// position's work instead of the sequence's. Returns 0, or -1 with a
// message when the cache is full or a size does not fit.
int block_step(float *out,               // (B, C) the stream after the block
               BlockStep *s,             // the cache, and work space
               const float *inp,         // (B, C) the stream before it
               const BlockWeights *w,
               const int *key_mask,      // (B, s->kv.T) or NULL
               int B, int C, int NH, int F, Error *err);
//< block-step-api

// The same pair as block_forward/backward for the Post-LN block (same
// weights, same cache type; the masks as in block_forward).
int block_postln_forward(float *out, BlockCache *cache, const float *inp,
                         const BlockWeights *w, const int *key_mask,
                         bool causal, float dropout_p, Rng *rng, int B,
                         int T, int C, int NH, int F, Error *err);
void block_postln_backward(float *dinp, const BlockWeights *g,
                           BlockScratch *scratch, const float *dout,
                           const BlockCache *cache, const float *inp,
                           const BlockWeights *w, int B, int T, int C,
                           int NH, int F);

// ---- memory ----------------------------------------------------------------

// What one block's forward pass keeps for its backward pass, sized for at
// most B x T tokens. One per layer.
struct BlockCache {
    int B, T, C, NH, F;
    Sublayer sa;          // attention's wrapper: ln_1's output and
                          // statistics, the dropout mask of attn's output
    Sublayer ff;          // the FFN's: ln_2 and the mask of mlp's output
                          // (Post-LN: sa.norm holds ln_1's output, ff
                          // ln_2's statistics; ff.norm is unused)
    float *res1;          // (B,T,C) the stream after the attention's add
    float *res2;          // (B,T,C) after the FFN's add (Post-LN only)
    float dropout_p;      // of the last forward pass
    bool shared_masks;    // block_cache_share(.., true): p must be 0
    MhaCache attn;
    FfnCache mlp;
    float *mem;           // the block's own views
    float *masks;         // the allocation of sa.mask and ff.mask (NULL
                          // when shared)
};

// Work space of the backward pass; one serves every layer of a model.
struct BlockScratch {
    int B, T, C, NH, F;
    float *dres;    // (B,T,C) gradient of res1
    float *dsub;    // (B,T,C) gradient of a sub-layer's input
    float *dy;      // (B,T,C) gradient of a sub-layer's output
    MhaScratch attn;
    FfnScratch mlp;
    float *mem;
};

// The cache of block_step: self-attention's keys and values of up to T
// positions of B sequences, and one position's work space.
struct BlockStep {
    int B, C, F;
    MhaKv kv;
    Sublayer sa, ff;      // (B, 1, C)
    float *res1;          // (B, C)
    FfnCache mlp;         // (B, 1)
    float *mem;
};

// 0, or -1 with a message for bad sizes (below 1, C not a multiple of NH,
// too large). *_free releases and clears; freeing a zeroed struct is fine.
int block_cache_alloc(BlockCache *c, int B, int T, int C, int NH, int F,
                      Error *err);
void block_cache_free(BlockCache *c);

// The layers of a model run one after another, so what a layer needs only
// during its own forward pass can be shared: c gives up its qkv and yh
// (mha_cache_share) and uses owner's, and with masks also its two dropout
// masks, which is right only for a model that never uses dropout: a
// forward pass with dropout_p > 0 on such a cache then fails. owner has
// the same sizes and must outlive c's use. A GPT's layers share layer 0's.
void block_cache_share(BlockCache *c, const BlockCache *owner, bool masks);
int block_scratch_alloc(BlockScratch *s, int B, int T, int C, int NH, int F,
                        Error *err);
void block_scratch_free(BlockScratch *s);
int block_step_alloc(BlockStep *s, int B, int T, int C, int NH, int F,
                     Error *err);
void block_step_free(BlockStep *s);

// The floats each of these allocates, from the same tables, without
// allocating. shares / shares_masks: the cache will be passed to
// block_cache_share as c (masks true or false).
size_t block_cache_floats(int B, int T, int C, int NH, int F, bool shares,
                          bool shares_masks);
size_t block_scratch_floats(int B, int T, int C, int NH, int F);
size_t block_step_floats(int B, int T, int C, int NH, int F);

#endif
