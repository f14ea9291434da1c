#include "decoder.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "dropout.h"
#include "layout.h"

// Everything a forward pass checks before it touches memory (at the end).
static int check_call(const DecoderCache *c, float p, int B, int T, int Tk,
                      int C, int NH, int F, Error *err);

// ---- forward ---------------------------------------------------------------

//> decoder-forward
int decoder_forward(float *out, DecoderCache *cache, const float *x,
                    const float *memory, const DecoderWeights *w,
                    const int *tgt_mask, const int *src_mask, Activation act,
                    float dropout_p, Rng *rng, int B, int T, int Tk, int C,
                    int NH, int F, Error *err) {
    DecoderCache *c = cache;
    if (check_call(c, dropout_p, B, T, Tk, C, NH, F, err) != 0) return -1;
    assert(out != x);
    // res1 = x + dropout(self_attn(ln_1(x))): causal, target padding
    if (attn_sublayer_forward(c->res1, &c->sa, &c->self_attn, x, w->ln_1_w,
                              w->ln_1_b, w->self_attn_c_attn_w,
                              w->self_attn_c_attn_b, w->self_attn_c_proj_w,
                              w->self_attn_c_proj_b, tgt_mask, true,
                              dropout_p, rng, B, T, C, NH, err) != 0)
        return -1;
    // res2 = res1 + dropout(cross_attn(ln_2(res1), memory)): the source
    sublayer_norm(&c->ca, c->res1, w->ln_2_w, w->ln_2_b, B, T, C);
    if (xattn_forward(c->res2, &c->cross_attn, c->ca.norm, memory,
                      w->cross_attn_q_proj_w, w->cross_attn_q_proj_b,
                      w->cross_attn_kv_proj_w, w->cross_attn_kv_proj_b,
                      w->cross_attn_out_proj_w, w->cross_attn_out_proj_b,
                      src_mask, B, T, Tk, C, NH, err) != 0
        || sublayer_add(c->res2, &c->ca, c->res1, dropout_p, rng,
                        (size_t)B * T * C, err) != 0)
        return -1;
    // out = res2 + dropout(mlp(ln_3(res2)))
    return ffn_sublayer_forward(out, &c->ff, &c->mlp, c->res2, w->ln_3_w,
                                w->ln_3_b, w->mlp_c_fc_w, w->mlp_c_fc_b,
                                w->mlp_c_proj_w, w->mlp_c_proj_b, act,
                                dropout_p, rng, B, T, C, F, err);
}
//< decoder-forward

// ---- backward --------------------------------------------------------------

//> decoder-backward
void decoder_backward(float *dx, float *dmemory, const DecoderWeights *g,
                      DecoderScratch *scratch, const float *dout,
                      const DecoderCache *cache, const float *x,
                      const float *memory, const DecoderWeights *w, int B,
                      int T, int Tk, int C, int NH, int F) {
    DecoderScratch *s = scratch;
    const DecoderCache *c = cache;
    size_t n = (size_t)B * T * C, bytes = n * sizeof(float);
    // out = res2 + dropout(mlp(ln_3(res2)))
    memset(s->dres2, 0, bytes);
    ffn_sublayer_backward(s->dres2, g->ln_3_w, g->ln_3_b, g->mlp_c_fc_w,
                          g->mlp_c_fc_b, g->mlp_c_proj_w, g->mlp_c_proj_b,
                          s->dy, s->dsub, &s->mlp, dout, &c->ff, &c->mlp,
                          c->res2, w->ln_3_w, w->mlp_c_fc_w,
                          w->mlp_c_proj_w, B, T, C, F);
    // res2 = res1 + dropout(cross_attn(ln_2(res1), memory)): the memory's
    // share goes to dmemory
    memset(s->dres1, 0, bytes);
    const float *df = sublayer_add_backward(s->dres1, s->dy, s->dres2, &c->ca,
                                            n);
    memset(s->dsub, 0, bytes);
    xattn_backward(s->dsub, dmemory, g->cross_attn_q_proj_w,
                   g->cross_attn_q_proj_b, g->cross_attn_kv_proj_w,
                   g->cross_attn_kv_proj_b, g->cross_attn_out_proj_w,
                   g->cross_attn_out_proj_b, &s->cross_attn, df,
                   &c->cross_attn, c->ca.norm, memory,
                   w->cross_attn_q_proj_w, w->cross_attn_kv_proj_w,
                   w->cross_attn_out_proj_w, B, T, Tk, C, NH);
    sublayer_norm_backward(s->dres1, g->ln_2_w, g->ln_2_b, s->dsub, &c->ca,
                           c->res1, w->ln_2_w, B, T, C);
    // res1 = x + dropout(self_attn(ln_1(x)))
    attn_sublayer_backward(dx, g->ln_1_w, g->ln_1_b, g->self_attn_c_attn_w,
                           g->self_attn_c_attn_b, g->self_attn_c_proj_w,
                           g->self_attn_c_proj_b, s->dy, s->dsub,
                           &s->self_attn, s->dres1, &c->sa, &c->self_attn, x,
                           w->ln_1_w, w->self_attn_c_attn_w,
                           w->self_attn_c_proj_w, B, T, C, NH);
}
//< decoder-backward

