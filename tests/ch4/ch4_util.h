// ch4_util.h - helpers shared by the chapter 4 tests (test_ch4.c and
// test_ex4.c), on top of chapter 3's and chapter 2's (random inputs,
// fixture copies, the weighted-sum loss).
#ifndef TESTS_CH4_UTIL_H
#define TESTS_CH4_UTIL_H

#include "block.h"
#include "ch3/ch3_util.h"
#include "layernorm.h"

// A block's parameters in one buffer (as a model keeps them), with views;
// from the fixture tensors "<prefix>.<name>" (nanoGPT's names), and the
// gradient buffer alongside, zeroed.
typedef struct {
    float *params, *grads;
    BlockWeights w, g;
    size_t n;
} BlockParams;

static inline BlockParams block_params_new(int C, int F, bool bias) {
    BlockParams p;
    p.n = block_param_count(C, F, bias);
    p.params = alloc_floats(p.n);
    p.grads = alloc_floats(p.n);
    float *end = block_weights_point(&p.w, p.params, C, F, bias);
    ck_assert_ptr_eq(end, p.params + p.n);
    block_weights_point(&p.g, p.grads, C, F, bias);
    return p;
}

static inline BlockParams block_params_fixture(const Fixture *f,
                                               const char *prefix, int C,
                                               int F, bool bias) {
    BlockParams p = block_params_new(C, F, bias);
    BlockTensor t[BLOCK_MAX_TENSORS];
    int n = block_tensors(t, &p.w, C, F);
    for (int i = 0; i < n; i++) {
        size_t len = (size_t)t[i].shape[0] * (t[i].ndim == 2 ? t[i].shape[1]
                                                             : 1);
        memcpy(t[i].data, fx_get2(f, prefix, t[i].name, t[i].shape,
                                  t[i].ndim), len * sizeof(float));
    }
    return p;
}

static inline void block_params_free(BlockParams *p) {
    free(p->params);
    free(p->grads);
}

// ---- where dropout goes -----------------------------------------------------

// Checks that mask (n,) is one that dropout_forward draws with p > 0:
// every entry 0 or 1 / (1 - p), and at least one of each (the tests'
// masks hold 48 or more: at p = 0.3 a real one without a 0 has odds
// below 1e-7, and their seeds are fixed). A sub-layer whose dropout was
// left out (p = 0 passed on) records all ones.
static inline void ck_dropout_mask(const char *what, const float *mask,
                                   size_t n, float p) {
    float keep = 1.0f / (1.0f - p);
    size_t zeros = 0, kept = 0;
    for (size_t i = 0; i < n; i++) {
        zeros += mask[i] == 0.0f;
        kept += mask[i] == keep;
    }
    ck_assert_msg(zeros > 0 && kept > 0 && zeros + kept == n, "%s: not a "
                  "dropout mask of p = %g: of %zu entries %zu are 0, %zu "
                  "1/(1-p), %zu other (without dropout: all 1)", what,
                  (double)p, n, zeros, kept, n - zeros - kept);
}

// The masks of a forward pass (n floats each) must all differ: one mask
// used twice is not two sub-layers' dropout.
static inline void ck_masks_differ(const char *what, const float *const *m,
                                   int count, size_t n) {
    for (int i = 0; i < count; i++)
        for (int j = i + 1; j < count; j++)
            ck_assert_msg(memcmp(m[i], m[j], n * sizeof(float)) != 0,
                          "%s: masks %d and %d are the same", what, i, j);
}

// A sub-layer's output y joining the stream x through its dropout mask,
// as sublayer_add computes it: out = x + y * mask (out may be x).
static inline void add_masked(float *out, const float *x, const float *y,
                              const float *mask, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = x[i] + y[i] * mask[i];
}

// A block's output from its parts, each run with p = 0, and the masks
// given for its two sub-layers' outputs:
//   Pre-LN:  res1 = x + attn(ln_1(x)) * m_attn
//            out  = res1 + mlp(ln_2(res1)) * m_mlp
//   Post-LN: h    = ln_1(x + attn(x) * m_attn)
//            out  = ln_2(h + mlp(h) * m_mlp)
// A test of where dropout goes runs the block with dropout and compares
// it with this, given the masks that its forward pass recorded.
static inline void block_with_masks(float *out, const float *x,
                                    const BlockWeights *w,
                                    const int *key_mask, bool causal,
                                    Activation act, bool post,
                                    const float *m_attn, const float *m_mlp,
                                    int B, int T, int C, int NH, int F) {
    size_t n = (size_t)B * T * C, bt = (size_t)B * T;
    float *h = alloc_floats(n), *y = alloc_floats(n), *res = alloc_floats(n);
    float *mean = alloc_floats(bt), *rstd = alloc_floats(bt);
    MhaCache mc;
    FfnCache fc;
    Error err;
    ck_assert_msg(mha_cache_alloc(&mc, B, T, C, NH, &err) == 0
                  && ffn_cache_alloc(&fc, B, T, C, F, &err) == 0, "%s",
                  err.msg);
    const float *ax = x;
    if (!post) {
        layernorm_forward(h, mean, rstd, x, w->ln_1_w, w->ln_1_b, B, T, C);
        ax = h;
    }
    ck_assert_msg(mha_forward(y, &mc, ax, w->attn_c_attn_w, w->attn_c_attn_b,
                              w->attn_c_proj_w, w->attn_c_proj_b, key_mask,
                              causal, B, T, C, NH, &err) == 0, "%s",
                  err.msg);
    add_masked(res, x, y, m_attn, n);
    // the FFN's input: ln_2(res1) (Pre-LN), h = ln_1(res1) (Post-LN)
    layernorm_forward(h, mean, rstd, res, post ? w->ln_1_w : w->ln_2_w,
                      post ? w->ln_1_b : w->ln_2_b, B, T, C);
    ck_assert_msg(ffn_forward(y, &fc, h, w->mlp_c_fc_w, w->mlp_c_fc_b,
                              w->mlp_c_proj_w, w->mlp_c_proj_b, act, B, T, C,
                              F, &err) == 0, "%s", err.msg);
    if (post) {
        add_masked(res, h, y, m_mlp, n);
        layernorm_forward(out, mean, rstd, res, w->ln_2_w, w->ln_2_b, B, T,
                          C);
    } else {
        add_masked(out, res, y, m_mlp, n);
    }
    mha_cache_free(&mc);
    ffn_cache_free(&fc);
    free(h), free(y), free(res), free(mean), free(rstd);
}

#endif
