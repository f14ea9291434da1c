// Tests of chapter 3's own code: ReLU, GELU, dropout, the position-wise
// feed-forward network and SwiGLU. Expected values come from hand
// computation, the rule that dropout.h states, the PyTorch fixtures of
// tests/reference/gen_ch3.py, and central finite differences (every
// backward pass), never from the code under test.
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activation.h"
#include "ch3_util.h"
#include "dropout.h"
#include "ffn.h"
#include "swiglu.h"

// Finite differences as in chapter 2 (float32 forward passes, the loss
// summed in double), with a smaller step: the central difference is off by
// eps^2 L'''/6, and through c_fc the third derivative brings in x^3 times
// GELU''', up to about 10 here, which at eps = 1e-2 uses up the whole
// tolerance. At 5e-3 the worst case uses 40% of it, float rounding less,
// and a gradient that is 1% off fails by a factor of 4 or more (checked by
// scaling each one by 1.01).
#define GC_EPS 5e-3
#define GC_ATOL 1e-4
#define GC_RTOL 2e-3

// ---- ReLU -----------------------------------------------------------------

START_TEST(relu_known_values) {
    const float x[6] = {-2.0f, -0.0f, 0.0f, 1e-30f, 0.5f, 3.0f};
    const float want[6] = {0, 0, 0, 1e-30f, 0.5f, 3.0f};
    float y[6], dx[6] = {1, 1, 1, 1, 1, 1};
    relu_forward(y, x, 6);
    ck_assert_mem_eq(y, want, sizeof y);
    const float dy[6] = {10, 20, 30, 40, 50, 60};
    relu_backward(dx, dy, x, 6);            // += dy where x > 0: not at 0
    const float dwant[6] = {1, 1, 1, 41, 51, 61};
    ck_assert_mem_eq(dx, dwant, sizeof dx);
    relu_forward(y, y, 6);                  // in place is allowed
    ck_assert_mem_eq(y, want, sizeof y);
}
END_TEST

typedef struct {
    float *x, *y;
    const float *w;
    size_t n;
    Activation kind;
    bool gelu;        // false: ReLU
} ActCtx;

static double act_loss(void *p) {
    ActCtx *c = p;
    if (c->gelu) gelu_forward(c->y, c->x, c->kind, c->n);
    else relu_forward(c->y, c->x, c->n);
    return weighted_sum(c->y, c->w, c->n);
}

static void act_gradcheck(bool gelu, Activation kind, size_t n, uint64_t s) {
    ActCtx c = {gelu ? randn_floats(n, 2.0f, s)
                     : randn_away_from_zero(n, 0.05f, s),
                alloc_floats(n), randn_floats(n, 1.0f, s + 1), n, kind,
                gelu};
    float *dx = alloc_floats(n);
    for (size_t i = 0; i < n; i++) dx[i] = 0.25f;       // it accumulates
    if (gelu) gelu_backward(dx, c.w, c.x, kind, n);
    else relu_backward(dx, c.w, c.x, n);
    for (size_t i = 0; i < n; i++) dx[i] -= 0.25f;
    ck_assert_grad(gelu ? activation_name(kind) : "relu", act_loss, &c, c.x,
                   dx, n, GC_EPS, GC_ATOL, GC_RTOL);
    free(c.x);
    free(c.y);
    free((float *)c.w);
    free(dx);
}

START_TEST(relu_backward_finite_differences) {
    const size_t sizes[3] = {1, 7, 33};
    for (int i = 0; i < 3; i++) act_gradcheck(false, GELU_EXACT, sizes[i],
                                              10 + i);
}
END_TEST

// ---- GELU -----------------------------------------------------------------

START_TEST(gelu_known_values) {
    // x Phi(x): Phi(0) = 1/2, Phi(1) = 0.841344746068543, Phi(-1) = 1 -
    // Phi(1); gelu'(0) = Phi(0) + 0 = 1/2 in both forms. Far out on the
    // left only the absolute error is small (gelu(-10) is 2% off).
    const float x[5] = {0.0f, 1.0f, -1.0f, 10.0f, -10.0f};
    const double want[5] = {0, 0.841344746068543, -0.158655253931457, 10,
                            -7.61985302416059e-23};
    float y[5];
    gelu_forward(y, x, GELU_EXACT, 5);
    ck_assert_close("gelu exact", y, want, 5, 1e-7, 2e-6);
    // tanh form at 1: 0.5 (1 + tanh(sqrt(2/pi) * 1.044715)) = 0.84119...
    const double tanh1 = 0.8411919906082768;
    gelu_forward(y, x, GELU_TANH, 2);
    const double want_t[2] = {0, tanh1};
    ck_assert_close("gelu tanh", y, want_t, 2, 1e-7, 2e-6);
    float dx[2] = {0, 0};
    const float dy[2] = {1, 1};
    for (int k = 0; k < 2; k++) {
        dx[0] = 0;
        gelu_backward(dx, dy, x, k == 0 ? GELU_EXACT : GELU_TANH, 1);
        ck_assert_float_eq_tol(dx[0], 0.5f, 1e-7f);
    }
}
END_TEST

