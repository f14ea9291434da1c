// Exercise 1.2 - reference answer.
#include <string.h>

#include "ch1_exercises.h"

void ex_get_batch(int *x, int *y, const int *ids, size_t n, int B, int T,
                  Rng *rng) {
    // Offsets 0 .. n-T-1 keep the last target, ids[off + T], in range.
    for (int b = 0; b < B; b++) {
        size_t off = rng_below(rng, (uint32_t)(n - (size_t)T));
        memcpy(x + (size_t)b * T, ids + off, (size_t)T * sizeof *x);
        memcpy(y + (size_t)b * T, ids + off + 1, (size_t)T * sizeof *y);
    }
}
