// Tests of chapter 7's own code: cross-attention and the Pre-LN decoder
// layer. Expected values come from the PyTorch fixture of
// tests/reference/gen_ch7.py, central finite differences (every backward
// pass), the forward pass itself (decoding steps, masks), and known
// parameter counts, never from the code under test.
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch4/ch4_util.h"
#include "decoder.h"
#include "threads.h"
#include "xattn.h"

// Finite differences as in chapters 2 to 4: float32 forward passes, the
// loss summed in double, a central step of 5e-3. One cross-attention is
// checked as tightly as chapter 2's layers; a whole decoder layer, with
// more rounding in its output, gets chapter 4's block tolerance.
#define GC_EPS 5e-3
#define GC_ATOL 1e-4
#define GC_RTOL 2e-3
#define LAYER_ATOL 4e-4

// ---- cross-attention: a problem and its loss --------------------------------

typedef struct {
    const char *name;
    int B, Tq, Tk, C, NH;
    bool bias;
    const int *src_mask;   // (B, Tk) 1 = real, 0 = padding; NULL: all real
} XCase;

enum { XQW, XQB, XKVW, XKVB, XOW, XOB, XN };   // the six weights
static const char *const XNAMES[XN] = {
    "q_proj.weight", "q_proj.bias", "kv_proj.weight", "kv_proj.bias",
    "out_proj.weight", "out_proj.bias",
};

typedef struct {
    XCase c;
    float *x, *mem, *lw, *out;
    float *w[XN], *g[XN];   // weights and gradients; NULL biases without
    size_t len[XN];
    XattnCache cache;
} XProblem;

static XProblem xp_new(const XCase *c, uint64_t seed) {
    XProblem p = {.c = *c};
    size_t C = (size_t)c->C, nq = (size_t)c->B * c->Tq * C;
    size_t lens[XN] = {C * C, C, 2 * C * C, 2 * C, C * C, C};
    p.x = randn_floats(nq, 1.0f, seed);
    p.mem = randn_floats((size_t)c->B * c->Tk * C, 1.0f, seed + 1);
    p.lw = randn_floats(nq, 1.0f, seed + 2);
    p.out = alloc_floats(nq);
    for (int i = 0; i < XN; i++) {
        bool bias = i % 2 == 1;
        p.len[i] = bias && !c->bias ? 0 : lens[i];
        if (p.len[i] == 0) continue;
        p.w[i] = randn_floats(p.len[i], bias ? 0.1f : 1.0f / sqrtf(c->C),
                              seed + 3 + i);
        p.g[i] = alloc_floats(p.len[i]);
    }
    Error err;
    ck_assert_msg(xattn_cache_alloc(&p.cache, c->B, c->Tq, c->Tk, c->C,
                                    c->NH, &err) == 0, "%s", err.msg);
    return p;
}

static void xp_free(XProblem *p) {
    free(p->x), free(p->mem), free(p->lw), free(p->out);
    for (int i = 0; i < XN; i++) free(p->w[i]), free(p->g[i]);
    xattn_cache_free(&p->cache);
}

static double xp_loss(void *ctx) {
    XProblem *p = ctx;
    const XCase *c = &p->c;
    Error err;
    ck_assert_msg(xattn_forward(p->out, &p->cache, p->x, p->mem, p->w[XQW],
                                p->w[XQB], p->w[XKVW], p->w[XKVB],
                                p->w[XOW], p->w[XOB], c->src_mask, c->B,
                                c->Tq, c->Tk, c->C, c->NH, &err) == 0, "%s",
                  err.msg);
    return weighted_sum(p->out, p->lw, (size_t)c->B * c->Tq * c->C);
}

// One forward pass, then `times` backward passes into dx and dmem (both
// zeroed first, as are the weight gradients).
static void xp_grads(XProblem *p, float *dx, float *dmem, int times) {
    const XCase *c = &p->c;
    memset(dx, 0, (size_t)c->B * c->Tq * c->C * sizeof *dx);
    memset(dmem, 0, (size_t)c->B * c->Tk * c->C * sizeof *dmem);
    for (int i = 0; i < XN; i++)
        if (p->g[i]) memset(p->g[i], 0, p->len[i] * sizeof(float));
    XattnScratch s;
    Error err;
    ck_assert_msg(xattn_scratch_alloc(&s, c->B, c->Tq, c->Tk, c->C, c->NH,
                                      &err) == 0, "%s", err.msg);
    xp_loss(p);
    for (int k = 0; k < times; k++)
        xattn_backward(dx, dmem, p->g[XQW], p->g[XQB], p->g[XKVW],
                       p->g[XKVB], p->g[XOW], p->g[XOB], &s, p->lw,
                       &p->cache, p->x, p->mem, p->w[XQW], p->w[XKVW],
                       p->w[XOW], c->B, c->Tq, c->Tk, c->C, c->NH);
    xattn_scratch_free(&s);
}

// Sequence 0: source 3 real + 2 pad; sequence 1: 5 real.
static const int SRC_2x5[10] = {1, 1, 1, 0, 0, 1, 1, 1, 1, 1};
// Sequence 0: 1 real + 2 pad; sequence 1's source is all padding.
static const int SRC_2x3_EMPTY[6] = {1, 0, 0, 0, 0, 0};
static const int SRC_1x7[7] = {1, 1, 1, 1, 1, 0, 0};

static const XCase X_GC_CASES[] = {
    {"padded, Tq < Tk", 2, 3, 5, 6, 2, true, SRC_2x5},
    {"three heads, Tq > Tk, no bias", 1, 4, 2, 6, 3, false, NULL},
    {"one head, one query", 2, 1, 5, 5, 1, true, SRC_2x5},
    {"a source of padding only", 2, 2, 3, 6, 3, true, SRC_2x3_EMPTY},
    {"odd sizes", 1, 3, 7, 9, 3, true, SRC_1x7},
};

