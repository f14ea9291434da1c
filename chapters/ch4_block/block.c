#include "block.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dropout.h"
#include "layernorm.h"
#include "layout.h"
#include "mem.h"
#include "parallel.h"

// Everything a forward pass checks before it touches memory (at the end).
static int check_call(const BlockCache *c, float p, int B, int T, int C,
                      int NH, int F, Error *err);

// ---- Pre-LN ----------------------------------------------------------------

//> sublayers
int attn_sublayer_forward(float *out, Sublayer *s, MhaCache *attn,
                          const float *x, const float *ln_w,
                          const float *ln_b, const float *c_attn_w,
                          const float *c_attn_b, const float *c_proj_w,
                          const float *c_proj_b, const int *key_mask,
                          bool causal, float p, Rng *rng, int B, int T,
                          int C, int NH, Error *err) {
    sublayer_norm(s, x, ln_w, ln_b, B, T, C);
    if (mha_forward(out, attn, s->norm, c_attn_w, c_attn_b, c_proj_w,
                    c_proj_b, key_mask, causal, B, T, C, NH, err) != 0)
        return -1;
    return sublayer_add(out, s, x, p, rng, (size_t)B * T * C, err);
}

int ffn_sublayer_forward(float *out, Sublayer *s, FfnCache *mlp,
                         const float *x, const float *ln_w,
                         const float *ln_b, const float *c_fc_w,
                         const float *c_fc_b, const float *c_proj_w,
                         const float *c_proj_b, Activation act, float p,
                         Rng *rng, int B, int T, int C, int F, Error *err) {
    sublayer_norm(s, x, ln_w, ln_b, B, T, C);
    if (ffn_forward(out, mlp, s->norm, c_fc_w, c_fc_b, c_proj_w, c_proj_b,
                    act, B, T, C, F, err) != 0)
        return -1;
    return sublayer_add(out, s, x, p, rng, (size_t)B * T * C, err);
}

void attn_sublayer_backward(float *dx, float *dln_w, float *dln_b,
                            float *dc_attn_w, float *dc_attn_b,
                            float *dc_proj_w, float *dc_proj_b, float *dy,
                            float *dnorm, MhaScratch *scratch,
                            const float *dout, const Sublayer *s,
                            const MhaCache *attn, const float *x,
                            const float *ln_w, const float *c_attn_w,
                            const float *c_proj_w, int B, int T, int C,
                            int NH) {
    size_t n = (size_t)B * T * C;
    // the skip, and f's output: df is dout itself without dropout, else dy
    const float *df = sublayer_add_backward(dx, dy, dout, s, n);
    zero_floats(dnorm, n);
    mha_backward(dnorm, dc_attn_w, dc_attn_b, dc_proj_w, dc_proj_b, scratch,
                 df, attn, s->norm, c_attn_w, c_proj_w, B, T, C, NH);
    sublayer_norm_backward(dx, dln_w, dln_b, dnorm, s, x, ln_w, B, T, C);
}

void ffn_sublayer_backward(float *dx, float *dln_w, float *dln_b,
                           float *dc_fc_w, float *dc_fc_b, float *dc_proj_w,
                           float *dc_proj_b, float *dy, float *dnorm,
                           FfnScratch *scratch, const float *dout,
                           const Sublayer *s, const FfnCache *mlp,
                           const float *x, const float *ln_w,
                           const float *c_fc_w, const float *c_proj_w,
                           int B, int T, int C, int F) {
    size_t n = (size_t)B * T * C;
    const float *df = sublayer_add_backward(dx, dy, dout, s, n);  // as above
    zero_floats(dnorm, n);
    ffn_backward(dnorm, dc_fc_w, dc_fc_b, dc_proj_w, dc_proj_b, scratch, df,
                 mlp, s->norm, c_fc_w, c_proj_w, B, T, C, F);
    sublayer_norm_backward(dx, dln_w, dln_b, dnorm, s, x, ln_w, B, T, C);
}
//< sublayers

