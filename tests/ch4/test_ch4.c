// Tests of chapter 4's own code: LayerNorm, RMSNorm, the residual add, the
// Pre-LN and Post-LN blocks. Expected values come from hand computation,
// the PyTorch fixtures of tests/reference/gen_ch4.py, known parameter
// counts (GPT-2), central finite differences (every backward pass) and,
// for where dropout goes, the block rebuilt from its parts (each tested
// on its own), never from the code under test.
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block.h"
#include "ch4_util.h"
#include "layernorm.h"
#include "threads.h"

// Finite differences as in chapters 2 and 3: float32 forward passes, the
// loss summed in double, a central step of 5e-3. A whole block runs many
// more float operations than one layer: the rounding of its output moves
// a difference quotient by up to 3e-4 (for gradients up to about 9),
// whatever the step, so its absolute tolerance is 4e-4. A gradient that is
// 1% off still fails (checked by scaling each backward's result by 1.01).
#define GC_EPS 5e-3
#define GC_ATOL 1e-4
#define GC_RTOL 2e-3
#define BLOCK_ATOL 4e-4

// ---- LayerNorm and RMSNorm ------------------------------------------------

START_TEST(layernorm_known_values) {
    // [1, 2, 3]: mean 2, variance 2/3, so (x - 2) / sqrt(2/3 + 1e-5)
    const float x[3] = {1, 2, 3}, w[3] = {1, 2, 1}, b[3] = {0, 0, 0.5f};
    float y[3], mean, rstd;
    layernorm_forward(y, &mean, &rstd, x, w, b, 1, 1, 3);
    double s = 1 / sqrt(2.0 / 3 + 1e-5);
    const double want[3] = {-s, 0, s + 0.5};
    ck_assert_close("layernorm [1,2,3]", y, want, 3, 1e-6, 1e-6);
    ck_assert_float_eq_tol(mean, 2.0f, 1e-7f);
    ck_assert_float_eq_tol(rstd, (float)s, 1e-6f);
    // a constant row: x - mean = 0, out = bias (eps keeps rstd finite)
    const float c[3] = {5, 5, 5};
    layernorm_forward(y, &mean, &rstd, c, w, NULL, 1, 1, 3);
    for (int i = 0; i < 3; i++) ck_assert_float_eq(y[i], 0.0f);
    ck_assert_float_eq_tol(rstd, (float)(1 / sqrt(1e-5)), 1e-1f);
    // RMSNorm of [3, 4]: rms = sqrt(12.5 + 1e-6)
    const float r[2] = {3, 4}, one[2] = {1, 1};
    rmsnorm_forward(y, &rstd, r, one, 1, 1, 2);
    double q = 1 / sqrt(12.5 + 1e-6);
    const double rwant[2] = {3 * q, 4 * q};
    ck_assert_close("rmsnorm [3,4]", y, rwant, 2, 1e-7, 1e-6);
}
END_TEST

typedef struct {
    const char *name;
    int B, T, C;
    bool bias, rms;
} NormCase;

static const NormCase NORM_FIXTURES[] = {
    {"ln", 2, 3, 7, true, false},
    {"ln_nobias", 1, 1, 5, false, false},
    {"ln_shifted", 1, 4, 16, true, false},
    {"rms", 2, 3, 7, false, true},
    {"rms_one", 1, 1, 5, false, true},
};

START_TEST(norms_match_pytorch) {
    Fixture *f = fixture_open("ch4_norm.txt");
    for (size_t k = 0; k < sizeof NORM_FIXTURES / sizeof *NORM_FIXTURES;
         k++) {
        const NormCase *c = &NORM_FIXTURES[k];
        const int sx[3] = {c->B, c->T, c->C}, sr[2] = {c->B, c->T};
        size_t n = (size_t)c->B * c->T * c->C, rows = (size_t)c->B * c->T;
        const float *x = fx_get2(f, c->name, "x", sx, 3);
        const float *w = fx_get2(f, c->name, "weight", &c->C, 1);
        const float *b = c->bias ? fx_get2(f, c->name, "bias", &c->C, 1)
                                 : NULL;
        const float *lw = fx_get2(f, c->name, "w", sx, 3);
        float *y = alloc_floats(n), *dx = alloc_floats(n);
        float mean[16], rstd[16], dw[16], db[16];
        // gradients start at 0.5: the backward passes add
        for (size_t i = 0; i < n; i++) dx[i] = 0.5f;
        for (int i = 0; i < c->C; i++) dw[i] = db[i] = 0.5f;
        if (c->rms) {
            rmsnorm_forward(y, rstd, x, w, c->B, c->T, c->C);
            rmsnorm_backward(dx, dw, lw, x, w, rstd, c->B, c->T, c->C);
        } else {
            layernorm_forward(y, mean, rstd, x, w, b, c->B, c->T, c->C);
            layernorm_backward(dx, dw, b ? db : NULL, lw, x, w, mean, rstd,
                               c->B, c->T, c->C);
            ck_assert_close_f(c->name, mean, fx_get2(f, c->name, "mean",
                              sr, 2), rows, 1e-6, 1e-6);
        }
        ck_assert_close_f(c->name, y, fx_get2(f, c->name, "out", sx, 3), n,
                          1e-5, 1e-5);
        ck_assert_close_f(c->name, rstd, fx_get2(f, c->name, "rstd", sr, 2),
                          rows, 1e-6, 1e-5);
        for (size_t i = 0; i < n; i++) dx[i] -= 0.5f;
        for (int i = 0; i < c->C; i++) dw[i] -= 0.5f, db[i] -= 0.5f;
        ck_assert_close_f(c->name, dx, fx_get2(f, c->name, "dx", sx, 3), n,
                          1e-5, 1e-4);
        ck_assert_close_f(c->name, dw, fx_get2(f, c->name, "dweight",
                          &c->C, 1), (size_t)c->C, 1e-5, 1e-4);
        if (b)
            ck_assert_close_f(c->name, db, fx_get2(f, c->name, "dbias",
                              &c->C, 1), (size_t)c->C, 1e-5, 1e-4);
        free(y);
        free(dx);
    }
    fixture_free(f);
}
END_TEST

typedef struct {
    NormCase c;
    float *x, *w, *b, *y, *lw, mean[64], rstd[64];
} NormProblem;

static double norm_loss(void *ctx) {
    NormProblem *p = ctx;
    const NormCase *c = &p->c;
    if (c->rms) rmsnorm_forward(p->y, p->rstd, p->x, p->w, c->B, c->T, c->C);
    else layernorm_forward(p->y, p->mean, p->rstd, p->x, p->w, p->b, c->B,
                           c->T, c->C);
    return weighted_sum(p->y, p->lw, (size_t)c->B * c->T * c->C);
}

