// Exercise 7.6 - reference answer. Every candidate of a source is sorted
// (a full sort: simple, and fine for small beams), the first 2k are
// walked as the contract says, and the search of a source ends when no
// live beam could still beat its best finished hypothesis.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch7_exercises.h"
#include "mem.h"

typedef struct {
    double logp;
    int r, v;
} Cand;

static int cand_order(const void *pa, const void *pb) {
    const Cand *a = pa, *b = pb;
    if (a->logp != b->logp) return a->logp > b->logp ? -1 : 1;
    if (a->r != b->r) return a->r < b->r ? -1 : 1;
    return (a->v > b->v) - (a->v < b->v);
}

// What the search keeps.
typedef struct {
    int k, V, max_out;
    float alpha;
    double *logp;          // (R,)
    bool *live;            // (R,)
    int *hist, *next;      // (R, max_out) each beam's tokens
    double *best;          // (B,)
    Cand *cand;            // (k * V,)
    int *from, *tok;       // (R,)
} Search;

// A hypothesis of n tokens of h ends (eos: with an <eos> as well).
static void finish(Search *s, int b, const int *h, int n, bool eos,
                   double logp, int *out, int *len, bool *done,
                   float *score) {
    double sc = logp / pow((double)(n + eos), (double)s->alpha);
    if (!(sc > s->best[b])) return;
    s->best[b] = sc;
    memcpy(out + (size_t)b * s->max_out, h, (size_t)n * sizeof *out);
    len[b] = n;
    if (done) done[b] = eos;
    if (score) score[b] = (float)sc;
}

// Step t of source b, whose logits are in z (R, V). Returns whether its
// search goes on.
static bool step(Search *s, int b, int t, int limit, int eos,
                 const float *z, int *out, int *len, bool *done,
                 float *score) {
    int k = s->k, V = s->V, nc = 0, mo = s->max_out;
    for (int r = b * k; r < (b + 1) * k; r++) {
        if (!s->live[r]) continue;
        const float *zr = z + (size_t)r * V;
        double mx = zr[0], sum = 0;
        for (int v = 1; v < V; v++) mx = zr[v] > mx ? zr[v] : mx;
        for (int v = 0; v < V; v++) sum += exp(zr[v] - mx);
        double lse = mx + log(sum);
        for (int v = 0; v < V; v++)
            s->cand[nc++] = (Cand){s->logp[r] + (zr[v] - lse), r, v};
    }
    qsort(s->cand, (size_t)nc, sizeof *s->cand, cand_order);
    if (nc > 2 * k) nc = 2 * k;
    int made = 0;
    double reach = -INFINITY;
    double *lp = xmalloc((size_t)k * sizeof *lp);
    bool *alive = xmalloc((size_t)k * sizeof *alive);
    for (int i = 0; i < nc && made < k; i++) {
        const Cand *c = &s->cand[i];
        const int *h = s->hist + (size_t)c->r * mo;
        if (c->v == eos) {
            if (i < k)
                finish(s, b, h, t, true, c->logp, out, len, done, score);
            continue;
        }
        int r = b * k + made++;
        int *h2 = s->next + (size_t)r * mo;
        memcpy(h2, h, (size_t)t * sizeof *h2);
        h2[t] = c->v;
        s->from[r] = c->r;
        s->tok[r] = c->v;
        lp[r - b * k] = c->logp;
        alive[r - b * k] = t + 1 < limit;
        if (alive[r - b * k]) {
            double u = c->logp / pow((double)limit, (double)s->alpha);
            if (u > reach) reach = u;
        } else {
            finish(s, b, h2, t + 1, false, c->logp, out, len, done, score);
        }
    }
    for (int j = 0; j < k; j++) {
        int r = b * k + j;
        s->logp[r] = j < made ? lp[j] : 0;
        s->live[r] = j < made && alive[j];
        if (j >= made) {
            s->from[r] = r;
            s->tok[r] = eos;
        }
    }
    free(lp);
    free(alive);
    return reach > s->best[b];
}

int ex_beam_decode(const Seq2Seq *m, Seq2SeqState *st, const int *src,
                   int B, int S, const DecodeConfig *dc, int *out,
                   int max_out, int *len, bool *done, float *score,
                   Error *err) {
    int k = dc->beam, V = m->cfg.tgt_vocab, R = B * k;
    if (seq2seq_encode(m, st, src, B, S, k, err) != 0) return -1;
    Search s = {.k = k, .V = V, .max_out = max_out, .alpha = dc->alpha};
    s.logp = xcalloc((size_t)R, sizeof *s.logp);
    s.live = xcalloc((size_t)R, sizeof *s.live);
    s.hist = xcalloc((size_t)R * max_out, sizeof *s.hist);
    s.next = xcalloc((size_t)R * max_out, sizeof *s.next);
    s.best = xmalloc((size_t)B * sizeof *s.best);
    s.cand = xmalloc((size_t)k * V * sizeof *s.cand);
    s.from = xmalloc((size_t)R * sizeof *s.from);
    s.tok = xmalloc((size_t)R * sizeof *s.tok);
    float *z = xmalloc((size_t)R * V * sizeof *z);
    int *limit = xmalloc((size_t)B * sizeof *limit);
    bool *searching = xmalloc((size_t)B * sizeof *searching);
    int steps = 0;
    for (int b = 0; b < B; b++) {
        int n = 0;
        for (int i = 0; i < S; i++) n += src[b * S + i] != m->cfg.pad;
        limit[b] = n + dc->extra;
        if (limit[b] > st->T) limit[b] = st->T;
        if (limit[b] > max_out) limit[b] = max_out;
        if (limit[b] > steps) steps = limit[b];
        s.best[b] = -INFINITY;
        len[b] = 0;
        if (done) done[b] = false;
        if (score) score[b] = -INFINITY;
        searching[b] = limit[b] > 0;
        s.live[b * k] = searching[b];
    }
    for (int r = 0; r < R; r++) s.tok[r] = dc->bos;
    int rc = 0;
    for (int t = 0; t < steps; t++) {
        if ((rc = seq2seq_step(m, st, s.tok, z, err)) != 0) break;
        int any = 0;
        for (int b = 0; b < B; b++) {
            if (searching[b])
                searching[b] = step(&s, b, t, limit[b], dc->eos, z, out,
                                    len, done, score);
            if (!searching[b])
                for (int r = b * k; r < (b + 1) * k; r++) {
                    s.from[r] = r;
                    s.tok[r] = dc->eos;
                }
            any += searching[b];
        }
        if (!any) break;
        int *h = s.hist;
        s.hist = s.next, s.next = h;
        if ((rc = seq2seq_state_reorder(st, s.from, err)) != 0) break;
    }
    free(s.logp), free(s.live), free(s.hist), free(s.next), free(s.best);
    free(s.cand), free(s.from), free(s.tok), free(z), free(limit);
    free(searching);
    return rc;
}
