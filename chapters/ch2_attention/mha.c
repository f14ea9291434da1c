#include "mha.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "layout.h"
#include "linear.h"
#include "parallel.h"
#include "profile.h"

// Size checks, with the memory section at the end.
static int check_sizes(int B, int T, int C, int NH, Error *err);
static int check_fits(int B, int T, int C, int NH, int cB, int cT, int cC,
                      int cNH, const char *what, Error *err);

//> heads
void heads_split(float *out, const float *inp, int ld, int B, int T, int C,
                 int NH) {
    int HS = C / NH;
    PARALLEL_FOR
    for (int bt = 0; bt < B * T; bt++) {
        int b = bt / T, t = bt % T;
        for (int h = 0; h < NH; h++)    // channels h*HS.. -> head h, row t
            memcpy(out + (((size_t)b * NH + h) * T + t) * HS,
                   inp + (size_t)bt * ld + (size_t)h * HS,
                   (size_t)HS * sizeof *out);
    }
}

void heads_merge(float *out, const float *inp, int ld, int B, int T, int C,
                 int NH) {
    int HS = C / NH;
    PARALLEL_FOR
    for (int bt = 0; bt < B * T; bt++) {
        int b = bt / T, t = bt % T;
        for (int h = 0; h < NH; h++)    // head h, row t -> channels h*HS..
            memcpy(out + (size_t)bt * ld + (size_t)h * HS,
                   inp + (((size_t)b * NH + h) * T + t) * HS,
                   (size_t)HS * sizeof *out);
    }
}
//< heads

//> mha-forward
// The attention core of the forward pass. q, k and v are the three thirds
// of each row of qkv, and head h of each is columns h*HS .. h*HS+HS-1 of
// its third: the products read the heads there, and write each head's
// output straight into its columns of y, so that nothing is copied.
static int attend(MhaCache *c, const int *key_mask, bool causal, int B,
                  int T, int C, int NH, Error *err) {
    int HS = C / NH;
    HeadsLayout lqkv = heads_in_rows(T, 3 * C, HS);
    return attention_forward_strided(c->y, heads_in_rows(T, C, HS), c->att,
                                     c->qkv, lqkv, c->qkv + C, c->qkv + 2 * C,
                                     lqkv, key_mask, causal, B, NH, T, T, HS,
                                     err);
}

int mha_forward(float *out, MhaCache *cache, const float *inp,
                const float *c_attn_w, const float *c_attn_b,
                const float *c_proj_w, const float *c_proj_b,
                const int *key_mask, bool causal, int B, int T, int C,
                int NH, Error *err) {
    MhaCache *c = cache;
    if (check_sizes(B, T, C, NH, err) != 0
        || check_fits(B, T, C, NH, c->B, c->T, c->C, c->NH, "cache", err))
        return -1;
    // qkv (B,T,3C) = inp @ c_attn_w^T + c_attn_b: q, k, v side by side
    PROFILE(PROF_MATMUL, linear_forward(c->qkv, inp, c_attn_w, c_attn_b,
                                        B * T, C, 3 * C));
    int rc;
    PROFILE(PROF_ATTENTION, rc = attend(c, key_mask, causal, B, T, C, NH,
                                        err));
    if (rc != 0) return -1;
    PROFILE(PROF_MATMUL, linear_forward(out, c->y, c_proj_w, c_proj_b,
                                        B * T, C, C));
    c->fwd_B = B, c->fwd_T = T;
    return 0;
}
//< mha-forward

//> mha-backward
// The attention core backwards: the gradients of q, k and v are written
// (not added) into their thirds of dqkv, each head in its columns, in the
// layout the forward pass read them from.
static void attend_backward(MhaScratch *s, const MhaCache *c, int B, int T,
                            int C, int NH) {
    int HS = C / NH;
    HeadsLayout lqkv = heads_in_rows(T, 3 * C, HS);
    attention_backward_strided(s->dqkv, s->dqkv + C, s->dqkv + 2 * C,
                               s->datt, s->dy, c->att, c->qkv, c->qkv + C,
                               c->qkv + 2 * C, lqkv, lqkv,
                               heads_in_rows(T, C, HS), false, B, NH, T, T,
                               HS);
}