START_TEST(norms_backward_finite_differences) {
    const NormCase cases[] = {
        {"ln a", 1, 1, 3, true, false}, {"ln b", 2, 3, 5, false, false},
        {"ln c", 1, 2, 13, true, false}, {"rms a", 1, 1, 3, false, true},
        {"rms b", 2, 3, 5, false, true}, {"rms c", 3, 1, 11, false, true},
    };
    threads_set(1);             // tiny rows: see block_gradcheck
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const NormCase *c = &cases[k];
        size_t n = (size_t)c->B * c->T * c->C, C = (size_t)c->C;
        NormProblem p = {*c, randn_floats(n, 1.0f, 40 + k),
                         randn_floats(C, 0.3f, 50 + k),
                         c->bias ? randn_floats(C, 0.3f, 60 + k) : NULL,
                         alloc_floats(n), randn_floats(n, 1.0f, 70 + k),
                         {0}, {0}};
        for (size_t i = 0; i < C; i++) p.w[i] += 1.0f;
        float *dx = alloc_floats(n), *dw = alloc_floats(C);
        float *db = alloc_floats(C);
        norm_loss(&p);
        if (c->rms) rmsnorm_backward(dx, dw, p.lw, p.x, p.w, p.rstd, c->B,
                                     c->T, c->C);
        else layernorm_backward(dx, dw, p.b ? db : NULL, p.lw, p.x, p.w,
                                p.mean, p.rstd, c->B, c->T, c->C);
        ck_assert_grad(c->name, norm_loss, &p, p.x, dx, n, GC_EPS, GC_ATOL,
                       GC_RTOL);
        ck_assert_grad(c->name, norm_loss, &p, p.w, dw, C, GC_EPS, GC_ATOL,
                       GC_RTOL);
        if (p.b) ck_assert_grad(c->name, norm_loss, &p, p.b, db, C, GC_EPS,
                                GC_ATOL, GC_RTOL);
        free(p.x), free(p.w), free(p.b), free(p.y), free(p.lw);
        free(dx), free(dw), free(db);
    }
}
END_TEST

// layernorm_backward sums dweight and dbias a block of rows at a time:
// with several blocks and a short last one (197 rows), C not a multiple of
// the column tasks (37), on 1 thread and on 2 the same bits, and each
// gradient as its definition gives it in double, added onto what was there.
START_TEST(layernorm_backward_blocks_any_thread_count) {
    enum { N = 197, C = 37 };
    float *x = randn_floats((size_t)N * C, 2.0f, 71);
    float *dy = randn_floats((size_t)N * C, 1.0f, 72);
    float *w = randn_floats(C, 1.0f, 73), *b = randn_floats(C, 1.0f, 74);
    float *y = alloc_floats((size_t)N * C), mean[N], rstd[N];
    layernorm_forward(y, mean, rstd, x, w, b, 1, N, C);
    float *dx[2], dw[2][C], db[2][C];
    for (int t = 0; t < 2; t++) {
        ThreadCounts prev = threads_set(t + 1);
        dx[t] = alloc_floats((size_t)N * C);
        for (int i = 0; i < C; i++) dw[t][i] = db[t][i] = 1.0f;
        layernorm_backward(dx[t], dw[t], db[t], dy, x, w, mean, rstd, 1, N,
                           C);
        threads_restore(prev);
    }
    ck_assert_mem_eq(dx[0], dx[1], (size_t)N * C * sizeof *dx[0]);
    ck_assert_mem_eq(dw[0], dw[1], sizeof dw[0]);
    ck_assert_mem_eq(db[0], db[1], sizeof db[0]);
    for (int i = 0; i < C; i++) {
        double sw = 1.0, sb = 1.0;
        for (int r = 0; r < N; r++) {
            double d = dy[(size_t)r * C + i];
            sw += d * ((x[(size_t)r * C + i] - mean[r]) * (double)rstd[r]);
            sb += d;
        }
        ck_assert_double_eq_tol(dw[0][i], sw, 1e-4 * (1.0 + fabs(sw)));
        ck_assert_double_eq_tol(db[0][i], sb, 1e-4 * (1.0 + fabs(sb)));
    }
    for (int r = 0; r < N; r += 13) {         // dx of some rows
        const float *xr = x + (size_t)r * C, *gr = dy + (size_t)r * C;
        double sg = 0, sgx = 0, xh[C];
        for (int i = 0; i < C; i++) {
            xh[i] = (xr[i] - mean[r]) * (double)rstd[r];
            sg += (double)w[i] * gr[i];
            sgx += (double)w[i] * gr[i] * xh[i];
        }
        for (int i = 0; i < C; i++) {
            double want = rstd[r] * ((double)w[i] * gr[i] - sg / C
                                     - xh[i] * sgx / C);
            ck_assert_double_eq_tol(dx[0][(size_t)r * C + i], want,
                                    1e-4 * (1.0 + fabs(want)));
        }
    }
    free(x), free(dy), free(w), free(b), free(y), free(dx[0]), free(dx[1]);
}
END_TEST

START_TEST(layernorm_output_is_normalised) {
    // weight 1, bias 0: every row has mean 0 and variance 1 (up to eps),
    // whatever its scale and offset
    enum { R = 4, C = 48 };
    float *x = randn_floats(R * C, 1.0f, 80), y[R * C], mean[R], rstd[R];
    float w[C], offs[R] = {0, 100, -3, 0.5f}, scale[R] = {1, 0.5f, 20, 3};
    for (int i = 0; i < C; i++) w[i] = 1;
    for (int r = 0; r < R; r++)
        for (int i = 0; i < C; i++)
            x[r * C + i] = x[r * C + i] * scale[r] + offs[r];
    layernorm_forward(y, mean, rstd, x, w, NULL, 1, R, C);
    for (int r = 0; r < R; r++) {
        double m = 0, v = 0;
        for (int i = 0; i < C; i++) m += y[r * C + i];
        m /= C;
        for (int i = 0; i < C; i++) v += (y[r * C + i] - m) * (y[r * C + i]
                                                              - m);
        v /= C;
        ck_assert_msg(fabs(m) < 1e-5 && fabs(v - 1) < 1e-3, "row %d: mean "
                      "%g var %g", r, m, v);
    }
    free(x);
}
END_TEST

START_TEST(residual_passes_gradient_to_both) {
    const float a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, d[3] = {1, -2, 0.5f};
    float out[3], da[3] = {1, 1, 1}, db[3] = {0, 0, 0};
    residual_forward(out, a, b, 3);
    const float want[3] = {11, 22, 33};
    ck_assert_mem_eq(out, want, sizeof out);
    residual_backward(da, db, d, 3);
    const float wa[3] = {2, -1, 1.5f};
    ck_assert_mem_eq(da, wa, sizeof da);
    ck_assert_mem_eq(db, d, sizeof db);
}
END_TEST

