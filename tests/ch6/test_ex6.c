// Tests of the chapter 6 exercises. Expected values come from hand
// computation, the definitions evaluated in double inside the test (and
// finite differences of them), defining properties (clipping keeps the
// direction, the schedule only goes down after warmup) and the PyTorch
// fixture written by tests/reference/gen_ch6_ex.py, never from the
// reference solutions or the chapter's own optim.c and crossentropy.c.
//
// The wrong versions each exercise's tests are meant to catch (each was
// tried as a change of the reference solution, graded with `make check
// EXERCISES=<that copy>`, and scored below full marks):
//   6.1  no maximum taken out (+-1000 overflows); the mean over all N rows
//        instead of the rows with a target (loss and gradient, or only
//        n_valid counting every row); ignored rows' gradient not zeroed;
//        dlogits accumulated; the onehot not subtracted; the gradient not
//        divided by n_valid; 0/0 (NaN) when every target is -1; the sum
//        of the losses instead of the mean.
//   6.2  eps inside the square root; eps before the bias correction of
//        sqrt(v); the decay after the Adam step; L2 regularisation (wd * p
//        added to the gradient) instead of decoupled decay; no bias
//        correction, or only m's; a decay of 1 - wd (no lr); the bias
//        corrections at t + 1; 1 - beta2^t without its square root.
//   6.3  a warmup of lr_max * it / warmup, or (it + 1) / warmup; r by
//        integer division; r = it / decay_steps (not counted from the
//        warmup); the cosine without lr_min (coeff * lr_max) or with
//        lr_min + coeff * lr_max; no factor 0.5; no floor past
//        decay_steps. Equivalent, so not caught: it >= decay_steps for
//        the floor (the cosine gives exactly lr_min there) and it <=
//        warmup for the warmup (lr_max * (w + 1) / (w + 1) = lr_max).
//   6.4  the sum of squares in float; no 1e-6; the factor not capped at
//        1 (small gradients scaled up); each element clamped to max_norm
//        on its own; the norm after clipping returned; max_norm <= 0 not
//        treated as off; the L1 norm; no square root; max_norm / norm +
//        1e-6.
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch6_exercises.h"
#include "check_util.h"
#include "fixture.h"
#include "mem.h"
#include "rng.h"

// |got - want| <= rtol * |want|, with a message naming the value
static void check_rel(const char *what, double got, double want,
                      double rtol) {
    ck_assert_msg(fabs(got - want) <= rtol * fabs(want), "%s: got %.10g, "
                  "want %.10g", what, got, want);
}

// ---- 6.1 cross-entropy ----------------------------------------------------

// The definition in double: mean over rows with a target of
// logsumexp(row) - row[target], and (when dl is not NULL) its gradient
// (softmax - onehot) / n_valid, 0 on ignored rows. The row's maximum is
// taken out so that the double exp of +-1000 stays finite too.
static double xent_def(double *dl, const float *logits, const int *targets,
                       int N, int V) {
    int valid = 0;
    for (int n = 0; n < N; n++) valid += targets[n] != -1;
    double total = 0;
    for (int n = 0; n < N; n++) {
        const float *row = logits + (size_t)n * V;
        double mx = row[0], sum = 0;
        for (int v = 1; v < V; v++) mx = fmax(mx, row[v]);
        for (int v = 0; v < V; v++) sum += exp(row[v] - mx);
        double lse = mx + log(sum);
        if (targets[n] != -1) total += lse - row[targets[n]];
        if (!dl) continue;
        for (int v = 0; v < V; v++) {
            double d = exp(row[v] - lse) - (v == targets[n]);
            dl[(size_t)n * V + v] = targets[n] == -1 ? 0 : d / valid;
        }
    }
    return valid ? total / valid : 0;
}

// Runs the exercise on dlogits prefilled with 7s (they must all be
// overwritten) and checks loss and gradient against the definition, the
// gradient to atol 1e-7 and rtol.
static void xent_case(const char *what, const float *logits,
                      const int *targets, int N, int V, double rtol) {
    size_t n = (size_t)N * V;
    float *dl = alloc_floats(n);
    double *want = xmalloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++) dl[i] = 7.0f;
    float loss = ex_crossentropy(dl, logits, targets, N, V);
    double want_loss = xent_def(want, logits, targets, N, V);
    char msg[96];
    snprintf(msg, sizeof msg, "%s: loss", what);
    ck_assert_msg(fabs(loss - want_loss) <= 1e-6 * (1 + fabs(want_loss)),
                  "%s: got %.9g, want %.9g", msg, loss, want_loss);
    snprintf(msg, sizeof msg, "%s: dlogits", what);
    ck_assert_close(msg, dl, want, n, 1e-7, rtol);
    free(dl);
    free(want);
}

