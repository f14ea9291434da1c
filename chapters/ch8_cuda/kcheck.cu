// kcheck.cu - the checks of kcheck.cuh: each kernel against the CPU.
#include "cuda_rt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "activation.cuh"
// (layernorm, residual, dropout, embedding)
#include "dropout.cuh"
#include "embedding.cuh"
#include "layernorm.cuh"
#include "residual.cuh"

// (linear, mha)
#include "gemm.cuh"
#include "gemm.h"
#include "linear.cuh"
#include "mha.cuh"

// (attention)
#include "attention.cuh"

// (flash)
#include "attention.h"
#include "flash.cuh"

// (crossentropy, optim)
#include "crossentropy.cuh"
#include "optim.cuh"

// (the whole model)
#include "gpt_cuda.cuh"

// (the fused forms, the graph)
#include "block.cuh"
#include "runtime.cuh"

#include "kcheck.cuh"
#include "mem.h"
#include "rng.h"
}

// ---- helpers ---------------------------------------------------------------

// n normal(0, std) floats on the host (free()) from rng.
static float *host_randn(Rng *rng, size_t n, float std) {
    float *p = (float *)xmalloc((n ? n : 1) * sizeof *p);
    rng_normal_fill(rng, p, n, 0.0f, std);
    return p;
}

// A device copy of n host floats.
static float *to_device(const float *h, size_t n) {
    float *d = cuda_alloc_floats(n);
    cuda_upload(d, h, n);
    return d;
}

// Compares got with want, both on the host, and appends the result.
static void compare_host(KReport *rep, const char *name, const char *sizes,
                         const float *got, const float *want, size_t n,
                         double tol) {
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (diff == diff && !(d <= diff)) diff = d;   // a NaN sticks
        if (fabs(want[i]) > scale) scale = fabs(want[i]);
    }
    if (rep->n >= KCHECK_MAX) return;
    KResult *r = &rep->r[rep->n++];
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->sizes, sizeof r->sizes, "%s", sizes);
    r->err = diff / (scale > 0 ? scale : 1.0);
    r->tol = tol;
    r->ok = r->err <= tol;   // false for NaN
}

// Compares the device tensor got with the host tensor want and appends
// the result.
static void compare(KReport *rep, const char *name, const char *sizes,
                    const float *got_dev, const float *want, size_t n,
                    double tol) {
    float *got = (float *)xmalloc((n ? n : 1) * sizeof *got);
    cuda_download(got, got_dev, n);
    compare_host(rep, name, sizes, got, want, n, tol);
    free(got);
}

static const double FP32_TOL = 1e-5;

// ---- activation.cu ---------------------------------------------------------

// sz: n, kind (0 exact, 1 tanh)
static void check_gelu(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    Activation kind = sz[1] ? GELU_TANH : GELU_EXACT;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "n=%zu %s", n, activation_name(kind));
    Rng rng;
    rng_seed(&rng, seed);
    float *x = host_randn(&rng, n, 2.0f), *dy = host_randn(&rng, n, 1.0f);
    float *dx = host_randn(&rng, n, 1.0f);   // the += is checked too
    float *y = (float *)xmalloc(n * sizeof *y);
    float *dx_cpu = (float *)xmalloc(n * sizeof *dx_cpu);
    memcpy(dx_cpu, dx, n * sizeof *dx);
    gelu_forward(y, x, kind, n);
    gelu_backward(dx_cpu, dy, x, kind, n);
    float *d_x = to_device(x, n), *d_dy = to_device(dy, n);
    float *d_dx = to_device(dx, n), *d_y = cuda_alloc_floats(n);
    gelu_forward_cuda(d_y, d_x, kind, n);
    gelu_backward_cuda(d_dx, d_dy, d_x, kind, n);
    compare(rep, "gelu_forward_cuda: out", sizes, d_y, y, n, FP32_TOL);
    compare(rep, "gelu_backward_cuda: dinp", sizes, d_dx, dx_cpu, n,
            FP32_TOL);
    cuda_free(d_x), cuda_free(d_dy), cuda_free(d_dx), cuda_free(d_y);
    free(x), free(dy), free(dx), free(y), free(dx_cpu);
}

// ---- layernorm.cu, residual.cu, dropout.cu, embedding.cu -----------------

// Every output buffer of these checks is followed on the device by
// OUT_GUARD floats of a sentinel: a kernel that forgot its bounds check
// writes there (where it would silently corrupt a neighbour on the GPU),
// and the check's "writes past the end" result counts the damage.
enum { OUT_GUARD = 64 };
static const float GUARD_VALUE = -12345.0f;

// A device buffer of n floats (a copy of h, or garbage when h is NULL)
// followed by its guard.
static float *to_device_guarded(const float *h, size_t n) {
    float guard[OUT_GUARD];
    for (int i = 0; i < OUT_GUARD; i++) guard[i] = GUARD_VALUE;
    float *d = cuda_alloc_floats(n + OUT_GUARD);
    cuda_upload(d + n, guard, OUT_GUARD);
    if (h) cuda_upload(d, h, n);
    return d;
}

// The number of guard floats after the n floats of d that were written.
static int guard_damage(const float *d, size_t n) {
    float guard[OUT_GUARD];
    cuda_download(guard, d + n, OUT_GUARD);
    int bad = 0;
    for (int i = 0; i < OUT_GUARD; i++) bad += !(guard[i] == GUARD_VALUE);
    return bad;
}

// Appends a result that is a number rather than a comparison: ok when
// |value| <= tol.
static void report_value(KReport *rep, const char *name, const char *sizes,
                         double value, double tol) {
    if (rep->n >= KCHECK_MAX) return;
    KResult *r = &rep->r[rep->n++];
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->sizes, sizeof r->sizes, "%s", sizes);
    r->err = fabs(value);
    r->tol = tol;
    r->ok = r->err <= tol;   // false for NaN
}

// A host copy of n floats (free()).
static float *host_copy(const float *p, size_t n) {
    float *q = (float *)xmalloc((n ? n : 1) * sizeof *q);
    memcpy(q, p, n * sizeof *q);
    return q;
}

// The bf16 rounding of x (ties to even, as __float2bfloat16); defined
// with the bf16 checks below.
static uint16_t bf16_nearest(float x);

// The number of the n bf16 values at copy_dev (device) that are not
// exactly the rounding of the n floats at of_dev: a kernel's copy of its
// own output must be that, bit for bit.
static size_t copy_mismatches(const uint16_t *copy_dev, const float *of_dev,
                              size_t n) {
    float *of = (float *)xmalloc((n ? n : 1) * sizeof *of);
    uint16_t *copy = (uint16_t *)xmalloc((n ? n : 1) * sizeof *copy);
    cuda_download(of, of_dev, n);
    CUDA_CHECK(cudaMemcpy(copy, copy_dev, n * sizeof *copy,
                          cudaMemcpyDeviceToHost));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) bad += copy[i] != bf16_nearest(of[i]);
    free(of), free(copy);
    return bad;
}

// sz: n, kind. The feed-forward layer's forms of the GELU kernels: the
// forward with its bf16 copy, and the backward that sets dinp (started
// from random values, which must not show) with its copy; each against
// chapter 3, and each copy bit for bit against the rounding of the fp32
// result beside it.
static void check_gelu_copy(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    Activation kind = sz[1] ? GELU_TANH : GELU_EXACT;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "n=%zu %s", n, activation_name(kind));
    Rng rng;
    rng_seed(&rng, seed);
    float *x = host_randn(&rng, n, 2.0f), *dy = host_randn(&rng, n, 1.0f);
    float *dx = host_randn(&rng, n, 1.0f);   // overwritten, not added to
    float *y = (float *)xmalloc(n * sizeof *y);
    float *dx_cpu = (float *)xcalloc(n, sizeof *dx_cpu);
    gelu_forward(y, x, kind, n);
    gelu_backward(dx_cpu, dy, x, kind, n);
    float *d_x = to_device(x, n), *d_dy = to_device(dy, n);
    float *d_dx = to_device(dx, n), *d_y = cuda_alloc_floats(n);
    uint16_t *d_y16, *d_dx16;
    CUDA_CHECK(cudaMalloc((void **)&d_y16, n * sizeof *d_y16));
    CUDA_CHECK(cudaMalloc((void **)&d_dx16, n * sizeof *d_dx16));
    gelu_forward_copy_cuda(d_y, d_y16, d_x, kind, n);
    gelu_backward_set_cuda(d_dx, d_dx16, d_dy, d_x, kind, n);
    compare(rep, "gelu_forward_copy_cuda: out", sizes, d_y, y, n, FP32_TOL);
    report_value(rep, "gelu_forward_copy_cuda: out16 wrong", sizes,
                 (double)copy_mismatches(d_y16, d_y, n), 0);
    compare(rep, "gelu_backward_set_cuda: dinp", sizes, d_dx, dx_cpu, n,
            FP32_TOL);
    report_value(rep, "gelu_backward_set_cuda: dinp16 wrong", sizes,
                 (double)copy_mismatches(d_dx16, d_dx, n), 0);
    cuda_free(d_x), cuda_free(d_dy), cuda_free(d_dx), cuda_free(d_y);
    cuda_free(d_y16), cuda_free(d_dx16);
    free(x), free(dy), free(dx), free(y), free(dx_cpu);
}

// sz: B, T, C, bias (0/1). Forward and backward against chapter 4, the
// gradients starting from random values (the += is checked). The CPU sums
// in double and the GPU in float: for rows of up to a few hundred floats
// and columns of a few hundred rows that differs by about 1e-6 relative.
// The smallest row has C = 2 (30 lanes of the warp idle), not C = 1: one
// channel has variance 0, so rstd = 1/sqrt(eps) ~ 316 multiplies the
// rounding of weight*dout - mean(weight*dout), which is exactly 0 on the
// CPU but not where the compiler fuses the product into an FMA (nvcc
// does, and g++ on the emulation may): a degenerate row, not a bug.
static void check_layernorm(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1], C = sz[2];
    bool bias = sz[3] != 0;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "B=%d T=%d C=%d%s", B, T, C,
             bias ? " bias" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t N = (size_t)B * T, n = N * C;
    // A mean far from 0 and a spread far from 1, so that a kernel that
    // skips the centring or the scaling shows.
    float *x = host_randn(&rng, n, 3.0f);
    for (size_t i = 0; i < n; i++) x[i] += 1.5f;
    float *w = host_randn(&rng, (size_t)C, 1.0f);
    float *b = host_randn(&rng, (size_t)C, 1.0f);
    float *dy = host_randn(&rng, n, 1.0f), *dx = host_randn(&rng, n, 1.0f);
    float *dw = host_randn(&rng, (size_t)C, 1.0f);
    float *db = host_randn(&rng, (size_t)C, 1.0f);
    float *d_x = to_device(x, n), *d_w = to_device(w, (size_t)C);
    float *d_b = to_device(b, (size_t)C), *d_dy = to_device(dy, n);
    float *d_y = to_device_guarded(NULL, n);
    float *d_mean = to_device_guarded(NULL, N);
    float *d_rstd = to_device_guarded(NULL, N);
    float *d_dx = to_device_guarded(dx, n);
    float *d_dw = to_device_guarded(dw, (size_t)C);
    float *d_db = to_device_guarded(db, (size_t)C);
    float *y = (float *)xmalloc(n * sizeof *y);
    float *mean = (float *)xmalloc(N * sizeof *mean);
    float *rstd = (float *)xmalloc(N * sizeof *rstd);
    float *db0 = host_copy(db, (size_t)C);

    layernorm_forward(y, mean, rstd, x, w, bias ? b : NULL, B, T, C);
    layernorm_backward(dx, dw, bias ? db : NULL, dy, x, w, mean, rstd, B, T,
                       C);
    layernorm_forward_cuda(d_y, d_mean, d_rstd, d_x, d_w, bias ? d_b : NULL,
                           B, T, C);
    layernorm_backward_cuda(d_dx, d_dw, bias ? d_db : NULL, d_dy, d_x, d_w,
                            d_mean, d_rstd, B, T, C);
    compare(rep, "layernorm_forward_cuda: out", sizes, d_y, y, n, FP32_TOL);
    compare(rep, "layernorm_forward_cuda: mean", sizes, d_mean, mean, N,
            FP32_TOL);
    compare(rep, "layernorm_forward_cuda: rstd", sizes, d_rstd, rstd, N,
            FP32_TOL);
    compare(rep, "layernorm_backward_cuda: dinp", sizes, d_dx, dx, n,
            FP32_TOL);
    compare(rep, "layernorm_backward_cuda: dweight", sizes, d_dw, dw,
            (size_t)C, FP32_TOL);
    // Without a bias, dbias must stay as it was (the CPU's db too).
    compare(rep, bias ? "layernorm_backward_cuda: dbias"
                      : "layernorm_backward_cuda: dbias untouched",
            sizes, d_db, bias ? db : db0, (size_t)C, bias ? FP32_TOL : 0.0);
    // The set form: dinp = its gradient alone (the CPU's into zeros),
    // into a buffer of NaN, which must not show; dweight adds up again.
    float *dx0 = (float *)xcalloc(n, sizeof *dx0);
    float *dw0 = (float *)xcalloc((size_t)C, sizeof *dw0);
    layernorm_backward(dx0, dw0, NULL, dy, x, w, mean, rstd, B, T, C);
    float *nan = (float *)xmalloc(n * sizeof *nan);
    for (size_t i = 0; i < n; i++) nan[i] = NAN;
    float *d_dx_set = to_device_guarded(nan, n);
    free(nan);
    layernorm_backward_set_cuda(d_dx_set, d_dw, NULL, d_dy, d_x, d_w,
                                d_mean, d_rstd, B, T, C);
    // (With C = 2, x-hat is +-1 whatever the input, and the gradient
    // alone is rounding noise, relative to itself: no test there.)
    if (C > 2)
        compare(rep, "layernorm_backward_set_cuda: dinp", sizes, d_dx_set,
                dx0, n, FP32_TOL);
    free(dw0);
    int damage = guard_damage(d_y, n) + guard_damage(d_mean, N)
                 + guard_damage(d_rstd, N) + guard_damage(d_dx, n)
                 + guard_damage(d_dw, (size_t)C) + guard_damage(d_db, (size_t)C)
                 + guard_damage(d_dx_set, n);
    report_value(rep, "layernorm_*_cuda: writes past the end", sizes,
                 damage, 0);
    float *dev[] = {d_x, d_w, d_b, d_dy, d_y, d_mean, d_rstd, d_dx, d_dw,
                    d_db, d_dx_set};
    for (float *p : dev) cuda_free(p);
    float *host[] = {x, w, b, dy, dx, dw, db, y, mean, rstd, db0, dx0};
    for (float *p : host) free(p);
}

// sz: B, T, C. layernorm_forward_copy_cuda against chapter 4, with its
// bf16 copy bit for bit the rounding of the fp32 output beside it (and
// nothing written past the copy's end).
static void check_layernorm_copy(KReport *rep, const int sz[4],
                                 uint64_t seed) {
    int B = sz[0], T = sz[1], C = sz[2];
    char sizes[64];
    snprintf(sizes, sizeof sizes, "B=%d T=%d C=%d", B, T, C);
    Rng rng;
    rng_seed(&rng, seed);
    size_t N = (size_t)B * T, n = N * C;
    float *x = host_randn(&rng, n, 3.0f), *w = host_randn(&rng, C, 1.0f);
    float *b = host_randn(&rng, (size_t)C, 1.0f);
    float *y = (float *)xmalloc(n * sizeof *y);
    float *mean = (float *)xmalloc(N * sizeof *mean);
    float *rstd = (float *)xmalloc(N * sizeof *rstd);
    layernorm_forward(y, mean, rstd, x, w, b, B, T, C);
    float *d_x = to_device(x, n), *d_w = to_device(w, (size_t)C);
    float *d_b = to_device(b, (size_t)C), *d_y = cuda_alloc_floats(n);
    float *d_mean = cuda_alloc_floats(N), *d_rstd = cuda_alloc_floats(N);
    // the copy, and a guard of 64 values after it
    uint16_t *d_y16, guard[64], back[64];
    for (int i = 0; i < 64; i++) guard[i] = 0x7fc1;
    CUDA_CHECK(cudaMalloc((void **)&d_y16, (n + 64) * sizeof *d_y16));
    CUDA_CHECK(cudaMemcpy(d_y16 + n, guard, sizeof guard,
                          cudaMemcpyHostToDevice));
    layernorm_forward_copy_cuda(d_y, d_y16, d_mean, d_rstd, d_x, d_w, d_b, B,
                                T, C);
    compare(rep, "layernorm_forward_copy_cuda: out", sizes, d_y, y, n,
            FP32_TOL);
    CUDA_CHECK(cudaMemcpy(back, d_y16 + n, sizeof back,
                          cudaMemcpyDeviceToHost));
    report_value(rep, "layernorm_forward_copy_cuda: out16 wrong", sizes,
                 (double)copy_mismatches(d_y16, d_y, n)
                     + (memcmp(back, guard, sizeof guard) != 0), 0);
    float *dev[] = {d_x, d_w, d_b, d_y, d_mean, d_rstd};
    for (float *p : dev) cuda_free(p);
    cuda_free(d_y16);
    float *host[] = {x, w, b, y, mean, rstd};
    for (float *p : host) free(p);
}

