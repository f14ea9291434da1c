// decoder.h - one layer of the Transformer's decoder, Pre-LN (as the
// Annotated Transformer builds it): three sub-layers, each wrapped by
// chapter 4's Sublayer, x + dropout(f(norm(x))):
//
//   x = x + dropout(self_attn(ln_1(x)))            causal, target padding
//   x = x + dropout(cross_attn(ln_2(x), memory))   source padding
//   x = x + dropout(mlp(ln_3(x)))
//
// self_attn is chapter 2's multi-head attention (mha_forward, causal, the
// target's key padding mask), cross_attn this chapter's (xattn.h: queries
// from the decoder, keys and values from the encoder's output `memory`),
// mlp chapter 3's FFN, with ReLU as in the 2017 paper or a GELU. The
// memory is the output of the whole encoder, the same for every decoder
// layer. Dropout drops each sub-layer's output before the residual add;
// attention weights are not dropped.
//
// The weights are views, as chapter 4's BlockWeights: pointers that a
// model points into its one parameter buffer with decoder_weights_point;
// the gradients use the same struct. A NULL bias means none.
#ifndef CH7_DECODER_H
#define CH7_DECODER_H

#include <stdbool.h>
#include <stddef.h>

#include "block.h"
#include "error.h"
#include "ffn.h"
#include "mha.h"
#include "residual.h"
#include "rng.h"
#include "xattn.h"

//> decoder-weights
typedef struct {
    float *ln_1_w, *ln_1_b;                                // (C,), (C,)
    float *self_attn_c_attn_w, *self_attn_c_attn_b;        // (3C, C), (3C,)
    float *self_attn_c_proj_w, *self_attn_c_proj_b;        // (C, C), (C,)
    float *ln_2_w, *ln_2_b;                                // (C,), (C,)
    float *cross_attn_q_proj_w, *cross_attn_q_proj_b;      // (C, C), (C,)
    float *cross_attn_kv_proj_w, *cross_attn_kv_proj_b;    // (2C, C), (2C,)
    float *cross_attn_out_proj_w, *cross_attn_out_proj_b;  // (C, C), (C,)
    float *ln_3_w, *ln_3_b;                                // (C,), (C,)
    float *mlp_c_fc_w, *mlp_c_fc_b;                        // (F, C), (F,)
    float *mlp_c_proj_w, *mlp_c_proj_b;                    // (C, F), (C,)
} DecoderWeights;
//< decoder-weights

// The 20 tensors of a decoder layer in this order, with their names (the
// PyTorch reference module's, tests/reference/gen_ch7.py):
//   ln_1.weight ln_1.bias
//   self_attn.c_attn.weight self_attn.c_attn.bias       (3C, C) (3C,)
//   self_attn.c_proj.weight self_attn.c_proj.bias       (C, C) (C,)
//   ln_2.weight ln_2.bias
//   cross_attn.q_proj.weight cross_attn.q_proj.bias     (C, C) (C,)
//   cross_attn.kv_proj.weight cross_attn.kv_proj.bias   (2C, C) (2C,)
//   cross_attn.out_proj.weight cross_attn.out_proj.bias (C, C) (C,)
//   ln_3.weight ln_3.bias
//   mlp.c_fc.weight mlp.c_fc.bias                       (F, C) (F,)
//   mlp.c_proj.weight mlp.c_proj.bias                   (C, F) (C,)
// Linear weights are (out, in), as PyTorch's. Without bias the 10 biases
// are absent. Chapter 4's BlockTensor describes each one.
#define DECODER_MAX_TENSORS 20

// Fills out[] with the layer's tensors (NULL biases skipped) and returns
// how many: 20 with biases, 10 without.
int decoder_tensors(BlockTensor out[DECODER_MAX_TENSORS],
                    const DecoderWeights *w, int C, int F);

// Parameters of one layer: 8C^2 + 2CF weights, 3C of LayerNorm weight,
// and with bias 3C + C + C + 2C + C + F + C + 3C more.
size_t decoder_param_count(int C, int F, bool bias);

// Points every view of w at consecutive pieces of buf, in the order
// above (the biases NULL without bias), and returns buf +
// decoder_param_count(C, F, bias).
float *decoder_weights_point(DecoderWeights *w, float *buf, int C, int F,
                             bool bias);

// The caches, defined in the memory section at the bottom.
typedef struct DecoderCache DecoderCache;      // one layer's forward pass
typedef struct DecoderScratch DecoderScratch;  // the backward's work space
typedef struct DecoderStep DecoderStep;        // decoding, one position