START_TEST(gelu_matches_pytorch) {
    Fixture *f = fixture_open("ch3_gelu.txt");
    size_t n;
    Error err;
    const float *x = fixture_find(f, "x", NULL, 0, &n, &err);
    ck_assert_msg(x != NULL, "%s", err.msg);
    int shape[1] = {(int)n};
    float *y = alloc_floats(n), *dx = alloc_floats(n), *ones = alloc_floats(n);
    for (size_t i = 0; i < n; i++) ones[i] = 1.0f;
    for (int k = 0; k < 2; k++) {
        Activation kind = k == 0 ? GELU_EXACT : GELU_TANH;
        const char *name = activation_name(kind);
        gelu_forward(y, x, kind, n);
        ck_assert_close_f(name, y, fx_get2(f, name, "y", shape, 1), n, 1e-6,
                          1e-5);
        memset(dx, 0, n * sizeof *dx);
        gelu_backward(dx, ones, x, kind, n);
        ck_assert_close_f(name, dx, fx_get2(f, name, "dy", shape, 1), n,
                          1e-6, 1e-5);
    }
    free(y);
    free(dx);
    free(ones);
    fixture_free(f);
}
END_TEST

START_TEST(gelu_backward_finite_differences) {
    const size_t sizes[3] = {1, 5, 40};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 3; i++)
            act_gradcheck(true, k == 0 ? GELU_EXACT : GELU_TANH, sizes[i],
                          20 + 3 * k + i);
}
END_TEST

// ---- dropout --------------------------------------------------------------

START_TEST(dropout_p0_is_the_identity) {
    enum { N = 37 };
    float *x = randn_floats(N, 1.0f, 31), y[N], mask[N];
    Rng rng, fresh;
    rng_seed(&rng, 5);
    rng_seed(&fresh, 5);
    Error err;
    ck_assert_int_eq(dropout_forward(y, mask, x, 0.0f, &rng, N, &err), 0);
    ck_assert_mem_eq(y, x, sizeof y);
    for (int i = 0; i < N; i++) ck_assert_float_eq(mask[i], 1.0f);
    ck_assert_uint_eq(rng_u32(&rng), rng_u32(&fresh));  // nothing drawn
    ck_assert_int_eq(dropout_forward(y, mask, x, 0.0f, NULL, N, &err), 0);
    float dx[N] = {0};
    dropout_backward(dx, x, mask, N);
    ck_assert_mem_eq(dx, x, sizeof dx);
    free(x);
}
END_TEST

START_TEST(dropout_follows_its_rule) {
    // dropout.h: one rng_uniform per element, in order; dropped when u < p;
    // kept elements scaled by 1 / (1 - p).
    enum { N = 1000 };
    const float p = 0.3f, scale = 1.0f / (1.0f - p);
    float *x = randn_floats(N, 1.0f, 32), *y = alloc_floats(N);
    float *mask = alloc_floats(N);
    Rng rng, ref;
    rng_seed(&rng, 77);
    rng_seed(&ref, 77);
    ck_assert_int_eq(dropout_forward(y, mask, x, p, &rng, N, NULL), 0);
    for (int i = 0; i < N; i++) {
        bool dropped = rng_uniform(&ref) < p;
        ck_assert_msg(mask[i] == (dropped ? 0.0f : scale), "mask[%d] = %g, "
                      "want %g", i, (double)mask[i], dropped ? 0.0 : scale);
        ck_assert_float_eq(y[i], x[i] * mask[i]);
    }
    ck_assert_uint_eq(rng_u32(&rng), rng_u32(&ref));    // exactly N draws
    // in place gives the same
    rng_seed(&rng, 77);
    ck_assert_int_eq(dropout_forward(x, mask, x, p, &rng, N, NULL), 0);
    ck_assert_mem_eq(x, y, N * sizeof *x);
    free(x);
    free(y);
    free(mask);
}
END_TEST

START_TEST(dropout_statistics) {
    // Over 200000 elements the fraction dropped is p to within 0.005 (about
    // 5 standard deviations at p = 0.5), and the mean is kept.
    enum { N = 200000 };
    float *x = randn_floats(N, 0.5f, 33), *y = alloc_floats(N);
    float *mask = alloc_floats(N);
    double mean_x = 0;
    for (int i = 0; i < N; i++) mean_x += (x[i] += 1.0f);
    mean_x /= N;
    const float ps[3] = {0.1f, 0.5f, 0.9f};
    Rng rng;
    rng_seed(&rng, 34);
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(dropout_forward(y, mask, x, ps[k], &rng, N, NULL),
                         0);
        double zeros = 0, mean_y = 0;
        for (int i = 0; i < N; i++) {
            zeros += mask[i] == 0.0f;
            mean_y += y[i];
        }
        zeros /= N;
        mean_y /= N;
        ck_assert_msg(fabs(zeros - ps[k]) < 0.005, "p = %g: %.4f dropped",
                      (double)ps[k], zeros);
        ck_assert_msg(fabs(mean_y - mean_x) < 0.03, "p = %g: mean %.4f, "
                      "input's %.4f", (double)ps[k], mean_y, mean_x);
    }
    free(x);
    free(y);
    free(mask);
}
END_TEST