START_TEST(xattn_backward_finite_differences) {
    ThreadCounts prev = threads_set(1);   // tiny products: one thread
    for (size_t k = 0; k < sizeof X_GC_CASES / sizeof *X_GC_CASES; k++) {
        const XCase *c = &X_GC_CASES[k];
        XProblem p = xp_new(c, 100 + 10 * k);
        size_t nq = (size_t)c->B * c->Tq * c->C;
        size_t nk = (size_t)c->B * c->Tk * c->C;
        float *dx = alloc_floats(nq), *dmem = alloc_floats(nk);
        xp_grads(&p, dx, dmem, 1);
        char what[96];
        snprintf(what, sizeof what, "%s: dx", c->name);
        ck_assert_grad(what, xp_loss, &p, p.x, dx, nq, GC_EPS, GC_ATOL,
                       GC_RTOL);
        snprintf(what, sizeof what, "%s: dmemory", c->name);
        ck_assert_grad(what, xp_loss, &p, p.mem, dmem, nk, GC_EPS, GC_ATOL,
                       GC_RTOL);
        for (int i = 0; i < XN; i++) {
            if (!p.w[i]) continue;
            snprintf(what, sizeof what, "%s: %s", c->name, XNAMES[i]);
            ck_assert_grad(what, xp_loss, &p, p.w[i], p.g[i], p.len[i],
                           GC_EPS, GC_ATOL, GC_RTOL);
        }
        free(dx), free(dmem);
        xp_free(&p);
    }
    threads_restore(prev);
}
END_TEST

START_TEST(xattn_backward_accumulates) {
    // two backward passes give twice one: dx, dmemory and the weights'
    // gradients are all added to, never overwritten
    XCase c = {"acc", 2, 3, 5, 6, 2, true, SRC_2x5};
    XProblem p = xp_new(&c, 200);
    float dx1[36], dm1[60], dx2[36], dm2[60], g1[72];
    xp_grads(&p, dx1, dm1, 1);
    memcpy(g1, p.g[XKVW], sizeof g1);
    xp_grads(&p, dx2, dm2, 2);
    for (int i = 0; i < 36; i++)
        ck_assert_float_eq_tol(dx2[i], 2 * dx1[i], 1e-6f);
    for (int i = 0; i < 60; i++)
        ck_assert_float_eq_tol(dm2[i], 2 * dm1[i], 1e-6f);
    for (int i = 0; i < 72; i++)
        ck_assert_float_eq_tol(p.g[XKVW][i], 2 * g1[i], 1e-6f);
    xp_free(&p);
}
END_TEST

START_TEST(xattn_source_of_padding_only) {
    // Sequence 1's source is all padding: its queries see no key, get
    // all-zero weights (no NaN, no -inf stored) and a zero attention
    // output, so without biases a zero out; no gradient reaches its
    // memory or its queries.
    XCase c = {"empty", 2, 2, 3, 6, 3, false, SRC_2x3_EMPTY};
    XProblem p = xp_new(&c, 210);
    float dx[24], dmem[36];
    xp_grads(&p, dx, dmem, 1);
    ck_assert(all_finite(p.out, 24) && all_finite(dx, 24)
              && all_finite(dmem, 36));
    ck_assert(all_finite(p.cache.att, 2 * 3 * 2 * 3));
    for (int i = 0; i < 12; i++) {
        ck_assert_float_eq(p.out[12 + i], 0.0f);
        ck_assert_float_eq(dx[12 + i], 0.0f);
    }
    for (int i = 0; i < 18; i++) ck_assert_float_eq(dmem[18 + i], 0.0f);
    for (int i = 0; i < 3 * 2 * 3; i++)   // sequence 1's weights, all heads
        ck_assert_float_eq(p.cache.att[18 + i], 0.0f);
    // sequence 0 has one real key: every head puts all its weight there
    for (int hq = 0; hq < 3 * 2; hq++)
        ck_assert_float_eq(p.cache.att[3 * hq], 1.0f);
    xp_free(&p);
}
END_TEST

START_TEST(xattn_ignores_padded_memory) {
    // a padded source position's memory row reaches no output: the key
    // mask gives it weight exactly 0
    XCase c = {"pad", 2, 3, 5, 6, 2, true, SRC_2x5};
    XProblem p = xp_new(&c, 220);
    float before[36];
    xp_loss(&p);
    memcpy(before, p.out, sizeof before);
    for (int i = 0; i < 6; i++) {
        p.mem[3 * 6 + i] += 5.0f;      // sequence 0, positions 3 and 4
        p.mem[4 * 6 + i] -= 2.0f;
    }
    xp_loss(&p);
    ck_assert_mem_eq(before, p.out, sizeof before);
    p.mem[2 * 6] += 1.0f;              // a real one does
    xp_loss(&p);
    ck_assert_int_ne(memcmp(before, p.out, 18 * sizeof(float)), 0);
    xp_free(&p);
}
END_TEST

// xattn_step for every query position of p against the source filled
// into a cache allocated for kB x kTk, compared with the forward pass.
static void check_xattn_steps(XProblem *p, int kB, int kTk) {
    const XCase *c = &p->c;
    int B = c->B, Tq = c->Tq, C = c->C;
    xp_loss(p);
    XattnKv kv;
    Error err;
    ck_assert_int_eq(xattn_kv_alloc(&kv, kB, kTk, C, c->NH, &err), 0);
    float x[64], y[64];
    ck_assert_int_eq(xattn_step(y, &kv, x, p->w[XQW], p->w[XQB], p->w[XOW],
                                p->w[XOB], NULL, B, C, c->NH, &err), -1);
    ck_assert_msg(strstr(err.msg, "not filled") != NULL, "%s", err.msg);
    ck_assert_msg(xattn_kv_fill(&kv, p->mem, p->w[XKVW], p->w[XKVB], B,
                                c->Tk, C, &err) == 0, "%s", err.msg);
    for (int t = 0; t < Tq; t++) {
        for (int b = 0; b < B; b++)
            memcpy(x + b * C, p->x + ((size_t)b * Tq + t) * C,
                   (size_t)C * sizeof *x);
        ck_assert_msg(xattn_step(y, &kv, x, p->w[XQW], p->w[XQB], p->w[XOW],
                                 p->w[XOB], c->src_mask, B, C, c->NH, &err)
                      == 0, "%s", err.msg);
        for (int b = 0; b < B; b++)
            ck_assert_close_f(c->name, y + b * C,
                              p->out + ((size_t)b * Tq + t) * C, (size_t)C,
                              1e-5, 1e-5);
    }
    xattn_kv_free(&kv);
}

START_TEST(xattn_step_matches_forward) {
    // one query at a time against the source's keys and values, filled
    // once, gives the forward pass's rows: with padding, with a source
    // of padding only, in a cache with room to spare
    XCase c = {"step", 2, 4, 5, 6, 2, true, SRC_2x5};
    XProblem p = xp_new(&c, 230);
    check_xattn_steps(&p, 2, 5);
    check_xattn_steps(&p, 3, 8);
    xp_free(&p);
    XCase e = {"step empty", 2, 2, 3, 6, 3, false, SRC_2x3_EMPTY};
    p = xp_new(&e, 240);
    check_xattn_steps(&p, 2, 3);
    xp_free(&p);
}
END_TEST