START_TEST(ex6_1_by_hand) {
    // Uniform scores over 4: loss ln 4, gradient 1/4 everywhere but the
    // target, which gets 1/4 - 1.
    const float zeros[4] = {0};
    const int t2 = 2;
    float dl[4] = {7, 7, 7, 7};
    float loss = ex_crossentropy(dl, zeros, &t2, 1, 4);
    check_rel("loss of 4 equal logits", loss, log(4.0), 1e-7);
    const double want[4] = {0.25, 0.25, -0.75, 0.25};
    ck_assert_close("dlogits of 4 equal logits", dl, want, 4, 1e-7, 0);
    // Two rows (1, 2, 3), targets 2 and 0. With S = e + e^2 + e^3 the
    // losses are ln S - 3 (0.4076...) and ln S - 1 (2.4076...), mean
    // ln S - 2; the gradient is (softmax - onehot) / 2.
    const float two[6] = {1, 2, 3, 1, 2, 3};
    const int tg[2] = {2, 0};
    float d2[6] = {7, 7, 7, 7, 7, 7};
    double S = exp(1.0) + exp(2.0) + exp(3.0);
    loss = ex_crossentropy(d2, two, tg, 2, 3);
    check_rel("mean loss of rows (1, 2, 3), targets 2 and 0", loss,
              log(S) - 2, 1e-6);
    double p0 = exp(1.0) / S, p1 = exp(2.0) / S, p2 = exp(3.0) / S;
    const double w2[6] = {p0 / 2, p1 / 2, (p2 - 1) / 2,
                          (p0 - 1) / 2, p1 / 2, p2 / 2};
    ck_assert_close("dlogits of rows (1, 2, 3), divided by 2", d2, w2, 6,
                    1e-7, 1e-6);
}
END_TEST

START_TEST(ex6_1_ignore_index) {
    // The middle row has no target: it adds nothing to the loss, the mean
    // is over the 2 other rows (not 3), and its gradient row is 0 (the 7s
    // put there first must go).
    const float logits[3 * 3] = {0.5f, -1, 2, 40, -3, 9, 1, 1, -2};
    const int targets[3] = {1, -1, 2};
    float dl[9];
    for (int i = 0; i < 9; i++) dl[i] = 7;
    float loss = ex_crossentropy(dl, logits, targets, 3, 3);
    // the same two rows without the ignored one
    const float kept[2 * 3] = {0.5f, -1, 2, 1, 1, -2};
    const int kept_t[2] = {1, 2};
    double want = xent_def(NULL, kept, kept_t, 2, 3);
    check_rel("loss with row 1 ignored = loss of rows 0 and 2", loss, want,
              1e-6);
    for (int v = 0; v < 3; v++)
        ck_assert_msg(dl[3 + v] == 0, "dlogits[1][%d] = %g on an ignored "
                      "row, want 0", v, dl[3 + v]);
    xent_case("3 rows, the middle one ignored", logits, targets, 3, 3,
              1e-5);
    // random rows with several ignored, one of them the last
    float *r = randn_floats(6 * 10, 2.0f, 610);
    const int tr[6] = {4, -1, 0, 9, -1, -1};
    xent_case("6 random rows, 3 ignored", r, tr, 6, 10, 1e-5);
    free(r);
}
END_TEST

START_TEST(ex6_1_all_ignored) {
    // No row has a target: loss 0 (not 0/0), gradient all 0.
    const float logits[2 * 3] = {1, 2, 3, -4, 5, 6};
    const int targets[2] = {-1, -1};
    float dl[6] = {7, 7, 7, 7, 7, 7};
    float loss = ex_crossentropy(dl, logits, targets, 2, 3);
    ck_assert_msg(loss == 0, "loss with every target -1: got %g, want 0",
                  loss);
    for (int i = 0; i < 6; i++)
        ck_assert_msg(dl[i] == 0, "dlogits[%d] = %g with every target -1, "
                      "want 0", i, dl[i]);
}
END_TEST

START_TEST(ex6_1_huge_logits) {
    // exp(1000) overflows float and double alike. By hand, with the
    // maximum taken out (the gradient to rtol 1e-4: a logsumexp kept in
    // float, near 1000, is only good to 6e-5 and fine for training):
    //   (1000, 0, -1000), target 2: loss 2000, softmax (1, 0, 0)
    //   (-1000, -1000, -1000), target 0: loss ln 3, softmax 1/3 each
    //   (1000, 999, -1000), target 1: loss 1 + ln(1 + e^-1), softmax
    //       (1, e^-1, 0) / (1 + e^-1)
    const float logits[3 * 3] = {1000, 0, -1000, -1000, -1000, -1000,
                                 1000, 999, -1000};
    const int targets[3] = {2, 0, 1};
    float dl[9];
    float loss = ex_crossentropy(dl, logits, targets, 3, 3);
    double l3 = 1 + log(1 + exp(-1.0));
    check_rel("mean loss of logits +-1000", loss,
              (2000 + log(3.0) + l3) / 3, 1e-6);
    double q = 1 / (1 + exp(-1.0));
    const double want[9] = {1.0 / 3, 0, -1.0 / 3,
                            (1.0 / 3 - 1) / 3, 1.0 / 9, 1.0 / 9,
                            q / 3, (1 - q - 1) / 3, 0};
    ck_assert_close("dlogits of logits +-1000", dl, want, 9, 1e-7, 1e-4);
    // and the same against the definition in double
    xent_case("logits +-1000", logits, targets, 3, 3, 1e-4);
}
END_TEST

