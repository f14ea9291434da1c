// Tests of the chapter 3 exercises. Expected values come from hand
// computation, the definitions evaluated in double inside the test (and
// their finite differences), and the PyTorch fixtures of
// tests/reference/gen_ch2.py and gen_ch3.py, never from the reference
// solutions or the chapter's version of the same function.
//
// The wrong versions each exercise's tests are meant to catch (each was
// tried as a change of the reference solution, graded with `make check
// EXERCISES=<that copy>`, and scored below full marks):
//   3.1  slope 1 at the kink (x >= 0); dinp assigned instead of added, or
//        zeroed where x <= 0; the slope read from dout's sign; dout * x
//        added instead of dout. Equivalent, so not caught: a forward pass
//        that gives -0 instead of +0 (x >= 0 ? x : 0 turns -0 into -0;
//        the two zeros compare equal and act alike).
//   3.2  the tanh approximation; erf(x) without the 1/sqrt(2); the
//        derivative without x phi(x), or with - x phi(x); phi without
//        1/sqrt(2 pi), or with exp(-x^2); dinp assigned instead of added;
//        dout left out. Not wrong, and passing: Phi as (1 + erff(x /
//        sqrt 2)) / 2 in float (within the contract's tolerance; gelu(-10)
//        becomes 0 instead of -7.6e-23).
//   3.3  dinp from weight read transposed, or from inp; dweight written
//        transposed; dbias, dweight or dinp assigned instead of added;
//        dbias the mean over the rows; a NULL dbias or dinp written to
//        (a crash).
//   3.4  SiLU's derivative replaced by sigmoid(g) or sigmoid'(g); dup
//        without g (sigmoid(g) instead of SiLU(g)), or dgate without up;
//        dx's up path through w_gate; SiLU on up instead of gate; a GLU
//        (sigmoid(gate) * up); gate and up swapped in the cache; dw_down
//        from SiLU(gate) without up; the weight gradients assigned instead
//        of added; up and gate swapped in the backward pass.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch3_exercises.h"
#include "ch3_util.h"
#include "linear.h"

// ---- 3.1 ReLU -------------------------------------------------------------

static const float RELU_X[8] = {-3.0f, -1e-20f, -0.0f, 0.0f, 1e-20f, 0.5f,
                                2.0f, 1e30f};

START_TEST(ex3_1_forward) {
    const float want[8] = {0, 0, 0, 0, 1e-20f, 0.5f, 2.0f, 1e30f};
    float y[8];
    memset(y, 0xff, sizeof y);                     // NaN garbage
    ex_relu_forward(y, RELU_X, 8);
    for (int i = 0; i < 8; i++)
        ck_assert_msg(y[i] == want[i], "relu(%g) = %g, want %g",
                      (double)RELU_X[i], (double)y[i], (double)want[i]);
    // a longer random vector: max(0, x) element by element
    float *x = randn_floats(100, 1.0f, 51), out[100];
    ex_relu_forward(out, x, 100);
    for (int i = 0; i < 100; i++)
        ck_assert_float_eq(out[i], x[i] > 0 ? x[i] : 0.0f);
    free(x);
}
END_TEST

