// Tests of the chapter 4 exercises. Expected values come from hand
// computation, the definitions evaluated in double inside the test (and
// their finite differences), and the PyTorch fixtures of
// tests/reference/gen_ch4.py, never from the reference solutions or the
// chapter's version of the same function.
//
// The wrong versions each exercise's tests are meant to catch (each was
// tried as a change of the reference solution, graded with `make check
// EXERCISES=<that copy>`, and scored below full marks):
//   4.1  the variance over C - 1; eps outside the square root, 1e-6, or
//        none; a one-pass float variance (E[x^2] - mean^2: the shifted
//        rows); a NULL bias read (a crash); the mean not written; the
//        std written as rstd; the bias added before the weight.
//   4.2  dbias, dweight or dinp assigned instead of added; a NULL dbias
//        written to (a crash); the mean-of-g term or the xhat * mean(g *
//        xhat) term left out; the means taken of dout instead of g =
//        weight * dout, or g without the weight; dweight from x instead
//        of xhat; dinp without rstd, or with rstd^2.
//   4.3  eps 1e-5; no division by C; sqrt(ms + eps) instead of its
//        reciprocal; no eps (caught by the new small and zero rows);
//        LayerNorm's mean-of-g term kept in the backward pass; the
//        xhat * mean(g * xhat) term left out, or without the weight, or a
//        sum instead of a mean; dweight without rstd; dinp or dweight
//        assigned instead of added.
//   4.4  either residual left out, or the second one adding inp instead
//        of h; non-causal attention; ln_1's weights used for ln_2; the
//        tanh GELU, or ReLU; Pre-LN wiring; c_proj's bias left out.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch4_exercises.h"
#include "ch4_util.h"

typedef struct {
    const char *name;
    int N, C;
    bool bias;
} NormFx;

static const NormFx LN_FX[] = {
    {"ln", 6, 7, true}, {"ln_nobias", 1, 5, false},
    {"ln_shifted", 4, 16, true},
};
static const NormFx RMS_FX[] = {{"rms", 6, 7, false}, {"rms_one", 1, 5,
                                                       false}};