typedef struct {
    float *logits;
    const int *targets;
    int N, V;
} XentCtx;

static double xent_loss(void *ctx) {
    const XentCtx *c = ctx;
    return xent_def(NULL, c->logits, c->targets, c->N, c->V);
}

START_TEST(ex6_1_finite_differences) {
    // dlogits is the gradient of the mean loss: central differences of
    // the definition, every logit, an ignored row included (its column of
    // differences is 0).
    enum { N = 5, V = 7 };
    float *logits = randn_floats(N * V, 1.5f, 611);
    const int targets[N] = {6, 0, -1, 3, 3};
    float dl[N * V];
    float loss = ex_crossentropy(dl, logits, targets, N, V);
    XentCtx c = {logits, targets, N, V};
    check_rel("loss", loss, xent_loss(&c), 1e-6);
    ck_assert_grad("dlogits vs finite differences of the mean loss",
                   xent_loss, &c, logits, dl, N * V, 1e-3, 1e-6, 1e-4);
    free(logits);
}
END_TEST

START_TEST(ex6_1_matches_pytorch) {
    // F.cross_entropy(logits, targets, ignore_index=-1) and autograd: an
    // ordinary case and one with logits up to +-1000 (rtol as above)
    Fixture *f = fixture_open("ch6_ex.txt");
    const struct { const char *name; int N, V; double rtol; } cases[2] = {
        {"xent", 8, 11, 1e-5}, {"xent_big", 4, 5, 1e-4}};
    for (int k = 0; k < 2; k++) {
        int N = cases[k].N, V = cases[k].V;
        const int shape[2] = {N, V};
        char key[64];
        snprintf(key, sizeof key, "%s.targets", cases[k].name);
        const float *ft = fixture_get(f, key, &N, 1);
        int targets[8];
        for (int n = 0; n < N; n++) targets[n] = (int)ft[n];
        snprintf(key, sizeof key, "%s.logits", cases[k].name);
        const float *logits = fixture_get(f, key, shape, 2);
        float dl[8 * 11];
        float loss = ex_crossentropy(dl, logits, targets, N, V);
        snprintf(key, sizeof key, "%s.loss", cases[k].name);
        const float *want = fixture_get(f, key, NULL, 0);
        char what[64];
        snprintf(what, sizeof what, "%s: loss vs F.cross_entropy",
                 cases[k].name);
        check_rel(what, loss, *want, 1e-6);
        snprintf(key, sizeof key, "%s.dlogits", cases[k].name);
        snprintf(what, sizeof what, "%s: dlogits vs autograd",
                 cases[k].name);
        ck_assert_close_f(what, dl, fixture_get(f, key, shape, 2),
                          (size_t)N * V, 1e-7, cases[k].rtol);
    }
    fixture_free(f);
}
END_TEST

TCase *ex6_1_tcase(void) {
    TCase *tc = tcase_new("ex6.1", "ch6 exercises");
    tcase_add_test(tc, ex6_1_by_hand);
    tcase_add_test(tc, ex6_1_ignore_index);
    tcase_add_test(tc, ex6_1_all_ignored);
    tcase_add_test(tc, ex6_1_huge_logits);
    tcase_add_test(tc, ex6_1_finite_differences);
    tcase_add_test(tc, ex6_1_matches_pytorch);
    return tc;
}

// ---- 6.2 AdamW --------------------------------------------------------------

// The project's (and PyTorch's) defaults for a GPT: betas (0.9, 0.95)
static const float B1 = 0.9f, B2 = 0.95f, EPS = 1e-8f;

