#include "xattn.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "layout.h"
#include "linear.h"
#include "mha.h"
#include "profile.h"

// Size checks, with the memory section at the end.
static int check_sizes(int B, int Tq, int Tk, int C, int NH, Error *err);
static int check_fits(const XattnCache *c, int B, int Tq, int Tk, int C,
                      int NH, Error *err);
static bool fits(int B, int Tq, int Tk, int cB, int cTq, int cTk);

//> xattn-forward
// The attention core: the heads of q in the rows of qp, those of k and
// v in the two halves of the rows of kvp, read where they lie (chapter
// 2's HeadsLayout); attention in every head (not causal: each query sees
// the whole source but its padding), each head's output written into its
// columns of y.
static int attend(XattnCache *c, const int *src_mask, int B, int Tq, int Tk,
                  int C, int NH, Error *err) {
    int HS = C / NH;
    HeadsLayout lq = heads_in_rows(Tq, C, HS);
    return attention_forward_strided(c->y, lq, c->att, c->qp, lq, c->kvp,
                                     c->kvp + C, heads_in_rows(Tk, 2 * C, HS),
                                     src_mask, false, B, NH, Tq, Tk, HS, err);
}

int xattn_forward(float *out, XattnCache *cache, const float *x,
                  const float *memory, const float *q_proj_w,
                  const float *q_proj_b, const float *kv_proj_w,
                  const float *kv_proj_b, const float *out_proj_w,
                  const float *out_proj_b, const int *src_mask, int B,
                  int Tq, int Tk, int C, int NH, Error *err) {
    XattnCache *c = cache;
    if (check_fits(c, B, Tq, Tk, C, NH, err) != 0) return -1;
    // queries from the decoder, keys and values from the encoder
    PROFILE(PROF_MATMUL, linear_forward(c->qp, x, q_proj_w, q_proj_b,
                                        B * Tq, C, C));
    PROFILE(PROF_MATMUL, linear_forward(c->kvp, memory, kv_proj_w,
                                        kv_proj_b, B * Tk, C, 2 * C));
    int rc;
    PROFILE(PROF_ATTENTION, rc = attend(c, src_mask, B, Tq, Tk, C, NH,
                                        err));
    if (rc != 0) return -1;
    PROFILE(PROF_MATMUL, linear_forward(out, c->y, out_proj_w, out_proj_b,
                                        B * Tq, C, C));
    return 0;
}
//< xattn-forward

//> xattn-backward
// The attention core backwards, written (not added) into the gradients
// of qp and kvp, each head into the columns it was read from.
static void attend_backward(XattnScratch *s, const XattnCache *c, int B,
                            int Tq, int Tk, int C, int NH) {
    int HS = C / NH;
    HeadsLayout lq = heads_in_rows(Tq, C, HS);
    attention_backward_strided(s->dqp, s->dkvp, s->dkvp + C, s->datt, s->dy,
                               c->att, c->qp, c->kvp, c->kvp + C, lq,
                               heads_in_rows(Tk, 2 * C, HS), lq, false, B,
                               NH, Tq, Tk, HS);
}

void xattn_backward(float *dx, float *dmemory, float *dq_proj_w,
                    float *dq_proj_b, float *dkv_proj_w, float *dkv_proj_b,
                    float *dout_proj_w, float *dout_proj_b,
                    XattnScratch *scratch, const float *dout,
                    const XattnCache *cache, const float *x,
                    const float *memory, const float *q_proj_w,
                    const float *kv_proj_w, const float *out_proj_w, int B,
                    int Tq, int Tk, int C, int NH) {
    XattnScratch *s = scratch;
    const XattnCache *c = cache;
    assert(check_fits(c, B, Tq, Tk, C, NH, NULL) == 0
           && fits(B, Tq, Tk, s->B, s->Tq, s->Tk) && C == s->C
           && NH == s->NH);
    // out = y @ out_proj_w^T + out_proj_b
    memset(s->dy, 0, (size_t)B * Tq * C * sizeof *s->dy);
    PROFILE_BW(PROF_MATMUL, linear_backward(s->dy, dout_proj_w, dout_proj_b,
                                            dout, c->y, out_proj_w, B * Tq,
                                            C, C));
    PROFILE_BW(PROF_ATTENTION, attend_backward(s, c, B, Tq, Tk, C, NH));
    // qp = x @ q_proj_w^T + b: the decoder's share, into dx
    PROFILE_BW(PROF_MATMUL, linear_backward(dx, dq_proj_w, dq_proj_b, s->dqp,
                                            x, q_proj_w, B * Tq, C, C));
    // kvp = memory @ kv_proj_w^T + b: the encoder's share, added to
    // dmemory with the other layers'
    PROFILE_BW(PROF_MATMUL, linear_backward(dmemory, dkv_proj_w, dkv_proj_b,
                                            s->dkvp, memory, kv_proj_w,
                                            B * Tk, C, 2 * C));
}
//< xattn-backward