// The fixture's (B,T,C) tensors seen as (N, C): only the count matters.
static const float *fx_rows(const Fixture *f, const NormFx *c,
                            const char *what, int C) {
    size_t n;
    char key[64];
    snprintf(key, sizeof key, "%s.%s", c->name, what);
    Error err;
    const float *p = fixture_find(f, key, NULL, 0, &n, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_uint_eq(n, (size_t)c->N * C);
    return p;
}

// The definitions in double, for finite differences: L = sum(out * lw).
static double norm_def_loss(const double *x, const double *w,
                            const double *b, const float *lw, int N, int C,
                            int rms) {
    double L = 0;
    for (int r = 0; r < N; r++) {
        const double *row = x + (long)r * C;
        double m = 0, v = 0;
        for (int i = 0; i < C; i++) m += row[i] / C;
        if (rms) m = 0;
        for (int i = 0; i < C; i++) v += (row[i] - m) * (row[i] - m) / C;
        double s = 1 / sqrt(v + (rms ? 1e-6 : 1e-5));
        for (int i = 0; i < C; i++)
            L += lw[(long)r * C + i] * ((row[i] - m) * s * w[i]
                                        + (b ? b[i] : 0));
    }
    return L;
}

// d L / d v[i] for every i of v (one of x, w, b), central, in double.
static void norm_def_grad(double *grad, double *v, size_t n, const double *x,
                          const double *w, const double *b, const float *lw,
                          int N, int C, int rms) {
    const double h = 1e-6;
    for (size_t i = 0; i < n; i++) {
        double keep = v[i];
        v[i] = keep + h;
        double up = norm_def_loss(x, w, b, lw, N, C, rms);
        v[i] = keep - h;
        double down = norm_def_loss(x, w, b, lw, N, C, rms);
        v[i] = keep;
        grad[i] = (up - down) / (2 * h);
    }
}

// ---- 4.1 LayerNorm forward ------------------------------------------------

START_TEST(ex4_1_known_values) {
    // [1, 2, 3]: mean 2, variance 2/3 (divide by C), rstd 1/sqrt(2/3+eps)
    const float x[6] = {1, 2, 3, 5, 5, 5}, w[3] = {1, 2, 1};
    const float b[3] = {0, 0, 0.5f};
    float y[6], mean[2], rstd[2];
    ex_layernorm_forward(y, mean, rstd, x, w, b, 2, 3);
    double s = 1 / sqrt(2.0 / 3 + 1e-5);
    const double want[6] = {-s, 0, s + 0.5, 0, 0, 0.5};
    ck_assert_close("layernorm([1,2,3]), layernorm([5,5,5])", y, want, 6,
                    1e-6, 1e-6);
    const double wm[2] = {2, 5}, ws[2] = {s, 1 / sqrt(1e-5)};
    ck_assert_close("mean", mean, wm, 2, 1e-6, 1e-6);
    ck_assert_close("rstd", rstd, ws, 2, 1e-6, 1e-5);
    ex_layernorm_forward(y, mean, rstd, x, w, NULL, 1, 3);   // no bias
    const double nb[3] = {-s, 0, s};
    ck_assert_close("bias NULL", y, nb, 3, 1e-6, 1e-6);
}
END_TEST

START_TEST(ex4_1_matches_pytorch) {
    Fixture *f = fixture_open("ch4_norm.txt");
    for (size_t k = 0; k < sizeof LN_FX / sizeof *LN_FX; k++) {
        const NormFx *c = &LN_FX[k];
        size_t n = (size_t)c->N * c->C;
        float *y = alloc_floats(n), mean[8], rstd[8];
        ex_layernorm_forward(y, mean, rstd, fx_rows(f, c, "x", c->C),
                             fx_get2(f, c->name, "weight", &c->C, 1),
                             c->bias ? fx_get2(f, c->name, "bias", &c->C, 1)
                                     : NULL, c->N, c->C);
        char what[64];
        snprintf(what, sizeof what, "%s: out vs nn.LayerNorm", c->name);
        ck_assert_close_f(what, y, fx_rows(f, c, "out", c->C), n, 1e-5,
                          1e-5);
        ck_assert_close_f("mean", mean, fx_rows(f, c, "mean", 1),
                          (size_t)c->N, 1e-6, 1e-6);
        ck_assert_close_f("rstd", rstd, fx_rows(f, c, "rstd", 1),
                          (size_t)c->N, 1e-6, 1e-5);
        free(y);
    }
    fixture_free(f);
}
END_TEST

TCase *ex4_1_tcase(void) {
    TCase *tc = tcase_new("ex4.1", "ch4 exercises");
    tcase_add_test(tc, ex4_1_known_values);
    tcase_add_test(tc, ex4_1_matches_pytorch);
    return tc;
}

// ---- 4.2 LayerNorm backward -----------------------------------------------

START_TEST(ex4_2_matches_pytorch) {
    // the gradients start at 0.5: the answer is added
    Fixture *f = fixture_open("ch4_norm.txt");
    for (size_t k = 0; k < sizeof LN_FX / sizeof *LN_FX; k++) {
        const NormFx *c = &LN_FX[k];
        size_t n = (size_t)c->N * c->C;
        float *dx = alloc_floats(n), dw[16], db[16];
        for (size_t i = 0; i < n; i++) dx[i] = 0.5f;
        for (int i = 0; i < c->C; i++) dw[i] = db[i] = 0.5f;
        ex_layernorm_backward(dx, dw, c->bias ? db : NULL,
                              fx_rows(f, c, "w", c->C),
                              fx_rows(f, c, "x", c->C),
                              fx_get2(f, c->name, "weight", &c->C, 1),
                              fx_rows(f, c, "mean", 1),
                              fx_rows(f, c, "rstd", 1), c->N, c->C);
        for (size_t i = 0; i < n; i++) dx[i] -= 0.5f;
        for (int i = 0; i < c->C; i++) dw[i] -= 0.5f, db[i] -= 0.5f;
        char what[64];
        snprintf(what, sizeof what, "%s: dinp", c->name);
        ck_assert_close_f(what, dx, fx_rows(f, c, "dx", c->C), n, 1e-5,
                          1e-4);
        snprintf(what, sizeof what, "%s: dweight", c->name);
        ck_assert_close_f(what, dw, fx_get2(f, c->name, "dweight", &c->C, 1),
                          (size_t)c->C, 1e-5, 1e-4);
        if (c->bias) {
            snprintf(what, sizeof what, "%s: dbias", c->name);
            ck_assert_close_f(what, db, fx_get2(f, c->name, "dbias", &c->C,
                              1), (size_t)c->C, 1e-5, 1e-4);
        } else {
            for (int i = 0; i < c->C; i++)      // NULL: nothing to write
                ck_assert_float_eq(db[i], 0.0f);
        }
        free(dx);
    }
    fixture_free(f);
}
END_TEST

// The gradients of the definition (in double, finite differences) against
// the student's, for random rows; rms: RMSNorm instead (exercise 4.3).
static void norm_fd_case(int N, int C, int bias, int rms, uint64_t seed) {
    size_t n = (size_t)N * C;
    float *xf = randn_floats(n, 1.5f, seed), *wf = randn_floats(C, 0.3f,
                                                                 seed + 1);
    float *bf = randn_floats(C, 0.3f, seed + 2);
    float *lw = randn_floats(n, 1.0f, seed + 3);
    double *x = malloc(n * sizeof *x), *w = malloc(C * sizeof *w);
    double *b = malloc(C * sizeof *b), *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++) x[i] = xf[i];
    for (int i = 0; i < C; i++) w[i] = wf[i] += 1.0f, b[i] = bf[i];
    float *out = alloc_floats(n), *dx = alloc_floats(n);
    float mean[8], rstd[8], dw[16] = {0}, db[16] = {0};
    double *bb = bias ? b : NULL;
    // the forward pass's mean and rstd, from the definition
    for (int r = 0; r < N; r++) {
        double m = 0, v = 0;
        for (int i = 0; i < C; i++) m += x[(long)r * C + i] / C;
        if (rms) m = 0;
        for (int i = 0; i < C; i++)
            v += (x[(long)r * C + i] - m) * (x[(long)r * C + i] - m) / C;
        mean[r] = (float)m;
        rstd[r] = (float)(1 / sqrt(v + (rms ? 1e-6 : 1e-5)));
    }
    if (rms) ex_rmsnorm_backward(dx, dw, lw, xf, wf, rstd, N, C);
    else ex_layernorm_backward(dx, dw, bias ? db : NULL, lw, xf, wf, mean,
                               rstd, N, C);
    (void)out;
    norm_def_grad(want, x, n, x, w, bb, lw, N, C, rms);
    ck_assert_close("dinp vs finite differences", dx, want, n, 1e-4, 1e-3);
    norm_def_grad(want, w, C, x, w, bb, lw, N, C, rms);
    ck_assert_close("dweight vs finite differences", dw, want, C, 1e-4,
                    1e-3);
    if (bias) {
        norm_def_grad(want, b, C, x, w, bb, lw, N, C, rms);
        ck_assert_close("dbias vs finite differences", db, want, C, 1e-4,
                        1e-3);
    }
    free(xf), free(wf), free(bf), free(lw), free(x), free(w), free(b);
    free(want), free(out), free(dx);
}

