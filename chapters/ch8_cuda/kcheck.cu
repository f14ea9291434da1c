// kcheck.cu - the checks of kcheck.cuh: each kernel against the CPU.
#include "cuda_rt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "activation.cuh"
// (layernorm, residual, dropout, embedding)

// (linear, mha)

// (attention)

// (crossentropy, optim)

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

// Compares the device tensor got with the host tensor want and appends
// the result.
static void compare(KReport *rep, const char *name, const char *sizes,
                    const float *got_dev, const float *want, size_t n,
                    double tol) {
    float *got = (float *)xmalloc((n ? n : 1) * sizeof *got);
    cuda_download(got, got_dev, n);
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (!(d <= diff)) diff = d;   // a NaN sticks
        if (fabs(want[i]) > scale) scale = fabs(want[i]);
    }
    free(got);
    if (rep->n >= KCHECK_MAX) return;
    KResult *r = &rep->r[rep->n++];
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->sizes, sizeof r->sizes, "%s", sizes);
    r->err = diff / (scale > 0 ? scale : 1.0);
    r->tol = tol;
    r->ok = r->err <= tol;   // false for NaN
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


// ---- linear.cu, mha.cu -----------------------------------------------------


// ---- attention.cu ------------------------------------------------------------


// ---- crossentropy.cu, optim.cu ---------------------------------------------


// ---- the table -------------------------------------------------------------

const KCheck KCHECKS[] = {
    {"activation", check_gelu, {1000, 0, 0, 0}, "n, kind (0 exact, 1 tanh)"},
    {"activation", check_gelu, {777, 1, 0, 0}, "n, kind (0 exact, 1 tanh)"},
    // layernorm, residual, dropout, embedding

    // linear, mha

    // attention

    // crossentropy, optim

};
const int N_KCHECKS = sizeof KCHECKS / sizeof KCHECKS[0];

int kcheck_all(bool verbose) {
    int failed = 0;
    for (int i = 0; i < N_KCHECKS; i++) {
        KReport rep;
        rep.n = 0;
        KCHECKS[i].run(&rep, KCHECKS[i].sz, 1000 + (uint64_t)i);
        for (int j = 0; j < rep.n; j++) {
            const KResult *r = &rep.r[j];
            failed += !r->ok;
            if (verbose || !r->ok)
                printf("  %-36s %-22s err %.1e (tol %.0e) %s\n", r->name,
                       r->sizes, r->err, r->tol, r->ok ? "ok" : "FAILED");
        }
    }
    return failed;
}