typedef struct {
    float *x, *y, *mask;
    const float *w;
    float p;
    size_t n;
} DropCtx;

static double dropout_loss(void *ctx) {
    DropCtx *c = ctx;
    Rng rng;
    rng_seed(&rng, 99);           // the same mask at every evaluation
    ck_assert_int_eq(dropout_forward(c->y, c->mask, c->x, c->p, &rng, c->n,
                                     NULL), 0);
    return weighted_sum(c->y, c->w, c->n);
}

START_TEST(dropout_backward_uses_the_mask) {
    enum { N = 50 };
    DropCtx c = {randn_floats(N, 1.0f, 35), alloc_floats(N), alloc_floats(N),
                 randn_floats(N, 1.0f, 36), 0.4f, N};
    float dx[N];
    for (int i = 0; i < N; i++) dx[i] = 1.0f;
    dropout_loss(&c);
    dropout_backward(dx, c.w, c.mask, N);
    int dropped = 0;
    for (int i = 0; i < N; i++) {
        if (c.mask[i] == 0.0f) {            // no gradient at all
            ck_assert_float_eq(dx[i], 1.0f);
            dropped++;
        } else {
            ck_assert_float_eq_tol(dx[i], 1.0f + c.w[i] / 0.6f, 1e-5f);
        }
        dx[i] -= 1.0f;
    }
    ck_assert_int_gt(dropped, 5);
    ck_assert_grad("dropout dx", dropout_loss, &c, c.x, dx, N, GC_EPS,
                   GC_ATOL, GC_RTOL);
    free(c.x);
    free(c.y);
    free(c.mask);
    free((float *)c.w);
}
END_TEST

START_TEST(dropout_bad_p) {
    float x[2] = {1, 2}, y[2], mask[2];
    Rng rng;
    rng_seed(&rng, 1);
    Error err;
    const float bad[4] = {-0.1f, 1.0f, 1.5f, NAN};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(dropout_forward(y, mask, x, bad[i], &rng, 2, &err),
                         -1);
    ck_assert_str_eq(err.msg, "dropout: p must be in [0, 1), got nan");
    ck_assert_int_eq(dropout_forward(y, mask, x, 1.0f, &rng, 2, &err), -1);
    ck_assert_str_eq(err.msg, "dropout: p must be in [0, 1), got 1");
    ck_assert_int_eq(dropout_forward(y, mask, x, 0.5f, NULL, 2, &err), -1);
    ck_assert_str_eq(err.msg, "dropout: p = 0.5 needs a random number "
                     "generator, got none");
}
END_TEST

// ---- the feed-forward network ---------------------------------------------

typedef struct {
    const char *name;
    int B, T, C, F;
    bool bias;
    Activation act;
    float p;          // dropout
    uint64_t seed;    // of the dropout mask
} FfnCase;

// The fixture's cases (p and seed are read from it).
static const FfnCase FFN_CASES[] = {
    {"small", 2, 3, 8, 32, true, GELU_EXACT, 0, 0},
    {"tanh", 1, 4, 6, 10, false, GELU_TANH, 0, 0},
    {"one", 1, 1, 5, 7, true, GELU_EXACT, 0, 0},
    {"dropout", 2, 4, 6, 24, true, GELU_EXACT, 0, 0},
};
#define N_FFN_CASES (int)(sizeof FFN_CASES / sizeof FFN_CASES[0])

typedef struct {
    FfnCase c;
    float *x, *wfc, *bfc, *wproj, *bproj, *out, *w;
    float *mask, *dy;  // dropout on out, as a block applies it; dL/d(out
                       // before dropout)
    FfnCache cache;
} FfnProblem;

static void ffn_alloc(FfnProblem *p) {
    const FfnCase *c = &p->c;
    Error err;
    ck_assert_msg(ffn_cache_alloc(&p->cache, c->B, c->T, c->C, c->F, &err)
                  == 0, "%s", err.msg);
    size_t btc = (size_t)c->B * c->T * c->C;
    p->out = alloc_floats(btc);
    p->mask = alloc_floats(btc);
    p->dy = alloc_floats(btc);
}

static FfnProblem ffn_from_fixture(const Fixture *f, const FfnCase *c) {
    FfnProblem p = {.c = *c};
    const int sx[3] = {c->B, c->T, c->C}, sfc[2] = {c->F, c->C};
    const int sproj[2] = {c->C, c->F};
    char key[64];
#define COPY(what, shape, nd) (snprintf(key, sizeof key, "%s.%s", c->name, \
                               what), fx_copy(f, key, shape, nd))
    p.x = COPY("x", sx, 3);
    p.w = COPY("w", sx, 3);
    p.wfc = COPY("c_fc.weight", sfc, 2);
    p.wproj = COPY("c_proj.weight", sproj, 2);
    if (c->bias) {
        p.bfc = COPY("c_fc.bias", &c->F, 1);
        p.bproj = COPY("c_proj.bias", &c->C, 1);
    }
