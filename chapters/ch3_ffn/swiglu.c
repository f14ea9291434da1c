#include "swiglu.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dropout.h"
#include "linear.h"
#include "mem.h"
#include "parallel.h"

int swiglu_hidden(int F) { return (int)(2 * (long)F / 3); }

size_t swiglu_param_count(int C, int H, bool bias) {
    size_t weights = 3 * (size_t)H * C;      // gate, up (H, C); down (C, H)
    return weights + (bias ? 2 * (size_t)H + C : 0);
}

static int check_sizes(int B, int T, int C, int H, Error *err) {
    if (B < 1 || T < 1 || C < 1 || H < 1)
        return error_set(err, "SwiGLU: every size must be at least 1, got "
                         "B=%d T=%d C=%d H=%d", B, T, C, H);
    double tokens = (double)B * T, wide = C > H ? C : H;
    if (tokens * wide > INT32_MAX || (double)C * H > INT32_MAX)
        return error_set(err, "SwiGLU: B=%d T=%d C=%d H=%d is too large "
                         "(over 2^31 floats in one tensor)", B, T, C, H);
    return 0;
}

static int check_fits(int B, int T, int C, int H, int cB, int cT, int cC,
                      int cH, const char *what, Error *err) {
    if (B > cB || T > cT || C != cC || H != cH)
        return error_set(err, "SwiGLU: B=%d T=%d C=%d H=%d does not fit the "
                         "%s, allocated for B<=%d T<=%d C=%d H=%d", B, T, C,
                         H, what, cB, cT, cC, cH);
    return 0;
}

int swiglu_cache_alloc(SwigluCache *c, int B, int T, int C, int H,
                       Error *err) {
    memset(c, 0, sizeof *c);
    if (check_sizes(B, T, C, H, err) != 0) return -1;
    size_t bth = (size_t)B * T * H, btc = (size_t)B * T * C;
    c->mem = alloc_floats(3 * bth + btc);
    c->g = c->mem;
    c->u = c->g + bth;
    c->s = c->u + bth;
    c->mask = c->s + bth;
    c->B = B, c->T = T, c->C = C, c->H = H;
    return 0;
}

void swiglu_cache_free(SwigluCache *c) {
    free(c->mem);
    memset(c, 0, sizeof *c);
}

int swiglu_scratch_alloc(SwigluScratch *s, int B, int T, int C, int H,
                         Error *err) {
    memset(s, 0, sizeof *s);
    if (check_sizes(B, T, C, H, err) != 0) return -1;
    size_t bth = (size_t)B * T * H, btc = (size_t)B * T * C;
    s->mem = alloc_floats(btc + 3 * bth);
    s->dy = s->mem;
    s->ds = s->dy + btc;
    s->dg = s->ds + bth;
    s->du = s->dg + bth;
    s->B = B, s->T = T, s->C = C, s->H = H;
    return 0;
}

void swiglu_scratch_free(SwigluScratch *s) {
    free(s->mem);
    memset(s, 0, sizeof *s);
}

//> swiglu-gate
static inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

void swiglu_gate_forward(float *s, const float *g, const float *u,
                         size_t n) {
    PARALLEL_FOR
    for (size_t i = 0; i < n; i++) s[i] = g[i] * sigmoid(g[i]) * u[i];
}

// SiLU'(g) = sigma(g) + g sigma(g) (1 - sigma(g)), as sigma' = sigma (1-sigma)
void swiglu_gate_backward(float *dg, float *du, const float *ds,
                          const float *g, const float *u, size_t n) {
    PARALLEL_FOR
    for (size_t i = 0; i < n; i++) {
        float sig = sigmoid(g[i]);
        dg[i] += ds[i] * u[i] * sig * (1.0f + g[i] * (1.0f - sig));
        du[i] += ds[i] * g[i] * sig;
    }
}
//< swiglu-gate

//> swiglu-forward
int swiglu_forward(float *out, SwigluCache *cache, const float *inp,
                   const float *w_gate, const float *b_gate,
                   const float *w_up, const float *b_up,
                   const float *w_down, const float *b_down,
                   float dropout_p, Rng *rng, int B, int T, int C, int H,
                   Error *err) {
    SwigluCache *c = cache;
    if (check_sizes(B, T, C, H, err) != 0
        || check_fits(B, T, C, H, c->B, c->T, c->C, c->H, "cache", err)
        || dropout_check_p(dropout_p, "SwiGLU: dropout p",
                           err) != 0)
        return -1;
    int N = B * T;
    linear_forward(c->g, inp, w_gate, b_gate, N, C, H);       // (N, H)
    linear_forward(c->u, inp, w_up, b_up, N, C, H);           // (N, H)
    swiglu_gate_forward(c->s, c->g, c->u, (size_t)N * H);
    linear_forward(out, c->s, w_down, b_down, N, H, C);       // (N, C)
    if (dropout_forward(out, c->mask, out, dropout_p, rng, (size_t)N * C,
                        err) != 0)
        return -1;
    c->dropout_p = dropout_p;
    return 0;
}
//< swiglu-forward

//> swiglu-backward
void swiglu_backward(float *dinp, float *dw_gate, float *db_gate,
                     float *dw_up, float *db_up, float *dw_down,
                     float *db_down, SwigluScratch *scratch,
                     const float *dout, const SwigluCache *cache,
                     const float *inp, const float *w_gate,
                     const float *w_up, const float *w_down, int B, int T,
                     int C, int H) {
    SwigluScratch *s = scratch;
    const SwigluCache *c = cache;
    assert(check_fits(B, T, C, H, s->B, s->T, s->C, s->H, "", NULL) == 0
           && check_fits(B, T, C, H, c->B, c->T, c->C, c->H, "", NULL)
              == 0);
    int N = B * T;
    size_t nc = (size_t)N * C, nh = (size_t)N * H;
    const float *dy = dout;                 // out = dropout(y)
    if (c->dropout_p > 0.0f) {
        memset(s->dy, 0, nc * sizeof *s->dy);
        dropout_backward(s->dy, dout, c->mask, nc);
        dy = s->dy;
    }
    memset(s->ds, 0, nh * sizeof *s->ds);   // y = s @ w_down^T + b_down
    linear_backward(s->ds, dw_down, db_down, dy, c->s, w_down, N, H, C);
    memset(s->dg, 0, nh * sizeof *s->dg);   // s = SiLU(g) * u
    memset(s->du, 0, nh * sizeof *s->du);
    swiglu_gate_backward(s->dg, s->du, s->ds, c->g, c->u, nh);
    // g and u both came from inp: both add to dinp
    linear_backward(dinp, dw_gate, db_gate, s->dg, inp, w_gate, N, C, H);
    linear_backward(dinp, dw_up, db_up, s->du, inp, w_up, N, C, H);
}
//< swiglu-backward
