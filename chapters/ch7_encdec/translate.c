#include "translate.h"

#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "task.h"
#include "threads.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static const int *sort_off;   // qsort has no context argument

static int by_source_length(const void *pa, const void *pb) {
    int a = *(const int *)pa, b = *(const int *)pb;
    int d = (sort_off[a + 1] - sort_off[a]) - (sort_off[b + 1] - sort_off[b]);
    return d != 0 ? d : (a > b) - (a < b);
}

// What one thread decodes a batch with.
typedef struct {
    Seq2SeqState st;
    int *src, *out, *len;   // the batch's sources, outputs, their lengths
    int failed;             // the first sentence of a batch that failed, or -1
    Error err;              // its message
} Work;

// The batches are shared out one at a time, to nt threads (nt is the
// caller's variable): with one thread, the loops inside may use more.
#ifdef _OPENMP
#define PARALLEL_FOR_BATCHES \
    _Pragma("omp parallel for schedule(dynamic, 1) num_threads(nt)")
static int thread_id(void) { return omp_get_thread_num(); }
static int threads_for(int tasks) {
    int t = omp_get_max_threads();
    return t < tasks ? t : tasks > 0 ? tasks : 1;
}
#else
#define PARALLEL_FOR_BATCHES
static int thread_id(void) { return 0; }
static int threads_for(int tasks) { (void)tasks; return 1; }
#endif

// The sentences a batch: as asked, or fewer, so that n sentences make a
// batch for every thread (64 lines on 2 threads: 2 batches of 32, not one
// of 64 and an idle thread).
static int batch_for(int n, int batch) {
    int t = threads_for(n), per = (n + t - 1) / t;
    return per < batch ? (per > 0 ? per : 1) : batch;
}

// A thread's state and batch buffers, for batch sources of up to S
// tokens and T outputs; and their floats' worth, with the decoding's
// work space.
static int work_alloc(Work *w, const Seq2Seq *m, int batch, int S, int T,
                      int beam, Error *err) {
    int rc = seq2seq_state_alloc(&w->st, &m->cfg, batch, S, T, beam, err);
    w->src = xmalloc((size_t)batch * S * sizeof *w->src);
    w->out = xmalloc((size_t)batch * T * sizeof *w->out);
    w->len = xmalloc((size_t)batch * sizeof *w->len);
    w->failed = -1;
    return rc;
}

static size_t work_floats(const Seq2SeqConfig *c, int batch, int S, int T,
                          int beam) {
    Work w;
    size_t b = (size_t)batch;
    return seq2seq_state_floats(c, batch, S, T, beam)
           + mem_floats(b * S * sizeof *w.src + b * T * sizeof *w.out
                        + b * sizeof *w.len)
           + (beam == 1 ? greedy_decode_floats(c, batch)
                        : beam_decode_floats(c, batch, beam, T));
}

// Decodes the B sentences order[0..B) (B <= the state's sources) on w's
// state, and gives each its own copy of its output in rows.
static int decode_one(const Seq2Seq *m, const DecodeConfig *dc,
                      const int *src, const int *off, const int *order,
                      int B, int T, Work *w, int *lens, int **rows) {
    int bS = 1;
    for (int r = 0; r < B; r++) {
        int i = order[r], len = off[i + 1] - off[i];
        if (len > bS) bS = len;
    }
    for (int r = 0; r < B; r++) {
        int i = order[r], len = off[i + 1] - off[i];
        for (int j = 0; j < bS; j++)
            w->src[(size_t)r * bS + j] = j < len ? src[off[i] + j] : TOK_PAD;
    }
    int rc = dc->beam == 1
                 ? greedy_decode(m, &w->st, w->src, B, bS, dc, w->out, T,
                                 w->len, NULL, &w->err)
                 : beam_decode(m, &w->st, w->src, B, bS, dc, w->out, T,
                               w->len, NULL, NULL, &w->err);
    for (int r = 0; r < B && rc == 0; r++) {
        int i = order[r], n = w->len[r];
        lens[i] = n;
        rows[i] = xmalloc((size_t)(n ? n : 1) * sizeof *rows[i]);
        memcpy(rows[i], w->out + (size_t)r * T, (size_t)n * sizeof *rows[i]);
    }
    return rc;
}