#undef COPY
    snprintf(key, sizeof key, "%s.p", c->name);
    const float *prob = fixture_find(f, key, NULL, 0, NULL, NULL);
    if (prob) {
        p.c.p = *prob;
        p.c.seed = (uint64_t)*fx_get2(f, c->name, "seed", NULL, 0);
    }
    ffn_alloc(&p);
    return p;
}

static FfnProblem ffn_random(const FfnCase *c, uint64_t seed) {
    FfnProblem p = {.c = *c};
    size_t C = (size_t)c->C, F = (size_t)c->F, btc = (size_t)c->B * c->T * C;
    p.x = randn_floats(btc, 1.0f, seed);
    p.w = randn_floats(btc, 1.0f, seed + 1);
    p.wfc = randn_floats(F * C, 1.0f / sqrtf((float)C), seed + 2);
    p.wproj = randn_floats(C * F, 1.0f / sqrtf((float)F), seed + 3);
    if (c->bias) {
        p.bfc = randn_floats(F, 0.1f, seed + 4);
        p.bproj = randn_floats(C, 0.1f, seed + 5);
    }
    ffn_alloc(&p);
    return p;
}

static void ffn_free(FfnProblem *p) {
    free(p->x);
    free(p->wfc);
    free(p->bfc);
    free(p->wproj);
    free(p->bproj);
    free(p->out);
    free(p->w);
    free(p->mask);
    free(p->dy);
    ffn_cache_free(&p->cache);
}

// L = sum(dropout(out) * w), dropout as the block applies it after the
// FFN; the generator is seeded afresh, so every evaluation draws the same
// dropout mask.
static double ffn_loss(void *ctx) {
    FfnProblem *p = ctx;
    const FfnCase *c = &p->c;
    size_t n = (size_t)c->B * c->T * c->C;
    Rng rng;
    rng_seed(&rng, c->seed);
    Error err;
    ck_assert_msg(ffn_forward(p->out, &p->cache, p->x, p->wfc, p->bfc,
                              p->wproj, p->bproj, c->act, c->B, c->T, c->C,
                              c->F, &err) == 0
                  && dropout_forward(p->out, p->mask, p->out, c->p, &rng, n,
                                     &err) == 0, "%s", err.msg);
    return weighted_sum(p->out, p->w, n);
}

typedef struct {
    float *mem, *dx, *dwfc, *dbfc, *dwproj, *dbproj;
} FfnGrads;

static FfnGrads ffn_grads(FfnProblem *p, int times) {
    const FfnCase *c = &p->c;
    size_t C = (size_t)c->C, F = (size_t)c->F, btc = (size_t)c->B * c->T * C;
    FfnGrads g;
    g.mem = alloc_floats(btc + 2 * F * C + F + C);
    g.dx = g.mem;
    g.dwfc = g.dx + btc;
    g.dwproj = g.dwfc + F * C;
    g.dbfc = g.dwproj + C * F;
    g.dbproj = g.dbfc + F;
    FfnScratch s;
    Error err;
    ck_assert_int_eq(ffn_scratch_alloc(&s, c->B, c->T, c->C, c->F, &err),
                     0);
    ffn_loss(p);
    memset(p->dy, 0, btc * sizeof *p->dy);
    dropout_backward(p->dy, p->w, p->mask, btc);
    for (int i = 0; i < times; i++)
        ffn_backward(g.dx, g.dwfc, c->bias ? g.dbfc : NULL, g.dwproj,
                     c->bias ? g.dbproj : NULL, &s, p->dy, &p->cache, p->x,
                     p->wfc, p->wproj, c->B, c->T, c->C, c->F);
    ffn_scratch_free(&s);
    return g;
}

START_TEST(ffn_matches_pytorch) {
    Fixture *f = fixture_open("ch3_ffn.txt");
    for (int i = 0; i < N_FFN_CASES; i++) {
        FfnProblem p = ffn_from_fixture(f, &FFN_CASES[i]);
        const FfnCase *c = &p.c;
        ffn_loss(&p);
        const int sx[3] = {c->B, c->T, c->C};
        size_t n = (size_t)c->B * c->T * c->C;
        char what[64];
        snprintf(what, sizeof what, "%s.out", c->name);
        ck_assert_close_f(what, p.out, fx_get2(f, c->name, "out", sx, 3), n,
                          1e-5, 1e-5);
        if (c->p > 0) {           // the mask of dropout.h's rule
            const float *keep = fx_get2(f, c->name, "mask", sx, 3);
            for (size_t j = 0; j < n; j++)
                ck_assert_msg((p.mask[j] != 0) == (keep[j] != 0),
                              "%s: dropout mask differs at %zu", c->name, j);
        }
        ffn_free(&p);
    }
    fixture_free(f);
}
END_TEST

