#include "pairs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "task.h"
#include "utf8.h"

// ---- loading ----------------------------------------------------------------

// The lines of a file: starts and lengths into its text (which is kept),
// cut at every line end that read_text reads as '\n' ("\r\n" too).
typedef struct {
    char *text;
    size_t *start, *len;
    int n;
} Lines;

static int lines_read(Lines *l, const char *path, Error *err) {
    size_t bytes;
    memset(l, 0, sizeof *l);
    l->text = read_text(path, &bytes, err);
    if (!l->text) return -1;
    size_t n = 0;
    for (size_t i = 0; i < bytes; i++) n += l->text[i] == '\n';
    if (bytes > 0 && l->text[bytes - 1] != '\n') n++;   // no final newline
    if (n > 100000000) {
        free(l->text);
        return error_set(err, "%s: too many lines (%zu)", path, n);
    }
    l->start = xmalloc((n ? n : 1) * sizeof *l->start);
    l->len = xmalloc((n ? n : 1) * sizeof *l->len);
    size_t at = 0;
    for (size_t k = 0; k < n; k++) {
        size_t end = at;
        while (end < bytes && l->text[end] != '\n') end++;
        l->start[k] = at;
        l->len[k] = end - at;
        at = end + 1;
    }
    l->n = (int)n;
    return 0;
}

static void lines_free(Lines *l) {
    free(l->text);
    free(l->start);
    free(l->len);
    memset(l, 0, sizeof *l);
}

// An array of ints that grows.
typedef struct {
    int *v;
    size_t n, cap;
} IntVec;

static int *vec_room(IntVec *a, size_t more) {
    if (a->n + more > a->cap) {
        a->cap = a->cap * 2 > a->n + more ? a->cap * 2 : a->n + more + 1024;
        a->v = xrealloc(a->v, a->cap * sizeof *a->v);
    }
    return a->v + a->n;
}

// Puts "path:line: " in front of err's message.
static void error_at(Error *err, const char *path, int line) {
    char inner[sizeof err->msg];
    snprintf(inner, sizeof inner, "%s", err->msg);
    error_set(err, "%s:%d: %s", path, line, inner);
}

// Encodes line k of l onto ids; returns its length, or -1 (error) or
// cap + 1 (too long).
static int encode_line(const Lines *l, int k, EncodeFn encode,
                       const void *tok, IntVec *ids, int cap, Error *err) {
    int *out = vec_room(ids, (size_t)cap + 1);
    return encode(tok, l->text + l->start[k], l->len[k], out, cap, err);
}

int pairs_load(PairCorpus *c, const char *src_path, const char *tgt_path,
               EncodeFn encode, const void *tok, int max_len, bool drop_long,
               int *dropped, Error *err) {
    memset(c, 0, sizeof *c);
    *dropped = 0;
    Lines ls, lt;
    if (lines_read(&ls, src_path, err) != 0) return -1;
    if (lines_read(&lt, tgt_path, err) != 0) {
        lines_free(&ls);
        return -1;
    }
    int rc = -1;
    IntVec src = {0}, tgt = {0};
    if (ls.n != lt.n) {
        error_set(err, "%s has %d lines but %s has %d: they must pair line "
                  "by line", src_path, ls.n, tgt_path, lt.n);
        goto done;
    }
    c->src_off = xmalloc(((size_t)ls.n + 1) * sizeof *c->src_off);
    c->tgt_off = xmalloc(((size_t)ls.n + 1) * sizeof *c->tgt_off);
    c->line = xmalloc(((size_t)ls.n + 1) * sizeof *c->line);
    c->src_off[0] = c->tgt_off[0] = 0;
    for (int k = 0; k < ls.n; k++) {
        int ns = encode_line(&ls, k, encode, tok, &src, max_len, err);
        if (ns < 0) {
            error_at(err, src_path, k + 1);
            goto done;
        }
        int nt = encode_line(&lt, k, encode, tok, &tgt, max_len, err);
        if (nt < 0) {
            error_at(err, tgt_path, k + 1);
            goto done;
        }
        if (ns > max_len || nt > max_len) {
            if (drop_long) {
                ++*dropped;
                continue;
            }
            error_set(err, "%s:%d: more than %d tokens: max_len cannot "
                      "hold it", ns > max_len ? src_path
                      : tgt_path, k + 1, max_len);
            goto done;
        }
        src.n += (size_t)ns;
        tgt.n += (size_t)nt;
        if (src.n > 2000000000 || tgt.n > 2000000000) {
            error_set(err, "%s: too many tokens", src_path);
            goto done;
        }
        c->line[c->n] = k + 1;
        c->src_off[c->n + 1] = (int)src.n;
        c->tgt_off[c->n + 1] = (int)tgt.n;
        c->max_src = ns > c->max_src ? ns : c->max_src;
        c->max_tgt = nt > c->max_tgt ? nt : c->max_tgt;
        c->n++;
    }
    c->src = src.v ? src.v : xmalloc(sizeof *c->src);
    c->tgt = tgt.v ? tgt.v : xmalloc(sizeof *c->tgt);
    src.v = tgt.v = NULL;
    rc = 0;
done:
    free(src.v);
    free(tgt.v);
    lines_free(&ls);
    lines_free(&lt);
    if (rc != 0) pairs_free(c);
    return rc;
}

