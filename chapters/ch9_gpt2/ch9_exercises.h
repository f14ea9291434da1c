// ch9_exercises.h - the exercises of chapter 9. Your answers go in
// exercises/ch9/ (one file per exercise); `make check EXERCISES=exercises`
// grades them, and tests/ch9/test_ex9_*.c hold you to the contracts below.
//
// You may use anything in common/ and in chapters 1 to 8, and your own
// answers to other exercises. Calling this chapter's own versions (the
// tokenizer's table and merge loop, the loader's name map, chapter 3's
// gelu_forward with GELU_TANH) would pass and teach nothing.
#ifndef CH9_EXERCISES_H
#define CH9_EXERCISES_H

#include <stddef.h>
#include <stdint.h>

// ---- the tokenizer (exercises 9.1 and 9.2) ----
#include "tokenizer.h"

// Exercise 9.1 - GPT-2's bytes-to-unicode table. Fill cp[b], for every byte
// b, with the code point that stands for b in vocab.json and merges.txt: b
// itself for the 188 bytes that print as a character of their own ('!' to
// '~', U+00A1 to U+00AC, U+00AE to U+00FF), and for the other 68, in the
// order of their bytes, U+0100, U+0101, ... (so the space, byte 32, is
// U+0120 'Ġ', and '\n' is U+010A 'Ċ').
void ex_bytes_to_unicode(uint32_t cp[256]);

// Exercise 9.2 - BPE merges of one pre-token by rank. ids[0..n) are the ids
// of one piece's bytes (t->byte_id[b] for each byte b). Merge them in place
// as GPT-2 does and return how many ids are left: of all adjacent pairs,
// take the one whose merge has the lowest rank (gpt2_tok_merge_rank(t, a, b,
// &merged) gives it, and the id the merge makes; -1 when a and b have no
// merge), replace every occurrence of that pair with the merged id, from
// left to right and without overlap ("a a a" -> "aa a"), and repeat until no
// adjacent pair has a merge. n may be 0.
int ex_bpe_merge(const Gpt2Tokenizer *t, int *ids, int n);

// ---- the model (exercises 9.3 and 9.4) ----
#include "hf_names.h"   // HfRole

// Exercise 9.3 - Hugging Face's GPT-2 names, and the Conv1D transpose.
// A GPT-2 file names its tensors as chapter 5 does ("transformer.h.0.
// ln_1.weight"), or without the "transformer." in front (the Hub's
// file: "h.0.ln_1.weight"), and may hold two kinds of tensor that are
// not weights. ex_hf_name writes into ours (size bytes) the name chapter
// 5 gives the tensor hf, and returns what the loader does with it:
//   h.N.attn.bias and h.N.attn.masked_bias, with or without the prefix
//       (N a layer's number as Python writes it, no leading zero:
//       hf_names.c takes "h.01." for no layer's name; no file holds one,
//       and the tests do not try it): the attention's causal mask, a
//       constant: HF_SKIP, ours "";
//   lm_head.weight: the LM head, which is wte: HF_TIED, ours
//       "transformer.wte.weight";
//   h.N.attn.c_attn.weight, h.N.attn.c_proj.weight, h.N.mlp.c_fc.weight
//       and h.N.mlp.c_proj.weight (either layout): stored (in, out) by
//       GPT-2's Conv1D, (out, in) by chapter 5: HF_TRANSPOSE;
//   any other name: HF_COPY.
// For HF_TRANSPOSE and HF_COPY, ours is hf with "transformer." in front,
// unless hf starts with it already. Returns -1 (ours unspecified) when
// the name would not fit in size bytes with its NUL.
int ex_hf_name(char *ours, size_t size, const char *hf);

// out = inp transposed: inp is (rows, cols) row-major, out (cols, rows),
// out[c][r] = inp[r][c]. (A Conv1D weight (in, out) becomes chapter 2's
// Linear weight (out, in), and back.)
void ex_conv1d_transpose(float *out,         // (cols, rows)
                         const float *inp,   // (rows, cols)
                         int rows, int cols);

// Exercise 9.4 - GPT-2's GELU, the tanh form, forward and backward.
// out[i] = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3),
// with x = inp[i] (tanhf and sqrtf are in <math.h>).
// dinp[i] += dout[i] * gelu'(x), gelu' the derivative of that formula
// (the chain rule, with tanh'(u) = 1 - tanh(u)^2).
// Both within 1e-6 (plus 1e-5 relative) of the formula in double for
// |x| up to 10.
void ex_gelu_tanh_forward(float *out,          // (n,)
                          const float *inp,    // (n,)
                          size_t n);
void ex_gelu_tanh_backward(float *dinp,        // (n,)
                           const float *dout,  // (n,)
                           const float *inp,   // (n,)
                           size_t n);

#endif