// sz: n. The residual add and its backward pass (+=): one add each, so
// the GPU must give the CPU's floats exactly.
static void check_residual(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    char sizes[64];
    snprintf(sizes, sizeof sizes, "n=%zu", n);
    Rng rng;
    rng_seed(&rng, seed);
    float *a = host_randn(&rng, n, 1.0f), *b = host_randn(&rng, n, 1.0f);
    float *dy = host_randn(&rng, n, 1.0f);
    float *da = host_randn(&rng, n, 1.0f), *db = host_randn(&rng, n, 1.0f);
    float *y = (float *)xmalloc(n * sizeof *y);
    float *d_a = to_device(a, n), *d_b = to_device(b, n);
    float *d_dy = to_device(dy, n), *d_y = to_device_guarded(NULL, n);
    float *d_da = to_device_guarded(da, n), *d_db = to_device_guarded(db, n);
    residual_forward(y, a, b, n);
    residual_backward(da, db, dy, n);
    residual_forward_cuda(d_y, d_a, d_b, n);
    residual_backward_cuda(d_da, d_db, d_dy, n);
    compare(rep, "residual_forward_cuda: out", sizes, d_y, y, n, 0.0);
    compare(rep, "residual_backward_cuda: da", sizes, d_da, da, n, 0.0);
    compare(rep, "residual_backward_cuda: db", sizes, d_db, db, n, 0.0);
    report_value(rep, "residual_*_cuda: writes past the end", sizes,
                 guard_damage(d_y, n) + guard_damage(d_da, n)
                     + guard_damage(d_db, n), 0);
    float *dev[] = {d_a, d_b, d_dy, d_y, d_da, d_db};
    for (float *p : dev) cuda_free(p);
    float *host[] = {a, b, dy, da, db, y};
    for (float *p : host) free(p);
}

// The counter of element 0 in the dropout checks: past 2^32, so that a
// kernel keeping its counter in 32 bits draws the wrong numbers.
static const uint64_t DROPOUT_OFFSET = (1ull << 32) + 977;

// The mask dropout_forward_cuda(p, seed, offset) must draw, computed on
// the host: 0 where dropout_uniform(seed, offset + i) < p, else the
// CPU's scale 1 / (1 - p).
static float *expected_mask(float p, uint64_t seed, uint64_t offset,
                            size_t n) {
    float *m = (float *)xmalloc((n ? n : 1) * sizeof *m);
    float scale = 1.0f / (1.0f - p);
    for (size_t i = 0; i < n; i++)
        m[i] = dropout_uniform(seed, offset + i) < p ? 0.0f : scale;
    return m;
}

// How many standard deviations k is from a binomial(n, q)'s mean.
static double binomial_sigmas(size_t k, size_t n, double q) {
    double sd = sqrt((double)n * q * (1.0 - q));
    return ((double)k - (double)n * q) / (sd > 0 ? sd : 1.0);
}

// sz: n, p in percent. dropout_forward_cuda against the mask of
// dropout_uniform on the host, exactly (one multiply: no rounding to
// differ), out of place and in place; dropout_backward_cuda against the
// CPU's dropout_backward with that mask (+=). Then the law of the draws:
// the dropped fraction is within 4 standard deviations of p, and another
// offset or another seed draws another mask (two independent masks
// differ at a fraction 2p(1 - p) of the elements, also within 4 sigma).
// p = 0 must be the identity with a mask of ones, as on the CPU.
static void check_dropout(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    float p = (float)sz[1] / 100.0f;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "n=%zu p=%.2f", n, (double)p);
    Rng rng;
    rng_seed(&rng, seed);
    float *x = host_randn(&rng, n, 1.0f), *dy = host_randn(&rng, n, 1.0f);
    float *dx = host_randn(&rng, n, 1.0f);
    float *mask = expected_mask(p, seed, DROPOUT_OFFSET, n);
    float *y = (float *)xmalloc((n ? n : 1) * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = x[i] * mask[i];

    float *d_x = to_device(x, n), *d_dy = to_device(dy, n);
    float *d_y = to_device_guarded(NULL, n);
    float *d_mask = to_device_guarded(NULL, n);
    float *d_dx = to_device_guarded(dx, n);   // before the CPU's +=
    dropout_backward(dx, dy, mask, n);
    dropout_forward_cuda(d_y, d_mask, d_x, p, seed, DROPOUT_OFFSET, n);
    compare(rep, "dropout_forward_cuda: out", sizes, d_y, y, n, 0.0);
    compare(rep, "dropout_forward_cuda: mask", sizes, d_mask, mask, n, 0.0);
    // In place: out is inp.
    float *d_xy = to_device_guarded(x, n);
    dropout_forward_cuda(d_xy, d_mask, d_xy, p, seed, DROPOUT_OFFSET, n);
    compare(rep, "dropout_forward_cuda: out in place", sizes, d_xy, y, n,
            0.0);
    // dinp += dout * mask: a multiply and an add, which the GPU may fuse
    // into one rounding, so within FP32_TOL rather than exact.
    dropout_backward_cuda(d_dx, d_dy, d_mask, n);
    compare(rep, "dropout_backward_cuda: dinp", sizes, d_dx, dx, n,
            FP32_TOL);
    // The set form, dinp = dout * mask (one multiply: exact), into a
    // buffer of NaN and in place.
    float *set = (float *)xmalloc((n ? n : 1) * sizeof *set);
    for (size_t i = 0; i < n; i++) set[i] = NAN;
    float *d_set = to_device_guarded(set, n);
    for (size_t i = 0; i < n; i++) set[i] = dy[i] * mask[i];
    dropout_backward_set_cuda(d_set, d_dy, d_mask, n);
    compare(rep, "dropout_backward_set_cuda: dinp", sizes, d_set, set, n,
            0.0);
    dropout_backward_set_cuda(d_dy, d_dy, d_mask, n);
    compare(rep, "dropout_backward_set_cuda: in place", sizes, d_dy, set, n,
            0.0);
    report_value(rep, "dropout_*_cuda: writes past the end", sizes,
                 guard_damage(d_y, n) + guard_damage(d_mask, n)
                     + guard_damage(d_xy, n) + guard_damage(d_dx, n)
                     + guard_damage(d_set, n), 0);
    cuda_free(d_set);
    free(set);

    if (p > 0.0f) {
        float *got = (float *)xmalloc(n * sizeof *got);
        cuda_download(got, d_mask, n);
        size_t dropped = 0;
        for (size_t i = 0; i < n; i++) dropped += got[i] == 0.0f;
        report_value(rep, "dropout: sigmas of dropped fraction", sizes,
                     binomial_sigmas(dropped, n, p), 4.0);
        // Another offset (past the first call's counters), another seed.
        const uint64_t other[2][2] = {{seed, DROPOUT_OFFSET + n},
                                      {seed + 1, DROPOUT_OFFSET}};
        const char *what[2] = {"dropout: another offset, sigmas",
                               "dropout: another seed, sigmas"};
        float *m2 = (float *)xmalloc(n * sizeof *m2);
        for (int k = 0; k < 2; k++) {
            dropout_forward_cuda(d_y, d_mask, d_x, p, other[k][0],
                                 other[k][1], n);
            cuda_download(m2, d_mask, n);
            size_t differ = 0;
            for (size_t i = 0; i < n; i++) differ += (m2[i] == 0.0f)
                                                     != (got[i] == 0.0f);
            report_value(rep, what[k], sizes,
                         binomial_sigmas(differ, n, 2.0 * p * (1.0 - p)),
                         4.0);
        }
        free(got), free(m2);
    }
    float *dev[] = {d_x, d_dy, d_y, d_mask, d_dx, d_xy};
    for (float *q : dev) cuda_free(q);
    float *host[] = {x, dy, dx, mask, y};
    for (float *q : host) free(q);
}

// sz: n, p in percent. sublayer_add_cuda (out = x + dropout(out)) against
// chapter 4's residual add of the CPU's dropout with the mask of
// dropout_uniform, and sublayer_add_backward_cuda against its definition
// (dx += dout, dy += dout * mask). With p = 0 the mask given must be left as
// it was, and the backward pass takes a NULL mask.
static void check_sublayer_add(KReport *rep, const int sz[4],
                               uint64_t seed) {
    size_t n = (size_t)sz[0];
    float p = (float)sz[1] / 100.0f;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "n=%zu p=%.2f", n, (double)p);
    Rng rng;
    rng_seed(&rng, seed);
    float *f = host_randn(&rng, n, 1.0f), *x = host_randn(&rng, n, 1.0f);
    float *dout = host_randn(&rng, n, 1.0f);
    float *dx = host_randn(&rng, n, 1.0f), *dy = host_randn(&rng, n, 1.0f);
    float *mask = expected_mask(p, seed, DROPOUT_OFFSET, n);
    float *sentinel = (float *)xmalloc(n * sizeof *sentinel);
    for (size_t i = 0; i < n; i++) sentinel[i] = 7.0f;
    float *d_out = to_device_guarded(f, n), *d_x = to_device(x, n);
    float *d_dout = to_device(dout, n);
    float *d_dx = to_device_guarded(dx, n), *d_dy = to_device_guarded(dy, n);
    float *d_mask = to_device_guarded(sentinel, n);

    float *dropped = (float *)xmalloc(n * sizeof *dropped);
    float *out = (float *)xmalloc(n * sizeof *out);
    for (size_t i = 0; i < n; i++) dropped[i] = f[i] * mask[i];
    residual_forward(out, x, dropped, n);
    for (size_t i = 0; i < n; i++) {   // the backward pass, adding
        dx[i] += dout[i];
        dy[i] += dout[i] * mask[i];      // all ones for p = 0
    }

    sublayer_add_cuda(d_out, d_mask, d_x, p, seed, DROPOUT_OFFSET, n);
    sublayer_add_backward_cuda(d_dx, d_dy, d_dout, p > 0 ? d_mask : NULL,
                               n);
    compare(rep, "sublayer_add_cuda: out", sizes, d_out, out, n, FP32_TOL);
    compare(rep, p > 0 ? "sublayer_add_cuda: mask"
                       : "sublayer_add_cuda: mask untouched",
            sizes, d_mask, p > 0 ? mask : sentinel, n, 0.0);
    compare(rep, "sublayer_add_backward_cuda: dx", sizes, d_dx, dx, n, 0.0);
    compare(rep, "sublayer_add_backward_cuda: dy", sizes, d_dy, dy, n,
            FP32_TOL);
    // The set form, from random values that must not show: dy = dout *
    // mask and dx = dout, then dx += dout (add_dx) and dy = dout * mask.
    float *r1 = host_randn(&rng, n, 1.0f), *r2 = host_randn(&rng, n, 1.0f);
    cuda_upload(d_dx, r1, n);
    cuda_upload(d_dy, r2, n);
    const float *dm = p > 0 ? d_mask : NULL;
    sublayer_add_backward_set_cuda(d_dx, false, d_dy, d_dout, dm, n);
    for (size_t i = 0; i < n; i++) dx[i] = dout[i], dy[i] = dout[i] * mask[i];
    compare(rep, "sublayer_add_backward_set_cuda: dx", sizes, d_dx, dx, n,
            0.0);
    compare(rep, "sublayer_add_backward_set_cuda: dy", sizes, d_dy, dy, n,
            FP32_TOL);
    cuda_upload(d_dx, r1, n);
    cuda_upload(d_dy, r2, n);
    sublayer_add_backward_set_cuda(d_dx, true, d_dy, d_dout, dm, n);
    for (size_t i = 0; i < n; i++) dx[i] = r1[i] + dout[i];
    compare(rep, "sublayer_add_backward_set_cuda: dx +=", sizes, d_dx, dx,
            n, 0.0);
    compare(rep, "sublayer_add_backward_set_cuda: dy =", sizes, d_dy, dy, n,
            FP32_TOL);
    free(r1), free(r2);
    report_value(rep, "sublayer_add_*_cuda: writes past the end", sizes,
                 guard_damage(d_out, n) + guard_damage(d_dx, n)
                     + guard_damage(d_dy, n) + guard_damage(d_mask, n), 0);
    float *dev[] = {d_out, d_x, d_dout, d_dx, d_dy, d_mask};
    for (float *q : dev) cuda_free(q);
    float *host[] = {f, x, dout, dx, dy, mask, sentinel, dropped, out};
    for (float *q : host) free(q);
}

// sz: B, T, C, kind: 0 a GPT's (scale 1, learned positions), 1 chapter
// 7's (scale sqrt(C), the fixed table: dwpos NULL), 2 a GPT's with a
// vocabulary of 300 ids (past EMB_FAST_VOCAB: the other kernel). Else
// the vocabulary is small (23 ids for up to B*T positions), so ids
// repeat and the scatter into dwte must add every repeat; the position
// table has 2 rows more than T, which must stay untouched. Gradients
// start random (+=).
static void check_embedding(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1], C = sz[2], V = sz[3] == 2 ? 300 : 23;
    bool fixed = sz[3] == 1;
    float scale = fixed ? sqrtf((float)C) : 1.0f;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "B=%d T=%d C=%d V=%d%s", B, T, C, V,
             fixed ? " dwpos=NULL" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t N = (size_t)B * T, n = N * C, nw = (size_t)V * C;
    size_t np = (size_t)(T + 2) * C;
    int *idx = (int *)xmalloc(N * sizeof *idx);
    for (size_t r = 0; r < N; r++) idx[r] = (int)rng_below(&rng, V);
    idx[N - 1] = idx[0];   // at least one repeat, even for B*T = 2
    float *wte = host_randn(&rng, nw, 1.0f);
    float *pos = host_randn(&rng, np, 1.0f);
    float *dout = host_randn(&rng, n, 1.0f);
    float *dwte = host_randn(&rng, nw, 1.0f);
    float *dwpos = host_randn(&rng, np, 1.0f);
    float *out = (float *)xmalloc(n * sizeof *out);
    int *d_idx = cuda_alloc_ints(N);
    cuda_upload_ints(d_idx, idx, N);
    float *d_wte = to_device(wte, nw), *d_pos = to_device(pos, np);
    float *d_dout = to_device(dout, n), *d_out = to_device_guarded(NULL, n);
    float *d_dwte = to_device_guarded(dwte, nw);
    float *d_dwpos = to_device_guarded(dwpos, np);

    embedding_forward(out, idx, wte, scale, pos, B, T, C);
    embedding_backward(dwte, fixed ? NULL : dwpos, dout, idx, scale, B, T,
                       C);
    embedding_forward_cuda(d_out, d_idx, d_wte, scale, d_pos, B, T, C);
    embedding_backward_cuda(d_dwte, fixed ? NULL : d_dwpos, d_dout, d_idx,
                            scale, B, T, C, V);
    compare(rep, "embedding_forward_cuda: out", sizes, d_out, out, n,
            FP32_TOL);
    compare(rep, "embedding_backward_cuda: dwte", sizes, d_dwte, dwte, nw,
            FP32_TOL);
    if (!fixed)
        compare(rep, "embedding_backward_cuda: dwpos", sizes, d_dwpos, dwpos,
                np, FP32_TOL);
    report_value(rep, "embedding_*_cuda: writes past the end", sizes,
                 guard_damage(d_out, n) + guard_damage(d_dwte, nw)
                     + guard_damage(d_dwpos, np), 0);
    cuda_free(d_idx);
    float *dev[] = {d_wte, d_pos, d_dout, d_out, d_dwte, d_dwpos};
    for (float *q : dev) cuda_free(q);
    float *host[] = {wte, pos, dout, dwte, dwpos, out};
    for (float *q : host) free(q);
    free(idx);
}


// ---- linear.cu, mha.cu -----------------------------------------------------

// sz: N, C_in, C_out, bias (0/1). The products are cuBLAS's; a sum over
// C_in or N terms in another order differs by a few ulps of the terms, so
// the tolerance grows with the length of the sum (sqrt of it, rounding
// being a random walk) but stays at 1e-5 for sums of up to 100 terms.
static void check_linear(KReport *rep, const int sz[4], uint64_t seed) {
    int N = sz[0], Ci = sz[1], Co = sz[2];
    bool bias = sz[3] != 0;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "N=%d Cin=%d Cout=%d%s", N, Ci, Co,
             bias ? " bias" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t ni = (size_t)N * Ci, nw = (size_t)Co * Ci, no = (size_t)N * Co;
    float *x = host_randn(&rng, ni, 1.0f), *w = host_randn(&rng, nw, 0.1f);
    float *b = host_randn(&rng, (size_t)Co, 0.1f);
    float *dy = host_randn(&rng, no, 1.0f), *dx = host_randn(&rng, ni, 1.0f);
    float *dw = host_randn(&rng, nw, 1.0f);
    float *db = host_randn(&rng, (size_t)Co, 1.0f);
    float *d_x = to_device(x, ni), *d_w = to_device(w, nw);
    float *d_b = to_device(b, (size_t)Co), *d_dy = to_device(dy, no);
    float *d_dx = to_device(dx, ni), *d_dw = to_device(dw, nw);
    float *d_db = to_device(db, (size_t)Co), *d_y = cuda_alloc_floats(no);
    float *y = (float *)xmalloc(no * sizeof *y);
    linear_forward(y, x, w, bias ? b : NULL, N, Ci, Co);
    linear_backward(dx, dw, bias ? db : NULL, dy, x, w, N, Ci, Co);
    linear_forward_cuda(d_y, d_x, d_w, bias ? d_b : NULL, N, Ci, Co);
    linear_backward_cuda(d_dx, d_dw, bias ? d_db : NULL, d_dy, d_x, d_w, N,
                         Ci, Co);
    int longest = N > Ci ? (N > Co ? N : Co) : (Ci > Co ? Ci : Co);
    double tol = FP32_TOL * (longest > 100 ? sqrt(longest / 100.0) : 1.0);
    compare(rep, "linear_forward_cuda: out", sizes, d_y, y, no, tol);
    compare(rep, "linear_backward_cuda: dinp", sizes, d_dx, dx, ni, tol);
    compare(rep, "linear_backward_cuda: dweight", sizes, d_dw, dw, nw, tol);
    if (bias)
        compare(rep, "linear_backward_cuda: dbias", sizes, d_db, db,
                (size_t)Co, tol);
    // The set form: dinp (random again, which must not show) gets the
    // gradient alone, the CPU's from a cleared dinp; dweight still adds.
    float *dx0 = host_randn(&rng, ni, 1.0f);
    cuda_upload(d_dx, dx0, ni);
    memset(dx, 0, ni * sizeof *dx);
    linear_backward(dx, dw, bias ? db : NULL, dy, x, w, N, Ci, Co);
    linear_backward_set_cuda(d_dx, d_dw, bias ? d_db : NULL, d_dy, d_x, d_w,
                             N, Ci, Co);
    compare(rep, "linear_backward_set_cuda: dinp", sizes, d_dx, dx, ni, tol);
    compare(rep, "linear_backward_set_cuda: dweight", sizes, d_dw, dw, nw,
            tol);
    free(dx0);
    float *dev[] = {d_x, d_w, d_b, d_dy, d_dx, d_dw, d_db, d_y};
    for (float *p : dev) cuda_free(p);
    float *host[] = {x, w, b, dy, dx, dw, db, y};
    for (float *p : host) free(p);
}

