// Exercise 1.1 - reference answer. A different route from the chapter's
// bit set: sort a copy of the text, then keep each first occurrence.
#include <stdlib.h>
#include <string.h>

#include "ch1_exercises.h"

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int ex_vocab_build(Vocab *v, const uint32_t *text, size_t n) {
    if (n == 0) return -1;
    uint32_t *sorted = malloc(n * sizeof *sorted);
    if (!sorted) return -1;
    memcpy(sorted, text, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_u32);
    size_t unique = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || sorted[i] != sorted[unique - 1])
            sorted[unique++] = sorted[i];
    v->chars = realloc(sorted, unique * sizeof *sorted);
    v->size = (int)unique;
    return 0;
}

int ex_encode(const Vocab *v, const uint32_t *text, size_t n, int *ids) {
    for (size_t i = 0; i < n; i++) {
        const uint32_t *hit = bsearch(&text[i], v->chars, (size_t)v->size,
                                      sizeof *v->chars, cmp_u32);
        if (!hit) return -1;
        ids[i] = (int)(hit - v->chars);
    }
    return 0;
}

int ex_decode(const Vocab *v, const int *ids, size_t n, uint32_t *text) {
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= v->size) return -1;
        text[i] = v->chars[ids[i]];
    }
    return 0;
}
