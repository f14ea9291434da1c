// ffn.h - the position-wise feed-forward network, as nanoGPT's MLP:
//
//   h   = inp @ c_fc_w^T + c_fc_b      (B,T,F)  expand: C -> F channels
//   a   = GELU(h)                      (B,T,F)
//   y   = a @ c_proj_w^T + c_proj_b    (B,T,C)  project back: F -> C
//   out = dropout(y, p)                (B,T,C)
//
// Every token goes through the same two layers on its own: no token sees
// another, so B and T only count the rows (B * T of them). F is usually
// 4C. Weights are stored as PyTorch stores them (mlp.c_fc.weight (F, C),
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
#include "rng.h"

// What the forward pass keeps, for at most B x T tokens of C channels and
// F hidden units. One allocation, named views.
typedef struct {
    int B, T, C, F;    // the sizes it was allocated for
    float *h;          // (B, T, F)  c_fc's output, GELU's input
    float *a;          // (B, T, F)  GELU's output, c_proj's input
    float *mask;       // (B, T, C)  dropout mask, 0 or 1/(1-p)
    GeluKind gelu;     // the GELU and the dropout p of the last forward
    float dropout_p;   // pass, which its backward pass must use too
    float *mem;        // the allocation of h and a
    float *tmp;        // that of mask (NULL when shared)
} FfnCache;

// Work space of the backward pass.
typedef struct {
    int B, T, C, F;
    float *dy;         // (B, T, C)  dL/dy, y the output before dropout
    float *da;         // (B, T, F)  dL/da
    float *dh;         // (B, T, F)  dL/dh
    float *mem;
} FfnScratch;

// 0, or -1 with a message for bad sizes (below 1, or too large). *_free
// releases and clears; freeing a zeroed struct is fine.
int ffn_cache_alloc(FfnCache *c, int B, int T, int C, int F, Error *err);

// Without dropout the mask is all ones and read by nobody but the layer's
// own backward pass, so the layers of a model that never uses dropout can
// share one: c gives up its mask and uses owner's (same sizes, outliving
// c's use). block_cache_share (chapter 4) does this for a GPT.
void ffn_cache_share_mask(FfnCache *c, const FfnCache *owner);
void ffn_cache_free(FfnCache *c);
int ffn_scratch_alloc(FfnScratch *s, int B, int T, int C, int F,
                      Error *err);
void ffn_scratch_free(FfnScratch *s);

// Parameters of one FFN: two weight matrices, plus the biases if any.
size_t ffn_param_count(int C, int F, bool bias);

//> ffn-api
// The forward pass. dropout_p = 0 (evaluation) makes dropout the identity
// and rng may then be NULL; in training, dropout draws B*T*C numbers from
// rng (see dropout.h). Returns 0, or -1 with a message when a size is bad,
// does not fit the cache (B > c->B, T > c->T, another C or F), or
// dropout_p is not in [0, 1).
int ffn_forward(float *out,             // (B, T, C)
                FfnCache *cache,        // filled in for the backward pass
                const float *inp,       // (B, T, C)
                const float *c_fc_w,    // (F, C)
                const float *c_fc_b,    // (F,) or NULL
                const float *c_proj_w,  // (C, F)
                const float *c_proj_b,  // (C,) or NULL
                GeluKind gelu, float dropout_p, Rng *rng,
                int B, int T, int C, int F, Error *err);

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

#endif
