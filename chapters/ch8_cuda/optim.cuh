// optim.cuh - chapter 6's AdamW step and gradient-norm clipping
// (optim.h) on the GPU. (The learning-rate schedule is one number per
// step: the host computes it with lr_schedule.)
#ifndef CH8_OPTIM_CUH
#define CH8_OPTIM_CUH

#include <stdbool.h>
#include <stddef.h>

#include "optim.h"

#ifdef __cplusplus
extern "C" {
#endif

// As adamw_update; p, g, m, v are device pointers, c a host pointer.
void adamw_update_cuda(float *p, const float *g, float *m, float *v,
                       size_t n, int t, float lr, float wd,
                       const AdamWConfig *c);

// adamw_update_cuda for many tensors of one buffer in one launch:
// ranges[i] (a device array of n_ranges) is the weights p + offset ..
// p + offset + n - 1, decayed by wd when decay is set (else by 0), as
// train.c's update() calls adamw_update once per tensor. largest: the
// largest n. Tensors must not overlap.
typedef struct {
    size_t offset, n;
    bool decay;
} AdamWRange;
void adamw_update_many_cuda(float *p, const float *g, float *m, float *v,
                            const AdamWRange *ranges, int n_ranges,
                            size_t largest, int t, float lr, float wd,
                            const AdamWConfig *c);

// As grad_norm and clip_grad_norm: g is a device pointer, the norm comes
// back to the host (so both wait for the GPU). Summed in double, in an
// order fixed by n alone: the same result every run.
double grad_norm_cuda(const float *g, size_t n);
double clip_grad_norm_cuda(float *g, size_t n, float max_norm);

// clip_grad_norm_cuda in two halves, for a graph (runtime.cuh), which
// can hold no copy back to the host: the launches, which leave the
// norm's square on the device and decide there whether to scale g (the
// same rule, the same bits); and the read of the norm they left, after
// them (for n = 0, nothing and 0).
void clip_grad_norm_launch_cuda(float *g, size_t n, float max_norm);
double grad_norm_read_cuda(void);

#ifdef __cplusplus
}
#endif

#endif