//> xattn-step
int xattn_kv_fill(XattnKv *kv, const float *memory, const float *kv_proj_w,
                  const float *kv_proj_b, int B, int Tk, int C, Error *err) {
    if (check_sizes(B, 1, Tk, C, kv->NH, err) != 0) return -1;
    if (B > kv->B || Tk > kv->Tk || C != kv->C)
        return error_set(err, "cross-attention: B=%d Tk=%d C=%d does not "
                         "fit the source cache, allocated for B<=%d Tk<=%d "
                         "C=%d", B, Tk, C, kv->B, kv->Tk, kv->C);
    // the source's keys and values, once: (B,Tk,2C), then its heads
    linear_forward(kv->kvp, memory, kv_proj_w, kv_proj_b, B * Tk, C, 2 * C);
    heads_split(kv->k, kv->kvp, 2 * C, B, Tk, C, kv->NH);
    heads_split(kv->v, kv->kvp + C, 2 * C, B, Tk, C, kv->NH);
    kv->fill_B = B, kv->len = Tk;
    return 0;
}

int xattn_step(float *out, XattnKv *kv, const float *x,
               const float *q_proj_w, const float *q_proj_b,
               const float *out_proj_w, const float *out_proj_b,
               const int *src_mask, int B, int C, int NH, Error *err) {
    if (check_sizes(B, 1, 1, C, NH, err) != 0) return -1;
    if (kv->len == 0 || B > kv->fill_B || C != kv->C || NH != kv->NH)
        return error_set(err, "cross-attention: B=%d C=%d NH=%d does not "
                         "fit the source cache, filled for B<=%d C=%d NH=%d "
                         "(Tk=%d, 0: not filled)", B, C, NH, kv->fill_B,
                         kv->C, kv->NH, kv->len);
    // One query per sequence: (B, C) is already laid out as the heads
    // (B, NH, 1, HS), and the output the same, so no split or merge.
    linear_forward(kv->q, x, q_proj_w, q_proj_b, B, C, C);
    if (attention_step(kv->y, kv->att, kv->q, kv->k, kv->v, src_mask, B,
                       NH, kv->len, kv->len, C / NH, err) != 0)
        return -1;
    linear_forward(out, kv->y, out_proj_w, out_proj_b, B, C, C);
    return 0;
}
//< xattn-step

// ---- memory ----------------------------------------------------------------

static int check_sizes(int B, int Tq, int Tk, int C, int NH, Error *err) {
    if (B < 1 || Tq < 1 || Tk < 1 || C < 1 || NH < 1)
        return error_set(err, "cross-attention: every size must be at "
                         "least 1, got B=%d Tq=%d Tk=%d C=%d NH=%d", B, Tq,
                         Tk, C, NH);
    if (C % NH != 0)
        return error_set(err, "cross-attention: C=%d channels do not split "
                         "into NH=%d heads", C, NH);
    double q = (double)B * Tq, k = (double)B * Tk;
    if (k * 2 * C > INT32_MAX || q * C > INT32_MAX
        || q * NH * Tk > INT32_MAX)
        return error_set(err, "cross-attention: B=%d Tq=%d Tk=%d C=%d "
                         "NH=%d is too large (over 2^31 floats in one "
                         "tensor)", B, Tq, Tk, C, NH);
    return 0;
}

// In tokens, on each side (common/layout.h): the queries' views hold
// B*Tq tokens, the keys' B*Tk, and the weights (B,NH,Tq,Tk) then hold
// B'Tq'Tk' <= B Tq Tk. Every view is indexed with the batch's own sizes.
static bool fits(int B, int Tq, int Tk, int cB, int cTq, int cTk) {
    return layout_fits(B, Tq, cB, cTq) && layout_fits(B, Tk, cB, cTk);
}

