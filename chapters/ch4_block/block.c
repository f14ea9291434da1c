#include "block.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dropout.h"
#include "layernorm.h"
#include "mem.h"
#include "profile.h"

// ---- the weights as views -------------------------------------------------

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
size_t block_param_count(int C, int F, bool bias) {
    size_t c = (size_t)C, f = (size_t)F;
    size_t weights = 4 * c * c + 2 * c * f + 2 * c;  // + the two LN weights
    return weights + (bias ? 3 * c + c + 2 * c + f + c : 0);
}

float *block_weights_point(BlockWeights *w, float *buf, int C, int F,
                           bool bias) {
    size_t c = (size_t)C, f = (size_t)F;
    float **views[12] = {&w->ln_1_w, &w->ln_1_b, &w->attn_c_attn_w,
                         &w->attn_c_attn_b, &w->attn_c_proj_w,
                         &w->attn_c_proj_b, &w->ln_2_w, &w->ln_2_b,
                         &w->mlp_c_fc_w, &w->mlp_c_fc_b, &w->mlp_c_proj_w,
                         &w->mlp_c_proj_b};
    const size_t sizes[12] = {c, c, 3 * c * c, 3 * c, c * c, c,
                              c, c, f * c, f, c * f, c};
    for (int i = 0; i < 12; i++) {
        bool is_bias = i % 2 == 1;          // every second one, in order
        *views[i] = is_bias && !bias ? NULL : buf;
        if (*views[i]) buf += sizes[i];
    }
    return buf;
}
//< block-params

// ---- memory ---------------------------------------------------------------

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

static int check_fits(int B, int T, int C, int NH, int F, const int *have,
                      Error *err) {
    if (B > have[0] || T > have[1] || C != have[2] || NH != have[3]
        || F != have[4])
        return error_set(err, "transformer block: B=%d T=%d C=%d NH=%d F=%d "
                         "does not fit the cache, allocated for B<=%d T<=%d "
                         "C=%d NH=%d F=%d", B, T, C, NH, F, have[0], have[1],
                         have[2], have[3], have[4]);
    return 0;
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
    size_t bt = (size_t)B * T, btc = bt * C;
    c->mem = alloc_floats(4 * btc + 4 * bt);
    float *p = c->mem;
    c->ln1 = p, p += btc;
    c->res1 = p, p += btc;
    c->ln2 = p, p += btc;
    c->res2 = p, p += btc;
    c->attn_mask = c->tmp = alloc_floats(btc);
    c->ln1_mean = p, p += bt;
    c->ln1_rstd = p, p += bt;
    c->ln2_mean = p, p += bt;
    c->ln2_rstd = p;
    c->B = B, c->T = T, c->C = C, c->NH = NH, c->F = F;
    return 0;
}

void block_cache_free(BlockCache *c) {
    mha_cache_free(&c->attn);
    ffn_cache_free(&c->mlp);
    free(c->mem);
    free(c->tmp);
    memset(c, 0, sizeof *c);
}

void block_cache_share(BlockCache *c, const BlockCache *owner, bool masks) {
    mha_cache_share(&c->attn, &owner->attn);
    if (!masks) return;
    assert(owner->tmp);
    ffn_cache_share_mask(&c->mlp, &owner->mlp);
    free(c->tmp);
    c->tmp = NULL;
    c->attn_mask = owner->attn_mask;
    c->shared_masks = true;
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
    size_t btc = (size_t)B * T * C;
    s->mem = alloc_floats(3 * btc);
    s->dres = s->mem;
    s->dsub = s->dres + btc;
    s->dy = s->dsub + btc;
    s->B = B, s->T = T, s->C = C, s->NH = NH, s->F = F;
    return 0;
}

void block_scratch_free(BlockScratch *s) {
    mha_scratch_free(&s->attn);
    ffn_scratch_free(&s->mlp);
    free(s->mem);
    memset(s, 0, sizeof *s);
}

