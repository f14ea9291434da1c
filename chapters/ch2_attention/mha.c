#include "mha.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "linear.h"
#include "mem.h"
#include "profile.h"
#include "parallel.h"

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

// Hands out consecutive pieces of one block of floats.
static float *take(float **next, size_t n) {
    float *p = *next;
    *next += n;
    return p;
}

int mha_cache_alloc(MhaCache *c, int B, int T, int C, int NH, Error *err) {
    memset(c, 0, sizeof *c);
    if (check_sizes(B, T, C, NH, err) != 0) return -1;
    size_t btc = (size_t)B * T * C, btt = (size_t)B * NH * T * T;
    c->mem = alloc_floats(3 * btc + btt + btc);
    float *next = c->mem;
    c->q = take(&next, btc);
    c->k = take(&next, btc);
    c->v = take(&next, btc);
    c->att = take(&next, btt);
    c->y = take(&next, btc);
    c->tmp = alloc_floats(3 * btc + btc);
    next = c->tmp;
    c->qkv = take(&next, 3 * btc);
    c->yh = take(&next, btc);
    c->B = B, c->T = T, c->C = C, c->NH = NH;
    return 0;
}

void mha_cache_free(MhaCache *c) {
    free(c->mem);
    free(c->tmp);
    memset(c, 0, sizeof *c);
}

void mha_cache_share(MhaCache *c, const MhaCache *owner) {
    assert(c->B == owner->B && c->T == owner->T && c->C == owner->C
           && c->NH == owner->NH && owner->tmp);
    free(c->tmp);
    c->tmp = NULL;
    c->qkv = owner->qkv;
    c->yh = owner->yh;
}

int mha_scratch_alloc(MhaScratch *s, int B, int T, int C, int NH,
                      Error *err) {
    memset(s, 0, sizeof *s);
    if (check_sizes(B, T, C, NH, err) != 0) return -1;
    size_t btc = (size_t)B * T * C, btt = (size_t)B * NH * T * T;
    s->mem = alloc_floats(btc + btc + 3 * btc + btt + 3 * btc);
    float *next = s->mem;
    s->dy = take(&next, btc);
    s->dyh = take(&next, btc);
    s->dq = take(&next, btc);
    s->dk = take(&next, btc);
    s->dv = take(&next, btc);
    s->datt = take(&next, btt);
    s->dqkv = take(&next, 3 * btc);
    s->B = B, s->T = T, s->C = C, s->NH = NH;
    return 0;
}

void mha_scratch_free(MhaScratch *s) {
    free(s->mem);
    memset(s, 0, sizeof *s);
}

static int check_fits(int B, int T, int C, int NH, int cB, int cT, int cC,
                      int cNH, const char *what, Error *err) {
    if (B > cB || T > cT || C != cC || NH != cNH)
        return error_set(err, "multi-head attention: B=%d T=%d C=%d NH=%d "
                         "does not fit the %s, allocated for B<=%d T<=%d "
                         "C=%d NH=%d", B, T, C, NH, what, cB, cT, cC, cNH);
    return 0;
}

//> mha-forward
int mha_forward(float *out, MhaCache *cache, const float *inp,
                const float *c_attn_w, const float *c_attn_b,
                const float *c_proj_w, const float *c_proj_b,
                const int *key_mask, bool causal, int B, int T, int C,
                int NH, Error *err) {
    MhaCache *c = cache;
    if (check_sizes(B, T, C, NH, err) != 0
        || check_fits(B, T, C, NH, c->B, c->T, c->C, c->NH, "cache", err))
        return -1;
    int HS = C / NH;
    // qkv (B,T,3C) = inp @ c_attn_w^T + c_attn_b: q, k, v side by side
    PROFILE(PROF_MATMUL, linear_forward(c->qkv, inp, c_attn_w, c_attn_b,
                                     B * T, C, 3 * C));
    int rc;
    PROFILE(PROF_ATTENTION,
        heads_split(c->q, c->qkv, 3 * C, B, T, C, NH);      // (B,NH,T,HS)
        heads_split(c->k, c->qkv + C, 3 * C, B, T, C, NH);
        heads_split(c->v, c->qkv + 2 * C, 3 * C, B, T, C, NH);
        rc = attention_forward(c->yh, c->att, c->q, c->k, c->v, key_mask,
                               causal, B, NH, T, T, HS, err);
        if (rc == 0) heads_merge(c->y, c->yh, C, B, T, C, NH));  // (B,T,C)
    if (rc != 0) return -1;
    PROFILE(PROF_MATMUL, linear_forward(out, c->y, c_proj_w, c_proj_b,
                                           B * T, C, C));
    return 0;
}
//< mha-forward

//> mha-backward
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
    int HS = C / NH;
    size_t btc = (size_t)B * T * C;
    // out = y @ c_proj_w^T + c_proj_b
    PROFILE_BW(PROF_MATMUL,
        memset(s->dy, 0, btc * sizeof *s->dy);
        linear_backward(s->dy, dc_proj_w, dc_proj_b, dout, c->y, c_proj_w,
                        B * T, C, C));
    PROFILE_BW(PROF_ATTENTION,
        // y = merge(yh): merging only moves numbers, so dyh = split(dy)
        heads_split(s->dyh, s->dy, C, B, T, C, NH);
        // yh = attention(q, k, v)
        memset(s->dq, 0, btc * sizeof *s->dq);
        memset(s->dk, 0, btc * sizeof *s->dk);
        memset(s->dv, 0, btc * sizeof *s->dv);
        attention_backward(s->dq, s->dk, s->dv, s->datt, s->dyh, c->att,
                           c->q, c->k, c->v, B, NH, T, T, HS);
        // q, k, v = split(qkv): their gradients merge back into dqkv
        heads_merge(s->dqkv, s->dq, 3 * C, B, T, C, NH);
        heads_merge(s->dqkv + C, s->dk, 3 * C, B, T, C, NH);
        heads_merge(s->dqkv + 2 * C, s->dv, 3 * C, B, T, C, NH));
    // qkv = inp @ c_attn_w^T + c_attn_b
    PROFILE_BW(PROF_MATMUL, linear_backward(dinp, dc_attn_w, dc_attn_b, s->dqkv,
                                      inp, c_attn_w, B * T, C, 3 * C));
}
//< mha-backward