static int check_fits(const XattnCache *c, int B, int Tq, int Tk, int C,
                      int NH, Error *err) {
    if (check_sizes(B, Tq, Tk, C, NH, err) != 0) return -1;
    if (!fits(B, Tq, Tk, c->B, c->Tq, c->Tk) || C != c->C || NH != c->NH)
        return error_set(err, "cross-attention: the cache cannot hold B=%d "
                         "Tq=%d Tk=%d C=%d NH=%d: it holds B*Tq=%lld "
                         "queries of at most Tq=%d and B*Tk=%lld keys of "
                         "at most Tk=%d, C=%d NH=%d", B, Tq, Tk, C, NH,
                         (long long)c->B * c->Tq, c->Tq,
                         (long long)c->B * c->Tk, c->Tk, c->C, c->NH);
    return 0;
}

static int cache_slots(Slot t[4], XattnCache *c, int B, int Tq, int Tk,
                       int C, int NH) {
    size_t q = (size_t)B * Tq * C, k = (size_t)B * Tk * C;
    t[0] = (Slot){&c->qp, q};
    t[1] = (Slot){&c->kvp, 2 * k};
    t[2] = (Slot){&c->att, (size_t)B * NH * Tq * Tk};
    t[3] = (Slot){&c->y, q};
    return 4;
}

size_t xattn_cache_floats(int B, int Tq, int Tk, int C, int NH) {
    XattnCache c;
    Slot t[4];
    return layout_floats(t, cache_slots(t, &c, B, Tq, Tk, C, NH));
}

int xattn_cache_alloc(XattnCache *c, int B, int Tq, int Tk, int C, int NH,
                      Error *err) {
    memset(c, 0, sizeof *c);
    if (check_sizes(B, Tq, Tk, C, NH, err) != 0) return -1;
    Slot t[4];
    c->mem = layout_alloc(t, cache_slots(t, c, B, Tq, Tk, C, NH));
    c->B = B, c->Tq = Tq, c->Tk = Tk, c->C = C, c->NH = NH;
    return 0;
}

void xattn_cache_free(XattnCache *c) {
    free(c->mem);
    memset(c, 0, sizeof *c);
}

static int scratch_slots(Slot t[4], XattnScratch *s, int B, int Tq, int Tk,
                         int C, int NH) {
    size_t q = (size_t)B * Tq * C, k = (size_t)B * Tk * C;
    t[0] = (Slot){&s->dy, q};
    t[1] = (Slot){&s->datt, (size_t)B * NH * Tq * Tk};
    t[2] = (Slot){&s->dqp, q};
    t[3] = (Slot){&s->dkvp, 2 * k};
    return 4;
}

size_t xattn_scratch_floats(int B, int Tq, int Tk, int C, int NH) {
    XattnScratch s;
    Slot t[4];
    return layout_floats(t, scratch_slots(t, &s, B, Tq, Tk, C, NH));
}

int xattn_scratch_alloc(XattnScratch *s, int B, int Tq, int Tk, int C,
                        int NH, Error *err) {
    memset(s, 0, sizeof *s);
    if (check_sizes(B, Tq, Tk, C, NH, err) != 0) return -1;
    Slot t[4];
    s->mem = layout_alloc(t, scratch_slots(t, s, B, Tq, Tk, C, NH));
    s->B = B, s->Tq = Tq, s->Tk = Tk, s->C = C, s->NH = NH;
    return 0;
}

void xattn_scratch_free(XattnScratch *s) {
    free(s->mem);
    memset(s, 0, sizeof *s);
}

static int kv_slots(Slot t[6], XattnKv *kv, int B, int Tk, int C, int NH) {
    size_t k = (size_t)B * Tk * C, bc = (size_t)B * C;
    t[0] = (Slot){&kv->kvp, 2 * k};
    t[1] = (Slot){&kv->k, k};
    t[2] = (Slot){&kv->v, k};
    t[3] = (Slot){&kv->q, bc};
    t[4] = (Slot){&kv->att, (size_t)B * NH * Tk};
    t[5] = (Slot){&kv->y, bc};
    return 6;
}

size_t xattn_kv_floats(int B, int Tk, int C, int NH) {
    XattnKv kv;
    Slot t[6];
    return layout_floats(t, kv_slots(t, &kv, B, Tk, C, NH));
}

int xattn_kv_alloc(XattnKv *kv, int B, int Tk, int C, int NH, Error *err) {
    memset(kv, 0, sizeof *kv);
    if (check_sizes(B, 1, Tk, C, NH, err) != 0) return -1;
    Slot t[6];
    kv->mem = layout_alloc(t, kv_slots(t, kv, B, Tk, C, NH));
    kv->B = B, kv->Tk = Tk, kv->C = C, kv->NH = NH;
    return 0;
}

void xattn_kv_free(XattnKv *kv) {
    free(kv->mem);
    memset(kv, 0, sizeof *kv);
}
