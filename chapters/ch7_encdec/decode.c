#include "decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crossentropy.h"
#include "fastexp.h"
#include "mem.h"

DecodeConfig decode_config_default(void) {
    return (DecodeConfig){.bos = 1, .eos = 2, .extra = 50, .beam = 4,
                          .alpha = 1.0f};
}

// The length limit of each sentence: its source's real length + extra,
// within what the state and the output hold. Returns the largest.
static int length_limits(int *limit, const Seq2Seq *m,
                         const Seq2SeqState *st, const int *src, int B,
                         int S, const DecodeConfig *dc, int max_out) {
    int most = 0;
    for (int b = 0; b < B; b++) {
        long n = 0;
        for (int s = 0; s < S; s++) n += src[b * S + s] != m->cfg.pad;
        long l = n + dc->extra;
        if (l > st->T) l = st->T;
        if (l > max_out) l = max_out;
        limit[b] = (int)l;
        if (limit[b] > most) most = limit[b];
    }
    return most;
}

static int check_call(const Seq2Seq *m, const Seq2SeqState *st,
                      const DecodeConfig *dc, int copies, int max_out,
                      Error *err) {
    int V = m->cfg.tgt_vocab;
    if (dc->bos < 0 || dc->bos >= V || dc->eos < 0 || dc->eos >= V)
        return error_set(err, "decoding: <bos> %d and <eos> %d must be in "
                         "the target vocabulary [0, %d)", dc->bos, dc->eos,
                         V);
    if (dc->extra < 0 || max_out < 1)
        return error_set(err, "decoding: extra length %d and output room "
                         "%d must be at least 0 and 1", dc->extra, max_out);
    if (!(dc->alpha >= 0 && dc->alpha <= 2))
        return error_set(err, "decoding: alpha must be in [0, 2], got %g",
                         dc->alpha);
    if (st->copies != copies)
        return error_set(err, "decoding: the state holds %d rows per "
                         "source; this search needs %d", st->copies,
                         copies);
    return 0;
}

// The first of the largest of x[0..n-1], as the loop "if (x[v] > x[y])
// y = v" finds it, in two passes the compiler vectorises: the largest
// (fastexp.h's max_fast), then the first value equal to it.
static int argmax(const float *x, int n) {
    if (x[0] != x[0]) return 0;   // a NaN first: that loop keeps 0
    float mx = max_fast(x, n);
    for (int i = 0; i < n; i++)
        if (x[i] == mx) return i;
    return 0;
}

// Greedy decoding's row i is done: the state's last row (of n) takes
// its place, with its next token and its sentence.
static int drop_row(Seq2SeqState *st, int *tokens, int *who, int i, int *n,
                    Error *err) {
    int last = --*n;
    tokens[i] = tokens[last];
    who[i] = who[last];
    return seq2seq_state_drop(st, i, err);
}

size_t greedy_decode_floats(const Seq2SeqConfig *c, int B) {
    // greedy_decode's limit, tokens, who (ints) and logits (B, V)
    return mem_floats(3 * (size_t)B * sizeof(int))
           + (size_t)B * c->tgt_vocab;
}

//> greedy
int greedy_decode(const Seq2Seq *m, Seq2SeqState *st, const int *src,
                  int B, int S, const DecodeConfig *dc, int *out,
                  int max_out, int *len, bool *done, Error *err) {
    int V = m->cfg.tgt_vocab;
    if (check_call(m, st, dc, 1, max_out, err) != 0
        || seq2seq_encode(m, st, src, B, S, 1, err) != 0)
        return -1;
    int *limit = xmalloc((size_t)B * sizeof *limit);
    int *tokens = xmalloc((size_t)B * sizeof *tokens);
    int *who = xmalloc((size_t)B * sizeof *who);
    float *logits = xmalloc((size_t)B * V * sizeof *logits);
    int steps = length_limits(limit, m, st, src, B, S, dc, max_out);
    // The state's row i decodes sentence who[i]; rows 0 .. n-1 are still
    // decoding. A sentence that ends is dropped from the state, the last
    // row taking its place, so that no step runs a finished row. Rows go
    // from the last to the first: the row that moves in was seen already.
    int n = B, rc = 0;
    for (int b = 0; b < B; b++) {
        tokens[b] = dc->bos;
        who[b] = b;
        len[b] = 0;
        if (done) done[b] = false;
    }
    for (int i = B - 1; i >= 0 && rc == 0; i--)
        if (limit[i] == 0) rc = drop_row(st, tokens, who, i, &n, err);
    for (int t = 0; t < steps && n > 0 && rc == 0; t++) {
        if ((rc = seq2seq_step(m, st, tokens, logits, err)) != 0) break;
        for (int i = n - 1; i >= 0 && rc == 0; i--) {
            const float *row = logits + (size_t)i * V;
            int y = argmax(row, V), b = who[i];
            if (y != dc->eos) {
                out[(size_t)b * max_out + len[b]++] = y;
                tokens[i] = y;
            } else if (done) {
                done[b] = true;
            }
            if (y == dc->eos || len[b] >= limit[b])
                rc = drop_row(st, tokens, who, i, &n, err);
        }
    }
    free(limit);
    free(tokens);
    free(who);
    free(logits);
    return rc;
}
//< greedy