// ---- gemm.cu: bf16 ------------------------------------------------------------

// The bf16 nearest to x, found the long way round rather than by the bit
// trick of the emulation: the two bf16 values on either side of x (x cut
// to its top 16 bits, and the next bf16 away from zero, an ulp of x's
// exponent further), whichever is nearer in exact double arithmetic; a
// tie goes to the one whose last bit is 0. For a NaN, any NaN will do.
static uint16_t bf16_nearest(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t cut = u & 0xffff0000u;
    uint16_t k = (uint16_t)(cut >> 16);
    if (isinf(x) || isnan(x)) return isnan(x) ? 0x7fff : k;
    float lo;
    memcpy(&lo, &cut, sizeof lo);
    int e = (int)((u >> 23) & 0xff);   // 0: a subnormal, spaced as e = 1
    double ulp = ldexp(1.0, (e ? e : 1) - 127 - 7);
    double a = fabs((double)x), below = a - fabs((double)lo);
    double above = fabs((double)lo) + ulp - a;
    if (above < below || (above == below && (k & 1))) k++;
    return k;   // a carry into the exponent is right, up to infinity
}

static float bf16_value(uint16_t k) {
    uint32_t u = (uint32_t)k << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

// sz: n. bf16_round_cuda against bf16_nearest on n floats: random ones
// over 60 binary orders of magnitude, exact ties (the dropped 16 bits
// 0x8000, a kept part odd half the time), and the edges (zeros,
// subnormals, the largest floats, whose ties round to infinity, the
// infinities, NaN). The result is the number of floats rounded to
// another bf16 than the nearest: it must be 0.
static void check_bf16_round(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    char sizes[64];
    snprintf(sizes, sizeof sizes, "n=%zu", n);
    static const uint32_t edges[] = {
        0x00000000u, 0x80000000u, 0x00000001u, 0x00008000u, 0x00018000u,
        0x007fffffu, 0x00800000u, 0x7f7fffffu, 0xff7f8000u, 0x7f7f7fffu,
        0x7f800000u, 0xff800000u, 0x7fc00000u, 0x3f808000u, 0x3f818000u};
    int n_edges = (int)(sizeof edges / sizeof edges[0]);
    Rng rng;
    rng_seed(&rng, seed);
    float *x = host_randn(&rng, n, 1.0f);
    for (size_t i = 0; i < n; i++) {
        float v = ldexpf(x[i], (int)rng_below(&rng, 61) - 30);
        uint32_t u;
        memcpy(&u, &v, sizeof u);
        if (i % 4 == 1) u = (u & 0xffff0000u) | 0x8000u;   // a tie
        if (i % 4 == 2) u = (u & 0xffff0000u) | (rng_u32(&rng) & 0xffffu);
        if (i < (size_t)n_edges) u = edges[i];
        memcpy(&x[i], &u, sizeof u);
    }
    float *d_x = to_device(x, n);
    uint16_t *d_h = (uint16_t *)cuda_alloc_floats(n / 2 + 1);
    uint16_t *h = (uint16_t *)xmalloc((n ? n : 1) * sizeof *h);
    int bad = 0;
    // from x (aligned: four floats per thread) and from x + 1 (one each)
    for (size_t skip = 0; skip < 2 && skip < n; skip++) {
        size_t m = n - skip;
        bf16_round_cuda(d_h + skip, d_x + skip, m);
        CUDA_CHECK(cudaMemcpy(h, d_h + skip, m * sizeof *h,
                              cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < m; i++) {
            float xi = x[skip + i];
            uint16_t want = bf16_nearest(xi);
            if (isnan(xi) ? !isnan(bf16_value(h[i])) : h[i] != want) bad++;
        }
    }
    report_value(rep, "bf16_round_cuda: not the nearest", sizes, bad, 0);
    cuda_free(d_x), cuda_free(d_h);
    free(x), free(h);
}

// sz: M, N, K, mode (bit 0: trans_a, bit 1: trans_b, bit 2: a batch of 3
// through gemm_batched_cuda). gemm_cuda in bf16 mode against the CPU's
// gemm() on the same operands rounded to bf16 first (bf16_nearest),
// alpha 1.25 and beta 0.5 over a random C. A product of two bf16 values
// is exact in fp32, so only the fp32 additions differ: on the tensor
// cores in their own order, and with the products aligned by truncation,
// hence 5e-5 rather than 1e-5 (for K up to a few hundred). Operands that
// were not rounded give about 1e-3, twenty times that.
static void check_gemm_bf16(KReport *rep, const int sz[4], uint64_t seed) {
    int M = sz[0], N = sz[1], K = sz[2];
    bool ta = sz[3] & 1, tb = (sz[3] & 2) != 0, batched = (sz[3] & 4) != 0;
    int batch = batched ? 3 : 1;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "M=%d N=%d K=%d%s%s%s", M, N, K,
             ta ? " A^T" : "", tb ? " B^T" : "", batched ? " x3" : "");
    int lda = ta ? M : K, ldb = tb ? K : N;
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    Rng rng;
    rng_seed(&rng, seed);
    float *A = host_randn(&rng, na * batch, 1.0f);
    float *B = host_randn(&rng, nb * batch, 1.0f);
    float *C = host_randn(&rng, nc * batch, 1.0f);
    float *d_A = to_device(A, na * batch), *d_B = to_device(B, nb * batch);
    float *d_C = to_device(C, nc * batch);
    for (size_t i = 0; i < na * batch; i++) A[i] = bf16_value(bf16_nearest(A[i]));
    for (size_t i = 0; i < nb * batch; i++) B[i] = bf16_value(bf16_nearest(B[i]));
    for (int i = 0; i < batch; i++)
        gemm(ta, tb, M, N, K, 1.25f, A + i * na, lda, B + i * nb, ldb, 0.5f,
             C + i * nc, N);
    bool was = gemm_bf16();
    gemm_set_bf16(true);
    if (batched)
        gemm_batched_cuda(ta, tb, M, N, K, 1.25f, d_A, lda, (long long)na,
                          d_B, ldb, (long long)nb, 0.5f, d_C, N,
                          (long long)nc, batch);
    else
        gemm_cuda(ta, tb, M, N, K, 1.25f, d_A, lda, d_B, ldb, 0.5f, d_C, N);
    gemm_set_bf16(was);
    compare(rep, batched ? "gemm_batched_cuda, bf16: C" : "gemm_cuda, bf16: C",
            sizes, d_C, C, nc * batch, 5e-5);
    cuda_free(d_A), cuda_free(d_B), cuda_free(d_C);
    free(A), free(B), free(C);
}

// sz: M, N, K, mode (bit 0: bf16, bit 1: rows of odd width). A grid of 3
// sequences by 3 heads, each a (M, K) @ (K, N) product, the heads of A
// and B side by side in the rows of one array (as attention's q and k in
// qkv) and C's the same; alpha 1.25 and beta 0.5 over a random C; against
// the CPU's gemm() per product (on operands rounded to bf16 in bf16
// mode, within 5e-5 as check_gemm_bf16). With heads of a width that is a
// multiple of 8 floats, every matrix starts 16-byte aligned and the grid
// must be one pointer-batched call: one launch, the table's (counted on
// a second call: the first may also grow the table, and must not lose
// the operands' copies doing so, which the second would cast again);
// with odd
// widths (bit 1) no launch of a table at all, but a strided call per
// head, since cuBLAS's fast kernels assume aligned matrices (and the
// emulated cuBLAS refuses any other).
static void check_gemm_grid(KReport *rep, const int sz[4], uint64_t seed) {
    int M = sz[0], N = sz[1], K = sz[2];
    bool bf16 = (sz[3] & 1) != 0, odd = (sz[3] & 2) != 0;
    const int outer = 3, inner = 3;   // 9: an odd count of pointers
    // each head's columns: K (A) and N (B, C), rounded up to a multiple
    // of 8 (aligned), or that plus 1 (odd)
    int wa = (K + 7) / 8 * 8 + odd, wb = (N + 7) / 8 * 8 + odd;
    int lda = inner * wa, ldb = inner * wb, ldc = inner * wb;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "M=%d N=%d K=%d %s%s", M, N, K,
             bf16 ? "bf16" : "fp32", odd ? " odd" : "");
    size_t na = (size_t)outer * M * lda, nb = (size_t)outer * K * ldb;
    size_t nc = (size_t)outer * M * ldc;
    Rng rng;
    rng_seed(&rng, seed);
    float *A = host_randn(&rng, na, 1.0f), *B = host_randn(&rng, nb, 1.0f);
    float *C = host_randn(&rng, nc, 1.0f);
    float *d_A = to_device(A, na), *d_B = to_device(B, nb);
    float *d_C = to_device(C, nc);
    if (bf16) {
        for (size_t i = 0; i < na; i++) A[i] = bf16_value(bf16_nearest(A[i]));
        for (size_t i = 0; i < nb; i++) B[i] = bf16_value(bf16_nearest(B[i]));
    }
    for (int i = 0; i < outer; i++)
        for (int j = 0; j < inner; j++)
            gemm(false, false, M, N, K, 1.25f,
                 A + (size_t)i * M * lda + j * wa, lda,
                 B + (size_t)i * K * ldb + j * wb, ldb, 0.5f,
                 C + (size_t)i * M * ldc + j * wb, ldc);
    bool was = gemm_bf16();
    gemm_set_bf16(bf16);
    if (bf16) {   // the operands' copies first: the launches below are the
                  // grid's own
        gemm_bf16_prepare(d_A, na);
        gemm_bf16_prepare(d_B, nb);
    }
    auto grid = [&] {
        gemm_grid_cuda(false, false, M, N, K, 1.25f, d_A, lda,
                       (long long)M * lda, wa, d_B, ldb, (long long)K * ldb,
                       wb, 0.5f, d_C, ldc, (long long)M * ldc, wb, outer,
                       inner);
    };
    grid();
    compare(rep, "gemm_grid_cuda: C", sizes, d_C, C, nc,
            bf16 ? 5e-5 : FP32_TOL);
    // the launches of a second call (the first may allocate the table)
    unsigned long before = cuda_writes();
    grid();
    unsigned long launches = cuda_writes() - before;
    gemm_set_bf16(was);
    report_value(rep, odd ? "gemm_grid_cuda: tables written"
                          : "gemm_grid_cuda: tables written but one",
                 sizes, fabs((double)launches - (odd ? 0 : 1)), 0);
    cuda_free(d_A), cuda_free(d_B), cuda_free(d_C);
    free(A), free(B), free(C);
}

// sz: n. gemm.cu keeps the bf16 copies of its last operands and uses
// them again while nothing can have changed them. With square (n, n)
// matrices: C = A @ B^T (both cast); then A = B @ B^T, a product whose
// operands are both in hand (so A's copy stays) and whose output is A,
// and C = A @ B^T again; then B changed by an upload and C = A @ B^T a
// third time; each against the CPU on the operands of the moment. A copy
// kept past its source's change makes the second or third product wrong
// by far more than 5e-5.
static void check_gemm_bf16_reuse(KReport *rep, const int sz[4],
                                  uint64_t seed) {
    int M = sz[0], N = M, K = M;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "n=%d", M);
    size_t na = (size_t)M * K, nb = (size_t)N * K, nc = (size_t)M * N;
    Rng rng;
    rng_seed(&rng, seed);
    float *A = host_randn(&rng, na, 1.0f), *B = host_randn(&rng, nb, 1.0f);
    float *B2 = host_randn(&rng, nb, 1.0f);
    float *C = (float *)xmalloc(nc * sizeof *C);
    float *d_A = to_device(A, na), *d_B = to_device(B, nb);
    float *d_C = cuda_alloc_floats(nc);
    bool was = gemm_bf16();
    gemm_set_bf16(true);
    const char *names[3] = {"gemm_cuda, bf16: C, operands cast",
                            "gemm_cuda, bf16: C after A changed",
                            "gemm_cuda, bf16: C after B changed"};
    for (int round = 0; round < 3; round++) {
        if (round == 1) {   // A = B @ B^T, a product into a cached operand
            gemm_cuda(false, true, M, K, N, 1.0f, d_B, K, d_B, K, 0.0f, d_A,
                      K);
            cuda_download(A, d_A, na);   // what the GPU computed for A
        }
        if (round == 2) {   // B replaced by an upload
            memcpy(B, B2, nb * sizeof *B);
            cuda_upload(d_B, B, nb);
        }
        gemm_cuda(false, true, M, N, K, 1.0f, d_A, K, d_B, K, 0.0f, d_C, N);
        float *Ar = host_copy(A, na), *Br = host_copy(B, nb);
        for (size_t i = 0; i < na; i++) Ar[i] = bf16_value(bf16_nearest(Ar[i]));
        for (size_t i = 0; i < nb; i++) Br[i] = bf16_value(bf16_nearest(Br[i]));
        gemm(false, true, M, N, K, 1.0f, Ar, K, Br, K, 0.0f, C, N);
        compare(rep, names[round], sizes, d_C, C, nc, 5e-5);
        free(Ar), free(Br);
    }
    gemm_set_bf16(was);
    float *dev[] = {d_A, d_B, d_C};
    for (float *q : dev) cuda_free(q);
    float *host[] = {A, B, B2, C};
    for (float *q : host) free(q);
}

// sz: n. The copies found inside other copies, and made beside their
// source. X is (n, 2n); A is its left half and B its right half, each an
// (n, n) matrix with rows 2n apart, as attention's q and k lie in qkv.
// After gemm_bf16_prepare(X), C = A @ B^T must find both inside X's
// copy, at their offsets (a copy used from its start gives B = A). Then
// X changes, with its new copy made beside it (gemm_bf16_copy_begin and
// _end, as attention's softmax does): the old copy must go, and the next
// product must see the new values; then another array changes the same
// way, and X's copy may stay: the product is right either way.
static void check_gemm_bf16_views(KReport *rep, const int sz[4],
                                  uint64_t seed) {
    int n = sz[0];
    char sizes[64];
    snprintf(sizes, sizeof sizes, "n=%d", n);
    size_t nx = (size_t)n * 2 * n, nc = (size_t)n * n;
    Rng rng;
    rng_seed(&rng, seed);
    float *X = host_randn(&rng, nx, 1.0f), *X2 = host_randn(&rng, nx, 1.0f);
    float *C = (float *)xmalloc(nc * sizeof *C);
    float *d_X = to_device(X, nx), *d_C = cuda_alloc_floats(nc);
    float *d_other = cuda_alloc_floats(nc);
    bool was = gemm_bf16();
    gemm_set_bf16(true);
    gemm_bf16_prepare(d_X, nx);
    const char *names[3] = {"gemm_cuda, bf16: views of one copy",
                            "gemm_cuda, bf16: copy made beside",
                            "gemm_cuda, bf16: write elsewhere"};
    for (int round = 0; round < 3; round++) {
        unsigned long before = cuda_writes();
        if (round == 1) {
            memcpy(X, X2, nx * sizeof *X);
            uint16_t *copy = gemm_bf16_copy_begin(d_X, nx, NULL);
            cuda_upload(d_X, X, nx);
            bf16_round_cuda(copy, d_X, nx);
            gemm_bf16_copy_end(before, d_X, nx);
        }
        if (round == 2) {
            uint16_t *copy = gemm_bf16_copy_begin(d_other, nc, NULL);
            cuda_upload(d_other, X2, nc);
            bf16_round_cuda(copy, d_other, nc);
            gemm_bf16_copy_end(before, d_other, nc);
        }
        gemm_cuda(false, true, n, n, n, 1.0f, d_X, 2 * n, d_X + n, 2 * n,
                  0.0f, d_C, n);
        float *Xr = host_copy(X, nx);
        for (size_t i = 0; i < nx; i++)
            Xr[i] = bf16_value(bf16_nearest(Xr[i]));
        gemm(false, true, n, n, n, 1.0f, Xr, 2 * n, Xr + n, 2 * n, 0.0f, C,
             n);
        compare(rep, names[round], sizes, d_C, C, nc, 5e-5);
        free(Xr);
    }
    gemm_set_bf16(was);
    cuda_free(d_X), cuda_free(d_C), cuda_free(d_other);
    free(X), free(X2), free(C);
}

// sz: B, T, C, NH. Split the three thirds of a (B, T, 3C) qkv, merge
// back into (B, T, C): pure copies, so they must be exact.
static void check_heads(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1], C = sz[2], NH = sz[3];
    char sizes[64];
    snprintf(sizes, sizeof sizes, "B=%d T=%d C=%d NH=%d", B, T, C, NH);
    Rng rng;
    rng_seed(&rng, seed);
    size_t btc = (size_t)B * T * C;
    float *qkv = host_randn(&rng, 3 * btc, 1.0f);
    float *k = (float *)xmalloc(btc * sizeof *k);
    float *y = host_randn(&rng, btc, 1.0f);
    float *d_qkv = to_device(qkv, 3 * btc), *d_k = cuda_alloc_floats(btc);
    float *d_y = to_device(y, btc);
    heads_split(k, qkv + C, 3 * C, B, T, C, NH);
    heads_split_cuda(d_k, d_qkv + C, 3 * C, B, T, C, NH);
    compare(rep, "heads_split_cuda: out", sizes, d_k, k, btc, 0.0);
    heads_merge(y, k, C, B, T, C, NH);
    heads_merge_cuda(d_y, d_k, C, B, T, C, NH);
    compare(rep, "heads_merge_cuda: out", sizes, d_y, y, btc, 0.0);
    cuda_free(d_qkv), cuda_free(d_k), cuda_free(d_y);
    free(qkv), free(k), free(y);
}

// ---- attention.cu ------------------------------------------------------------