START_TEST(ex6_2_first_step_by_hand) {
    // Step 1 from m = v = 0: m = 0.1 g, v = 0.05 g^2, and the bias
    // corrections divide them by 0.1 and sqrt(0.05): the step is
    //   lr * g / (|g| + eps), about lr * sign(g)
    // whatever the size of g (a zero gradient moves nothing).
    const float lr = 1e-3f;
    float p[4] = {0, -0.5f, 2, 0.25f}, m[4] = {0}, v[4] = {0};
    const float g[4] = {0.5f, -2, 1e-3f, 0};
    ex_adamw_update(p, g, m, v, 4, 1, lr, 0, B1, B2, EPS);
    const double p0[4] = {0, -0.5, 2, 0.25};
    double wp[4], wm[4], wv[4];
    for (int i = 0; i < 4; i++) {
        wp[i] = p0[i] - (double)lr * g[i] / (fabs(g[i]) + (double)EPS);
        wm[i] = 0.1 * g[i];
        wv[i] = 0.05 * g[i] * g[i];
    }
    ck_assert_close("p after step 1 (p - lr sign(g))", p, wp, 4, 1e-10,
                    2e-7);
    ck_assert_close("m after step 1 (0.1 g)", m, wm, 4, 1e-12, 1e-6);
    ck_assert_close("v after step 1 (0.05 g^2)", v, wv, 4, 1e-12, 1e-6);

    // eps where PyTorch puts it: sqrt(v) / sqrt(1 - beta2^t) + eps. With
    // eps 1e-3 and g = 1e-3 the step is lr * 1e-3 / (1e-3 + 1e-3) = lr / 2
    // (eps before the bias correction, or inside the sqrt, is far off).
    float q[2] = {0, 0}, mq[2] = {0}, vq[2] = {0};
    const float gq[2] = {1e-3f, -4e-3f};
    ex_adamw_update(q, gq, mq, vq, 2, 1, lr, 0, B1, B2, 1e-3f);
    const double wq[2] = {-1e-3 / 2, 1e-3 * 4e-3 / 5e-3};
    ck_assert_close("p after step 1 with eps 1e-3", q, wq, 2, 1e-10, 1e-5);

    // decay first, on the old p, then the Adam step: lr 0.1, wd 0.5
    //   p = p * (1 - 0.05) - 0.1 * sign(g)
    float r[2] = {1, -2}, mr[2] = {0}, vr[2] = {0};
    const float gr[2] = {0.3f, 0.3f};
    ex_adamw_update(r, gr, mr, vr, 2, 1, 0.1f, 0.5f, B1, B2, EPS);
    const double wr[2] = {0.95 - 0.1, -1.9 - 0.1};
    ck_assert_close("p after step 1 with lr 0.1, wd 0.5 (decay, then "
                    "step)", r, wr, 2, 1e-9, 1e-6);
}
END_TEST

// One AdamW step in double, with the decay applied before the Adam step
// (PyTorch's order) or after it (the order a student might write).
static void adamw_ref(double *p, const double *g, double *m, double *v,
                      int n, int t, double lr, double wd, bool decay_first) {
    for (int i = 0; i < n; i++) {
        if (decay_first) p[i] -= lr * wd * p[i];
        m[i] = B1 * m[i] + (1 - B1) * g[i];
        v[i] = B2 * v[i] + (1 - B2) * g[i] * g[i];
        double mhat = m[i] / (1 - pow(B1, t));
        double den = sqrt(v[i]) / sqrt(1 - pow(B2, t)) + EPS;
        p[i] -= lr * mhat / den;
        if (!decay_first) p[i] -= lr * wd * p[i];
    }
}

START_TEST(ex6_2_decay_order_over_steps) {
    // Four steps with gradients that change sign, lr 0.1, wd 0.5: decay
    // on the old p, then the Adam step, as PyTorch does. Decaying after
    // the step gives weights that differ by over 100 times the tolerance
    // (checked below, so that this case can tell the two apart).
    enum { N = 3, STEPS = 4 };
    const double lr = 0.1, wd = 0.5;
    const double gs[STEPS][N] = {{0.4, -1.5, 0.02}, {-0.3, -1.0, 0.05},
                                 {0.2, 0.5, -0.01}, {0.6, -0.2, 0.03}};
    float p[N] = {1.5f, -0.8f, 3.0f}, m[N] = {0}, v[N] = {0};
    double want[N] = {1.5, -0.8, 3.0}, wm[N] = {0}, wv[N] = {0};
    double other[N] = {1.5, -0.8, 3.0}, om[N] = {0}, ov[N] = {0};
    for (int t = 1; t <= STEPS; t++) {
        float g[N];
        for (int i = 0; i < N; i++) g[i] = (float)gs[t - 1][i];
        double gd[N];
        for (int i = 0; i < N; i++) gd[i] = g[i];
        ex_adamw_update(p, g, m, v, N, t, (float)lr, (float)wd, B1, B2,
                        EPS);
        adamw_ref(want, gd, wm, wv, N, t, lr, wd, true);
        adamw_ref(other, gd, om, ov, N, t, lr, wd, false);
        char what[64];
        snprintf(what, sizeof what, "p after step %d (decay, then step)", t);
        ck_assert_close(what, p, want, N, 1e-7, 1e-6);
    }
    for (int i = 0; i < N; i++)
        ck_assert_msg(fabs(other[i] - want[i]) > 1e-4 * (1 + fabs(want[i])),
                      "the two orders agree at %d: the case proves nothing",
                      i);
}
END_TEST