START_TEST(ex4_2_finite_differences) {
    norm_fd_case(1, 3, 1, 0, 90);
    norm_fd_case(3, 11, 0, 0, 94);
    norm_fd_case(2, 16, 1, 0, 98);
}
END_TEST

TCase *ex4_2_tcase(void) {
    TCase *tc = tcase_new("ex4.2", "ch4 exercises");
    tcase_add_test(tc, ex4_2_matches_pytorch);
    tcase_add_test(tc, ex4_2_finite_differences);
    return tc;
}

// ---- 4.3 RMSNorm ----------------------------------------------------------

START_TEST(ex4_3_forward_matches_pytorch) {
    // by hand first: [3, 4] has mean square 12.5
    const float x[2] = {3, 4}, w[2] = {1, -2};
    float y[2], rstd[1];
    ex_rmsnorm_forward(y, rstd, x, w, 1, 2);
    double s = 1 / sqrt(12.5 + 1e-6);
    const double want[2] = {3 * s, -8 * s};
    ck_assert_close("rmsnorm([3, 4])", y, want, 2, 1e-7, 1e-6);
    // eps matters for small rows: (1e-3, -1e-3, 2e-3) has mean square
    // 2e-6, so rstd = 1 / sqrt(3e-6), not 1 / sqrt(2e-6); a row of zeros
    // gives rstd 1000 and zeros (not 0 * inf = NaN)
    const float tiny[6] = {1e-3f, -1e-3f, 2e-3f, 0, 0, 0};
    const float w3[3] = {1, 1, 1};
    float yt[6], rt[2];
    ex_rmsnorm_forward(yt, rt, tiny, w3, 2, 3);
    double ms = ((double)tiny[0] * tiny[0] + (double)tiny[1] * tiny[1]
                 + (double)tiny[2] * tiny[2]) / 3;
    double st = 1 / sqrt(ms + 1e-6);
    const double wt[6] = {tiny[0] * st, tiny[1] * st, tiny[2] * st, 0, 0,
                          0};
    const double wrt[2] = {st, 1000};
    ck_assert_close("rmsnorm of (1e-3, -1e-3, 2e-3) and (0, 0, 0)", yt, wt,
                    6, 1e-7, 1e-5);
    ck_assert_close("rstd of (1e-3, -1e-3, 2e-3) and (0, 0, 0)", rt, wrt, 2,
                    0, 1e-5);
    Fixture *f = fixture_open("ch4_norm.txt");
    for (size_t k = 0; k < sizeof RMS_FX / sizeof *RMS_FX; k++) {
        const NormFx *c = &RMS_FX[k];
        size_t n = (size_t)c->N * c->C;
        float *out = alloc_floats(n), rs[8];
        ex_rmsnorm_forward(out, rs, fx_rows(f, c, "x", c->C),
                           fx_get2(f, c->name, "weight", &c->C, 1), c->N,
                           c->C);
        ck_assert_close_f("out vs nn.RMSNorm", out, fx_rows(f, c, "out",
                          c->C), n, 1e-5, 1e-5);
        ck_assert_close_f("rstd", rs, fx_rows(f, c, "rstd", 1),
                          (size_t)c->N, 1e-6, 1e-5);
        free(out);
    }
    fixture_free(f);
}
END_TEST

