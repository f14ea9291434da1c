// Tests of chapter 2's own code: softmax, the linear layer, attention with
// its masks, head split/merge and multi-head attention. Expected values
// come from hand computation, the PyTorch fixtures of
// tests/reference/gen_ch2.py, and central finite differences (every
// backward pass), never from the code under test.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "ch2_util.h"
#include "fastexp.h"
#include "linear.h"
#include "mha.h"

// Finite differences: float32 forward passes, the loss summed in double.
// eps 1e-2 balances the rounding of the forward pass (which grows as eps
// shrinks) against the truncation error of the central difference (which
// grows as eps^2); with these tolerances a gradient that is 1% off fails.
#define GC_EPS 1e-2
#define GC_ATOL 1e-4
#define GC_RTOL 2e-3

// ---- softmax --------------------------------------------------------------

START_TEST(softmax_known_values) {
    // softmax(1, 2, 3) = e^i / (e + e^2 + e^3); the second and third rows
    // overflow a naive exp (e^1000 is inf in float) or underflow it to 0/0
    const float x[3][3] = {{1, 2, 3}, {1000, 1001, 1002}, {-1000, -1001,
                                                            -1002}};
    const double e1 = 0.0900305731703805, e2 = 0.2447284710547976,
                 e3 = 0.6652409557748219;
    const double want[3][3] = {{e1, e2, e3}, {e1, e2, e3}, {e3, e2, e1}};
    float y[3][3];
    softmax_forward(&y[0][0], &x[0][0], 3, 3);
    ck_assert_close("softmax", &y[0][0], &want[0][0], 9, 1e-7, 1e-6);
    softmax_forward(&y[0][0], &y[0][0], 3, 3);        // in place is allowed
    const float one = 42.0f;
    float p;
    softmax_forward(&p, &one, 1, 1);                  // a single logit
    ck_assert_float_eq(p, 1.0f);
    const float two[2] = {1000.0f, 1001.0f};          // 1/(1+e), e/(1+e)
    const double want2[2] = {0.2689414213699951, 0.7310585786300049};
    float y2[2];
    softmax_forward(y2, two, 1, 2);
    ck_assert_close("softmax(1000, 1001)", y2, want2, 2, 1e-7, 1e-6);
}
END_TEST

typedef struct {
    float *x, *y;
    const float *w;
    int N, D;
} SoftmaxCtx;

static double softmax_loss(void *p) {
    SoftmaxCtx *c = p;
    softmax_forward(c->y, c->x, c->N, c->D);
    return weighted_sum(c->y, c->w, (size_t)c->N * c->D);
}

START_TEST(softmax_backward_finite_differences) {
    const int shapes[3][2] = {{3, 5}, {1, 1}, {2, 7}};
    for (int i = 0; i < 3; i++) {
        int N = shapes[i][0], D = shapes[i][1];
        size_t n = (size_t)N * D;
        SoftmaxCtx c = {randn_floats(n, 2.0f, 1 + i), alloc_floats(n),
                        randn_floats(n, 1.0f, 11 + i), N, D};
        float *dx = alloc_floats(n);
        softmax_loss(&c);
        for (size_t j = 0; j < n; j++) dx[j] = 0.5f;  // it accumulates
        softmax_backward(dx, c.w, c.y, N, D);
        for (size_t j = 0; j < n; j++) dx[j] -= 0.5f;
        ck_assert_grad("softmax dx", softmax_loss, &c, c.x, dx, n, GC_EPS,
                       GC_ATOL, GC_RTOL);
        free(c.x);
        free(c.y);
        free((float *)c.w);
        free(dx);
    }
}
END_TEST

// ---- linear ---------------------------------------------------------------

START_TEST(linear_matches_pytorch) {
    Fixture *f = fixture_open("ch2_linear.txt");
    const int dims[2][3] = {{5, 7, 3}, {4, 3, 6}};    // N, C_in, C_out
    const char *names[2] = {"bias", "nobias"};
    for (int i = 0; i < 2; i++) {
        int N = dims[i][0], Ci = dims[i][1], Co = dims[i][2];
        const int sx[2] = {N, Ci}, sw[2] = {Co, Ci}, so[2] = {N, Co};
        char key[64];
#define GET(what, shape, nd) (snprintf(key, sizeof key, "%s.%s", names[i], \
                              what), fixture_get(f, key, shape, nd))
        const float *x = GET("x", sx, 2), *w = GET("weight", sw, 2);
        const float *b = i == 0 ? GET("bias", &Co, 1) : NULL;
        float *out = alloc_floats((size_t)N * Co);
        linear_forward(out, x, w, b, N, Ci, Co);
        ck_assert_close_f("linear out", out, GET("out", so, 2),
                          (size_t)N * Co, 1e-5, 1e-5);
        // the backward pass, called twice: gradients accumulate
        float *dx = alloc_floats((size_t)N * Ci);
        float *dw = alloc_floats((size_t)Co * Ci), *db = alloc_floats(Co);
        const float *dout = GET("w", so, 2);
        for (int rep = 0; rep < 2; rep++)
            linear_backward(dx, dw, b ? db : NULL, dout, x, w, N, Ci, Co);
        for (int j = 0; j < N * Ci; j++) dx[j] /= 2;
        for (int j = 0; j < Co * Ci; j++) dw[j] /= 2;
        for (int j = 0; j < Co; j++) db[j] /= 2;
        ck_assert_close_f("linear dx", dx, GET("dx", sx, 2),
                          (size_t)N * Ci, 1e-5, 1e-5);
        ck_assert_close_f("linear dweight", dw, GET("dweight", sw, 2),
                          (size_t)Co * Ci, 1e-5, 1e-5);
        if (b) ck_assert_close_f("linear dbias", db, GET("dbias", &Co, 1),
                                 (size_t)Co, 1e-5, 1e-5);
#undef GET
        free(out);
        free(dx);
        free(dw);
        free(db);
    }
    fixture_free(f);
}
END_TEST

START_TEST(linear_backward_finite_differences) {
    const int dims[3][3] = {{3, 5, 2}, {1, 1, 1}, {4, 6, 9}};
    for (int i = 0; i < 3; i++) {
        int N = dims[i][0], Ci = dims[i][1], Co = dims[i][2];
        LinearCtx c = {randn_floats((size_t)N * Ci, 1.0f, 3 + i),
                       randn_floats((size_t)Co * Ci, 0.5f, 5 + i),
                       randn_floats((size_t)Co, 0.5f, 7 + i),
                       alloc_floats((size_t)N * Co),
                       randn_floats((size_t)N * Co, 1.0f, 9 + i), N, Ci, Co};
        float *dx = alloc_floats((size_t)N * Ci);
        float *dw = alloc_floats((size_t)Co * Ci), *db = alloc_floats(Co);
        linear_backward(dx, dw, db, c.w, c.x, c.wt, N, Ci, Co);
        ck_assert_grad("linear dinp", linear_loss, &c, c.x, dx,
                       (size_t)N * Ci, GC_EPS, GC_ATOL, GC_RTOL);
        ck_assert_grad("linear dweight", linear_loss, &c, c.wt, dw,
                       (size_t)Co * Ci, GC_EPS, GC_ATOL, GC_RTOL);
        ck_assert_grad("linear dbias", linear_loss, &c, c.b, db, (size_t)Co,
                       GC_EPS, GC_ATOL, GC_RTOL);
        // dinp and dbias may be NULL; dweight is the same without them
        float *dw2 = alloc_floats((size_t)Co * Ci);
        linear_backward(NULL, dw2, NULL, c.w, c.x, c.wt, N, Ci, Co);
        ck_assert_mem_eq(dw, dw2, (size_t)Co * Ci * sizeof *dw);
        free(c.x);
        free(c.wt);
        free(c.b);
        free(c.out);
        free((float *)c.w);
        free(dx);
        free(dw);
        free(dw2);
        free(db);
    }
}
END_TEST

