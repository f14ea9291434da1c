#include "bigram.h"

#include <math.h>

void unigram_count(long *counts, const int *ids, size_t n, int V) {
    (void)V;
    for (size_t i = 0; i < n; i++) counts[ids[i]]++;
}

//> bigram
void bigram_count(long *counts, const int *ids, size_t n, int V) {
    for (size_t i = 0; i + 1 < n; i++)
        counts[(size_t)ids[i] * V + ids[i + 1]]++;
}

double bigram_loss(const long *counts, int V, const int *ids, size_t n,
                   double alpha) {
    if (n < 2) return NAN;
    double total = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        const long *row = counts + (size_t)ids[i] * V;  // what followed a
        long row_sum = 0;
        for (int b = 0; b < V; b++) row_sum += row[b];
        double p = (row[ids[i + 1]] + alpha) / (row_sum + alpha * V);
        total -= log(p);
    }
    return total / (double)(n - 1);
}
//< bigram

double unigram_loss(const long *counts, int V, const int *ids, size_t n,
                    double alpha) {
    if (n < 1) return NAN;
    long sum = 0;
    for (int b = 0; b < V; b++) sum += counts[b];
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total -= log((counts[ids[i]] + alpha) / (sum + alpha * V));
    return total / (double)n;
}
