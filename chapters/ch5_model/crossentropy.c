#include "crossentropy.h"

#include <math.h>
#include <stddef.h>

#include "fastexp.h"
#include "parallel.h"

// The rows are a vocabulary long (thousands of logits), so their loops are
// written for the compiler to vectorise: 16 running values side by side,
// chapter 2's exp_fast instead of libm's exp (one opaque call per value),
// and sums kept in double. The order of the additions is fixed, so the
// result is too.
#define LANES 16

// sum of exp(row - mx), each exp written to out (NULL: not kept).
// exp_fast turns a NaN into a tiny number, so a NaN or infinite logit
// would vanish from the sum; `bad` adds x - x, which is 0 for every
// finite x and NaN otherwise, and makes the sum NaN as libm's exp would.
static double sum_exp(float *out, const float *row, float mx, int V) {
    double s[LANES] = {0}, sum = 0;
    float bad[LANES] = {0};
    int v = 0;
    for (; v + LANES <= V; v += LANES)
        for (int j = 0; j < LANES; j++) {
            float e = exp_fast(row[v + j] - mx);
            if (out) out[v + j] = e;
            s[j] += e;
            bad[j] += row[v + j] - row[v + j];
        }
    for (int j = 0; j < LANES; j++) sum += s[j] + bad[j];
    for (; v < V; v++) {
        float e = exp_fast(row[v] - mx);
        if (out) out[v] = e;
        sum += e + (row[v] - row[v]);
    }
    return sum;
}

// log(sum(exp(row))), with the maximum taken out first so that no exp
// overflows.
double crossentropy_logsumexp(const float *row, int V) {
    float mx = max_fast(row, V);
    return mx + log(sum_exp(NULL, row, mx, V));
}

//> xent-forward
float crossentropy_forward(const float *logits, const int *targets, int N,
                           int V, int *n_valid) {
    double total = 0;
    int count = 0;
    for (int n = 0; n < N; n++) {
        if (targets[n] < 0) continue;
        const float *row = logits + (long)n * V;
        total += crossentropy_logsumexp(row, V) - row[targets[n]];
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
        // p_v = exp(logit_v - max) / sum: the exps go straight into d,
        // then one pass scales them
        float mx = max_fast(row, V);
        float inv = (float)(scale / sum_exp(d, row, mx, V));
        for (int v = 0; v < V; v++) d[v] *= inv;
        d[targets[n]] -= scale;           // minus the one-hot
    }
}
//< xent-backward
