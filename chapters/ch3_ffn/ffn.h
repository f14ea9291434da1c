// ffn.h - the position-wise feed-forward network, as nanoGPT's MLP:
//
//   h   = inp @ c_fc_w^T + c_fc_b      (B,T,F)  expand: C -> F channels
//   a   = GELU(h)                      (B,T,F)
//   out = a @ c_proj_w^T + c_proj_b    (B,T,C)  project back: F -> C
//
// Every token goes through the same two layers on its own: no token sees
// another, so B and T only count the rows (B * T of them). F is usually
// 4C. act picks the activation: GELU_EXACT, GELU_TANH, or RELU (the
// original Transformer's, which chapter 7's decoder uses). Dropout is not
// part of the layer: the residual wrapper around it applies it (chapter
// 4's sublayer_add), the same way for every sub-layer.
// Weights are stored as PyTorch stores them (mlp.c_fc.weight (F, C),
// mlp.c_proj.weight (C, F)); the biases may be NULL (nanoGPT's bias=False).
//
// Memory is allocated once, outside the hot path: an FfnCache per layer
// (what the backward pass needs) and one FfnScratch that every layer's
// backward pass can share, since layers run their backward passes one
// after the other.
#ifndef CH3_FFN_H
#define CH3_FFN_H

#include <stdbool.h>
#include <stddef.h>

#include "activation.h"
#include "error.h"

// What the forward pass keeps for the backward pass, and the backward
// pass's work space; both are defined with their allocation, at the end.
typedef struct FfnCache FfnCache;
typedef struct FfnScratch FfnScratch;

//> ffn-api
// The forward pass. Returns 0, or -1 with a message when a size is bad or
// does not fit the cache (T > c->T, B*T > c->B*c->T, another C or F).
int ffn_forward(float *out,             // (B, T, C)
                FfnCache *cache,        // filled in for the backward pass
                const float *inp,       // (B, T, C)
                const float *c_fc_w,    // (F, C)
                const float *c_fc_b,    // (F,) or NULL
                const float *c_proj_w,  // (C, F)
                const float *c_proj_b,  // (C,) or NULL
                Activation act, int B, int T, int C, int F, Error *err);

// The backward pass, after an ffn_forward with the same arguments that
// returned 0: accumulates (+=) into dinp (skipped when NULL) and the weight
// gradients (a bias gradient may be NULL when the layer has no bias).
void ffn_backward(float *dinp,           // (B, T, C) or NULL
                  float *dc_fc_w,        // (F, C)
                  float *dc_fc_b,        // (F,) or NULL
                  float *dc_proj_w,      // (C, F)
                  float *dc_proj_b,      // (C,) or NULL
                  FfnScratch *scratch,   // work space, overwritten
                  const float *dout,     // (B, T, C)
                  const FfnCache *cache, // from ffn_forward
                  const float *inp,      // (B, T, C)
                  const float *c_fc_w,   // (F, C)
                  const float *c_proj_w, // (C, F)
                  int B, int T, int C, int F);
//< ffn-api

// ---- memory ----------------------------------------------------------------

// What the forward pass keeps, for B x T tokens of C channels and F
// hidden units. One allocation, named views. Any batch of at most B*T
// tokens and T positions fits (16 x 4 in a cache for 4 x 16), packed at
// the front of each view; the scratch likewise.
struct FfnCache {
    int B, T, C, F;    // the sizes it was allocated for
    float *h;          // (B, T, F)  c_fc's output, GELU's input
    float *a;          // (B, T, F)  GELU's output, c_proj's input
    Activation act;    // the activation of the last forward pass, which
                       // its backward pass must use too
    float *mem;        // the allocation of h and a
};

// Work space of the backward pass.
struct FfnScratch {
    int B, T, C, F;
    float *da;         // (B, T, F)  dL/da
    float *dh;         // (B, T, F)  dL/dh
    float *mem;
};

// 0, or -1 with a message for bad sizes (below 1, or too large). *_free
// releases and clears; freeing a zeroed struct is fine. *_floats: what
// the allocation holds, for a memory report or a check before allocating.
int ffn_cache_alloc(FfnCache *c, int B, int T, int C, int F, Error *err);
void ffn_cache_free(FfnCache *c);
size_t ffn_cache_floats(int B, int T, int C, int F);
int ffn_scratch_alloc(FfnScratch *s, int B, int T, int C, int F,
                      Error *err);
void ffn_scratch_free(FfnScratch *s);
size_t ffn_scratch_floats(int B, int T, int C, int F);

// Parameters of one FFN: two weight matrices, plus the biases if any.
size_t ffn_param_count(int C, int F, bool bias);

#endif