START_TEST(ex3_1_backward) {
    // dinp starts at 1: the answer is added. Slope 1 where x > 0, 0 where
    // x <= 0, including the kink x = 0 itself.
    const float dy[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    float dx[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    ex_relu_backward(dx, dy, RELU_X, 8);
    const float want[8] = {1, 1, 1, 1, 6, 7, 8, 9};
    for (int i = 0; i < 8; i++)
        ck_assert_msg(dx[i] == want[i], "x = %g: dinp = %g, want 1 + %g",
                      (double)RELU_X[i], (double)dx[i],
                      (double)(want[i] - 1));
    float *x = randn_floats(64, 1.0f, 52), *d = randn_floats(64, 1.0f, 53);
    float acc[64];
    for (int i = 0; i < 64; i++) acc[i] = -0.5f;
    ex_relu_backward(acc, d, x, 64);
    ex_relu_backward(acc, d, x, 64);               // twice: 2 * dout
    for (int i = 0; i < 64; i++)
        ck_assert_float_eq_tol(acc[i], x[i] > 0 ? -0.5f + 2 * d[i] : -0.5f,
                               1e-6f);
    free(x);
    free(d);
}
END_TEST

TCase *ex3_1_tcase(void) {
    TCase *tc = tcase_new("ex3.1", "ch3 exercises");
    tcase_add_test(tc, ex3_1_forward);
    tcase_add_test(tc, ex3_1_backward);
    return tc;
}

// ---- 3.2 GELU -------------------------------------------------------------

// The definition, in double: x Phi(x).
static double gelu_def(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }

START_TEST(ex3_2_known_values) {
    // Phi(1) = 0.841344746068543; gelu(-10) = -10 Phi(-10), tiny but not 0
    const float x[6] = {0.0f, 1.0f, -1.0f, 3.0f, 10.0f, -10.0f};
    const double want[6] = {0, 0.841344746068543, -0.158655253931457,
                            2.99595030590511, 10, -7.61985302416059e-23};
    float y[6];
    ex_gelu_forward(y, x, 6);
    ck_assert_close("gelu", y, want, 6, 1e-7, 1e-5);
    float d = 0;
    const float one = 1;
    ex_gelu_backward(&d, &one, x, 1);               // gelu'(0) = 1/2
    ck_assert_float_eq_tol(d, 0.5f, 1e-6f);
}
END_TEST

START_TEST(ex3_2_matches_pytorch) {
    Fixture *f = fixture_open("ch3_gelu.txt");
    size_t n;
    Error err;
    const float *x = fixture_find(f, "x", NULL, 0, &n, &err);
    ck_assert_msg(x != NULL, "%s", err.msg);
    int shape[1] = {(int)n};
    float *y = alloc_floats(n), *dx = alloc_floats(n);
    float *w = randn_floats(n, 1.0f, 54);
    ex_gelu_forward(y, x, n);
    ck_assert_close_f("gelu(x) vs F.gelu", y, fixture_get(f, "exact.y",
                      shape, 1), n, 1e-6, 1e-5);
    // dinp starts at 1 and gets dout * gelu'(x) added
    const float *dy = fixture_get(f, "exact.dy", shape, 1);
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++) {
        dx[i] = 1.0f;
        want[i] = 1.0 + (double)w[i] * dy[i];
    }
    ex_gelu_backward(dx, w, x, n);
    ck_assert_close("1 + dout * gelu'(x)", dx, want, n, 2e-6, 1e-5);
    free(want);
    free(y);
    free(dx);
    free(w);
    fixture_free(f);
}
END_TEST

START_TEST(ex3_2_backward_finite_differences) {
    // gelu'(x) against central differences of the definition in double
    enum { N = 61 };
    float x[N], dx[N] = {0}, ones[N];
    double want[N];
    for (int i = 0; i < N; i++) {
        x[i] = -6.0f + 0.2f * i;
        ones[i] = 1.0f;
        const double h = 1e-5;
        want[i] = (gelu_def(x[i] + h) - gelu_def(x[i] - h)) / (2 * h);
    }
    ex_gelu_backward(dx, ones, x, N);
    ck_assert_close("gelu'", dx, want, N, 2e-6, 1e-5);
}
END_TEST

TCase *ex3_2_tcase(void) {
    TCase *tc = tcase_new("ex3.2", "ch3 exercises");
    tcase_add_test(tc, ex3_2_known_values);
    tcase_add_test(tc, ex3_2_matches_pytorch);
    tcase_add_test(tc, ex3_2_backward_finite_differences);
    return tc;
}

// ---- 3.3 linear backward --------------------------------------------------

START_TEST(ex3_3_matches_pytorch) {
    // chapter 2's fixture (autograd of L = sum(out * w)); the gradients
    // start at 1, so the answer must be added to them
    Fixture *f = fixture_open("ch2_linear.txt");
    const int dims[2][3] = {{5, 7, 3}, {4, 3, 6}};    // N, C_in, C_out
    const char *names[2] = {"bias", "nobias"};
    for (int k = 0; k < 2; k++) {
        int N = dims[k][0], Ci = dims[k][1], Co = dims[k][2];
        const int sx[2] = {N, Ci}, sw[2] = {Co, Ci}, so[2] = {N, Co};
        const float *x = fx_get2(f, names[k], "x", sx, 2);
        const float *wt = fx_get2(f, names[k], "weight", sw, 2);
        const float *dout = fx_get2(f, names[k], "w", so, 2);
        struct { const char *what; const int *shape; int nd; size_t n;
                 float *got; } g[3] = {
            {"dx", sx, 2, (size_t)N * Ci, NULL},
            {"dweight", sw, 2, (size_t)Co * Ci, NULL},
            {"dbias", &Co, 1, (size_t)Co, NULL},
        };
        for (int j = 0; j < 3; j++) {
            g[j].got = alloc_floats(g[j].n);
            for (size_t e = 0; e < g[j].n; e++) g[j].got[e] = 1.0f;
        }
        ex_linear_backward(g[0].got, g[1].got, k == 0 ? g[2].got : NULL,
                           dout, x, wt, N, Ci, Co);
        for (int j = 0; j < (k == 0 ? 3 : 2); j++) {
            const float *ref = fx_get2(f, names[k], g[j].what, g[j].shape,
                                       g[j].nd);
            double *want = malloc(g[j].n * sizeof *want);
            for (size_t e = 0; e < g[j].n; e++) want[e] = 1.0 + ref[e];
            char what[64];
            snprintf(what, sizeof what, "%s: 1 + %s", names[k], g[j].what);
            ck_assert_close(what, g[j].got, want, g[j].n, 1e-5, 1e-5);
            free(want);
        }
        for (int j = 0; j < 3; j++) free(g[j].got);
    }
    fixture_free(f);
}
END_TEST

// linear_loss (ch2_util.h) runs chapter 2's linear_forward, a different
// function from the one under test: L = sum(out * w).
START_TEST(ex3_3_finite_differences) {
    const int dims[4][3] = {{1, 1, 1}, {3, 5, 2}, {4, 6, 9}, {2, 7, 3}};
    for (int k = 0; k < 4; k++) {
        int N = dims[k][0], Ci = dims[k][1], Co = dims[k][2];
        LinearCtx c = {randn_floats((size_t)N * Ci, 1.0f, 60 + k),
                       randn_floats((size_t)Co * Ci, 0.5f, 64 + k),
                       randn_floats((size_t)Co, 0.5f, 68 + k),
                       alloc_floats((size_t)N * Co),
                       randn_floats((size_t)N * Co, 1.0f, 72 + k), N, Ci,
                       Co};
        float *dx = alloc_floats((size_t)N * Ci);
        float *dw = alloc_floats((size_t)Co * Ci), *db = alloc_floats(Co);
        ex_linear_backward(dx, dw, db, c.w, c.x, c.wt, N, Ci, Co);
        ck_assert_grad("dinp", linear_loss, &c, c.x, dx, (size_t)N * Ci,
                       1e-2, 1e-4, 2e-3);
        ck_assert_grad("dweight", linear_loss, &c, c.wt, dw, (size_t)Co * Ci,
                       1e-2, 1e-4, 2e-3);
        ck_assert_grad("dbias", linear_loss, &c, c.b, db, (size_t)Co, 1e-2,
                       1e-4, 2e-3);
        free(c.x);
        free(c.wt);
        free(c.b);
        free(c.out);
        free((float *)c.w);
        free(dx);
        free(dw);
        free(db);
    }
}
END_TEST

START_TEST(ex3_3_null_and_accumulate) {
    // N=2, C_in=2, C_out=1 by hand: dout = (1, 2), inp = ((1, 2), (3, 4)),
    // weight = (5, 6): dW = 1*(1,2) + 2*(3,4) = (7, 10), db = 3,
    // dinp = ((5, 6), (10, 12))
    const float dout[2] = {1, 2}, x[4] = {1, 2, 3, 4}, wt[2] = {5, 6};
    float dw[2] = {0, 0}, db = 0, dx[4] = {0, 0, 0, 0};
    ex_linear_backward(NULL, dw, NULL, dout, x, wt, 2, 2, 1);
    ck_assert_float_eq(dw[0], 7.0f);
    ck_assert_float_eq(dw[1], 10.0f);
    ex_linear_backward(dx, dw, &db, dout, x, wt, 2, 2, 1);
    ck_assert_float_eq(dw[0], 14.0f);                // added, not stored
    ck_assert_float_eq(dw[1], 20.0f);
    ck_assert_float_eq(db, 3.0f);
    const float want[4] = {5, 6, 10, 12};
    for (int i = 0; i < 4; i++) ck_assert_float_eq(dx[i], want[i]);
}
END_TEST

TCase *ex3_3_tcase(void) {
    TCase *tc = tcase_new("ex3.3", "ch3 exercises");
    tcase_add_test(tc, ex3_3_matches_pytorch);
    tcase_add_test(tc, ex3_3_finite_differences);
    tcase_add_test(tc, ex3_3_null_and_accumulate);
    return tc;
}

// ---- 3.4 SwiGLU -----------------------------------------------------------

// A fixture case without biases or dropout, its rows flattened to N = B*T.
typedef struct {
    Fixture *f;
    const char *name;
    int N, C, H;
    float *x, *wg, *wu, *wd;     // copies: the finite differences nudge them
    const float *w;              // dL/dout
} Swi;

static Swi swi_open(const char *name, int B, int T, int C, int H) {
    Swi s = {fixture_open("ch3_swiglu.txt"), name, B * T, C, H, NULL, NULL,
             NULL, NULL, NULL};
    const int sx[3] = {B, T, C}, sh[2] = {H, C}, sd[2] = {C, H};
    char key[64];
#define COPY(what, shape, nd) (snprintf(key, sizeof key, "%s.%s", name, \
                               what), fx_copy(s.f, key, shape, nd))
    s.x = COPY("x", sx, 3);
    s.wg = COPY("w_gate", sh, 2);
    s.wu = COPY("w_up", sh, 2);
    s.wd = COPY("w_down", sd, 2);
