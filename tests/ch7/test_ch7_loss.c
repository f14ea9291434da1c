// Tests of chapter 7's loss and masks (smoothing.c): label-smoothed
// cross-entropy against PyTorch (tests/reference/ch7_loss.txt), finite
// differences, eps = 0 against chapter 5's cross-entropy, and the wrong
// versions a student is likely to write, each shown to fail the same
// comparison; then the padding mask and the printed attention masks.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "crossentropy.h"
#include "fixture.h"
#include "mem.h"
#include "smoothing.h"

#define LOSS_RTOL 1e-6   // the loss and the NLL, relative
#define GRAD_ATOL 1e-6   // dlogits, absolute

static const char *CASES[] = {"plain", "smooth", "large", "nopad", "tiny"};
enum { N_CASES = sizeof CASES / sizeof CASES[0] };

typedef struct {
    int N, V, pad, n_valid;
    float eps;
    float *logits;      // (N, V), a copy the test may change
    int *targets;       // (N,)
    double loss, nll;   // PyTorch's
    double *dlogits;    // (N, V), PyTorch's gradient of the mean loss
} Case;

static double scalar(const Fixture *f, const char *c, const char *what) {
    char key[64];
    snprintf(key, sizeof key, "%s.%s", c, what);
    return fixture_get(f, key, NULL, 0)[0];
}

static Case load_case(const char *c) {
    Fixture *f = fixture_open("ch7_loss.txt");
    Case k;
    char key[64];
    int dims[FIXTURE_MAX_DIMS];
    snprintf(key, sizeof key, "%s.logits", c);
    ck_assert_int_eq(fixture_dims(f, key, dims), 2);
    k.N = dims[0];
    k.V = dims[1];
    size_t nv = (size_t)k.N * k.V;
    k.logits = alloc_floats(nv);
    memcpy(k.logits, fixture_get(f, key, dims, 2), nv * sizeof(float));
    snprintf(key, sizeof key, "%s.dlogits", c);
    const float *d = fixture_get(f, key, dims, 2);
    k.dlogits = xmalloc(nv * sizeof *k.dlogits);
    for (size_t i = 0; i < nv; i++) k.dlogits[i] = d[i];
    snprintf(key, sizeof key, "%s.targets", c);
    const float *t = fixture_get(f, key, dims, 1);
    k.targets = xmalloc((size_t)k.N * sizeof *k.targets);
    for (int n = 0; n < k.N; n++) k.targets[n] = (int)t[n];
    k.pad = (int)scalar(f, c, "pad");
    k.eps = (float)scalar(f, c, "eps");
    k.n_valid = (int)scalar(f, c, "n_valid");
    k.loss = scalar(f, c, "loss");
    k.nll = scalar(f, c, "nll");
    fixture_free(f);
    return k;
}

static void free_case(Case *k) {
    free(k->logits);
    free(k->targets);
    free(k->dlogits);
}

static int close_rel(double got, double want) {
    return fabs(got - want) <= LOSS_RTOL * fabs(want);
}

// ---- parity with PyTorch ----------------------------------------------------

START_TEST(smoothed_xent_matches_pytorch) {
    Case k = load_case(CASES[_i]);
    SmoothedLoss s;
    float ret = smoothed_xent_forward(k.logits, k.targets, k.N, k.V, k.pad,
                                      k.eps, &s);
    ck_assert_float_eq(ret, s.loss);
    ck_assert_int_eq(s.n_valid, k.n_valid);
    ck_assert_msg(close_rel(s.loss, k.loss), "%s: loss %.9g, PyTorch %.9g",
                  CASES[_i], s.loss, k.loss);
    ck_assert_msg(close_rel(s.nll, k.nll), "%s: nll %.9g, PyTorch %.9g",
                  CASES[_i], s.nll, k.nll);
    size_t nv = (size_t)k.N * k.V;
    float *d = alloc_floats(nv);
    for (size_t i = 0; i < nv; i++) d[i] = 7;   // overwritten, not +=
    smoothed_xent_backward(d, k.logits, k.targets, k.N, k.V, k.pad, k.eps,
                           1.0f / s.n_valid);
    ck_assert_close(CASES[_i], d, k.dlogits, nv, GRAD_ATOL, 0);
    // in place: dlogits may be the logits themselves
    smoothed_xent_backward(k.logits, k.logits, k.targets, k.N, k.V, k.pad,
                           k.eps, 1.0f / s.n_valid);
    ck_assert_mem_eq(k.logits, d, nv * sizeof(float));
    free(d);
    free_case(&k);
}
END_TEST