START_TEST(xattn_bad_sizes) {
    XattnCache cache;
    XattnKv kv;
    Error err;
    ck_assert_int_eq(xattn_cache_alloc(&cache, 2, 3, 4, 6, 4, &err), -1);
    ck_assert_str_eq(err.msg, "cross-attention: C=6 channels do not split "
                     "into NH=4 heads");
    ck_assert_int_eq(xattn_cache_alloc(&cache, 2, 3, 0, 6, 2, &err), -1);
    ck_assert_str_eq(err.msg, "cross-attention: every size must be at "
                     "least 1, got B=2 Tq=3 Tk=0 C=6 NH=2");
    ck_assert_int_eq(xattn_cache_alloc(&cache, 1 << 16, 1 << 10, 1 << 10,
                                       64, 4, &err), -1);
    ck_assert_msg(strstr(err.msg, "too large") != NULL, "%s", err.msg);
    xattn_cache_free(&cache);                 // zeroed: a no-op
    // the tables, counted by hand for B=2 Tq=3 Tk=5 C=6 NH=2: q-sized
    // tensors 36 floats, kv 120, the weights 2*2*3*5 = 60 (the heads are
    // read in place: no split copies)
    ck_assert_uint_eq(xattn_cache_floats(2, 3, 5, 6, 2), 36 + 120 + 60 + 36);
    ck_assert_uint_eq(xattn_scratch_floats(2, 3, 5, 6, 2),
                      36 + 60 + 36 + 120);
    ck_assert_uint_eq(xattn_kv_floats(2, 5, 6, 2),
                      120 + 60 + 60 + 12 + 20 + 12);
    XCase c = {"fit", 2, 3, 5, 6, 2, true, NULL};
    XProblem p = xp_new(&c, 250);
    ck_assert_int_eq(xattn_forward(p.out, &p.cache, p.x, p.mem, p.w[XQW],
                                   NULL, p.w[XKVW], NULL, p.w[XOW], NULL,
                                   NULL, 2, 3, 6, 6, 2, &err), -1);
    ck_assert_str_eq(err.msg, "cross-attention: the cache cannot hold B=2 "
                     "Tq=3 Tk=6 C=6 NH=2: it holds B*Tq=6 queries of at "
                     "most Tq=3 and B*Tk=10 keys of at most Tk=5, C=6 "
                     "NH=2");
    // smaller than allocated is fine
    ck_assert_int_eq(xattn_forward(p.out, &p.cache, p.x, p.mem, p.w[XQW],
                                   NULL, p.w[XKVW], NULL, p.w[XOW], NULL,
                                   NULL, 1, 2, 4, 6, 2, &err), 0);
    ck_assert_int_eq(xattn_kv_alloc(&kv, 2, 4, 6, 2, &err), 0);
    ck_assert_int_eq(xattn_kv_fill(&kv, p.mem, p.w[XKVW], NULL, 2, 5, 6,
                                   &err), -1);
    ck_assert_str_eq(err.msg, "cross-attention: B=2 Tk=5 C=6 does not fit "
                     "the source cache, allocated for B<=2 Tk<=4 C=6");
    ck_assert_int_eq(xattn_kv_fill(&kv, p.mem, p.w[XKVW], NULL, 1, 4, 6,
                                   &err), 0);
    float y[12];
    ck_assert_int_eq(xattn_step(y, &kv, p.x, p.w[XQW], NULL, p.w[XOW], NULL,
                                NULL, 2, 6, 2, &err), -1);   // filled for 1
    xattn_kv_free(&kv);
    xp_free(&p);
}
END_TEST

// ---- capacities in tokens ---------------------------------------------------

// The batches of the capacity tests, (B, Tq, Tk), run in memory for
// B=4 x Tq=16 queries and B=4 x Tk=12 keys.
static const int CAP_SHAPES[4][3] = {
    {16, 4, 3}, {8, 8, 6}, {4, 16, 12}, {1, 16, 12}};

// A source mask of rows of different lengths, (B, Tk), at least 1 real.
static int *cap_mask(int B, int Tk) {
    int *m = malloc((size_t)B * Tk * sizeof *m);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < Tk; t++) m[b * Tk + t] = t < Tk - b % 3;
    return m;
}

// xp_grads (once) with the cache and scratch given: p's own cache is put
// back after.
static void xp_run(XProblem *p, XattnCache *cache, XattnScratch *s,
                   float *dx, float *dmem) {
    const XCase *c = &p->c;
    XattnCache own = p->cache;
    p->cache = *cache;
    memset(dx, 0, (size_t)c->B * c->Tq * c->C * sizeof *dx);
    memset(dmem, 0, (size_t)c->B * c->Tk * c->C * sizeof *dmem);
    for (int i = 0; i < XN; i++)
        if (p->g[i]) memset(p->g[i], 0, p->len[i] * sizeof(float));
    xp_loss(p);
    xattn_backward(dx, dmem, p->g[XQW], p->g[XQB], p->g[XKVW], p->g[XKVB],
                   p->g[XOW], p->g[XOB], s, p->lw, &p->cache, p->x, p->mem,
                   p->w[XQW], p->w[XKVW], p->w[XOW], c->B, c->Tq, c->Tk,
                   c->C, c->NH);
    *cache = p->cache;
    p->cache = own;
}

