// ch2_util.h - small helpers shared by the chapter 2 tests (test_ch2.c and
// test_ex2.c, and through ch3_util.h later chapters'): fixture copies,
// masks, the weighted-sum loss and the linear layer's gradient check.
#ifndef TESTS_CH2_UTIL_H
#define TESTS_CH2_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "fixture.h"
#include "linear.h"
#include "mem.h"
#include "rng.h"

// fixture_open (tests/reference/<file>, or the test fails naming the
// script that writes it) is in check_util.h.

// A malloc'd copy of a fixture tensor (tests perturb their inputs).
static inline float *fx_copy(const Fixture *f, const char *name,
                             const int *shape, int ndim) {
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= (size_t)shape[i];
    const float *src = fixture_get(f, name, shape, ndim);
    float *p = alloc_floats(n);
    memcpy(p, src, n * sizeof *p);
    return p;
}

// A (B, T) mask stored as floats, as ints.
static inline int *fx_mask(const Fixture *f, const char *name, int B, int T) {
    const int shape[2] = {B, T};
    const float *m = fixture_get(f, name, shape, 2);
    int *mask = xmalloc((size_t)B * T * sizeof *mask);
    for (int i = 0; i < B * T; i++) mask[i] = m[i] != 0.0f;
    return mask;
}

// randn_floats (n draws of N(0, std^2) from a seed) is in check_util.h.

// sum of out[i] * w[i] in double: the loss of the gradient checks, whose
// gradient with respect to out is w.
static inline double weighted_sum(const float *out, const float *w,
                                  size_t n) {
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += (double)out[i] * w[i];
    return sum;
}

// The gradient check of a linear layer: L = sum(linear(x) * w), for
// chapter 2's linear_backward and exercise 3.3's.
typedef struct {
    float *x, *wt, *b, *out;   // (N, Ci), (Co, Ci), (Co,), (N, Co)
    const float *w;            // (N, Co)
    int N, Ci, Co;
} LinearCtx;

static inline double linear_loss(void *p) {
    LinearCtx *c = p;
    linear_forward(c->out, c->x, c->wt, c->b, c->N, c->Ci, c->Co);
    return weighted_sum(c->out, c->w, (size_t)c->N * c->Co);
}

static inline int all_finite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

#endif