// eps = 0 is chapter 5's cross-entropy, to the bit, with pad read as -1.
START_TEST(eps_zero_is_chapter5_crossentropy) {
    Case k = load_case("plain");
    ck_assert(k.eps == 0 && k.loss == k.nll);
    int *t5 = xmalloc((size_t)k.N * sizeof *t5);
    for (int n = 0; n < k.N; n++)
        t5[n] = k.targets[n] == k.pad ? -1 : k.targets[n];
    SmoothedLoss s;
    smoothed_xent_forward(k.logits, k.targets, k.N, k.V, k.pad, 0, &s);
    int valid;
    float ce = crossentropy_forward(k.logits, t5, k.N, k.V, &valid);
    ck_assert_int_eq(valid, s.n_valid);
    ck_assert_float_eq_tol(s.loss, ce, 1e-6f * ce);
    ck_assert_float_eq(s.loss, s.nll);
    size_t nv = (size_t)k.N * k.V;
    float *a = alloc_floats(nv), *b = alloc_floats(nv);
    smoothed_xent_backward(a, k.logits, k.targets, k.N, k.V, k.pad, 0,
                           1.0f / valid);
    crossentropy_backward(b, k.logits, t5, k.N, k.V, 1.0f / valid);
    ck_assert_mem_eq(a, b, nv * sizeof(float));
    free(a);
    free(b);
    free(t5);
    free_case(&k);
}
END_TEST

// ---- finite differences -----------------------------------------------------

typedef struct {
    Case *k;
} LossCtx;

static double loss_of(void *p) {
    Case *k = ((LossCtx *)p)->k;
    return smoothed_xent_forward(k->logits, k->targets, k->N, k->V, k->pad,
                                 k->eps, NULL);
}

// Not "large": a float loss near 45 moves in steps of 4e-6, which a
// difference over 2e-2 turns into 2e-4 of noise; PyTorch checks it.
static const char *FD_CASES[] = {"plain", "smooth", "nopad", "tiny"};

START_TEST(smoothed_xent_finite_differences) {
    Case k = load_case(FD_CASES[_i]);
    size_t nv = (size_t)k.N * k.V;
    float *d = alloc_floats(nv);
    smoothed_xent_backward(d, k.logits, k.targets, k.N, k.V, k.pad, k.eps,
                           1.0f / k.n_valid);
    LossCtx ctx = {&k};
    ck_assert_grad(FD_CASES[_i], loss_of, &ctx, k.logits, d, nv, 1e-2, 1e-5,
                   2e-3);
    free(d);
    free_case(&k);
}
END_TEST