//> block-forward
int block_forward(float *out, BlockCache *cache, const float *inp,
                  const BlockWeights *w, const int *key_mask, bool causal,
                  Activation act, float dropout_p, Rng *rng, int B, int T,
                  int C, int NH, int F, Error *err) {
    BlockCache *c = cache;
    if (check_call(c, dropout_p, B, T, C, NH, F, err) != 0) return -1;
    assert(out != inp);
    // res1 = x + dropout(attn(ln_1(x)))
    if (attn_sublayer_forward(c->res1, &c->sa, &c->attn, inp, w->ln_1_w,
                              w->ln_1_b, w->attn_c_attn_w, w->attn_c_attn_b,
                              w->attn_c_proj_w, w->attn_c_proj_b, key_mask,
                              causal, dropout_p, rng, B, T, C, NH, err) != 0
        // out = res1 + dropout(mlp(ln_2(res1)))
        || ffn_sublayer_forward(out, &c->ff, &c->mlp, c->res1, w->ln_2_w,
                                w->ln_2_b, w->mlp_c_fc_w, w->mlp_c_fc_b,
                                w->mlp_c_proj_w, w->mlp_c_proj_b, act,
                                dropout_p, rng, B, T, C, F, err) != 0)
        return -1;
    c->dropout_p = dropout_p;
    return 0;
}
//< block-forward

//> block-step
int block_step(float *out, BlockStep *s, const float *inp,
               const BlockWeights *w, const int *key_mask, Activation act,
               int B, int C, int NH, int F, Error *err) {
    if (B > s->B || C != s->C || F != s->F)
        return error_set(err, "block step: B=%d C=%d F=%d does not fit the "
                         "cache, allocated for B<=%d C=%d F=%d", B, C, F,
                         s->B, s->C, s->F);
    // res1 = x + attn(ln_1(x)), the attention over the cached positions
    sublayer_norm(&s->sa, inp, w->ln_1_w, w->ln_1_b, B, 1, C);
    if (mha_step(s->res1, &s->kv, s->sa.norm, w->attn_c_attn_w,
                 w->attn_c_attn_b, w->attn_c_proj_w, w->attn_c_proj_b,
                 key_mask, B, C, NH, err) != 0
        || sublayer_add(s->res1, &s->sa, inp, 0.0f, NULL, (size_t)B * C,
                        err) != 0)
        return -1;
    // out = res1 + mlp(ln_2(res1)), on rows of one position
    return ffn_sublayer_forward(out, &s->ff, &s->mlp, s->res1, w->ln_2_w,
                                w->ln_2_b, w->mlp_c_fc_w, w->mlp_c_fc_b,
                                w->mlp_c_proj_w, w->mlp_c_proj_b, act, 0.0f,
                                NULL, B, 1, C, F, err);
}
//< block-step

//> block-backward
void block_backward(float *dinp, const BlockWeights *g,
                    BlockScratch *scratch, const float *dout,
                    const BlockCache *cache, const float *inp,
                    const BlockWeights *w, int B, int T, int C, int NH,
                    int F) {
    BlockScratch *s = scratch;
    const BlockCache *c = cache;
    // out = res1 + dropout(mlp(ln_2(res1))): dout reaches res1 directly
    // (the skip) and through the mlp and ln_2
    zero_floats(s->dres, (size_t)B * T * C);
    ffn_sublayer_backward(s->dres, g->ln_2_w, g->ln_2_b, g->mlp_c_fc_w,
                          g->mlp_c_fc_b, g->mlp_c_proj_w, g->mlp_c_proj_b,
                          s->dy, s->dsub, &s->mlp, dout, &c->ff, &c->mlp,
                          c->res1, w->ln_2_w, w->mlp_c_fc_w,
                          w->mlp_c_proj_w, B, T, C, F);
    // res1 = inp + dropout(attn(ln_1(inp))): the same again, into dinp
    attn_sublayer_backward(dinp, g->ln_1_w, g->ln_1_b, g->attn_c_attn_w,
                           g->attn_c_attn_b, g->attn_c_proj_w,
                           g->attn_c_proj_b, s->dy, s->dsub, &s->attn,
                           s->dres, &c->sa, &c->attn, inp, w->ln_1_w,
                           w->attn_c_attn_w, w->attn_c_proj_w, B, T, C, NH);
}
//< block-backward

// ---- Post-LN ---------------------------------------------------------------