START_TEST(linear_zero_sizes) {
    const float bias[3] = {1, 2, 3}, dout[6] = {1, 2, 3, 4, 5, 6};
    float out[6] = {-1, -1, -1, -1, -1, -1}, db[3] = {0, 0, 0};
    float untouched[6] = {-1, -1, -1, -1, -1, -1};
    linear_forward(out, NULL, NULL, bias, 0, 4, 3);       // no rows
    ck_assert_mem_eq(out, untouched, sizeof out);
    linear_forward(out, NULL, NULL, bias, 2, 0, 3);       // no inputs: bias
    const float want[6] = {1, 2, 3, 1, 2, 3};
    ck_assert_mem_eq(out, want, sizeof out);
    linear_forward(out, NULL, NULL, NULL, 2, 0, 3);       // ... or zeros
    for (int i = 0; i < 6; i++) ck_assert_float_eq(out[i], 0.0f);
    linear_backward(NULL, NULL, db, dout, NULL, NULL, 2, 0, 3);
    ck_assert_float_eq(db[0], 5.0f);
    ck_assert_float_eq(db[2], 9.0f);
    linear_forward(NULL, NULL, NULL, NULL, 2, 4, 0);      // no outputs
    linear_backward(NULL, NULL, NULL, NULL, NULL, NULL, 2, 4, 0);
}
END_TEST

// ---- attention ------------------------------------------------------------

typedef struct {
    const char *name;
    int B, NH, Tq, Tk, HS;
    bool causal, masked;
} AttCase;

static const AttCase ATT_CASES[] = {
    {"causal", 2, 2, 5, 5, 3, true, false},
    {"padded", 2, 2, 4, 4, 4, true, true},
    {"encoder", 2, 1, 3, 3, 2, false, true},
    {"cross", 1, 2, 3, 5, 2, false, true},
    {"tail", 1, 1, 2, 6, 4, true, false},
};
#define N_ATT_CASES (int)(sizeof ATT_CASES / sizeof ATT_CASES[0])

// One attention problem with its buffers, from a fixture or random.
typedef struct {
    AttCase c;
    float *q, *k, *v, *out, *att, *w;
    int *mask;
} AttProblem;

static size_t att_sizes(const AttCase *c, size_t *nq, size_t *nk,
                        size_t *na) {
    *nq = (size_t)c->B * c->NH * c->Tq * c->HS;
    *nk = (size_t)c->B * c->NH * c->Tk * c->HS;
    *na = (size_t)c->B * c->NH * c->Tq * c->Tk;
    return *nq;
}

static AttProblem att_from_fixture(const Fixture *f, const AttCase *c) {
    AttProblem p = {.c = *c};
    const int sq[4] = {c->B, c->NH, c->Tq, c->HS};
    const int sk[4] = {c->B, c->NH, c->Tk, c->HS};
    size_t nq, nk, na;
    att_sizes(c, &nq, &nk, &na);
    char key[64];
    snprintf(key, sizeof key, "%s.q", c->name);
    p.q = fx_copy(f, key, sq, 4);
    snprintf(key, sizeof key, "%s.k", c->name);
    p.k = fx_copy(f, key, sk, 4);
    snprintf(key, sizeof key, "%s.v", c->name);
    p.v = fx_copy(f, key, sk, 4);
    snprintf(key, sizeof key, "%s.w", c->name);
    p.w = fx_copy(f, key, sq, 4);
    snprintf(key, sizeof key, "%s.key_mask", c->name);
    p.mask = c->masked ? fx_mask(f, key, c->B, c->Tk) : NULL;
    p.out = alloc_floats(nq);
    p.att = alloc_floats(na);
    return p;
}

static void att_free(AttProblem *p) {
    free(p->q);
    free(p->k);
    free(p->v);
    free(p->out);
    free(p->att);
    free(p->w);
    free(p->mask);
}

static double att_loss(void *ctx) {
    AttProblem *p = ctx;
    const AttCase *c = &p->c;
    ck_assert_int_eq(attention_forward(p->out, p->att, p->q, p->k, p->v,
                                       p->mask, c->causal, c->B, c->NH,
                                       c->Tq, c->Tk, c->HS, NULL), 0);
    size_t nq, nk, na;
    return weighted_sum(p->out, p->w, att_sizes(c, &nq, &nk, &na));
}

// dq, dk, dv of L = sum(out * w) (one fresh backward pass).
static void att_grads(AttProblem *p, float *dq, float *dk, float *dv) {
    const AttCase *c = &p->c;
    size_t nq, nk, na;
    att_sizes(c, &nq, &nk, &na);
    float *datt = alloc_floats(na);
    att_loss(p);
    attention_backward(dq, dk, dv, datt, p->w, p->att, p->q, p->k, p->v,
                       c->B, c->NH, c->Tq, c->Tk, c->HS);
    free(datt);
}

START_TEST(attention_matches_pytorch) {
    Fixture *f = fixture_open("ch2_attention.txt");
    for (int i = 0; i < N_ATT_CASES; i++) {
        const AttCase *c = &ATT_CASES[i];
        AttProblem p = att_from_fixture(f, c);
        size_t nq, nk, na;
        att_sizes(c, &nq, &nk, &na);
        att_loss(&p);
        char key[64];
        const int sq[4] = {c->B, c->NH, c->Tq, c->HS};
        const int sa[4] = {c->B, c->NH, c->Tq, c->Tk};
        snprintf(key, sizeof key, "%s.out", c->name);
        ck_assert_close_f(key, p.out, fixture_get(f, key, sq, 4), nq, 1e-5,
                          1e-5);
        snprintf(key, sizeof key, "%s.att", c->name);
        ck_assert_close_f(key, p.att, fixture_get(f, key, sa, 4), na, 1e-6,
                          1e-5);
        att_free(&p);
    }
    fixture_free(f);
}
END_TEST

START_TEST(attention_backward_matches_pytorch) {
    Fixture *f = fixture_open("ch2_attention.txt");
    for (int i = 0; i < N_ATT_CASES; i++) {
        const AttCase *c = &ATT_CASES[i];
        AttProblem p = att_from_fixture(f, c);
        size_t nq, nk, na;
        att_sizes(c, &nq, &nk, &na);
        float *dq = alloc_floats(nq), *dk = alloc_floats(nk);
        float *dv = alloc_floats(nk);
        att_grads(&p, dq, dk, dv);
        const int sq[4] = {c->B, c->NH, c->Tq, c->HS};
        const int sk[4] = {c->B, c->NH, c->Tk, c->HS};
        char key[64];
        snprintf(key, sizeof key, "%s.dq", c->name);
        ck_assert_close_f(key, dq, fixture_get(f, key, sq, 4), nq, 1e-5,
                          1e-4);
        snprintf(key, sizeof key, "%s.dk", c->name);
        ck_assert_close_f(key, dk, fixture_get(f, key, sk, 4), nk, 1e-5,
                          1e-4);
        snprintf(key, sizeof key, "%s.dv", c->name);
        ck_assert_close_f(key, dv, fixture_get(f, key, sk, 4), nk, 1e-5,
                          1e-4);
        free(dq);
        free(dk);
        free(dv);
        att_free(&p);
    }
    fixture_free(f);
}
END_TEST