START_TEST(ex6_2_pure_decay) {
    // A zero gradient leaves m and v at 0 and the Adam step at 0/(0+eps)
    // = 0: only the decoupled decay acts, p *= 1 - lr * wd each step.
    const float lr = 1e-2f, wd = 0.1f;
    float p[3] = {1, -3, 0.5f}, m[3] = {0}, v[3] = {0};
    const float g[3] = {0};
    for (int t = 1; t <= 5; t++) {
        ex_adamw_update(p, g, m, v, 3, t, lr, wd, B1, B2, EPS);
        double f = pow(1 - (double)lr * wd, t), wp[3];
        wp[0] = f, wp[1] = -3 * f, wp[2] = 0.5 * f;
        char what[48];
        snprintf(what, sizeof what, "p after %d steps of pure decay", t);
        ck_assert_close(what, p, wp, 3, 0, 1e-6);
        for (int i = 0; i < 3; i++)
            ck_assert_msg(m[i] == 0 && v[i] == 0, "step %d: m[%d] = %g, "
                          "v[%d] = %g with zero gradients (decay is not a "
                          "gradient)", t, i, m[i], i, v[i]);
    }
    // without decay a zero gradient changes nothing at all
    float s[3] = {1, -3, 0.5f};
    ex_adamw_update(s, g, m, v, 3, 6, lr, 0, B1, B2, EPS);
    ck_assert_msg(s[0] == 1 && s[1] == -3 && s[2] == 0.5f, "wd 0 and zero "
                  "gradients changed p to (%g, %g, %g)", s[0], s[1], s[2]);
}
END_TEST

START_TEST(ex6_2_matches_pytorch) {
    // torch.optim.AdamW(lr 1e-3, betas (0.9, 0.95), eps 1e-8), 10 steps
    // on 12 parameters (2 with gradients near 1e-7, where eps matters),
    // weight decay 0.1 and 0
    enum { STEPS = 10, N = 12 };
    Fixture *f = fixture_open("ch6_ex.txt");
    const char *names[2] = {"adamw.wd", "adamw.nowd"};
    const float wds[2] = {0.1f, 0.0f};
    const int s_n[1] = {N}, s_sn[2] = {STEPS, N};
    for (int k = 0; k < 2; k++) {
        char key[64], what[96];
        snprintf(key, sizeof key, "%s.p0", names[k]);
        float p[N], m[N] = {0}, v[N] = {0};
        memcpy(p, fixture_get(f, key, s_n, 1), sizeof p);
        snprintf(key, sizeof key, "%s.grads", names[k]);
        const float *grads = fixture_get(f, key, s_sn, 2);
        snprintf(key, sizeof key, "%s.p", names[k]);
        const float *want = fixture_get(f, key, s_sn, 2);
        for (int t = 1; t <= STEPS; t++) {
            ex_adamw_update(p, grads + (t - 1) * N, m, v, N, t, 1e-3f,
                            wds[k], B1, B2, EPS);
            snprintf(what, sizeof what, "%s: p after step %d", names[k], t);
            ck_assert_close_f(what, p, want + (t - 1) * N, N, 2e-6, 0);
        }
        snprintf(key, sizeof key, "%s.m", names[k]);
        snprintf(what, sizeof what, "%s: exp_avg after 10 steps", names[k]);
        ck_assert_close_f(what, m, fixture_get(f, key, s_n, 1), N, 1e-12,
                          1e-5);
        snprintf(key, sizeof key, "%s.v", names[k]);
        snprintf(what, sizeof what, "%s: exp_avg_sq after 10 steps",
                 names[k]);
        ck_assert_close_f(what, v, fixture_get(f, key, s_n, 1), N, 1e-20,
                          1e-5);
    }
    fixture_free(f);
}
END_TEST