void pairs_free(PairCorpus *c) {
    free(c->src_off);
    free(c->tgt_off);
    free(c->src);
    free(c->tgt);
    free(c->line);
    memset(c, 0, sizeof *c);
}

// ---- batching -----------------------------------------------------------------

static const PairCorpus *sort_corpus;   // qsort has no context argument

//> pairs-sort
// By target length, then source length, then position: the order is the
// same on every machine (qsort is not stable; the last key makes it so).
static int by_length(const void *pa, const void *pb) {
    int a = *(const int *)pa, b = *(const int *)pb;
    const PairCorpus *c = sort_corpus;
    int d = pairs_tgt_len(c, a) - pairs_tgt_len(c, b);
    if (d == 0) d = pairs_src_len(c, a) - pairs_src_len(c, b);
    return d != 0 ? d : (a > b) - (a < b);
}
//< pairs-sort

int batcher_init(PairBatcher *b, const PairCorpus *c, int tokens,
                 uint64_t seed, Error *err) {
    memset(b, 0, sizeof *b);
    if (c->n < 1) return error_set(err, "batches: the corpus is empty");
    b->c = c;
    b->seed = seed;
    b->epoch = -1;
    b->order = xmalloc((size_t)c->n * sizeof *b->order);
    for (int i = 0; i < c->n; i++) b->order[i] = i;
    sort_corpus = c;
    qsort(b->order, (size_t)c->n, sizeof *b->order, by_length);
    sort_corpus = NULL;

    //> pairs-cut
    // Greedy: a batch takes the next pair while rows * (S + T), its slots
    // with padding, stays within `tokens`. Sorted pairs make S and T grow
    // slowly, so little of a batch is padding.
    b->b = xmalloc((size_t)c->n * sizeof *b->b);
    int i = 0;
    while (i < c->n) {
        PairBatch pb = {.first = i, .rows = 0, .S = 1, .T = 1};
        while (i < c->n) {
            int p = b->order[i];
            int S = pairs_src_len(c, p) > pb.S ? pairs_src_len(c, p) : pb.S;
            int T = pairs_tgt_len(c, p) + 1 > pb.T ? pairs_tgt_len(c, p) + 1
                                                   : pb.T;
            if ((long)(pb.rows + 1) * (S + T) > tokens) break;
            pb.rows++, pb.S = S, pb.T = T, i++;
        }
        if (pb.rows == 0) {
            int line = c->line[b->order[i]];
            batcher_free(b);
            // (its source and target, with padding)
            return error_set(err, "batches: line %d alone needs more than "
                             "%d tokens: raise the batch size", line,
                             tokens);
        }
        b->b[b->n_batches++] = pb;
    }
    //< pairs-cut
    for (int k = 0; k < b->n_batches; k++) {
        const PairBatch *pb = &b->b[k];
        if (pb->rows > b->max_rows) b->max_rows = pb->rows;
        if (pb->S > b->max_S) b->max_S = pb->S;
        if (pb->T > b->max_T) b->max_T = pb->T;
        b->src_slots += (long)pb->rows * pb->S;
        b->tgt_slots += (long)pb->rows * pb->T;
        for (int r = 0; r < pb->rows; r++) {
            int p = b->order[pb->first + r];
            b->src_tokens += pairs_src_len(c, p);
            b->tgt_tokens += pairs_tgt_len(c, p) + 1;
        }
    }
    b->perm = xmalloc((size_t)b->n_batches * sizeof *b->perm);
    return 0;
}

