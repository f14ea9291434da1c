// Tests of the chapter 2 exercises. Expected values come from hand
// computation, the definitions evaluated in double inside the test, the
// PyTorch fixtures of tests/reference/gen_ch2.py, finite differences, and
// properties (what a change of input may and may not change), never from
// the reference solutions or the chapter's version of the same function.
//
// The wrong versions each exercise's tests are meant to catch (each was
// tried as a change of the reference solution, graded with `make check
// EXERCISES=<that copy>`, and scored below full marks):
//   2.1  no maximum taken out; a maximum that starts at 0, or is taken
//        over row 0 for every row; the minimum taken out instead (caught
//        by the new row (-1000, 0, 1000)); the sum over D - 1 terms; no
//        division by the sum. Not wrong, and passing: expf and a float
//        sum after the maximum is taken out.
//   2.2  the causal bound s > t (no Tk - Tq offset) or with the offset
//        reversed; s >= t (a query not seeing itself); no scale, or 1/HS;
//        the key mask inverted, or read at the query's index; -1e9
//        instead of -INFINITY; k read transposed.
//   2.3  NaN for a row with no visible key (exp(-inf - -inf)); no scale;
//        out accumulated (+=) instead of written; no normalisation; the
//        masks ignored, or only the causal one, or only the key mask; no
//        maximum taken out (scores of 10^4 overflow); v read transposed.
//   2.4  heads cut from interleaved channels; q, k, v laid out (B, T, NH,
//        HS); k and v swapped; the batch offset left out (split or
//        merge); the merge into interleaved channels or reading (B, T, NH,
//        HS).
//   2.5  dq, dk or dv assigned instead of added; no scale, or scale^2;
//        the softmax's backward without the sum_s da[s] a[s] term, or
//        with an unweighted sum; q and k swapped in dq and dk; dv built
//        from the wrong row of dout.
//   2.6  the flag inverted, always causal or never causal; qkv = x @ w
//        (w not transposed); q and k, or k and v, swapped.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "ch2_exercises.h"
#include "ch2_util.h"

// ---- 2.1 stable softmax ---------------------------------------------------

// The definition, in double, for one row (shifted by the max: exact math).
static void softmax_ref(double *y, const float *x, int D) {
    double m = x[0], sum = 0;
    for (int i = 1; i < D; i++) m = fmax(m, x[i]);
    for (int i = 0; i < D; i++) sum += exp(x[i] - m);
    for (int i = 0; i < D; i++) y[i] = exp(x[i] - m) / sum;
}

START_TEST(ex2_1_known_values) {
    const float x[3] = {1, 2, 3};
    float y[3];
    ex_softmax(y, x, 1, 3);
    double z = exp(1) + exp(2) + exp(3);
    const double want[3] = {exp(1) / z, exp(2) / z, exp(3) / z};
    ck_assert_close("softmax(1, 2, 3)", y, want, 3, 1e-7, 1e-6);
    const float one = -7.0f;
    float p = 0;
    ex_softmax(&p, &one, 1, 1);
    ck_assert_double_eq_tol(p, 1.0, 1e-7);
}
END_TEST

START_TEST(ex2_1_huge_logits) {
    // exp(89) and exp(1000) overflow a float to inf (inf / inf = NaN);
    // exp(-1000) underflows to 0 (0 / 0 = NaN)
    const float x[4][2] = {{1000, 1001}, {89, 89}, {-1000, -1001},
                           {-1000, -1000}};
    const double a = 0.2689414213699951, b = 0.7310585786300049;
    const double want[4][2] = {{a, b}, {0.5, 0.5}, {b, a}, {0.5, 0.5}};
    float y[4][2];
    ex_softmax(&y[0][0], &x[0][0], 4, 2);
    ck_assert_close("softmax of huge logits", &y[0][0], &want[0][0], 8,
                    1e-7, 1e-6);
    // a row spanning 2000: only its maximum may be taken out (its
    // minimum leaves exp(2000), inf in double too); by hand (0, 0, 1)
    // up to e^-1000
    const float wide[3] = {-1000, 0, 1000};
    const double wwant[3] = {0, 0, 1};
    float wy[3];
    ex_softmax(wy, wide, 1, 3);
    ck_assert_close("softmax(-1000, 0, 1000)", wy, wwant, 3, 1e-7, 1e-6);
}
END_TEST