START_TEST(every_row_pad_and_huge_logits) {
    // no row counts: loss, NLL and gradient 0 (PyTorch's mean is nan)
    const float z[6] = {1, 2, 3, -1, 0, 4};
    const int pads[2] = {2, 2};
    SmoothedLoss s = {1, 1, 1};
    ck_assert_float_eq(smoothed_xent_forward(z, pads, 2, 3, 2, 0.1f, &s),
                       0);
    ck_assert(s.loss == 0 && s.nll == 0 && s.n_valid == 0);
    float d[6];
    smoothed_xent_backward(d, z, pads, 2, 3, 2, 0.1f, 1.0f);
    for (int i = 0; i < 6; i++) ck_assert_float_eq(d[i], 0);
    // logits of +-1000: finite, and the right values
    const float big[3] = {1000, 0, -1000};
    const int t0[1] = {0};
    smoothed_xent_forward(big, t0, 1, 3, -1, 0.3f, &s);
    // nll ~ 0; smoothing: 0.3 * (z_y - mean z) = 0.3 * 1000
    ck_assert(fabsf(s.nll) < 1e-6f);
    ck_assert_float_eq_tol(s.loss, 300.0f, 1e-3f);
    smoothed_xent_backward(d, big, t0, 1, 3, -1, 0.3f, 1.0f);
    // softmax = (1, 0, 0); q = (0.8, 0.1, 0.1)
    ck_assert_float_eq_tol(d[0], 0.2f, 1e-6f);
    ck_assert_float_eq_tol(d[1], -0.1f, 1e-6f);
    ck_assert_float_eq_tol(d[2], -0.1f, 1e-6f);
}
END_TEST

// ---- wrong versions: each must fail the comparison above --------------------

// -sum_j q_j log p_j for one row, in double, with q_y = on_y and
// q_j = on_rest for every other class.
static double row_xent(const float *row, int V, int y, double on_y,
                       double on_rest) {
    double mx = row[0], s = 0, all = 0;
    for (int v = 1; v < V; v++) mx = fmax(mx, row[v]);
    for (int v = 0; v < V; v++) s += exp(row[v] - mx);
    double lse = mx + log(s);
    for (int v = 0; v < V; v++) all += lse - row[v];
    return on_y * (lse - row[y]) + on_rest * (all - (lse - row[y]));
}

// The right loss written the slow way, so that the wrong ones below are
// shown to fail for their own mistake and not for this helper's.
static double right_forward(const Case *k) {
    double sum = 0, e = k->eps;
    for (int n = 0; n < k->N; n++)
        if (k->targets[n] != k->pad)
            sum += row_xent(k->logits + (long)n * k->V, k->V, k->targets[n],
                            1 - e + e / k->V, e / k->V);
    return sum / k->n_valid;
}

// Wrong 1: eps spread over the V - 1 other classes, none on the target.
static double wrong_mass_forward(const Case *k) {
    double sum = 0, e = k->eps;
    for (int n = 0; n < k->N; n++)
        if (k->targets[n] != k->pad)
            sum += row_xent(k->logits + (long)n * k->V, k->V, k->targets[n],
                            1 - e, e / (k->V - 1));
    return sum / k->n_valid;
}

// Wrong 2: the sum over the real tokens, not their mean.
static double wrong_sum_forward(const Case *k) {
    return right_forward(k) * k->n_valid;
}

// Wrong 3: pad rows skipped, but the mean taken over all N rows.
static double wrong_all_rows_forward(const Case *k) {
    return right_forward(k) * k->n_valid / k->N;
}

// Wrong 4: scale * (softmax - q) on every row, pad rows included.
static void wrong_unzeroed_backward(float *d, const Case *k) {
    for (int n = 0; n < k->N; n++) {
        const float *row = k->logits + (long)n * k->V;
        float *dr = d + (long)n * k->V;
        double mx = row[0], s = 0;
        for (int v = 1; v < k->V; v++) mx = fmax(mx, row[v]);
        for (int v = 0; v < k->V; v++) s += exp(row[v] - mx);
        for (int v = 0; v < k->V; v++) {
            double q = k->eps / k->V + (v == k->targets[n]) * (1 - k->eps);
            dr[v] = (float)((exp(row[v] - mx) / s - q) / k->n_valid);
        }
    }
}