// ---- beam search -----------------------------------------------------------

typedef struct {
    double logp;   // log P of the beam with this token
    int row, v;    // the beam it extends, the token
} Candidate;

// Better first: higher log P, then the lower row, then the lower token
// (the order greedy decoding breaks ties in).
static bool better(const Candidate *a, const Candidate *b) {
    if (a->logp != b->logp) return a->logp > b->logp;
    if (a->row != b->row) return a->row < b->row;
    return a->v < b->v;
}

// Keeps the best n of the candidates offered, sorted, in top[0..*have).
static void offer(Candidate *top, int n, int *have, Candidate c) {
    if (*have == n && !better(&c, &top[n - 1])) return;
    int i = *have < n ? (*have)++ : n - 1;
    while (i > 0 && better(&c, &top[i - 1])) {
        top[i] = top[i - 1];
        i--;
    }
    top[i] = c;
}

// Offers row r's V candidates (log P = base + z[v] - lse) to the best n.
// Once the list is full, a candidate must beat its last, so a logit below
// the cut that the last sets cannot make it: only the few above it are
// offered. The cut is loose by far more than the rounding of the doubles
// (1e-4 relative), so the list ends exactly as if all V were offered.
static void offer_row(Candidate *top, int n, int *have, const float *z,
                      int V, double base, double lse, int r) {
    float cut = -INFINITY;
    for (int v = 0; v < V; v++) {
        if (z[v] < cut) continue;   // (a NaN is offered, as before)
        offer(top, n, have, (Candidate){base + (z[v] - lse), r, v});
        if (*have == n) {
            float c = (float)(top[n - 1].logp - base + lse);
            cut = c - 1e-4f * (1.0f + fabsf(c));
        }
    }
}

static double normalised(double logp, int length, float alpha) {
    return logp / pow((double)length, (double)alpha);
}

// What a search keeps per source and per row. Every live beam of a
// search has the same length: t tokens after <bos> at step t.
typedef struct {
    int k, R, max_out;
    double *logp;      // (R,) each beam's log P
    bool *alive;       // (R,)
    int *hist, *hist2; // (R, max_out) each beam's tokens, and the next
    double *best;      // (B,) the best finished score, -inf if none
    Candidate *top;    // (2k,) the step's best candidates of one source
    int *from;         // (R,) the reorder
    int *tokens;       // (R,) the next tokens fed
    float *logits;     // (R, V)
} Beams;

// A hypothesis of n tokens ends, with an <eos> (counted in its length)
// or at the length limit: it is source b's answer if it beats the best.
static void finish(Beams *s, int b, const int *tokens, int n, bool eos,
                   double logp, float alpha, int *out, int *len, bool *done,
                   float *score) {
    double sc = normalised(logp, n + (eos ? 1 : 0), alpha);
    if (!(sc > s->best[b])) return;
    s->best[b] = sc;
    memcpy(out + (size_t)b * s->max_out, tokens, (size_t)n * sizeof *out);
    len[b] = n;
    if (done) done[b] = eos;
    if (score) score[b] = (float)sc;
}

//> beam
// Step t of source b's search, in the state's rows j*k .. j*k+k-1 (its
// live beams hold t tokens): the 2k
// best one-token extensions; an <eos> among the first k finishes a
// hypothesis, the first k others become the new beams, and those that
// reach the length limit finish there. Returns whether the search goes
// on: a live beam could still beat the best finished hypothesis.
static bool beam_step(Beams *s, int j, int b, int t, int limit, int V,
                      const DecodeConfig *dc, int *out, int *len,
                      bool *done, float *score) {
    int k = s->k, have = 0, mo = s->max_out;
    for (int r = j * k; r < (j + 1) * k; r++) {
        if (!s->alive[r]) continue;
        const float *z = s->logits + (size_t)r * V;
        offer_row(s->top, 2 * k, &have, z, V, s->logp[r],
                  crossentropy_logsumexp(z, V), r);
    }
    int n = 0;                 // new beams, into rows j*k .. j*k+n-1
    double bound = -INFINITY;  // the best score a live beam could reach
    for (int i = 0; i < have && n < k; i++) {
        const Candidate *c = &s->top[i];
        const int *h = s->hist + (size_t)c->row * mo;
        if (c->v == dc->eos) {
            if (i < k)
                finish(s, b, h, t, true, c->logp, dc->alpha, out, len, done,
                       score);
            continue;
        }
        int r = j * k + n++;
        int *h2 = s->hist2 + (size_t)r * mo;
        memcpy(h2, h, (size_t)t * sizeof *h2);
        h2[t] = c->v;
        s->from[r] = c->row;
        s->tokens[r] = c->v;
        s->logp[r] = c->logp;
        s->alive[r] = t + 1 < limit;
        if (s->alive[r]) {
            double u = normalised(c->logp, limit, dc->alpha);
            bound = u > bound ? u : bound;
        } else {
            finish(s, b, h2, t + 1, false, c->logp, dc->alpha, out, len,
                   done, score);
        }
    }
    for (int r = j * k + n; r < (j + 1) * k; r++) {   // dead rows
        s->from[r] = r;
        s->alive[r] = false;
        s->tokens[r] = dc->eos;
    }
    return bound > s->best[b];
}
//< beam