START_TEST(ex2_1_rows_are_independent) {
    // 5 rows of 7, each with its own offset; every row sums to 1
    enum { N = 5, D = 7 };
    float *x = randn_floats(N * D, 3.0f, 21), y[N * D];
    for (int n = 0; n < N; n++)
        for (int i = 0; i < D; i++) x[n * D + i] += 200.0f * (n - 2);
    double want[N * D];
    for (int n = 0; n < N; n++) softmax_ref(want + n * D, x + n * D, D);
    ex_softmax(y, x, N, D);
    ck_assert_close("softmax rows", y, want, N * D, 1e-7, 1e-5);
    free(x);
}
END_TEST

TCase *ex2_1_tcase(void) {
    TCase *tc = tcase_new("ex2.1", "ch2 exercises");
    tcase_add_test(tc, ex2_1_known_values);
    tcase_add_test(tc, ex2_1_huge_logits);
    tcase_add_test(tc, ex2_1_rows_are_independent);
    return tc;
}

// ---- 2.2 masked scores ----------------------------------------------------

static void assert_scores(const float *got, const double *want, int n) {
    for (int i = 0; i < n; i++) {
        if (isinf(want[i]))
            ck_assert_msg(isinf(got[i]) && got[i] < 0, "score %d: got %g, "
                          "want -inf (hidden key)", i, (double)got[i]);
        else
            ck_assert_msg(fabs(got[i] - want[i]) <= 1e-6, "score %d: got "
                          "%.9g, want %.9g", i, (double)got[i], want[i]);
    }
}

// HS = 4, so scale = 1/2; q . k done by hand.
static const float Q3[3 * 4] = {1, 0, 2, 0, 0, 1, 0, 1, 1, 1, 1, 1};
static const float K4[4 * 4] = {2, 0, 0, 0, 0, 2, 2, 0, 1, 0, 1, 3,
                                -1, 1, -1, 1};

START_TEST(ex2_2_causal_by_hand) {
    // q.k: row 0: (2, 4, 3, -3), row 1: (0, 2, 3, 2), row 2: (2, 4, 5, 0)
    const double I = -INFINITY;
    const double want[3 * 3] = {1, I, I, 0, 1, I, 1, 2, 2.5};
    float s[3 * 3];
    ex_masked_scores(s, Q3, K4, NULL, true, 3, 3, 4);
    assert_scores(s, want, 9);
    const double open[3 * 4] = {1, 2, 1.5, -1.5, 0, 1, 1.5, 1, 1, 2, 2.5,
                                0};
    float s2[3 * 4];
    ex_masked_scores(s2, Q3, K4, NULL, false, 3, 4, 4);
    assert_scores(s2, open, 12);
}
END_TEST

START_TEST(ex2_2_fewer_queries_than_keys) {
    // Tq = 2, Tk = 4, causal: the queries are positions 2 and 3, so
    // query 0 sees keys 0..2 and query 1 sees all four.
    const double I = -INFINITY;
    const double want[2 * 4] = {1, 2, 1.5, I, 0, 1, 1.5, 1};
    float s[2 * 4];
    ex_masked_scores(s, Q3, K4, NULL, true, 2, 4, 4);
    assert_scores(s, want, 8);
}
END_TEST