START_TEST(ex4_3_backward_matches_pytorch) {
    Fixture *f = fixture_open("ch4_norm.txt");
    for (size_t k = 0; k < sizeof RMS_FX / sizeof *RMS_FX; k++) {
        const NormFx *c = &RMS_FX[k];
        size_t n = (size_t)c->N * c->C;
        float *dx = alloc_floats(n), dw[16];
        for (size_t i = 0; i < n; i++) dx[i] = -1.0f;
        for (int i = 0; i < c->C; i++) dw[i] = -1.0f;
        ex_rmsnorm_backward(dx, dw, fx_rows(f, c, "w", c->C),
                            fx_rows(f, c, "x", c->C),
                            fx_get2(f, c->name, "weight", &c->C, 1),
                            fx_rows(f, c, "rstd", 1), c->N, c->C);
        for (size_t i = 0; i < n; i++) dx[i] += 1.0f;
        for (int i = 0; i < c->C; i++) dw[i] += 1.0f;
        ck_assert_close_f("dinp", dx, fx_rows(f, c, "dx", c->C), n, 1e-5,
                          1e-4);
        ck_assert_close_f("dweight", dw, fx_get2(f, c->name, "dweight",
                          &c->C, 1), (size_t)c->C, 1e-5, 1e-4);
        free(dx);
    }
    fixture_free(f);
}
END_TEST