START_TEST(attention_backward_finite_differences) {
    // odd shapes: one query, one key, head size 1, Tq != Tk, masks with a
    // fully hidden row
    static const int mask_a[2 * 4] = {1, 1, 0, 1, 0, 1, 1, 1};
    static const int mask_b[1 * 5] = {0, 0, 0, 0, 0};
    struct { AttCase c; const int *mask; } cases[] = {
        {{"a", 2, 2, 4, 4, 3, true, true}, mask_a},
        {{"b", 1, 1, 1, 1, 1, true, false}, NULL},
        {{"c", 1, 3, 3, 5, 2, false, false}, NULL},
        {{"d", 1, 1, 3, 5, 2, true, false}, NULL},
        {{"e", 1, 1, 2, 5, 3, false, true}, mask_b},
        {{"f", 2, 1, 4, 2, 5, true, false}, NULL},       // Tq > Tk
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const AttCase *c = &cases[i].c;
        size_t nq, nk, na;
        att_sizes(c, &nq, &nk, &na);
        AttProblem p = {*c, randn_floats(nq, 1.0f, 20 + i),
                        randn_floats(nk, 1.0f, 30 + i),
                        randn_floats(nk, 1.0f, 40 + i), alloc_floats(nq),
                        alloc_floats(na), randn_floats(nq, 1.0f, 50 + i),
                        NULL};
        if (cases[i].mask) {
            p.mask = xmalloc((size_t)c->B * c->Tk * sizeof *p.mask);
            memcpy(p.mask, cases[i].mask, (size_t)c->B * c->Tk *
                   sizeof *p.mask);
        }
        float *dq = alloc_floats(nq), *dk = alloc_floats(nk);
        float *dv = alloc_floats(nk);
        att_grads(&p, dq, dk, dv);
        ck_assert_grad("attention dq", att_loss, &p, p.q, dq, nq, GC_EPS,
                       GC_ATOL, GC_RTOL);
        ck_assert_grad("attention dk", att_loss, &p, p.k, dk, nk, GC_EPS,
                       GC_ATOL, GC_RTOL);
        ck_assert_grad("attention dv", att_loss, &p, p.v, dv, nk, GC_EPS,
                       GC_ATOL, GC_RTOL);
        free(dq);
        free(dk);
        free(dv);
        att_free(&p);
    }
}
END_TEST

START_TEST(attention_fully_masked_rows_are_zero) {
    // Every key padding, and scores large enough to overflow a naive exp:
    // no NaN anywhere, zero weights, zero output, zero gradients.
    enum { B = 2, NH = 2, T = 3, HS = 4, N = B * NH * T * HS };
    float *q = randn_floats(N, 100.0f, 1), *k = randn_floats(N, 100.0f, 2);
    float *v = randn_floats(N, 1.0f, 3), *w = randn_floats(N, 1.0f, 4);
    const int mask[B * T] = {0, 0, 0, 1, 0, 1};     // row 0: all padding
    float out[N], att[B * NH * T * T], datt[B * NH * T * T];
    float dq[N] = {0}, dk[N] = {0}, dv[N] = {0};
    for (int causal = 0; causal < 2; causal++) {
        ck_assert_int_eq(attention_forward(out, att, q, k, v, mask, causal,
                                           B, NH, T, T, HS, NULL), 0);
        ck_assert(all_finite(out, N) && all_finite(att, sizeof att /
                                                   sizeof *att));
        for (int i = 0; i < NH * T * T; i++) ck_assert_float_eq(att[i], 0);
        for (int i = 0; i < NH * T * HS; i++) ck_assert_float_eq(out[i], 0);
        // batch row 1: key 1 is padding, so column 1 is zero everywhere,
        // and each row that sees a real key sums to 1
        for (int r = NH * T; r < B * NH * T; r++) {
            const float *row = att + (size_t)r * T;
            ck_assert_float_eq(row[1], 0.0f);
            int t = r % T;
            double sum = row[0] + row[1] + row[2];
            ck_assert_double_eq_tol(sum, 1.0, 1e-6);
            if (causal && t == 0) ck_assert_float_eq(row[2], 0.0f);
        }
        attention_backward(dq, dk, dv, datt, w, att, q, k, v, B, NH, T, T,
                           HS);
        ck_assert(all_finite(dq, N) && all_finite(dk, N)
                  && all_finite(dv, N));
        for (int i = 0; i < NH * T * HS; i++) {
            ck_assert_float_eq(dq[i], 0.0f);
            ck_assert_float_eq(dk[i], 0.0f);
            ck_assert_float_eq(dv[i], 0.0f);
        }
    }
    free(q);
    free(k);
    free(v);
    free(w);
}
END_TEST

START_TEST(attention_large_scores_keep_the_softmax) {
    // The attention's softmax is its own (fused with the masks), not
    // softmax_forward: it too must take each row's maximum out first, or
    // scores near +-1000 saturate every exp (exp_fast clamps at 88: equal
    // weights; libm's expf would give inf / inf). With a key mask, the
    // maximum is the real keys': a padded key scoring 1000 more must not
    // push the real ones' exps to 0. HS = 1, so a score is q * k, and
    // every one here is exact in float: 1000 * (1, 1 + 2^-10, 1 - 2^-10),
    // its negative, and 1000 * 2 for the padded fourth key. Expected: the
    // softmax in double of the same scores; the tolerance is float
    // rounding of weights below 1.
    enum { NH = 1, TQ = 2, HS = 1 };
    const float q[TQ] = {1000, -1000};
    const float k[4] = {1, 1 + 0x1p-10f, 1 - 0x1p-10f, 2};
    const float v[4] = {1, 2, 3, 4};
    double want[TQ][4], want_out[TQ];
    for (int i = 0; i < TQ; i++) {
        double s[3], mx = -INFINITY, sum = 0;
        for (int j = 0; j < 3; j++) s[j] = (double)q[i] * k[j];
        for (int j = 0; j < 3; j++) mx = fmax(mx, s[j]);
        for (int j = 0; j < 3; j++) sum += exp(s[j] - mx);
        want_out[i] = 0;
        for (int j = 0; j < 3; j++) {
            want[i][j] = exp(s[j] - mx) / sum;
            want_out[i] += want[i][j] * v[j];
        }
        want[i][3] = 0;
    }
    const int mask[4] = {1, 1, 1, 0};
    for (int masked = 0; masked < 2; masked++) {
        int Tk = masked ? 4 : 3;   // without the mask, no fourth key
        float out[TQ], att[TQ * 4];
        ck_assert_int_eq(attention_forward(out, att, q, k, v,
                                           masked ? mask : NULL, false, 1,
                                           NH, TQ, Tk, HS, NULL), 0);
        for (int i = 0; i < TQ; i++) {
            char what[64];
            snprintf(what, sizeof what, "%s, query %d: weights", masked
                     ? "a padded key scoring 2000" : "no mask", i);
            ck_assert_close(what, att + i * Tk, want[i], (size_t)Tk, 1e-6,
                            1e-5);
            snprintf(what, sizeof what, "%s, query %d: out", masked
                     ? "a padded key scoring 2000" : "no mask", i);
            ck_assert_close(what, out + i, &want_out[i], 1, 1e-6, 1e-5);
        }
    }
}
END_TEST

START_TEST(attention_padding_is_invisible) {
    // Changing the key and value of a padding position, by any amount,
    // changes no output; their gradients are exactly zero.
    enum { B = 2, NH = 2, T = 5, HS = 3, N = B * NH * T * HS };
    const int mask[B * T] = {1, 1, 1, 0, 0, 1, 0, 1, 1, 1};
    float *q = randn_floats(N, 1.0f, 5), *k = randn_floats(N, 1.0f, 6);
    float *v = randn_floats(N, 1.0f, 7), *w = randn_floats(N, 1.0f, 8);
    float out1[N], out2[N], att[B * NH * T * T], datt[B * NH * T * T];
    float dq[N] = {0}, dk[N] = {0}, dv[N] = {0};
    for (int causal = 0; causal < 2; causal++) {
        attention_forward(out1, att, q, k, v, mask, causal, B, NH, T, T, HS,
                          NULL);
        attention_backward(dq, dk, dv, datt, w, att, q, k, v, B, NH, T, T,
                           HS);
        for (int b = 0; b < B; b++)
            for (int h = 0; h < NH; h++)
                for (int s = 0; s < T; s++) {
                    if (mask[b * T + s]) continue;
                    float *kr = k + (((size_t)b * NH + h) * T + s) * HS;
                    float *dkr = dk + (kr - k), *dvr = dv + (kr - k);
                    for (int i = 0; i < HS; i++) {
                        ck_assert_float_eq(dkr[i], 0.0f);
                        ck_assert_float_eq(dvr[i], 0.0f);
                        kr[i] += 1e3f;
                        v[kr - k + i] = -1e6f;
                    }
                }
        attention_forward(out2, att, q, k, v, mask, causal, B, NH, T, T, HS,
                          NULL);
        ck_assert_mem_eq(out1, out2, sizeof out1);
    }
    free(q);
    free(k);
    free(v);
    free(w);
}
END_TEST