// Memory for 4 x 16 queries and 4 x 12 keys runs batches of more, shorter
// rows in turn, bit for bit as memory allocated for each: output, dx,
// dmemory and every weight gradient. Too many tokens on either side, or
// too long a sequence, is refused.
START_TEST(xattn_capacity_in_tokens) {
    int C = 8, NH = 2;
    XattnCache big;
    XattnScratch bigs;
    Error err;
    ck_assert_msg(xattn_cache_alloc(&big, 4, 16, 12, C, NH, &err) == 0
                  && xattn_scratch_alloc(&bigs, 4, 16, 12, C, NH, &err)
                     == 0, "%s", err.msg);
    for (int i = 0; i < 4; i++) {
        int B = CAP_SHAPES[i][0], Tq = CAP_SHAPES[i][1];
        int Tk = CAP_SHAPES[i][2];
        int *mask = cap_mask(B, Tk);
        XCase c = {"cap", B, Tq, Tk, C, NH, true, mask};
        XProblem p = xp_new(&c, 300 + (uint64_t)i);
        XattnScratch s;
        ck_assert_msg(xattn_scratch_alloc(&s, B, Tq, Tk, C, NH, &err) == 0,
                      "%s", err.msg);
        size_t nq = (size_t)B * Tq * C, nk = (size_t)B * Tk * C;
        float *want = alloc_floats(2 * nq + nk), *got = alloc_floats(nq);
        float *dx = alloc_floats(nq), *dmem = alloc_floats(nk);
        float *wg[XN] = {0};
        xp_run(&p, &p.cache, &s, want + nq, want + 2 * nq);
        memcpy(want, p.out, nq * sizeof(float));
        for (int k = 0; k < XN; k++)
            if (p.g[k]) {
                wg[k] = alloc_floats(p.len[k]);
                memcpy(wg[k], p.g[k], p.len[k] * sizeof(float));
            }
        xp_run(&p, &big, &bigs, dx, dmem);
        memcpy(got, p.out, nq * sizeof(float));
        ck_assert_msg(memcmp(got, want, nq * sizeof(float)) == 0
                      && memcmp(dx, want + nq, nq * sizeof(float)) == 0
                      && memcmp(dmem, want + 2 * nq, nk * sizeof(float))
                         == 0, "B=%d Tq=%d Tk=%d differs", B, Tq, Tk);
        for (int k = 0; k < XN; k++)
            if (p.g[k])
                ck_assert_msg(memcmp(p.g[k], wg[k], p.len[k] * sizeof(float))
                              == 0, "B=%d Tq=%d: %s differs", B, Tq,
                              XNAMES[k]);
        for (int k = 0; k < XN; k++) free(wg[k]);
        free(want), free(got), free(dx), free(dmem), free(mask);
        xattn_scratch_free(&s);
        xp_free(&p);
    }
    // 8 x 8 queries fit, but 8 x 7 = 56 keys do not; 5 x 16 queries, and
    // 13 keys, do not either
    XCase c = {"over", 8, 16, 13, C, NH, true, NULL};
    XProblem p = xp_new(&c, 350);
    const int over[3][3] = {{8, 8, 7}, {5, 16, 2}, {1, 4, 13}};
    const char *const msg[3] = {
        "cross-attention: the cache cannot hold B=8 Tq=8 Tk=7 C=8 NH=2: it "
        "holds B*Tq=64 queries of at most Tq=16 and B*Tk=48 keys of at "
        "most Tk=12, C=8 NH=2",
        "cross-attention: the cache cannot hold B=5 Tq=16 Tk=2 C=8 NH=2: it "
        "holds B*Tq=64 queries of at most Tq=16 and B*Tk=48 keys of at "
        "most Tk=12, C=8 NH=2",
        "cross-attention: the cache cannot hold B=1 Tq=4 Tk=13 C=8 NH=2: it "
        "holds B*Tq=64 queries of at most Tq=16 and B*Tk=48 keys of at "
        "most Tk=12, C=8 NH=2"};
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(xattn_forward(p.out, &big, p.x, p.mem, p.w[XQW],
                                       NULL, p.w[XKVW], NULL, p.w[XOW], NULL,
                                       NULL, over[k][0], over[k][1],
                                       over[k][2], C, NH, &err), -1);
        ck_assert_str_eq(err.msg, msg[k]);
    }
    xp_free(&p);
    xattn_cache_free(&big);
    xattn_scratch_free(&bigs);
}
END_TEST

// ---- the decoder layer ------------------------------------------------------

typedef struct {
    const char *name;
    int B, T, Tk, C, NH, F;
    bool bias;
    Activation act;
    float p;                // dropout
    uint64_t seed;          // of the dropout masks
    const int *tgt_mask;    // (B, T) or NULL
    const int *src_mask;    // (B, Tk) or NULL
} DecCase;

typedef struct {
    DecCase c;
    float *x, *mem, *lw, *out;
    float *params, *grads;
    DecoderWeights w, g;
    size_t n;
    int *tgt, *src;         // masks read from a fixture (else NULL)
    DecoderCache cache;
} DecProblem;

static void dp_alloc(DecProblem *p) {
    const DecCase *c = &p->c;
    p->n = decoder_param_count(c->C, c->F, c->bias);
    p->params = alloc_floats(p->n);
    p->grads = alloc_floats(p->n);
    float *end = decoder_weights_point(&p->w, p->params, c->C, c->F,
                                       c->bias);
    ck_assert_ptr_eq(end, p->params + p->n);
    decoder_weights_point(&p->g, p->grads, c->C, c->F, c->bias);
    p->out = alloc_floats((size_t)c->B * c->T * c->C);
    Error err;
    ck_assert_msg(decoder_cache_alloc(&p->cache, c->B, c->T, c->Tk, c->C,
                                      c->NH, c->F, &err) == 0, "%s",
                  err.msg);
}

// Weights as gen_ch7.py draws them: LN weights 1 + N(0, 0.2^2), biases
// N(0, 0.1^2), matrices N(0, 1/fan_in).
static DecProblem dp_random(const DecCase *c, uint64_t seed) {
    DecProblem p = {.c = *c};
    size_t nx = (size_t)c->B * c->T * c->C;
    p.x = randn_floats(nx, 1.0f, seed);
    p.mem = randn_floats((size_t)c->B * c->Tk * c->C, 1.0f, seed + 1);
    p.lw = randn_floats(nx, 1.0f, seed + 2);
    dp_alloc(&p);
    BlockTensor t[DECODER_MAX_TENSORS];
    int nt = decoder_tensors(t, &p.w, c->C, c->F);
    Rng rng;
    rng_seed(&rng, seed + 3);
    for (int i = 0; i < nt; i++) {
        bool mat = t[i].ndim == 2, ln = strncmp(t[i].name, "ln_", 3) == 0;
        bool bias = strstr(t[i].name, "bias") != NULL;
        size_t len = (size_t)t[i].shape[0] * (mat ? t[i].shape[1] : 1);
        float std = mat ? 1.0f / sqrtf((float)t[i].shape[1])
                        : bias ? 0.1f : 0.2f;
        rng_normal_fill(&rng, t[i].data, len, ln && !bias ? 1.0f : 0.0f,
                        std);
    }
    return p;
}