START_TEST(ex2_2_key_mask) {
    const double I = -INFINITY;
    const int mask[4] = {1, 0, 1, 0};
    const double want[3 * 4] = {1, I, 1.5, I, 0, I, 1.5, I, 1, I, 2.5, I};
    float s[3 * 4];
    ex_masked_scores(s, Q3, K4, mask, false, 3, 4, 4);
    assert_scores(s, want, 12);
    // both masks at once: key 0 is padding, causal over 3 positions
    const int mask0[3] = {0, 1, 1};
    const double both[3 * 3] = {I, I, I, I, 1, I, I, 2, 2.5};
    float s2[3 * 3];
    ex_masked_scores(s2, Q3, K4, mask0, true, 3, 3, 4);
    assert_scores(s2, both, 9);
}
END_TEST

TCase *ex2_2_tcase(void) {
    TCase *tc = tcase_new("ex2.2", "ch2 exercises");
    tcase_add_test(tc, ex2_2_causal_by_hand);
    tcase_add_test(tc, ex2_2_fewer_queries_than_keys);
    tcase_add_test(tc, ex2_2_key_mask);
    return tc;
}

// ---- the attention fixture, one head at a time (2.3 and 2.5) --------------

typedef struct {
    const char *name;
    int B, NH, Tq, Tk, HS;
    bool causal, masked;
} Case;

static const Case CASES[] = {
    {"causal", 2, 2, 5, 5, 3, true, false},
    {"padded", 2, 2, 4, 4, 4, true, true},
    {"encoder", 2, 1, 3, 3, 2, false, true},
    {"cross", 1, 2, 3, 5, 2, false, true},
    {"tail", 1, 1, 2, 6, 4, true, false},
};
#define N_CASES (int)(sizeof CASES / sizeof CASES[0])

static const float *get4(const Fixture *f, const Case *c, const char *what,
                         int T3, int T4) {
    const int shape[4] = {c->B, c->NH, T3, T4};
    char key[64];
    snprintf(key, sizeof key, "%s.%s", c->name, what);
    return fixture_get(f, key, shape, 4);
}

// ---- 2.3 attention forward ------------------------------------------------

START_TEST(ex2_3_by_hand) {
    // Tq = 2, Tk = 4, causal: query 0 is position 2 and sees keys 0..2,
    // with scores (0, 1, 2) / sqrt(2)
    const float q[2 * 2] = {1, 0, 0, 1}, k[4 * 2] = {0, 0, 1, 1, 2, 0, 0, 2};
    const float v[4 * 2] = {1, 0, 0, 1, 1, 1, 2, 2};
    float out[2 * 2], att[2 * 4];
    ex_attention_head(out, att, q, k, v, NULL, true, 2, 4, 2);
    double s = 1 / sqrt(2.0), z = 1 + exp(s) + exp(2 * s);
    const double want0[4] = {1 / z, exp(s) / z, exp(2 * s) / z, 0};
    ck_assert_close("att row 0", att, want0, 4, 1e-7, 1e-6);
    ck_assert_float_eq(att[3], 0.0f);                 // exactly zero
    const double out0[2] = {(1 + exp(2 * s)) / z, (exp(s) + exp(2 * s)) / z};
    ck_assert_close("out row 0", out, out0, 2, 1e-7, 1e-6);
}
END_TEST