// ---- decoding, one position ------------------------------------------------

//> decoder-step
int decoder_step(float *out, DecoderStep *s, const float *x,
                 const DecoderWeights *w, const int *tgt_mask,
                 const int *src_mask, Activation act, int B, int C, int NH,
                 int F, Error *err) {
    if (B > s->B || C != s->C || F != s->F)
        return error_set(err, "decoder step: B=%d C=%d F=%d does not fit "
                         "the cache, allocated for B<=%d C=%d F=%d", B, C,
                         F, s->B, s->C, s->F);
    size_t n = (size_t)B * C;
    // res1 = x + self_attn(ln_1(x)), over the cached target positions
    sublayer_norm(&s->sa, x, w->ln_1_w, w->ln_1_b, B, 1, C);
    if (mha_step(s->res1, &s->self_kv, s->sa.norm, w->self_attn_c_attn_w,
                 w->self_attn_c_attn_b, w->self_attn_c_proj_w,
                 w->self_attn_c_proj_b, tgt_mask, B, C, NH, err) != 0
        || sublayer_add(s->res1, &s->sa, x, 0.0f, NULL, n, err) != 0)
        return -1;
    // res2 = res1 + cross_attn(ln_2(res1)), against the source's K and V
    sublayer_norm(&s->ca, s->res1, w->ln_2_w, w->ln_2_b, B, 1, C);
    if (xattn_step(s->res2, &s->cross_kv, s->ca.norm, w->cross_attn_q_proj_w,
                   w->cross_attn_q_proj_b, w->cross_attn_out_proj_w,
                   w->cross_attn_out_proj_b, src_mask, B, C, NH, err) != 0
        || sublayer_add(s->res2, &s->ca, s->res1, 0.0f, NULL, n, err) != 0)
        return -1;
    // out = res2 + mlp(ln_3(res2)), on rows of one position
    return ffn_sublayer_forward(out, &s->ff, &s->mlp, s->res2, w->ln_3_w,
                                w->ln_3_b, w->mlp_c_fc_w, w->mlp_c_fc_b,
                                w->mlp_c_proj_w, w->mlp_c_proj_b, act, 0.0f,
                                NULL, B, 1, C, F, err);
}
//< decoder-step

// ---- the weights as views --------------------------------------------------

int decoder_tensors(BlockTensor out[DECODER_MAX_TENSORS],
                    const DecoderWeights *w, int C, int F) {
    const BlockTensor all[DECODER_MAX_TENSORS] = {
        {"ln_1.weight", w->ln_1_w, 1, {C, 0}},
        {"ln_1.bias", w->ln_1_b, 1, {C, 0}},
        {"self_attn.c_attn.weight", w->self_attn_c_attn_w, 2, {3 * C, C}},
        {"self_attn.c_attn.bias", w->self_attn_c_attn_b, 1, {3 * C, 0}},
        {"self_attn.c_proj.weight", w->self_attn_c_proj_w, 2, {C, C}},
        {"self_attn.c_proj.bias", w->self_attn_c_proj_b, 1, {C, 0}},
        {"ln_2.weight", w->ln_2_w, 1, {C, 0}},
        {"ln_2.bias", w->ln_2_b, 1, {C, 0}},
        {"cross_attn.q_proj.weight", w->cross_attn_q_proj_w, 2, {C, C}},
        {"cross_attn.q_proj.bias", w->cross_attn_q_proj_b, 1, {C, 0}},
        {"cross_attn.kv_proj.weight", w->cross_attn_kv_proj_w, 2,
         {2 * C, C}},
        {"cross_attn.kv_proj.bias", w->cross_attn_kv_proj_b, 1, {2 * C, 0}},
        {"cross_attn.out_proj.weight", w->cross_attn_out_proj_w, 2, {C, C}},
        {"cross_attn.out_proj.bias", w->cross_attn_out_proj_b, 1, {C, 0}},
        {"ln_3.weight", w->ln_3_w, 1, {C, 0}},
        {"ln_3.bias", w->ln_3_b, 1, {C, 0}},
        {"mlp.c_fc.weight", w->mlp_c_fc_w, 2, {F, C}},
        {"mlp.c_fc.bias", w->mlp_c_fc_b, 1, {F, 0}},
        {"mlp.c_proj.weight", w->mlp_c_proj_w, 2, {C, F}},
        {"mlp.c_proj.bias", w->mlp_c_proj_b, 1, {C, 0}},
    };
    int n = 0;
    for (int i = 0; i < DECODER_MAX_TENSORS; i++)
        if (all[i].data) out[n++] = all[i];
    return n;
}

