// ch6_exercises.h - the exercises of chapter 6. Your answers go in
// exercises/ch6/ (one file per exercise); `make check EXERCISES=exercises`
// grades them, and tests/ch6/test_ex6.c holds you to the contracts below.
//
// These are the four pieces of a training step that sit outside the
// model: the loss and its gradient, the optimizer, the learning rate and
// the gradient clipping. All tensors are float32 and row-major. You may
// use anything in common/ and in chapters 1 to 5, and your own answers to
// other exercises. Calling this chapter's own versions (adamw_update,
// lr_schedule, clip_grad_norm) or chapter 5's crossentropy_forward and
// crossentropy_backward would pass and teach nothing.
#ifndef CH6_EXERCISES_H
#define CH6_EXERCISES_H

#include <stddef.h>

// Exercise 6.1 - cross-entropy, forward and backward in one pass over the
// logits. Row n of logits holds the V scores of position n; targets[n] is
// the index of the right answer, or -1 for "no answer here" (PyTorch's
// ignore_index=-1). With n_valid the number of rows whose target is not
// -1, return
//   loss = (1 / n_valid) * sum over those rows of
//          logsumexp(row) - row[target]
// (0 when n_valid is 0), and write
//   dlogits[n][:] = (softmax(row) - onehot(target)) / n_valid
// for the rows with a target, and zeros for the rows with -1: the gradient
// of that mean loss. dlogits is overwritten, not accumulated, and does not
// overlap logits. Logits as large as +-1000 must give finite, correct
// answers: take each row's maximum out before any exp. Accumulating the
// loss in double is safest.
float ex_crossentropy(float *dlogits,        // (N, V) out
                      const float *logits,   // (N, V)
                      const int *targets,    // (N,) -1 or in [0, V)
                      int N, int V);

// Exercise 6.2 - one AdamW step on n parameters, in place, exactly as
// torch.optim.AdamW computes it, element by element, at step t = 1, 2, ...
// (m and v are all zero before step 1):
//   p  = p * (1 - lr * wd)                   decoupled decay, FIRST
//   m  = beta1 * m + (1 - beta1) * g
//   v  = beta2 * v + (1 - beta2) * g * g
//   p  = p - (lr / (1 - beta1^t)) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// Note where eps goes: after the bias correction of sqrt(v), outside the
// square root. p, m and v are updated in place; g is only read.
void ex_adamw_update(float *p,         // (n,) in place
                     const float *g,   // (n,)
                     float *m,         // (n,) in place: first moment
                     float *v,         // (n,) in place: second moment
                     size_t n, int t, float lr, float wd, float beta1,
                     float beta2, float eps);

// Exercise 6.3 - nanoGPT's learning rate at step it = 0, 1, 2, ...
//   it < warmup:         lr_max * (it + 1) / (warmup + 1)   linear warmup
//   it > decay_steps:    lr_min                             the floor
//   otherwise:           lr_min + 0.5 * (1 + cos(pi * r)) * (lr_max - lr_min)
//                        with r = (it - warmup) / (decay_steps - warmup)
// so the cosine starts at lr_max (it = warmup, r = 0) and reaches lr_min
// at it = decay_steps (r = 1). Callers guarantee 0 <= warmup < decay_steps.
// Mind integer division: r is a fraction.
float ex_lr_schedule(int it, int warmup, int decay_steps, float lr_max,
                     float lr_min);

// Exercise 6.4 - global gradient-norm clipping, as
// torch.nn.utils.clip_grad_norm_ on all the gradients at once (the
// project keeps them in one buffer). Compute the L2 norm of all n values,
// sqrt(sum of g[i]^2), accumulating the sum in double (a float sum of
// millions of squares drifts), then multiply every g[i] by
//   min(1, max_norm / (norm + 1e-6))
// so that a gradient already below max_norm is left exactly as it was.
// max_norm <= 0 means no clipping (g unchanged). Return the norm from
// before the clipping (the number a training log prints).
double ex_clip_grad_norm(float *g,   // (n,) in place
                         size_t n, float max_norm);

#endif
