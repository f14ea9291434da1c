// Exercise 5.3 - reference answer: sort a copy to find the k-th largest,
// then hide everything below it.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ch5_exercises.h"
#include "mem.h"

static int cmp_desc(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);                    // larger first
}

void ex_top_k(float *logits, int V, int k) {
    if (k <= 0 || k >= V) return;
    float *sorted = xmalloc((size_t)V * sizeof *sorted);
    memcpy(sorted, logits, (size_t)V * sizeof *sorted);
    qsort(sorted, (size_t)V, sizeof *sorted, cmp_desc);
    float kth = sorted[k - 1];
    for (int v = 0; v < V; v++)
        if (logits[v] < kth) logits[v] = -INFINITY;
    free(sorted);
}
