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

// (flash)
#include "attention.h"
#include "flash.cuh"

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


// ---- flash.cu ----------------------------------------------------------------

// sz: B, NH, T, HS. The fused causal attention against chapter 2's
// attention_forward and attention_backward (causal, no key mask): out, the
// three gradients (started from random values, so the += is checked), and
// lse against the log-sum-exp of each row's scaled scores, computed here
// in double. T above 32 spans several tiles (a partial one last); HS
// above 32 gives a lane more than one float of a row.
static void check_flash(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], NH = sz[1], T = sz[2], HS = sz[3];
    char sizes[64];
    snprintf(sizes, sizeof sizes, "B=%d NH=%d T=%d HS=%d", B, NH, T, HS);
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
                          NULL) != 0) {
        fprintf(stderr, "check_flash: bad sizes %s\n", sizes);
        exit(1);
    }
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

    attention_forward_flash_cuda(d_out, d_lse, d_q, d_k, d_v, B, NH, T, HS);
    attention_backward_flash_cuda(d_dq, d_dk, d_dv, d_dout, d_out, d_lse,
                                  d_q, d_k, d_v, B, NH, T, HS);
    compare(rep, "attention_forward_flash_cuda: out", sizes, d_out, out, n,
            FP32_TOL);
    compare(rep, "attention_forward_flash_cuda: lse", sizes, d_lse, lse,
            rows, FP32_TOL);
    compare(rep, "attention_backward_flash_cuda: dq", sizes, d_dq, dq, n,
            FP32_TOL);
    compare(rep, "attention_backward_flash_cuda: dk", sizes, d_dk, dk, n,
            FP32_TOL);
    compare(rep, "attention_backward_flash_cuda: dv", sizes, d_dv, dv, n,
            FP32_TOL);
    float *dev[] = {d_q, d_k, d_v, d_dout, d_dq, d_dk, d_dv, d_out, d_lse};
    for (float *p : dev) cuda_free(p);
    float *host[] = {q, k, v, dout, dq, dk, dv, out, att, datt, lse};
    for (float *p : host) free(p);
}

// ---- crossentropy.cu, optim.cu ---------------------------------------------


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

    // flash
    {"flash", check_flash, {2, 3, 37, 8}, "B, NH, T, HS"},
    {"flash", check_flash, {2, 2, 1, 5}, "B, NH, T, HS"},
    {"flash", check_flash, {1, 2, 70, 24}, "B, NH, T, HS"},
    {"flash", check_flash, {1, 1, 45, 72}, "B, NH, T, HS"},

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