// sz: N, D. Rows of D values through the softmax and back; the forward
// both into another array and in place (out = inp, as the CPU allows).
static void check_softmax(KReport *rep, const int sz[4], uint64_t seed) {
    int N = sz[0], D = sz[1];
    char sizes[64];
    snprintf(sizes, sizeof sizes, "N=%d D=%d", N, D);
    Rng rng;
    rng_seed(&rng, seed);
    size_t n = (size_t)N * D;
    float *x = host_randn(&rng, n, 3.0f), *dy = host_randn(&rng, n, 1.0f);
    float *dx = host_randn(&rng, n, 1.0f);   // the += is checked too
    float *y = (float *)xmalloc(n * sizeof *y);
    float *d_x = to_device(x, n), *d_dy = to_device(dy, n);
    float *d_dx = to_device(dx, n), *d_y = cuda_alloc_floats(n);
    softmax_forward(y, x, N, D);
    softmax_backward(dx, dy, y, N, D);
    softmax_forward_cuda(d_y, d_x, N, D);
    softmax_backward_cuda(d_dx, d_dy, d_y, N, D);
    compare(rep, "softmax_forward_cuda: out", sizes, d_y, y, n, FP32_TOL);
    compare(rep, "softmax_backward_cuda: dinp", sizes, d_dx, dx, n,
            FP32_TOL);
    softmax_forward_cuda(d_x, d_x, N, D);
    compare(rep, "softmax_forward_cuda: in place", sizes, d_x, y, n,
            FP32_TOL);
    cuda_free(d_x), cuda_free(d_dy), cuda_free(d_dx), cuda_free(d_y);
    free(x), free(dy), free(dx), free(y);
}

// sz: Tq, Tk, HS, flags (1 causal, 2 key mask), for B = 2 sequences of
// NH = 3 heads. The key mask hides key 0 and about a third of the others
// of sequence 0 (so that, with the causal mask and Tq <= Tk, query 0 sees
// no key at all), and every key of sequence 1: rows of zeros that must
// stay zeros, in att, in out and in what they pass back.
#define ATTENTION_DIMS "Tq, Tk, HS, flags (1 causal, 2 key mask)"
static void check_attention(KReport *rep, const int sz[4], uint64_t seed) {
    const int B = 2, NH = 3;
    int Tq = sz[0], Tk = sz[1], HS = sz[2];
    bool causal = (sz[3] & 1) != 0, masked = (sz[3] & 2) != 0;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "Tq=%d Tk=%d HS=%d%s%s", Tq, Tk, HS,
             causal ? " causal" : "", masked ? " mask" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t nq = (size_t)B * NH * Tq * HS, nk = (size_t)B * NH * Tk * HS;
    size_t na = (size_t)B * NH * Tq * Tk;
    float *q = host_randn(&rng, nq, 1.5f), *k = host_randn(&rng, nk, 1.0f);
    float *v = host_randn(&rng, nk, 1.0f), *dy = host_randn(&rng, nq, 1.0f);
    float *dq = host_randn(&rng, nq, 0.5f), *dk = host_randn(&rng, nk, 0.5f);
    float *dv = host_randn(&rng, nk, 0.5f);   // the += is checked too
    int mask[2 * 64];
    if (Tk > 64) die("check_attention: Tk=%d is over 64", Tk);
    for (int s = 0; s < Tk; s++) {
        mask[s] = s > 0 && rng_uniform(&rng) > 0.35f;
        mask[Tk + s] = 0;
    }
    float *d_q = to_device(q, nq), *d_k = to_device(k, nk);
    float *d_v = to_device(v, nk), *d_dy = to_device(dy, nq);
    float *d_dq = to_device(dq, nq), *d_dk = to_device(dk, nk);
    float *d_dv = to_device(dv, nk);
    float *d_out = cuda_alloc_floats(nq), *d_att = cuda_alloc_floats(na);
    float *d_datt = cuda_alloc_floats(na);
    int *d_mask = cuda_alloc_ints((size_t)B * Tk);
    cuda_upload_ints(d_mask, mask, (size_t)B * Tk);
    float *out = (float *)xmalloc(nq * sizeof *out);
    float *att = (float *)xmalloc(na * sizeof *att);
    float *datt = (float *)xmalloc(na * sizeof *datt);
    Error err;
    if (attention_forward(out, att, q, k, v, masked ? mask : NULL, causal,
                          B, NH, Tq, Tk, HS, &err) != 0)
        die("check_attention: %s", err.msg);
    attention_backward(dq, dk, dv, datt, dy, att, q, k, v, B, NH, Tq, Tk,
                       HS);
    attention_forward_cuda(d_out, d_att, d_q, d_k, d_v,
                           masked ? d_mask : NULL, causal, B, NH, Tq, Tk,
                           HS);
    attention_backward_cuda(d_dq, d_dk, d_dv, d_datt, d_dy, d_att, d_q, d_k,
                            d_v, B, NH, Tq, Tk, HS);
    compare(rep, "attention_forward_cuda: out", sizes, d_out, out, nq,
            FP32_TOL);
    compare(rep, "attention_forward_cuda: att", sizes, d_att, att, na,
            FP32_TOL);
    compare(rep, "attention_backward_cuda: dq", sizes, d_dq, dq, nq,
            FP32_TOL);
    compare(rep, "attention_backward_cuda: dk", sizes, d_dk, dk, nk,
            FP32_TOL);
    compare(rep, "attention_backward_cuda: dv", sizes, d_dv, dv, nk,
            FP32_TOL);
    float *dev[] = {d_q, d_k, d_v, d_dy, d_dq, d_dk, d_dv, d_out, d_att,
                    d_datt};
    for (float *p : dev) cuda_free(p);
    cuda_free(d_mask);
    float *host[] = {q, k, v, dy, dq, dk, dv, out, att, datt};
    for (float *p : host) free(p);
}

// sz: B, T, HS, mode (0 fp32, 1 bf16, 3 bf16 with qkv cast whole first;
// + 4: the backward pass sets dqkv instead of adding; + 8: causal blocks
// of ROWS_BLOCK rows).
// Causal self-attention of NH = 3 heads read where the linear layer puts
// them, inside a (B, T, 3C) qkv, and written into a (B, T, C) y, as
// mha.cu's (T, T) path calls it, against chapter 2's split, attention
// and merge; dqkv starts from random values (the += is checked, or that
// they do not show when set), and y
// and dqkv are followed by guards (nothing written past them). In bf16
// the products round their operands, which costs a few 1e-3 relative
// (as the whole step): STEP_BF16_TOL. A copy used at the wrong offset
// (k's bf16 values for q, say) or after its source changed gives errors
// of order 1.
// With blocks, the part of att and datt past them must be neither
// written nor read: att starts as NaN, and datt as 1e30 (a NaN written
// over a NaN would not show), so that a read ends in y or dqkv as a NaN
// or a huge error, and a write changes the value.
static const double STEP_BF16_TOL = 2e-2;
enum { ROWS_BLOCK = 8 };

static const float DATT_POISON = 1e30f;

// The floats of the (B * NH * T, T) weights in att past the causal blocks
// of `block` rows that are no longer `poison` (something wrote there),
// after setting every one of them to want's value, so that a comparison
// looks at the blocks alone.
static int past_blocks(float *att, const float *want, size_t rows, int T,
                       int block, float poison) {
    int written = 0;
    for (size_t r = 0; r < rows; r++) {
        int t = (int)(r % T), end = (t / block + 1) * block;
        for (int j = end; j < T; j++) {
            float x = att[r * T + j];
            written += isnan(poison) ? !isnan(x) : !(x == poison);
            att[r * T + j] = want[r * T + j];
        }
    }
    return written;
}
static void check_attention_rows(KReport *rep, const int sz[4],
                                 uint64_t seed) {
    const int NH = 3;
    int B = sz[0], T = sz[1], HS = sz[2], C = NH * HS;
    bool bf16 = (sz[3] & 1) != 0, whole = (sz[3] & 2) != 0;
    bool set = (sz[3] & 4) != 0;
    int block = (sz[3] & 8) ? ROWS_BLOCK : 0;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "B=%d T=%d HS=%d%s%s%s%s", B, T, HS,
             bf16 ? " bf16" : "", whole ? " whole" : "", set ? " set" : "",
             block ? " blocks" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t btc = (size_t)B * T * C, na = (size_t)B * NH * T * T;
    float *qkv = host_randn(&rng, 3 * btc, 1.0f);
    float *dy = host_randn(&rng, btc, 1.0f);
    float *dqkv = host_randn(&rng, 3 * btc, 0.5f);
    // chapter 2: split, attention, merge; and back
    float *h[3], *dh[3];
    for (int j = 0; j < 3; j++) {
        h[j] = (float *)xmalloc(btc * sizeof(float));
        dh[j] = (float *)xcalloc(btc, sizeof(float));
        heads_split(h[j], qkv + j * C, 3 * C, B, T, C, NH);
    }
    float *yh = (float *)xmalloc(btc * sizeof *yh);
    float *y = (float *)xmalloc(btc * sizeof *y);
    float *dyh = (float *)xmalloc(btc * sizeof *dyh);
    float *att = (float *)xmalloc(na * sizeof *att);
    float *datt = (float *)xmalloc(na * sizeof *datt);
    float *dmerged = (float *)xcalloc(3 * btc, sizeof *dmerged);
    if (attention_forward(yh, att, h[0], h[1], h[2], NULL, true, B, NH, T,
                          T, HS, NULL) != 0)
        die("check_attention_rows: bad sizes %s", sizes);
    heads_merge(y, yh, C, B, T, C, NH);
    heads_split(dyh, dy, C, B, T, C, NH);
    attention_backward(dh[0], dh[1], dh[2], datt, dyh, att, h[0], h[1], h[2],
                       B, NH, T, T, HS);
    for (int j = 0; j < 3; j++)
        heads_merge(dmerged + j * C, dh[j], 3 * C, B, T, C, NH);
    float *d_qkv = to_device(qkv, 3 * btc), *d_dy = to_device(dy, btc);
    float *d_y = to_device_guarded(NULL, btc);
    float *d_dqkv = to_device_guarded(dqkv, 3 * btc);
    for (size_t i = 0; i < 3 * btc; i++)
        dqkv[i] = set ? dmerged[i] : dqkv[i] + dmerged[i];
    float *nan = (float *)xmalloc(na * sizeof *nan);
    for (size_t i = 0; i < na; i++) nan[i] = DATT_POISON;
    float *d_datt = to_device(nan, na);
    for (size_t i = 0; i < na; i++) nan[i] = NAN;
    float *d_att = to_device(nan, na);

    bool was = gemm_bf16();
    gemm_set_bf16(bf16);
    HeadsLayout lqkv = heads_in_rows(T, 3 * C, HS), ly = heads_in_rows(T, C,
                                                                       HS);
    if (whole) gemm_bf16_prepare(d_qkv, 3 * btc);
    attention_forward_strided_cuda(d_y, ly, d_att, NULL, d_qkv, lqkv,
                                   d_qkv + C, d_qkv + 2 * C, lqkv, NULL,
                                   true, block, B, NH, T, T, HS);
    if (whole) gemm_bf16_prepare(d_qkv, 3 * btc);
    attention_backward_strided_cuda(d_dqkv, d_dqkv + C, d_dqkv + 2 * C,
                                    d_datt, d_dy, d_att, d_qkv, d_qkv + C,
                                    d_qkv + 2 * C, lqkv, lqkv, ly, !set,
                                    block, B, NH, T, T, HS);
    gemm_set_bf16(was);
    double tol = bf16 ? STEP_BF16_TOL : FP32_TOL;
    compare(rep, "attention strided: y", sizes, d_y, y, btc,
            tol);
    cuda_download(nan, d_att, na);   // nan: att as computed
    int written = block ? past_blocks(nan, att, (size_t)B * NH * T, T,
                                      block, NAN) : 0;
    compare_host(rep, "attention strided: att", sizes, nan, att, na, tol);
    compare(rep, "attention strided: dqkv", sizes, d_dqkv,
            dqkv, 3 * btc, tol);
    report_value(rep, "attention strided: past the end", sizes,
                 guard_damage(d_y, btc) + guard_damage(d_dqkv, 3 * btc), 0);
    if (block) {
        cuda_download(nan, d_datt, na);
        written += past_blocks(nan, datt, (size_t)B * NH * T, T, block,
                               DATT_POISON);
        report_value(rep, "attention strided: past the blocks", sizes,
                     written, 0);
    }
    float *dev[] = {d_qkv, d_dy, d_y, d_dqkv, d_att, d_datt};
    for (float *p : dev) cuda_free(p);
    float *host[] = {qkv, dy, dqkv, yh, y, dyh, att, datt, dmerged, nan,
                     h[0], h[1], h[2], dh[0], dh[1], dh[2]};
    for (float *p : host) free(p);
}


// ---- flash.cu ----------------------------------------------------------------

// sz: B, NH, T, HS. The fused causal attention against chapter 2's
// attention_forward and attention_backward (causal, no key mask): out, the
// three gradients (started from random values, so the += is checked), and
// (fp32) lse against the log-sum-exp of each row's scaled scores, computed
// here in double. T above 32 spans several tiles (a partial one last); HS
// above 32 gives a lane more than one float of a row. tc: the
// tensor-core kernels of flash_tc.cu instead of flash.cu's, held to
// FLASH_TC_TOL for bf16's rounding (their lse is not compared).
//
// The tolerance, measured: chapter 2's fp32 attention run on q, k, v and
// dout rounded to bf16 (and nothing else) differs from it on unrounded
// ones by up to 6.8e-3 (out 4.0e-3, dq 6.8e-3, dk 5.5e-3, dv 3.8e-3, the
// worst of 20 seeds at each of these sizes and at T = 256, HS = 64): the
// part of the error that any bf16 kernel has. The kernel, which also
// rounds the weights P and their gradients dS, stayed within 5.0e-3 over
// 11 seeds. 2e-2 is three times the operands' own spread; the wrong
// kernels tried (no online rescale, the causal mask by whole tiles, the
// last partial tile skipped, a __syncwarp missing) err by 7e-2 or more.
static const double FLASH_TC_TOL = 2e-2;

static void check_flash_kernels(KReport *rep, const int sz[4],
                                uint64_t seed, bool tc) {
    int B = sz[0], NH = sz[1], T = sz[2], HS = sz[3];
    const char *kind = tc ? "flash_tc_cuda" : "flash_cuda";
    double tol = tc ? FLASH_TC_TOL : FP32_TOL;
    char sizes[64], name[96];
    snprintf(sizes, sizeof sizes, "B=%d NH=%d T=%d HS=%d%s", B, NH, T, HS,
             tc ? " bf16" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t n = (size_t)B * NH * T * HS, rows = (size_t)B * NH * T;
    size_t na = rows * T;
    float *q = host_randn(&rng, n, 1.0f), *k = host_randn(&rng, n, 1.0f);
    float *v = host_randn(&rng, n, 1.0f), *dout = host_randn(&rng, n, 1.0f);
    float *dq = host_randn(&rng, n, 1.0f), *dk = host_randn(&rng, n, 1.0f);
    float *dv = host_randn(&rng, n, 1.0f);
    float *d_q = to_device(q, n), *d_k = to_device(k, n);
    float *d_v = to_device(v, n), *d_dout = to_device(dout, n);
    float *d_dq = to_device(dq, n), *d_dk = to_device(dk, n);
    float *d_dv = to_device(dv, n);
    float *d_out = cuda_alloc_floats(n), *d_lse = cuda_alloc_floats(rows);

    float *out = (float *)xmalloc(n * sizeof *out);
    float *att = (float *)xmalloc(na * sizeof *att);
    float *datt = (float *)xmalloc(na * sizeof *datt);
    float *lse = (float *)xmalloc(rows * sizeof *lse);
    if (attention_forward(out, att, q, k, v, NULL, true, B, NH, T, T, HS,
                          NULL) != 0)
        die("check_flash: bad sizes %s", sizes);
    attention_backward(dq, dk, dv, datt, dout, att, q, k, v, B, NH, T, T,
                       HS);
    // lse of row (z, t): over keys 0..t, scores q_t . k_s / sqrt(HS)
    double scale = 1.0 / sqrt((double)HS);
    for (size_t zt = 0; zt < rows; zt++) {
        size_t z = zt / T;
        int t = (int)(zt % T);
        const float *qt = q + zt * HS, *kz = k + z * T * HS;
        double *sc = (double *)xmalloc((size_t)(t + 1) * sizeof *sc);
        double mx = -INFINITY, sum = 0;
        for (int s = 0; s <= t; s++) {
            double dot = 0;
            for (int d = 0; d < HS; d++)
                dot += (double)qt[d] * kz[(size_t)s * HS + d];
            sc[s] = dot * scale;
            mx = sc[s] > mx ? sc[s] : mx;
        }
        for (int s = 0; s <= t; s++) sum += exp(sc[s] - mx);
        lse[zt] = (float)(mx + log(sum));
        free(sc);
    }

    if (tc) {
        attention_forward_flash_tc_cuda(d_out, d_lse, d_q, d_k, d_v, B, NH,
                                        T, HS);
        attention_backward_flash_tc_cuda(d_dq, d_dk, d_dv, d_dout, d_out,
                                         d_lse, d_q, d_k, d_v, B, NH, T, HS);
    } else {
        attention_forward_flash_cuda(d_out, d_lse, d_q, d_k, d_v, B, NH, T,
                                     HS);
        attention_backward_flash_cuda(d_dq, d_dk, d_dv, d_dout, d_out, d_lse,
                                      d_q, d_k, d_v, B, NH, T, HS);
    }
    snprintf(name, sizeof name, "attention_forward_%s: out", kind);
    compare(rep, name, sizes, d_out, out, n, tol);
    if (!tc) {
        snprintf(name, sizeof name, "attention_forward_%s: lse", kind);
        compare(rep, name, sizes, d_lse, lse, rows, tol);
    }
    const char *grad[3] = {"dq", "dk", "dv"};
    float *d_got[3] = {d_dq, d_dk, d_dv}, *want[3] = {dq, dk, dv};
    for (int j = 0; j < 3; j++) {
        snprintf(name, sizeof name, "attention_backward_%s: %s", kind,
                 grad[j]);
        compare(rep, name, sizes, d_got[j], want[j], n, tol);
    }
    float *dev[] = {d_q, d_k, d_v, d_dout, d_dq, d_dk, d_dv, d_out, d_lse};
    for (float *p : dev) cuda_free(p);
    float *host[] = {q, k, v, dout, dq, dk, dv, out, att, datt, lse};
    for (float *p : host) free(p);
}

static void check_flash(KReport *rep, const int sz[4], uint64_t seed) {
    check_flash_kernels(rep, sz, seed, false);
}

static void check_flash_tc(KReport *rep, const int sz[4], uint64_t seed) {
    check_flash_kernels(rep, sz, seed, true);
}

// ---- crossentropy.cu, optim.cu ---------------------------------------------

// Appends the comparison of one number that came back to the host:
// |got - want| / |want| (or / 1 when want is 0), as compare() does.
static void compare_value(KReport *rep, const char *name, const char *sizes,
                          double got, double want, double tol) {
    if (rep->n >= KCHECK_MAX) return;
    KResult *r = &rep->r[rep->n++];
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->sizes, sizeof r->sizes, "%s", sizes);
    r->err = fabs(got - want) / (want != 0 ? fabs(want) : 1.0);
    r->tol = tol;
    r->ok = r->err <= tol;   // false for NaN
}

