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
#include "linear.cuh"
#include "mha.cuh"

// (attention)

// (crossentropy, optim)
#include "crossentropy.cuh"
#include "optim.cuh"

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
    float *dev[] = {d_x, d_w, d_b, d_dy, d_dx, d_dw, d_db, d_y};
    for (float *p : dev) cuda_free(p);
    float *host[] = {x, w, b, dy, dx, dw, db, y};
    for (float *p : host) free(p);
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


// ---- the table -------------------------------------------------------------

const KCheck KCHECKS[] = {
    {"activation", check_gelu, {1000, 0, 0, 0}, "n, kind (0 exact, 1 tanh)"},
    {"activation", check_gelu, {777, 1, 0, 0}, "n, kind (0 exact, 1 tanh)"},
    // layernorm, residual, dropout, embedding

    // linear, mha
    {"linear", check_linear, {37, 45, 29, 1}, "N, C_in, C_out, bias"},
    {"linear", check_linear, {131, 64, 192, 0}, "N, C_in, C_out, bias"},
    {"linear", check_linear, {1, 7, 3, 1}, "N, C_in, C_out, bias"},
    {"mha", check_heads, {3, 17, 24, 4}, "B, T, C, NH"},

    // attention

    // crossentropy, optim
    {"crossentropy", check_xent, {37, 65, 1, 0}, "N, V, -1 targets, large"},
    {"crossentropy", check_xent, {21, 1000, 1, 0}, "N, V, -1 targets, large"},
    {"crossentropy", check_xent, {13, 1, 1, 0}, "N, V, -1 targets, large"},
    {"crossentropy", check_xent, {9, 65, 2, 0}, "N, V, -1 targets, large"},
    {"crossentropy", check_xent, {17, 1000, 1, 1}, "N, V, -1 targets, large"},
    {"crossentropy", check_xent, {3, 50257, 0, 0}, "N, V, -1 targets, large"},
    {"optim", check_adamw, {1001, 1, 10, 0}, "n, first t, wd (1/100)"},
    {"optim", check_adamw, {777, 10, 0, 0}, "n, first t, wd (1/100)"},
    {"optim", check_adamw, {1001, 1000, 10, 0}, "n, first t, wd (1/100)"},
    {"optim", check_norm, {1, 1, 0, 0}, "n, clip (0 off, 1 on, 2 unneeded)"},
    {"optim", check_norm, {1000, 0, 0, 0}, "n, clip (0 off, 1 on, 2 unneeded)"},
    {"optim", check_norm, {100003, 1, 0, 0},
     "n, clip (0 off, 1 on, 2 unneeded)"},
    {"optim", check_norm, {777, 2, 0, 0}, "n, clip (0 off, 1 on, 2 unneeded)"},

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
