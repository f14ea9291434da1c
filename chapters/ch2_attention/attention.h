// attention.h - softmax, and scaled dot-product attention with its masks.
//
// Attention for one head, queries Q (Tq, HS), keys K (Tk, HS), values
// V (Tk, HS):
//
//   scores = Q K^T / sqrt(HS)               (Tq, Tk)
//   att    = softmax of each row of scores, over the keys the masks allow
//   out    = att V                          (Tq, HS)
//
// The functions here run B * NH such heads at once, laid out
// (B, NH, T, HS) as after nanoGPT's view + transpose (see mha.h).
//
// Masks. Key s is visible to query t when both of these hold:
//   causal:   s <= t + (Tk - Tq)   (bottom-right aligned: query t sits at
//             position t + Tk - Tq of the keys, so with Tq == Tk this is
//             s <= t, and a single query of a KV cache sees every key)
//   key_mask: key_mask[b, s] != 0  (0 marks padding)
// Hidden keys get a weight of exactly 0. A row with no visible key at all
// (every key padding, say) gets all-zero weights and a zero output: a
// defined value instead of the NaN of a softmax over -inf.
#ifndef CH2_ATTENTION_H
#define CH2_ATTENTION_H

#include <stdbool.h>

#include "error.h"

// out[n, :] = softmax(inp[n, :]) for each of the N rows of D values,
// computed stably (the row's maximum is subtracted before exp). out may be
// the same array as inp.
void softmax_forward(float *out,        // (N, D)
                     const float *inp,  // (N, D)
                     int N, int D);

// dinp += the softmax's Jacobian-vector product, row by row:
//   dinp[i] += out[i] * (dout[i] - sum_j dout[j] * out[j])
// where out is what softmax_forward returned.
void softmax_backward(float *dinp,        // (N, D)
                      const float *dout,  // (N, D)
                      const float *out,   // (N, D)
                      int N, int D);

//> attention-api
// Scaled dot-product attention of B * NH heads. Returns 0, or -1 with a
// message when a size is below 1 or the tensors would be too large.
int attention_forward(float *out,           // (B, NH, Tq, HS)
                      float *att,           // (B, NH, Tq, Tk) weights, kept
                                            // for the backward pass
                      const float *q,       // (B, NH, Tq, HS)
                      const float *k,       // (B, NH, Tk, HS)
                      const float *v,       // (B, NH, Tk, HS)
                      const int *key_mask,  // (B, Tk) 1 = real, 0 = padding;
                                            // NULL: every key is real
                      bool causal,
                      int B, int NH, int Tq, int Tk, int HS, Error *err);

// Accumulates (+=) dq, dk, dv given dout = dL/dout, after an
// attention_forward with the same sizes that returned 0. The masks are
// not needed again: they live on as the zeros of att. datt is scratch
// space, overwritten.
void attention_backward(float *dq,          // (B, NH, Tq, HS)
                        float *dk,          // (B, NH, Tk, HS)
                        float *dv,          // (B, NH, Tk, HS)
                        float *datt,        // (B, NH, Tq, Tk) scratch
                        const float *dout,  // (B, NH, Tq, HS)
                        const float *att,   // (B, NH, Tq, Tk)
                        const float *q,     // (B, NH, Tq, HS)
                        const float *k,     // (B, NH, Tk, HS)
                        const float *v,     // (B, NH, Tk, HS)
                        int B, int NH, int Tq, int Tk, int HS);
//< attention-api

//> heads-layout
// Where the heads live. Row t of head h of sequence b starts
//   b * batch + h * head + t * ld
// floats from the array's start. The (B, NH, T, HS) above is one layout;
// a linear layer's output (B, T, 3C), where q, k and v are column ranges
// of one row per token, is another: the products can read the heads
// where they are instead of copying them out first (mha.c).
typedef struct {
    int ld;                 // floats from one row of a head to the next
    long long head, batch;  // from one head, one sequence, to the next
} HeadsLayout;

// (B, NH, T, HS), each head's T rows of HS floats one after another.
HeadsLayout heads_packed(int NH, int T, int HS);
// (B, T, ld): head h is columns h * HS .. h * HS + HS - 1 of each row.
HeadsLayout heads_in_rows(int T, int ld, int HS);

// attention_forward and attention_backward with each array in its own
// layout: q and dq in lq; k, v, dk and dv in lkv; out and dout in lo.
// att and datt are (B, NH, Tq, Tk), as above. The backward pass adds into
// dq, dk and dv when accumulate, else sets them (they need no clearing
// first). Arrays of different heads must not overlap, except that the
// three thirds of one (B, T, 3C) row may hold q, k and v.
int attention_forward_strided(float *out, HeadsLayout lo, float *att,
                              const float *q, HeadsLayout lq,
                              const float *k, const float *v,
                              HeadsLayout lkv, const int *key_mask,
                              bool causal, int B, int NH, int Tq, int Tk,
                              int HS, Error *err);
void attention_backward_strided(float *dq, float *dk, float *dv,
                                float *datt, const float *dout,
                                const float *att, const float *q,
                                const float *k, const float *v,
                                HeadsLayout lq, HeadsLayout lkv,
                                HeadsLayout lo, bool accumulate, int B,
                                int NH, int Tq, int Tk, int HS);
//< heads-layout

// One query per head against a KV cache, for decoding: each of the B * NH
// heads has room for T positions, of which the first Tk are keys (heads
// lie T positions apart, unlike attention_forward's Tk). The result is
// attention_forward's with Tq = 1 and those Tk keys, up to the rounding
// of another order of summation. Returns 0, or -1 with a message for a
// size below 1 or Tk > T.
int attention_step(float *out,           // (B, NH, HS)
                   float *att,           // (B, NH, T) weights, first Tk
                   const float *q,       // (B, NH, HS)
                   const float *k,       // (B, NH, T, HS)
                   const float *v,       // (B, NH, T, HS)
                   const int *key_mask,  // (B, T) or NULL
                   int B, int NH, int Tk, int T, int HS, Error *err);

// How many keys the causal mask lets query t see: they are always the
// first ones, keys 0 .. n-1. Tk when causal is false; 0 when the query
// comes before every key (Tq > Tk). key_mask is applied on top of this.
int attention_causal_visible(bool causal, int t, int Tq, int Tk);

#endif