START_TEST(ex2_3_matches_pytorch) {
    Fixture *f = fixture_open("ch2_attention.txt");
    for (int i = 0; i < N_CASES; i++) {
        const Case *c = &CASES[i];
        int Tq = c->Tq, Tk = c->Tk, HS = c->HS;
        const float *q = get4(f, c, "q", Tq, HS), *k = get4(f, c, "k", Tk,
                                                          HS);
        const float *v = get4(f, c, "v", Tk, HS);
        const float *out = get4(f, c, "out", Tq, HS);
        const float *att = get4(f, c, "att", Tq, Tk);
        char key[64];
        snprintf(key, sizeof key, "%s.key_mask", c->name);
        int *mask = c->masked ? fx_mask(f, key, c->B, Tk) : NULL;
        float *o = alloc_floats((size_t)Tq * HS);
        float *a = alloc_floats((size_t)Tq * Tk);
        for (int z = 0; z < c->B * c->NH; z++) {
            int b = z / c->NH;
            ex_attention_head(o, a, q + z * Tq * HS, k + z * Tk * HS,
                              v + z * Tk * HS, mask ? mask + b * Tk : NULL,
                              c->causal, Tq, Tk, HS);
            snprintf(key, sizeof key, "%s: att of head %d", c->name, z);
            ck_assert_close_f(key, a, att + z * Tq * Tk, (size_t)Tq * Tk,
                              1e-6, 1e-5);
            snprintf(key, sizeof key, "%s: out of head %d", c->name, z);
            ck_assert_close_f(key, o, out + z * Tq * HS, (size_t)Tq * HS,
                              1e-5, 1e-5);
        }
        free(o);
        free(a);
        free(mask);
    }
    fixture_free(f);
}
END_TEST

START_TEST(ex2_3_no_nan) {
    // All keys padding: zeros, not NaN. Scores of size ~10^4: still fine.
    enum { T = 4, HS = 3 };
    float *q = randn_floats(T * HS, 100.0f, 61);
    float *k = randn_floats(T * HS, 100.0f, 62);
    float *v = randn_floats(T * HS, 1.0f, 63);
    const int none[T] = {0, 0, 0, 0}, first[T] = {1, 0, 0, 0};
    float out[T * HS], att[T * T];
    for (int causal = 0; causal < 2; causal++) {
        ex_attention_head(out, att, q, k, v, none, causal, T, T, HS);
        for (int i = 0; i < T * T; i++)
            ck_assert_msg(att[i] == 0.0f, "att[%d] = %g with every key "
                          "padding, want 0", i, (double)att[i]);
        for (int i = 0; i < T * HS; i++)
            ck_assert_msg(out[i] == 0.0f, "out[%d] = %g with every key "
                          "padding, want 0", i, (double)out[i]);
        // only key 0 is real: every query puts all its weight there
        ex_attention_head(out, att, q, k, v, first, causal, T, T, HS);
        for (int t = 0; t < T; t++) {
            ck_assert_double_eq_tol(att[t * T], 1.0, 1e-6);
            ck_assert_double_eq_tol(out[t * HS + 1], v[1], 1e-5);
        }
        ex_attention_head(out, att, q, k, v, NULL, causal, T, T, HS);
        ck_assert_msg(all_finite(out, T * HS) && all_finite(att, T * T),
                      "huge scores gave inf or NaN");
    }
    free(q);
    free(k);
    free(v);
}
END_TEST

TCase *ex2_3_tcase(void) {
    TCase *tc = tcase_new("ex2.3", "ch2 exercises");
    tcase_add_test(tc, ex2_3_by_hand);
    tcase_add_test(tc, ex2_3_matches_pytorch);
    tcase_add_test(tc, ex2_3_no_nan);
    return tc;
}

// ---- 2.4 heads ------------------------------------------------------------

// qkv[b, t, c] = 1000 b + 100 t + c: every value says where it came from.
static float *numbered_qkv(int B, int T, int C) {
    float *qkv = alloc_floats((size_t)B * T * 3 * C);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < 3 * C; c++)
                qkv[(b * T + t) * 3 * C + c] = 1000 * b + 100 * t + c;
    return qkv;
}