// Attention written out in double, one query at a time, with no blocks and
// no BLAS: the reference for lengths past ATT_ROWS (32), where
// attention_forward and attention_backward split the queries into blocks
// and stop each block's products at the last key it can see.
static void attention_direct(double *out, double *dq, double *dk, double *dv,
                             const float *q, const float *k, const float *v,
                             const float *w, const int *mask, bool causal,
                             int B, int NH, int Tq, int Tk, int HS) {
    double scale = 1.0 / sqrt(HS), *p = xmalloc((size_t)Tk * sizeof *p);
    double *dp = xmalloc((size_t)Tk * sizeof *dp);
    for (int z = 0; z < B * NH; z++)
        for (int t = 0; t < Tq; t++) {
            const float *qt = q + ((size_t)z * Tq + t) * HS;
            const float *wt = w + ((size_t)z * Tq + t) * HS;
            const float *kz = k + (size_t)z * Tk * HS, *vz = v + (kz - k);
            int vis = attention_causal_visible(causal, t, Tq, Tk);
            double max = -INFINITY, sum = 0, dot = 0;
            for (int s = 0; s < Tk; s++) {
                p[s] = -INFINITY;
                if (s >= vis || (mask && !mask[(z / NH) * Tk + s])) continue;
                double sc = 0;
                for (int i = 0; i < HS; i++)
                    sc += (double)qt[i] * kz[s * HS + i];
                p[s] = sc * scale;
                max = fmax(max, p[s]);
            }
            for (int s = 0; s < Tk; s++) {
                p[s] = p[s] == -INFINITY ? 0 : exp(p[s] - max);
                sum += p[s];
            }
            for (int s = 0; s < Tk; s++) {
                p[s] = sum > 0 ? p[s] / sum : 0;
                dp[s] = 0;
                for (int i = 0; i < HS; i++) {
                    out[((size_t)z * Tq + t) * HS + i] += p[s] * vz[s * HS + i];
                    dp[s] += (double)wt[i] * vz[s * HS + i];
                    dv[((size_t)z * Tk + s) * HS + i] += p[s] * wt[i];
                }
                dot += p[s] * dp[s];
            }
            for (int s = 0; s < Tk; s++) {
                double ds = p[s] * (dp[s] - dot) * scale;
                for (int i = 0; i < HS; i++) {
                    dq[((size_t)z * Tq + t) * HS + i] += ds * kz[s * HS + i];
                    dk[((size_t)z * Tk + s) * HS + i] += ds * qt[i];
                }
            }
        }
    free(p);
    free(dp);
}

START_TEST(attention_long_sequences_match_a_direct_computation) {
    enum { B = 2, NH = 2, HS = 8 };
    const int lens[][2] = {{100, 100}, {70, 100}, {100, 40}, {33, 33}};
    for (int c = 0; c < 4; c++)
        for (int variant = 0; variant < 4; variant++) {
            int Tq = lens[c][0], Tk = lens[c][1];
            bool causal = variant & 1, masked = variant & 2;
            size_t nq = (size_t)B * NH * Tq * HS;
            size_t nk = (size_t)B * NH * Tk * HS;
            float *q = randn_floats(nq, 1.5f, 10 + c);
            float *w = randn_floats(nq, 1.0f, 20 + c);
            float *k = randn_floats(nk, 1.5f, 30 + c);
            float *v = randn_floats(nk, 1.0f, 40 + c);
            int *mask = xmalloc((size_t)B * Tk * sizeof *mask);
            for (int i = 0; i < B * Tk; i++)
                mask[i] = i % 7 != 3;              // some padding
            float *out = alloc_floats(nq), *dq = alloc_floats(nq);
            float *dk = alloc_floats(nk), *dv = alloc_floats(nk);
            float *att = alloc_floats((size_t)B * NH * Tq * Tk);
            float *datt = alloc_floats((size_t)B * NH * Tq * Tk);
            double *ro = xcalloc(nq, sizeof *ro);
            double *rdq = xcalloc(nq, sizeof *rdq);
            double *rdk = xcalloc(nk, sizeof *rdk);
            double *rdv = xcalloc(nk, sizeof *rdv);
            const int *m = masked ? mask : NULL;
            ck_assert_int_eq(attention_forward(out, att, q, k, v, m, causal, B,
                                               NH, Tq, Tk, HS, NULL), 0);
            attention_backward(dq, dk, dv, datt, w, att, q, k, v, B, NH, Tq,
                               Tk, HS);
            attention_direct(ro, rdq, rdk, rdv, q, k, v, w, m, causal, B, NH,
                             Tq, Tk, HS);
            ck_assert_close("long attention out", out, ro, nq, 1e-5, 1e-4);
            ck_assert_close("long attention dq", dq, rdq, nq, 1e-5, 1e-4);
            ck_assert_close("long attention dk", dk, rdk, nk, 1e-5, 1e-4);
            ck_assert_close("long attention dv", dv, rdv, nk, 1e-5, 1e-4);
            free(q), free(w), free(k), free(v), free(mask), free(out);
            free(dq), free(dk), free(dv), free(att), free(datt);
            free(ro), free(rdq), free(rdk), free(rdv);
        }
}
END_TEST

START_TEST(attention_causal_alignment) {
    // Tq == Tk: query t sees keys 0..t. Tq < Tk (a KV cache): the queries
    // are the last Tq positions. Tq > Tk: the first queries see nothing.
    ck_assert_int_eq(attention_causal_visible(true, 0, 4, 4), 1);
    ck_assert_int_eq(attention_causal_visible(true, 3, 4, 4), 4);
    ck_assert_int_eq(attention_causal_visible(true, 0, 1, 7), 7);
    ck_assert_int_eq(attention_causal_visible(true, 0, 2, 6), 5);
    ck_assert_int_eq(attention_causal_visible(true, 0, 5, 2), 0);
    ck_assert_int_eq(attention_causal_visible(true, 4, 5, 2), 2);
    ck_assert_int_eq(attention_causal_visible(false, 0, 5, 2), 2);
    // and the weights follow it: above the shifted diagonal, exact zeros
    enum { Tq = 2, Tk = 4, HS = 2 };
    const float q[Tq * HS] = {1, 0, 0, 1}, k[Tk * HS] = {0, 0, 1, 1, 2, 0,
                                                         0, 2};
    const float v[Tk * HS] = {1, 0, 0, 1, 1, 1, 2, 2};
    float out[Tq * HS], att[Tq * Tk];
    ck_assert_int_eq(attention_forward(out, att, q, k, v, NULL, true, 1, 1,
                                       Tq, Tk, HS, NULL), 0);
    // query 0 sits at position 2: scores (0, 1, 2) / sqrt(2), key 3 hidden
    double s = 1 / sqrt(2.0), z = 1 + exp(s) + exp(2 * s);
    const double want0[Tk] = {1 / z, exp(s) / z, exp(2 * s) / z, 0};
    ck_assert_close("att row 0", att, want0, Tk, 1e-7, 1e-6);
    ck_assert_float_eq(att[3], 0.0f);
    const double wantout0[HS] = {(1 + exp(2 * s)) / z,
                                 (exp(s) + exp(2 * s)) / z};
    ck_assert_close("out row 0", out, wantout0, HS, 1e-7, 1e-6);
}
END_TEST

// The heads read where they lie: q in columns of rows of one buffer, k
// and v in columns of rows of another (a cross-attention's shape, Tq !=
// Tk, and a self-attention's), out in rows of a third, every row padded
// with guard columns. Forward and backward must give the bits of the
// packed (B, NH, T, HS) functions on split copies; the backward pass
// must write its gradients over NaN when told to set them (and never a
// guard), and add onto what is there when told to accumulate.
typedef struct {
    int B, NH, Tq, Tk, HS;
    bool causal, masked;
} StridedCase;

static float strided_guard(size_t i) { return -7000.0f - (float)(i % 97); }