START_TEST(ex6_2_in_place) {
    // Only the n elements change: the guards after them stay, g is only
    // read, n = 0 touches nothing; every element is updated on its own
    // (1000 copies of the same numbers give 1000 equal results).
    enum { N = 1000, GUARD = 3 };
    float *p = alloc_floats(N + GUARD), *g = alloc_floats(N + GUARD);
    float *m = alloc_floats(N + GUARD), *v = alloc_floats(N + GUARD);
    for (int i = 0; i < N + GUARD; i++) {
        p[i] = 0.75f, g[i] = -0.2f, m[i] = 0.01f, v[i] = 0.002f;
    }
    ex_adamw_update(p, g, m, v, 0, 3, 1e-3f, 0.1f, B1, B2, EPS);
    for (int i = 0; i < N + GUARD; i++)
        ck_assert_msg(p[i] == 0.75f && m[i] == 0.01f && v[i] == 0.002f,
                      "n = 0 changed element %d", i);
    ex_adamw_update(p, g, m, v, N, 3, 1e-3f, 0.1f, B1, B2, EPS);
    // step 3 from m = 0.01, v = 0.002, by the formula in double (with
    // the float betas: 1 - 0.9f is 0.10000002, not 0.1)
    const double b1 = B1, b2 = B2, gi = -0.2f;
    double dm = b1 * 0.01f + (1 - b1) * gi;
    double dv = b2 * 0.002f + (1 - b2) * gi * gi;
    double dp = 0.75 * (1 - 1e-4) - 1e-3 / (1 - pow(b1, 3)) * dm
                / (sqrt(dv) / sqrt(1 - pow(b2, 3)) + 1e-8);
    for (int i = 0; i < N; i++) {
        ck_assert_msg(fabs(p[i] - dp) <= 2e-7 && fabs(m[i] - dm) <= 1e-8
                      && fabs(v[i] - dv) <= 1e-9, "element %d: p %.9g, m "
                      "%.9g, v %.9g; want %.9g, %.9g, %.9g", i, p[i], m[i],
                      v[i], dp, dm, dv);
        ck_assert_msg(g[i] == -0.2f, "g[%d] changed to %g", i, g[i]);
    }
    for (int i = N; i < N + GUARD; i++)
        ck_assert_msg(p[i] == 0.75f && m[i] == 0.01f && v[i] == 0.002f
                      && g[i] == -0.2f, "element %d, past n = %d, changed",
                      i, N);
    free(p), free(g), free(m), free(v);
}
END_TEST

TCase *ex6_2_tcase(void) {
    TCase *tc = tcase_new("ex6.2", "ch6 exercises");
    tcase_add_test(tc, ex6_2_first_step_by_hand);
    tcase_add_test(tc, ex6_2_decay_order_over_steps);
    tcase_add_test(tc, ex6_2_pure_decay);
    tcase_add_test(tc, ex6_2_matches_pytorch);
    tcase_add_test(tc, ex6_2_in_place);
    return tc;
}

// ---- 6.3 learning-rate schedule ---------------------------------------------

static const double PI = 3.14159265358979323846;

static void lr_case(int it, int warmup, int decay, float lr_max,
                    float lr_min, double want) {
    float got = ex_lr_schedule(it, warmup, decay, lr_max, lr_min);
    char what[128];
    snprintf(what, sizeof what, "lr at step %d (warmup %d, decay_steps %d,"
             " lr %g -> %g)", it, warmup, decay, lr_max, lr_min);
    check_rel(what, got, want, 1e-6);
}

START_TEST(ex6_3_regions) {
    // warmup 10, cosine until step 110, lr 1e-3 down to 1e-4
    const float hi = 1e-3f, lo = 1e-4f;
    const double H = hi, L = lo;
    lr_case(0, 10, 110, hi, lo, H / 11);             // warmup: (it+1)/11
    lr_case(4, 10, 110, hi, lo, H * 5 / 11);
    lr_case(9, 10, 110, hi, lo, H * 10 / 11);
    // cosine, r = 1/4, 1/2, 3/4: coefficients (1 + cos(pi r)) / 2
    lr_case(35, 10, 110, hi, lo, L + (1 + sqrt(0.5)) / 2 * (H - L));
    lr_case(60, 10, 110, hi, lo, (H + L) / 2);
    lr_case(85, 10, 110, hi, lo, L + (1 - sqrt(0.5)) / 2 * (H - L));
    // past the decay: the floor
    lr_case(111, 10, 110, hi, lo, L);
    lr_case(5000, 10, 110, hi, lo, L);
}
END_TEST

START_TEST(ex6_3_boundaries) {
    // it = warmup starts the cosine at lr_max (r = 0); it = decay_steps
    // ends it at lr_min (r = 1); the step before and after each
    const int cfg[3][2] = {{10, 110}, {1, 2}, {100, 5000}};
    const float hi = 6e-4f, lo = 6e-5f;
    for (int k = 0; k < 3; k++) {
        int w = cfg[k][0], d = cfg[k][1];
        lr_case(w - 1, w, d, hi, lo, (double)hi * w / (w + 1));
        lr_case(w, w, d, hi, lo, hi);
        lr_case(d, w, d, hi, lo, lo);
        lr_case(d + 1, w, d, hi, lo, lo);
        lr_case((w + d) / 2, w, d, hi, lo,
                lo + 0.5 * (1 + cos(PI * ((w + d) / 2 - w) / (d - w)))
                     * ((double)hi - lo));
    }
}
END_TEST

