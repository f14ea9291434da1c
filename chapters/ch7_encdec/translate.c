#include "translate.h"

#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "task.h"

static const int *sort_off;   // qsort has no context argument

static int by_source_length(const void *pa, const void *pb) {
    int a = *(const int *)pa, b = *(const int *)pb;
    int d = (sort_off[a + 1] - sort_off[a]) - (sort_off[b + 1] - sort_off[b]);
    return d != 0 ? d : (a > b) - (a < b);
}

int translate_batch(const Seq2Seq *m, const int *src, const int *off, int n,
                    const DecodeConfig *dc, int batch, int **out,
                    int *out_off, Error *err) {
    *out = NULL;
    if (n < 0 || batch < 1 || dc->beam < 1)
        return error_set(err, "translate: n %d, batch %d, beam %d", n, batch,
                         dc->beam);
    int max_len = m->cfg.max_len, S = 1;
    for (int i = 0; i < n; i++) {
        int len = off[i + 1] - off[i];
        if (len > max_len)
            return error_set(err, "translate: sentence %d has %d tokens, "
                             "more than the model's max_len %d", i + 1, len,
                             max_len);
        if (len > S) S = len;
    }
    // sentences of one length together: little padding, and the batch's
    // longest source sets its length limit
    int *order = xmalloc((size_t)(n ? n : 1) * sizeof *order);
    for (int i = 0; i < n; i++) order[i] = i;
    sort_off = off;
    qsort(order, (size_t)n, sizeof *order, by_source_length);
    sort_off = NULL;

    int T = max_len;   // the most target positions the state can hold
    Seq2SeqState st;
    if (seq2seq_state_alloc(&st, &m->cfg, batch, S, T, dc->beam, err)
        != 0) {
        free(order);
        return -1;
    }
    int *bsrc = xmalloc((size_t)batch * S * sizeof *bsrc);
    int *bout = xmalloc((size_t)batch * T * sizeof *bout);
    int *blen = xmalloc((size_t)batch * sizeof *blen);
    int *lens = xcalloc((size_t)(n ? n : 1), sizeof *lens);
    int **rows = xcalloc((size_t)(n ? n : 1), sizeof *rows);
    int rc = 0;
    for (int first = 0; first < n && rc == 0; first += batch) {
        int B = n - first < batch ? n - first : batch, bS = 1;
        for (int r = 0; r < B; r++) {
            int i = order[first + r], len = off[i + 1] - off[i];
            if (len > bS) bS = len;
        }
        for (int r = 0; r < B; r++) {
            int i = order[first + r], len = off[i + 1] - off[i];
            for (int j = 0; j < bS; j++)
                bsrc[(size_t)r * bS + j] = j < len ? src[off[i] + j]
                                                   : TOK_PAD;
        }
        rc = dc->beam == 1
                 ? greedy_decode(m, &st, bsrc, B, bS, dc, bout, T, blen,
                                 NULL, err)
                 : beam_decode(m, &st, bsrc, B, bS, dc, bout, T, blen, NULL,
                               NULL, err);
        for (int r = 0; r < B && rc == 0; r++) {
            int i = order[first + r];
            lens[i] = blen[r];
            rows[i] = xmalloc((size_t)(blen[r] ? blen[r] : 1)
                              * sizeof *rows[i]);
            memcpy(rows[i], bout + (size_t)r * T,
                   (size_t)blen[r] * sizeof *rows[i]);
        }
    }
    if (rc == 0) {
        out_off[0] = 0;
        for (int i = 0; i < n; i++) out_off[i + 1] = out_off[i] + lens[i];
        *out = xmalloc((size_t)(out_off[n] ? out_off[n] : 1) * sizeof **out);
        for (int i = 0; i < n; i++)
            memcpy(*out + out_off[i], rows[i],
                   (size_t)lens[i] * sizeof **out);
    }
    for (int i = 0; i < n; i++) free(rows[i]);
    free(rows);
    free(lens);
    free(blen);
    free(bout);
    free(bsrc);
    free(order);
    seq2seq_state_free(&st, &m->cfg);
    return rc;
}