//> decoder-params
// The size table of a layer's weights, in the order above; a bias's slot
// is empty (its view NULL) without bias.
static int weight_slots(Slot t[20], DecoderWeights *w, int C, int F,
                        bool bias) {
    size_t c = (size_t)C, f = (size_t)F, b = bias ? 1 : 0;
    const Slot all[20] = {
        {&w->ln_1_w, c},
        {&w->ln_1_b, b * c},
        {&w->self_attn_c_attn_w, 3 * c * c},
        {&w->self_attn_c_attn_b, b * 3 * c},
        {&w->self_attn_c_proj_w, c * c},
        {&w->self_attn_c_proj_b, b * c},
        {&w->ln_2_w, c},
        {&w->ln_2_b, b * c},
        {&w->cross_attn_q_proj_w, c * c},
        {&w->cross_attn_q_proj_b, b * c},
        {&w->cross_attn_kv_proj_w, 2 * c * c},
        {&w->cross_attn_kv_proj_b, b * 2 * c},
        {&w->cross_attn_out_proj_w, c * c},
        {&w->cross_attn_out_proj_b, b * c},
        {&w->ln_3_w, c},
        {&w->ln_3_b, b * c},
        {&w->mlp_c_fc_w, f * c},
        {&w->mlp_c_fc_b, b * f},
        {&w->mlp_c_proj_w, c * f},
        {&w->mlp_c_proj_b, b * c},
    };
    memcpy(t, all, sizeof all);
    return 20;
}

size_t decoder_param_count(int C, int F, bool bias) {
    DecoderWeights w;
    Slot t[20];
    return layout_floats(t, weight_slots(t, &w, C, F, bias));
}

float *decoder_weights_point(DecoderWeights *w, float *buf, int C, int F,
                             bool bias) {
    Slot t[20];
    return layout_point(t, weight_slots(t, w, C, F, bias), buf);
}
//< decoder-params

// ---- memory ----------------------------------------------------------------

static int check_sizes(int B, int T, int Tk, int C, int NH, int F,
                       Error *err) {
    if (B < 1 || T < 1 || Tk < 1 || C < 1 || NH < 1 || F < 1)
        return error_set(err, "decoder layer: every size must be at least "
                         "1, got B=%d T=%d Tk=%d C=%d NH=%d F=%d", B, T, Tk,
                         C, NH, F);
    if (C % NH != 0)
        return error_set(err, "decoder layer: C=%d channels do not split "
                         "into NH=%d heads", C, NH);
    return 0;
}

static int check_call(const DecoderCache *c, float p, int B, int T, int Tk,
                      int C, int NH, int F, Error *err) {
    if (check_sizes(B, T, Tk, C, NH, F, err) != 0) return -1;
    // in tokens on each side, as cross-attention's cache (xattn.h)
    if (!layout_fits(B, T, c->B, c->T) || !layout_fits(B, Tk, c->B, c->Tk)
        || C != c->C || NH != c->NH || F != c->F)
        return error_set(err, "decoder layer: the cache cannot hold B=%d "
                         "T=%d Tk=%d C=%d NH=%d F=%d: it holds B*T=%lld "
                         "tokens of at most T=%d and B*Tk=%lld source "
                         "tokens of at most Tk=%d, C=%d NH=%d F=%d", B, T,
                         Tk, C, NH, F, (long long)c->B * c->T, c->T,
                         (long long)c->B * c->Tk, c->Tk, c->C, c->NH, c->F);
    return dropout_check_p(p, "decoder layer: dropout p", err);
}

// The layer's own views: res1, res2 and the three wrappers (own masks).
static int cache_slots(Slot t[14], DecoderCache *c, int B, int T, int C) {
    size_t btc = (size_t)B * T * C;
    int n = 0;
    t[n++] = (Slot){&c->res1, btc};
    t[n++] = (Slot){&c->res2, btc};
    n += sublayer_slots(t + n, &c->sa, B, T, C, true);
    n += sublayer_slots(t + n, &c->ca, B, T, C, true);
    n += sublayer_slots(t + n, &c->ff, B, T, C, true);
    return n;
}

size_t decoder_cache_floats(int B, int T, int Tk, int C, int NH, int F) {
    DecoderCache c;
    Slot t[14];
    return layout_floats(t, cache_slots(t, &c, B, T, C))
           + mha_cache_floats(B, T, C, NH)
           + xattn_cache_floats(B, T, Tk, C, NH)
           + ffn_cache_floats(B, T, C, F);
}