START_TEST(attention_strided_reads_heads_in_place) {
    static const StridedCase cases[] = {
        {2, 3, 37, 37, 16, true, false},  // self-attention: two blocks
        {1, 2, 70, 70, 5, true, true},    // odd head size, padding keys
        {2, 2, 9, 40, 8, false, true},    // encoder-decoder: Tq != Tk
        {1, 2, 40, 5, 4, true, false},    // causal, Tq > Tk: rows see
                                          // nothing, a block with no key
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        StridedCase c = cases[ci];
        int C = c.NH * c.HS, ldq = 3 * C + 5, ldkv = 2 * C + 3, ldo = C + 2;
        size_t nq = (size_t)c.B * c.NH * c.Tq * c.HS;
        size_t nk = (size_t)c.B * c.NH * c.Tk * c.HS;
        size_t nrq = (size_t)c.B * c.Tq * ldq, nrk = (size_t)c.B * c.Tk * ldkv;
        size_t nro = (size_t)c.B * c.Tq * ldo;
        size_t na = (size_t)c.B * c.NH * c.Tq * c.Tk;
        // rows: q is the second third of qrows (as in a qkv buffer), k and
        // v the two halves of kvrows; the guard columns hold guard values
        float *qrows = randn_floats(nrq, 1.0f, 11 + ci);
        float *kvrows = randn_floats(nrk, 1.0f, 21 + ci);
        float *dorows = randn_floats(nro, 1.0f, 31 + ci);
        int *mask = malloc((size_t)c.B * c.Tk * sizeof *mask);
        for (int i = 0; i < c.B * c.Tk; i++) mask[i] = i % 5 != 3;
        const int *km = c.masked ? mask : NULL;
        const float *qr = qrows + C, *kr = kvrows, *vr = kvrows + C;
        // the packed reference, on split copies
        float *q = alloc_floats(nq), *k = alloc_floats(nk);
        float *v = alloc_floats(nk), *dout = alloc_floats(nq);
        heads_split(q, qr, ldq, c.B, c.Tq, C, c.NH);
        heads_split(k, kr, ldkv, c.B, c.Tk, C, c.NH);
        heads_split(v, vr, ldkv, c.B, c.Tk, C, c.NH);
        heads_split(dout, dorows, ldo, c.B, c.Tq, C, c.NH);
        float *out = alloc_floats(nq), *att = alloc_floats(na);
        float *datt = alloc_floats(na);
        float *dq = calloc(nq, sizeof *dq), *dk = calloc(nk, sizeof *dk);
        float *dv = calloc(nk, sizeof *dv);
        ck_assert_int_eq(attention_forward(out, att, q, k, v, km, c.causal,
                                           c.B, c.NH, c.Tq, c.Tk, c.HS,
                                           NULL), 0);
        attention_backward(dq, dk, dv, datt, dout, att, q, k, v, c.B, c.NH,
                           c.Tq, c.Tk, c.HS);
        // in place: out over guards, the gradients over NaN and guards
        float *orows = alloc_floats(nro), *att2 = alloc_floats(na);
        float *dqrows = alloc_floats(nrq), *dkvrows = alloc_floats(nrk);
        for (size_t i = 0; i < nro; i++) orows[i] = strided_guard(i);
        for (size_t i = 0; i < nrq; i++)
            dqrows[i] = i % ldq >= (size_t)C && i % ldq < (size_t)2 * C
                        ? NAN : strided_guard(i);
        for (size_t i = 0; i < nrk; i++)
            dkvrows[i] = i % ldkv < (size_t)2 * C ? NAN : strided_guard(i);
        HeadsLayout lq = heads_in_rows(c.Tq, ldq, c.HS);
        HeadsLayout lkv = heads_in_rows(c.Tk, ldkv, c.HS);
        HeadsLayout lo = heads_in_rows(c.Tq, ldo, c.HS);
        ck_assert_int_eq(attention_forward_strided(orows, lo, att2, qr, lq,
                                                   kr, vr, lkv, km, c.causal,
                                                   c.B, c.NH, c.Tq, c.Tk,
                                                   c.HS, NULL), 0);
        attention_backward_strided(dqrows + C, dkvrows, dkvrows + C, datt,
                                   dorows, att2, qr, kr, vr, lq, lkv, lo,
                                   false, c.B, c.NH, c.Tq, c.Tk, c.HS);
        ck_assert_mem_eq(att2, att, na * sizeof *att);
        float *back = alloc_floats(nq > nk ? nq : nk);
        const float *got[4] = {orows, dqrows + C, dkvrows, dkvrows + C};
        const float *want[4] = {out, dq, dk, dv};
        const int ld[4] = {ldo, ldq, ldkv, ldkv};
        const int rows[4] = {c.Tq, c.Tq, c.Tk, c.Tk};
        for (int j = 0; j < 4; j++) {
            size_t n = (size_t)c.B * c.NH * rows[j] * c.HS;
            heads_split(back, got[j], ld[j], c.B, rows[j], C, c.NH);
            for (size_t i = 0; i < n; i++)
                ck_assert_msg(memcmp(&back[i], &want[j][i], sizeof *back)
                              == 0, "case %zu, array %d, element %zu: %g, "
                              "packed %g", ci, j, i, (double)back[i],
                              (double)want[j][i]);
        }
        // the guard columns are as they were
        for (size_t i = 0; i < nro; i++)
            if (i % ldo >= (size_t)C)
                ck_assert_float_eq(orows[i], strided_guard(i));
        for (size_t i = 0; i < nrq; i++)
            if (i % ldq < (size_t)C || i % ldq >= (size_t)2 * C)
                ck_assert_float_eq(dqrows[i], strided_guard(i));
        for (size_t i = 0; i < nrk; i++)
            if (i % ldkv >= (size_t)2 * C)
                ck_assert_float_eq(dkvrows[i], strided_guard(i));
        // accumulate: a second pass adds the same gradients again
        attention_backward_strided(dqrows + C, dkvrows, dkvrows + C, datt,
                                   dorows, att2, qr, kr, vr, lq, lkv, lo,
                                   true, c.B, c.NH, c.Tq, c.Tk, c.HS);
        for (int j = 1; j < 4; j++) {
            size_t n = (size_t)c.B * c.NH * rows[j] * c.HS;
            heads_split(back, got[j], ld[j], c.B, rows[j], C, c.NH);
            for (size_t i = 0; i < n; i++)
                ck_assert_msg(fabsf(back[i] - 2.0f * want[j][i])
                              <= 1e-5f * (1.0f + fabsf(want[j][i])),
                              "case %zu, array %d, element %zu: %g after "
                              "adding twice, not 2 x %g", ci, j, i,
                              (double)back[i], (double)want[j][i]);
        }
        free(qrows), free(kvrows), free(dorows), free(mask), free(q);
        free(k), free(v), free(dout), free(out), free(att), free(datt);
        free(dq), free(dk), free(dv), free(orows), free(att2), free(dqrows);
        free(dkvrows), free(back);
    }
}
END_TEST

START_TEST(attention_bad_sizes) {
    float x[4] = {0};
    Error err;
    ck_assert_int_eq(attention_forward(x, x, x, x, x, NULL, true, 1, 1, 1, 1,
                                       0, &err), -1);
    ck_assert_str_eq(err.msg, "attention: every size must be at least 1, "
                     "got B=1 NH=1 Tq=1 Tk=1 HS=0");
    ck_assert_int_eq(attention_forward(x, x, x, x, x, NULL, true, 0, 1, 1, 1,
                                       1, &err), -1);
    ck_assert_int_eq(attention_forward(x, x, x, x, x, NULL, true, 1, 1, -3,
                                       1, 1, &err), -1);
    ck_assert_int_eq(attention_forward(x, x, x, x, x, NULL, false, 64, 64,
                                       4096, 4096, 64, &err), -1);
    ck_assert_msg(strstr(err.msg, "too large") != NULL, "%s", err.msg);
}
END_TEST

// ---- heads ----------------------------------------------------------------

