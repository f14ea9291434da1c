#include "crossentropy.h"

#include <math.h>

#include "parallel.h"

// log(sum(exp(row))), with the maximum taken out first so that no exp
// overflows.
static double logsumexp(const float *row, int V) {
    float mx = row[0];
    for (int v = 1; v < V; v++) mx = row[v] > mx ? row[v] : mx;
    double sum = 0;
    for (int v = 0; v < V; v++) sum += exp((double)row[v] - mx);
    return mx + log(sum);
}

//> xent-forward
float crossentropy_forward(const float *logits, const int *targets, int N,
                           int V, int *n_valid) {
    double total = 0;
    int count = 0;
    for (int n = 0; n < N; n++) {
        if (targets[n] < 0) continue;
        const float *row = logits + (long)n * V;
        total += logsumexp(row, V) - row[targets[n]];
        count++;
    }
    if (n_valid) *n_valid = count;
    return count ? (float)(total / count) : 0.0f;
}
//< xent-forward

//> xent-backward
void crossentropy_backward(float *dlogits, const float *logits,
                           const int *targets, int N, int V, float scale) {
    PARALLEL_FOR
    for (int n = 0; n < N; n++) {
        const float *row = logits + (long)n * V;
        float *d = dlogits + (long)n * V;
        if (targets[n] < 0) {
            for (int v = 0; v < V; v++) d[v] = 0;
            continue;
        }
        float lse = (float)logsumexp(row, V);
        for (int v = 0; v < V; v++)       // p_v = exp(logit_v - lse)
            d[v] = scale * expf(row[v] - lse);
        d[targets[n]] -= scale;           // minus the one-hot
    }
}
//< xent-backward