// sz: N, V, which targets are -1 (0 none, 1 about a third, 2 all),
// logits (0 normal(0, 2), 1 the same plus 1000: an exp of an unshifted
// logit overflows). The backward pass runs twice: into its own buffer
// (started from random values, since it overwrites) and in place.
//
// The tolerance of the gradient with logits near 1000: the CPU rounds the
// row's logsumexp (about 1000) to a float before its exps, an error of up
// to half a float ulp of it, 2^-24 * |lse|, which every probability it
// computes carries as a relative error; the kernel never forms that
// float (it takes exp(x - max) / s). So that case allows 1e-5 plus
// 2^-24 * max |lse| (about 6e-5); an overflowing exp still gives NaN.
static void check_xent(KReport *rep, const int sz[4], uint64_t seed) {
    int N = sz[0], V = sz[1], ignore = sz[2];
    bool large = sz[3] != 0;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "N=%d V=%d%s%s", N, V,
             ignore == 2 ? " all -1" : ignore ? " some -1" : "",
             large ? " x~1e3" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t nv = (size_t)N * V;
    float *x = host_randn(&rng, nv, 2.0f);
    if (large)
        for (size_t i = 0; i < nv; i++) x[i] += 1000.0f;
    int *tg = (int *)xmalloc((size_t)N * sizeof *tg);
    for (int n = 0; n < N; n++) {
        bool skip = ignore == 2 || (ignore == 1 && rng_below(&rng, 3) == 0);
        tg[n] = skip ? -1 : (int)rng_below(&rng, (uint32_t)V);
    }
    if (ignore == 1) tg[0] = -1, tg[N - 1] = 0;   // both kinds, surely
    double max_lse = 0;
    for (int n = 0; n < N; n++) {
        const float *row = x + (size_t)n * V;
        float mx = row[0];
        for (int v = 1; v < V; v++) mx = row[v] > mx ? row[v] : mx;
        double s = 0;
        for (int v = 0; v < V; v++) s += exp((double)row[v] - mx);
        max_lse = fmax(max_lse, fabs(mx + log(s)));
    }
    int *d_tg = cuda_alloc_ints((size_t)N);
    cuda_upload_ints(d_tg, tg, (size_t)N);
    float *d_x = to_device(x, nv);

    int valid = -1, valid_gpu = -1;
    float loss = crossentropy_forward(x, tg, N, V, &valid);
    float loss_gpu = crossentropy_forward_cuda(d_x, d_tg, N, V, &valid_gpu);
    compare_value(rep, "crossentropy_forward_cuda: loss", sizes, loss_gpu,
                  loss, FP32_TOL);
    compare_value(rep, "crossentropy_forward_cuda: n_valid", sizes,
                  valid_gpu, valid, 0.0);

    float scale = valid ? 1.0f / (float)valid : 0.37f;
    float *dx = host_randn(&rng, nv, 1.0f);
    float *d_dx = to_device(dx, nv);
    crossentropy_backward(dx, x, tg, N, V, scale);
    crossentropy_backward_cuda(d_dx, d_x, d_tg, N, V, scale);
    double tol = large ? FP32_TOL + ldexp(max_lse, -24) : FP32_TOL;
    compare(rep, "crossentropy_backward_cuda: dlogits", sizes, d_dx, dx, nv,
            tol);
    crossentropy_backward_cuda(d_x, d_x, d_tg, N, V, scale);   // in place
    compare(rep, "crossentropy_backward_cuda: in place", sizes, d_x, dx, nv,
            tol);
    cuda_free(d_tg), cuda_free(d_x), cuda_free(d_dx);
    free(x), free(tg), free(dx);
}

// sz: n, the first step t, weight decay in hundredths. Three AdamW steps,
// t, t + 1, t + 2, each with new gradients; m and v start at zero for
// t = 1 and as after earlier steps otherwise. The learning rate, 1e-2,
// and weights of std 0.02 make each step a good part of a weight, so
// that a slip in the order (the decay applied after the step moves a
// weight by lr * wd * step, 1e-5 here) shows beyond the 1e-5 of max |p|.
static void check_adamw(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    int t0 = sz[1];
    float wd = (float)sz[2] / 100.0f, lr = 1e-2f;
    AdamWConfig c = {.beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
                     .weight_decay = wd};
    char sizes[64];
    snprintf(sizes, sizeof sizes, "n=%zu t=%d..%d wd=%g", n, t0, t0 + 2,
             (double)wd);
    Rng rng;
    rng_seed(&rng, seed);
    float *p = host_randn(&rng, n, 0.02f), *m = host_randn(&rng, n, 0.05f);
    float *v = host_randn(&rng, n, 0.1f);
    for (size_t i = 0; i < n; i++) {
        v[i] = t0 == 1 ? 0.0f : v[i] * v[i];   // v >= 0: squares
        if (t0 == 1) m[i] = 0.0f;
    }
    float *d_p = to_device(p, n), *d_m = to_device(m, n);
    float *d_v = to_device(v, n), *d_g = cuda_alloc_floats(n);
    for (int t = t0; t < t0 + 3; t++) {
        float *g = host_randn(&rng, n, 0.1f);
        cuda_upload(d_g, g, n);
        adamw_update(p, g, m, v, n, t, lr, wd, &c);
        adamw_update_cuda(d_p, d_g, d_m, d_v, n, t, lr, wd, &c);
        free(g);
    }
    compare(rep, "adamw_update_cuda: p", sizes, d_p, p, n, FP32_TOL);
    compare(rep, "adamw_update_cuda: m", sizes, d_m, m, n, FP32_TOL);
    compare(rep, "adamw_update_cuda: v", sizes, d_v, v, n, FP32_TOL);
    cuda_free(d_p), cuda_free(d_m), cuda_free(d_v), cuda_free(d_g);
    free(p), free(m), free(v);
}

// sz: n, clipping (0 off: max_norm 0; 1 on: max_norm half the norm; 2 on
// but not needed: max_norm twice the norm). The norm is compared at
// n * 2^-53: both sides add the same exact squares in double, in
// different orders, and n roundings of the sum bound the difference; a
// float sum anywhere would miss it by far.
static void check_norm(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    int mode = sz[1];
    char sizes[64];
    snprintf(sizes, sizeof sizes, "n=%zu clip %s", n,
             mode == 0 ? "off" : mode == 1 ? "on" : "unneeded");
    Rng rng;
    rng_seed(&rng, seed);
    float *g = host_randn(&rng, n, 1.0f);
    float *d_g = to_device(g, n);
    double norm = grad_norm(g, n), norm_gpu = grad_norm_cuda(d_g, n);
    double tol = ldexp((double)n, -53);
    compare_value(rep, "grad_norm_cuda", sizes, norm_gpu, norm, tol);
    float max_norm = mode == 0 ? 0.0f : (float)norm * (mode == 1 ? 0.5f
                                                                  : 2.0f);
    double before = clip_grad_norm(g, n, max_norm);
    double before_gpu = clip_grad_norm_cuda(d_g, n, max_norm);
    compare_value(rep, "clip_grad_norm_cuda: norm", sizes, before_gpu,
                  before, tol);
    compare(rep, "clip_grad_norm_cuda: g", sizes, d_g, g, n, FP32_TOL);
    cuda_free(d_g);
    free(g);
}


// sz: tensors, the largest's floats, first t, wd (1/100). The one-launch
// AdamW over a buffer of that many tensors (sizes drawn below the
// largest, every other one decayed; the largest is past what the grid's
// 64 blocks of 256 threads cover in one pass, so their stride is
// checked) against adamw_update on the host, tensor by tensor, for three
// steps.
static void check_adamw_many(KReport *rep, const int sz[4], uint64_t seed) {
    int k = sz[0], t0 = sz[2];
    size_t largest = (size_t)sz[1];
    float wd = (float)sz[3] / 100.0f, lr = 1e-2f;
    AdamWConfig c = {.beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
                     .weight_decay = wd};
    char sizes[64];
    snprintf(sizes, sizeof sizes, "%d tensors t=%d..%d wd=%g", k, t0,
             t0 + 2, (double)wd);
    Rng rng;
    rng_seed(&rng, seed);
    AdamWRange *r = (AdamWRange *)xcalloc((size_t)k, sizeof *r);
    size_t n = 0;
    for (int i = 0; i < k; i++) {
        r[i].offset = n;
        r[i].n = i == k / 2 ? largest : 1 + rng_below(&rng, 700);
        r[i].decay = i % 2 == 0;
        n += r[i].n;
    }
    float *p = host_randn(&rng, n, 0.02f), *m = host_randn(&rng, n, 0.05f);
    float *v = host_randn(&rng, n, 0.1f);
    for (size_t i = 0; i < n; i++) v[i] *= v[i];
    float *d_p = to_device(p, n), *d_m = to_device(m, n);
    float *d_v = to_device(v, n), *d_g = cuda_alloc_floats(n);
    AdamWRange *d_r;
    CUDA_CHECK(cudaMalloc((void **)&d_r, (size_t)k * sizeof *d_r));
    CUDA_CHECK(cudaMemcpy(d_r, r, (size_t)k * sizeof *r,
                          cudaMemcpyHostToDevice));
    for (int t = t0; t < t0 + 3; t++) {
        float *g = host_randn(&rng, n, 0.1f);
        cuda_upload(d_g, g, n);
        for (int i = 0; i < k; i++) {
            size_t o = r[i].offset;
            adamw_update(p + o, g + o, m + o, v + o, r[i].n, t, lr,
                         r[i].decay ? wd : 0.0f, &c);
        }
        adamw_update_many_cuda(d_p, d_g, d_m, d_v, d_r, k, largest, t, lr,
                               wd, &c);
        free(g);
    }
    compare(rep, "adamw_update_many_cuda: p", sizes, d_p, p, n, FP32_TOL);
    compare(rep, "adamw_update_many_cuda: m", sizes, d_m, m, n, FP32_TOL);
    compare(rep, "adamw_update_many_cuda: v", sizes, d_v, v, n, FP32_TOL);
    cuda_free(d_p), cuda_free(d_m), cuda_free(d_v), cuda_free(d_g);
    cuda_free(d_r);
    free(p), free(m), free(v), free(r);
}

// ---- the fused forms, the graph ------------------------------------------
// Each fused kernel against the CPU functions it stands for, composed on
// the host: a plausible slip in it (a bias added twice or not at all,
// GELU's gradient taken at its output, the stream not added, the skip's
// gradient dropped, a mask drawn from the wrong counters) fails one of
// these. Outputs that a kernel sets start as NaN, which must not show,
// and every output is followed by a guard.

static void check_gpt_step(KReport *rep, const int sz[4], uint64_t seed);

// n NaN floats on the device, followed by a guard.
static float *nan_guarded(size_t n) {
    float *nan = (float *)xmalloc((n ? n : 1) * sizeof *nan);
    for (size_t i = 0; i < n; i++) nan[i] = NAN;
    float *d = to_device_guarded(nan, n);
    free(nan);
    return d;
}

// sz: N, F, kind (0 exact, 1 tanh), bias. a = GELU(h + bias) against
// chapter 3's gelu_forward of h + bias, h untouched; dh = da * GELU'(h +
// bias) against gelu_backward (into zeros), and dbias += the column sums
// of dh, in double on the host, and bit for bit what column_sums_cuda
// gives from the kernel's own dh (the fused sums keep its order); the
// bf16 copies bit for bit the rounding of the fp32 results.
static void check_bias_gelu(KReport *rep, const int sz[4], uint64_t seed) {
    int N = sz[0], F = sz[1];
    Activation kind = sz[2] ? GELU_TANH : GELU_EXACT;
    bool bias = sz[3] != 0;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "N=%d F=%d %s%s", N, F,
             activation_name(kind), bias ? " bias" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t n = (size_t)N * F;
    float *h = host_randn(&rng, n, 2.0f), *da = host_randn(&rng, n, 1.0f);
    float *b = host_randn(&rng, (size_t)F, 1.0f);
    float *db = host_randn(&rng, (size_t)F, 1.0f), *db0 = host_copy(db, F);
    float *hb = (float *)xmalloc(n * sizeof *hb);
    for (size_t i = 0; i < n; i++) hb[i] = h[i] + (bias ? b[i % F] : 0.0f);
    float *a = (float *)xmalloc(n * sizeof *a);
    float *dh = (float *)xcalloc(n, sizeof *dh);
    gelu_forward(a, hb, kind, n);
    gelu_backward(dh, da, hb, kind, n);
    for (int c = 0; c < F && bias; c++) {
        double s = 0;
        for (int r = 0; r < N; r++) s += dh[(size_t)r * F + c];
        db[c] = (float)(db[c] + s);
    }
    float *d_h = to_device_guarded(h, n), *d_da = to_device(da, n);
    float *d_b = to_device(b, (size_t)F);
    float *d_db = to_device_guarded(db0, (size_t)F);
    float *d_db2 = to_device(db0, (size_t)F);
    float *d_a = nan_guarded(n), *d_dh = nan_guarded(n);
    uint16_t *d_a16, *d_dh16;
    CUDA_CHECK(cudaMalloc((void **)&d_a16, (n + 1) * sizeof *d_a16));
    CUDA_CHECK(cudaMalloc((void **)&d_dh16, (n + 1) * sizeof *d_dh16));
    bias_gelu_forward_cuda(d_a, d_a16, d_h, bias ? d_b : NULL, kind, N, F);
    gelu_backward_bias_cuda(d_dh, d_dh16, bias ? d_db : NULL, d_da, d_h,
                            bias ? d_b : NULL, kind, N, F);
    compare(rep, "bias_gelu_forward_cuda: a", sizes, d_a, a, n, FP32_TOL);
    compare(rep, "bias_gelu_forward_cuda: h untouched", sizes, d_h, h, n,
            0.0);
    report_value(rep, "bias_gelu_forward_cuda: a16 wrong", sizes,
                 (double)copy_mismatches(d_a16, d_a, n), 0);
    compare(rep, "gelu_backward_bias_cuda: dh", sizes, d_dh, dh, n,
            FP32_TOL);
    report_value(rep, "gelu_backward_bias_cuda: dh16 wrong", sizes,
                 (double)copy_mismatches(d_dh16, d_dh, n), 0);
    // (without a bias, dbias is NULL and must stay as it was)
    double tol = FP32_TOL * (N > 100 ? sqrt(N / 100.0) : 1.0);
    compare(rep, bias ? "gelu_backward_bias_cuda: dbias"
                      : "gelu_backward_bias_cuda: dbias untouched",
            sizes, d_db, bias ? db : db0, (size_t)F, bias ? tol : 0.0);
    if (bias) {
        column_sums_cuda(d_db2, d_dh, N, F);
        float *sums = (float *)xmalloc((size_t)F * sizeof *sums);
        cuda_download(sums, d_db2, (size_t)F);
        compare(rep, "gelu_backward_bias_cuda: dbias bits", sizes, d_db,
                sums, (size_t)F, 0.0);
        free(sums);
    }
    report_value(rep, "bias_gelu_*_cuda: writes past the end", sizes,
                 guard_damage(d_a, n) + guard_damage(d_dh, n)
                     + guard_damage(d_h, n) + guard_damage(d_db, F), 0);
    float *dev[] = {d_h, d_da, d_b, d_db, d_db2, d_a, d_dh};
    for (float *p : dev) cuda_free(p);
    cuda_free(d_a16), cuda_free(d_dh16);
    float *host[] = {h, da, b, db, db0, hb, a, dh};
    for (float *p : host) free(p);
}

