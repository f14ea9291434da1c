// Exercise 6.1 - reference answer: for each row, one pass for the
// maximum, one for the sum of exponentials (the loss), one to write the
// gradient. The V probabilities are never stored apart from dlogits.
#include <math.h>
#include <string.h>

#include "ch6_exercises.h"

float ex_crossentropy(float *dlogits, const float *logits,
                      const int *targets, int N, int V) {
    int n_valid = 0;
    for (int n = 0; n < N; n++) n_valid += targets[n] != -1;
    double total = 0;
    for (int n = 0; n < N; n++) {
        const float *row = logits + (size_t)n * V;
        float *d = dlogits + (size_t)n * V;
        if (targets[n] == -1) {                  // no answer: no gradient
            memset(d, 0, (size_t)V * sizeof *d);
            continue;
        }
        // exp(x - max) <= 1: no overflow, and the largest term is 1
        float mx = row[0];
        for (int v = 1; v < V; v++) if (row[v] > mx) mx = row[v];
        double sum = 0;
        for (int v = 0; v < V; v++) sum += exp((double)row[v] - mx);
        double lse = mx + log(sum);
        total += lse - row[targets[n]];
        // softmax(row) - onehot(target), divided by n_valid for the mean
        double scale = 1.0 / n_valid;
        for (int v = 0; v < V; v++)
            d[v] = (float)(exp(row[v] - lse) * scale);
        d[targets[n]] -= (float)scale;
    }
    return n_valid ? (float)(total / n_valid) : 0.0f;
}