START_TEST(heads_split_and_merge) {
    // inp[b,t,c] = 1000 b + 100 t + c over the three thirds of a qkv
    // buffer; head h of the third j must hold channels h*HS.. of third j.
    enum { B = 2, T = 3, C = 6, NH = 3, HS = C / NH };
    float qkv[B * T * 3 * C], heads[B * T * C], back[B * T * 3 * C];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < 3 * C; c++)
                qkv[(b * T + t) * 3 * C + c] = 1000 * b + 100 * t + c;
    for (int i = 0; i < B * T * 3 * C; i++) back[i] = -1;
    for (int j = 0; j < 3; j++) {
        heads_split(heads, qkv + j * C, 3 * C, B, T, C, NH);
        for (int b = 0; b < B; b++)
            for (int h = 0; h < NH; h++)
                for (int t = 0; t < T; t++)
                    for (int i = 0; i < HS; i++)
                        ck_assert_float_eq(
                            heads[((b * NH + h) * T + t) * HS + i],
                            1000 * b + 100 * t + j * C + h * HS + i);
        heads_merge(back + j * C, heads, 3 * C, B, T, C, NH);
    }
    ck_assert_mem_eq(back, qkv, sizeof qkv);   // merge undoes split
}
END_TEST

// ---- multi-head attention -------------------------------------------------

typedef struct {
    const char *name;
    int B, T, C, NH;
    bool bias, causal, masked;
} MhaCase;

static const MhaCase MHA_CASES[] = {
    {"small", 2, 5, 6, 3, true, true, false},
    {"padded", 2, 8, 16, 4, false, true, true},
    {"one", 1, 1, 4, 1, true, true, false},
    {"encoder", 2, 4, 8, 2, true, false, true},
};
#define N_MHA_CASES (int)(sizeof MHA_CASES / sizeof MHA_CASES[0])

typedef struct {
    MhaCase c;
    float *x, *wa, *ba, *wp, *bp, *out, *w;
    int *mask;
    MhaCache cache;
} MhaProblem;

static void mha_alloc(MhaProblem *p) {
    const MhaCase *c = &p->c;
    Error err;
    ck_assert_msg(mha_cache_alloc(&p->cache, c->B, c->T, c->C, c->NH, &err)
                  == 0, "%s", err.msg);
    p->out = alloc_floats((size_t)c->B * c->T * c->C);
}

static MhaProblem mha_from_fixture(const Fixture *f, const MhaCase *c) {
    MhaProblem p = {.c = *c};
    int C = c->C, C3 = 3 * C;
    const int sx[3] = {c->B, c->T, C}, sa[2] = {C3, C}, sp[2] = {C, C};
    char key[64];
#define COPY(what, shape, nd) (snprintf(key, sizeof key, "%s.%s", c->name, \
                               what), fx_copy(f, key, shape, nd))
    p.x = COPY("x", sx, 3);
    p.w = COPY("w", sx, 3);
    p.wa = COPY("c_attn.weight", sa, 2);
    p.wp = COPY("c_proj.weight", sp, 2);
    if (c->bias) {
        p.ba = COPY("c_attn.bias", &C3, 1);
        p.bp = COPY("c_proj.bias", &C, 1);
    }
#undef COPY
    snprintf(key, sizeof key, "%s.key_mask", c->name);
    if (c->masked) p.mask = fx_mask(f, key, c->B, c->T);
    mha_alloc(&p);
    return p;
}

static MhaProblem mha_random(const MhaCase *c, const int *mask,
                             uint64_t seed) {
    MhaProblem p = {.c = *c};
    size_t C = (size_t)c->C, btc = (size_t)c->B * c->T * C;
    float std = 1.0f / sqrtf((float)C);
    p.x = randn_floats(btc, 1.0f, seed);
    p.w = randn_floats(btc, 1.0f, seed + 1);
    p.wa = randn_floats(3 * C * C, std, seed + 2);
    p.wp = randn_floats(C * C, std, seed + 3);
    if (c->bias) {
        p.ba = randn_floats(3 * C, 0.1f, seed + 4);
        p.bp = randn_floats(C, 0.1f, seed + 5);
    }
    if (mask) {
        p.mask = xmalloc((size_t)c->B * c->T * sizeof *p.mask);
        memcpy(p.mask, mask, (size_t)c->B * c->T * sizeof *p.mask);
    }
    mha_alloc(&p);
    return p;
}

static void mha_free(MhaProblem *p) {
    free(p->x);
    free(p->wa);
    free(p->ba);
    free(p->wp);
    free(p->bp);
    free(p->out);
    free(p->w);
    free(p->mask);
    mha_cache_free(&p->cache);
}

static double mha_loss(void *ctx) {
    MhaProblem *p = ctx;
    const MhaCase *c = &p->c;
    Error err;
    ck_assert_msg(mha_forward(p->out, &p->cache, p->x, p->wa, p->ba, p->wp,
                              p->bp, p->mask, c->causal, c->B, c->T, c->C,
                              c->NH, &err) == 0, "%s", err.msg);
    return weighted_sum(p->out, p->w, (size_t)c->B * c->T * c->C);
}

// Gradients of the layer, one buffer with named views.
typedef struct {
    float *mem, *dx, *dwa, *dba, *dwp, *dbp;
} MhaGrads;

static MhaGrads mha_grads(MhaProblem *p, int times) {
    const MhaCase *c = &p->c;
    size_t C = (size_t)c->C, btc = (size_t)c->B * c->T * C;
    MhaGrads g;
    g.mem = alloc_floats(btc + 4 * C * C + 4 * C);
    g.dx = g.mem;
    g.dwa = g.dx + btc;
    g.dwp = g.dwa + 3 * C * C;
    g.dba = g.dwp + C * C;
    g.dbp = g.dba + 3 * C;
    MhaScratch s;
    Error err;
    ck_assert_int_eq(mha_scratch_alloc(&s, c->B, c->T, c->C, c->NH, &err),
                     0);
    mha_loss(p);
    for (int i = 0; i < times; i++)
        mha_backward(g.dx, g.dwa, c->bias ? g.dba : NULL, g.dwp,
                     c->bias ? g.dbp : NULL, &s, p->w, &p->cache, p->x,
                     p->wa, p->wp, c->B, c->T, c->C, c->NH);
    mha_scratch_free(&s);
    return g;
}

START_TEST(mha_matches_pytorch) {
    Fixture *f = fixture_open("ch2_mha.txt");
    for (int i = 0; i < N_MHA_CASES; i++) {
        const MhaCase *c = &MHA_CASES[i];
        MhaProblem p = mha_from_fixture(f, c);
        mha_loss(&p);
        const int sx[3] = {c->B, c->T, c->C};
        const int sa[4] = {c->B, c->NH, c->T, c->T};
        char key[64];
        snprintf(key, sizeof key, "%s.out", c->name);
        ck_assert_close_f(key, p.out, fixture_get(f, key, sx, 3),
                          (size_t)c->B * c->T * c->C, 1e-5, 1e-5);
        snprintf(key, sizeof key, "%s.att", c->name);
        ck_assert_close_f(key, p.cache.att, fixture_get(f, key, sa, 4),
                          (size_t)c->B * c->NH * c->T * c->T, 1e-6, 1e-5);
        mha_free(&p);
    }
    fixture_free(f);
}
END_TEST

START_TEST(mha_backward_matches_pytorch) {
    Fixture *f = fixture_open("ch2_mha.txt");
    for (int i = 0; i < N_MHA_CASES; i++) {
        const MhaCase *c = &MHA_CASES[i];
        MhaProblem p = mha_from_fixture(f, c);
        MhaGrads g = mha_grads(&p, 1);
        int C = c->C, C3 = 3 * C;
        const int sx[3] = {c->B, c->T, C}, sa[2] = {C3, C}, sp[2] = {C, C};
        struct { const char *what; const float *got; const int *shape;
                 int nd; size_t n; } checks[] = {
            {"dx", g.dx, sx, 3, (size_t)c->B * c->T * C},
            {"dc_attn.weight", g.dwa, sa, 2, (size_t)C3 * C},
            {"dc_proj.weight", g.dwp, sp, 2, (size_t)C * C},
            {"dc_attn.bias", g.dba, &C3, 1, (size_t)C3},
            {"dc_proj.bias", g.dbp, &C, 1, (size_t)C},
        };
        for (int j = 0; j < (c->bias ? 5 : 3); j++) {
            char key[64];
            snprintf(key, sizeof key, "%s.%s", c->name, checks[j].what);
            ck_assert_close_f(key, checks[j].got, fixture_get(f, key,
                              checks[j].shape, checks[j].nd), checks[j].n,
                              1e-5, 1e-4);
        }
        free(g.mem);
        mha_free(&p);
    }
    fixture_free(f);
}
END_TEST