START_TEST(ffn_backward_matches_pytorch) {
    Fixture *f = fixture_open("ch3_ffn.txt");
    for (int i = 0; i < N_FFN_CASES; i++) {
        FfnProblem p = ffn_from_fixture(f, &FFN_CASES[i]);
        const FfnCase *c = &p.c;
        FfnGrads g = ffn_grads(&p, 1);
        int C = c->C, F = c->F;
        const int sx[3] = {c->B, c->T, C}, sfc[2] = {F, C}, sp[2] = {C, F};
        struct { const char *what; const float *got; const int *shape;
                 int nd; size_t n; } checks[] = {
            {"dx", g.dx, sx, 3, (size_t)c->B * c->T * C},
            {"dc_fc.weight", g.dwfc, sfc, 2, (size_t)F * C},
            {"dc_proj.weight", g.dwproj, sp, 2, (size_t)C * F},
            {"dc_fc.bias", g.dbfc, &c->F, 1, (size_t)F},
            {"dc_proj.bias", g.dbproj, &c->C, 1, (size_t)C},
        };
        for (int j = 0; j < (c->bias ? 5 : 3); j++) {
            char what[64];
            snprintf(what, sizeof what, "%s.%s", c->name, checks[j].what);
            ck_assert_close_f(what, checks[j].got, fx_get2(f, c->name,
                              checks[j].what, checks[j].shape, checks[j].nd),
                              checks[j].n, 1e-5, 1e-4);
        }
        free(g.mem);
        ffn_free(&p);
    }
    fixture_free(f);
}
END_TEST

START_TEST(ffn_backward_finite_differences) {
    // odd shapes: one token, C not a power of two, F not 4C, dropout on
    const FfnCase cases[] = {
        {"a", 1, 1, 3, 5, true, GELU_EXACT, 0, 0},
        {"b", 2, 3, 6, 10, false, GELU_TANH, 0, 0},
        {"c", 2, 2, 5, 20, true, GELU_EXACT, 0.3f, 4},
        {"d", 1, 3, 7, 9, true, GELU_TANH, 0.5f, 8},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const FfnCase *c = &cases[i];
        FfnProblem p = ffn_random(c, 200 + 10 * i);
        FfnGrads g = ffn_grads(&p, 1);
        size_t C = (size_t)c->C, F = (size_t)c->F;
        ck_assert_grad("ffn dinp", ffn_loss, &p, p.x, g.dx,
                       (size_t)c->B * c->T * C, GC_EPS, GC_ATOL, GC_RTOL);
        ck_assert_grad("ffn dc_fc_w", ffn_loss, &p, p.wfc, g.dwfc, F * C,
                       GC_EPS, GC_ATOL, GC_RTOL);
        ck_assert_grad("ffn dc_proj_w", ffn_loss, &p, p.wproj, g.dwproj,
                       C * F, GC_EPS, GC_ATOL, GC_RTOL);
        if (c->bias) {
            ck_assert_grad("ffn dc_fc_b", ffn_loss, &p, p.bfc, g.dbfc, F,
                           GC_EPS, GC_ATOL, GC_RTOL);
            ck_assert_grad("ffn dc_proj_b", ffn_loss, &p, p.bproj, g.dbproj,
                           C, GC_EPS, GC_ATOL, GC_RTOL);
        }
        free(g.mem);
        ffn_free(&p);
    }
}
END_TEST

START_TEST(ffn_backward_accumulates) {
    // Two backward passes give twice the gradients of one (so the
    // scratch is cleared between them).
    FfnCase c = {"acc", 2, 3, 6, 10, true, GELU_EXACT, 0.2f, 3};
    FfnProblem p = ffn_random(&c, 17);
    FfnGrads one = ffn_grads(&p, 1), two = ffn_grads(&p, 2);
    size_t n = 2 * 3 * 6 + 2 * 60 + 10 + 6;
    for (size_t i = 0; i < n; i++)
        ck_assert_float_eq_tol(two.mem[i], 2 * one.mem[i],
                               1e-6f * (1 + fabsf(one.mem[i])));
    // dinp may be NULL (the first layer of a model needs no dinp)
    FfnScratch s;
    ck_assert_int_eq(ffn_scratch_alloc(&s, 2, 3, 6, 10, NULL), 0);
    float *dw = alloc_floats(60 + 60);
    ffn_backward(NULL, dw, NULL, dw + 60, NULL, &s, p.dy, &p.cache, p.x,
                 p.wfc, p.wproj, 2, 3, 6, 10);
    ck_assert_mem_eq(dw, one.dwfc, 120 * sizeof *dw);
    free(dw);
    ffn_scratch_free(&s);
    free(one.mem);
    free(two.mem);
    ffn_free(&p);
}
END_TEST

START_TEST(ffn_is_position_wise) {
    // Changing one token's input changes that token's output only, to the
    // last bit: no token sees another.
    FfnCase c = {"pos", 2, 4, 6, 24, true, GELU_EXACT, 0, 0};
    FfnProblem p = ffn_random(&c, 23);
    size_t n = 2 * 4 * 6;
    float *before = alloc_floats(n);
    ffn_loss(&p);
    memcpy(before, p.out, n * sizeof *before);
    for (int i = 0; i < 6; i++) p.x[5 * 6 + i] += 1.0f;       // token (1,1)
    ffn_loss(&p);
    for (size_t t = 0; t < 8; t++) {
        int same = memcmp(before + t * 6, p.out + t * 6, 6 * sizeof(float))
                   == 0;
        ck_assert_msg(same == (t != 5), "token %zu: output %s", t,
                      same ? "did not change" : "changed");
    }
    free(before);
    ffn_free(&p);
}
END_TEST

