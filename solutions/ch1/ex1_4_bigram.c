// Exercise 1.4 - reference answer.
#include <math.h>
#include <stdlib.h>

#include "ch1_exercises.h"

void ex_bigram_count(long *counts, const int *ids, size_t n, int V) {
    for (size_t i = 1; i < n; i++)
        counts[(size_t)ids[i - 1] * V + ids[i]] += 1;
}

double ex_bigram_loss(const long *counts, int V, const int *ids, size_t n,
                      double alpha) {
    if (n < 2) return NAN;
    double *row_total = calloc((size_t)V, sizeof *row_total);
    for (int a = 0; a < V; a++)
        for (int b = 0; b < V; b++) row_total[a] += counts[(size_t)a * V + b];
    double nll = 0;
    for (size_t i = 1; i < n; i++) {
        int a = ids[i - 1], b = ids[i];
        nll += log(row_total[a] + alpha * V)
             - log(counts[(size_t)a * V + b] + alpha);
    }
    free(row_total);
    return nll / (double)(n - 1);
}