static DecProblem dp_fixture(const Fixture *f, const DecCase *c) {
    DecProblem p = {.c = *c};
    const int sx[3] = {c->B, c->T, c->C}, sm[3] = {c->B, c->Tk, c->C};
    char key[96];
    snprintf(key, sizeof key, "%s.x", c->name);
    p.x = fx_copy(f, key, sx, 3);
    snprintf(key, sizeof key, "%s.memory", c->name);
    p.mem = fx_copy(f, key, sm, 3);
    snprintf(key, sizeof key, "%s.w", c->name);
    p.lw = fx_copy(f, key, sx, 3);
    snprintf(key, sizeof key, "%s.tgt_mask", c->name);
    p.c.tgt_mask = p.tgt = fx_mask(f, key, c->B, c->T);
    snprintf(key, sizeof key, "%s.src_mask", c->name);
    p.c.src_mask = p.src = fx_mask(f, key, c->B, c->Tk);
    dp_alloc(&p);
    BlockTensor t[DECODER_MAX_TENSORS];
    int nt = decoder_tensors(t, &p.w, c->C, c->F);
    for (int i = 0; i < nt; i++) {
        size_t len = (size_t)t[i].shape[0] * (t[i].ndim == 2 ? t[i].shape[1]
                                                             : 1);
        memcpy(t[i].data, fx_get2(f, c->name, t[i].name, t[i].shape,
                                  t[i].ndim), len * sizeof(float));
    }
    return p;
}

static void dp_free(DecProblem *p) {
    free(p->x), free(p->mem), free(p->lw), free(p->out);
    free(p->params), free(p->grads), free(p->tgt), free(p->src);
    decoder_cache_free(&p->cache);
}

static double dp_loss(void *ctx) {
    DecProblem *p = ctx;
    const DecCase *c = &p->c;
    Rng rng;
    rng_seed(&rng, c->seed);
    Error err;
    ck_assert_msg(decoder_forward(p->out, &p->cache, p->x, p->mem, &p->w,
                                  c->tgt_mask, c->src_mask, c->act, c->p,
                                  &rng, c->B, c->T, c->Tk, c->C, c->NH, c->F,
                                  &err) == 0, "%s", err.msg);
    return weighted_sum(p->out, p->lw, (size_t)c->B * c->T * c->C);
}

// One forward pass and `times` backward passes into dx and dmem and the
// gradient buffer, all zeroed first.
static void dp_grads(DecProblem *p, float *dx, float *dmem, int times) {
    const DecCase *c = &p->c;
    memset(dx, 0, (size_t)c->B * c->T * c->C * sizeof *dx);
    memset(dmem, 0, (size_t)c->B * c->Tk * c->C * sizeof *dmem);
    memset(p->grads, 0, p->n * sizeof *p->grads);
    DecoderScratch s;
    Error err;
    ck_assert_msg(decoder_scratch_alloc(&s, c->B, c->T, c->Tk, c->C, c->NH,
                                        c->F, &err) == 0, "%s", err.msg);
    dp_loss(p);
    for (int k = 0; k < times; k++)
        decoder_backward(dx, dmem, &p->g, &s, p->lw, &p->cache, p->x,
                         p->mem, &p->w, c->B, c->T, c->Tk, c->C, c->NH,
                         c->F);
    decoder_scratch_free(&s);
}

static const DecCase DEC_FIXTURES[] = {
    {"relu", 2, 4, 5, 8, 2, 20, true, RELU, 0, 0, NULL, NULL},
    {"gelu_nobias", 2, 3, 6, 6, 3, 12, false, GELU_EXACT, 0, 0, NULL,
     NULL},
};

START_TEST(decoder_matches_pytorch) {
    Fixture *f = fixture_open("ch7_decoder.txt");
    for (size_t k = 0; k < sizeof DEC_FIXTURES / sizeof *DEC_FIXTURES; k++) {
        DecProblem p = dp_fixture(f, &DEC_FIXTURES[k]);
        const DecCase *c = &p.c;
        const int sx[3] = {c->B, c->T, c->C}, sm[3] = {c->B, c->Tk, c->C};
        size_t nx = (size_t)c->B * c->T * c->C;
        size_t nm = (size_t)c->B * c->Tk * c->C;
        float *dx = alloc_floats(nx), *dmem = alloc_floats(nm);
        dp_grads(&p, dx, dmem, 1);
        char what[96];
        snprintf(what, sizeof what, "%s.out", c->name);
        ck_assert_close_f(what, p.out, fx_get2(f, c->name, "out", sx, 3), nx,
                          1e-5, 1e-5);
        snprintf(what, sizeof what, "%s.dx", c->name);
        ck_assert_close_f(what, dx, fx_get2(f, c->name, "dx", sx, 3), nx,
                          2e-5, 1e-4);
        snprintf(what, sizeof what, "%s.dmemory", c->name);
        ck_assert_close_f(what, dmem, fx_get2(f, c->name, "dmemory", sm, 3),
                          nm, 2e-5, 1e-4);
        BlockTensor t[DECODER_MAX_TENSORS];
        int nt = decoder_tensors(t, &p.g, c->C, c->F);
        ck_assert_int_eq(nt, c->bias ? 20 : 10);
        for (int i = 0; i < nt; i++) {
            char key[64];
            snprintf(key, sizeof key, "d.%s", t[i].name);
            snprintf(what, sizeof what, "%s.%s", c->name, key);
            size_t len = (size_t)t[i].shape[0]
                         * (t[i].ndim == 2 ? t[i].shape[1] : 1);
            ck_assert_close_f(what, t[i].data, fx_get2(f, c->name, key,
                              t[i].shape, t[i].ndim), len, 2e-5, 1e-4);
        }
        free(dx), free(dmem);
        dp_free(&p);
    }
    fixture_free(f);
}
END_TEST

// Target: sequence 0 has 4 real positions, sequence 1 two and 2 pads.
static const int TGT_2x4[8] = {1, 1, 1, 1, 1, 1, 0, 0};
// Source: sequence 0 has 2 real tokens and 1 pad, sequence 1 three.
static const int SRC_2x3[6] = {1, 1, 0, 1, 1, 1};
static const int TGT_2x3[6] = {1, 1, 0, 1, 1, 1};

// Every gradient of the layer (input, memory, all parameters) against
// central differences. GELU mostly: ReLU's kink at 0 puts a hidden unit
// within one step of it now and then, where a difference quotient
// measures nothing, so ReLU gets one small case (and the fixture).
static const DecCase DEC_GC_CASES[] = {
    {"padded both", 2, 4, 3, 6, 2, 10, true, GELU_EXACT, 0, 0, TGT_2x4,
     SRC_2x3},
    {"three heads, no bias", 2, 3, 5, 6, 3, 8, false, GELU_TANH, 0, 0,
     TGT_2x3, SRC_2x5},
    {"one position", 1, 1, 2, 3, 1, 5, true, GELU_EXACT, 0, 0, NULL, NULL},
    {"source of padding only", 2, 2, 3, 6, 2, 7, true, GELU_EXACT, 0, 0,
     NULL, SRC_2x3_EMPTY},
    {"relu", 1, 2, 3, 4, 2, 6, true, RELU, 0, 0, NULL, SRC_2x3},
    {"dropout", 2, 3, 3, 6, 2, 9, true, GELU_EXACT, 0.25f, 5, TGT_2x3,
     SRC_2x3},
};