//> decoder-api
// The forward pass of one layer over T target positions that attend to Tk
// source positions. out must not be x. act: RELU (the paper's FFN) or a
// GELU. dropout_p = 0 draws nothing and rng may be NULL. Returns 0, or -1
// with a message when a size is bad or does not fit the cache, or
// dropout_p is not in [0, 1).
int decoder_forward(float *out,              // (B, T, C)
                    DecoderCache *cache,     // filled in for the backward
                    const float *x,          // (B, T, C)
                    const float *memory,     // (B, Tk, C)
                    const DecoderWeights *w,
                    const int *tgt_mask,     // (B, T) 1 = real, or NULL
                    const int *src_mask,     // (B, Tk) 1 = real, or NULL
                    Activation act, float dropout_p, Rng *rng,
                    int B, int T, int Tk, int C, int NH, int F, Error *err);

// Its backward pass, after a decoder_forward with the same arguments that
// returned 0: accumulates (+=) into dx, dmemory and every gradient of g.
// dmemory collects the cross-attention's share; it must accumulate over
// all the decoder's layers (they read the same memory) before the
// encoder's backward pass runs.
void decoder_backward(float *dx,                  // (B, T, C)
                      float *dmemory,             // (B, Tk, C)
                      const DecoderWeights *g,    // gradients, +=
                      DecoderScratch *scratch,    // work space
                      const float *dout,          // (B, T, C)
                      const DecoderCache *cache,  // from decoder_forward
                      const float *x,             // (B, T, C)
                      const float *memory,        // (B, Tk, C)
                      const DecoderWeights *w,
                      int B, int T, int Tk, int C, int NH, int F);
//< decoder-api

//> decoder-step-api
// One new target position of B sequences through the layer, for
// decoding: self-attention over the positions cached in s->self_kv (it
// appends its own, chapter 2's mha_step), cross-attention against the
// source in s->cross_kv (filled once per source by xattn_kv_fill with
// the layer's kv_proj weights), no dropout. What decoder_forward gives at
// that position. Returns 0, or -1 with a message when a cache is full or
// a size does not fit.
int decoder_step(float *out,               // (B, C)
                 DecoderStep *s,           // the caches, and work space
                 const float *x,           // (B, C)
                 const DecoderWeights *w,
                 const int *tgt_mask,      // (B, s->self_kv.T) or NULL
                 const int *src_mask,      // (B, s->cross_kv.len) or NULL
                 Activation act, int B, int C, int NH, int F, Error *err);
//< decoder-step-api

// ---- memory ----------------------------------------------------------------

// What one layer's forward pass keeps for its backward pass, for B x T
// target and B x Tk source tokens: any batch (B', T', Tk') with T' <= T,
// Tk' <= Tk, B'T' <= BT and B'Tk' <= B Tk fits (common/layout.h), packed
// at the front of every view. The scratch likewise.
struct DecoderCache {
    int B, T, Tk, C, NH, F;
    Sublayer sa, ca, ff;     // the three wrappers: norm outputs and
                             // statistics, dropout masks
    float *res1;             // (B,T,C) the stream after self-attention
    float *res2;             // (B,T,C) after cross-attention
    MhaCache self_attn;
    XattnCache cross_attn;
    FfnCache mlp;
    float *mem;
};

// Work space of the backward pass; one serves every layer.
struct DecoderScratch {
    int B, T, Tk, C, NH, F;
    float *dres1, *dres2;    // (B,T,C) gradients of res1 and res2
    float *dsub;             // (B,T,C) of a sub-layer's input
    float *dy;               // (B,T,C) of a sub-layer's output
    MhaScratch self_attn;
    XattnScratch cross_attn;
    FfnScratch mlp;
    float *mem;
};

// The caches of decoder_step: self-attention's keys and values of up to
// T target positions, cross-attention's of up to Tk source positions,
// and one position's work space.
struct DecoderStep {
    int B, C, F;
    MhaKv self_kv;
    XattnKv cross_kv;
    Sublayer sa, ca, ff;     // (B, 1, C)
    float *res1, *res2;      // (B, C)
    FfnCache mlp;            // (B, 1)
    float *mem;
};

// 0, or -1 with a message for bad sizes (below 1, C not a multiple of NH,
// too large). *_free releases and clears; freeing a zeroed struct is fine.
// *_floats: the floats each allocates, from the same tables.
int decoder_cache_alloc(DecoderCache *c, int B, int T, int Tk, int C, int NH,
                        int F, Error *err);
void decoder_cache_free(DecoderCache *c);
size_t decoder_cache_floats(int B, int T, int Tk, int C, int NH, int F);
int decoder_scratch_alloc(DecoderScratch *s, int B, int T, int Tk, int C,
                          int NH, int F, Error *err);
void decoder_scratch_free(DecoderScratch *s);
size_t decoder_scratch_floats(int B, int T, int Tk, int C, int NH, int F);
int decoder_step_alloc(DecoderStep *s, int B, int T, int Tk, int C, int NH,
                       int F, Error *err);
void decoder_step_free(DecoderStep *s);
size_t decoder_step_floats(int B, int T, int Tk, int C, int NH, int F);

#endif