void batcher_free(PairBatcher *b) {
    free(b->order);
    free(b->b);
    free(b->perm);
    memset(b, 0, sizeof *b);
}

double batcher_padding(const PairBatcher *b) {
    long slots = b->src_slots + b->tgt_slots;
    return slots ? 1.0 - (double)(b->src_tokens + b->tgt_tokens) / slots : 0;
}

void batcher_fill(const PairBatcher *b, const PairBatch *pb, int *src,
                  int *tgt_in, int *tgt_out) {
    const PairCorpus *c = b->c;
    for (int r = 0; r < pb->rows; r++) {
        int p = b->order[pb->first + r];
        int ns = pairs_src_len(c, p), nt = pairs_tgt_len(c, p);
        const int *s = c->src + c->src_off[p], *t = c->tgt + c->tgt_off[p];
        int *row_s = src + (size_t)r * pb->S;
        int *row_in = tgt_in + (size_t)r * pb->T;
        int *row_out = tgt_out + (size_t)r * pb->T;
        for (int j = 0; j < pb->S; j++) row_s[j] = j < ns ? s[j] : TOK_PAD;
        for (int j = 0; j < pb->T; j++) {
            row_in[j] = j == 0 ? TOK_BOS : j <= nt ? t[j - 1] : TOK_PAD;
            row_out[j] = j < nt ? t[j] : j == nt ? TOK_EOS : TOK_PAD;
        }
    }
}

//> pairs-epoch
// Epoch e's order of the batches: a Fisher-Yates shuffle from a generator
// seeded by (seed, e) alone, so batch k of a run is known from k.
const PairBatch *batcher_batch(PairBatcher *b, long k) {
    int e = (int)(k / b->n_batches);
    if (e != b->epoch) {
        Rng r;
        rng_seed(&r, b->seed * 1000003u + (uint64_t)e);
        for (int i = 0; i < b->n_batches; i++) b->perm[i] = i;
        for (int i = b->n_batches - 1; i > 0; i--) {
            int j = (int)rng_below(&r, (uint32_t)(i + 1));
            int t = b->perm[i];
            b->perm[i] = b->perm[j], b->perm[j] = t;
        }
        b->epoch = e;
    }
    return &b->b[b->perm[k % b->n_batches]];
}
//< pairs-epoch

static int fill_next(const void *self, Rng *rng, int *src, int *tgt_in,
                     int *tgt_out, int *B, int *S, int *T, Error *err) {
    (void)rng;
    PairBatcher *b = (PairBatcher *)self;   // a batcher is never const
    const PairBatch *pb = batcher_batch(b, b->drawn);
    if ((long)pb->rows * pb->S > (long)*B * *S
        || (long)pb->rows * pb->T > (long)*B * *T || pb->S > *S
        || pb->T > *T)
        return error_set(err, "batches: a batch of %d x (%d + %d) does not "
                         "fit the activations (%d x (%d + %d))", pb->rows,
                         pb->S, pb->T, *B, *S, *T);
    batcher_fill(b, pb, src, tgt_in, tgt_out);
    *B = pb->rows, *S = pb->S, *T = pb->T;
    b->drawn++;
    return 0;
}

PairSource batcher_source(PairBatcher *b) {
    return (PairSource){.self = b, .fill = fill_next};
}

int batcher_nll(const PairBatcher *b, Seq2SeqTrain *g, double *nll,
                Error *err) {
    double sum = 0;   // in double: a corpus's worth of tokens
    long n = 0;
    for (int k = 0; k < b->n_batches; k++) {
        const PairBatch *pb = &b->b[k];
        batcher_fill(b, pb, g->src, g->tgt_in, g->tgt_out);
        SmoothedLoss l;
        if (seq2seq_forward(&g->model, &g->acts, g->src, g->tgt_in,
                            g->tgt_out, pb->rows, pb->S, pb->T, 0, false,
                            NULL, &l, err) != 0)
            return -1;
        sum += (double)l.nll * l.n_valid;   // the batch's mean, weighted
        n += l.n_valid;
    }
    *nll = n ? sum / n : NAN;
    return 0;
}