START_TEST(ex4_3_backward_finite_differences) {
    norm_fd_case(1, 3, 0, 1, 120);
    norm_fd_case(4, 9, 0, 1, 124);
}
END_TEST

TCase *ex4_3_tcase(void) {
    TCase *tc = tcase_new("ex4.3", "ch4 exercises");
    tcase_add_test(tc, ex4_3_forward_matches_pytorch);
    tcase_add_test(tc, ex4_3_backward_matches_pytorch);
    tcase_add_test(tc, ex4_3_backward_finite_differences);
    return tc;
}

// ---- 4.4 the Post-LN block ------------------------------------------------

typedef struct {
    const char *name;
    int B, T, C, NH, F;
    bool bias;
} PostFx;

static const PostFx POST_FX[] = {
    {"post", 2, 3, 8, 2, 20, true}, {"post_nobias", 1, 4, 6, 3, 12, false},
};

START_TEST(ex4_4_matches_pytorch) {
    Fixture *f = fixture_open("ch4_block.txt");
    for (size_t k = 0; k < sizeof POST_FX / sizeof *POST_FX; k++) {
        const PostFx *c = &POST_FX[k];
        const int sx[3] = {c->B, c->T, c->C};
        size_t n = (size_t)c->B * c->T * c->C;
        BlockParams p = block_params_fixture(f, c->name, c->C, c->F,
                                             c->bias);
        float *out = alloc_floats(n);
        ex_postln_block_forward(out, fx_get2(f, c->name, "x", sx, 3), &p.w,
                                c->B, c->T, c->C, c->NH, c->F);
        char what[64];
        snprintf(what, sizeof what, "%s: out vs PyTorch", c->name);
        ck_assert_close_f(what, out, fx_get2(f, c->name, "out", sx, 3), n,
                          1e-5, 1e-5);
        free(out);
        block_params_free(&p);
    }
    fixture_free(f);
}
END_TEST

START_TEST(ex4_4_causal_and_normalised) {
    // Every output row is ln_2's: (y - bias) / weight has mean 0 and
    // variance 1. Changing the last token changes no earlier output.
    enum { B = 1, T = 5, C = 6, NH = 2, F = 12 };
    BlockParams p = block_params_new(C, F, true);
    Rng rng;
    rng_seed(&rng, 130);
    rng_normal_fill(&rng, p.params, p.n, 0.0f, 0.4f);
    for (int i = 0; i < C; i++) p.w.ln_2_w[i] += 1.5f;
    float *x = randn_floats(B * T * C, 1.0f, 131), y[T * C], y2[T * C];
    ex_postln_block_forward(y, x, &p.w, B, T, C, NH, F);
    for (int t = 0; t < T; t++) {
        double m = 0, v = 0, z[C];
        for (int i = 0; i < C; i++)
            m += (z[i] = (y[t * C + i] - p.w.ln_2_b[i]) / p.w.ln_2_w[i]) / C;
        for (int i = 0; i < C; i++) v += (z[i] - m) * (z[i] - m) / C;
        ck_assert_msg(fabs(m) < 1e-5 && fabs(v - 1) < 1e-3, "token %d: "
                      "ln_2's input has mean %g and variance %g", t, m, v);
    }
    for (int i = 0; i < C; i++) x[(T - 1) * C + i] += 1.0f;
    ex_postln_block_forward(y2, x, &p.w, B, T, C, NH, F);
    for (int i = 0; i < (T - 1) * C; i++)
        ck_assert_msg(fabsf(y[i] - y2[i]) < 1e-6f, "token %d changed when "
                      "only the last one did: attention must be causal",
                      i / C);
    free(x);
    block_params_free(&p);
}
END_TEST

TCase *ex4_4_tcase(void) {
    TCase *tc = tcase_new("ex4.4", "ch4 exercises");
    tcase_add_test(tc, ex4_4_matches_pytorch);
    tcase_add_test(tc, ex4_4_causal_and_normalised);
    return tc;
}
