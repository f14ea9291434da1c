// Exercise 7.3 - reference answer: per row, the log-sum-exp with the
// maximum taken out, the loss as (lse - z_y) + eps * (z_y - mean z), and
// the gradient softmax - q, all scaled by 1 / n_valid at the end.
#include <math.h>
#include <string.h>

#include "ch7_exercises.h"

float ex_smoothed_xent(float *dlogits, const float *logits,
                       const int *targets, int N, int V, int pad,
                       float eps) {
    int valid = 0;
    for (int n = 0; n < N; n++) valid += targets[n] != pad;
    double total = 0;
    for (int n = 0; n < N; n++) {
        const float *z = logits + (size_t)n * V;
        float *d = dlogits + (size_t)n * V;
        int y = targets[n];
        if (y == pad) {
            memset(d, 0, (size_t)V * sizeof *d);
            continue;
        }
        double mx = z[0], sum = 0, mean = 0;
        for (int v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
        for (int v = 0; v < V; v++) {
            sum += exp(z[v] - mx);
            mean += z[v];
        }
        mean /= V;
        double lse = mx + log(sum);
        total += (lse - z[y]) + eps * (z[y] - mean);
        for (int v = 0; v < V; v++) {
            double q = eps / V + (v == y ? 1.0 - eps : 0.0);
            d[v] = (float)((exp(z[v] - lse) - q) / valid);
        }
    }
    return valid ? (float)(total / valid) : 0.0f;
}