// The sub-layer's add with and without dropout. p = 0: out = x + f, the
// mask is not touched (no mask of ones is written), and the backward pass
// hands back dout itself as f's output's gradient, leaving dy alone.
// p > 0: the mask is drawn, and the backward pass writes (not adds)
// dout * mask into dy and returns dy. dx gets dout added in both.
START_TEST(sublayer_add_passes_through_without_dropout) {
    enum { N = 300 };
    float f[N], x[N], out[N], mask[N], dout[N], dx[N], dy[N];
    for (int i = 0; i < N; i++) {
        f[i] = (float)(i % 13) - 6.0f;
        x[i] = (float)(i % 7) * 0.5f;
        dout[i] = (float)(i % 5) - 2.0f;
    }
    Sublayer s = {.mask = mask};
    Error err;
    Rng rng;
    rng_seed(&rng, 5);
    for (int dropped = 0; dropped < 2; dropped++) {
        float p = dropped ? 0.25f : 0.0f;
        for (int i = 0; i < N; i++) {
            out[i] = f[i], mask[i] = 7.0f, dy[i] = NAN;
            dx[i] = 1.0f;
        }
        ck_assert_int_eq(sublayer_add(out, &s, x, p, dropped ? &rng : NULL,
                                      N, &err), 0);
        int zeros = 0;
        for (int i = 0; i < N; i++) {
            float m = dropped ? mask[i] : 1.0f;
            if (!dropped) ck_assert_float_eq(mask[i], 7.0f);
            else ck_assert(m == 0.0f || m == 1.0f / (1.0f - p));
            zeros += m == 0.0f;
            ck_assert_float_eq(out[i], x[i] + f[i] * m);
        }
        if (dropped) ck_assert(zeros > N / 8 && zeros < N / 2);
        const float *df = sublayer_add_backward(dx, dy, dout, &s, N);
        ck_assert_ptr_eq(df, dropped ? dy : dout);
        for (int i = 0; i < N; i++) {
            ck_assert_float_eq(dx[i], 1.0f + dout[i]);
            if (dropped) ck_assert_float_eq(dy[i], dout[i] * mask[i]);
            else ck_assert(isnan(dy[i]));
        }
    }
    // a p out of range is still refused, and the stream left as it was
    for (int i = 0; i < N; i++) out[i] = f[i];
    ck_assert_int_eq(sublayer_add(out, &s, x, -0.5f, &rng, N, &err), -1);
    ck_assert_str_eq(err.msg, "dropout: p must be in [0, 1), got -0.5");
    ck_assert_mem_eq(out, f, sizeof out);
}
END_TEST

// ---- the blocks -----------------------------------------------------------

typedef struct {
    const char *name;
    bool post;
    int B, T, C, NH, F;
    bool bias;
    float p;          // dropout
    uint64_t seed;    // of the dropout masks
    bool encoder;     // every token sees every other (causal off)
    const int *key_mask;  // (B, T) 1 = real, 0 = padding; NULL: all real
    Activation act;   // the FFN's: GELU_EXACT (a GPT's) or RELU
} BlockCase;

typedef struct {
    BlockCase c;
    float *x, *lw, *out;
    BlockParams prm;
    BlockCache cache;
} BlockProblem;

static void bp_alloc(BlockProblem *p) {
    const BlockCase *c = &p->c;
    Error err;
    ck_assert_msg(block_cache_alloc(&p->cache, c->B, c->T, c->C, c->NH,
                                    c->F, &err) == 0, "%s", err.msg);
    p->out = alloc_floats((size_t)c->B * c->T * c->C);
}

static BlockProblem bp_fixture(const Fixture *f, const BlockCase *c) {
    BlockProblem p = {.c = *c};
    const int sx[3] = {c->B, c->T, c->C};
    char key[64];
    snprintf(key, sizeof key, "%s.x", c->name);
    p.x = fx_copy(f, key, sx, 3);
    snprintf(key, sizeof key, "%s.w", c->name);
    p.lw = fx_copy(f, key, sx, 3);
    p.prm = block_params_fixture(f, c->name, c->C, c->F, c->bias);
    bp_alloc(&p);
    return p;
}

// Weights as gen_ch4.py draws them: LN weights 1 + N(0, 0.2^2), biases
// N(0, 0.1^2), matrices N(0, 1/fan_in).
static BlockProblem bp_random(const BlockCase *c, uint64_t seed) {
    BlockProblem p = {.c = *c};
    size_t n = (size_t)c->B * c->T * c->C;
    p.x = randn_floats(n, 1.0f, seed);
    p.lw = randn_floats(n, 1.0f, seed + 1);
    p.prm = block_params_new(c->C, c->F, c->bias);
    BlockTensor t[BLOCK_MAX_TENSORS];
    int nt = block_tensors(t, &p.prm.w, c->C, c->F);
    Rng rng;
    rng_seed(&rng, seed + 2);
    for (int i = 0; i < nt; i++) {
        bool mat = t[i].ndim == 2, ln = strncmp(t[i].name, "ln_", 3) == 0;
        bool bias = strstr(t[i].name, "bias") != NULL;
        size_t len = (size_t)t[i].shape[0] * (mat ? t[i].shape[1] : 1);
        float std = mat ? 1.0f / sqrtf((float)t[i].shape[1])
                        : bias ? 0.1f : 0.2f;
        rng_normal_fill(&rng, t[i].data, len, ln && !bias ? 1.0f : 0.0f,
                        std);
    }
    bp_alloc(&p);
    return p;
}

static void bp_free(BlockProblem *p) {
    free(p->x);
    free(p->lw);
    free(p->out);
    block_params_free(&p->prm);
    block_cache_free(&p->cache);
}