//> postln-forward
int block_postln_forward(float *out, BlockCache *cache, const float *inp,
                         const BlockWeights *w, const int *key_mask,
                         bool causal, Activation act, float dropout_p,
                         Rng *rng, int B, int T, int C, int NH, int F,
                         Error *err) {
    BlockCache *c = cache;
    if (check_call(c, dropout_p, B, T, C, NH, F, err) != 0) return -1;
    size_t n = (size_t)B * T * C;
    // h = ln_1(x + dropout(attn(x))), kept in sa.norm
    if (mha_forward(c->res1, &c->attn, inp, w->attn_c_attn_w,
                    w->attn_c_attn_b, w->attn_c_proj_w, w->attn_c_proj_b,
                    key_mask, causal, B, T, C, NH, err) != 0
        || sublayer_add(c->res1, &c->sa, inp, dropout_p, rng, n, err) != 0)
        return -1;
    layernorm_forward(c->sa.norm, c->sa.mean, c->sa.rstd, c->res1,
                      w->ln_1_w, w->ln_1_b, B, T, C);
    // out = ln_2(h + dropout(mlp(h)))
    if (ffn_forward(c->res2, &c->mlp, c->sa.norm, w->mlp_c_fc_w,
                    w->mlp_c_fc_b, w->mlp_c_proj_w, w->mlp_c_proj_b, act,
                    B, T, C, F, err) != 0
        || sublayer_add(c->res2, &c->ff, c->sa.norm, dropout_p, rng, n, err)
           != 0)
        return -1;
    layernorm_forward(out, c->ff.mean, c->ff.rstd, c->res2, w->ln_2_w,
                      w->ln_2_b, B, T, C);
    c->dropout_p = dropout_p;
    return 0;
}
//< postln-forward

//> postln-backward
void block_postln_backward(float *dinp, const BlockWeights *g,
                           BlockScratch *scratch, const float *dout,
                           const BlockCache *cache, const float *inp,
                           const BlockWeights *w, int B, int T, int C,
                           int NH, int F) {
    BlockScratch *s = scratch;
    const BlockCache *c = cache;
    size_t n = (size_t)B * T * C;
    // out = ln_2(res2): every gradient goes through the norm first
    zero_floats(s->dres, n);
    layernorm_backward(s->dres, g->ln_2_w, g->ln_2_b, dout, c->res2,
                       w->ln_2_w, c->ff.mean, c->ff.rstd, B, T, C);
    // res2 = h + dropout(mlp(h)): the skip's share, then the mlp's
    zero_floats(s->dsub, n);
    const float *df = sublayer_add_backward(s->dsub, s->dy, s->dres, &c->ff,
                                            n);
    ffn_backward(s->dsub, g->mlp_c_fc_w, g->mlp_c_fc_b, g->mlp_c_proj_w,
                 g->mlp_c_proj_b, &s->mlp, df, &c->mlp, c->sa.norm,
                 w->mlp_c_fc_w, w->mlp_c_proj_w, B, T, C, F);
    // h = ln_1(res1)
    zero_floats(s->dres, n);
    layernorm_backward(s->dres, g->ln_1_w, g->ln_1_b, s->dsub, c->res1,
                       w->ln_1_w, c->sa.mean, c->sa.rstd, B, T, C);
    // res1 = inp + dropout(attn(inp))
    df = sublayer_add_backward(dinp, s->dy, s->dres, &c->sa, n);
    mha_backward(dinp, g->attn_c_attn_w, g->attn_c_attn_b, g->attn_c_proj_w,
                 g->attn_c_proj_b, &s->attn, df, &c->attn, inp,
                 w->attn_c_attn_w, w->attn_c_proj_w, B, T, C, NH);
}
//< postln-backward

// ---- the weights as views --------------------------------------------------

int block_tensors(BlockTensor out[BLOCK_MAX_TENSORS], const BlockWeights *w,
                  int C, int F) {
    const BlockTensor all[BLOCK_MAX_TENSORS] = {
        {"ln_1.weight", w->ln_1_w, 1, {C, 0}},
        {"ln_1.bias", w->ln_1_b, 1, {C, 0}},
        {"attn.c_attn.weight", w->attn_c_attn_w, 2, {3 * C, C}},
        {"attn.c_attn.bias", w->attn_c_attn_b, 1, {3 * C, 0}},
        {"attn.c_proj.weight", w->attn_c_proj_w, 2, {C, C}},
        {"attn.c_proj.bias", w->attn_c_proj_b, 1, {C, 0}},
        {"ln_2.weight", w->ln_2_w, 1, {C, 0}},
        {"ln_2.bias", w->ln_2_b, 1, {C, 0}},
        {"mlp.c_fc.weight", w->mlp_c_fc_w, 2, {F, C}},
        {"mlp.c_fc.bias", w->mlp_c_fc_b, 1, {F, 0}},
        {"mlp.c_proj.weight", w->mlp_c_proj_w, 2, {C, F}},
        {"mlp.c_proj.bias", w->mlp_c_proj_b, 1, {C, 0}},
    };
    int n = 0;
    for (int i = 0; i < BLOCK_MAX_TENSORS; i++)
        if (all[i].data) out[n++] = all[i];
    return n;
}