START_TEST(mha_backward_finite_differences) {
    static const int pad[2 * 3] = {1, 1, 1, 0, 1, 1};  // a hidden key 0
    struct { MhaCase c; const int *mask; } cases[] = {
        {{"a", 2, 4, 6, 2, true, true, false}, NULL},
        {{"b", 1, 1, 3, 1, false, true, false}, NULL},   // T = 1, one head
        {{"c", 2, 3, 6, 3, true, false, true}, pad},     // an encoder
        {{"d", 2, 3, 6, 3, true, true, true}, pad},      // a hidden row
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const MhaCase *c = &cases[i].c;
        MhaProblem p = mha_random(c, cases[i].mask, 100 + 10 * i);
        MhaGrads g = mha_grads(&p, 1);
        size_t C = (size_t)c->C;
        ck_assert_grad("mha dinp", mha_loss, &p, p.x, g.dx,
                       (size_t)c->B * c->T * C, GC_EPS, GC_ATOL, GC_RTOL);
        ck_assert_grad("mha dc_attn_w", mha_loss, &p, p.wa, g.dwa,
                       3 * C * C, GC_EPS, GC_ATOL, GC_RTOL);
        ck_assert_grad("mha dc_proj_w", mha_loss, &p, p.wp, g.dwp, C * C,
                       GC_EPS, GC_ATOL, GC_RTOL);
        if (c->bias) {
            ck_assert_grad("mha dc_attn_b", mha_loss, &p, p.ba, g.dba,
                           3 * C, GC_EPS, GC_ATOL, GC_RTOL);
            ck_assert_grad("mha dc_proj_b", mha_loss, &p, p.bp, g.dbp, C,
                           GC_EPS, GC_ATOL, GC_RTOL);
        }
        free(g.mem);
        mha_free(&p);
    }
}
END_TEST

START_TEST(mha_backward_accumulates) {
    // Two backward passes give twice the gradients of one: += everywhere,
    // and the scratch space is cleared where it must be.
    MhaCase c = {"acc", 2, 4, 6, 2, true, true, false};
    MhaProblem p = mha_random(&c, NULL, 7);
    MhaGrads one = mha_grads(&p, 1), two = mha_grads(&p, 2);
    size_t n = (size_t)c.B * c.T * c.C + 4 * 36 + 4 * 6;
    for (size_t i = 0; i < n; i++)
        ck_assert_float_eq_tol(two.mem[i], 2 * one.mem[i],
                               1e-6f * (1 + fabsf(one.mem[i])));
    free(one.mem);
    free(two.mem);
    mha_free(&p);
}
END_TEST

START_TEST(mha_bad_sizes) {
    MhaCache cache;
    MhaScratch scratch;
    Error err;
    ck_assert_int_eq(mha_cache_alloc(&cache, 2, 4, 6, 4, &err), -1);
    ck_assert_str_eq(err.msg, "multi-head attention: C=6 channels do not "
                     "split into NH=4 heads (C must be a multiple of NH)");
    ck_assert_int_eq(mha_scratch_alloc(&scratch, 2, 0, 6, 2, &err), -1);
    ck_assert_str_eq(err.msg, "multi-head attention: every size must be at "
                     "least 1, got B=2 T=0 C=6 NH=2");
    ck_assert_int_eq(mha_cache_alloc(&cache, 1, 4, 8, 0, &err), -1);
    ck_assert_int_eq(mha_cache_alloc(&cache, 1 << 20, 1 << 12, 64, 1, &err),
                     -1);
    ck_assert_msg(strstr(err.msg, "too large") != NULL, "%s", err.msg);
    mha_cache_free(&cache);                       // zeroed: a no-op

    MhaCase c = {"fit", 2, 4, 6, 2, false, true, false};
    MhaProblem p = mha_random(&c, NULL, 9);
    float *big = alloc_floats(4 * 8 * 6);
    // T beyond what the cache holds, another C or NH, a bad NH
    ck_assert_int_eq(mha_forward(big, &p.cache, big, p.wa, NULL, p.wp, NULL,
                                 NULL, true, 2, 8, 6, 2, &err), -1);
    ck_assert_str_eq(err.msg, "multi-head attention: the cache cannot hold "
                     "B=2 T=8 C=6 NH=2: it holds B*T=8 tokens of at most "
                     "T=4, C=6 NH=2");
    // more tokens than it holds, though each sequence is short enough
    ck_assert_int_eq(mha_forward(big, &p.cache, big, p.wa, NULL, p.wp, NULL,
                                 NULL, true, 3, 3, 6, 2, &err), -1);
    ck_assert_str_eq(err.msg, "multi-head attention: the cache cannot hold "
                     "B=3 T=3 C=6 NH=2: it holds B*T=8 tokens of at most "
                     "T=4, C=6 NH=2");
    ck_assert_int_eq(mha_forward(big, &p.cache, big, p.wa, NULL, p.wp, NULL,
                                 NULL, true, 2, 4, 6, 3, &err), -1);
    ck_assert_int_eq(mha_forward(big, &p.cache, big, p.wa, NULL, p.wp, NULL,
                                 NULL, true, 2, 4, 6, 4, &err), -1);
    ck_assert_msg(strstr(err.msg, "do not split") != NULL, "%s", err.msg);
    // smaller B and T than allocated are fine, and so are more rows of
    // shorter sequences (4 x 2 in room for 2 x 4 tokens)
    ck_assert_int_eq(mha_forward(big, &p.cache, p.x, p.wa, NULL, p.wp, NULL,
                                 NULL, true, 1, 3, 6, 2, &err), 0);
    ck_assert_int_eq(mha_forward(big, &p.cache, p.x, p.wa, NULL, p.wp, NULL,
                                 NULL, true, 4, 2, 6, 2, &err), 0);
    free(big);
    mha_free(&p);
}
END_TEST

START_TEST(mha_smaller_batch_matches_full) {
    // A cache sized for B=2, T=5, used for B=1, T=3: the same output as
    // the first 3 tokens of row 0 of a full pass (causal: later tokens do
    // not matter).
    MhaCase c = {"sub", 2, 5, 8, 2, true, true, false};
    MhaProblem p = mha_random(&c, NULL, 13);
    mha_loss(&p);
    float full[3 * 8], part[3 * 8];
    memcpy(full, p.out, sizeof full);
    Error err;
    ck_assert_int_eq(mha_forward(part, &p.cache, p.x, p.wa, p.ba, p.wp, p.bp,
                                 NULL, true, 1, 3, 8, 2, &err), 0);
    ck_assert_close_f("first tokens", part, full, 3 * 8, 1e-6, 1e-6);
    mha_free(&p);
}
END_TEST

