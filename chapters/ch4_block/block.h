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
// mlp chapter 3's feed-forward network (ffn_forward) with the activation
// the caller names (a GPT's is exact GELU, the 2017 paper's encoder's
// ReLU), ln this chapter's LayerNorm. Each Pre-LN sub-layer is wrapped the
// same way, x + dropout(f(ln(x))) (residual.h), and each wrapped
// sub-layer is one call, attn_sublayer_* and ffn_sublayer_* below, which
// chapter 7's decoder layer calls too. With dropout p > 0 the outputs of
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

// The two Pre-LN sub-layers of a block, each with its wrapper (residual.h)
// in one call: the weights are its LayerNorm's (ln_*) and its function's,
// and out must not be x. Chapter 7's decoder layer is built from the same
// two (and a third, its cross-attention).
//
// out = x + dropout(attn(ln(x))), attn chapter 2's self-attention with
// the masks of block_forward. Returns 0, or -1 with a message.
int attn_sublayer_forward(float *out,            // (B, T, C)
                          Sublayer *s,           // the wrapper's cache
                          MhaCache *attn,        // the attention's
                          const float *x,        // (B, T, C)
                          const float *ln_w,     // (C,)
                          const float *ln_b,     // (C,) or NULL
                          const float *c_attn_w, // (3C, C)
                          const float *c_attn_b, // (3C,) or NULL
                          const float *c_proj_w, // (C, C)
                          const float *c_proj_b, // (C,) or NULL
                          const int *key_mask,   // (B, T) or NULL
                          bool causal, float p, Rng *rng,
                          int B, int T, int C, int NH, Error *err);

// out = x + dropout(mlp(ln(x))), mlp chapter 3's FFN with activation act.
int ffn_sublayer_forward(float *out,            // (B, T, C)
                         Sublayer *s,           // the wrapper's cache
                         FfnCache *mlp,         // the FFN's
                         const float *x,        // (B, T, C)
                         const float *ln_w,     // (C,)
                         const float *ln_b,     // (C,) or NULL
                         const float *c_fc_w,   // (F, C)
                         const float *c_fc_b,   // (F,) or NULL
                         const float *c_proj_w, // (C, F)
                         const float *c_proj_b, // (C,) or NULL
                         Activation act, float p, Rng *rng,
                         int B, int T, int C, int F, Error *err);

// Their backward passes, after the forward call with the same arguments:
// dx += the gradient of x, by the skip and through f and the norm, and
// the gradients d* += (a bias's NULL where the bias is). dy and dnorm are
// work space of B * T * C floats each (the gradients of f's output and
// input), overwritten.
void attn_sublayer_backward(float *dx,             // (B, T, C)
                            float *dln_w, float *dln_b,
                            float *dc_attn_w, float *dc_attn_b,
                            float *dc_proj_w, float *dc_proj_b,
                            float *dy, float *dnorm, MhaScratch *scratch,
                            const float *dout,     // (B, T, C)
                            const Sublayer *s, const MhaCache *attn,
                            const float *x,        // (B, T, C)
                            const float *ln_w, const float *c_attn_w,
                            const float *c_proj_w,
                            int B, int T, int C, int NH);
void ffn_sublayer_backward(float *dx,             // (B, T, C)
                           float *dln_w, float *dln_b,
                           float *dc_fc_w, float *dc_fc_b,
                           float *dc_proj_w, float *dc_proj_b,
                           float *dy, float *dnorm, FfnScratch *scratch,
                           const float *dout,     // (B, T, C)
                           const Sublayer *s, const FfnCache *mlp,
                           const float *x,        // (B, T, C)
                           const float *ln_w, const float *c_fc_w,
                           const float *c_proj_w,
                           int B, int T, int C, int F);

//> block-api
// The Pre-LN block's forward pass. out must not be inp. The masks are
// the attention's (chapter 2): key_mask marks padding (NULL: none), and
// causal lets each token see only itself and earlier ones (a decoder, a
// GPT) or, when false, every token (an encoder). act is the FFN's
// activation (chapter 3): GELU_EXACT in the GPT, RELU in chapter 7's
// encoder. dropout_p = 0 (evaluation) draws nothing and rng may be NULL.
// Returns 0, or -1 with a message when a size is bad or does not fit the
// cache, or dropout_p is not in [0, 1).
int block_forward(float *out,               // (B, T, C)
                  BlockCache *cache,        // filled in for the backward
                  const float *inp,         // (B, T, C)
                  const BlockWeights *w,
                  const int *key_mask,      // (B, T) 1 = real, or NULL
                  bool causal, Activation act, float dropout_p, Rng *rng,
                  int B, int T, int C, int NH, int F, Error *err);

// Its backward pass, after a block_forward with the same arguments that
// returned 0: accumulates (+=) into dinp and every gradient of g (the
// bias gradients are NULL exactly where the biases are). The activation
// is the one the forward pass used, which its FfnCache records.
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
               Activation act,           // block_forward's
               int B, int C, int NH, int F, Error *err);
//< block-step-api

// The same pair as block_forward/backward for the Post-LN block (same
// weights, same cache type; the masks and act as in block_forward).
int block_postln_forward(float *out, BlockCache *cache, const float *inp,
                         const BlockWeights *w, const int *key_mask,
                         bool causal, Activation act, float dropout_p,
                         Rng *rng, int B, int T, int C, int NH, int F,
                         Error *err);
void block_postln_backward(float *dinp, const BlockWeights *g,
                           BlockScratch *scratch, const float *dout,
                           const BlockCache *cache, const float *inp,
                           const BlockWeights *w, int B, int T, int C,
                           int NH, int F);

// ---- memory ----------------------------------------------------------------

// What one block's forward pass keeps for its backward pass, sized for
// B x T tokens. One per layer. It holds any batch (B', T') of T' <= T and
// B'T' <= BT (common/layout.h): batches of short sequences have more rows
// (16 x 4 in a cache for 4 x 16), packed at the front of each view.
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
    bool shared_masks;    // block_cache_share_masks: p must be 0
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

// Without dropout the two dropout masks hold only ones, so the layers of
// a model can share one pair: c gives up its own and uses owner's, which
// is right only for a model that never uses dropout: a forward pass with
// dropout_p > 0 on such a cache then fails. owner has the same sizes and
// must outlive c's use. A GPT's layers share layer 0's.
void block_cache_share_masks(BlockCache *c, const BlockCache *owner);
int block_scratch_alloc(BlockScratch *s, int B, int T, int C, int NH, int F,
                        Error *err);
void block_scratch_free(BlockScratch *s);
int block_step_alloc(BlockStep *s, int B, int T, int C, int NH, int F,
                     Error *err);
void block_step_free(BlockStep *s);

// The floats each of these allocates, from the same tables, without
// allocating. shares_masks: the cache will be passed to
// block_cache_share_masks as c.
size_t block_cache_floats(int B, int T, int C, int NH, int F,
                          bool shares_masks);
size_t block_scratch_floats(int B, int T, int C, int NH, int F);
size_t block_step_floats(int B, int T, int C, int NH, int F);

#endif