void mha_backward(float *dinp, float *dc_attn_w, float *dc_attn_b,
                  float *dc_proj_w, float *dc_proj_b, MhaScratch *scratch,
                  const float *dout, const MhaCache *cache,
                  const float *inp, const float *c_attn_w,
                  const float *c_proj_w, int B, int T, int C, int NH) {
    MhaScratch *s = scratch;
    const MhaCache *c = cache;
    assert(check_fits(B, T, C, NH, s->B, s->T, s->C, s->NH, "", NULL) == 0
           && check_fits(B, T, C, NH, c->B, c->T, c->C, c->NH, "", NULL)
              == 0);
    // out = y @ c_proj_w^T + c_proj_b
    zero_floats(s->dy, (size_t)B * T * C);
    PROFILE_BW(PROF_MATMUL, linear_backward(s->dy, dc_proj_w, dc_proj_b,
                                            dout, c->y, c_proj_w, B * T, C,
                                            C));
    PROFILE_BW(PROF_ATTENTION, attend_backward(s, c, B, T, C, NH));
    // qkv = inp @ c_attn_w^T + c_attn_b
    PROFILE_BW(PROF_MATMUL, linear_backward(dinp, dc_attn_w, dc_attn_b,
                                            s->dqkv, inp, c_attn_w, B * T,
                                            C, 3 * C));
}
//< mha-backward

//> mha-step
int mha_step(float *out, MhaKv *kv, const float *inp, const float *c_attn_w,
             const float *c_attn_b, const float *c_proj_w,
             const float *c_proj_b, const int *key_mask, int B, int C,
             int NH, Error *err) {
    if (check_sizes(B, 1, C, NH, err) != 0) return -1;
    // the KV cache holds kv->B rows of kv->T positions: it is not token
    // based, each sequence keeps its row
    if (B > kv->B || C != kv->C || NH != kv->NH)
        return error_set(err, "multi-head attention: B=%d C=%d NH=%d does "
                         "not fit the KV cache, allocated for B<=%d C=%d "
                         "NH=%d", B, C, NH, kv->B, kv->C, kv->NH);
    if (kv->len >= kv->T)
        return error_set(err, "multi-head attention: the KV cache is full "
                         "(%d positions)", kv->T);
    int HS = C / NH, T = kv->T, t = kv->len;
    linear_forward(kv->qkv, inp, c_attn_w, c_attn_b, B, C, 3 * C);
    // the new position's heads: its query, and its key and value at
    // position t of the cache
    heads_split(kv->q, kv->qkv, 3 * C, B, 1, C, NH);
    for (int bh = 0; bh < B * NH; bh++) {
        const float *row = kv->qkv + (size_t)(bh / NH) * 3 * C
                           + (size_t)(bh % NH) * HS;
        size_t at = ((size_t)bh * T + t) * HS;
        memcpy(kv->k + at, row + C, (size_t)HS * sizeof *kv->k);
        memcpy(kv->v + at, row + 2 * C, (size_t)HS * sizeof *kv->v);
    }
    // one query per head against keys 0 .. t; heads lie T positions
    // apart in the cache
    if (attention_step(kv->yh, kv->att, kv->q, kv->k, kv->v, key_mask, B,
                       NH, t + 1, T, HS, err) != 0)
        return -1;
    heads_merge(kv->y, kv->yh, C, B, 1, C, NH);
    linear_forward(out, kv->y, c_proj_w, c_proj_b, B, C, C);
    kv->len = t + 1;
    return 0;
}

int mha_kv_fill(MhaKv *kv, const MhaCache *cache, int B, int T,
                Error *err) {
    const MhaCache *c = cache;
    if (B < 1 || T < 1 || B > c->fwd_B || T > c->fwd_T || B > kv->B
        || T > kv->T || c->C != kv->C || c->NH != kv->NH)
        return error_set(err, "multi-head attention: B=%d T=%d does not "
                         "fit both the last forward pass (B=%d T=%d C=%d "
                         "NH=%d) and the KV cache (B<=%d T<=%d C=%d NH=%d)",
                         B, T, c->fwd_B, c->fwd_T, c->C, c->NH, kv->B, kv->T,
                         kv->C, kv->NH);
    // the forward pass left k and v in the rows of qkv, (B, fwd_T, 3C);
    // the KV cache holds room for kv->T positions per head
    int C = c->C, NH = c->NH, HS = C / NH;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const float *row = c->qkv + ((size_t)b * c->fwd_T + t) * 3 * C;
            for (int h = 0; h < NH; h++) {
                size_t at = (((size_t)b * NH + h) * kv->T + t) * HS;
                memcpy(kv->k + at, row + C + h * HS, HS * sizeof *kv->k);
                memcpy(kv->v + at, row + 2 * C + h * HS,
                       HS * sizeof *kv->v);
            }
        }
    kv->len = T;
    return 0;
}
//< mha-step

// ---- memory ----------------------------------------------------------------

static int check_sizes(int B, int T, int C, int NH, Error *err) {
    if (B < 1 || T < 1 || C < 1 || NH < 1)
        return error_set(err, "multi-head attention: every size must be at "
                         "least 1, got B=%d T=%d C=%d NH=%d", B, T, C, NH);
    if (C % NH != 0)
        return error_set(err, "multi-head attention: C=%d channels do not "
                         "split into NH=%d heads (C must be a multiple of "
                         "NH)", C, NH);
    double tokens = (double)B * T;
    if (tokens * 3 * C > INT32_MAX || tokens * NH * T > INT32_MAX)
        return error_set(err, "multi-head attention: B=%d T=%d C=%d NH=%d "
                         "is too large (over 2^31 floats in one tensor)", B,
                         T, C, NH);
    return 0;
}