START_TEST(ex2_4_split) {
    const int nhs[3] = {3, 2, 1};                    // HS = 2, 3, 6
    enum { B = 2, T = 3, C = 6 };
    for (int n = 0; n < 3; n++) {
        int NH = nhs[n], HS = C / NH;
        float *qkv = numbered_qkv(B, T, C), *out[3];
        for (int j = 0; j < 3; j++) out[j] = alloc_floats(B * T * C);
        ex_split_qkv(out[0], out[1], out[2], qkv, B, T, C, NH);
        for (int j = 0; j < 3; j++)
            for (int b = 0; b < B; b++)
                for (int h = 0; h < NH; h++)
                    for (int t = 0; t < T; t++)
                        for (int i = 0; i < HS; i++) {
                            float got = out[j][((b * NH + h) * T + t) * HS
                                               + i];
                            float want = 1000 * b + 100 * t + j * C
                                         + h * HS + i;
                            ck_assert_msg(got == want, "NH=%d: %c[b=%d, "
                                          "h=%d, t=%d, i=%d] = %g, want %g",
                                          NH, "qkv"[j], b, h, t, i,
                                          (double)got, (double)want);
                        }
        for (int j = 0; j < 3; j++) free(out[j]);
        free(qkv);
    }
}
END_TEST

START_TEST(ex2_4_merge) {
    enum { B = 2, T = 3, C = 6, NH = 3, HS = 2 };
    float yh[B * NH * T * HS], y[B * T * C];
    for (int b = 0; b < B; b++)             // yh[b,h,t,i] = 1000b+100t+10h+i
        for (int h = 0; h < NH; h++)
            for (int t = 0; t < T; t++)
                for (int i = 0; i < HS; i++)
                    yh[((b * NH + h) * T + t) * HS + i] =
                        1000 * b + 100 * t + 10 * h + i;
    ex_merge_heads(y, yh, B, T, C, NH);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < C; c++)
                ck_assert_float_eq(y[(b * T + t) * C + c],
                                   1000 * b + 100 * t + 10 * (c / HS)
                                   + c % HS);
}
END_TEST

TCase *ex2_4_tcase(void) {
    TCase *tc = tcase_new("ex2.4", "ch2 exercises");
    tcase_add_test(tc, ex2_4_split);
    tcase_add_test(tc, ex2_4_merge);
    return tc;
}

// ---- 2.5 attention backward -----------------------------------------------

START_TEST(ex2_5_matches_pytorch) {
    // the gradients PyTorch's autograd found, head by head; dq, dk, dv
    // start at 1 to check that the answer is added, not stored
    Fixture *f = fixture_open("ch2_attention.txt");
    for (int i = 0; i < N_CASES; i++) {
        const Case *c = &CASES[i];
        int Tq = c->Tq, Tk = c->Tk, HS = c->HS;
        const float *q = get4(f, c, "q", Tq, HS), *k = get4(f, c, "k", Tk,
                                                          HS);
        const float *v = get4(f, c, "v", Tk, HS), *w = get4(f, c, "w", Tq,
                                                          HS);
        const float *att = get4(f, c, "att", Tq, Tk);
        const float *want[3] = {get4(f, c, "dq", Tq, HS),
                                get4(f, c, "dk", Tk, HS),
                                get4(f, c, "dv", Tk, HS)};
        size_t n[3] = {(size_t)Tq * HS, (size_t)Tk * HS, (size_t)Tk * HS};
        for (int z = 0; z < c->B * c->NH; z++) {
            float *g[3];
            for (int j = 0; j < 3; j++) {
                g[j] = alloc_floats(n[j]);
                for (size_t e = 0; e < n[j]; e++) g[j][e] = 1.0f;
            }
            ex_attention_head_backward(g[0], g[1], g[2], w + z * n[0],
                                       att + (size_t)z * Tq * Tk,
                                       q + z * n[0], k + z * n[1],
                                       v + z * n[2], Tq, Tk, HS);
            // what was added to the 1s, compared with the gradient itself
            // (so that a wrong factor shows as one: the 1 taken away again
            // costs float's rounding near 1, 6e-8, far below atol)
            for (int j = 0; j < 3; j++) {
                for (size_t e = 0; e < n[j]; e++) g[j][e] -= 1.0f;
                char what[96];
                snprintf(what, sizeof what, "%s (HS %d): d%c of head %d, "
                         "what was added to the 1s it held", c->name, HS,
                         "qkv"[j], z);
                ck_assert_close_f(what, g[j], want[j] + z * n[j], n[j], 1e-4,
                                  1e-4);
                free(g[j]);
            }
        }
    }
    fixture_free(f);
}
END_TEST