//> block-params
// The size table of a block's weights, in nanoGPT's order; a bias's slot
// is empty (its view NULL) without bias.
static int weight_slots(Slot t[12], BlockWeights *w, int C, int F,
                        bool bias) {
    size_t c = (size_t)C, f = (size_t)F, b = bias ? 1 : 0;
    const Slot all[12] = {
        {&w->ln_1_w, c},                {&w->ln_1_b, b * c},
        {&w->attn_c_attn_w, 3 * c * c}, {&w->attn_c_attn_b, b * 3 * c},
        {&w->attn_c_proj_w, c * c},     {&w->attn_c_proj_b, b * c},
        {&w->ln_2_w, c},                {&w->ln_2_b, b * c},
        {&w->mlp_c_fc_w, f * c},        {&w->mlp_c_fc_b, b * f},
        {&w->mlp_c_proj_w, c * f},      {&w->mlp_c_proj_b, b * c},
    };
    memcpy(t, all, sizeof all);
    return 12;
}

size_t block_param_count(int C, int F, bool bias) {
    BlockWeights w;
    Slot t[12];
    return layout_floats(t, weight_slots(t, &w, C, F, bias));
}

float *block_weights_point(BlockWeights *w, float *buf, int C, int F,
                           bool bias) {
    Slot t[12];
    return layout_point(t, weight_slots(t, w, C, F, bias), buf);
}
//< block-params

// ---- memory ----------------------------------------------------------------

static int check_sizes(int B, int T, int C, int NH, int F, Error *err) {
    if (B < 1 || T < 1 || C < 1 || NH < 1 || F < 1)
        return error_set(err, "transformer block: every size must be at "
                         "least 1, got B=%d T=%d C=%d NH=%d F=%d", B, T, C,
                         NH, F);
    if (C % NH != 0)
        return error_set(err, "transformer block: C=%d channels do not "
                         "split into NH=%d heads", C, NH);
    return 0;
}

static int check_call(const BlockCache *c, float p, int B, int T, int C,
                      int NH, int F, Error *err) {
    if (check_sizes(B, T, C, NH, F, err) != 0) return -1;
    // in tokens (common/layout.h): every view of the cache, and of its
    // attention's and FFN's, is indexed with this batch's B and T
    if (!layout_fits(B, T, c->B, c->T) || C != c->C || NH != c->NH
        || F != c->F)
        return error_set(err, "transformer block: the cache cannot hold "
                         "B=%d T=%d C=%d NH=%d F=%d: it holds B*T=%lld "
                         "tokens of at most T=%d, C=%d NH=%d F=%d", B, T, C,
                         NH, F, (long long)c->B * c->T, c->T, c->C, c->NH,
                         c->F);
    if (dropout_check_p(p, "transformer block: dropout p", err) != 0)
        return -1;
    if (p > 0.0f && c->shared_masks)
        return error_set(err, "transformer block: dropout p = %g, but this "
                         "cache shares its dropout masks with other layers "
                         "(allocated for a model without dropout)",
                         (double)p);
    return 0;
}

// The block's own views (its masks apart: those may be shared).
static int cache_slots(Slot t[10], BlockCache *c, int B, int T, int C) {
    size_t btc = (size_t)B * T * C;
    int n = 0;
    t[n++] = (Slot){&c->res1, btc};
    t[n++] = (Slot){&c->res2, btc};
    n += sublayer_slots(t + n, &c->sa, B, T, C, false);
    n += sublayer_slots(t + n, &c->ff, B, T, C, false);
    return n;
}

static int mask_slots(Slot t[2], BlockCache *c, int B, int T, int C) {
    size_t btc = (size_t)B * T * C;
    t[0] = (Slot){&c->sa.mask, btc};
    t[1] = (Slot){&c->ff.mask, btc};
    return 2;
}

size_t block_cache_floats(int B, int T, int C, int NH, int F,
                          bool shares_masks) {
    BlockCache c;
    Slot t[10], m[2];
    size_t own = layout_floats(t, cache_slots(t, &c, B, T, C));
    if (!shares_masks) own += layout_floats(m, mask_slots(m, &c, B, T, C));
    return own + mha_cache_floats(B, T, C, NH)
           + ffn_cache_floats(B, T, C, F);
}

