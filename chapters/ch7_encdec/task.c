#include "task.h"

#include <stdlib.h>
#include <string.h>

#include "mem.h"

int task_check(const Task *t, Error *err) {
    if (t->symbols < 1 || t->symbols > 26)
        return error_set(err, "task: %d symbols, expected 1 to 26",
                         t->symbols);
    if (t->min_len < 1 || t->min_len > t->max_len || t->max_len > 200)
        return error_set(err, "task: lengths %d to %d, expected 1 <= min "
                         "<= max <= 200", t->min_len, t->max_len);
    if (t->kind != TASK_COPY && t->kind != TASK_REVERSE
        && t->kind != TASK_SORT)
        return error_set(err, "task: unknown kind %d", (int)t->kind);
    return 0;
}

const char *task_kind_name(TaskKind k) {
    return k == TASK_COPY ? "copy" : k == TASK_REVERSE ? "reverse" : "sort";
}

int task_kind_parse(const char *s, TaskKind *out) {
    for (int k = TASK_COPY; k <= TASK_SORT; k++)
        if (strcmp(s, task_kind_name((TaskKind)k)) == 0) {
            *out = (TaskKind)k;
            return 0;
        }
    return -1;
}

int task_vocab(const Task *t) { return TOK_FIRST + t->symbols; }
int task_src_len(const Task *t) { return t->max_len; }
int task_tgt_len(const Task *t) { return t->max_len + 1; }

static int compare_ints(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int task_answer(const Task *t, const int *src, int *out) {
    int n = 0;
    while (n < t->max_len && src[n] != TOK_PAD) n++;
    for (int i = 0; i < n; i++)
        out[i] = t->kind == TASK_REVERSE ? src[n - 1 - i] : src[i];
    if (t->kind == TASK_SORT) qsort(out, (size_t)n, sizeof *out, compare_ints);
    return n;
}

//> task-example-code
void task_example(const Task *t, Rng *rng, int *src, int *tgt_in,
                  int *tgt_out) {
    int S = task_src_len(t), T = task_tgt_len(t);
    int n = t->min_len + (int)rng_below(rng, (uint32_t)(t->max_len
                                                         - t->min_len + 1));
    for (int i = 0; i < S; i++)
        src[i] = i < n ? TOK_FIRST + (int)rng_below(rng, (uint32_t)t->symbols)
                       : TOK_PAD;
    int y[200];
    task_answer(t, src, y);
    // the decoder reads <bos> y and predicts y <eos>
    for (int i = 0; i < T; i++) {
        tgt_in[i] = i == 0 ? TOK_BOS : i <= n ? y[i - 1] : TOK_PAD;
        tgt_out[i] = i < n ? y[i] : i == n ? TOK_EOS : TOK_PAD;
    }
}
//< task-example-code

void task_set_make(TaskSet *s, const Task *t, int n, uint64_t seed) {
    Rng r;
    rng_seed(&r, seed);
    s->n = n, s->S = task_src_len(t), s->T = task_tgt_len(t);
    s->src = xmalloc((size_t)n * s->S * sizeof *s->src);
    s->tgt_in = xmalloc((size_t)n * s->T * sizeof *s->tgt_in);
    s->tgt_out = xmalloc((size_t)n * s->T * sizeof *s->tgt_out);
    for (int i = 0; i < n; i++)
        task_example(t, &r, s->src + (size_t)i * s->S,
                     s->tgt_in + (size_t)i * s->T,
                     s->tgt_out + (size_t)i * s->T);
}

void task_set_free(TaskSet *s) {
    free(s->src);
    free(s->tgt_in);
    free(s->tgt_out);
    memset(s, 0, sizeof *s);
}

void task_print(FILE *f, const int *ids, int n, int stop_at_pad) {
    for (int i = 0; i < n; i++) {
        int v = ids[i];
        if (v == TOK_PAD && stop_at_pad) break;
        fputc(v == TOK_PAD ? '_' : v == TOK_BOS ? '^' : v == TOK_EOS ? '$'
                                                        : 'a' + v - TOK_FIRST,
              f);
    }
}