// sz: N, C, p (percent), bias. The stream res = x + dropout(y + bias)
// computed in place over y, then LayerNorm(res), against chapter 4's
// residual_forward and layernorm_forward of the same sums and masks
// (dropout's masks drawn on the host from the same counters); and
// sublayer_bias_add_cuda, the same sum without the LayerNorm. A mask
// written with p = 0 shows against its sentinel.
static void check_residual_layernorm(KReport *rep, const int sz[4],
                                     uint64_t seed) {
    int N = sz[0], C = sz[1];
    float p = (float)sz[2] / 100.0f;
    bool bias = sz[3] != 0;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "N=%d C=%d p=%.2f%s", N, C, (double)p,
             bias ? " bias" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t n = (size_t)N * C;
    float *x = host_randn(&rng, n, 1.0f), *y = host_randn(&rng, n, 3.0f);
    for (size_t i = 0; i < n; i++) x[i] += 1.5f;   // a mean to take out
    float *b = host_randn(&rng, (size_t)C, 1.0f);
    float *w = host_randn(&rng, (size_t)C, 1.0f);
    float *lb = host_randn(&rng, (size_t)C, 1.0f);
    float *mask = expected_mask(p, seed, DROPOUT_OFFSET, n);
    float *sentinel = (float *)xmalloc(n * sizeof *sentinel);
    for (size_t i = 0; i < n; i++) sentinel[i] = 7.0f;
    float *dropped = (float *)xmalloc(n * sizeof *dropped);
    float *res = (float *)xmalloc(n * sizeof *res);
    float *norm = (float *)xmalloc(n * sizeof *norm);
    float *mean = (float *)xmalloc((size_t)N * sizeof *mean);
    float *rstd = (float *)xmalloc((size_t)N * sizeof *rstd);
    for (size_t i = 0; i < n; i++)
        dropped[i] = (y[i] + (bias ? b[i % C] : 0.0f)) * mask[i];
    residual_forward(res, x, dropped, n);
    layernorm_forward(norm, mean, rstd, res, w, bias ? lb : NULL, 1, N, C);
    float *d_x = to_device(x, n), *d_b = to_device(b, (size_t)C);
    float *d_w = to_device(w, (size_t)C), *d_lb = to_device(lb, (size_t)C);
    float *d_res = to_device_guarded(y, n), *d_out = to_device_guarded(y, n);
    float *d_norm = nan_guarded(n), *d_mean = nan_guarded((size_t)N);
    float *d_rstd = nan_guarded((size_t)N);
    float *d_mask = to_device_guarded(sentinel, n);
    float *d_mask2 = to_device_guarded(sentinel, n);
    uint16_t *d_norm16;
    CUDA_CHECK(cudaMalloc((void **)&d_norm16, (n + 1) * sizeof *d_norm16));
    residual_layernorm_forward_cuda(d_res, d_norm, d_norm16, d_mean, d_rstd,
                                    d_mask, d_x, d_res, bias ? d_b : NULL, p,
                                    seed, DROPOUT_OFFSET, d_w,
                                    bias ? d_lb : NULL, N, C);
    sublayer_bias_add_cuda(d_out, d_mask2, d_x, bias ? d_b : NULL, p, seed,
                           DROPOUT_OFFSET, N, C);
    compare(rep, "residual_layernorm_forward_cuda: res", sizes, d_res, res,
            n, FP32_TOL);
    compare(rep, "residual_layernorm_forward_cuda: norm", sizes, d_norm,
            norm, n, FP32_TOL);
    compare(rep, "residual_layernorm_forward_cuda: mean", sizes, d_mean,
            mean, (size_t)N, FP32_TOL);
    compare(rep, "residual_layernorm_forward_cuda: rstd", sizes, d_rstd,
            rstd, (size_t)N, FP32_TOL);
    compare(rep, p > 0 ? "residual_layernorm_forward_cuda: mask"
                       : "residual_layernorm_forward_cuda: no mask",
            sizes, d_mask, p > 0 ? mask : sentinel, n, 0.0);
    report_value(rep, "residual_layernorm_forward_cuda: norm16", sizes,
                 (double)copy_mismatches(d_norm16, d_norm, n), 0);
    compare(rep, "sublayer_bias_add_cuda: out", sizes, d_out, res, n,
            FP32_TOL);
    compare(rep, p > 0 ? "sublayer_bias_add_cuda: mask"
                       : "sublayer_bias_add_cuda: no mask",
            sizes, d_mask2, p > 0 ? mask : sentinel, n, 0.0);
    report_value(rep, "residual_layernorm, bias_add: past the end", sizes,
                 guard_damage(d_res, n) + guard_damage(d_out, n)
                     + guard_damage(d_norm, n) + guard_damage(d_mean, N)
                     + guard_damage(d_rstd, N) + guard_damage(d_mask, n)
                     + guard_damage(d_mask2, n), 0);
    float *dev[] = {d_x, d_b, d_w, d_lb, d_res, d_out, d_norm, d_mean,
                    d_rstd, d_mask, d_mask2};
    for (float *q : dev) cuda_free(q);
    cuda_free(d_norm16);
    float *host[] = {x, y, b, w, lb, mask, sentinel, dropped, res, norm,
                     mean, rstd};
    for (float *q : host) free(q);
}

// sz: B, T, C, bias. dinp = skip + LayerNorm's gradient, into a dinp of
// NaN, against chapter 4's layernorm_backward adding into a copy of
// skip; then with skip = dinp (adds, in place); dweight and dbias add up.
static void check_layernorm_skip(KReport *rep, const int sz[4],
                                 uint64_t seed) {
    int B = sz[0], T = sz[1], C = sz[2];
    bool bias = sz[3] != 0;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "B=%d T=%d C=%d%s", B, T, C,
             bias ? " bias" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t N = (size_t)B * T, n = N * C;
    float *x = host_randn(&rng, n, 3.0f);
    for (size_t i = 0; i < n; i++) x[i] += 1.5f;
    float *w = host_randn(&rng, (size_t)C, 1.0f);
    float *dy = host_randn(&rng, n, 1.0f), *skip = host_randn(&rng, n, 1.0f);
    float *dw = host_randn(&rng, (size_t)C, 1.0f);
    float *db = host_randn(&rng, (size_t)C, 1.0f);
    float *y = (float *)xmalloc(n * sizeof *y);
    float *mean = (float *)xmalloc(N * sizeof *mean);
    float *rstd = (float *)xmalloc(N * sizeof *rstd);
    layernorm_forward(y, mean, rstd, x, w, NULL, B, T, C);
    float *d_x = to_device(x, n), *d_w = to_device(w, (size_t)C);
    float *d_dy = to_device(dy, n), *d_skip = to_device(skip, n);
    float *d_mean = to_device(mean, N), *d_rstd = to_device(rstd, N);
    float *d_dw = to_device_guarded(dw, (size_t)C);
    float *d_db = to_device_guarded(db, (size_t)C);
    float *d_dx = nan_guarded(n), *d_dx2 = to_device_guarded(skip, n);
    float *dx = host_copy(skip, n);
    layernorm_backward(dx, dw, bias ? db : NULL, dy, x, w, mean, rstd, B, T,
                       C);
    layernorm_backward_skip_cuda(d_dx, d_skip, d_dw, bias ? d_db : NULL,
                                 d_dy, d_x, d_w, d_mean, d_rstd, B, T, C);
    compare(rep, "layernorm_backward_skip_cuda: dinp", sizes, d_dx, dx, n,
            FP32_TOL);
    compare(rep, "layernorm_backward_skip_cuda: dweight", sizes, d_dw, dw,
            (size_t)C, FP32_TOL);
    if (bias)
        compare(rep, "layernorm_backward_skip_cuda: dbias", sizes, d_db, db,
                (size_t)C, FP32_TOL);
    layernorm_backward_skip_cuda(d_dx2, d_dx2, d_dw, NULL, d_dy, d_x, d_w,
                                 d_mean, d_rstd, B, T, C);
    compare(rep, "layernorm_backward_skip_cuda: in place", sizes, d_dx2,
            dx, n, FP32_TOL);
    report_value(rep, "layernorm_backward_skip_cuda: past the end", sizes,
                 guard_damage(d_dx, n) + guard_damage(d_dx2, n)
                     + guard_damage(d_dw, C) + guard_damage(d_db, C), 0);
    float *dev[] = {d_x, d_w, d_dy, d_skip, d_mean, d_rstd, d_dw, d_db,
                    d_dx, d_dx2};
    for (float *q : dev) cuda_free(q);
    float *host[] = {x, w, dy, skip, dw, db, y, mean, rstd, dx};
    for (float *q : host) free(q);
}

// sz: B, T, bias, flash | 2 no dropout. A training step with dropout
// (p = 0.2, which check_gpt_step, against the CPU, cannot use: the GPU's
// masks are not the CPU's), run in the fused forms and in the plain ones
// from the same weights, batch and seed: the same masks, so the same
// loss, logits and gradients to rounding. A fused kernel that drew from
// the wrong counters, or left a mask out going forward or back, differs
// by far more. Without dropout, also the count of what each pass
// launched (cuda_writes: every kernel, memset and upload; the cuBLAS
// products are the same calls in both): the fused forms must save
// exactly what the chapter counts, 4 launches a layer forward and 3
// backward.
static void check_fused_vs_plain(KReport *rep, const int sz[4],
                                 uint64_t seed) {
    int B = sz[0], T = sz[1];
    GptConfig cfg = gpt_config_default(65);
    cfg.block_size = T + 1, cfg.n_layer = 2, cfg.n_head = 4;
    cfg.n_embd = 48, cfg.n_ffn = 4 * 48;
    cfg.dropout = (sz[3] & 2) ? 0.0f : 0.2f;
    cfg.bias = sz[2] != 0;
    bool flash = (sz[3] & 1) != 0;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "B=%d T=%d p=%.1f%s%s, fused vs plain", B,
             T, (double)cfg.dropout, cfg.bias ? " bias" : "",
             flash ? " flash" : "");
    Error err;
    Gpt m;
    if (gpt_create(&m, &cfg, &err) != 0) die("check_fused_vs_plain: %s",
                                             err.msg);
    Rng rng;
    rng_seed(&rng, seed);
    gpt_init(&m, &rng);
    for (int i = 0; i < m.n_tensors; i++)   // biases away from 0
        if (m.tensors[i].ndim == 1)
            rng_normal_fill(&rng, m.params + m.tensors[i].offset,
                            (size_t)m.tensors[i].shape[0], 0.5f, 0.3f);
    size_t bt = (size_t)B * T;
    int *idx = (int *)xmalloc(bt * sizeof *idx);
    int *tgt = (int *)xmalloc(bt * sizeof *tgt);
    for (size_t i = 0; i < bt; i++) {
        idx[i] = (int)rng_below(&rng, 65);
        tgt[i] = (int)rng_below(&rng, 65);
    }
    bool was = block_fused();
    float loss[2], *logits[2], *grads[2];
    long launched[2][2];   // [fused, plain][forward, backward]
    // k = 0 fused, 1 plain, after a step (k = -1, fused) that only warms
    // up: a first step's lazy set-up (a workspace, a buffer grown) must not
    // count as one form's launches
    for (int k = -1; k < 2; k++) {
        GptCuda d;
        GptCudaActs da;
        if (gpt_cuda_create(&d, &m, &err) != 0
            || gpt_cuda_acts_alloc(&da, &cfg, B, T, flash, true, &err) != 0)
            die("check_fused_vs_plain: %s", err.msg);
        block_set_fused(k <= 0);
        Rng r;
        rng_seed(&r, seed + 1);   // the same dropout seed both times
        unsigned long w0 = cuda_writes();
        float warm_loss;   // (the warm-up's, not kept)
        if (gpt_forward_cuda(&d, &da, idx, tgt, B, T, true, &r,
                             k < 0 ? &warm_loss : &loss[k], &err) != 0)
            die("check_fused_vs_plain: %s", err.msg);
        unsigned long w1 = cuda_writes();
        gpt_backward_cuda(&d, &da);
        if (k < 0) {
            gpt_cuda_acts_free(&da);
            gpt_cuda_free(&d);
            continue;
        }
        launched[k][0] = (long)(w1 - w0);
        launched[k][1] = (long)(cuda_writes() - w1);
        logits[k] = (float *)xmalloc(bt * 65 * sizeof(float));
        cuda_download(logits[k], da.logits, bt * 65);   // (now dlogits)
        grads[k] = (float *)xmalloc(m.num_params * sizeof(float));
        cuda_download(grads[k], d.grads, m.num_params);
        gpt_cuda_acts_free(&da);
        gpt_cuda_free(&d);
    }
    block_set_fused(was);
    report_value(rep, "fused vs plain: loss", sizes,
                 fabs((double)loss[0] - loss[1]) / fabs(loss[1]), FP32_TOL);
    compare_host(rep, "fused vs plain: dlogits", sizes, logits[0],
                 logits[1], bt * 65, FP32_TOL);
    compare_host(rep, "fused vs plain: every grad", sizes, grads[0],
                 grads[1], m.num_params, 1e-4);
    if (cfg.dropout == 0) {
        int L = cfg.n_layer;
        report_value(rep, "forward: launches saved - 4 per layer", sizes,
                     (double)(launched[1][0] - launched[0][0] - 4 * L), 0);
        report_value(rep, "backward: launches saved - 3 per layer", sizes,
                     (double)(launched[1][1] - launched[0][1] - 3 * L), 0);
    }
    for (int k = 0; k < 2; k++) free(logits[k]), free(grads[k]);
    free(idx), free(tgt);
    gpt_free(&m);
}

// sz: B, T, bf16, flash. A training step recorded as a graph
// (runtime.cuh) against the same step launched directly: recording runs
// nothing (the gradients, NaN before it, are NaN after), a replay gives
// the direct step's loss, norm and gradients bit for bit, and after
// another batch is copied up, a replay of the same graph gives the
// direct step on that batch, bit for bit: the graph reads the batch
// where the recording found it, not what it was then. Under the
// emulation, a copy to or from the host or a release inside the step
// stops the recording with an error, as on the GPU.
static void check_gpt_graph(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1];
    bool bf16 = sz[2] != 0, flash = sz[3] != 0;
    GptConfig cfg = gpt_config_default(65);
    cfg.block_size = T, cfg.n_layer = 2, cfg.n_head = 4;
    cfg.n_embd = 48, cfg.n_ffn = 4 * 48, cfg.dropout = 0.0f;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "B=%d T=%d%s%s, graph", B, T,
             bf16 ? " bf16" : "", flash ? " flash" : "");
    Error err;
    Gpt m;
    if (gpt_create(&m, &cfg, &err) != 0) die("check_gpt_graph: %s", err.msg);
    Rng rng;
    rng_seed(&rng, seed);
    gpt_init(&m, &rng);
    size_t bt = (size_t)B * T, np = m.num_params;
    int *idx = (int *)xmalloc(2 * bt * sizeof *idx);
    int *tgt = (int *)xmalloc(2 * bt * sizeof *tgt);
    for (size_t i = 0; i < 2 * bt; i++) {   // targets -1 at the same
        idx[i] = (int)rng_below(&rng, 65);   // places: the same count,
        tgt[i] = i % bt % 5 == 1 ? -1 : (int)rng_below(&rng, 65);   // (the
    }                                        // backward pass's scale)
    bool was = gemm_bf16();
    gemm_set_bf16(bf16);
    GptCuda d;
    GptCudaActs da;
    if (gpt_cuda_create(&d, &m, &err) != 0
        || gpt_cuda_acts_alloc(&da, &cfg, B, T, flash, false, &err) != 0)
        die("check_gpt_graph: %s", err.msg);
    const float max_norm = 0.05f;   // small: the step clips
    float *want[2], loss[2], got_loss[2];
    double norm[2], got_norm[2];
    for (int k = 0; k < 2; k++) {   // the direct steps on both batches
        if (gpt_step_prepare_cuda(&d, &da, idx + k * bt, tgt + k * bt, B, T,
                                  true, NULL, &err) != 0)
            die("check_gpt_graph: %s", err.msg);
        gpt_step_launches_cuda(&d, &da, max_norm);
        loss[k] = crossentropy_forward_read_cuda((int)bt, NULL);
        norm[k] = grad_norm_read_cuda();
        want[k] = (float *)xmalloc(np * sizeof(float));
        cuda_download(want[k], d.grads, np);
    }
    gemm_bf16_reserve();
    float *nan = (float *)xmalloc(np * sizeof *nan), *got;
    for (size_t i = 0; i < np; i++) nan[i] = NAN;
    got = (float *)xmalloc(np * sizeof *got);
    if (gpt_step_prepare_cuda(&d, &da, idx, tgt, B, T, true, NULL, &err))
        die("check_gpt_graph: %s", err.msg);
    cuda_upload(d.grads, nan, np);
    unsigned long frees = cuda_frees();
    cuda_capture_begin();
    gpt_step_launches_cuda(&d, &da, max_norm);
    CudaGraph *g = cuda_capture_end();
    cuda_download(got, d.grads, np);
    size_t ran = 0;
    for (size_t i = 0; i < np; i++) ran += !isnan(got[i]);
    report_value(rep, "recording: gradients written", sizes, (double)ran, 0);
    report_value(rep, "recording: buffers released", sizes,
                 (double)(cuda_frees() - frees), 0);
    for (int k = 0; k < 2; k++) {
        if (k == 1 && gpt_step_prepare_cuda(&d, &da, idx + bt, tgt + bt, B,
                                            T, true, NULL, &err) != 0)
            die("check_gpt_graph: %s", err.msg);
        cuda_graph_launch(g);
        got_loss[k] = crossentropy_forward_read_cuda((int)bt, NULL);
        got_norm[k] = grad_norm_read_cuda();
        cuda_download(got, d.grads, np);
        size_t differ = 0;
        for (size_t i = 0; i < np; i++)
            differ += memcmp(&got[i], &want[k][i], sizeof *got) != 0;
        report_value(rep, k ? "replay, batch 2: grads not the same bits"
                            : "replay: grads not the same bits",
                     sizes, (double)differ, 0);
    }
    report_value(rep, "replays: loss and norm not the same bits", sizes,
                 (got_loss[0] != loss[0]) + (got_loss[1] != loss[1])
                     + (got_norm[0] != norm[0]) + (got_norm[1] != norm[1]),
                 0);
    report_value(rep, "the batches' losses the same (must differ)", sizes,
                 loss[0] == loss[1], 0);
    cuda_graph_free(g);
    gemm_set_bf16(was);
    free(want[0]), free(want[1]), free(nan), free(got), free(idx), free(tgt);
    gpt_cuda_acts_free(&da);
    gpt_cuda_free(&d);
    gpt_free(&m);
}

// check_gpt_step with the plain forms: the readable ones stay checked
// against the CPU too.
static void check_gpt_step_plain(KReport *rep, const int sz[4],
                                 uint64_t seed) {
    bool was = block_fused();
    block_set_fused(false);
    check_gpt_step(rep, sz, seed);
    block_set_fused(was);
}

// ---- gpt_cuda.cu -------------------------------------------------------------