START_TEST(wrong_versions_fail) {
    int shown[4] = {0};
    for (int c = 0; c < N_CASES; c++) {
        Case k = load_case(CASES[c]);
        ck_assert_msg(close_rel(right_forward(&k), k.loss), "%s helper",
                      CASES[c]);
        if (k.eps > 0) {
            ck_assert_msg(!close_rel(wrong_mass_forward(&k), k.loss),
                          "%s: eps/(V-1) passed", CASES[c]);
            shown[0]++;
        }
        if (k.n_valid > 1) {
            ck_assert(!close_rel(wrong_sum_forward(&k), k.loss));
            shown[1]++;
        }
        if (k.n_valid < k.N) {
            ck_assert(!close_rel(wrong_all_rows_forward(&k), k.loss));
            shown[2]++;
        }
        if (k.n_valid < k.N && k.pad >= 0 && k.pad < k.V) {
            size_t nv = (size_t)k.N * k.V;
            float *d = alloc_floats(nv);
            char msg[512];
            wrong_unzeroed_backward(d, &k);
            ck_assert_msg(!tensor_close("unzeroed", d, k.dlogits, nv,
                                        GRAD_ATOL, 0, msg, sizeof msg),
                          "%s: unzeroed pad rows passed", CASES[c]);
            shown[3]++;
            free(d);
        }
        free_case(&k);
    }
    for (int w = 0; w < 4; w++)
        ck_assert_msg(shown[w] >= 2, "wrong version %d tried on %d cases",
                      w + 1, shown[w]);
}
END_TEST

// ---- masks ------------------------------------------------------------------

START_TEST(pad_mask_counts_and_positions) {
    enum { B = 3, T = 5, PAD = 0 };
    const int tokens[B * T] = {
        4, 7, 2, 0, 0,    // 3 real, then padding
        0, 0, 0, 0, 0,    // all padding
        5, 1, 9, 3, 8,    // no padding
    };
    const int want[B * T] = {1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
    int mask[B * T];
    ck_assert_int_eq(pad_mask(mask, tokens, B, T, PAD), 8);
    ck_assert_mem_eq(mask, want, sizeof want);
    // another pad id: 0 is then a real token
    ck_assert_int_eq(pad_mask(mask, tokens, B, T, 9), 14);
    ck_assert_int_eq(mask[12], 0);
    ck_assert_int_eq(mask[3], 1);
    ck_assert_int_eq(pad_mask(mask, tokens + T, 1, T, PAD), 0);
}
END_TEST

START_TEST(printed_masks) {
    const int tgt[4] = {1, 5, 6, 0};        // <bos> a b <pad>, pad = 0
    const int src[5] = {7, 8, 9, 0, 0};
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    ck_assert_ptr_nonnull(f);
    print_attention_masks(f, tgt, 4, src, 5, 0);
    fclose(f);
    const char *want =
        "decoder self-attention (4 x 4): causal and key padding\n"
        "1...\n"
        "11..\n"
        "111.\n"
        "111.\n"
        "cross-attention (4 x 5): source key padding\n"
        "111..\n"
        "111..\n"
        "111..\n"
        "111..\n";
    ck_assert_str_eq(text, want);
    free(text);
}
END_TEST

Suite *ch7_loss_suite(void) {
    Suite *s = suite_create("ch7_loss");
    TCase *tc = tcase_new("smoothing", "ch7");
    tcase_add_loop_test(tc, smoothed_xent_matches_pytorch, 0, N_CASES);
    tcase_add_test(tc, eps_zero_is_chapter5_crossentropy);
    tcase_add_loop_test(tc, smoothed_xent_finite_differences, 0, 4);
    tcase_add_test(tc, every_row_pad_and_huge_logits);
    tcase_add_test(tc, wrong_versions_fail);
    suite_add_tcase(s, tc);
    tc = tcase_new("masks", "ch7");
    tcase_add_test(tc, pad_mask_counts_and_positions);
    tcase_add_test(tc, printed_masks);
    suite_add_tcase(s, tc);
    return s;
}