START_TEST(ffn_smaller_batch_matches_full) {
    FfnCase c = {"sub", 2, 5, 8, 12, true, GELU_EXACT, 0, 0};
    FfnProblem p = ffn_random(&c, 29);
    ffn_loss(&p);
    float part[3 * 8];
    Error err;
    ck_assert_int_eq(ffn_forward(part, &p.cache, p.x, p.wfc, p.bfc, p.wproj,
                                 p.bproj, GELU_EXACT, 1, 3, 8, 12, &err),
                     0);
    ck_assert_close_f("first tokens", part, p.out, 3 * 8, 1e-6, 1e-6);
    ffn_free(&p);
}
END_TEST

START_TEST(ffn_bad_sizes) {
    FfnCache cache;
    FfnScratch scratch;
    Error err;
    ck_assert_int_eq(ffn_cache_alloc(&cache, 2, 4, 6, 0, &err), -1);
    ck_assert_str_eq(err.msg, "feed-forward network: every size must be at "
                     "least 1, got B=2 T=4 C=6 F=0");
    ck_assert_int_eq(ffn_scratch_alloc(&scratch, 0, 4, 6, 24, &err), -1);
    ck_assert_int_eq(ffn_cache_alloc(&cache, 1, 4, -8, 32, &err), -1);
    ck_assert_int_eq(ffn_cache_alloc(&cache, 1 << 16, 1 << 10, 64, 256,
                                     &err), -1);
    ck_assert_msg(strstr(err.msg, "too large") != NULL, "%s", err.msg);
    ffn_cache_free(&cache);                        // zeroed: a no-op
    ffn_scratch_free(&scratch);

    FfnCase c = {"fit", 2, 4, 6, 10, false, GELU_EXACT, 0, 0};
    FfnProblem p = ffn_random(&c, 9);
    float *big = alloc_floats(4 * 8 * 10);
    ck_assert_int_eq(ffn_forward(big, &p.cache, big, p.wfc, NULL, p.wproj,
                                 NULL, GELU_EXACT, 2, 8, 6, 10, &err), -1);
    ck_assert_str_eq(err.msg, "feed-forward network: the cache cannot "
                     "hold B=2 T=8 C=6 F=10: it holds B*T=8 tokens of at "
                     "most T=4, C=6 F=10");
    ck_assert_int_eq(ffn_forward(big, &p.cache, big, p.wfc, NULL, p.wproj,
                                 NULL, GELU_EXACT, 2, 4, 6, 24, &err), -1);
    ck_assert_int_eq(ffn_forward(big, &p.cache, big, p.wfc, NULL, p.wproj,
                                 NULL, GELU_EXACT, 2, 0, 6, 10, &err), -1);
    ck_assert_msg(strstr(err.msg, "at least 1") != NULL, "%s", err.msg);
    free(big);
    ffn_free(&p);
}
END_TEST

START_TEST(ffn_parameter_counts) {
    // the course notes' config: C = 128, F = 4C = 512, bias False
    ck_assert_uint_eq(ffn_param_count(128, 512, false), 131072);
    ck_assert_uint_eq(ffn_param_count(128, 512, true), 131072 + 512 + 128);
    ck_assert_uint_eq(ffn_param_count(6, 10, true), 60 + 60 + 10 + 6);
}
END_TEST

// ---- SwiGLU ---------------------------------------------------------------

typedef struct {
    const char *name;
    int B, T, C, H;
    bool bias;
    float p;
    uint64_t seed;
} SwiCase;

static const SwiCase SWI_CASES[] = {
    {"small", 2, 3, 8, 21, false, 0, 0},
    {"bias", 1, 3, 6, 4, true, 0, 0},
    {"one", 1, 1, 3, 2, false, 0, 0},
};
#define N_SWI_CASES (int)(sizeof SWI_CASES / sizeof SWI_CASES[0])

typedef struct {
    SwiCase c;
    float *x, *prm[6], *out, *w, *mask, *dy;   // as FfnProblem; prm:
                                     // w_gate, b_gate, w_up, b_up,
    SwigluCache cache;               //      w_down, b_down
} SwiProblem;

static const char *const SWI_NAMES[6] = {"w_gate", "b_gate", "w_up", "b_up",
                                         "w_down", "b_down"};

static size_t swi_size(const SwiCase *c, int j, int shape[2]) {
    shape[0] = j == 4 || j == 5 ? c->C : c->H;
    shape[1] = j == 4 ? c->H : c->C;
    return j % 2 ? (size_t)shape[0] : (size_t)shape[0] * shape[1];
}

static void swi_alloc(SwiProblem *p) {
    const SwiCase *c = &p->c;
    Error err;
    ck_assert_msg(swiglu_cache_alloc(&p->cache, c->B, c->T, c->C, c->H,
                                     &err) == 0, "%s", err.msg);
    size_t btc = (size_t)c->B * c->T * c->C;
    p->out = alloc_floats(btc);
    p->mask = alloc_floats(btc);
    p->dy = alloc_floats(btc);
}

