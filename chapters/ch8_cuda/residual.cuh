// residual.cuh - chapter 4's residual connection and the add half of the
// sub-layer wrapper (residual.h) on the GPU.
#ifndef CH8_RESIDUAL_CUH
#define CH8_RESIDUAL_CUH

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "residual.h"   // the CPU functions ported here

#ifdef __cplusplus
extern "C" {
#endif

// As residual_forward and residual_backward (+=); device pointers.
void residual_forward_cuda(float *out, const float *a, const float *b,
                           size_t n);
void residual_backward_cuda(float *da, float *db, const float *dout,
                            size_t n);

// As sublayer_add, out = x + dropout(out), with the dropout of
// dropout_forward_cuda(seed, offset): with p > 0 the mask (0 or
// 1 / (1 - p)) is written; with p = 0 nothing is drawn and mask is not
// touched (it may be NULL). p must be in [0, 1).
void sublayer_add_cuda(float *out,        // (n,) f's output in, stream out
                       float *mask,       // (n,) written when p > 0
                       const float *x,    // (n,) the stream before
                       float p, uint64_t seed, uint64_t offset, size_t n);

// As sublayer_add_backward: dx += dout, dy += dout * mask (mask NULL: p
// was 0, and dy += dout).
void sublayer_add_backward_cuda(float *dx,          // (n,)
                                float *dy,          // (n,)
                                const float *dout,  // (n,)
                                const float *mask,  // (n,) or NULL
                                size_t n);

// sublayer_add_backward_cuda with dy set, not added to (so it needs no
// clearing and is not read), and dx too unless add_dx: the block's
// backward pass (block.cu), where these are the gradients' first terms.
void sublayer_add_backward_set_cuda(float *dx, bool add_dx, float *dy,
                                    const float *dout, const float *mask,
                                    size_t n);

// The fused forms (residual.cu says why). sublayer_bias_add_cuda is
// sublayer_add_cuda with f's bias added first: out = x + dropout(out +
// bias), out and x (N, C), bias (C,) or NULL. residual_layernorm_forward_
// cuda adds the stream and normalises it in one pass: res = x +
// dropout(y + bias) (res may be y), then norm = LayerNorm(res; ln_w,
// ln_b) with mean and rstd written, as layernorm_forward_cuda, and
// norm's bf16 copy into norm16 unless NULL. Dropout as in
// sublayer_add_cuda (the same counters: the same masks).
void sublayer_bias_add_cuda(float *out, float *mask, const float *x,
                            const float *bias, float p, uint64_t seed,
                            uint64_t offset, int N, int C);
void residual_layernorm_forward_cuda(float *res,          // (N, C)
                                     float *norm,         // (N, C)
                                     uint16_t *norm16,    // (N, C) or NULL
                                     float *mean,         // (N,)
                                     float *rstd,         // (N,)
                                     float *mask,         // (N, C) p > 0
                                     const float *x,      // (N, C)
                                     const float *y,      // (N, C)
                                     const float *bias,   // (C,) or NULL
                                     float p, uint64_t seed,
                                     uint64_t offset,
                                     const float *ln_w,   // (C,)
                                     const float *ln_b,   // (C,) or NULL
                                     int N, int C);

#ifdef __cplusplus
}
#endif

#endif