START_TEST(decoder_backward_finite_differences) {
    ThreadCounts prev = threads_set(1);
    for (size_t k = 0; k < sizeof DEC_GC_CASES / sizeof *DEC_GC_CASES;
         k++) {
        const DecCase *c = &DEC_GC_CASES[k];
        DecProblem p = dp_random(c, 300 + 10 * k);
        size_t nx = (size_t)c->B * c->T * c->C;
        size_t nm = (size_t)c->B * c->Tk * c->C;
        float *dx = alloc_floats(nx), *dmem = alloc_floats(nm);
        dp_grads(&p, dx, dmem, 1);
        char what[96];
        snprintf(what, sizeof what, "%s: dx", c->name);
        ck_assert_grad(what, dp_loss, &p, p.x, dx, nx, GC_EPS, LAYER_ATOL,
                       GC_RTOL);
        snprintf(what, sizeof what, "%s: dmemory", c->name);
        ck_assert_grad(what, dp_loss, &p, p.mem, dmem, nm, GC_EPS,
                       LAYER_ATOL, GC_RTOL);
        BlockTensor tw[DECODER_MAX_TENSORS], tg[DECODER_MAX_TENSORS];
        int nt = decoder_tensors(tw, &p.w, c->C, c->F);
        decoder_tensors(tg, &p.g, c->C, c->F);
        for (int i = 0; i < nt; i++) {
            size_t len = (size_t)tw[i].shape[0]
                         * (tw[i].ndim == 2 ? tw[i].shape[1] : 1);
            snprintf(what, sizeof what, "%s: %s", c->name, tw[i].name);
            ck_assert_grad(what, dp_loss, &p, tw[i].data, tg[i].data, len,
                           GC_EPS, LAYER_ATOL, GC_RTOL);
        }
        free(dx), free(dmem);
        dp_free(&p);
    }
    threads_restore(prev);
}
END_TEST

START_TEST(decoder_backward_accumulates) {
    // dmemory above all: a decoder of L layers adds L shares into it
    DecCase c = {"acc", 2, 4, 3, 6, 2, 10, true, RELU, 0.2f, 3, TGT_2x4,
                 SRC_2x3};
    DecProblem p = dp_random(&c, 400);
    float dx1[48], dm1[36], dx2[48], dm2[36];
    float *g1 = alloc_floats(p.n);
    dp_grads(&p, dx1, dm1, 1);
    memcpy(g1, p.grads, p.n * sizeof *g1);
    dp_grads(&p, dx2, dm2, 2);
    for (int i = 0; i < 48; i++)
        ck_assert_float_eq_tol(dx2[i], 2 * dx1[i],
                               1e-6f * (1 + fabsf(dx1[i])));
    for (int i = 0; i < 36; i++)
        ck_assert_float_eq_tol(dm2[i], 2 * dm1[i],
                               1e-6f * (1 + fabsf(dm1[i])));
    for (size_t i = 0; i < p.n; i++)
        ck_assert_float_eq_tol(p.grads[i], 2 * g1[i],
                               1e-6f * (1 + fabsf(g1[i])));
    free(g1);
    dp_free(&p);
}
END_TEST

START_TEST(decoder_masks) {
    DecCase c = {"masks", 2, 4, 3, 6, 2, 10, true, RELU, 0, 0, TGT_2x4,
                 SRC_2x3};
    DecProblem p = dp_random(&c, 410);
    float before[48];
    dp_loss(&p);
    memcpy(before, p.out, sizeof before);
    // a padded source token's memory row (sequence 0, position 2)
    // changes no output at all
    for (int i = 0; i < 6; i++) p.mem[2 * 6 + i] += 3.0f;
    dp_loss(&p);
    ck_assert_mem_eq(before, p.out, sizeof before);
    // target position t + 1 = 2 changes no output at positions 0 and 1,
    // in either sequence, but changes its own
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 6; i++) p.x[(b * 4 + 2) * 6 + i] += 1.0f;
    dp_loss(&p);
    for (int b = 0; b < 2; b++) {
        ck_assert_mem_eq(before + b * 24, p.out + b * 24,
                         12 * sizeof(float));
        ck_assert_int_ne(memcmp(before + b * 24 + 12, p.out + b * 24 + 12,
                                6 * sizeof(float)), 0);
    }
    // a real source token changes every output of its sentence
    memcpy(before, p.out, sizeof before);
    p.mem[0] += 1.0f;
    dp_loss(&p);
    for (int t = 0; t < 4; t++)
        ck_assert_int_ne(memcmp(before + t * 6, p.out + t * 6,
                                6 * sizeof(float)), 0);
    ck_assert_mem_eq(before + 24, p.out + 24, 24 * sizeof(float));
    dp_free(&p);
}
END_TEST

START_TEST(decoder_source_of_padding_only) {
    // sequence 1's source is all padding: cross-attention adds exactly 0
    // there (no bias), everything stays finite, and no gradient reaches
    // its memory
    DecCase c = {"empty", 2, 2, 3, 6, 2, 7, false, RELU, 0, 0, NULL,
                 SRC_2x3_EMPTY};
    DecProblem p = dp_random(&c, 420);
    float dx[24], dmem[36];
    dp_grads(&p, dx, dmem, 1);
    ck_assert(all_finite(p.out, 24) && all_finite(dx, 24)
              && all_finite(dmem, 36) && all_finite(p.grads, p.n));
    ck_assert_mem_eq(p.cache.res2 + 12, p.cache.res1 + 12,
                     12 * sizeof(float));
    for (int i = 18; i < 36; i++) ck_assert_float_eq(dmem[i], 0.0f);
    dp_free(&p);
}
END_TEST