static SwiProblem swi_from_fixture(const Fixture *f, const SwiCase *c) {
    SwiProblem p = {.c = *c};
    const int sx[3] = {c->B, c->T, c->C};
    char key[64];
    snprintf(key, sizeof key, "%s.x", c->name);
    p.x = fx_copy(f, key, sx, 3);
    snprintf(key, sizeof key, "%s.w", c->name);
    p.w = fx_copy(f, key, sx, 3);
    for (int j = 0; j < 6; j++) {
        if (j % 2 && !c->bias) continue;
        int shape[2];
        swi_size(c, j, shape);
        snprintf(key, sizeof key, "%s.%s", c->name, SWI_NAMES[j]);
        p.prm[j] = fx_copy(f, key, shape, j % 2 ? 1 : 2);
    }
    snprintf(key, sizeof key, "%s.p", c->name);
    const float *prob = fixture_find(f, key, NULL, 0, NULL, NULL);
    if (prob) {
        p.c.p = *prob;
        p.c.seed = (uint64_t)*fx_get2(f, c->name, "seed", NULL, 0);
    }
    swi_alloc(&p);
    return p;
}

static SwiProblem swi_random(const SwiCase *c, uint64_t seed) {
    SwiProblem p = {.c = *c};
    size_t btc = (size_t)c->B * c->T * c->C;
    p.x = randn_floats(btc, 1.0f, seed);
    p.w = randn_floats(btc, 1.0f, seed + 1);
    for (int j = 0; j < 6; j++) {
        if (j % 2 && !c->bias) continue;
        int shape[2];
        size_t n = swi_size(c, j, shape);
        float std = j % 2 ? 0.1f : 1.0f / sqrtf((float)shape[1]);
        p.prm[j] = randn_floats(n, std, seed + 2 + j);
    }
    swi_alloc(&p);
    return p;
}

static void swi_free(SwiProblem *p) {
    free(p->x);
    for (int j = 0; j < 6; j++) free(p->prm[j]);
    free(p->out);
    free(p->w);
    free(p->mask);
    free(p->dy);
    swiglu_cache_free(&p->cache);
}

static double swi_loss(void *ctx) {
    SwiProblem *p = ctx;
    const SwiCase *c = &p->c;
    size_t n = (size_t)c->B * c->T * c->C;
    Rng rng;
    rng_seed(&rng, c->seed);
    Error err;
    ck_assert_msg(swiglu_forward(p->out, &p->cache, p->x, p->prm[0],
                                 p->prm[1], p->prm[2], p->prm[3], p->prm[4],
                                 p->prm[5], c->B, c->T, c->C, c->H, &err)
                  == 0
                  && dropout_forward(p->out, p->mask, p->out, c->p, &rng, n,
                                     &err) == 0, "%s", err.msg);
    return weighted_sum(p->out, p->w, n);
}

// Gradients: dx, then one per parameter (NULL where there is none).
typedef struct {
    float *dx, *d[6];
} SwiGrads;

static SwiGrads swi_grads(SwiProblem *p) {
    const SwiCase *c = &p->c;
    SwiGrads g = {alloc_floats((size_t)c->B * c->T * c->C), {0}};
    for (int j = 0; j < 6; j++) {
        int shape[2];
        if (p->prm[j]) g.d[j] = alloc_floats(swi_size(c, j, shape));
    }
    SwigluScratch s;
    ck_assert_int_eq(swiglu_scratch_alloc(&s, c->B, c->T, c->C, c->H, NULL),
                     0);
    swi_loss(p);
    size_t btc = (size_t)c->B * c->T * c->C;
    memset(p->dy, 0, btc * sizeof *p->dy);
    dropout_backward(p->dy, p->w, p->mask, btc);
    swiglu_backward(g.dx, g.d[0], g.d[1], g.d[2], g.d[3], g.d[4], g.d[5], &s,
                    p->dy, &p->cache, p->x, p->prm[0], p->prm[2], p->prm[4],
                    c->B, c->T, c->C, c->H);
    swiglu_scratch_free(&s);
    return g;
}

static void swi_grads_free(SwiGrads *g) {
    free(g->dx);
    for (int j = 0; j < 6; j++) free(g->d[j]);
}