// Everything a forward pass checks before it touches memory.
static int check_call(const BlockCache *c, float p, int B, int T, int C,
                      int NH, int F, Error *err) {
    const int have[5] = {c->B, c->T, c->C, c->NH, c->F};
    if (check_sizes(B, T, C, NH, F, err) != 0
        || check_fits(B, T, C, NH, F, have, err) != 0
        || dropout_check_p(p, "transformer block: dropout p", err) != 0)
        return -1;
    if (p > 0.0f && c->shared_masks)
        return error_set(err, "transformer block: dropout p = %g, but this "
                         "cache shares its dropout masks with other layers "
                         "(allocated for a model without dropout)",
                         (double)p);
    return 0;
}

// ---- Pre-LN ---------------------------------------------------------------

//> block-forward
int block_forward(float *out, BlockCache *cache, const float *inp,
                  const BlockWeights *w, float dropout_p, Rng *rng, int B,
                  int T, int C, int NH, int F, Error *err) {
    BlockCache *c = cache;
    if (check_call(c, dropout_p, B, T, C, NH, F, err) != 0) return -1;
    assert(out != inp);
    long n = (long)B * T * C;
    // x = x + attn(ln_1(x))
    PROFILE(PROF_NORM, layernorm_forward(c->ln1, c->ln1_mean,
                                              c->ln1_rstd, inp, w->ln_1_w,
                                              w->ln_1_b, B, T, C));
    if (mha_forward(c->res1, &c->attn, c->ln1, w->attn_c_attn_w,
                    w->attn_c_attn_b, w->attn_c_proj_w, w->attn_c_proj_b,
                    NULL, true, B, T, C, NH, err) != 0)
        return -1;
    int rc;
    PROFILE(PROF_ELEMENTWISE,
        rc = dropout_forward(c->res1, c->attn_mask, c->res1, dropout_p, rng,
                             (size_t)n, err);
        residual_forward(c->res1, inp, c->res1, n));
    if (rc != 0) return -1;
    // x = x + mlp(ln_2(x))
    PROFILE(PROF_NORM, layernorm_forward(c->ln2, c->ln2_mean,
                                              c->ln2_rstd, c->res1,
                                              w->ln_2_w, w->ln_2_b, B, T,
                                              C));
    if (ffn_forward(out, &c->mlp, c->ln2, w->mlp_c_fc_w, w->mlp_c_fc_b,
                    w->mlp_c_proj_w, w->mlp_c_proj_b, GELU_EXACT,
                    dropout_p, rng, B, T, C, F, err) != 0)
        return -1;
    PROFILE(PROF_ELEMENTWISE, residual_forward(out, c->res1, out, n));
    c->dropout_p = dropout_p;
    return 0;
}
//< block-forward

//> block-backward
void block_backward(float *dinp, const BlockWeights *g,
                    BlockScratch *scratch, const float *dout,
                    const BlockCache *cache, const float *inp,
                    const BlockWeights *w, int B, int T, int C, int NH,
                    int F) {
    BlockScratch *s = scratch;
    const BlockCache *c = cache;
    size_t n = (size_t)B * T * C, bytes = n * sizeof(float);
    // out = res1 + mlp(ln_2(res1)): dout reaches res1 directly ...
    memcpy(s->dres, dout, bytes);
    // ... and through the mlp and ln_2
    memset(s->dsub, 0, bytes);
    ffn_backward(s->dsub, g->mlp_c_fc_w, g->mlp_c_fc_b, g->mlp_c_proj_w,
                 g->mlp_c_proj_b, &s->mlp, dout, &c->mlp, c->ln2,
                 w->mlp_c_fc_w, w->mlp_c_proj_w, B, T, C, F);
    PROFILE_BW(PROF_NORM,
        layernorm_backward(s->dres, g->ln_2_w, g->ln_2_b, s->dsub, c->res1,
                           w->ln_2_w, c->ln2_mean, c->ln2_rstd, B, T, C));
    // res1 = inp + dropout(attn(ln_1(inp))): the same again
    PROFILE_BW(PROF_ELEMENTWISE,
        memset(s->dsub, 0, bytes);
        residual_backward(dinp, s->dsub, s->dres, (long)n);
        memset(s->dy, 0, bytes);
        dropout_backward(s->dy, s->dsub, c->attn_mask, n));  // mask 1 if p = 0
    memset(s->dsub, 0, bytes);
    mha_backward(s->dsub, g->attn_c_attn_w, g->attn_c_attn_b,
                 g->attn_c_proj_w, g->attn_c_proj_b, &s->attn, s->dy,
                 &c->attn, c->ln1, w->attn_c_attn_w, w->attn_c_proj_w, B, T,
                 C, NH);
    PROFILE_BW(PROF_NORM,
        layernorm_backward(dinp, g->ln_1_w, g->ln_1_b, s->dsub, inp,
                           w->ln_1_w, c->ln1_mean, c->ln1_rstd, B, T, C));
}
//< block-backward