// Runs p's target positions through decoder_step one at a time (after
// taking the first `filled` positions' self-attention keys and values
// from the forward pass) and compares each with the forward pass.
static void check_decoder_steps(DecProblem *p, int filled) {
    const DecCase *c = &p->c;
    int B = c->B, T = c->T, C = c->C;
    dp_loss(p);
    DecoderStep st;
    Error err;
    ck_assert_int_eq(decoder_step_alloc(&st, B, T, c->Tk, C, c->NH, c->F,
                                        &err), 0);
    ck_assert_msg(xattn_kv_fill(&st.cross_kv, p->mem,
                                p->w.cross_attn_kv_proj_w,
                                p->w.cross_attn_kv_proj_b, B, c->Tk, C,
                                &err) == 0, "%s", err.msg);
    if (filled > 0)
        ck_assert_msg(mha_kv_fill(&st.self_kv, &p->cache.self_attn, B,
                                  filled, &err) == 0, "%s", err.msg);
    float x[64], y[64];
    for (int t = filled; t < T; t++) {
        for (int b = 0; b < B; b++)
            memcpy(x + b * C, p->x + ((size_t)b * T + t) * C,
                   (size_t)C * sizeof *x);
        ck_assert_msg(decoder_step(y, &st, x, &p->w, c->tgt_mask,
                                   c->src_mask, c->act, B, C, c->NH, c->F,
                                   &err) == 0, "%s", err.msg);
        for (int b = 0; b < B; b++) {
            char what[64];
            snprintf(what, sizeof what, "filled %d, b=%d t=%d", filled, b,
                     t);
            ck_assert_close_f(what, y + b * C,
                              p->out + ((size_t)b * T + t) * C, (size_t)C,
                              1e-5, 1e-5);
        }
    }
    ck_assert_int_eq(decoder_step(y, &st, x, &p->w, NULL, NULL, c->act, B,
                                  C, c->NH, c->F, &err), -1);
    ck_assert_str_eq(err.msg, "multi-head attention: the KV cache is full "
                     "(4 positions)");
    decoder_step_free(&st);
}

START_TEST(decoder_step_matches_forward) {
    DecCase c = {"step", 2, 4, 3, 6, 2, 12, true, RELU, 0, 0, NULL, NULL};
    DecProblem p = dp_random(&c, 430);
    check_decoder_steps(&p, 0);
    check_decoder_steps(&p, 3);
    p.c.tgt_mask = TGT_2x4;
    p.c.src_mask = SRC_2x3;
    p.c.act = GELU_EXACT;
    check_decoder_steps(&p, 0);
    check_decoder_steps(&p, 2);
    p.c.src_mask = SRC_2x3_EMPTY;
    check_decoder_steps(&p, 1);
    dp_free(&p);
}
END_TEST

START_TEST(decoder_parameter_counts) {
    // the 2017 base model's decoder layer: d_model 512, d_ff 2048, as
    // counted by PyTorch's nn.TransformerDecoderLayer(512, 8, 2048)
    ck_assert_uint_eq(decoder_param_count(512, 2048, true), 4204032);
    // 8C^2 + 2CF + 3C, and with bias 12C + F more
    ck_assert_uint_eq(decoder_param_count(6, 10, false), 426);
    ck_assert_uint_eq(decoder_param_count(6, 10, true), 426 + 72 + 10);
    DecCase c = {"count", 1, 1, 1, 6, 2, 10, true, RELU, 0, 0, NULL, NULL};
    DecProblem p = dp_random(&c, 440);
    BlockTensor t[DECODER_MAX_TENSORS];
    ck_assert_int_eq(decoder_tensors(t, &p.w, 6, 10), 20);
    float *next = p.params;           // the views tile the buffer in order
    for (int i = 0; i < 20; i++) {
        ck_assert_ptr_eq(t[i].data, next);
        next += t[i].shape[0] * (t[i].ndim == 2 ? t[i].shape[1] : 1);
    }
    ck_assert_ptr_eq(next, p.params + p.n);
    ck_assert_str_eq(t[2].name, "self_attn.c_attn.weight");
    ck_assert_str_eq(t[10].name, "cross_attn.kv_proj.weight");
    ck_assert_int_eq(t[10].shape[0], 12);
    ck_assert_str_eq(t[19].name, "mlp.c_proj.bias");
    dp_free(&p);
    c.bias = false;
    p = dp_random(&c, 450);
    ck_assert_ptr_null(p.w.cross_attn_kv_proj_b);
    ck_assert_int_eq(decoder_tensors(t, &p.w, 6, 10), 10);
    ck_assert_str_eq(t[5].name, "cross_attn.kv_proj.weight");
    dp_free(&p);
}
END_TEST

START_TEST(decoder_bad_sizes) {
    DecoderCache cache;
    DecoderScratch s;
    DecoderStep st;
    Error err;
    ck_assert_int_eq(decoder_cache_alloc(&cache, 2, 3, 4, 6, 4, 10, &err),
                     -1);
    ck_assert_str_eq(err.msg, "decoder layer: C=6 channels do not split "
                     "into NH=4 heads");
    ck_assert_int_eq(decoder_scratch_alloc(&s, 2, 3, 0, 6, 2, 10, &err), -1);
    ck_assert_str_eq(err.msg, "decoder layer: every size must be at least "
                     "1, got B=2 T=3 Tk=0 C=6 NH=2 F=10");
    ck_assert_int_eq(decoder_step_alloc(&st, 1, 1, 1, 4, 2, 0, &err), -1);
    decoder_cache_free(&cache);           // zeroed: no-ops
    decoder_scratch_free(&s);
    decoder_step_free(&st);
    DecCase c = {"fit", 2, 3, 4, 6, 2, 10, true, RELU, 0, 0, NULL, NULL};
    DecProblem p = dp_random(&c, 460);
    float *big = alloc_floats(4 * 6 * 6);
    ck_assert_int_eq(decoder_forward(big, &p.cache, p.x, p.mem, &p.w, NULL,
                                     NULL, RELU, 0, NULL, 2, 3, 5, 6, 2, 10,
                                     &err), -1);
    ck_assert_str_eq(err.msg, "decoder layer: the cache cannot hold B=2 "
                     "T=3 Tk=5 C=6 NH=2 F=10: it holds B*T=6 tokens of at "
                     "most T=3 and B*Tk=8 source tokens of at most Tk=4, "
                     "C=6 NH=2 F=10");
    ck_assert_int_eq(decoder_forward(big, &p.cache, p.x, p.mem, &p.w, NULL,
                                     NULL, RELU, 1.0f, NULL, 2, 3, 4, 6, 2,
                                     10, &err), -1);
    ck_assert_str_eq(err.msg, "decoder layer: dropout p must be in [0, 1), "
                     "got 1");
    ck_assert_int_eq(decoder_forward(big, &p.cache, p.x, p.mem, &p.w, NULL,
                                     NULL, RELU, 0.1f, NULL, 2, 3, 4, 6, 2,
                                     10, &err), -1);
    ck_assert_msg(strstr(err.msg, "random number generator") != NULL, "%s",
                  err.msg);
    ck_assert_int_eq(decoder_forward(big, &p.cache, p.x, p.mem, &p.w, NULL,
                                     NULL, RELU, 0, NULL, 1, 2, 3, 6, 2, 10,
                                     &err), 0);   // smaller is fine
    free(big);
    dp_free(&p);
}
END_TEST