// Memory for cB x cT tokens holds any batch of at most cB*cT tokens of
// at most cT positions (common/layout.h): every view is indexed with the
// batch's own B and T, packed at its front.
static int check_fits(int B, int T, int C, int NH, int cB, int cT, int cC,
                      int cNH, const char *what, Error *err) {
    if (!layout_fits(B, T, cB, cT) || C != cC || NH != cNH)
        return error_set(err, "multi-head attention: the %s cannot hold "
                         "B=%d T=%d C=%d NH=%d: it holds B*T=%lld tokens "
                         "of at most T=%d, C=%d NH=%d", what, B, T, C, NH,
                         (long long)cB * cT, cT, cC, cNH);
    return 0;
}

// What the backward pass reads: qkv (the heads q, k, v in its rows), the
// weights att and the merged output y.
static int cache_slots(Slot t[3], MhaCache *c, int B, int T, int C,
                       int NH) {
    size_t btc = (size_t)B * T * C, btt = (size_t)B * NH * T * T;
    t[0] = (Slot){&c->qkv, 3 * btc};
    t[1] = (Slot){&c->att, btt};
    t[2] = (Slot){&c->y, btc};
    return 3;
}

size_t mha_cache_floats(int B, int T, int C, int NH) {
    MhaCache c;
    Slot t[3];
    return layout_floats(t, cache_slots(t, &c, B, T, C, NH));
}

int mha_cache_alloc(MhaCache *c, int B, int T, int C, int NH, Error *err) {
    memset(c, 0, sizeof *c);
    if (check_sizes(B, T, C, NH, err) != 0) return -1;
    Slot t[3];
    c->mem = layout_alloc(t, cache_slots(t, c, B, T, C, NH));
    c->B = B, c->T = T, c->C = C, c->NH = NH;
    return 0;
}

void mha_cache_free(MhaCache *c) {
    free(c->mem);
    memset(c, 0, sizeof *c);
}

static int scratch_slots(Slot t[3], MhaScratch *s, int B, int T, int C,
                         int NH) {
    size_t btc = (size_t)B * T * C, btt = (size_t)B * NH * T * T;
    t[0] = (Slot){&s->dy, btc};
    t[1] = (Slot){&s->datt, btt};
    t[2] = (Slot){&s->dqkv, 3 * btc};
    return 3;
}

size_t mha_scratch_floats(int B, int T, int C, int NH) {
    MhaScratch s;
    Slot t[3];
    return layout_floats(t, scratch_slots(t, &s, B, T, C, NH));
}

int mha_scratch_alloc(MhaScratch *s, int B, int T, int C, int NH,
                      Error *err) {
    memset(s, 0, sizeof *s);
    if (check_sizes(B, T, C, NH, err) != 0) return -1;
    Slot t[3];
    s->mem = layout_alloc(t, scratch_slots(t, s, B, T, C, NH));
    s->B = B, s->T = T, s->C = C, s->NH = NH;
    return 0;
}

void mha_scratch_free(MhaScratch *s) {
    free(s->mem);
    memset(s, 0, sizeof *s);
}

static int kv_slots(Slot t[7], MhaKv *kv, int B, int T, int C, int NH) {
    size_t btc = (size_t)B * T * C, bc = (size_t)B * C;
    t[0] = (Slot){&kv->k, btc};
    t[1] = (Slot){&kv->v, btc};
    t[2] = (Slot){&kv->qkv, 3 * bc};
    t[3] = (Slot){&kv->q, bc};
    t[4] = (Slot){&kv->att, (size_t)B * NH * T};
    t[5] = (Slot){&kv->yh, bc};
    t[6] = (Slot){&kv->y, bc};
    return 7;
}

size_t mha_kv_floats(int B, int T, int C, int NH) {
    MhaKv kv;
    Slot t[7];
    return layout_floats(t, kv_slots(t, &kv, B, T, C, NH));
}

int mha_kv_alloc(MhaKv *kv, int B, int T, int C, int NH, Error *err) {
    memset(kv, 0, sizeof *kv);
    if (check_sizes(B, T, C, NH, err) != 0) return -1;
    Slot t[7];
    kv->mem = layout_alloc(t, kv_slots(t, kv, B, T, C, NH));
    kv->B = B, kv->T = T, kv->C = C, kv->NH = NH;
    return 0;
}

void mha_kv_free(MhaKv *kv) {
    free(kv->mem);
    memset(kv, 0, sizeof *kv);
}