START_TEST(swiglu_matches_pytorch) {
    Fixture *f = fixture_open("ch3_swiglu.txt");
    for (int i = 0; i < N_SWI_CASES; i++) {
        SwiProblem p = swi_from_fixture(f, &SWI_CASES[i]);
        const SwiCase *c = &p.c;
        const int sx[3] = {c->B, c->T, c->C};
        size_t n = (size_t)c->B * c->T * c->C;
        SwiGrads g = swi_grads(&p);
        char what[64];
        snprintf(what, sizeof what, "%s.out", c->name);
        ck_assert_close_f(what, p.out, fx_get2(f, c->name, "out", sx, 3), n,
                          1e-5, 1e-5);
        snprintf(what, sizeof what, "%s.dx", c->name);
        ck_assert_close_f(what, g.dx, fx_get2(f, c->name, "dx", sx, 3), n,
                          1e-5, 1e-4);
        for (int j = 0; j < 6; j++) {
            if (!g.d[j]) continue;
            int shape[2];
            size_t m = swi_size(c, j, shape);
            char key[32];
            snprintf(key, sizeof key, "d%s", SWI_NAMES[j]);
            snprintf(what, sizeof what, "%s.%s", c->name, key);
            ck_assert_close_f(what, g.d[j], fx_get2(f, c->name, key, shape,
                              j % 2 ? 1 : 2), m, 1e-5, 1e-4);
        }
        swi_grads_free(&g);
        swi_free(&p);
    }
    fixture_free(f);
}
END_TEST

START_TEST(swiglu_backward_finite_differences) {
    const SwiCase cases[] = {
        {"a", 1, 1, 3, 2, true, 0, 0},
        {"b", 2, 3, 6, 4, false, 0, 0},
        {"c", 2, 2, 5, 7, true, 0.3f, 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const SwiCase *c = &cases[i];
        SwiProblem p = swi_random(c, 300 + 10 * i);
        SwiGrads g = swi_grads(&p);
        ck_assert_grad("swiglu dinp", swi_loss, &p, p.x, g.dx,
                       (size_t)c->B * c->T * c->C, GC_EPS, GC_ATOL, GC_RTOL);
        for (int j = 0; j < 6; j++) {
            if (!g.d[j]) continue;
            int shape[2];
            ck_assert_grad(SWI_NAMES[j], swi_loss, &p, p.prm[j], g.d[j],
                           swi_size(c, j, shape), GC_EPS, GC_ATOL, GC_RTOL);
        }
        swi_grads_free(&g);
        swi_free(&p);
    }
}
END_TEST

START_TEST(swiglu_sizes) {
    // hidden = int(2 * d_ff / 3): 341 for 512; three (H, C)-sized matrices
    ck_assert_int_eq(swiglu_hidden(512), 341);
    ck_assert_int_eq(swiglu_hidden(32), 21);
    ck_assert_int_eq(swiglu_hidden(1), 0);
    ck_assert_uint_eq(swiglu_param_count(128, 341, false), 130944);
    ck_assert_uint_eq(swiglu_param_count(6, 4, true), 72 + 8 + 6);
    SwigluCache c;
    Error err;
    ck_assert_int_eq(swiglu_cache_alloc(&c, 1, 2, 3, swiglu_hidden(1), &err),
                     -1);
    ck_assert_str_eq(err.msg, "SwiGLU: every size must be at least 1, got "
                     "B=1 T=2 C=3 H=0");
    SwiCase sc = {"fit", 1, 2, 3, 2, false, 0, 0};
    SwiProblem p = swi_random(&sc, 41);
    ck_assert_int_eq(swiglu_forward(p.out, &p.cache, p.x, p.prm[0], NULL,
                                    p.prm[2], NULL, p.prm[4], NULL, 2, 2, 3,
                                    2, &err), -1);
    ck_assert_str_eq(err.msg, "SwiGLU: the cache cannot hold B=2 T=2 C=3 "
                     "H=2: it holds B*T=2 tokens of at most T=2, C=3 H=2");
    swi_free(&p);
}
END_TEST

Suite *ch3_suite(void) {
    Suite *s = suite_create("ch3");
    TCase *tc = tcase_new("activations", "ch3");
    tcase_add_test(tc, relu_known_values);
    tcase_add_test(tc, relu_backward_finite_differences);
    tcase_add_test(tc, gelu_known_values);
    tcase_add_test(tc, gelu_matches_pytorch);
    tcase_add_test(tc, gelu_backward_finite_differences);
    suite_add_tcase(s, tc);
    tc = tcase_new("dropout", "ch3");
    tcase_add_test(tc, dropout_p0_is_the_identity);
    tcase_add_test(tc, dropout_follows_its_rule);
    tcase_add_test(tc, dropout_statistics);
    tcase_add_test(tc, dropout_backward_uses_the_mask);
    tcase_add_test(tc, dropout_bad_p);
    suite_add_tcase(s, tc);
    tc = tcase_new("ffn", "ch3");
    tcase_add_test(tc, ffn_matches_pytorch);
    tcase_add_test(tc, ffn_backward_matches_pytorch);
    tcase_add_test(tc, ffn_backward_finite_differences);
    tcase_add_test(tc, ffn_backward_accumulates);
    tcase_add_test(tc, ffn_is_position_wise);
    tcase_add_test(tc, ffn_smaller_batch_matches_full);
    tcase_add_test(tc, ffn_bad_sizes);
    tcase_add_test(tc, ffn_parameter_counts);
    suite_add_tcase(s, tc);
    tc = tcase_new("swiglu", "ch3");
    tcase_add_test(tc, swiglu_matches_pytorch);
    tcase_add_test(tc, swiglu_backward_finite_differences);
    tcase_add_test(tc, swiglu_sizes);
    suite_add_tcase(s, tc);
    return s;
}
