// xattn.h - multi-head cross-attention, the decoder's look at the source
// ("encoder-decoder attention" in "Attention Is All You Need"):
//
//   q   = x @ q_proj_w^T + q_proj_b          (B,Tq,C)   from the decoder
//   kv  = memory @ kv_proj_w^T + kv_proj_b   (B,Tk,2C)  from the encoder
//   k, v = the two C-wide halves of kv
//   yh  = attention(q, k, v) in NH heads     (B,NH,Tq,HS)  chapter 2's
//   y   = the heads side by side again       (B,Tq,C)
//   out = y @ out_proj_w^T + out_proj_b      (B,Tq,C)
//
// It is chapter 2's multi-head attention with two differences: queries
// and keys come from two sequences of different lengths (Tq target
// positions, Tk source positions), and it is never causal: every target
// position may read the whole source. The source's padding is hidden by
// the key mask src_mask (B, Tk), 1 = real token, 0 = padding. A source
// that is all padding gives each of its queries all-zero attention
// weights and a zero attention output (attention.h), never a NaN.
//
// Weights are stored as PyTorch stores them: q_proj_w (C, C), kv_proj_w
// (2C, C) with rows 0..C-1 the keys' and C..2C-1 the values' (one fused
// product, as c_attn fuses q, k and v in self-attention), out_proj_w
// (C, C). Every bias may be NULL (no bias).
#ifndef CH7_XATTN_H
#define CH7_XATTN_H

#include <stddef.h>

#include "error.h"

// What the forward pass keeps for the backward pass, the backward pass's
// work space, and the source's keys and values for decoding; all three
// are defined with their allocation, at the end.
typedef struct XattnCache XattnCache;
typedef struct XattnScratch XattnScratch;
typedef struct XattnKv XattnKv;

//> xattn-api
// The forward pass. Returns 0, or -1 with a message when a size is bad or
// does not fit the cache (Tq > c->Tq, Tk > c->Tk, B*Tq > c->B*c->Tq,
// B*Tk > c->B*c->Tk, another C or NH).
int xattn_forward(float *out,               // (B, Tq, C)
                  XattnCache *cache,        // filled in for the backward
                  const float *x,           // (B, Tq, C) the queries' stream
                  const float *memory,      // (B, Tk, C) the encoder's out
                  const float *q_proj_w,    // (C, C)
                  const float *q_proj_b,    // (C,) or NULL
                  const float *kv_proj_w,   // (2C, C)
                  const float *kv_proj_b,   // (2C,) or NULL
                  const float *out_proj_w,  // (C, C)
                  const float *out_proj_b,  // (C,) or NULL
                  const int *src_mask,      // (B, Tk) 1 = real, 0 = pad;
                                            // NULL: every key is real
                  int B, int Tq, int Tk, int C, int NH, Error *err);

// The backward pass, after an xattn_forward with the same arguments that
// returned 0. Accumulates (+=) into dx, dmemory (either skipped when
// NULL) and the weight gradients (a bias gradient may be NULL where the
// bias is). dmemory must accumulate: every decoder layer reads the same
// memory, so its gradient is the sum of all the layers' contributions.
void xattn_backward(float *dx,                // (B, Tq, C) or NULL
                    float *dmemory,           // (B, Tk, C) or NULL
                    float *dq_proj_w,         // (C, C)
                    float *dq_proj_b,         // (C,) or NULL
                    float *dkv_proj_w,        // (2C, C)
                    float *dkv_proj_b,        // (2C,) or NULL
                    float *dout_proj_w,       // (C, C)
                    float *dout_proj_b,       // (C,) or NULL
                    XattnScratch *scratch,    // work space, overwritten
                    const float *dout,        // (B, Tq, C)
                    const XattnCache *cache,  // from xattn_forward
                    const float *x,           // (B, Tq, C)
                    const float *memory,      // (B, Tk, C)
                    const float *q_proj_w,    // (C, C)
                    const float *kv_proj_w,   // (2C, C)
                    const float *out_proj_w,  // (C, C)
                    int B, int Tq, int Tk, int C, int NH);
//< xattn-api

