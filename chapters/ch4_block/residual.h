// residual.h - the residual connection, and the Pre-LN sub-layer built on
// it (the Annotated Transformer's SublayerConnection):
//
//   out = x + dropout(f(norm(x)))
//
// Every sub-layer of a Transformer has this shape: f is self-attention
// or the FFN (chapters 2 and 3), and in chapter 7 also cross-attention.
// The wrapper owns the norm and the dropout, so each sub-layer gets them
// the same way, and f itself knows nothing of either. In C the wrapper
// comes in two halves around the call of f, because f's arguments differ
// from one sub-layer to the next:
//
//   sublayer_norm(&s, x, ...)          s.norm = norm(x), f's input
//   f(out, ..., s.norm, ...)           f writes its output into out
//   sublayer_add(out, &s, x, p, ...)   out = x + dropout(out)
//
// and the backward pass in the mirrored order:
//
//   df = sublayer_add_backward(dx, dy, dout, &s)   dx += dout; df is f's
//                                                  output's gradient
//   f_backward(dnorm, ..., df, ...)
//   sublayer_norm_backward(dx, ..., dnorm, &s, x, ...)
#ifndef CH4_RESIDUAL_H
#define CH4_RESIDUAL_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "layout.h"
#include "rng.h"

//> residual-api
// The residual connection out = a + b, and its backward pass: the
// gradient reaches both branches unchanged, da += dout and db += dout.
void residual_forward(float *out, const float *a, const float *b, size_t n);
void residual_backward(float *da, float *db, const float *dout, size_t n);
//< residual-api

//> sublayer
// What one sub-layer's wrapper keeps for its backward pass.
typedef struct {
    float *norm;          // (B,T,C) norm(x): the sub-layer's input
    float *mean, *rstd;   // (B,T) the norm's statistics
    float *mask;          // (B,T,C) the dropout mask of its output
    bool dropped;         // the last sublayer_add drew a mask (p > 0);
                          // with p = 0 the mask is neither written nor
                          // read
} Sublayer;
//< sublayer

//> sublayer-api
// s->norm = LayerNorm(x) with weight w and bias b (b may be NULL).
void sublayer_norm(Sublayer *s,
                   const float *x,   // (B, T, C) the residual stream
                   const float *w,   // (C,)
                   const float *b,   // (C,) or NULL
                   int B, int T, int C);

// out = x + dropout(out): the sub-layer's output, in out, joins the
// stream. p = 0 draws nothing (rng may be NULL) and leaves the mask as it
// was. Returns 0, or -1 with a message when p is not in [0, 1).
int sublayer_add(float *out,         // (n,) f's output in, the stream out
                 Sublayer *s,        // its mask is written
                 const float *x,     // (n,) the stream before
                 float p, Rng *rng, size_t n, Error *err);

// The backward pass of sublayer_add: dx += dout (the skip), and the
// gradient of f's output, which it returns: dout itself when the forward
// pass dropped nothing (p = 0), else dout * mask, written (not added)
// into dy.
const float *sublayer_add_backward(float *dx,          // (n,)
                                   float *dy,          // (n,)
                                   const float *dout,  // (n,)
                                   const Sublayer *s, size_t n);

// The backward pass of sublayer_norm: dx += the norm's backward of dnorm
// (the gradient of f's input), and the norm's weight and bias gradients.
void sublayer_norm_backward(float *dx,           // (B, T, C)
                            float *dw,           // (C,)
                            float *db,           // (C,) or NULL
                            const float *dnorm,  // (B, T, C)
                            const Sublayer *s,
                            const float *x,      // (B, T, C)
                            const float *w,      // (C,)
                            int B, int T, int C);
//< sublayer-api

// The size table of a Sublayer's views for B x T tokens (4 slots), for
// the owner's table (common/layout.h). Without its own mask, the mask's
// slot is empty: layers of a model without dropout share one all-ones
// mask (block_cache_share_masks, chapter 4).
int sublayer_slots(Slot t[4], Sublayer *s, int B, int T, int C,
                   bool own_mask);

#endif
