// mha.h - multi-head self-attention, as in nanoGPT's CausalSelfAttention:
//
//   qkv = inp @ c_attn_w^T + c_attn_b    (B,T,3C)  one fused projection
//   q, k, v = the three C-wide thirds of qkv, each split into NH heads of
//             HS = C / NH channels: head h gets channels h*HS .. h*HS+HS-1
//   yh  = attention(q, k, v)             (B,NH,T,HS)  see attention.h
//   y   = the heads side by side again   (B,T,C)
//   out = y @ c_proj_w^T + c_proj_b      (B,T,C)
//
// Weights are stored as PyTorch stores them: c_attn_w (3C, C), c_proj_w
// (C, C); the biases may be NULL (nanoGPT's bias=False).
#ifndef CH2_MHA_H
#define CH2_MHA_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

// Splits the (B,T,C) channels into heads: out[b,h,t,i] = inp[b,t,h*HS+i].
// ld is the distance between the rows of inp: C for a (B,T,C) tensor, 3C
// for one third of qkv (pass qkv, qkv + C or qkv + 2C).
void heads_split(float *out,        // (B, NH, T, HS)
                 const float *inp,  // (B, T, ld), channels 0..C-1 used
                 int ld, int B, int T, int C, int NH);

// The inverse: out[b,t,h*HS+i] = inp[b,h,t,i], rows of out ld apart.
// Channels C..ld-1 of out are left as they are.
void heads_merge(float *out,        // (B, T, ld), channels 0..C-1 written
                 const float *inp,  // (B, NH, T, HS)
                 int ld, int B, int T, int C, int NH);

// What the forward pass keeps for the backward pass, the backward pass's
// work space, and the keys and values a decoding step attends over; all
// three are defined with their allocation, at the end.
typedef struct MhaCache MhaCache;
typedef struct MhaScratch MhaScratch;
typedef struct MhaKv MhaKv;

//> mha-api
// The forward pass. causal: each token sees only itself and earlier ones
// (a decoder); false: every token sees all (an encoder). Returns 0, or -1
// with a message when a size is bad or does not fit the cache (T > c->T,
// B*T > c->B*c->T, or another C or NH: see the memory section).
int mha_forward(float *out,             // (B, T, C)
                MhaCache *cache,        // filled in for the backward pass
                const float *inp,       // (B, T, C)
                const float *c_attn_w,  // (3C, C)
                const float *c_attn_b,  // (3C,) or NULL
                const float *c_proj_w,  // (C, C)
                const float *c_proj_b,  // (C,) or NULL
                const int *key_mask,    // (B, T) 1 = real, 0 = padding;
                                        // NULL: every token is real
                bool causal, int B, int T, int C, int NH, Error *err);

// The backward pass, after an mha_forward with the same arguments that
// returned 0: accumulates (+=) into dinp (skipped when NULL) and the weight
// gradients (a bias gradient may be NULL when the layer has no bias).
void mha_backward(float *dinp,             // (B, T, C) or NULL
                  float *dc_attn_w,        // (3C, C)
                  float *dc_attn_b,        // (3C,) or NULL
                  float *dc_proj_w,        // (C, C)
                  float *dc_proj_b,        // (C,) or NULL
                  MhaScratch *scratch,     // work space, overwritten
                  const float *dout,       // (B, T, C)
                  const MhaCache *cache,   // from mha_forward
                  const float *inp,        // (B, T, C)
                  const float *c_attn_w,   // (3C, C)
                  const float *c_proj_w,   // (C, C)
                  int B, int T, int C, int NH);
//< mha-api

//> mha-step-api
// Decoding with a cache. mha_kv_fill copies the keys and values of the
// first T positions of B sequences from the cache of the last mha_forward
// (over at least B x T tokens); kv->len becomes T. mha_step then runs one new position of each
// sequence: its key and value join kv at position kv->len, its query
// attends over positions 0 .. kv->len (itself included, so causal by
// construction), and kv->len grows by one. out is what mha_forward would
// give at that position, up to the rounding of a different summation
// order. key_mask: (B, kv->T) with rows kv->T apart, or NULL. Return 0,
// or -1 with a message when the sizes do not fit kv or kv is full.
int mha_kv_fill(MhaKv *kv, const MhaCache *cache, int B, int T,
                Error *err);
int mha_step(float *out,             // (B, C)
             MhaKv *kv,              // the cached positions; one is added
             const float *inp,       // (B, C) the new position
             const float *c_attn_w,  // (3C, C)
             const float *c_attn_b,  // (3C,) or NULL
             const float *c_proj_w,  // (C, C)
             const float *c_proj_b,  // (C,) or NULL
             const int *key_mask,    // (B, kv->T) or NULL
             int B, int C, int NH, Error *err);
//< mha-step-api

// ---- memory ----------------------------------------------------------------

// What the forward pass keeps for the backward pass, sized for B x T
// tokens of C channels and NH heads. One allocation, named views. The
// capacity is in tokens: a batch (B', T') with T' <= T and B'T' <= BT
// fits (16 x 4 in a cache for 4 x 16), its tensors packed at the front
// of each view with its own sizes (rows T' apart); the weights att need
// B'NH T'T' <= B NH T T floats, which follows. The scratch likewise.
struct MhaCache {
    int B, T, C, NH;   // the sizes it was allocated for
    int fwd_B, fwd_T;  // those of the last forward pass
    float *qkv;        // (B, T, 3C)     c_attn's output: q, k, v in rows
    float *att;        // (B, NH, T, T)  attention weights, after softmax
    float *y;          // (B, T, C)      the heads side by side: c_proj's
                       //                input
    float *mem;        // the allocation of all three
};

// Work space of the backward pass (one can serve every layer of a model).
struct MhaScratch {
    int B, T, C, NH;
    float *dy;          // (B, T, C)      dL/dy
    float *datt;        // (B, NH, T, T)
    float *dqkv;        // (B, T, 3C)     dq, dk, dv in rows, as qkv
    float *mem;
};

// 0, or -1 with a message for bad sizes (below 1, C not divisible by NH,
// too large). *_free releases and clears; freeing a zeroed struct is fine.
// *_floats: what the allocation holds, for a memory report or a check
// before allocating.
int mha_cache_alloc(MhaCache *c, int B, int T, int C, int NH, Error *err);
void mha_cache_free(MhaCache *c);
size_t mha_cache_floats(int B, int T, int C, int NH);

int mha_scratch_alloc(MhaScratch *s, int B, int T, int C, int NH,
                      Error *err);
void mha_scratch_free(MhaScratch *s);
size_t mha_scratch_floats(int B, int T, int C, int NH);

// B sequences' keys and values, up to T positions each, and one new
// position's work space: what mha_step needs.
struct MhaKv {
    int B, T, C, NH;    // the sizes it was allocated for
    int len;            // positions held (the same for every sequence)
    float *k, *v;       // (B, NH, T, HS) positions 0 .. len-1 filled
    float *qkv;         // (B, 3C)        the new position's projection
    float *q;           // (B, NH, HS)    its queries
    float *att;         // (B, NH, T)     its attention weights
    float *yh;          // (B, NH, HS)    each head's output
    float *y;           // (B, C)         the heads merged
    float *mem;
};

int mha_kv_alloc(MhaKv *kv, int B, int T, int C, int NH, Error *err);
void mha_kv_free(MhaKv *kv);
size_t mha_kv_floats(int B, int T, int C, int NH);

#endif