//> xattn-step-api
// Decoding. The memory does not change while a translation is decoded,
// so its keys and values are computed once per source: xattn_kv_fill
// projects B memories of Tk positions into kv (no growing cache, unlike
// self-attention's). xattn_step then runs one new decoder position of
// each of those B sequences against them: out is what xattn_forward gives
// at that position, up to the rounding of a different summation order.
// src_mask: (B, Tk) with the Tk of the fill, or NULL. Return 0, or -1
// with a message when the sizes do not fit kv (or kv was not filled).
int xattn_kv_fill(XattnKv *kv,
                  const float *memory,     // (B, Tk, C)
                  const float *kv_proj_w,  // (2C, C)
                  const float *kv_proj_b,  // (2C,) or NULL
                  int B, int Tk, int C, Error *err);
int xattn_step(float *out,               // (B, C)
               XattnKv *kv,              // the source's keys and values
               const float *x,           // (B, C) the new position
               const float *q_proj_w,    // (C, C)
               const float *q_proj_b,    // (C,) or NULL
               const float *out_proj_w,  // (C, C)
               const float *out_proj_b,  // (C,) or NULL
               const int *src_mask,      // (B, kv->len) or NULL
               int B, int C, int NH, Error *err);
//< xattn-step-api

// ---- memory ----------------------------------------------------------------

// What the forward pass keeps, for B x Tq queries and B x Tk keys of C
// channels in NH heads. One allocation, named views; a forward pass with
// other sizes packs its tensors at the front of each view. The capacity
// is in tokens: (B', Tq', Tk') fits when Tq' <= Tq, Tk' <= Tk, B'Tq' <=
// B Tq and B'Tk' <= B Tk (more rows of shorter sequences); the weights
// then need B'NH Tq'Tk' <= B NH Tq Tk floats. The scratch likewise.
struct XattnCache {
    int B, Tq, Tk, C, NH;  // the sizes it was allocated for
    float *qp;             // (B, Tq, C)      q_proj's output: the
                           //                 queries' heads in its rows
    float *kvp;            // (B, Tk, 2C)     kv_proj's output: the keys'
                           //                 and values' heads
    float *att;            // (B, NH, Tq, Tk) attention weights
    float *y;              // (B, Tq, C)      the heads' outputs side by
                           //                 side: out_proj's input
    float *mem;
};

// Work space of the backward pass (one can serve every layer).
struct XattnScratch {
    int B, Tq, Tk, C, NH;
    float *dy;             // (B, Tq, C)
    float *datt;           // (B, NH, Tq, Tk)
    float *dqp;            // (B, Tq, C)   gradient of q_proj's output
    float *dkvp;           // (B, Tk, 2C)  and of kv_proj's
    float *mem;
};

// The source's keys and values, for up to B sequences of Tk positions,
// and one new position's work space: what xattn_step needs.
struct XattnKv {
    int B, Tk, C, NH;      // the sizes it was allocated for
    int fill_B, len;       // the last fill: sequences and positions (0:
                           // not filled yet)
    float *kvp;            // (B, Tk, 2C)     kv_proj's output
    float *k, *v;          // (B, NH, len, HS) the heads, packed with len
    float *q;              // (B, C)          the new position's query
    float *att;            // (B, NH, Tk)     its attention weights
    float *y;              // (B, C)          the heads' outputs
    float *mem;
};

// 0, or -1 with a message for bad sizes (below 1, C not divisible by NH,
// too large). *_free releases and clears; freeing a zeroed struct is fine.
// *_floats: what the allocation holds, without allocating.
int xattn_cache_alloc(XattnCache *c, int B, int Tq, int Tk, int C, int NH,
                      Error *err);
void xattn_cache_free(XattnCache *c);
size_t xattn_cache_floats(int B, int Tq, int Tk, int C, int NH);
int xattn_scratch_alloc(XattnScratch *s, int B, int Tq, int Tk, int C,
                        int NH, Error *err);
void xattn_scratch_free(XattnScratch *s);
size_t xattn_scratch_floats(int B, int Tq, int Tk, int C, int NH);
int xattn_kv_alloc(XattnKv *kv, int B, int Tk, int C, int NH, Error *err);
void xattn_kv_free(XattnKv *kv);
size_t xattn_kv_floats(int B, int Tk, int C, int NH);

#endif