START_TEST(ex6_3_midpoint_and_no_warmup) {
    // halfway through the cosine the rate is the mean of the two ends;
    // with warmup 0 step 0 is already lr_max
    const float hi = 3e-4f, lo = 3e-5f;
    lr_case(50, 0, 100, hi, lo, ((double)hi + lo) / 2);
    lr_case(1050, 50, 2050, hi, lo, ((double)hi + lo) / 2);
    lr_case(0, 0, 100, hi, lo, hi);
    lr_case(100, 0, 100, hi, lo, lo);
    lr_case(1, 0, 1000, 1.0f, 0.0f, (1 + cos(PI / 1000)) / 2);
    // lr_min 0: the cosine goes all the way down
    lr_case(75, 0, 100, 1.0f, 0.0f, (1 + cos(0.75 * PI)) / 2);
}
END_TEST

START_TEST(ex6_3_shape) {
    // Up during warmup, never up afterwards, and every step within 1e-6
    // of the definition in double.
    enum { W = 20, D = 200 };
    const float hi = 6e-4f, lo = 6e-5f;
    float prev = 0;
    for (int it = 0; it <= D + 50; it++) {
        float lr = ex_lr_schedule(it, W, D, hi, lo);
        if (it > 0 && it <= W)
            ck_assert_msg(lr > prev, "warmup: lr at step %d (%g) is not "
                          "above step %d's (%g)", it, lr, it - 1, prev);
        if (it > W)
            ck_assert_msg(lr <= prev, "after warmup: lr at step %d (%g) is "
                          "above step %d's (%g)", it, lr, it - 1, prev);
        double want = it < W ? (double)hi * (it + 1) / (W + 1)
                    : it > D ? lo
                    : lo + 0.5 * (1 + cos(PI * (it - W) / (D - W)))
                               * ((double)hi - lo);
        char what[48];
        snprintf(what, sizeof what, "lr at step %d", it);
        check_rel(what, lr, want, 1e-6);
        prev = lr;
    }
}
END_TEST

TCase *ex6_3_tcase(void) {
    TCase *tc = tcase_new("ex6.3", "ch6 exercises");
    tcase_add_test(tc, ex6_3_regions);
    tcase_add_test(tc, ex6_3_boundaries);
    tcase_add_test(tc, ex6_3_midpoint_and_no_warmup);
    tcase_add_test(tc, ex6_3_shape);
    return tc;
}

// ---- 6.4 gradient-norm clipping ---------------------------------------------

START_TEST(ex6_4_three_four_five) {
    // (3, 4) has norm 5; max_norm 1 scales it by 1 / (5 + 1e-6)
    float g[2] = {3, 4};
    double norm = ex_clip_grad_norm(g, 2, 1.0f);
    check_rel("norm of (3, 4)", norm, 5, 1e-12);
    const double want[2] = {3 / (5 + 1e-6), 4 / (5 + 1e-6)};
    ck_assert_close("(3, 4) clipped to norm 1", g, want, 2, 0, 2e-7);
    // The 1e-6 matters for tiny gradients: (3e-6, 4e-6) with max_norm
    // 1e-6 is scaled by 1e-6 / (5e-6 + 1e-6) = 1/6, not 1/5.
    float t[2] = {3e-6f, 4e-6f};
    norm = ex_clip_grad_norm(t, 2, 1e-6f);
    check_rel("norm of (3e-6, 4e-6)", norm, 5e-6, 1e-7);
    const double wt[2] = {3e-6 / 6, 4e-6 / 6};
    ck_assert_close("(3e-6, 4e-6) clipped with max_norm 1e-6", t, wt, 2, 0,
                    1e-6);
    // max_norm <= 0: no clipping, the norm is still returned
    const float off[2] = {0, -1};
    for (int k = 0; k < 2; k++) {
        float h[2] = {3, 4};
        norm = ex_clip_grad_norm(h, 2, off[k]);
        check_rel("norm of (3, 4) with clipping off", norm, 5, 1e-12);
        ck_assert_msg(h[0] == 3 && h[1] == 4, "max_norm %g changed (3, 4) "
                      "to (%g, %g): <= 0 turns clipping off", off[k], h[0],
                      h[1]);
    }
}
END_TEST

START_TEST(ex6_4_below_threshold) {
    // A norm below max_norm leaves every gradient exactly as it was (the
    // factor is min(1, ...): never scaled up)
    enum { N = 100 };
    float *g = randn_floats(N, 1.0f, 640), keep[N];
    memcpy(keep, g, sizeof keep);
    double sum = 0;
    for (int i = 0; i < N; i++) sum += (double)g[i] * g[i];
    double norm = ex_clip_grad_norm(g, N, 50.0f);
    check_rel("norm of 100 normal values", norm, sqrt(sum), 1e-7);
    ck_assert_msg(norm < 50, "this case wants a norm below 50, got %g",
                  norm);
    ck_assert_msg(memcmp(g, keep, sizeof keep) == 0, "a gradient of norm "
                  "%.4g < max_norm 50 was changed", norm);
    float z[3] = {0, 0, 0};
    norm = ex_clip_grad_norm(z, 3, 1.0f);
    ck_assert_msg(norm == 0 && z[0] == 0 && z[1] == 0 && z[2] == 0,
                  "zero gradients: norm %g, values (%g, %g, %g)", norm,
                  z[0], z[1], z[2]);
    ck_assert_msg(ex_clip_grad_norm(z, 0, 1.0f) == 0, "n = 0: norm not 0");
    free(g);
}
END_TEST