typedef struct {
    float *q, *k, *v, *out, *att, *w;
    const int *mask;
    bool causal;
    int Tq, Tk, HS;
} HeadCtx;

// The forward pass is the chapter's attention_forward (a different
// function from the one under test): L = sum(out * w).
static double head_loss(void *p) {
    HeadCtx *c = p;
    ck_assert_int_eq(attention_forward(c->out, c->att, c->q, c->k, c->v,
                                       c->mask, c->causal, 1, 1, c->Tq,
                                       c->Tk, c->HS, NULL), 0);
    return weighted_sum(c->out, c->w, (size_t)c->Tq * c->HS);
}

START_TEST(ex2_5_finite_differences) {
    // key 0 is padding: under the causal mask query 0 sees nothing
    static const int mask[5] = {0, 1, 1, 0, 1};
    struct { int Tq, Tk, HS; bool causal; const int *mask; } cases[] = {
        {4, 4, 3, true, NULL}, {1, 1, 1, true, NULL}, {3, 5, 2, false, mask},
        {2, 5, 4, true, mask}, {5, 5, 2, true, mask},
    };
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        int Tq = cases[i].Tq, Tk = cases[i].Tk, HS = cases[i].HS;
        size_t nq = (size_t)Tq * HS, nk = (size_t)Tk * HS;
        HeadCtx c = {randn_floats(nq, 1.0f, 70 + i),
                     randn_floats(nk, 1.0f, 80 + i),
                     randn_floats(nk, 1.0f, 90 + i), alloc_floats(nq),
                     alloc_floats((size_t)Tq * Tk),
                     randn_floats(nq, 1.0f, 100 + i), cases[i].mask,
                     cases[i].causal, Tq, Tk, HS};
        float *dq = alloc_floats(nq), *dk = alloc_floats(nk);
        float *dv = alloc_floats(nk);
        head_loss(&c);
        ex_attention_head_backward(dq, dk, dv, c.w, c.att, c.q, c.k, c.v,
                                   Tq, Tk, HS);
        ck_assert_grad("dq", head_loss, &c, c.q, dq, nq, 1e-2, 1e-4, 2e-3);
        ck_assert_grad("dk", head_loss, &c, c.k, dk, nk, 1e-2, 1e-4, 2e-3);
        ck_assert_grad("dv", head_loss, &c, c.v, dv, nk, 1e-2, 1e-4, 2e-3);
        free(c.q);
        free(c.k);
        free(c.v);
        free(c.out);
        free(c.att);
        free(c.w);
        free(dq);
        free(dk);
        free(dv);
    }
}
END_TEST

TCase *ex2_5_tcase(void) {
    TCase *tc = tcase_new("ex2.5", "ch2 exercises");
    tcase_add_test(tc, ex2_5_matches_pytorch);
    tcase_add_test(tc, ex2_5_finite_differences);
    return tc;
}

// ---- 2.6 remove the mask --------------------------------------------------

enum { ST = 6, SC = 4 };   // the fixture's T and C

typedef struct {
    Fixture *f;
    float *x;
    const float *w;
} SelfAtt;

static SelfAtt selfatt_open(void) {
    SelfAtt s;
    s.f = fixture_open("ch2_selfatt.txt");
    const int sx[2] = {ST, SC}, sw[2] = {3 * SC, SC};
    s.x = fx_copy(s.f, "selfatt.x", sx, 2);
    s.w = fixture_get(s.f, "selfatt.w_qkv", sw, 2);
    return s;
}

static void selfatt_close(SelfAtt *s) {
    free(s->x);
    fixture_free(s->f);
}