#undef COPY
    s.w = fx_get2(s.f, name, "w", sx, 3);
    return s;
}

static void swi_close(Swi *s) {
    free(s->x);
    free(s->wg);
    free(s->wu);
    free(s->wd);
    fixture_free(s->f);
}

// The definition in double: the loss sum(out * w) of SwiGLU at s's values.
static double swi_def_loss(void *ctx) {
    const Swi *s = ctx;
    int N = s->N, C = s->C, H = s->H;
    double loss = 0;
    double *act = malloc((size_t)H * sizeof *act);
    for (int n = 0; n < N; n++) {
        const float *x = s->x + (size_t)n * C;
        for (int j = 0; j < H; j++) {
            double g = 0, u = 0;
            for (int i = 0; i < C; i++) {
                g += (double)x[i] * s->wg[(size_t)j * C + i];
                u += (double)x[i] * s->wu[(size_t)j * C + i];
            }
            act[j] = g / (1 + exp(-g)) * u;
        }
        for (int o = 0; o < C; o++) {
            double y = 0;
            for (int j = 0; j < H; j++) y += act[j] * s->wd[(size_t)o * H + j];
            loss += y * s->w[(size_t)n * C + o];
        }
    }
    free(act);
    return loss;
}

static const struct { const char *name; int B, T, C, H; } SWI[2] = {
    {"small", 2, 3, 8, 21}, {"one", 1, 1, 3, 2},
};