static double bp_loss(void *ctx) {
    BlockProblem *p = ctx;
    const BlockCase *c = &p->c;
    Rng rng;
    rng_seed(&rng, c->seed);
    Error err;
    int rc = (c->post ? block_postln_forward : block_forward)(
        p->out, &p->cache, p->x, &p->prm.w, c->key_mask, !c->encoder,
        c->act, c->p, &rng, c->B, c->T, c->C, c->NH, c->F, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    return weighted_sum(p->out, p->lw, (size_t)c->B * c->T * c->C);
}

// dx (returned) and p->prm.grads from `times` backward passes after one
// forward pass, all starting at zero.
static float *bp_grads(BlockProblem *p, int times) {
    const BlockCase *c = &p->c;
    size_t n = (size_t)c->B * c->T * c->C;
    float *dx = alloc_floats(n);
    memset(p->prm.grads, 0, p->prm.n * sizeof(float));
    BlockScratch s;
    Error err;
    ck_assert_msg(block_scratch_alloc(&s, c->B, c->T, c->C, c->NH, c->F,
                                      &err) == 0, "%s", err.msg);
    bp_loss(p);
    for (int i = 0; i < times; i++)
        (c->post ? block_postln_backward : block_backward)(
            dx, &p->prm.g, &s, p->lw, &p->cache, p->x, &p->prm.w, c->B,
            c->T, c->C, c->NH, c->F);
    block_scratch_free(&s);
    return dx;
}

static const BlockCase BLOCK_FIXTURES[] = {
    {"pre", false, 2, 3, 8, 2, 20, true, 0, 0, false, NULL, GELU_EXACT},
    {"pre_nobias", false, 1, 4, 6, 3, 12, false, 0, 0, false, NULL, GELU_EXACT},
    {"post", true, 2, 3, 8, 2, 20, true, 0, 0, false, NULL, GELU_EXACT},
    {"post_nobias", true, 1, 4, 6, 3, 12, false, 0, 0, false, NULL, GELU_EXACT},
};

START_TEST(blocks_match_pytorch) {
    Fixture *f = fixture_open("ch4_block.txt");
    for (size_t k = 0; k < sizeof BLOCK_FIXTURES / sizeof *BLOCK_FIXTURES;
         k++) {
        BlockProblem p = bp_fixture(f, &BLOCK_FIXTURES[k]);
        const BlockCase *c = &p.c;
        const int sx[3] = {c->B, c->T, c->C};
        size_t n = (size_t)c->B * c->T * c->C;
        float *dx = bp_grads(&p, 1);
        char what[96];
        snprintf(what, sizeof what, "%s.out", c->name);
        ck_assert_close_f(what, p.out, fx_get2(f, c->name, "out", sx, 3), n,
                          1e-5, 1e-5);
        snprintf(what, sizeof what, "%s.dx", c->name);
        ck_assert_close_f(what, dx, fx_get2(f, c->name, "dx", sx, 3), n,
                          2e-5, 1e-4);
        BlockTensor t[BLOCK_MAX_TENSORS];
        int nt = block_tensors(t, &p.prm.g, c->C, c->F);
        ck_assert_int_eq(nt, c->bias ? 12 : 6);
        for (int i = 0; i < nt; i++) {
            char key[64];
            snprintf(key, sizeof key, "d.%s", t[i].name);
            snprintf(what, sizeof what, "%s.%s", c->name, key);
            size_t len = (size_t)t[i].shape[0]
                         * (t[i].ndim == 2 ? t[i].shape[1] : 1);
            ck_assert_close_f(what, t[i].data, fx_get2(f, c->name, key,
                              t[i].shape, t[i].ndim), len, 2e-5, 1e-4);
        }
        free(dx);
        bp_free(&p);
    }
    fixture_free(f);
}
END_TEST

// Every gradient of the block (input and all parameters) against central
// differences.
static void block_gradcheck(const BlockCase *c, uint64_t seed) {
    // thousands of tiny forward passes: threads would only wait on each
    // other (and on a loaded machine, for a long time)
    ThreadCounts prev = threads_set(1);
    BlockProblem p = bp_random(c, seed);
    float *dx = bp_grads(&p, 1);
    char what[96];
    snprintf(what, sizeof what, "%s dinp", c->name);
    ck_assert_grad(what, bp_loss, &p, p.x, dx,
                   (size_t)c->B * c->T * c->C, GC_EPS, BLOCK_ATOL, GC_RTOL);
    BlockTensor tw[BLOCK_MAX_TENSORS], tg[BLOCK_MAX_TENSORS];
    int nt = block_tensors(tw, &p.prm.w, c->C, c->F);
    block_tensors(tg, &p.prm.g, c->C, c->F);
    for (int i = 0; i < nt; i++) {
        size_t len = (size_t)tw[i].shape[0]
                     * (tw[i].ndim == 2 ? tw[i].shape[1] : 1);
        snprintf(what, sizeof what, "%s %s", c->name, tw[i].name);
        ck_assert_grad(what, bp_loss, &p, tw[i].data, tg[i].data, len,
                       GC_EPS, BLOCK_ATOL, GC_RTOL);
    }
    free(dx);
    bp_free(&p);
    threads_restore(prev);
}

// Sequence 0 has three real tokens and one of padding, sequence 1 two.
static const int PAD_MASK[8] = {1, 1, 1, 0, 1, 1, 0, 0};

// odd shapes: one token, one head, C not a power of two, bias on and
// off, dropout on; an encoder's block (no causal mask) over padded
// sequences, with and without dropout; and a small one with the 2017
// paper's ReLU (small, because ReLU's kink at 0 puts a hidden unit within
// one step of it now and then, where a difference quotient measures
// nothing)
static const BlockCase GC_CASES[] = {
    {"one token", false, 1, 1, 3, 1, 5, true, 0, 0, false, NULL, GELU_EXACT},
    {"one head", false, 2, 3, 5, 1, 7, false, 0, 0, false, NULL, GELU_EXACT},
    {"three heads", false, 1, 4, 6, 3, 10, true, 0, 0, false, NULL, GELU_EXACT},
    {"dropout", false, 2, 2, 6, 2, 9, true, 0.3f, 5, false, NULL, GELU_EXACT},
    {"encoder", false, 2, 4, 6, 2, 10, true, 0, 0, true, PAD_MASK, GELU_EXACT},
    {"encoder dropout", false, 2, 4, 6, 3, 8, false, 0.2f, 7, true,
     PAD_MASK, GELU_EXACT},
    {"encoder relu", false, 1, 2, 4, 2, 6, true, 0, 0, true, NULL, RELU},
};

START_TEST(preln_backward_finite_differences) {
    for (size_t k = 0; k < sizeof GC_CASES / sizeof *GC_CASES; k++)
        block_gradcheck(&GC_CASES[k], 400 + 10 * k);
}
END_TEST

START_TEST(postln_backward_finite_differences) {
    for (size_t k = 0; k < sizeof GC_CASES / sizeof *GC_CASES; k++) {
        BlockCase c = GC_CASES[k];
        c.post = true;
        block_gradcheck(&c, 500 + 10 * k);
    }
}
END_TEST

START_TEST(block_backward_accumulates) {
    for (int post = 0; post < 2; post++) {
        BlockCase c = {"acc", post, 2, 3, 6, 2, 10, true, 0.2f, 3, false, NULL,
                       GELU_EXACT};
        BlockProblem p = bp_random(&c, 600 + post);
        float *dx1 = bp_grads(&p, 1);
        float *g1 = alloc_floats(p.prm.n);
        memcpy(g1, p.prm.grads, p.prm.n * sizeof *g1);
        float *dx2 = bp_grads(&p, 2);
        for (size_t i = 0; i < 36; i++)
            ck_assert_float_eq_tol(dx2[i], 2 * dx1[i],
                                   1e-6f * (1 + fabsf(dx1[i])));
        for (size_t i = 0; i < p.prm.n; i++)
            ck_assert_float_eq_tol(p.prm.grads[i], 2 * g1[i],
                                   1e-6f * (1 + fabsf(g1[i])));
        free(dx1), free(dx2), free(g1);
        bp_free(&p);
    }
}
END_TEST

START_TEST(preln_block_with_zero_projections_is_identity) {
    // With attn.c_proj and mlp.c_proj (and their biases) zero, both
    // branches add exactly 0: out = inp, and the gradient flows through
    // the residual highway alone, dinp = dout to the last bit. Post-LN
    // has no such identity: its output is normalised.
    BlockCase c = {"zero", false, 2, 3, 6, 2, 10, true, 0, 0, false, NULL,
                   GELU_EXACT};
    BlockProblem p = bp_random(&c, 700);
    size_t n = 36;
    memset(p.prm.w.attn_c_proj_w, 0, 36 * sizeof(float));
    memset(p.prm.w.attn_c_proj_b, 0, 6 * sizeof(float));
    memset(p.prm.w.mlp_c_proj_w, 0, 60 * sizeof(float));
    memset(p.prm.w.mlp_c_proj_b, 0, 6 * sizeof(float));
    float *dx = bp_grads(&p, 1);
    ck_assert_mem_eq(p.out, p.x, n * sizeof(float));
    ck_assert_mem_eq(dx, p.lw, n * sizeof(float));
    free(dx);
    c.post = true;                   // every row of the output normalised
    p.c = c;
    bp_loss(&p);
    for (int r = 0; r < 6; r++) {
        const float *y = p.out + 6 * r, *wl = p.prm.w.ln_2_w;
        const float *bl = p.prm.w.ln_2_b;
        double m = 0;
        for (int i = 0; i < 6; i++) m += (y[i] - bl[i]) / wl[i];
        ck_assert_msg(fabs(m) < 1e-5, "row %d: mean %g", r, m / 6);
    }
    bp_free(&p);
}
END_TEST

START_TEST(block_is_causal) {
    // changing the last token changes no earlier output
    for (int post = 0; post < 2; post++) {
        BlockCase c = {"causal", post, 1, 5, 6, 2, 12, true, 0, 0, false, NULL,
                       GELU_EXACT};
        BlockProblem p = bp_random(&c, 710 + post);
        float before[30];
        bp_loss(&p);
        memcpy(before, p.out, sizeof before);
        for (int i = 0; i < 6; i++) p.x[24 + i] += 1.0f;
        bp_loss(&p);
        ck_assert_mem_eq(before, p.out, 24 * sizeof(float));
        ck_assert_int_ne(memcmp(before + 24, p.out + 24, 24), 0);
        bp_free(&p);
    }
}
END_TEST

START_TEST(encoder_block_sees_both_ways_and_ignores_padding) {
    // causal off: the last token reaches every output; a padded token's
    // input reaches no real token's output (to the last bit), only its
    // own row. The same holds for the causal block with the key mask.
    for (int post = 0; post < 2; post++)
        for (int enc = 0; enc < 2; enc++) {
            BlockCase c = {"pad", post, 2, 4, 6, 2, 12, true, 0, 0, enc,
                           PAD_MASK, GELU_EXACT};
            BlockProblem p = bp_random(&c, 720 + 2 * post + enc);
            float before[48];
            bp_loss(&p);
            memcpy(before, p.out, sizeof before);
            for (int i = 0; i < 6; i++) {
                p.x[3 * 6 + i] += 1.0f;   // sequence 0's padding
                p.x[7 * 6 + i] -= 1.0f;   // sequence 1's second pad
            }
            bp_loss(&p);
            for (int r = 0; r < 8; r++) {
                bool same = memcmp(before + 6 * r, p.out + 6 * r,
                                   6 * sizeof(float)) == 0;
                ck_assert_msg(same == (r != 3 && r != 7), "post=%d enc=%d "
                              "row %d %s", post, enc, r,
                              same ? "did not change" : "changed");
            }
            // a real token late in the sequence: earlier rows change
            // only without the causal mask
            memcpy(before, p.out, sizeof before);
            for (int i = 0; i < 6; i++) p.x[2 * 6 + i] += 1.0f;
            bp_loss(&p);
            bool first_same = memcmp(before, p.out, 6 * sizeof(float)) == 0;
            ck_assert_msg(first_same == !enc, "post=%d enc=%d: row 0 %s",
                          post, enc, first_same ? "unchanged" : "changed");
            bp_free(&p);
        }
}
END_TEST

// Runs positions 0 .. T-1 of p's input through block_step one at a time
// (after filling the first `filled` from a forward pass) and compares
// each with the forward pass's output at that position.
static void check_steps(BlockProblem *p, int filled) {
    const BlockCase *c = &p->c;
    int B = c->B, T = c->T, C = c->C;
    bp_loss(p);                       // the reference, into p->out
    BlockStep st;
    Error err;
    ck_assert_int_eq(block_step_alloc(&st, B, T, C, c->NH, c->F, &err), 0);
    if (filled > 0)
        ck_assert_msg(mha_kv_fill(&st.kv, &p->cache.attn, B, filled, &err)
                      == 0, "%s", err.msg);
    float *x = alloc_floats((size_t)B * C), *y = alloc_floats((size_t)B * C);
    for (int t = filled; t < T; t++) {
        for (int b = 0; b < B; b++)
            memcpy(x + (size_t)b * C, p->x + ((size_t)b * T + t) * C,
                   (size_t)C * sizeof *x);
        ck_assert_msg(block_step(y, &st, x, &p->prm.w, c->key_mask, c->act,
                                 B, C, c->NH, c->F, &err) == 0, "%s",
                      err.msg);
        for (int b = 0; b < B; b++) {
            char what[64];
            snprintf(what, sizeof what, "filled %d, b=%d t=%d", filled, b,
                     t);
            ck_assert_close_f(what, y + (size_t)b * C,
                              p->out + ((size_t)b * T + t) * C, (size_t)C,
                              1e-5, 1e-5);
        }
    }
    ck_assert_int_eq(st.kv.len, T);
    ck_assert_int_eq(block_step(y, &st, x, &p->prm.w, NULL, c->act, B, C,
                                c->NH, c->F, &err), -1);
    ck_assert_str_eq(err.msg, "multi-head attention: the KV cache is full "
                     "(4 positions)");
    free(x), free(y);
    block_step_free(&st);
}

START_TEST(block_step_matches_forward) {
    // one position at a time against the cache gives the forward pass's
    // rows: from an empty cache, from one filled by a forward pass, and
    // with padding in the key mask
    BlockCase c = {"step", false, 2, 4, 6, 2, 12, true, 0, 0, false, NULL,
                   GELU_EXACT};
    BlockProblem p = bp_random(&c, 730);
    check_steps(&p, 0);
    check_steps(&p, 3);
    p.c.key_mask = PAD_MASK;
    check_steps(&p, 0);
    check_steps(&p, 2);
    p.c.act = RELU;
    check_steps(&p, 1);
    bp_free(&p);
}
END_TEST

START_TEST(block_ffn_takes_the_activation) {
    // act reaches the FFN of both blocks: with RELU its hidden layer is
    // max(0, h), the FFN's cache records RELU for the backward pass, and
    // the output differs from the one with GELU_EXACT
    for (int post = 0; post < 2; post++) {
        BlockCase c = {"act", post, 2, 3, 6, 2, 10, true, 0, 0, true, NULL,
                       RELU};
        BlockProblem p = bp_random(&c, 760 + post);
        bp_loss(&p);
        ck_assert_int_eq(p.cache.mlp.act, RELU);
        const float *h = p.cache.mlp.h, *a = p.cache.mlp.a;
        for (size_t i = 0; i < 2 * 3 * 10; i++)
            ck_assert_float_eq(a[i], h[i] > 0.0f ? h[i] : 0.0f);
        float relu_out[2 * 3 * 6];
        memcpy(relu_out, p.out, sizeof relu_out);
        p.c.act = GELU_EXACT;
        bp_loss(&p);
        ck_assert_int_eq(p.cache.mlp.act, GELU_EXACT);
        ck_assert(memcmp(relu_out, p.out, sizeof relu_out) != 0);
        bp_free(&p);
    }
}
END_TEST

START_TEST(block_parameter_counts) {
    // GPT-2 small: C = 768, F = 3072, 7,087,872 parameters per block
    ck_assert_uint_eq(block_param_count(768, 3072, true), 7087872);
    // the course notes' config: C = 128, F = 512, bias False: 4C^2 + 2CF + 2C
    ck_assert_uint_eq(block_param_count(128, 512, false), 196864);
    BlockParams p = block_params_new(6, 10, true);
    ck_assert_uint_eq(p.n, 4 * 36 + 2 * 60 + 12 + 7 * 6 + 10);
    BlockTensor t[BLOCK_MAX_TENSORS];
    ck_assert_int_eq(block_tensors(t, &p.w, 6, 10), 12);
    // the views tile the buffer in nanoGPT's order, with no gap
    float *next = p.params;
    for (int i = 0; i < 12; i++) {
        ck_assert_ptr_eq(t[i].data, next);
        next += t[i].shape[0] * (t[i].ndim == 2 ? t[i].shape[1] : 1);
    }
    ck_assert_ptr_eq(next, p.params + p.n);
    ck_assert_str_eq(t[2].name, "attn.c_attn.weight");
    ck_assert_str_eq(t[11].name, "mlp.c_proj.bias");
    block_params_free(&p);
    p = block_params_new(6, 10, false);
    ck_assert_ptr_null(p.w.ln_1_b);
    ck_assert_ptr_null(p.w.mlp_c_proj_b);
    ck_assert_int_eq(block_tensors(t, &p.w, 6, 10), 6);
    ck_assert_str_eq(t[5].name, "mlp.c_proj.weight");
    block_params_free(&p);
}
END_TEST

// Two stacked blocks (the same weights twice, for brevity) run once with
// a cache each and once with layer 1 sharing layer 0's forward-only
// buffers and masks, as a GPT does: outputs and gradients must be the
// same, bit for bit. Sharing is wrong if layer 1's forward overwrites
// something layer 0's backward still reads.
static void two_blocks(BlockProblem *p, BlockCache cache[2], float *out,
                       float *dx) {
    const BlockCase *c = &p->c;
    size_t n = (size_t)c->B * c->T * c->C;
    float *h = alloc_floats(n), *dh = alloc_floats(n);
    Error err;
    BlockScratch s;
    ck_assert_int_eq(block_scratch_alloc(&s, c->B, c->T, c->C, c->NH, c->F,
                                         &err), 0);
    ck_assert_int_eq(block_forward(h, &cache[0], p->x, &p->prm.w, NULL, true,
                                   GELU_EXACT, 0, NULL, c->B, c->T, c->C,
                                   c->NH, c->F, &err), 0);
    ck_assert_int_eq(block_forward(out, &cache[1], h, &p->prm.w, NULL, true,
                                   GELU_EXACT, 0, NULL, c->B, c->T, c->C,
                                   c->NH, c->F, &err), 0);
    memset(p->prm.grads, 0, p->prm.n * sizeof *p->prm.grads);
    block_backward(dh, &p->prm.g, &s, p->lw, &cache[1], h, &p->prm.w, c->B,
                   c->T, c->C, c->NH, c->F);
    block_backward(dx, &p->prm.g, &s, dh, &cache[0], p->x, &p->prm.w, c->B,
                   c->T, c->C, c->NH, c->F);
    block_scratch_free(&s);
    free(h);
    free(dh);
}

START_TEST(block_shared_cache) {
    BlockCase c = {"share", false, 2, 5, 8, 2, 20, true, 0, 0, false, NULL,
                   GELU_EXACT};
    BlockProblem p = bp_random(&c, 900);
    size_t n = (size_t)c.B * c.T * c.C;
    BlockCache own[2], shared[2];
    Error err;
    for (int l = 0; l < 2; l++) {
        ck_assert_int_eq(block_cache_alloc(&own[l], c.B, c.T, c.C, c.NH,
                                           c.F, &err), 0);
        ck_assert_int_eq(block_cache_alloc(&shared[l], c.B, c.T, c.C, c.NH,
                                           c.F, &err), 0);
    }
    block_cache_share_masks(&shared[1], &shared[0]);
    ck_assert_ptr_eq(shared[1].sa.mask, shared[0].sa.mask);
    ck_assert_ptr_eq(shared[1].ff.mask, shared[0].ff.mask);
    float *out1 = alloc_floats(n), *dx1 = alloc_floats(n);
    float *out2 = alloc_floats(n), *dx2 = alloc_floats(n);
    float *g1 = alloc_floats(p.prm.n);
    two_blocks(&p, own, out1, dx1);
    memcpy(g1, p.prm.grads, p.prm.n * sizeof *g1);
    two_blocks(&p, shared, out2, dx2);
    ck_assert_mem_eq(out1, out2, n * sizeof *out1);
    ck_assert_mem_eq(dx1, dx2, n * sizeof *dx1);
    ck_assert_mem_eq(g1, p.prm.grads, p.prm.n * sizeof *g1);
    // shared masks hold ones: dropout would need a mask per layer
    ck_assert_int_eq(block_forward(out2, &shared[1], p.x, &p.prm.w, NULL, true,
                                   GELU_EXACT, 0.1f, NULL, c.B, c.T, c.C,
                                   c.NH, c.F, &err), -1);
    ck_assert_str_eq(err.msg, "transformer block: dropout p = 0.1, but this "
                     "cache shares its dropout masks with other layers "
                     "(allocated for a model without dropout)");
    for (int l = 1; l >= 0; l--) {
        block_cache_free(&own[l]);
        block_cache_free(&shared[l]);
    }
    free(out1), free(dx1), free(out2), free(dx2), free(g1);
    bp_free(&p);
}
END_TEST

START_TEST(block_bad_sizes) {
    BlockCache cache;
    BlockScratch s;
    Error err;
    ck_assert_int_eq(block_cache_alloc(&cache, 2, 3, 6, 4, 10, &err), -1);
    ck_assert_str_eq(err.msg, "transformer block: C=6 channels do not split "
                     "into NH=4 heads");
    ck_assert_int_eq(block_cache_alloc(&cache, 2, 0, 6, 2, 10, &err), -1);
    ck_assert_str_eq(err.msg, "transformer block: every size must be at "
                     "least 1, got B=2 T=0 C=6 NH=2 F=10");
    ck_assert_int_eq(block_scratch_alloc(&s, 1, 1, 4, 2, 0, &err), -1);
    ck_assert_int_eq(block_cache_alloc(&cache, 1 << 16, 1 << 12, 64, 4, 256,
                                       &err), -1);
    ck_assert_msg(strstr(err.msg, "too large") != NULL, "%s", err.msg);
    block_cache_free(&cache);                      // zeroed: a no-op
    block_scratch_free(&s);
    BlockCase c = {"fit", false, 2, 3, 6, 2, 10, true, 0, 0, false, NULL,
                   GELU_EXACT};
    BlockProblem p = bp_random(&c, 800);
    float *big = alloc_floats(4 * 6 * 6);
    ck_assert_int_eq(block_forward(big, &p.cache, p.x, &p.prm.w, NULL, true,
                                   GELU_EXACT, 0, NULL, 2, 4, 6, 2, 10,
                                   &err), -1);
    ck_assert_str_eq(err.msg, "transformer block: the cache cannot hold "
                     "B=2 T=4 C=6 NH=2 F=10: it holds B*T=6 tokens of at "
                     "most T=3, C=6 NH=2 F=10");
    ck_assert_int_eq(block_postln_forward(big, &p.cache, p.x, &p.prm.w, NULL,
                                          true, GELU_EXACT, 0, NULL, 2, 3,
                                          6, 3, 10, &err), -1);
    ck_assert_int_eq(block_forward(big, &p.cache, p.x, &p.prm.w, NULL, true,
                                   GELU_EXACT, 0, NULL, 2, 3, 6, 2, 12,
                                   &err), -1);
    ck_assert_int_eq(block_forward(big, &p.cache, p.x, &p.prm.w, NULL, true,
                                   GELU_EXACT, 1.0f, NULL, 2, 3, 6, 2, 10,
                                   &err), -1);
    ck_assert_str_eq(err.msg, "transformer block: dropout p must be in "
                     "[0, 1), got 1");
    ck_assert_int_eq(block_postln_forward(big, &p.cache, p.x, &p.prm.w, NULL,
                                          true, GELU_EXACT, 0.1f, NULL, 2,
                                          3, 6, 2, 10, &err), -1);
    ck_assert_msg(strstr(err.msg, "random number generator") != NULL, "%s",
                  err.msg);
    // a smaller batch than allocated is fine
    ck_assert_int_eq(block_forward(big, &p.cache, p.x, &p.prm.w, NULL, true,
                                   GELU_EXACT, 0, NULL, 1, 2, 6, 2, 10,
                                   &err), 0);
    free(big);
    bp_free(&p);
}
END_TEST

// ---- capacities in tokens ---------------------------------------------------

// One batch through p: out and dx (returned, freshly allocated) and the
// weight gradients in p->prm.grads, with the cache and scratch given.
static float *bp_run(BlockProblem *p, BlockCache *cache, BlockScratch *s,
                     float **out) {
    const BlockCase *c = &p->c;
    size_t n = (size_t)c->B * c->T * c->C;
    BlockCache own = p->cache;
    p->cache = *cache;
    memset(p->prm.grads, 0, p->prm.n * sizeof(float));
    bp_loss(p);
    float *dx = alloc_floats(n);
    (c->post ? block_postln_backward : block_backward)(
        dx, &p->prm.g, s, p->lw, &p->cache, p->x, &p->prm.w, c->B, c->T,
        c->C, c->NH, c->F);
    *cache = p->cache;
    p->cache = own;
    *out = alloc_floats(n);
    memcpy(*out, p->out, n * sizeof(float));
    return dx;
}

// Where dropout goes. The Pre-LN and Post-LN blocks with dropout 0.3
// against block_with_masks (ch4_util.h): the same block rebuilt from its
// parts, each with p = 0, and the two masks that the forward pass
// recorded. A sub-layer whose dropout is left out records a mask of
// ones: each mask must hold only zeros and 1/(1-p), and the two must
// differ. A mask applied anywhere but to its sub-layer's output, before
// the residual add, gives another output. The gradient checks above see
// neither as long as the backward pass follows the forward: a block
// without its attention's or its FFN's dropout passed them all. The
// rebuilt block runs the same functions on the same numbers in the same
// order, so it agrees to the last bit; the tolerance, 1e-6, only leaves
// room for another order of the same sums, while a mask applied after
// the add instead moves every output, by up to 3.7 here.
#define DROPOUT_TOL 1e-6

START_TEST(block_dropout_masks_each_sublayer) {
    const BlockCase cases[] = {
        {"pre", false, 2, 5, 8, 2, 12, true, 0.3f, 31, false, NULL,
         GELU_EXACT},
        {"pre encoder", false, 2, 4, 6, 3, 8, false, 0.3f, 32, true,
         PAD_MASK, RELU},
        {"post", true, 2, 5, 8, 2, 12, true, 0.3f, 33, false, NULL,
         GELU_EXACT},
        {"post encoder", true, 2, 4, 6, 3, 8, false, 0.3f, 34, true,
         PAD_MASK, RELU},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const BlockCase *c = &cases[k];
        BlockProblem p = bp_random(c, 1000 + 10 * k);
        bp_loss(&p);
        size_t n = (size_t)c->B * c->T * c->C;
        char what[96];
        snprintf(what, sizeof what, "%s: the attention's mask", c->name);
        ck_dropout_mask(what, p.cache.sa.mask, n, c->p);
        snprintf(what, sizeof what, "%s: the FFN's mask", c->name);
        ck_dropout_mask(what, p.cache.ff.mask, n, c->p);
        const float *masks[2] = {p.cache.sa.mask, p.cache.ff.mask};
        ck_masks_differ(c->name, masks, 2, n);
        float *want = alloc_floats(n);
        block_with_masks(want, p.x, &p.prm.w, c->key_mask, !c->encoder,
                         c->act, c->post, p.cache.sa.mask, p.cache.ff.mask,
                         c->B, c->T, c->C, c->NH, c->F);
        snprintf(what, sizeof what, "%s: out", c->name);
        ck_assert_close_f(what, p.out, want, n, DROPOUT_TOL, DROPOUT_TOL);
        free(want);
        bp_free(&p);
    }
}
END_TEST

// A cache and scratch for B=4 x T=16 tokens run batches of 16 x 4, 8 x 8,
// 4 x 16 and 1 x 16, one after another in the same memory, and give bit
// for bit what memory allocated for exactly that batch gives: output,
// input gradient, weight gradients; with padding and dropout, Pre-LN and
// Post-LN. More tokens, or a longer sequence, is refused.
START_TEST(block_capacity_in_tokens) {
    const int shapes[4][2] = {{16, 4}, {8, 8}, {4, 16}, {1, 16}};
    int C = 8, NH = 2, F = 16;
    BlockCache big;
    BlockScratch bigs;
    Error err;
    ck_assert_msg(block_cache_alloc(&big, 4, 16, C, NH, F, &err) == 0
                  && block_scratch_alloc(&bigs, 4, 16, C, NH, F, &err) == 0,
                  "%s", err.msg);
    for (int post = 0; post < 2; post++)
        for (int i = 0; i < 4; i++) {
            int B = shapes[i][0], T = shapes[i][1];
            int *mask = malloc((size_t)B * T * sizeof *mask);
            for (int b = 0; b < B; b++)     // rows of different lengths
                for (int t = 0; t < T; t++)
                    mask[b * T + t] = t < T - b % 3;
            BlockCase c = {"cap", post, B, T, C, NH, F, true, 0.1f,
                           (uint64_t)(40 + i), post, mask, RELU};
            BlockProblem p = bp_random(&c, 900 + (uint64_t)i);
            BlockScratch s;
            ck_assert_msg(block_scratch_alloc(&s, B, T, C, NH, F, &err) == 0,
                          "%s", err.msg);
            float *want_out, *want_dx = bp_run(&p, &p.cache, &s, &want_out);
            float *want_g = alloc_floats(p.prm.n);
            memcpy(want_g, p.prm.grads, p.prm.n * sizeof(float));
            float *out, *dx = bp_run(&p, &big, &bigs, &out);
            size_t bytes = (size_t)B * T * C * sizeof(float);
            ck_assert_msg(memcmp(out, want_out, bytes) == 0
                          && memcmp(dx, want_dx, bytes) == 0
                          && memcmp(p.prm.grads, want_g,
                                    p.prm.n * sizeof(float)) == 0,
                          "post %d, B=%d T=%d differs", post, B, T);
            free(want_out), free(want_dx), free(want_g);
            free(out), free(dx), free(mask);
            block_scratch_free(&s);
            bp_free(&p);
        }
    // 80 tokens, and a sequence of 17: neither fits
    float *x = alloc_floats(5 * 17 * 8), *y = alloc_floats(5 * 17 * 8);
    BlockParams prm = block_params_new(C, F, true);
    ck_assert_int_eq(block_forward(y, &big, x, &prm.w, NULL, true, RELU, 0,
                                   NULL, 5, 16, C, NH, F, &err), -1);
    ck_assert_str_eq(err.msg, "transformer block: the cache cannot hold "
                     "B=5 T=16 C=8 NH=2 F=16: it holds B*T=64 tokens of at "
                     "most T=16, C=8 NH=2 F=16");
    ck_assert_int_eq(block_postln_forward(y, &big, x, &prm.w, NULL, true,
                                          RELU, 0, NULL, 1, 17, C, NH, F,
                                          &err), -1);
    ck_assert_str_eq(err.msg, "transformer block: the cache cannot hold "
                     "B=1 T=17 C=8 NH=2 F=16: it holds B*T=64 tokens of at "
                     "most T=16, C=8 NH=2 F=16");
    free(x), free(y);
    block_params_free(&prm);
    block_cache_free(&big);
    block_scratch_free(&bigs);
}
END_TEST

Suite *ch4_suite(void) {
    Suite *s = suite_create("ch4");
    TCase *tc = tcase_new("norms", "ch4");
    tcase_add_test(tc, layernorm_known_values);
    tcase_add_test(tc, norms_match_pytorch);
    tcase_add_test(tc, norms_backward_finite_differences);
    tcase_add_test(tc, layernorm_output_is_normalised);
    tcase_add_test(tc, layernorm_backward_blocks_any_thread_count);
    tcase_add_test(tc, residual_passes_gradient_to_both);
    tcase_add_test(tc, sublayer_add_passes_through_without_dropout);
    suite_add_tcase(s, tc);
    tc = tcase_new("block", "ch4");
    tcase_add_test(tc, blocks_match_pytorch);
    tcase_add_test(tc, preln_backward_finite_differences);
    tcase_add_test(tc, postln_backward_finite_differences);
    tcase_add_test(tc, block_backward_accumulates);
    tcase_add_test(tc, preln_block_with_zero_projections_is_identity);
    tcase_add_test(tc, block_is_causal);
    tcase_add_test(tc, encoder_block_sees_both_ways_and_ignores_padding);
    tcase_add_test(tc, block_step_matches_forward);
    tcase_add_test(tc, block_ffn_takes_the_activation);
    tcase_add_test(tc, block_parameter_counts);
    tcase_add_test(tc, block_shared_cache);
    tcase_add_test(tc, block_bad_sizes);
    tcase_add_test(tc, block_capacity_in_tokens);
    tcase_add_test(tc, block_dropout_masks_each_sublayer);
    suite_add_tcase(s, tc);
    return s;
}
