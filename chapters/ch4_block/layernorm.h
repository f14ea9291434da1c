// layernorm.h - the two normalisations of a Transformer block.
//
// LayerNorm (nanoGPT's ln_1, ln_2, ln_f), for each row x of C channels:
//   mean = sum(x) / C,  var = sum((x - mean)^2) / C     (biased, as PyTorch)
//   rstd = 1 / sqrt(var + eps)
//   out  = (x - mean) * rstd * weight + bias
// RMSNorm (LLaMA's), no centring and no bias:
//   rstd = 1 / sqrt(sum(x^2) / C + eps),  out = x * rstd * weight
//
// Every row (every token) is normalised on its own, so the functions see a
// (B,T,C) tensor as B*T rows. The forward passes keep one or two numbers
// per row for the backward pass (llm.c's mean and rstd), which then needs
// no square root. Sizes are at least 1 (a programmer error otherwise).
#ifndef CH4_LAYERNORM_H
#define CH4_LAYERNORM_H

// PyTorch's nn.LayerNorm default, and GPT-2's.
#define LAYERNORM_EPS 1e-5f
// The RMSNorm of the course notes (and of the original LLaMA): 1e-6.
#define RMSNORM_EPS 1e-6f

//> layernorm-api
void layernorm_forward(float *out,           // (B, T, C)
                       float *mean,          // (B, T) written
                       float *rstd,          // (B, T) written
                       const float *inp,     // (B, T, C)
                       const float *weight,  // (C,)
                       const float *bias,    // (C,) or NULL
                       int B, int T, int C);

// Accumulates (+=) dinp, dweight and dbias (dbias skipped when NULL), from
// the mean and rstd of the forward pass.
void layernorm_backward(float *dinp,          // (B, T, C)
                        float *dweight,       // (C,)
                        float *dbias,         // (C,) or NULL
                        const float *dout,    // (B, T, C)
                        const float *inp,     // (B, T, C)
                        const float *weight,  // (C,)
                        const float *mean,    // (B, T)
                        const float *rstd,    // (B, T)
                        int B, int T, int C);
//< layernorm-api

void rmsnorm_forward(float *out,           // (B, T, C)
                     float *rstd,          // (B, T) written
                     const float *inp,     // (B, T, C)
                     const float *weight,  // (C,)
                     int B, int T, int C);

// Accumulates (+=) dinp and dweight.
void rmsnorm_backward(float *dinp,          // (B, T, C)
                      float *dweight,       // (C,)
                      const float *dout,    // (B, T, C)
                      const float *inp,     // (B, T, C)
                      const float *weight,  // (C,)
                      const float *rstd,    // (B, T)
                      int B, int T, int C);

#endif