START_TEST(ex3_4_forward_matches_pytorch) {
    for (int k = 0; k < 2; k++) {
        Swi s = swi_open(SWI[k].name, SWI[k].B, SWI[k].T, SWI[k].C,
                         SWI[k].H);
        int N = s.N, C = s.C, H = s.H;
        float *out = alloc_floats((size_t)N * C);
        float *g = alloc_floats((size_t)N * H), *u = alloc_floats((size_t)N
                                                                 * H);
        ex_swiglu_forward(out, g, u, s.x, s.wg, s.wu, s.wd, N, C, H);
        const int sx[3] = {SWI[k].B, SWI[k].T, C};
        ck_assert_close_f(s.name, out, fx_get2(s.f, s.name, "out", sx, 3),
                          (size_t)N * C, 1e-5, 1e-5);
        // the cache: gate = x @ w_gate^T, up = x @ w_up^T, by definition
        for (int n = 0; n < N; n++)
            for (int j = 0; j < H; j++) {
                double gw = 0, uw = 0;
                for (int i = 0; i < C; i++) {
                    gw += (double)s.x[n * C + i] * s.wg[j * C + i];
                    uw += (double)s.x[n * C + i] * s.wu[j * C + i];
                }
                ck_assert_msg(fabs(g[n * H + j] - gw) <= 1e-5 * (1 +
                              fabs(gw)) && fabs(u[n * H + j] - uw) <= 1e-5 *
                              (1 + fabs(uw)), "%s: gate or up of row %d, "
                              "unit %d is not x @ w^T", s.name, n, j);
            }
        free(out);
        free(g);
        free(u);
        swi_close(&s);
    }
}
END_TEST