START_TEST(ex2_6_matches_pytorch) {
    SelfAtt s = selfatt_open();
    const int so[2] = {ST, SC};
    float out[ST * SC];
    ex_self_attention(out, s.x, s.w, true, ST, SC);
    ck_assert_close_f("causal", out, fixture_get(s.f,
                      "selfatt.out_causal", so, 2), ST * SC, 1e-5, 1e-5);
    ex_self_attention(out, s.x, s.w, false, ST, SC);
    ck_assert_close_f("bidirectional", out, fixture_get(s.f,
                      "selfatt.out_bidirectional", so, 2), ST * SC, 1e-5,
                      1e-5);
    selfatt_close(&s);
}
END_TEST

START_TEST(ex2_6_the_future_leaks_without_the_mask) {
    // Change token 3. With the mask, outputs 0..2 stay bit for bit the
    // same and output 3 moves. Without it, output 0 moves too: each
    // position could read the very token it is supposed to predict.
    SelfAtt s = selfatt_open();
    float before[2][ST * SC], after[2][ST * SC];
    for (int m = 0; m < 2; m++)
        ex_self_attention(before[m], s.x, s.w, m == 0, ST, SC);
    for (int i = 0; i < SC; i++) s.x[3 * SC + i] += 1.0f;
    for (int m = 0; m < 2; m++)
        ex_self_attention(after[m], s.x, s.w, m == 0, ST, SC);
    ck_assert_msg(memcmp(before[0], after[0], 3 * SC * sizeof(float)) == 0,
                  "causal: changing token 3 changed an output before it");
    double moved3 = 0, moved0 = 0;
    for (int i = 0; i < SC; i++) {
        moved3 += fabs(after[0][3 * SC + i] - before[0][3 * SC + i]);
        moved0 += fabs(after[1][i] - before[1][i]);
    }
    ck_assert_msg(moved3 > 1e-3, "causal: output 3 did not change with "
                  "its own token");
    ck_assert_msg(moved0 > 1e-3, "no mask: output 0 did not change when "
                  "token 3 did (is the mask still on?)");
    selfatt_close(&s);
}
END_TEST

START_TEST(ex2_6_order) {
    // Without positions, an encoder does not know the order: reversing the
    // tokens reverses the outputs. A causal last token sees a set: any
    // order of the tokens before it gives it the same output.
    SelfAtt s = selfatt_open();
    float out[ST * SC], rev_out[ST * SC], rev[ST * SC];
    for (int t = 0; t < ST; t++)
        memcpy(rev + t * SC, s.x + (ST - 1 - t) * SC, SC * sizeof *rev);
    ex_self_attention(out, s.x, s.w, false, ST, SC);
    ex_self_attention(rev_out, rev, s.w, false, ST, SC);
    for (int t = 0; t < ST; t++)
        ck_assert_close_f("reversed encoder", rev_out + t * SC,
                          out + (ST - 1 - t) * SC, SC, 1e-5, 1e-5);
    // tokens 0..4 reversed, token 5 kept last
    for (int t = 0; t < ST - 1; t++)
        memcpy(rev + t * SC, s.x + (ST - 2 - t) * SC, SC * sizeof *rev);
    memcpy(rev + (ST - 1) * SC, s.x + (ST - 1) * SC, SC * sizeof *rev);
    ex_self_attention(out, s.x, s.w, true, ST, SC);
    ex_self_attention(rev_out, rev, s.w, true, ST, SC);
    ck_assert_close_f("causal, last token", rev_out + (ST - 1) * SC,
                      out + (ST - 1) * SC, SC, 1e-5, 1e-5);
    selfatt_close(&s);
}
END_TEST

TCase *ex2_6_tcase(void) {
    TCase *tc = tcase_new("ex2.6", "ch2 exercises");
    tcase_add_test(tc, ex2_6_matches_pytorch);
    tcase_add_test(tc, ex2_6_the_future_leaks_without_the_mask);
    tcase_add_test(tc, ex2_6_order);
    return tc;
}