START_TEST(ex6_4_direction) {
    // One factor for all: every element is scaled by the same
    // max_norm / (norm + 1e-6), so the direction stays and the new norm is
    // max_norm (not each element clamped to max_norm on its own)
    enum { N = 1000 };
    float *g = randn_floats(N, 1.0f, 641), keep[N];
    memcpy(keep, g, sizeof keep);
    double sum = 0;
    for (int i = 0; i < N; i++) sum += (double)g[i] * g[i];
    double want_norm = sqrt(sum), coef = 0.5 / (want_norm + 1e-6);
    double norm = ex_clip_grad_norm(g, N, 0.5f);
    check_rel("norm of 1000 normal values", norm, want_norm, 1e-7);
    double want[N], after = 0;
    for (int i = 0; i < N; i++) {
        want[i] = keep[i] * coef;
        after += (double)g[i] * g[i];
    }
    ck_assert_close("1000 values clipped to norm 0.5", g, want, N, 1e-12,
                    1e-6);
    check_rel("norm after clipping", sqrt(after), 0.5, 1e-5);
    free(g);
}
END_TEST

START_TEST(ex6_4_float_accumulation) {
    // 10^7 gradients of 0.1f: the norm is 0.1f * sqrt(10^7) = 316.23.
    // A float running sum of the squares (0.01 each) is rounded to the
    // sum's spacing at every addition: 2^-8 between 2^15 and 2^16, where
    // 0.01 becomes 0.0117, then 2^-7, where it becomes 0.0078. The norm
    // comes out near 309, 2% off. In double it is exact to ~1e-10.
    const size_t n = 10 * 1000 * 1000;
    float *g = alloc_floats(n);
    for (size_t i = 0; i < n; i++) g[i] = 0.1f;
    double want = 0.1f * sqrt((double)n);
    double norm = ex_clip_grad_norm(g, n, 1.0f);
    check_rel("norm of 10^7 values of 0.1 (sum the squares in double)",
              norm, want, 1e-7);
    // and the clipping: every element 0.1f / (norm + 1e-6)
    double each = 0.1f / (want + 1e-6);
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (fabs(g[i] - each) > 1e-6 * each) {
            if (!bad) first = i;
            bad++;
        }
    ck_assert_msg(bad == 0, "clipping 10^7 values of 0.1 to norm 1: %zu "
                  "elements off, the first g[%zu] = %.9g (want %.9g)", bad,
                  first, first < n ? g[first] : 0.0f, each);
    free(g);
}
END_TEST

START_TEST(ex6_4_matches_pytorch) {
    // clip_grad_norm_ over three tensors (20 + 7 + 9 values, flattened in
    // order): one global norm, one factor for all
    enum { N = 36 };
    Fixture *f = fixture_open("ch6_ex.txt");
    const char *names[2] = {"clip.one", "clip.half"};
    const int s_n[1] = {N};
    for (int k = 0; k < 2; k++) {
        char key[64], what[96];
        float g[N];
        snprintf(key, sizeof key, "%s.g", names[k]);
        memcpy(g, fixture_get(f, key, s_n, 1), sizeof g);
        snprintf(key, sizeof key, "%s.max_norm", names[k]);
        float max_norm = *fixture_get(f, key, NULL, 0);
        snprintf(key, sizeof key, "%s.norm", names[k]);
        double want = *fixture_get(f, key, NULL, 0);
        double norm = ex_clip_grad_norm(g, N, max_norm);
        snprintf(what, sizeof what, "%s: total norm vs clip_grad_norm_",
                 names[k]);
        check_rel(what, norm, want, 1e-7);
        snprintf(key, sizeof key, "%s.clipped", names[k]);
        snprintf(what, sizeof what, "%s: clipped gradients vs "
                 "clip_grad_norm_", names[k]);
        ck_assert_close_f(what, g, fixture_get(f, key, s_n, 1), N, 1e-12,
                          1e-6);
    }
    fixture_free(f);
}
END_TEST

TCase *ex6_4_tcase(void) {
    TCase *tc = tcase_new("ex6.4", "ch6 exercises");
    tcase_add_test(tc, ex6_4_three_four_five);
    tcase_add_test(tc, ex6_4_below_threshold);
    tcase_add_test(tc, ex6_4_direction);
    tcase_add_test(tc, ex6_4_float_accumulation);
    tcase_add_test(tc, ex6_4_matches_pytorch);
    return tc;
}
