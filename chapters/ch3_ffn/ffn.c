#include "ffn.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "linear.h"
#include "parallel.h"
#include "profile.h"

// Size checks, with the memory section at the end.
static int check_sizes(int B, int T, int C, int F, Error *err);
static int check_fits(int B, int T, int C, int F, int cB, int cT, int cC,
                      int cF, const char *what, Error *err);

// a = act(h): a GELU, or ReLU (the 2017 paper's FFN, chapter 7).
static void act_forward(float *a, const float *h, Activation act, size_t n) {
    if (act == RELU) relu_forward(a, h, n);
    else gelu_forward(a, h, act, n);
}

static void act_backward(float *dh, const float *da, const float *h,
                         Activation act, size_t n) {
    if (act == RELU) relu_backward(dh, da, h, n);
    else gelu_backward(dh, da, h, act, n);
}

//> ffn-forward
int ffn_forward(float *out, FfnCache *cache, const float *inp,
                const float *c_fc_w, const float *c_fc_b,
                const float *c_proj_w, const float *c_proj_b, Activation act,
                int B, int T, int C, int F, Error *err) {
    FfnCache *c = cache;
    if (check_sizes(B, T, C, F, err) != 0
        || check_fits(B, T, C, F, c->B, c->T, c->C, c->F, "cache", err))
        return -1;
    int N = B * T;                          // position-wise: just rows
    PROFILE(PROF_MATMUL, linear_forward(c->h, inp, c_fc_w, c_fc_b, N, C, F));
    PROFILE(PROF_ELEMENTWISE, act_forward(c->a, c->h, act, (size_t)N * F));
    PROFILE(PROF_MATMUL, linear_forward(out, c->a, c_proj_w, c_proj_b, N,
                                         F, C));                 // (N, C)
    c->act = act;
    return 0;
}
//< ffn-forward

//> ffn-backward
void ffn_backward(float *dinp, float *dc_fc_w, float *dc_fc_b,
                  float *dc_proj_w, float *dc_proj_b, FfnScratch *scratch,
                  const float *dout, const FfnCache *cache,
                  const float *inp, const float *c_fc_w,
                  const float *c_proj_w, int B, int T, int C, int F) {
    FfnScratch *s = scratch;
    const FfnCache *c = cache;
    assert(check_fits(B, T, C, F, s->B, s->T, s->C, s->F, "", NULL) == 0
           && check_fits(B, T, C, F, c->B, c->T, c->C, c->F, "", NULL)
              == 0);
    int N = B * T;
    size_t nf = (size_t)N * F;
    // out = a @ c_proj_w^T + c_proj_b
    zero_floats(s->da, nf);
    PROFILE_BW(PROF_MATMUL, linear_backward(s->da, dc_proj_w, dc_proj_b,
                                            dout, c->a, c_proj_w, N, F, C));
    // a = GELU(h) (or ReLU)
    zero_floats(s->dh, nf);
    PROFILE_BW(PROF_ELEMENTWISE, act_backward(s->dh, s->da, c->h, c->act,
                                              nf));
    // h = inp @ c_fc_w^T + c_fc_b
    PROFILE_BW(PROF_MATMUL, linear_backward(dinp, dc_fc_w, dc_fc_b, s->dh,
                                            inp, c_fc_w, N, C, F));
}
//< ffn-backward

//> ffn-params
size_t ffn_param_count(int C, int F, bool bias) {
    size_t weights = (size_t)F * C + (size_t)C * F;    // c_fc, c_proj
    return weights + (bias ? (size_t)F + C : 0);
}
//< ffn-params

// ---- memory ----------------------------------------------------------------

static int check_sizes(int B, int T, int C, int F, Error *err) {
    if (B < 1 || T < 1 || C < 1 || F < 1)
        return error_set(err, "feed-forward network: every size must be at "
                         "least 1, got B=%d T=%d C=%d F=%d", B, T, C, F);
    double tokens = (double)B * T, wide = C > F ? C : F;
    if (tokens * wide > INT32_MAX || (double)C * F > INT32_MAX)
        return error_set(err, "feed-forward network: B=%d T=%d C=%d F=%d "
                         "is too large (over 2^31 floats in one tensor)", B,
                         T, C, F);
    return 0;
}

static int check_fits(int B, int T, int C, int F, int cB, int cT, int cC,
                      int cF, const char *what, Error *err) {
    // in tokens, as chapter 2's caches (common/layout.h)
    if (!layout_fits(B, T, cB, cT) || C != cC || F != cF)
        return error_set(err, "feed-forward network: the %s cannot hold "
                         "B=%d T=%d C=%d F=%d: it holds B*T=%lld tokens of "
                         "at most T=%d, C=%d F=%d", what, B, T, C, F,
                         (long long)cB * cT, cT, cC, cF);
    return 0;
}

static int cache_slots(Slot t[2], FfnCache *c, int B, int T, int F) {
    size_t btf = (size_t)B * T * F;
    t[0] = (Slot){&c->h, btf};
    t[1] = (Slot){&c->a, btf};
    return 2;
}

size_t ffn_cache_floats(int B, int T, int C, int F) {
    (void)C;
    FfnCache c;
    Slot t[2];
    return layout_floats(t, cache_slots(t, &c, B, T, F));
}

int ffn_cache_alloc(FfnCache *c, int B, int T, int C, int F, Error *err) {
    memset(c, 0, sizeof *c);
    if (check_sizes(B, T, C, F, err) != 0) return -1;
    Slot t[2];
    c->mem = layout_alloc(t, cache_slots(t, c, B, T, F));
    c->B = B, c->T = T, c->C = C, c->F = F;
    return 0;
}

void ffn_cache_free(FfnCache *c) {
    free(c->mem);
    memset(c, 0, sizeof *c);
}

static int scratch_slots(Slot t[2], FfnScratch *s, int B, int T, int F) {
    size_t btf = (size_t)B * T * F;
    t[0] = (Slot){&s->da, btf};
    t[1] = (Slot){&s->dh, btf};
    return 2;
}

size_t ffn_scratch_floats(int B, int T, int C, int F) {
    (void)C;
    FfnScratch s;
    Slot t[2];
    return layout_floats(t, scratch_slots(t, &s, B, T, F));
}

int ffn_scratch_alloc(FfnScratch *s, int B, int T, int C, int F,
                      Error *err) {
    memset(s, 0, sizeof *s);
    if (check_sizes(B, T, C, F, err) != 0) return -1;
    Slot t[2];
    s->mem = layout_alloc(t, scratch_slots(t, s, B, T, F));
    s->B = B, s->T = T, s->C = C, s->F = F;
    return 0;
}

void ffn_scratch_free(FfnScratch *s) {
    free(s->mem);
    memset(s, 0, sizeof *s);
}