START_TEST(mha_step_matches_forward) {
    // Positions one at a time against a KV cache give the rows of a causal
    // forward pass: three heads, a bias, padding in the key mask, the
    // cache filled from the forward pass for the first two positions and
    // sized for more positions (T=7) than used, so heads lie apart.
    static const int mask[2 * 7] = {1, 1, 1, 1, 0, 0, 0,
                                    1, 1, 0, 0, 0, 0, 0};
    MhaCase c = {"step", 2, 5, 6, 3, true, true, true};
    int pad[2 * 5];
    for (int b = 0; b < 2; b++)
        memcpy(pad + 5 * b, mask + 7 * b, 5 * sizeof *pad);
    MhaProblem p = mha_random(&c, pad, 31);
    mha_loss(&p);
    MhaKv kv;
    Error err;
    ck_assert_int_eq(mha_kv_alloc(&kv, 2, 7, 6, 3, &err), 0);
    ck_assert_int_eq(mha_kv_fill(&kv, &p.cache, 2, 2, &err), 0);
    for (int t = 2; t < 5; t++) {
        float x[2 * 6], y[2 * 6];
        for (int b = 0; b < 2; b++)
            memcpy(x + 6 * b, p.x + (b * 5 + t) * 6, sizeof x / 2);
        ck_assert_int_eq(mha_step(y, &kv, x, p.wa, p.ba, p.wp, p.bp, mask, 2,
                                  6, 3, &err), 0);
        for (int b = 0; b < 2; b++)
            ck_assert_close_f("step", y + 6 * b, p.out + (b * 5 + t) * 6, 6,
                              1e-5, 1e-5);
    }
    ck_assert_int_eq(kv.len, 5);
    // what does not fit: more positions than the last forward pass ran,
    // other heads, a step with another C
    ck_assert_int_eq(mha_kv_fill(&kv, &p.cache, 2, 6, &err), -1);
    ck_assert_str_eq(err.msg, "multi-head attention: B=2 T=6 does not fit "
                     "both the last forward pass (B=2 T=5 C=6 NH=3) and "
                     "the KV cache (B<=2 T<=7 C=6 NH=3)");
    MhaKv other;
    ck_assert_int_eq(mha_kv_alloc(&other, 2, 7, 6, 2, &err), 0);
    ck_assert_int_eq(mha_kv_fill(&other, &p.cache, 2, 5, &err), -1);
    float z[2 * 8] = {0};
    ck_assert_int_eq(mha_step(z, &kv, z, p.wa, p.ba, p.wp, p.bp, NULL, 2, 8,
                              2, &err), -1);
    ck_assert_msg(strstr(err.msg, "does not fit the KV cache") != NULL, "%s",
                  err.msg);
    mha_kv_free(&other);
    mha_kv_free(&kv);
    mha_free(&p);
}
END_TEST

// ---- the fixture reader ---------------------------------------------------

static Fixture *load_text(const char *text, Error *err) {
    char path[] = "/tmp/ch2_fixtureXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    Fixture *fx = fixture_load(path, err);
    remove(path);
    return fx;
}

START_TEST(fixture_reader) {
    Error err;
    Fixture *f = load_text("# fixture v1\n# a comment\nx 2 3\n1 2 3\n"
                           "4 5 6e-1\n# between\nscale\n-2.5\nempty 0 4\n"
                           "odd.name_1 1\nnan\n", &err);
    ck_assert_msg(f != NULL, "%s", err.msg);
    const int s23[2] = {2, 3};
    const float *x = fixture_get(f, "x", s23, 2);
    ck_assert_float_eq(x[5], 0.6f);
    size_t n;
    const float *s = fixture_find(f, "scale", NULL, 0, &n, &err);
    ck_assert_float_eq(*s, -2.5f);
    ck_assert_uint_eq(n, 1);
    ck_assert_ptr_nonnull(fixture_find(f, "empty", NULL, 0, &n, &err));
    ck_assert_uint_eq(n, 0);
    ck_assert(isnan(*fixture_get(f, "odd.name_1", NULL, 0)));
    const int s32[2] = {3, 2};
    ck_assert_ptr_null(fixture_find(f, "x", s32, 2, NULL, &err));
    ck_assert_msg(strstr(err.msg, "tensor x has shape (2,3), expected "
                         "(3,2)") != NULL, "%s", err.msg);
    ck_assert_ptr_null(fixture_find(f, "y", NULL, 0, NULL, &err));
    ck_assert_msg(strstr(err.msg, "no tensor named y") != NULL, "%s",
                  err.msg);
    fixture_free(f);
}
END_TEST

START_TEST(fixture_reader_errors) {
    Error err;
    struct { const char *text, *msg; } bad[] = {
        {"x 1\n1\n", "not a fixture file"},
        {"# fixture v1\nx 2 2\n1 2 3\n", "value 4 of 4 is missing"},
        {"# fixture v1\nx 2\n1 2\nx 1\n3\n", "tensor x appears twice"},
        {"# fixture v1\nx 2 -1\n", "bad dimension"},
        {"# fixture v1\nx 1\nabc\n", "not a number"},
        {"# fixture v1\n1.5 2\n", "expected a tensor name"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_ptr_null(load_text(bad[i].text, &err));
        ck_assert_msg(strstr(err.msg, bad[i].msg) != NULL, "case %zu: "
                      "\"%s\" does not say \"%s\"", i, err.msg, bad[i].msg);
    }
    ck_assert_ptr_null(fixture_load("tests/reference/no_such.txt", &err));
    ck_assert_msg(strstr(err.msg, "cannot open") != NULL, "%s", err.msg);
}
END_TEST

// max_fast, the vectorised maximum of the softmax, the loss and decoding:
// the largest value wherever it lies (in the first element, in the blocks
// of 64 lanes or in the tail), for lengths around the block size, with
// every value negative, a NaN passed over, and -infinity for no values.
START_TEST(max_fast_is_the_maximum) {
    static const int lens[] = {1, 5, 63, 64, 65, 127, 128, 200};
    float x[200];
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        int n = lens[k];
        for (int at = 0; at < n; at++) {
            for (int i = 0; i < n; i++) x[i] = -100.0f - (float)((i * 7) % n);
            x[at] = -1.5f;
            ck_assert_msg(max_fast(x, n) == -1.5f, "n %d, the largest at %d:"
                          " got %g", n, at, (double)max_fast(x, n));
            x[(at + 1) % n] = NAN;
            if ((at + 1) % n != at)
                ck_assert_msg(max_fast(x, n) == -1.5f, "n %d, a NaN at %d: "
                              "got %g", n, (at + 1) % n,
                              (double)max_fast(x, n));
        }
    }
    ck_assert(max_fast(x, 0) == -INFINITY);
}
END_TEST

Suite *ch2_suite(void) {
    Suite *s = suite_create("ch2");
    TCase *tc = tcase_new("softmax", "ch2");
    tcase_add_test(tc, softmax_known_values);
    tcase_add_test(tc, max_fast_is_the_maximum);
    tcase_add_test(tc, softmax_backward_finite_differences);
    suite_add_tcase(s, tc);
    tc = tcase_new("linear", "ch2");
    tcase_add_test(tc, linear_matches_pytorch);
    tcase_add_test(tc, linear_backward_finite_differences);
    tcase_add_test(tc, linear_zero_sizes);
    suite_add_tcase(s, tc);
    tc = tcase_new("attention", "ch2");
    tcase_add_test(tc, attention_matches_pytorch);
    tcase_add_test(tc, attention_backward_matches_pytorch);
    tcase_add_test(tc, attention_backward_finite_differences);
    tcase_add_test(tc, attention_fully_masked_rows_are_zero);
    tcase_add_test(tc, attention_large_scores_keep_the_softmax);
    tcase_add_test(tc, attention_padding_is_invisible);
    tcase_add_test(tc, attention_long_sequences_match_a_direct_computation);
    tcase_add_test(tc, attention_causal_alignment);
    tcase_add_test(tc, attention_strided_reads_heads_in_place);
    tcase_add_test(tc, attention_bad_sizes);
    suite_add_tcase(s, tc);
    tc = tcase_new("mha", "ch2");
    tcase_add_test(tc, heads_split_and_merge);
    tcase_add_test(tc, mha_matches_pytorch);
    tcase_add_test(tc, mha_backward_matches_pytorch);
    tcase_add_test(tc, mha_backward_finite_differences);
    tcase_add_test(tc, mha_backward_accumulates);
    tcase_add_test(tc, mha_bad_sizes);
    tcase_add_test(tc, mha_smaller_batch_matches_full);
    tcase_add_test(tc, mha_step_matches_forward);
    suite_add_tcase(s, tc);
    tc = tcase_new("fixture", "ch2");
    tcase_add_test(tc, fixture_reader);
    tcase_add_test(tc, fixture_reader_errors);
    suite_add_tcase(s, tc);
    return s;
}
