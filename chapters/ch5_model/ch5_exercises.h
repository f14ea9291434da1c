// ch5_exercises.h - the exercises of chapter 5. Your answers go in
// exercises/ch5/ (one file per exercise); `make check EXERCISES=exercises`
// grades them, and tests/ch5/test_ex5.c holds you to the contracts below.
//
// All tensors are float32, row-major, with the shapes given in the
// comments. Every backward function ADDS (+=) its gradients to what the
// gradient arrays already hold. You may use anything in common/ and in
// chapters 1 to 4, and your own answers to other exercises. Calling this
// chapter's own versions (gpt_param_count, sinusoidal_table,
// embedding_backward, the samplers) would pass and teach nothing.
#ifndef CH5_EXERCISES_H
#define CH5_EXERCISES_H

#include <stddef.h>

#include "gpt.h"

// Exercise 5.1 - the number of parameters of the GPT that cfg describes
// (nanoGPT's model, F = cfg->n_ffn hidden units in every FFN: 4C in
// GPT-2, but read the field), counted tensor by tensor:
//   wte (V, C), which is also the LM head: the tied head counts ONCE
//   wpe (block_size, C), only when cfg->positional == POS_LEARNED (the
//       sinusoidal table is fixed, not a parameter)
//   per block: ln_1 and ln_2 weights (C each), attn.c_attn (3C, C),
//       attn.c_proj (C, C), mlp.c_fc (F, C), mlp.c_proj (C, F)
//   ln_f weight (C)
// and, only when cfg->bias, the bias of every Linear (3C, C, F, C per
// block) and of every LayerNorm (ln_1, ln_2, ln_f: C each). n_head and
// dropout change nothing. Counts pass 2^31 for large models (GPT-3 has
// about 175 billion): compute in size_t, not int.
size_t ex_gpt_param_count(const GptConfig *cfg);

// Exercise 5.2 - the fixed sinusoidal position table (T, C), interleaved
// as in the course notes and "Attention Is All You Need": channel pair i is
// channels 2i and 2i+1, and
//   pe[t][2i]   = sin(t * w_i)
//   pe[t][2i+1] = cos(t * w_i),     w_i = 10000^(-2i / C)
// With an odd C the last channel (C-1 = 2i) has no partner: it gets the
// sine, sin(t * w_i), and there is no cosine column for that i. (The
// course notes' PyTorch code refuses odd C: its cosine half does not
// fit.)
// Every value must be within 1e-6 of the exact one up to T = 1024:
// compute w_i and the angle t * w_i in double and round only the sine or
// cosine to float. (Near t = 1000 a float angle is off by up to ~4e-5
// radians, from rounding w_i and t * w_i, and the sine with it.)
void ex_sinusoidal_table(float *pe,   // (T, C) out
                         int T, int C);

// Exercise 5.3 - top-k filtering of one row of logits, in place. With v
// the k-th largest value of logits (counting repeats: in {5, 3, 3, 1} the
// 2nd and 3rd largest are both 3), every logit strictly smaller than v
// becomes -INFINITY (math.h), so that softmax gives it probability 0;
// logits equal to v stay, so ties can keep more than k (nanoGPT's
// `logits[logits < v[:, [-1]]] = -inf`). k <= 0 or k >= V: nothing
// changes.
void ex_top_k(float *logits,   // (V,) in place
              int V, int k);

// Exercise 5.4 - top-p (nucleus) filtering of one probability row, in
// place. probs holds V probabilities summing to 1. Order the tokens by
// probability, largest first, equal probabilities by lower index first;
// keep the shortest prefix of that order whose total is >= p (a double
// total is safest), set every other probability to 0, and divide the kept
// ones by their total, so the row sums to 1 again.
//   p >= 1: keep every token, and leave the row as it is (chapter 5's
//       top_p_filter returns at once: the row sums to 1 already, so
//       dividing by its total anyway changes no more than rounding, and
//       passes too);
//   p <= 0: keep only the first token of the order;
//   if rounding leaves the total of all V below p, keep every token (and
//       divide by that total, as above).
// Example: {0.125, 0.5, 0.125, 0.25} with p = 0.75 keeps tokens 1 and 3
// (0.5 + 0.25 reaches 0.75 exactly): {0, 2/3, 0, 1/3}; a p just above
// 0.75 adds token 0 (the lower index of the tied pair).
void ex_top_p(float *probs,   // (V,) in place
              int V, float p);

// Exercise 5.5 - the embedding's backward pass with weight tying. The
// token embedding wte (V, C) is used twice:
//   x      = wte[idx] + wpe[t]     (B,T,C) the model's first layer
//   logits = h @ wte^T             (B*T, V) the LM head, h = ln_f's output
// so its gradient gathers both uses. Given dx = dL/dx (B,T,C) and dlogits
// = dL/dlogits (B*T, V), ADD
//   to dwte: dlogits^T @ h, that is dwte[v][c] += sum over rows n of
//            dlogits[n][v] * h[n][c]   (the head)
//   and to row idx[b][t] of dwte: dx[b][t][:]  (the lookup; an id that
//            appears several times collects every one of its rows)
//   to dwpe: row t += sum over b of dx[b][t][:], for t < T only (rows T
//            and beyond are left alone); skipped when dwpe is NULL (the
//            sinusoidal table learns nothing).
// Ids are in [0, V).
void ex_embedding_backward(float *dwte,           // (V, C) +=
                           float *dwpe,           // (>= T, C) += or NULL
                           const float *dx,       // (B, T, C)
                           const int *idx,        // (B, T)
                           const float *dlogits,  // (B*T, V)
                           const float *h,        // (B*T, C)
                           int B, int T, int C, int V);

// Exercise 5.6 - rotary position embedding (RoPE, as the course notes
// present it), in place on queries or keys laid out (B, NH, T, HS), HS
// even. Row t of every (b, head) is at position pos = pos0 + t. Pairs are
// INTERLEAVED, channels (2i, 2i+1), as in the course notes'
// view_as_complex code (the pairing of the RoFormer paper and of Meta's
// Llama; GPT-NeoX and Hugging Face's Llama rotate halves (i, i + HS/2)
// instead, and the two do not mix). Pair
// i turns by the angle a = pos * 10000^(-2i / HS):
//   out[2i]   = x[2i] * cos(a) - x[2i+1] * sin(a)
//   out[2i+1] = x[2i] * sin(a) + x[2i+1] * cos(a)
// (the complex product (x[2i] + j x[2i+1]) * e^(j a)). Compute the angle
// in double, as in exercise 5.2. Then <rope(q, m), rope(k, n)> depends on
// m - n only: attention sees relative positions.
void ex_rope(float *x,   // (B, NH, T, HS) in place
             int B, int NH, int T, int HS, int pos0);

#endif
