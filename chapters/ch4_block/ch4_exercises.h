// ch4_exercises.h - the exercises of chapter 4. Your answers go in
// exercises/ch4/ (one file per exercise); `make check EXERCISES=exercises`
// grades them, and tests/ch4/test_ex4.c holds you to the contracts below.
//
// All tensors are float32, row-major, with the shapes given in the
// comments; a (B,T,C) tensor is N = B*T rows of C channels. Every backward
// function ADDS (+=) its gradients to what the gradient arrays already
// hold. You may use anything in common/ and in chapters 2 and 3, and your
// own answers to other exercises. Calling this chapter's layernorm_* or
// rmsnorm_* in exercises 4.1 to 4.3 would pass and teach nothing; in 4.4
// they are the building blocks, with mha_forward and ffn_forward.
#ifndef CH4_EXERCISES_H
#define CH4_EXERCISES_H

#include "block.h"

// Exercise 4.1 - LayerNorm forward, for each row x of C values:
//   mean = sum(x) / C,  var = sum((x - mean)^2) / C  (divide by C, not C-1)
//   rstd = 1 / sqrt(var + 1e-5)
//   out  = (x - mean) * rstd * weight + bias   (no bias when bias is NULL)
// Also writes each row's mean and rstd. Within 1e-5 of nn.LayerNorm, also
// for rows whose mean is large against their spread.
void ex_layernorm_forward(float *out,           // (N, C)
                          float *mean,          // (N,)
                          float *rstd,          // (N,)
                          const float *inp,     // (N, C)
                          const float *weight,  // (C,)
                          const float *bias,    // (C,) or NULL
                          int N, int C);

// Exercise 4.2 - LayerNorm backward, given dout = dL/dout and the mean and
// rstd of the forward pass. With xhat = (x - mean) * rstd, g = weight*dout:
//   dinp    += rstd * (g - mean of g - xhat * mean of (g * xhat))
//   dweight += the sum over rows of dout * xhat
//   dbias   += the sum over rows of dout      (skipped when dbias is NULL)
void ex_layernorm_backward(float *dinp,          // (N, C)
                           float *dweight,       // (C,)
                           float *dbias,         // (C,) or NULL
                           const float *dout,    // (N, C)
                           const float *inp,     // (N, C)
                           const float *weight,  // (C,)
                           const float *mean,    // (N,)
                           const float *rstd,    // (N,)
                           int N, int C);

// Exercise 4.3 - RMSNorm, forward and backward. For each row x:
//   rstd = 1 / sqrt(sum(x^2) / C + 1e-6),  out = x * rstd * weight
// The backward pass ADDS dL/dinp and dL/dweight, given the rstd of the
// forward pass (derive dL/dinp yourself: it is LayerNorm's without the
// mean terms).
void ex_rmsnorm_forward(float *out,           // (N, C)
                        float *rstd,          // (N,)
                        const float *inp,     // (N, C)
                        const float *weight,  // (C,)
                        int N, int C);
void ex_rmsnorm_backward(float *dinp,          // (N, C)
                         float *dweight,       // (C,)
                         const float *dout,    // (N, C)
                         const float *inp,     // (N, C)
                         const float *weight,  // (C,)
                         const float *rstd,    // (N,)
                         int N, int C);

// Exercise 4.4 - the Post-LN block's forward pass, from the building
// blocks: chapter 2's mha_forward (causal), chapter 3's ffn_forward (exact
// GELU) and this chapter's layernorm_forward, without dropout:
//   h   = ln_1(inp + attn(inp))
//   out = ln_2(h + mlp(h))
// with the weights of w (NULL biases where the block has none). Sizes are
// valid (C a multiple of NH). Allocate what you need (the caches of
// mha_forward and ffn_forward, temporaries) and free it before returning.
void ex_postln_block_forward(float *out,              // (B, T, C)
                             const float *inp,        // (B, T, C)
                             const BlockWeights *w,
                             int B, int T, int C, int NH, int F);

#endif