// sz: B, T, bias (0/1), mode (GPT_DIMS' bits: flash, bf16, blocks of 8,
// heads of 16, GPT-2's tanh GELU). One training step's forward and
// backward passes of a small GPT (2 layers, 4 heads, 48 wide, the
// characters' 65 ids, no dropout: the GPU's masks are not the CPU's) on
// the GPU against chapter 5's gpt_forward and gpt_backward: the loss, the
// logits, and every gradient. Each tensor's gradient is compared as a
// whole (error as compare()'s), and the worst tensor is reported. The
// step chains some 60 kernels and cuBLAS products whose sums run in
// another order than the CPU's, so the gradients get 1e-4 rather than
// 1e-5: what a chain of that many fp32 roundings needs, and still a
// thousand times below what one wrong index gives.
static void check_gpt_step(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1];
    GptConfig cfg = gpt_config_default(65);
    cfg.block_size = T + 3, cfg.n_layer = 2, cfg.n_head = 4;
    cfg.n_embd = 48, cfg.n_ffn = 4 * 48, cfg.dropout = 0.0f;
    cfg.bias = sz[2] != 0;
    if (sz[3] & 8) cfg.n_head = 3;   // heads of 16: bf16 flash_tc.cu's
    if (sz[3] & 16) cfg.act = GELU_TANH;   // GPT-2's (chapter 9)
    bool flash = (sz[3] & 1) != 0, bf16 = (sz[3] & 2) != 0;
    int block = (sz[3] & 4) ? ROWS_BLOCK : mha_causal_block();
    char sizes[64];
    snprintf(sizes, sizeof sizes, "B=%d T=%d%s%s%s%s%s", B, T,
             cfg.bias ? " bias" : "", flash ? " flash" : "",
             bf16 ? " bf16" : "", block < T ? " blocks" : "",
             cfg.act == GELU_TANH ? " tanh" : "");
    // bf16 products: each rounds its operands to 8 bits of mantissa
    // (2^-9 relative), so the step is good to about 1e-2 only (the worst
    // gradient, relative to its tensor's largest, measured 3e-3 to 7.3e-3
    // on an H100 at this size, and 4.7e-3 to 1.2e-2 under the emulation
    // at B = 3 and T = 20 .. 35): STEP_BF16_TOL is above all of those,
    // and a wrong index or a product in the wrong order still gives
    // errors of order 1.
    double tol_fwd = bf16 ? STEP_BF16_TOL : FP32_TOL;
    double tol_bwd = bf16 ? STEP_BF16_TOL : 1e-4;
    Error err;
    Gpt m;
    GptActs a;
    if (gpt_create(&m, &cfg, &err) != 0 || gpt_alloc_grads(&m, &err) != 0
        || gpt_acts_alloc(&a, &cfg, B, T, &err) != 0)
        die("check_gpt_step: %s", err.msg);
    Rng rng;
    rng_seed(&rng, seed);
    gpt_init(&m, &rng);
    // LayerNorm weights and biases away from 1 and 0, so their gradients
    // and their use are both tested
    for (int i = 0; i < m.n_tensors; i++)
        if (m.tensors[i].ndim == 1)
            rng_normal_fill(&rng, m.params + m.tensors[i].offset,
                            (size_t)m.tensors[i].shape[0], 0.5f, 0.3f);
    size_t bt = (size_t)B * T;
    int *idx = (int *)xmalloc(bt * sizeof *idx);
    int *tgt = (int *)xmalloc(bt * sizeof *tgt);
    for (size_t i = 0; i < bt; i++) {
        idx[i] = (int)rng_below(&rng, 65);
        tgt[i] = i % 7 == 3 ? -1 : (int)rng_below(&rng, 65);   // some ignored
    }
    float loss_cpu = 0, loss_gpu = 0;
    if (gpt_forward(&m, &a, idx, tgt, B, T, false, NULL, &loss_cpu, &err))
        die("check_gpt_step: %s", err.msg);
    gpt_zero_grads(&m);
    gpt_backward(&m, &a, idx, tgt);
    GptCuda d;
    GptCudaActs da;
    bool was = gemm_bf16();
    int was_block = mha_causal_block();
    gemm_set_bf16(bf16);
    mha_set_causal_block(block);
    if (gpt_cuda_create(&d, &m, &err) != 0
        || gpt_cuda_acts_alloc(&da, &cfg, B, T, flash, false, &err) != 0)
        die("check_gpt_step: %s", err.msg);
    // Every activation and scratch float starts as NaN: a gradient added
    // into a buffer nobody cleared, or read before it is written, shows.
    size_t nacts = gpt_cuda_acts_floats(&cfg, B, T, flash, false);
    float *nan = (float *)xmalloc(nacts * sizeof *nan);
    for (size_t i = 0; i < nacts; i++) nan[i] = NAN;
    cuda_upload(da.mem, nan, nacts);
    free(nan);
    if (gpt_forward_cuda(&d, &da, idx, tgt, B, T, false, NULL, &loss_gpu,
                         &err) != 0)
        die("check_gpt_step: %s", err.msg);
    compare(rep, "gpt_forward_cuda: logits", sizes, da.logits, a.logits,
            bt * 65, tol_fwd);
    if (rep->n < KCHECK_MAX) {   // the loss, one number
        KResult *r = &rep->r[rep->n++];
        snprintf(r->name, sizeof r->name, "gpt_forward_cuda: loss");
        snprintf(r->sizes, sizeof r->sizes, "%s", sizes);
        r->err = fabs((double)loss_gpu - loss_cpu) / fabs(loss_cpu);
        r->tol = tol_fwd;
        r->ok = r->err <= r->tol;
    }
    gpt_backward_cuda(&d, &da);
    gemm_set_bf16(was);
    mha_set_causal_block(was_block);
    // every tensor's gradient; the worst one is the result
    float *g = (float *)xmalloc(m.num_params * sizeof *g);
    cuda_download(g, d.grads, m.num_params);
    double worst = 0;
    const char *worst_name = "";
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *t = &m.tensors[i];
        size_t n = (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
        double diff = 0, scale = 0;
        for (size_t j = 0; j < n; j++) {
            double dd = fabs((double)g[t->offset + j] - m.grads[t->offset + j]);
            if (diff == diff && !(dd <= diff)) diff = dd;   // a NaN sticks
            scale = fmax(scale, fabs(m.grads[t->offset + j]));
        }
        double e = diff / (scale > 0 ? scale : 1.0);
        if (worst == worst && !(e <= worst)) worst = e, worst_name = t->name;
    }
    if (rep->n < KCHECK_MAX) {
        KResult *r = &rep->r[rep->n++];
        snprintf(r->name, sizeof r->name, "gpt_backward_cuda: every grad");
        snprintf(r->sizes, sizeof r->sizes, "%s", sizes);
        r->err = worst;
        r->tol = tol_bwd;
        r->ok = r->err <= r->tol;
        if (!r->ok)
            fprintf(stderr, "  (worst gradient: %s)\n", worst_name);
    }
    free(g), free(idx), free(tgt);
    gpt_cuda_acts_free(&da);
    gpt_cuda_free(&d);
    gpt_acts_free(&a, &cfg);
    gpt_free(&m);
}

// sz: B, T, flash. In bf16 mode the model keeps the bf16 copies of the
// activations its backward pass multiplies again (gemm_bf16_pin). Two
// runs of the same step: one with activations allocated in fp32 mode,
// so with no room for the copies (the backward pass rounds every
// activation again), one with them, after a forward pass on other tokens
// (whose copies would be stale). The gradients must be the same bits,
// and the backward pass with the copies must round exactly the floats of
// the kept activations fewer: per layer ln_1's and ln_2's outputs, y,
// the GELU's output, and on the (T, T) path qkv (3C a token) and the
// weights; and ln_f's output. A copy not found again shows there, and
// one found stale in the gradients. On the (T, T) path a third run, with
// the copies and causal blocks of 8 rows, must round exactly as many
// floats, forward and backward, as the second: a block's product finds
// its part of every operand in the whole operand's copy.
static void check_gpt_bf16_kept(KReport *rep, const int sz[4],
                                uint64_t seed) {
    int B = sz[0], T = sz[1];
    bool flash = sz[2] != 0;
    GptConfig cfg = gpt_config_default(65);
    cfg.block_size = T, cfg.n_layer = 2, cfg.n_head = 4;
    cfg.n_embd = 32, cfg.n_ffn = 4 * 32, cfg.dropout = 0.0f;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "B=%d T=%d bf16%s", B, T,
             flash ? " flash" : "");
    Error err;
    Gpt m;
    if (gpt_create(&m, &cfg, &err) != 0) die("check_gpt_bf16_kept: %s",
                                              err.msg);
    Rng rng;
    rng_seed(&rng, seed);
    gpt_init(&m, &rng);
    size_t bt = (size_t)B * T;
    int *idx = (int *)xmalloc(bt * sizeof *idx);
    int *other = (int *)xmalloc(bt * sizeof *other);
    int *tgt = (int *)xmalloc(bt * sizeof *tgt);
    for (size_t i = 0; i < bt; i++) {
        idx[i] = (int)rng_below(&rng, 65);
        other[i] = (int)rng_below(&rng, 65);
        tgt[i] = (int)rng_below(&rng, 65);
    }
    GptCuda d;
    if (gpt_cuda_create(&d, &m, &err) != 0)
        die("check_gpt_bf16_kept: %s", err.msg);
    bool was = gemm_bf16();
    int was_block = mha_causal_block();
    float *g[3] = {NULL, NULL, NULL};
    unsigned long long cast[3], cast_step[3];
    for (int run = 0; run < (flash ? 2 : 3); run++) {
        GptCudaActs da;
        int kept = run > 0;
        mha_set_causal_block(run == 2 ? ROWS_BLOCK : was_block);
        gemm_set_bf16(kept == 1);   // on at allocation: room for copies
        if (gpt_cuda_acts_alloc(&da, &cfg, B, T, flash, false, &err) != 0)
            die("check_gpt_bf16_kept: %s", err.msg);
        gemm_set_bf16(true);
        gpt_cuda_zero_grads(&d);
        if (kept && gpt_forward_cuda(&d, &da, other, tgt, B, T, false, NULL,
                                     NULL, &err) != 0)
            die("check_gpt_bf16_kept: %s", err.msg);
        unsigned long long start = gemm_bf16_cast_floats();
        if (gpt_forward_cuda(&d, &da, idx, tgt, B, T, false, NULL, NULL,
                             &err) != 0)
            die("check_gpt_bf16_kept: %s", err.msg);
        unsigned long long before = gemm_bf16_cast_floats();
        gpt_backward_cuda(&d, &da);
        cast[run] = gemm_bf16_cast_floats() - before;
        cast_step[run] = gemm_bf16_cast_floats() - start;
        g[run] = (float *)xmalloc(d.num_params * sizeof(float));
        cuda_download(g[run], d.grads, d.num_params);
        gpt_cuda_acts_free(&da);
    }
    gemm_set_bf16(was);
    mha_set_causal_block(was_block);
    size_t differ = 0;
    for (size_t i = 0; i < d.num_params; i++)
        differ += memcmp(&g[0][i], &g[1][i], sizeof(float)) != 0;
    report_value(rep, "bf16 copies kept: gradients differ", sizes,
                 (double)differ, 0);
    size_t btc = bt * cfg.n_embd, per_layer = 3 * btc + bt * cfg.n_ffn;
    if (!flash) per_layer += 3 * btc + (size_t)B * cfg.n_head * T * T;
    double expect = (double)cfg.n_layer * per_layer + btc;
    report_value(rep, "bf16 copies kept: floats not saved", sizes,
                 expect - ((double)cast[0] - (double)cast[1]), 0);
    if (!flash)
        report_value(rep, "bf16 copies kept: more rounded in blocks", sizes,
                     (double)cast_step[2] - (double)cast_step[1], 0);
    free(g[0]), free(g[1]), free(g[2]), free(idx), free(other), free(tgt);
    gpt_cuda_free(&d);
    gpt_free(&m);
}

// ==== the warp matrix API (emu.h) and flash_tc.cu ===========================

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#endif

// A (16, K) times B (K, 32), plus C, by two warps (one per 16 columns)
// through wmma, then halved element by element (legal whatever the
// fragment's layout). A is row- or column-major as LA says, B as LB,
// each with a leading dimension larger than its tile; C is loaded in
// either layout (or the accumulator filled with 0.25 instead) and the
// result stored in either.
template <class T, class LA, class LB>
__global__ void wmma_check_kernel(float *out, int ldo, int out_col,
                                  const T *a, int lda, const T *b, int ldb,
                                  const float *c, int ldc, int c_col,
                                  bool fill, int K) {
    using namespace nvcuda;
    bool a_row = std::is_same<LA, wmma::row_major>::value;
    bool b_row = std::is_same<LB, wmma::row_major>::value;
    int n0 = threadIdx.x / 32 * 16;   // this warp's columns
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    if (fill) wmma::fill_fragment(acc, 0.25f);
    else
        wmma::load_matrix_sync(acc, c + (c_col ? n0 * ldc : n0), ldc,
                               c_col ? wmma::mem_col_major
                                     : wmma::mem_row_major);
    for (int k0 = 0; k0 < K; k0 += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, LA> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, LB> fb;
        wmma::load_matrix_sync(fa, a + (a_row ? k0 : k0 * lda), lda);
        wmma::load_matrix_sync(fb, b + (b_row ? k0 * ldb + n0 : n0 * ldb + k0),
                               ldb);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    for (int i = 0; i < acc.num_elements; i++) acc.x[i] *= 0.5f;
    wmma::store_matrix_sync(out + (out_col ? n0 * ldo : n0), acc, ldo,
                            out_col ? wmma::mem_col_major
                                    : wmma::mem_row_major);
}

//> wmma-guess
// Wrong on purpose: it takes x[i] of lane l to be element 8 l + i of the
// tile in row-major order (a guess at the layout), to keep the product's
// lower triangle only. The emulation's layout is another, so the check
// must find wrong elements (and so would a GPU, whose layout is another
// again).
__global__ void wmma_positions_kernel(float *out, const __nv_bfloat16 *a,
                                      const __nv_bfloat16 *b) {
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16,
                   wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16,
                   wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    int lane = threadIdx.x % 32;
    for (int i = 0; i < acc.num_elements; i++) {
        int p = lane * acc.num_elements + i;   // the guess
        if (p % 16 > p / 16) acc.x[i] = 0.0f;
    }
    wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
}
//< wmma-guess

// x rounded to bf16 or (half) fp16, its value and its bits.
static float round16(float x, bool half) {
    return half ? __half2float(__float2half(x))
                : __bfloat162float(__float2bfloat16(x));
}
static uint16_t bits16(float x, bool half) {
    uint16_t u;
    if (half) {
        __half h = __float2half(x);
        memcpy(&u, &h, sizeof u);
    } else {
        __nv_bfloat16 h = __float2bfloat16(x);
        memcpy(&u, &h, sizeof u);
    }
    return u;
}

// A device copy of n host floats rounded to 16 bits (cuda_free()).
static void *to_device16(const float *h, size_t n, bool half) {
    uint16_t *host = (uint16_t *)xmalloc((n ? n : 1) * sizeof *host);
    for (size_t i = 0; i < n; i++) host[i] = bits16(h[i], half);
    void *d = cuda_alloc_floats((n + 1) / 2);
    CUDA_CHECK(cudaMemcpy(d, host, n * 2, cudaMemcpyHostToDevice));
    free(host);
    return d;
}

// Launches wmma_check_kernel with A's and B's layouts chosen at run time.
template <class T>
static void launch_wmma_check(float *out, int ldo, int out_col, const void *a,
                              int lda, int a_col, const void *b, int ldb,
                              int b_col, const float *c, int ldc, int c_col,
                              bool fill, int K) {
    using nvcuda::wmma::col_major;
    using nvcuda::wmma::row_major;
    const T *ta = (const T *)a, *tb = (const T *)b;
    if (!a_col && !b_col)
        LAUNCH((wmma_check_kernel<T, row_major, row_major>), 1, 64, 0, out,
               ldo, out_col, ta, lda, tb, ldb, c, ldc, c_col, fill, K);
    else if (!a_col)
        LAUNCH((wmma_check_kernel<T, row_major, col_major>), 1, 64, 0, out,
               ldo, out_col, ta, lda, tb, ldb, c, ldc, c_col, fill, K);
    else if (!b_col)
        LAUNCH((wmma_check_kernel<T, col_major, row_major>), 1, 64, 0, out,
               ldo, out_col, ta, lda, tb, ldb, c, ldc, c_col, fill, K);
    else
        LAUNCH((wmma_check_kernel<T, col_major, col_major>), 1, 64, 0, out,
               ldo, out_col, ta, lda, tb, ldb, c, ldc, c_col, fill, K);
}

// The nearest half to x by search: every finite half, in order, as a
// double; ties to the even bits; past the largest half by half an ulp
// (65520), infinity. The reference of __float2half.
static uint16_t half_nearest(float x) {
    static double value[0x7c00];
    static bool ready;
    if (!ready) {
        for (int h = 0; h < 0x7c00; h++) {
            int e = h >> 10, m = h & 0x3ff;
            value[h] = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
        }
        ready = true;
    }
    double a = fabs((double)x);
    uint16_t sign = x < 0 ? 0x8000 : 0;
    if (a >= 65520.0) return sign | 0x7c00;
    int lo = 0, hi = 0x7bff;   // the last value <= a
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (value[mid] <= a) lo = mid;
        else hi = mid - 1;
    }
    int h = lo;
    if (lo < 0x7bff) {
        double below = a - value[lo], above = value[lo + 1] - a;
        if (above < below || (above == below && (lo & 1))) h = lo + 1;
    }
    return sign | (uint16_t)h;
}