size_t translate_batch_floats(const Seq2SeqConfig *c, int n, int S,
                              int beam, int batch) {
    batch = batch_for(n, batch);
    int T = c->max_len, nb = (n + batch - 1) / batch, nt = threads_for(nb);
    size_t rows = n > 0 ? (size_t)n : 1;
    int *row;
    // the threads' work; order and lens; rows, each output copied twice
    return (size_t)nt * work_floats(c, batch, S > 0 ? S : 1, T, beam)
           + mem_floats(nt * sizeof(Work) + rows * (2 * sizeof(int)
                                                    + sizeof row)
                        + 2 * rows * T * sizeof *row);
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
    // An empty source (an empty line) has nothing to translate: its
    // output is empty. Decoding it would read a source of padding only
    // and invent a sentence. The empty ones sort first; decoding starts
    // after them.
    int empty = 0;
    while (empty < n && off[order[empty] + 1] == off[order[empty]]) empty++;

    int T = max_len;   // the most target positions the state can hold
    batch = batch_for(n - empty, batch);
    int nb = (n - empty + batch - 1) / batch, nt = threads_for(nb);
    Work *w = xcalloc((size_t)nt, sizeof *w);
    int rc = 0;
    for (int k = 0; k < nt && rc == 0; k++)
        rc = work_alloc(&w[k], m, batch, S, T, dc->beam, err);
    int *lens = xcalloc((size_t)(n ? n : 1), sizeof *lens);
    int **rows = xcalloc((size_t)(n ? n : 1), sizeof *rows);
    // Each thread decodes whole batches, one at a time, on its own state
    // and on one core: the OpenMP loops and GEMMs inside run on the
    // thread that calls them, even when there is one batch for one
    // thread. A step of a batch is too little work to share out: its
    // threads would wait for each other dozens of times a step, and far
    // longer when another program holds a core (one sentence on 2 threads
    // beside a busy process took 4.5 s, on 1 thread 0.2). The longest
    // batches go first, so that no thread is left with one at the end;
    // every sentence's output is the same whatever the thread.
    ThreadCounts inside = threads_set(1);
    PARALLEL_FOR_BATCHES
    for (int q = 0; q < nb; q++) {
        Work *me = &w[thread_id()];
        int first = empty + (nb - 1 - q) * batch;
        if (rc != 0 || me->failed >= 0) continue;
        if (decode_one(m, dc, src, off, order + first,
                       n - first < batch ? n - first : batch, T, me, lens,
                       rows) != 0)
            me->failed = first;
    }
    threads_restore(inside);
    for (int k = 0; k < nt && rc == 0; k++)   // the first batch that failed
        if (w[k].failed >= 0) {
            int f = k;
            for (int j = k + 1; j < nt; j++)
                if (w[j].failed >= 0 && w[j].failed < w[f].failed) f = j;
            if (err) *err = w[f].err;
            rc = -1;
        }
    if (rc == 0) {
        out_off[0] = 0;
        for (int i = 0; i < n; i++) out_off[i + 1] = out_off[i] + lens[i];
        *out = xmalloc((size_t)(out_off[n] ? out_off[n] : 1) * sizeof **out);
        for (int i = 0; i < n; i++)
            if (lens[i] > 0)   // an empty source has no row
                memcpy(*out + out_off[i], rows[i],
                       (size_t)lens[i] * sizeof **out);
    }
    for (int i = 0; i < n; i++) free(rows[i]);
    free(rows);
    free(lens);
    for (int k = 0; k < nt; k++) {
        free(w[k].src);
        free(w[k].out);
        free(w[k].len);
        seq2seq_state_free(&w[k].st, &m->cfg);
    }
    free(w);
    free(order);
    return rc;
}