// Gate and up by the definition (so the backward tests do not depend on
// the student's forward pass).
static void swi_cache(const Swi *s, float *g, float *u) {
    for (int n = 0; n < s->N; n++)
        for (int j = 0; j < s->H; j++) {
            double gw = 0, uw = 0;
            for (int i = 0; i < s->C; i++) {
                gw += (double)s->x[n * s->C + i] * s->wg[j * s->C + i];
                uw += (double)s->x[n * s->C + i] * s->wu[j * s->C + i];
            }
            g[n * s->H + j] = (float)gw;
            u[n * s->H + j] = (float)uw;
        }
}

START_TEST(ex3_4_backward_matches_pytorch) {
    for (int k = 0; k < 2; k++) {
        Swi s = swi_open(SWI[k].name, SWI[k].B, SWI[k].T, SWI[k].C,
                         SWI[k].H);
        int N = s.N, C = s.C, H = s.H;
        float *g = alloc_floats((size_t)N * H), *u = alloc_floats((size_t)N
                                                                 * H);
        swi_cache(&s, g, u);
        const int sx[3] = {SWI[k].B, SWI[k].T, C}, sh[2] = {H, C};
        const int sd[2] = {C, H};
        struct { const char *what; const int *shape; int nd; size_t n;
                 float *got; } d[4] = {
            {"dx", sx, 3, (size_t)N * C, NULL},
            {"dw_gate", sh, 2, (size_t)H * C, NULL},
            {"dw_up", sh, 2, (size_t)H * C, NULL},
            {"dw_down", sd, 2, (size_t)C * H, NULL},
        };
        for (int j = 0; j < 4; j++) {                 // start at 0.5
            d[j].got = alloc_floats(d[j].n);
            for (size_t e = 0; e < d[j].n; e++) d[j].got[e] = 0.5f;
        }
        ex_swiglu_backward(d[0].got, d[1].got, d[2].got, d[3].got, s.w, g, u,
                           s.x, s.wg, s.wu, s.wd, N, C, H);
        for (int j = 0; j < 4; j++) {
            const float *ref = fx_get2(s.f, s.name, d[j].what, d[j].shape,
                                       d[j].nd);
            double *want = malloc(d[j].n * sizeof *want);
            for (size_t e = 0; e < d[j].n; e++) want[e] = 0.5 + ref[e];
            char what[64];
            snprintf(what, sizeof what, "%s: 0.5 + %s", s.name, d[j].what);
            ck_assert_close(what, d[j].got, want, d[j].n, 1e-5, 1e-4);
            free(want);
            free(d[j].got);
        }
        free(g);
        free(u);
        swi_close(&s);
    }
}
END_TEST

START_TEST(ex3_4_backward_finite_differences) {
    // every gradient against central differences of the definition, in
    // double all through: a small step, no rounding to speak of
    Swi s = swi_open("small", 2, 3, 8, 21);
    int N = s.N, C = s.C, H = s.H;
    float *g = alloc_floats((size_t)N * H), *u = alloc_floats((size_t)N * H);
    swi_cache(&s, g, u);
    float *dx = alloc_floats((size_t)N * C);
    float *dwg = alloc_floats((size_t)H * C), *dwu = alloc_floats((size_t)H
                                                                 * C);
    float *dwd = alloc_floats((size_t)C * H);
    ex_swiglu_backward(dx, dwg, dwu, dwd, s.w, g, u, s.x, s.wg, s.wu, s.wd,
                       N, C, H);
    ck_assert_grad("dx", swi_def_loss, &s, s.x, dx, (size_t)N * C, 1e-3,
                   1e-4, 2e-3);
    ck_assert_grad("dw_gate", swi_def_loss, &s, s.wg, dwg, (size_t)H * C,
                   1e-3, 1e-4, 2e-3);
    ck_assert_grad("dw_up", swi_def_loss, &s, s.wu, dwu, (size_t)H * C, 1e-3,
                   1e-4, 2e-3);
    ck_assert_grad("dw_down", swi_def_loss, &s, s.wd, dwd, (size_t)C * H,
                   1e-3, 1e-4, 2e-3);
    free(g);
    free(u);
    free(dx);
    free(dwg);
    free(dwu);
    free(dwd);
    swi_close(&s);
}
END_TEST

TCase *ex3_4_tcase(void) {
    TCase *tc = tcase_new("ex3.4", "ch3 exercises");
    tcase_add_test(tc, ex3_4_forward_matches_pytorch);
    tcase_add_test(tc, ex3_4_backward_matches_pytorch);
    tcase_add_test(tc, ex3_4_backward_finite_differences);
    return tc;
}
