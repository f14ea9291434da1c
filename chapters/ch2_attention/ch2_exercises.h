// ch2_exercises.h - the exercises of chapter 2. Your answers go in
// exercises/ch2/ (one file per exercise); `make check EXERCISES=exercises`
// grades them, and tests/ch2/test_ex2.c holds you to the contracts below.
//
// All tensors are float32, row-major, with the shapes given in the
// comments. One head of attention works on queries q (Tq, HS), keys k
// (Tk, HS) and values v (Tk, HS); scale = 1 / sqrt(HS). Key s is VISIBLE
// to query t when
//   - causal is false, or s <= t + (Tk - Tq)   (with Tq == Tk: s <= t), and
//   - key_mask is NULL, or key_mask[s] != 0    (0 marks padding).
// You may use anything in common/ (gemm, ...) and your own answers to
// other exercises, but then an exercise you have not done yet fails too.
#ifndef CH2_EXERCISES_H
#define CH2_EXERCISES_H

#include <stdbool.h>

// Exercise 2.1 - a numerically stable softmax.
// out[n, :] = softmax(inp[n, :]) for each of the N rows of D >= 1 values:
// out[n, i] = exp(inp[n, i]) / sum_j exp(inp[n, j]). Logits like 1000
// (exp overflows float) or -1000 (exp underflows to 0) must still give the
// right, finite answer.
void ex_softmax(float *out,         // (N, D)
                const float *inp,   // (N, D)
                int N, int D);

// Exercise 2.2 - masked, scaled attention scores.
// scores[t, s] = scale * (q[t] . k[s]) where key s is visible to query t,
// and -INFINITY (from <math.h>) where it is not.
void ex_masked_scores(float *scores,        // (Tq, Tk)
                      const float *q,       // (Tq, HS)
                      const float *k,       // (Tk, HS)
                      const int *key_mask,  // (Tk,) or NULL
                      bool causal, int Tq, int Tk, int HS);

// Exercise 2.3 - single-head attention, forward.
// att[t, :] = softmax of scale * q[t] . k[s] over the keys s visible to
// query t, with att[t, s] = 0 exactly for every hidden key; a row with no
// visible key at all is all zeros (never NaN). out = att @ v.
void ex_attention_head(float *out,           // (Tq, HS)
                       float *att,           // (Tq, Tk)
                       const float *q,       // (Tq, HS)
                       const float *k,       // (Tk, HS)
                       const float *v,       // (Tk, HS)
                       const int *key_mask,  // (Tk,) or NULL
                       bool causal, int Tq, int Tk, int HS);

// Exercise 2.4 - splitting and merging heads (HS = C / NH).
// From the fused projection qkv (B, T, 3C), whose channels are q (0..C-1),
// k (C..2C-1) and v (2C..3C-1):
//   q[b, h, t, i] = qkv[b, t, h*HS + i]
//   k[b, h, t, i] = qkv[b, t, C + h*HS + i]
//   v[b, h, t, i] = qkv[b, t, 2C + h*HS + i]
void ex_split_qkv(float *q,            // (B, NH, T, HS)
                  float *k,            // (B, NH, T, HS)
                  float *v,            // (B, NH, T, HS)
                  const float *qkv,    // (B, T, 3C)
                  int B, int T, int C, int NH);
// And back: y[b, t, h*HS + i] = yh[b, h, t, i].
void ex_merge_heads(float *y,          // (B, T, C)
                    const float *yh,   // (B, NH, T, HS)
                    int B, int T, int C, int NH);

// Exercise 2.5 - single-head attention, backward.
// att is what the forward pass (exercise 2.3, any masks) computed from q
// and k, and dout = dL/dout. ADD (+=) dL/dq, dL/dk and dL/dv to dq, dk and
// dv. (The masks are not arguments: they are the zeros of att.)
void ex_attention_head_backward(float *dq,          // (Tq, HS)
                                float *dk,          // (Tk, HS)
                                float *dv,          // (Tk, HS)
                                const float *dout,  // (Tq, HS)
                                const float *att,   // (Tq, Tk)
                                const float *q,     // (Tq, HS)
                                const float *k,     // (Tk, HS)
                                const float *v,     // (Tk, HS)
                                int Tq, int Tk, int HS);

// Exercise 2.6 - remove the mask.
// Single-head self-attention of T tokens: qkv = x @ w_qkv^T (no bias),
// q, k, v its three C-wide thirds (as in exercise 2.4 with NH = 1), and
// out = attention of q, k, v with head size C: causal (each token sees
// itself and the tokens before it) when causal is true, and every token
// seeing all T tokens (an encoder, as in BERT) when it is false.
void ex_self_attention(float *out,          // (T, C)
                       const float *x,      // (T, C)
                       const float *w_qkv,  // (3C, C)
                       bool causal, int T, int C);

#endif