int block_cache_alloc(BlockCache *c, int B, int T, int C, int NH, int F,
                      Error *err) {
    memset(c, 0, sizeof *c);
    if (check_sizes(B, T, C, NH, F, err) != 0
        || mha_cache_alloc(&c->attn, B, T, C, NH, err) != 0)
        return -1;
    if (ffn_cache_alloc(&c->mlp, B, T, C, F, err) != 0) {
        mha_cache_free(&c->attn);
        return -1;
    }
    Slot t[10], m[2];
    c->mem = layout_alloc(t, cache_slots(t, c, B, T, C));
    c->masks = layout_alloc(m, mask_slots(m, c, B, T, C));
    c->B = B, c->T = T, c->C = C, c->NH = NH, c->F = F;
    return 0;
}

void block_cache_free(BlockCache *c) {
    mha_cache_free(&c->attn);
    ffn_cache_free(&c->mlp);
    free(c->mem);
    free(c->masks);
    memset(c, 0, sizeof *c);
}

void block_cache_share_masks(BlockCache *c, const BlockCache *owner) {
    assert(owner->masks);
    free(c->masks);
    c->masks = NULL;
    c->sa.mask = owner->sa.mask;
    c->ff.mask = owner->ff.mask;
    c->shared_masks = true;
}

static int scratch_slots(Slot t[3], BlockScratch *s, int B, int T, int C) {
    size_t btc = (size_t)B * T * C;
    t[0] = (Slot){&s->dres, btc};
    t[1] = (Slot){&s->dsub, btc};
    t[2] = (Slot){&s->dy, btc};
    return 3;
}

size_t block_scratch_floats(int B, int T, int C, int NH, int F) {
    BlockScratch s;
    Slot t[3];
    return layout_floats(t, scratch_slots(t, &s, B, T, C))
           + mha_scratch_floats(B, T, C, NH) + ffn_scratch_floats(B, T, C, F);
}

int block_scratch_alloc(BlockScratch *s, int B, int T, int C, int NH, int F,
                        Error *err) {
    memset(s, 0, sizeof *s);
    if (check_sizes(B, T, C, NH, F, err) != 0
        || mha_scratch_alloc(&s->attn, B, T, C, NH, err) != 0)
        return -1;
    if (ffn_scratch_alloc(&s->mlp, B, T, C, F, err) != 0) {
        mha_scratch_free(&s->attn);
        return -1;
    }
    Slot t[3];
    s->mem = layout_alloc(t, scratch_slots(t, s, B, T, C));
    s->B = B, s->T = T, s->C = C, s->NH = NH, s->F = F;
    return 0;
}

void block_scratch_free(BlockScratch *s) {
    mha_scratch_free(&s->attn);
    ffn_scratch_free(&s->mlp);
    free(s->mem);
    memset(s, 0, sizeof *s);
}

// One position of B sequences: the sub-layers' views and res1.
static int step_slots(Slot t[9], BlockStep *s, int B, int C) {
    int n = 0;
    n += sublayer_slots(t + n, &s->sa, B, 1, C, true);
    n += sublayer_slots(t + n, &s->ff, B, 1, C, true);
    t[n++] = (Slot){&s->res1, (size_t)B * C};
    return n;
}

size_t block_step_floats(int B, int T, int C, int NH, int F) {
    BlockStep s;
    Slot t[9];
    return layout_floats(t, step_slots(t, &s, B, C))
           + mha_kv_floats(B, T, C, NH) + ffn_cache_floats(B, 1, C, F);
}

int block_step_alloc(BlockStep *s, int B, int T, int C, int NH, int F,
                     Error *err) {
    memset(s, 0, sizeof *s);
    if (check_sizes(B, T, C, NH, F, err) != 0
        || mha_kv_alloc(&s->kv, B, T, C, NH, err) != 0)
        return -1;
    if (ffn_cache_alloc(&s->mlp, B, 1, C, F, err) != 0) {
        mha_kv_free(&s->kv);
        return -1;
    }
    Slot t[9];
    s->mem = layout_alloc(t, step_slots(t, s, B, C));
    s->B = B, s->C = C, s->F = F;
    return 0;
}

void block_step_free(BlockStep *s) {
    mha_kv_free(&s->kv);
    ffn_cache_free(&s->mlp);
    free(s->mem);
    memset(s, 0, sizeof *s);
}