// Source j's search is over: the last of the n sources in the state
// takes its place, with its beams' rows (their t tokens so far).
static int drop_source(Beams *s, Seq2SeqState *st, int *who, int j, int *n,
                       int t, Error *err) {
    int k = s->k, last = --*n;
    who[j] = who[last];
    for (int i = 0; i < k && j != last; i++) {
        int r = j * k + i, q = last * k + i;
        s->logp[r] = s->logp[q];
        s->alive[r] = s->alive[q];
        s->tokens[r] = s->tokens[q];
        memcpy(s->hist + (size_t)r * s->max_out,
               s->hist + (size_t)q * s->max_out, (size_t)t * sizeof *s->hist);
    }
    return seq2seq_state_drop(st, j, err);
}

size_t beam_decode_floats(const Seq2SeqConfig *c, int B, int k,
                          int max_out) {
    // beam_decode's buffers below, in their order
    Beams s;
    size_t R = (size_t)B * k, b = (size_t)B;
    return mem_floats(R * sizeof *s.logp + R * sizeof *s.alive
                      + 2 * R * max_out * sizeof *s.hist
                      + b * sizeof *s.best + 2 * (size_t)k * sizeof *s.top
                      + 2 * R * sizeof *s.from
                      + 2 * b * sizeof(int) + b * sizeof(bool))
           + R * c->tgt_vocab;
}

int beam_decode(const Seq2Seq *m, Seq2SeqState *st, const int *src, int B,
                int S, const DecodeConfig *dc, int *out, int max_out,
                int *len, bool *done, float *score, Error *err) {
    int V = m->cfg.tgt_vocab, k = dc->beam;
    if (k < 1 || k > 64)
        return error_set(err, "decoding: beam width %d, expected 1 to 64",
                         k);
    if (check_call(m, st, dc, k, max_out, err) != 0
        || seq2seq_encode(m, st, src, B, S, k, err) != 0)
        return -1;
    int R = B * k;
    Beams s = {.k = k, .R = R, .max_out = max_out};
    s.logp = xcalloc((size_t)R, sizeof *s.logp);
    s.alive = xcalloc((size_t)R, sizeof *s.alive);
    s.hist = xcalloc((size_t)R * max_out, sizeof *s.hist);
    s.hist2 = xcalloc((size_t)R * max_out, sizeof *s.hist2);
    s.best = xmalloc((size_t)B * sizeof *s.best);
    s.top = xmalloc((size_t)2 * k * sizeof *s.top);
    s.from = xmalloc((size_t)R * sizeof *s.from);
    s.tokens = xmalloc((size_t)R * sizeof *s.tokens);
    s.logits = xmalloc((size_t)R * V * sizeof *s.logits);
    int *limit = xmalloc((size_t)B * sizeof *limit);
    int *who = xmalloc((size_t)B * sizeof *who);
    bool *going = xmalloc((size_t)B * sizeof *going);
    int steps = length_limits(limit, m, st, src, B, S, dc, max_out);
    // The state's rows j*k .. j*k+k-1 are the beams of source who[j], for
    // j < n: a source whose search is over is dropped, as greedy decoding
    // drops a row, the last source taking its place.
    int n = B, rc = 0;
    for (int b = 0; b < B; b++) {
        s.best[b] = -INFINITY;
        len[b] = 0;
        if (done) done[b] = false;
        if (score) score[b] = -INFINITY;
        s.alive[b * k] = true;   // one beam to start from
        who[b] = b;
    }
    for (int r = 0; r < R; r++) s.tokens[r] = dc->bos;
    for (int j = B - 1; j >= 0 && rc == 0; j--)
        if (limit[j] == 0) rc = drop_source(&s, st, who, j, &n, 0, err);
    for (int t = 0; t < steps && n > 0 && rc == 0; t++) {
        if ((rc = seq2seq_step(m, st, s.tokens, s.logits, err)) != 0) break;
        for (int j = 0; j < n; j++) {
            int b = who[j];
            going[j] = beam_step(&s, j, b, t, limit[b], V, dc, out, len,
                                 done, score);
            if (!going[j])   // its rows stay as they are, to be dropped
                for (int r = j * k; r < (j + 1) * k; r++) s.from[r] = r;
        }
        int *h = s.hist;
        s.hist = s.hist2, s.hist2 = h;
        if ((rc = seq2seq_state_reorder(st, s.from, err)) != 0) break;
        for (int j = n - 1; j >= 0 && rc == 0; j--)
            if (!going[j]) rc = drop_source(&s, st, who, j, &n, t + 1, err);
    }
    free(s.logp);
    free(s.alive);
    free(s.hist);
    free(s.hist2);
    free(s.best);
    free(s.top);
    free(s.from);
    free(s.tokens);
    free(s.logits);
    free(limit);
    free(who);
    free(going);
    return rc;
}