int decoder_cache_alloc(DecoderCache *c, int B, int T, int Tk, int C, int NH,
                        int F, Error *err) {
    memset(c, 0, sizeof *c);
    if (check_sizes(B, T, Tk, C, NH, F, err) != 0
        || mha_cache_alloc(&c->self_attn, B, T, C, NH, err) != 0
        || xattn_cache_alloc(&c->cross_attn, B, T, Tk, C, NH, err) != 0
        || ffn_cache_alloc(&c->mlp, B, T, C, F, err) != 0) {
        decoder_cache_free(c);
        return -1;
    }
    Slot t[14];
    c->mem = layout_alloc(t, cache_slots(t, c, B, T, C));
    c->B = B, c->T = T, c->Tk = Tk, c->C = C, c->NH = NH, c->F = F;
    return 0;
}

void decoder_cache_free(DecoderCache *c) {
    mha_cache_free(&c->self_attn);
    xattn_cache_free(&c->cross_attn);
    ffn_cache_free(&c->mlp);
    free(c->mem);
    memset(c, 0, sizeof *c);
}

static int scratch_slots(Slot t[4], DecoderScratch *s, int B, int T, int C) {
    size_t btc = (size_t)B * T * C;
    t[0] = (Slot){&s->dres1, btc};
    t[1] = (Slot){&s->dres2, btc};
    t[2] = (Slot){&s->dsub, btc};
    t[3] = (Slot){&s->dy, btc};
    return 4;
}

size_t decoder_scratch_floats(int B, int T, int Tk, int C, int NH, int F) {
    DecoderScratch s;
    Slot t[4];
    return layout_floats(t, scratch_slots(t, &s, B, T, C))
           + mha_scratch_floats(B, T, C, NH)
           + xattn_scratch_floats(B, T, Tk, C, NH)
           + ffn_scratch_floats(B, T, C, F);
}

int decoder_scratch_alloc(DecoderScratch *s, int B, int T, int Tk, int C,
                          int NH, int F, Error *err) {
    memset(s, 0, sizeof *s);
    if (check_sizes(B, T, Tk, C, NH, F, err) != 0
        || mha_scratch_alloc(&s->self_attn, B, T, C, NH, err) != 0
        || xattn_scratch_alloc(&s->cross_attn, B, T, Tk, C, NH, err) != 0
        || ffn_scratch_alloc(&s->mlp, B, T, C, F, err) != 0) {
        decoder_scratch_free(s);
        return -1;
    }
    Slot t[4];
    s->mem = layout_alloc(t, scratch_slots(t, s, B, T, C));
    s->B = B, s->T = T, s->Tk = Tk, s->C = C, s->NH = NH, s->F = F;
    return 0;
}

void decoder_scratch_free(DecoderScratch *s) {
    mha_scratch_free(&s->self_attn);
    xattn_scratch_free(&s->cross_attn);
    ffn_scratch_free(&s->mlp);
    free(s->mem);
    memset(s, 0, sizeof *s);
}

// One position of B sequences: the three wrappers' views (with a mask
// each, which sublayer_add fills with ones at p = 0), res1 and res2.
static int step_slots(Slot t[14], DecoderStep *s, int B, int C) {
    int n = 0;
    n += sublayer_slots(t + n, &s->sa, B, 1, C, true);
    n += sublayer_slots(t + n, &s->ca, B, 1, C, true);
    n += sublayer_slots(t + n, &s->ff, B, 1, C, true);
    t[n++] = (Slot){&s->res1, (size_t)B * C};
    t[n++] = (Slot){&s->res2, (size_t)B * C};
    return n;
}

size_t decoder_step_floats(int B, int T, int Tk, int C, int NH, int F) {
    DecoderStep s;
    Slot t[14];
    return layout_floats(t, step_slots(t, &s, B, C))
           + mha_kv_floats(B, T, C, NH) + xattn_kv_floats(B, Tk, C, NH)
           + ffn_cache_floats(B, 1, C, F);
}

int decoder_step_alloc(DecoderStep *s, int B, int T, int Tk, int C, int NH,
                       int F, Error *err) {
    memset(s, 0, sizeof *s);
    if (check_sizes(B, T, Tk, C, NH, F, err) != 0
        || mha_kv_alloc(&s->self_kv, B, T, C, NH, err) != 0
        || xattn_kv_alloc(&s->cross_kv, B, Tk, C, NH, err) != 0
        || ffn_cache_alloc(&s->mlp, B, 1, C, F, err) != 0) {
        decoder_step_free(s);
        return -1;
    }
    Slot t[14];
    s->mem = layout_alloc(t, step_slots(t, s, B, C));
    s->B = B, s->C = C, s->F = F;
    return 0;
}

void decoder_step_free(DecoderStep *s) {
    mha_kv_free(&s->self_kv);
    xattn_kv_free(&s->cross_kv);
    ffn_cache_free(&s->mlp);
    free(s->mem);
    memset(s, 0, sizeof *s);
}