// ---- Post-LN --------------------------------------------------------------

//> postln-forward
int block_postln_forward(float *out, BlockCache *cache, const float *inp,
                         const BlockWeights *w, float dropout_p, Rng *rng,
                         int B, int T, int C, int NH, int F, Error *err) {
    BlockCache *c = cache;
    if (check_call(c, dropout_p, B, T, C, NH, F, err) != 0) return -1;
    long n = (long)B * T * C;
    // x = ln_1(x + attn(x))
    if (mha_forward(c->res1, &c->attn, inp, w->attn_c_attn_w,
                    w->attn_c_attn_b, w->attn_c_proj_w, w->attn_c_proj_b,
                    NULL, true, B, T, C, NH, err) != 0
        || dropout_forward(c->res1, c->attn_mask, c->res1, dropout_p, rng,
                           (size_t)n, err) != 0)
        return -1;
    residual_forward(c->res1, inp, c->res1, n);
    layernorm_forward(c->ln1, c->ln1_mean, c->ln1_rstd, c->res1, w->ln_1_w,
                      w->ln_1_b, B, T, C);
    // x = ln_2(x + mlp(x))
    if (ffn_forward(c->res2, &c->mlp, c->ln1, w->mlp_c_fc_w, w->mlp_c_fc_b,
                    w->mlp_c_proj_w, w->mlp_c_proj_b, GELU_EXACT,
                    dropout_p, rng, B, T, C, F, err) != 0)
        return -1;
    residual_forward(c->res2, c->ln1, c->res2, n);
    layernorm_forward(out, c->ln2_mean, c->ln2_rstd, c->res2, w->ln_2_w,
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
    size_t n = (size_t)B * T * C, bytes = n * sizeof(float);
    // out = ln_2(res2): every gradient goes through the norm first
    memset(s->dres, 0, bytes);
    layernorm_backward(s->dres, g->ln_2_w, g->ln_2_b, dout, c->res2,
                       w->ln_2_w, c->ln2_mean, c->ln2_rstd, B, T, C);
    // res2 = ln1 + mlp(ln1): the skip's share, then the mlp's
    memcpy(s->dsub, s->dres, bytes);
    ffn_backward(s->dsub, g->mlp_c_fc_w, g->mlp_c_fc_b, g->mlp_c_proj_w,
                 g->mlp_c_proj_b, &s->mlp, s->dres, &c->mlp, c->ln1,
                 w->mlp_c_fc_w, w->mlp_c_proj_w, B, T, C, F);
    // ln1 = ln_1(res1)
    memset(s->dres, 0, bytes);
    layernorm_backward(s->dres, g->ln_1_w, g->ln_1_b, s->dsub, c->res1,
                       w->ln_1_w, c->ln1_mean, c->ln1_rstd, B, T, C);
    // res1 = inp + dropout(attn(inp))
    memset(s->dsub, 0, bytes);
    residual_backward(dinp, s->dsub, s->dres, (long)n);
    memset(s->dy, 0, bytes);
    dropout_backward(s->dy, s->dsub, c->attn_mask, n);
    mha_backward(dinp, g->attn_c_attn_w, g->attn_c_attn_b, g->attn_c_proj_w,
                 g->attn_c_proj_b, &s->attn, s->dy, &c->attn, inp,
                 w->attn_c_attn_w, w->attn_c_proj_w, B, T, C, NH);
}
//< postln-backward
