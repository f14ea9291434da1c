// optim.h - what turns gradients into better weights: the AdamW update,
// the learning-rate schedule, and global gradient-norm clipping. All
// three follow PyTorch (torch.optim.AdamW, nanoGPT's get_lr and
// torch.nn.utils.clip_grad_norm_) operation for operation, so that
// chapter 6's parity test can compare ten training steps with PyTorch's.
#ifndef CH6_OPTIM_H
#define CH6_OPTIM_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    float beta1, beta2;   // decay rates of the two moment estimates
    float eps;            // added to the denominator (1e-8)
    float weight_decay;   // decoupled; applied to 2-D weights only
} AdamWConfig;

//> adamw-api
// One AdamW step on n parameters p with gradients g and moment estimates
// m and v (zero before step 1), at step t = 1, 2, ... and learning rate
// lr, decaying this range by wd (0 for biases, LayerNorm weights and
// anything else 1-D):
//   p -= lr * wd * p                        decoupled weight decay
//   m  = beta1 * m + (1 - beta1) * g        momentum
//   v  = beta2 * v + (1 - beta2) * g^2      per-weight scale
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
void adamw_update(float *p, const float *g, float *m, float *v, size_t n,
                  int t, float lr, float wd, const AdamWConfig *c);
//< adamw-api

//> schedule-api
// nanoGPT's learning rate at step it (0-based): a linear warmup over the
// first `warmup` steps, lr_max * (it + 1) / (warmup + 1), then a cosine
// from lr_max down to lr_min at step decay_steps, and lr_min after it.
float lr_schedule(int it, int warmup, int decay_steps, float lr_max,
                  float lr_min);
//< schedule-api

// The schedule of a run of `steps` steps as its header names it, into buf:
// "constant"; "warmup W: the run ends before the peak, no cosine" when
// the run stops inside its warmup; "warmup W, cosine to step D"; or, with
// to_last (the step count is still to be fitted to a time budget, and the
// cosine with it), "warmup W, cosine to the last step". Chapters 6 and 7
// print it.
void lr_schedule_describe(char *buf, size_t size, int steps, int warmup,
                          int decay_steps, float lr_max, float lr_min,
                          bool to_last);

//> clip-api
// The L2 norm of all n gradients together (summed in double).
double grad_norm(const float *g, size_t n);

// Scales g so that its global norm is at most max_norm, as
// clip_grad_norm_: every gradient is multiplied by
// min(1, max_norm / (norm + 1e-6)). Returns the norm before clipping.
// max_norm <= 0 turns clipping off (the norm is still returned).
double clip_grad_norm(float *g, size_t n, float max_norm);
//< clip-api

#endif
