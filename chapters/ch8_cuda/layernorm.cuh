// layernorm.cuh - chapter 4's LayerNorm (layernorm.h) on the GPU.
#ifndef CH8_LAYERNORM_CUH
#define CH8_LAYERNORM_CUH

#include <stdint.h>

#include "layernorm.h"   // LAYERNORM_EPS, and the CPU functions ported here

#ifdef __cplusplus
extern "C" {
#endif

// As layernorm_forward; device pointers.
void layernorm_forward_cuda(float *out,           // (B, T, C)
                            float *mean,          // (B, T) written
                            float *rstd,          // (B, T) written
                            const float *inp,     // (B, T, C)
                            const float *weight,  // (C,)
                            const float *bias,    // (C,) or NULL
                            int B, int T, int C);

// layernorm_forward_cuda that also writes out rounded to bf16 into out16
// (unless NULL): the copy bf16 mode's next product reads (gemm.cuh).
void layernorm_forward_copy_cuda(float *out, uint16_t *out16, float *mean,
                                 float *rstd, const float *inp,
                                 const float *weight, const float *bias,
                                 int B, int T, int C);

// As layernorm_backward: += into dinp, dweight and dbias (skipped when
// NULL). Not reentrant: it sums dweight and dbias through one scratch
// buffer of its own (see layernorm.cu).
void layernorm_backward_cuda(float *dinp,          // (B, T, C)
                             float *dweight,       // (C,)
                             float *dbias,         // (C,) or NULL
                             const float *dout,    // (B, T, C)
                             const float *inp,     // (B, T, C)
                             const float *weight,  // (C,)
                             const float *mean,    // (B, T)
                             const float *rstd,    // (B, T)
                             int B, int T, int C);

// layernorm_backward_cuda, except that dinp is set to its gradient, not
// added to (dweight and dbias still +=): for a dinp nothing else adds
// into, which then needs no clearing first.
void layernorm_backward_set_cuda(float *dinp, float *dweight, float *dbias,
                                 const float *dout, const float *inp,
                                 const float *weight, const float *mean,
                                 const float *rstd, int B, int T, int C);

// The form for a LayerNorm at the start of a residual branch, whose
// input gets the skip's gradient too: dinp = skip + its gradient (set,
// not added to; skip (B, T, C) may be dinp, which then adds). The block's
// fused backward pass (block.cu): no pass of its own copies the skip's
// gradient into dinp first.
void layernorm_backward_skip_cuda(float *dinp, const float *skip,
                                  float *dweight, float *dbias,
                                  const float *dout, const float *inp,
                                  const float *weight, const float *mean,
                                  const float *rstd, int B, int T, int C);

#ifdef __cplusplus
}
#endif

#endif