// sz: K, type (0 bf16, 1 half), layouts (+1 A column-major, +2 B, +4 C
// loaded column-major, +8 stored so), C (0 loaded, 1 filled with 0.25).
// The product of the rounded operands, in double, halved: the emulated
// sums are fp32 in another order, so within FP32_TOL. And the half
// rounding itself, against the nearest of all the finite halves.
static void check_wmma(KReport *rep, const int sz[4], uint64_t seed) {
    int K = sz[0], lay = sz[2];
    bool half = sz[1] != 0, fill = sz[3] != 0;
    int a_col = lay & 1, b_col = lay >> 1 & 1, c_col = lay >> 2 & 1;
    int out_col = lay >> 3 & 1;
    char sizes[64];
    snprintf(sizes, sizeof sizes, "16x32x%d %s A%c B%c C%c%s out%c", K,
             half ? "half" : "bf16", "RC"[a_col], "RC"[b_col], "RC"[c_col],
             fill ? "(fill)" : "", "RC"[out_col]);
    // leading dimensions past the tiles, multiples of 16 bytes
    int lda = a_col ? 24 : K + 8, ldb = b_col ? K + 8 : 40;
    int ldc = c_col ? 20 : 36, ldo = out_col ? 28 : 44;
    Rng rng;
    rng_seed(&rng, seed);
    size_t na = (size_t)(a_col ? K : 16) * lda;
    size_t nb = (size_t)(b_col ? 32 : K) * ldb;
    size_t nc = (size_t)(c_col ? 32 : 16) * ldc;
    size_t no = (size_t)(out_col ? 32 : 16) * ldo;
    float *a = host_randn(&rng, na, 1.0f), *b = host_randn(&rng, nb, 1.0f);
    float *c = host_randn(&rng, nc, 1.0f);
    void *d_a = to_device16(a, na, half), *d_b = to_device16(b, nb, half);
    float *d_c = to_device(c, nc), *d_out = cuda_alloc_floats(no);
    if (half)
        launch_wmma_check<__half>(d_out, ldo, out_col, d_a, lda, a_col, d_b,
                                  ldb, b_col, d_c, ldc, c_col, fill, K);
    else
        launch_wmma_check<__nv_bfloat16>(d_out, ldo, out_col, d_a, lda,
                                         a_col, d_b, ldb, b_col, d_c, ldc,
                                         c_col, fill, K);
    float *got = (float *)xmalloc(no * sizeof *got);
    cuda_download(got, d_out, no);
    float *g = (float *)xmalloc(16 * 32 * sizeof *g);
    float *want = (float *)xmalloc(16 * 32 * sizeof *want);
    for (int i = 0; i < 16; i++)
        for (int n = 0; n < 32; n++) {
            double sum = fill ? 0.25 : c[c_col ? n * ldc + i : i * ldc + n];
            for (int k = 0; k < K; k++)
                sum += (double)round16(a[a_col ? k * lda + i : i * lda + k],
                                       half)
                       * round16(b[b_col ? n * ldb + k : k * ldb + n], half);
            want[i * 32 + n] = (float)(0.5 * sum);
            g[i * 32 + n] = got[out_col ? n * ldo + i : i * ldo + n];
        }
    compare_host(rep, "wmma: 0.5 (A B + C)", sizes, g, want, 16 * 32,
                 FP32_TOL);
    if (half) {   // the rounding of __float2half, on the same floats
        size_t bad = 0;
        for (size_t i = 0; i < na; i++) {
            float x = a[i] * (i % 3 == 0 ? 1e-5f : i % 3 == 1 ? 3e4f : 1.0f);
            bad += bits16(x, true) != half_nearest(x);
        }
        report_value(rep, "__float2half: not the nearest", sizes,
                     (double)bad, 0);
    }
    cuda_free(d_a), cuda_free(d_b), cuda_free(d_c), cuda_free(d_out);
    free(a), free(b), free(c), free(got), free(g), free(want);
}

// The product of two random 16x16 bf16 tiles through
// wmma_positions_kernel: its lower triangle must come out wrong
// somewhere, or the emulation's layout would let a kernel that guesses
// positions pass.
static void check_wmma_positions(KReport *rep, const int sz[4],
                                 uint64_t seed) {
    (void)sz;
    Rng rng;
    rng_seed(&rng, seed);
    float *a = host_randn(&rng, 256, 1.0f), *b = host_randn(&rng, 256, 1.0f);
    void *d_a = to_device16(a, 256, false), *d_b = to_device16(b, 256, false);
    float *d_out = cuda_alloc_floats(256), got[256];
    LAUNCH(wmma_positions_kernel, 1, 32, 0, d_out,
           (const __nv_bfloat16 *)d_a, (const __nv_bfloat16 *)d_b);
    cuda_download(got, d_out, 256);
    int wrong = 0;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            double sum = 0;
            for (int k = 0; k < 16; k++)
                sum += (double)round16(a[i * 16 + k], false)
                       * round16(b[k * 16 + j], false);
            double want = j > i ? 0.0 : sum;
            wrong += fabs(got[i * 16 + j] - want) > 1e-4 * (1 + fabs(want));
        }
    report_value(rep, "guessed layout: not caught (0: caught)", "16x16x16",
                 wrong > 0 ? 0.0 : 1.0, 0);
    cuda_free(d_a), cuda_free(d_b), cuda_free(d_out);
    free(a), free(b);
}


// ---- the table -------------------------------------------------------------

#define ROWS_DIMS \
    "B, T, HS, mode (1 bf16, 3 bf16 qkv whole, +4 set, +8 blocks of 8)"
#define GPT_DIMS \
    "B, T, bias, mode (1 flash, 2 bf16, 4 blocks of 8, 8 HS 16, 16 tanh)"
#define GEMM_DIMS "M, N, K, mode (1 A^T, 2 B^T, 4 batched)"
#define GRID_DIMS "M, N, K, mode (1 bf16, 2 odd widths)"
#define WMMA_DIMS "K, half, layouts (1 A, 2 B, 4 C, 8 out col-major), fill"

const KCheck KCHECKS[] = {
    {"activation", check_gelu, {1000, 0, 0, 0},
     "n, kind (0 exact, 1 tanh)", false},
    {"activation", check_gelu, {777, 1, 0, 0},
     "n, kind (0 exact, 1 tanh)", false},
    {"activation", check_gelu_copy, {1001, 0, 0, 0},
     "n, kind (0 exact, 1 tanh)", false},
    // layernorm, residual, dropout, embedding
    {"layernorm", check_layernorm, {3, 17, 45, 1}, "B, T, C, bias", false},
    {"layernorm", check_layernorm, {2, 5, 2, 0}, "B, T, C, bias", false},
    {"layernorm", check_layernorm, {5, 103, 97, 1}, "B, T, C, bias", false},
    {"layernorm", check_layernorm, {1, 7, 301, 0}, "B, T, C, bias", false},
    {"layernorm", check_layernorm_copy, {3, 19, 45, 0}, "B, T, C", false},
    {"residual", check_residual, {1000, 0, 0, 0}, "n", false},
    {"residual", check_residual, {1, 0, 0, 0}, "n", false},
    {"residual", check_sublayer_add, {1000, 10, 0, 0}, "n, p (percent)", false},
    {"residual", check_sublayer_add, {513, 0, 0, 0}, "n, p (percent)", false},
    {"dropout", check_dropout, {10007, 30, 0, 0}, "n, p (percent)", false},
    {"dropout", check_dropout, {4099, 90, 0, 0}, "n, p (percent)", false},
    {"dropout", check_dropout, {777, 0, 0, 0}, "n, p (percent)", false},
    {"embedding", check_embedding, {3, 17, 45, 0}, "B, T, C, kind", false},
    {"embedding", check_embedding, {2, 9, 97, 1}, "B, T, C, kind", false},
    {"embedding", check_embedding, {1, 2, 1, 0}, "B, T, C, kind", false},
    {"embedding", check_embedding, {4, 150, 37, 0}, "B, T, C, kind", false},
    {"embedding", check_embedding, {2, 131, 33, 2}, "B, T, C, kind", false},

    // linear, mha
    {"linear", check_linear, {37, 45, 29, 1}, "N, C_in, C_out, bias", false},
    {"linear", check_linear, {131, 64, 192, 0}, "N, C_in, C_out, bias", false},
    {"linear", check_linear, {1, 7, 3, 1}, "N, C_in, C_out, bias", false},
    {"linear", check_linear, {601, 33, 70, 1}, "N, C_in, C_out, bias", false},
    {"mha", check_heads, {3, 17, 24, 4}, "B, T, C, NH", false},
    {"gemm", check_bf16_round, {4099, 0, 0, 0}, "n", false},
    {"gemm", check_gemm_bf16, {37, 29, 131, 0}, GEMM_DIMS, false},
    {"gemm", check_gemm_bf16, {33, 70, 45, 1}, GEMM_DIMS, false},
    {"gemm", check_gemm_bf16, {19, 23, 97, 2}, GEMM_DIMS, false},
    {"gemm", check_gemm_bf16, {17, 13, 64, 6}, GEMM_DIMS, false},
    {"gemm", check_gemm_grid, {19, 13, 21, 0}, GRID_DIMS, false},
    {"gemm", check_gemm_grid, {19, 13, 21, 2}, GRID_DIMS, false},
    {"gemm", check_gemm_grid, {7, 24, 37, 1}, GRID_DIMS, false},
    {"gemm", check_gemm_grid, {7, 24, 37, 3}, GRID_DIMS, false},
    {"gemm", check_gemm_bf16_reuse, {37, 0, 0, 0}, "n", false},
    {"gemm", check_gemm_bf16_views, {29, 0, 0, 0}, "n", false},

    // attention
    {"attention", check_softmax, {37, 45, 0, 0}, "N, D", false},
    {"attention", check_softmax, {5, 101, 0, 0}, "N, D", false},
    {"attention", check_attention, {19, 19, 8, 0}, ATTENTION_DIMS, false},
    {"attention", check_attention, {19, 19, 8, 1}, ATTENTION_DIMS, false},
    {"attention", check_attention, {19, 19, 8, 3}, ATTENTION_DIMS, false},
    {"attention", check_attention, {19, 31, 5, 2}, ATTENTION_DIMS, false},
    {"attention", check_attention, {13, 23, 8, 3}, ATTENTION_DIMS, false},
    {"attention", check_attention, {23, 13, 5, 1}, ATTENTION_DIMS, false},
    {"attention", check_attention, {1, 41, 8, 3}, ATTENTION_DIMS, false},
    {"attention", check_attention_rows, {2, 19, 8, 0}, ROWS_DIMS, false},
    {"attention", check_attention_rows, {3, 37, 5, 0}, ROWS_DIMS, false},
    {"attention", check_attention_rows, {2, 19, 8, 1}, ROWS_DIMS, false},
    {"attention", check_attention_rows, {2, 23, 16, 3}, ROWS_DIMS, false},
    {"attention", check_attention_rows, {2, 19, 8, 4}, ROWS_DIMS, false},
    {"attention", check_attention_rows, {2, 19, 8, 8}, ROWS_DIMS, false},
    {"attention", check_attention_rows, {3, 37, 5, 12}, ROWS_DIMS, false},
    {"attention", check_attention_rows, {2, 23, 16, 11}, ROWS_DIMS, false},
    {"attention", check_attention_rows, {2, 16, 8, 9}, ROWS_DIMS, false},

    // flash
    {"flash", check_flash, {2, 3, 37, 8}, "B, NH, T, HS", false},
    {"flash", check_flash, {2, 2, 1, 5}, "B, NH, T, HS", false},
    {"flash", check_flash, {1, 2, 70, 24}, "B, NH, T, HS", false},
    {"flash", check_flash, {1, 1, 45, 72}, "B, NH, T, HS", false},

    // the warp matrix API (emu.h) and flash_tc.cu
    {"wmma", check_wmma, {16, 0, 0, 0}, WMMA_DIMS, false},
    {"wmma", check_wmma, {48, 0, 3, 0}, WMMA_DIMS, false},
    {"wmma", check_wmma, {32, 0, 12, 1}, WMMA_DIMS, false},
    {"wmma", check_wmma, {32, 1, 5, 0}, WMMA_DIMS, false},
    {"wmma", check_wmma, {16, 1, 10, 1}, WMMA_DIMS, false},
    {"wmma", check_wmma_positions, {0, 0, 0, 0}, "", false},
    {"flash", check_flash_tc, {2, 3, 37, 16}, "B, NH, T, HS", false},
    {"flash", check_flash_tc, {1, 2, 70, 32}, "B, NH, T, HS", false},
    {"flash", check_flash_tc, {1, 1, 131, 64}, "B, NH, T, HS", false},
    {"flash", check_flash_tc, {2, 1, 1, 48}, "B, NH, T, HS", false},
    {"gpt", check_gpt_step, {3, 37, 1, 11}, GPT_DIMS, true},

    // crossentropy, optim
    {"crossentropy", check_xent, {37, 65, 1, 0},
     "N, V, -1 targets, large", false},
    {"crossentropy", check_xent, {21, 1000, 1, 0},
     "N, V, -1 targets, large", false},
    {"crossentropy", check_xent, {13, 1, 1, 0},
     "N, V, -1 targets, large", false},
    {"crossentropy", check_xent, {9, 65, 2, 0},
     "N, V, -1 targets, large", false},
    {"crossentropy", check_xent, {17, 1000, 1, 1},
     "N, V, -1 targets, large", false},
    {"crossentropy", check_xent, {3, 50257, 0, 0},
     "N, V, -1 targets, large", false},
    {"optim", check_adamw, {1001, 1, 10, 0}, "n, first t, wd (1/100)", false},
    {"optim", check_adamw, {777, 10, 0, 0}, "n, first t, wd (1/100)", false},
    {"optim", check_adamw, {1001, 1000, 10, 0},
     "n, first t, wd (1/100)", false},
    {"optim", check_adamw_many, {7, 20011, 3, 10},
     "tensors, largest, first t, wd (1/100)", false},
    {"optim", check_norm, {1, 1, 0, 0},
     "n, clip (0 off, 1 on, 2 unneeded)", false},
    {"optim", check_norm, {1000, 0, 0, 0},
     "n, clip (0 off, 1 on, 2 unneeded)", false},
    {"optim", check_norm, {100003, 1, 0, 0},
     "n, clip (0 off, 1 on, 2 unneeded)", false},
    {"optim", check_norm, {777, 2, 0, 0},
     "n, clip (0 off, 1 on, 2 unneeded)", false},

    // the fused forms
    {"fused", check_bias_gelu, {37, 45, 0, 1}, "N, F, kind, bias", false},
    {"fused", check_bias_gelu, {301, 45, 1, 1}, "N, F, kind, bias", false},
    {"fused", check_bias_gelu, {5, 3, 0, 0}, "N, F, kind, bias", false},
    {"fused", check_residual_layernorm, {37, 45, 0, 1},
     "N, C, p (percent), bias", false},
    {"fused", check_residual_layernorm, {29, 97, 30, 1},
     "N, C, p (percent), bias", false},
    {"fused", check_residual_layernorm, {131, 70, 10, 0},
     "N, C, p (percent), bias", false},
    {"fused", check_layernorm_skip, {3, 17, 45, 1}, "B, T, C, bias", false},
    {"fused", check_layernorm_skip, {2, 9, 97, 0}, "B, T, C, bias", false},
    {"fused", check_fused_vs_plain, {2, 19, 1, 0},
     "B, T, bias, flash | 2 no dropout", true},
    {"fused", check_fused_vs_plain, {3, 13, 0, 1},
     "B, T, bias, flash | 2 no dropout", true},
    {"fused", check_fused_vs_plain, {2, 11, 1, 2},
     "B, T, bias, flash | 2 no dropout", true},
    {"fused", check_gpt_graph, {2, 13, 0, 0}, "B, T, bf16, flash", true},
    {"fused", check_gpt_graph, {3, 9, 1, 0}, "B, T, bf16, flash", true},
    {"fused", check_gpt_graph, {2, 11, 0, 1}, "B, T, bf16, flash", true},
    {"fused", check_gpt_step_plain, {2, 19, 0, 0}, GPT_DIMS, true},
    {"fused", check_gpt_step_plain, {3, 33, 1, 2}, GPT_DIMS, true},
    {"fused", check_gpt_step_plain, {2, 19, 1, 16}, GPT_DIMS, true},

    // the whole model
    {"gpt", check_gpt_step, {2, 19, 0, 0}, GPT_DIMS, false},
    {"gpt", check_gpt_step, {3, 33, 1, 1}, GPT_DIMS, true},
    {"gpt", check_gpt_step, {3, 33, 1, 2}, GPT_DIMS, true},
    {"gpt", check_gpt_step, {2, 19, 0, 4}, GPT_DIMS, true},
    {"gpt", check_gpt_step, {3, 33, 1, 6}, GPT_DIMS, true},
    {"gpt", check_gpt_step, {2, 19, 1, 17}, GPT_DIMS, true},
    {"gpt", check_gpt_bf16_kept, {2, 21, 0, 0}, "B, T, flash", true},
    {"gpt", check_gpt_bf16_kept, {2, 37, 1, 0}, "B, T, flash", true},
};
const int N_KCHECKS = sizeof KCHECKS / sizeof KCHECKS[0];

// One line per compared array, under a line with the sizes whenever
// they change: 80 columns hold it.
int kcheck_all(bool verbose) {
    int failed = 0;
    char shown[sizeof ((KResult *)0)->sizes] = "";
    for (int i = 0; i < N_KCHECKS; i++) {
        KReport rep;
        rep.n = 0;
        KCHECKS[i].run(&rep, KCHECKS[i].sz, 1000 + (uint64_t)i);
        for (int j = 0; j < rep.n; j++) {
            const KResult *r = &rep.r[j];
            failed += !r->ok;
            if (!verbose && r->ok) continue;
            if (strcmp(shown, r->sizes) != 0) {
                printf("  %s\n", r->sizes);
                snprintf(shown, sizeof shown, "%s", r->sizes);
            }
            if (r->tol == 0)   // exact: a count, or an error, that is 0
                printf("    %-40s %7.2g (must be 0) %s\n", r->name, r->err,
                       r->ok ? "ok" : "FAILED");
            else
                printf("    %-40s %.1e (tol %.0e) %s\n", r->name, r->err,
                       r->tol, r->ok ? "ok" : "FAILED");
        }
    }
    return failed;
}