// dp_grads (once) with the cache and scratch given.
static void dp_run(DecProblem *p, DecoderCache *cache, DecoderScratch *s,
                   float *dx, float *dmem) {
    const DecCase *c = &p->c;
    DecoderCache own = p->cache;
    p->cache = *cache;
    memset(dx, 0, (size_t)c->B * c->T * c->C * sizeof *dx);
    memset(dmem, 0, (size_t)c->B * c->Tk * c->C * sizeof *dmem);
    memset(p->grads, 0, p->n * sizeof *p->grads);
    dp_loss(p);
    decoder_backward(dx, dmem, &p->g, s, p->lw, &p->cache, p->x, p->mem,
                     &p->w, c->B, c->T, c->Tk, c->C, c->NH, c->F);
    *cache = p->cache;
    p->cache = own;
}

// The decoder layer as cross-attention above: memory for 4 x 16 target
// and 4 x 12 source tokens runs the same batches, with padding on both
// sides and dropout, bit for bit as memory for each; too many tokens, or
// too long a target, is refused.
START_TEST(decoder_capacity_in_tokens) {
    int C = 8, NH = 2, F = 16;
    DecoderCache big;
    DecoderScratch bigs;
    Error err;
    ck_assert_msg(decoder_cache_alloc(&big, 4, 16, 12, C, NH, F, &err) == 0
                  && decoder_scratch_alloc(&bigs, 4, 16, 12, C, NH, F, &err)
                     == 0, "%s", err.msg);
    for (int i = 0; i < 4; i++) {
        int B = CAP_SHAPES[i][0], T = CAP_SHAPES[i][1];
        int Tk = CAP_SHAPES[i][2];
        int *tgt = cap_mask(B, T), *src = cap_mask(B, Tk);
        DecCase c = {"cap", B, T, Tk, C, NH, F, true, RELU, 0.1f,
                     (uint64_t)(60 + i), tgt, src};
        DecProblem p = dp_random(&c, 500 + (uint64_t)i);
        DecoderScratch s;
        ck_assert_msg(decoder_scratch_alloc(&s, B, T, Tk, C, NH, F, &err)
                      == 0, "%s", err.msg);
        size_t nx = (size_t)B * T * C, nk = (size_t)B * Tk * C;
        float *want = alloc_floats(2 * nx + nk), *got = alloc_floats(nx);
        float *dx = alloc_floats(nx), *dmem = alloc_floats(nk);
        float *wg = alloc_floats(p.n);
        dp_run(&p, &p.cache, &s, want + nx, want + 2 * nx);
        memcpy(want, p.out, nx * sizeof(float));
        memcpy(wg, p.grads, p.n * sizeof(float));
        dp_run(&p, &big, &bigs, dx, dmem);
        memcpy(got, p.out, nx * sizeof(float));
        ck_assert_msg(memcmp(got, want, nx * sizeof(float)) == 0
                      && memcmp(dx, want + nx, nx * sizeof(float)) == 0
                      && memcmp(dmem, want + 2 * nx, nk * sizeof(float)) == 0
                      && memcmp(p.grads, wg, p.n * sizeof(float)) == 0,
                      "B=%d T=%d Tk=%d differs", B, T, Tk);
        free(want), free(got), free(dx), free(dmem), free(wg);
        free(tgt), free(src);
        decoder_scratch_free(&s);
        dp_free(&p);
    }
    DecCase c = {"over", 8, 17, 13, C, NH, F, true, RELU, 0, 0, NULL, NULL};
    DecProblem p = dp_random(&c, 550);
    ck_assert_int_eq(decoder_forward(p.out, &big, p.x, p.mem, &p.w, NULL,
                                     NULL, RELU, 0, NULL, 8, 8, 7, C, NH, F,
                                     &err), -1);
    ck_assert_str_eq(err.msg, "decoder layer: the cache cannot hold B=8 "
                     "T=8 Tk=7 C=8 NH=2 F=16: it holds B*T=64 tokens of at "
                     "most T=16 and B*Tk=48 source tokens of at most "
                     "Tk=12, C=8 NH=2 F=16");
    ck_assert_int_eq(decoder_forward(p.out, &big, p.x, p.mem, &p.w, NULL,
                                     NULL, RELU, 0, NULL, 1, 17, 4, C, NH, F,
                                     &err), -1);
    ck_assert_msg(strstr(err.msg, "cannot hold B=1 T=17 Tk=4") != NULL, "%s",
                  err.msg);
    dp_free(&p);
    decoder_cache_free(&big);
    decoder_scratch_free(&bigs);
}
END_TEST

Suite *ch7_suite(void) {
    Suite *s = suite_create("ch7");
    TCase *tc = tcase_new("cross-attention", "ch7");
    tcase_add_test(tc, xattn_backward_finite_differences);
    tcase_add_test(tc, xattn_backward_accumulates);
    tcase_add_test(tc, xattn_source_of_padding_only);
    tcase_add_test(tc, xattn_ignores_padded_memory);
    tcase_add_test(tc, xattn_step_matches_forward);
    tcase_add_test(tc, xattn_bad_sizes);
    tcase_add_test(tc, xattn_capacity_in_tokens);
    suite_add_tcase(s, tc);
    tc = tcase_new("decoder", "ch7");
    tcase_add_test(tc, decoder_matches_pytorch);
    tcase_add_test(tc, decoder_backward_finite_differences);
    tcase_add_test(tc, decoder_backward_accumulates);
    tcase_add_test(tc, decoder_masks);
    tcase_add_test(tc, decoder_source_of_padding_only);
    tcase_add_test(tc, decoder_step_matches_forward);
    tcase_add_test(tc, decoder_parameter_counts);
    tcase_add_test(tc, decoder_bad_sizes);
    tcase_add_test(tc, decoder_capacity_in_tokens);
    suite_add_tcase(s, tc);
    return s;
}
