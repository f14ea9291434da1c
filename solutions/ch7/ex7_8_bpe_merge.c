// Exercise 7.8 - reference answer: every pair of every word written down
// with its word's frequency, sorted so that equal pairs sit together (and
// the smallest pair first), summed run by run; then one pass over each
// word that merges from left to right.
#include <stdlib.h>

#include "ch7_exercises.h"
#include "mem.h"

typedef struct {
    int a, b;
    long f;
} Pair;

static int pair_cmp(const void *x, const void *y) {
    const Pair *p = x, *q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

long ex_bpe_merge_step(int *const *syms, int *lens, const long *freqs,
                       int n_words, int new_id, int pair[2]) {
    size_t n = 0;
    for (int w = 0; w < n_words; w++) n += lens[w] > 1 ? lens[w] - 1 : 0;
    if (n == 0) return 0;
    Pair *all = xmalloc(n * sizeof *all);
    size_t k = 0;
    for (int w = 0; w < n_words; w++)
        for (int i = 0; i + 1 < lens[w]; i++)
            all[k++] = (Pair){syms[w][i], syms[w][i + 1], freqs[w]};
    qsort(all, n, sizeof *all, pair_cmp);
    // the runs in ascending order: a later run wins only when larger
    long best = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        long c = 0;
        while (j < n && pair_cmp(&all[j], &all[i]) == 0) c += all[j++].f;
        if (c > best) best = c, pair[0] = all[i].a, pair[1] = all[i].b;
        i = j;
    }
    free(all);
    int a = pair[0], b = pair[1];
    for (int w = 0; w < n_words; w++) {
        int *s = syms[w], j = 0;
        for (int i = 0; i < lens[w]; j++) {
            if (i + 1 < lens[w] && s[i] == a && s[i + 1] == b)
                s[j] = new_id, i += 2;
            else s[j] = s[i++];
        }
        lens[w] = j;
    }
    return best;
}
