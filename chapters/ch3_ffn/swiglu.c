#include "swiglu.h"

#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "linear.h"
#include "parallel.h"

// Size checks, with the memory section at the end.
static int check_sizes(int B, int T, int C, int H, Error *err);
static int check_fits(int B, int T, int C, int H, int cB, int cT, int cC,
                      int cH, const char *what, Error *err);

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
                   int B, int T, int C, int H, Error *err) {
    SwigluCache *c = cache;
    if (check_sizes(B, T, C, H, err) != 0
        || check_fits(B, T, C, H, c->B, c->T, c->C, c->H, "cache", err))
        return -1;
    int N = B * T;
    linear_forward(c->g, inp, w_gate, b_gate, N, C, H);       // (N, H)
    linear_forward(c->u, inp, w_up, b_up, N, C, H);           // (N, H)
    swiglu_gate_forward(c->s, c->g, c->u, (size_t)N * H);
    linear_forward(out, c->s, w_down, b_down, N, H, C);       // (N, C)
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
    size_t nh = (size_t)N * H;
    memset(s->ds, 0, nh * sizeof *s->ds);   // out = s @ w_down^T + b_down
    linear_backward(s->ds, dw_down, db_down, dout, c->s, w_down, N, H, C);
    memset(s->dg, 0, nh * sizeof *s->dg);   // s = SiLU(g) * u
    memset(s->du, 0, nh * sizeof *s->du);
    swiglu_gate_backward(s->dg, s->du, s->ds, c->g, c->u, nh);
    // g and u both came from inp: both add to dinp
    linear_backward(dinp, dw_gate, db_gate, s->dg, inp, w_gate, N, C, H);
    linear_backward(dinp, dw_up, db_up, s->du, inp, w_up, N, C, H);
}
//< swiglu-backward

int swiglu_hidden(int F) { return (int)(2 * (long)F / 3); }

size_t swiglu_param_count(int C, int H, bool bias) {
    size_t weights = 3 * (size_t)H * C;      // gate, up (H, C); down (C, H)
    return weights + (bias ? 2 * (size_t)H + C : 0);
}

// ---- memory ----------------------------------------------------------------

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
    if (!layout_fits(B, T, cB, cT) || C != cC || H != cH)
        return error_set(err, "SwiGLU: the %s cannot hold B=%d T=%d C=%d "
                         "H=%d: it holds B*T=%lld tokens of at most T=%d, "
                         "C=%d H=%d", what, B, T, C, H, (long long)cB * cT,
                         cT, cC, cH);
    return 0;
}

static int cache_slots(Slot t[3], SwigluCache *c, int B, int T, int H) {
    size_t bth = (size_t)B * T * H;
    t[0] = (Slot){&c->g, bth};
    t[1] = (Slot){&c->u, bth};
    t[2] = (Slot){&c->s, bth};
    return 3;
}

size_t swiglu_cache_floats(int B, int T, int C, int H) {
    (void)C;
    SwigluCache c;
    Slot t[3];
    return layout_floats(t, cache_slots(t, &c, B, T, H));
}

int swiglu_cache_alloc(SwigluCache *c, int B, int T, int C, int H,
                       Error *err) {
    memset(c, 0, sizeof *c);
    if (check_sizes(B, T, C, H, err) != 0) return -1;
    Slot t[3];
    c->mem = layout_alloc(t, cache_slots(t, c, B, T, H));
    c->B = B, c->T = T, c->C = C, c->H = H;
    return 0;
}

void swiglu_cache_free(SwigluCache *c) {
    free(c->mem);
    memset(c, 0, sizeof *c);
}

static int scratch_slots(Slot t[3], SwigluScratch *s, int B, int T,
                         int H) {
    size_t bth = (size_t)B * T * H;
    t[0] = (Slot){&s->ds, bth};
    t[1] = (Slot){&s->dg, bth};
    t[2] = (Slot){&s->du, bth};
    return 3;
}

size_t swiglu_scratch_floats(int B, int T, int C, int H) {
    (void)C;
    SwigluScratch s;
    Slot t[3];
    return layout_floats(t, scratch_slots(t, &s, B, T, H));
}

int swiglu_scratch_alloc(SwigluScratch *s, int B, int T, int C, int H,
                         Error *err) {
    memset(s, 0, sizeof *s);
    if (check_sizes(B, T, C, H, err) != 0) return -1;
    Slot t[3];
    s->mem = layout_alloc(t, scratch_slots(t, s, B, T, H));
    s->B = B, s->T = T, s->C = C, s->H = H;
    return 0;
}

void swiglu_scratch_free(SwigluScratch *s) {
    free(s->mem);
    memset(s, 0, sizeof *s);
}
