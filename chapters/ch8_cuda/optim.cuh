// optim.cuh - chapter 6's AdamW step and gradient-norm clipping
// (optim.h) on the GPU. (The learning-rate schedule is one number per
// step: the host computes it with lr_schedule.)
#ifndef CH8_OPTIM_CUH
#define CH8_OPTIM_CUH

#include <stddef.h>

#include "optim.h"

#ifdef __cplusplus
extern "C" {
#endif

// As adamw_update; p, g, m, v are device pointers, c a host pointer.
void adamw_update_cuda(float *p, const float *g, float *m, float *v,
                       size_t n, int t, float lr, float wd,
                       const AdamWConfig *c);

// As grad_norm and clip_grad_norm: g is a device pointer, the norm comes
// back to the host (so both wait for the GPU). Summed in double, in an
// order fixed by n alone: the same result every run.
double grad_norm_cuda(const float *g, size_t n);
double clip_grad_norm_cuda(float *g, size_t n, float max_norm);

#ifdef __cplusplus
}
#endif

#endif
