#include "residual.h"

#include "dropout.h"
#include "layernorm.h"
#include "parallel.h"
#include "profile.h"

//> residual
void residual_forward(float *out, const float *a, const float *b, size_t n) {
    PARALLEL_FOR
    for (size_t i = 0; i < n; i++) out[i] = a[i] + b[i];
}

void residual_backward(float *da, float *db, const float *dout, size_t n) {
    PARALLEL_FOR
    for (size_t i = 0; i < n; i++) {   // d(a + b)/da = d(a + b)/db = 1
        da[i] += dout[i];
        db[i] += dout[i];
    }
}
//< residual

//> sublayer-forward
void sublayer_norm(Sublayer *s, const float *x, const float *w,
                   const float *b, int B, int T, int C) {
    PROFILE(PROF_NORM, layernorm_forward(s->norm, s->mean, s->rstd, x, w, b,
                                         B, T, C));
}

int sublayer_add(float *out, Sublayer *s, const float *x, float p, Rng *rng,
                 size_t n, Error *err) {
    // p = 0: out goes through as it is, and no mask of ones is written
    // (nor read back by the backward pass)
    if (p != 0.0f) {
        int rc;
        PROFILE(PROF_ELEMENTWISE,
                rc = dropout_forward(out, s->mask, out, p, rng, n, err));
        if (rc != 0) return -1;
    }
    s->dropped = p != 0.0f;
    PROFILE(PROF_ELEMENTWISE, residual_forward(out, x, out, n));
    return 0;
}
//< sublayer-forward

//> sublayer-backward
const float *sublayer_add_backward(float *dx, float *dy, const float *dout,
                                   const Sublayer *s, size_t n) {
    if (!s->dropped) {                 // out = x + y
        PARALLEL_FOR
        for (size_t i = 0; i < n; i++) dx[i] += dout[i];
        return dout;
    }
    PARALLEL_FOR
    for (size_t i = 0; i < n; i++) {   // out = x + y * mask
        dx[i] += dout[i];
        dy[i] = dout[i] * s->mask[i];
    }
    return dy;
}

void sublayer_norm_backward(float *dx, float *dw, float *db,
                            const float *dnorm, const Sublayer *s,
                            const float *x, const float *w, int B, int T,
                            int C) {
    PROFILE_BW(PROF_NORM, layernorm_backward(dx, dw, db, dnorm, x, w,
                                             s->mean, s->rstd, B, T, C));
}
//< sublayer-backward

// ---- memory ----------------------------------------------------------------

int sublayer_slots(Slot t[4], Sublayer *s, int B, int T, int C,
                   bool own_mask) {
    size_t bt = (size_t)B * T, btc = bt * C;
    t[0] = (Slot){&s->norm, btc};
    t[1] = (Slot){&s->mean, bt};
    t[2] = (Slot){&s->rstd, bt};
    t[3] = (Slot){&s->mask, own_mask ? btc : 0};
    return 4;
}
