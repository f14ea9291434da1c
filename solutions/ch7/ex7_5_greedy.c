// Exercise 7.5 - reference answer: the encoder once, then one step of the
// decoder per position for every row together; each sentence keeps its
// own length limit and stops on its own <eos>, which is not written.
#include <stdlib.h>

#include "ch7_exercises.h"
#include "mem.h"

int ex_greedy_decode(const Seq2Seq *m, Seq2SeqState *st, const int *src,
                     int B, int S, const DecodeConfig *dc, int *out,
                     int max_out, int *len, bool *done, Error *err) {
    if (seq2seq_encode(m, st, src, B, S, 1, err) != 0) return -1;
    int V = m->cfg.tgt_vocab;
    int *limit = xmalloc((size_t)B * sizeof *limit);
    int *tok = xmalloc((size_t)B * sizeof *tok);
    bool *over = xmalloc((size_t)B * sizeof *over);
    float *logits = xmalloc((size_t)B * V * sizeof *logits);
    int live = 0;
    for (int b = 0; b < B; b++) {
        int n = 0;
        for (int s = 0; s < S; s++) n += src[b * S + s] != m->cfg.pad;
        limit[b] = n + dc->extra;
        if (limit[b] > st->T) limit[b] = st->T;
        if (limit[b] > max_out) limit[b] = max_out;
        tok[b] = dc->bos;
        len[b] = 0;
        if (done) done[b] = false;
        over[b] = limit[b] == 0;
        live += !over[b];
    }
    int rc = 0;
    while (live > 0) {
        if ((rc = seq2seq_step(m, st, tok, logits, err)) != 0) break;
        for (int b = 0; b < B; b++) {
            if (over[b]) continue;
            const float *z = logits + (size_t)b * V;
            int best = 0;
            for (int v = 1; v < V; v++)
                if (z[v] > z[best]) best = v;   // ties: the lowest id
            if (best == dc->eos) {
                if (done) done[b] = true;
                over[b] = true;
            } else {
                out[(size_t)b * max_out + len[b]++] = best;
                tok[b] = best;
                over[b] = len[b] >= limit[b];
            }
            live -= over[b];
        }
    }
    free(limit);
    free(tok);
    free(over);
    free(logits);
    return rc;
}
