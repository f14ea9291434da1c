// Exercise 5.5 - reference answer: the head's matrix product, then the
// lookup's scatter, then the positions' sum over the batch.
#include "ch5_exercises.h"

void ex_embedding_backward(float *dwte, float *dwpe, const float *dx,
                           const int *idx, const float *dlogits,
                           const float *h, int B, int T, int C, int V) {
    int N = B * T;
    // the head: logits[n][v] = h[n] . wte[v], so
    // dwte[v] += sum over n of dlogits[n][v] * h[n]
    for (int v = 0; v < V; v++)
        for (int c = 0; c < C; c++) {
            double sum = 0;
            for (int n = 0; n < N; n++)
                sum += (double)dlogits[(size_t)n * V + v]
                       * h[(size_t)n * C + c];
            dwte[(size_t)v * C + c] += (float)sum;
        }
    // the lookup: x[n] = wte[idx[n]] + wpe[t]
    for (int n = 0; n < N; n++) {
        float *row = dwte + (size_t)idx[n] * C;
        const float *g = dx + (size_t)n * C;
        for (int c = 0; c < C; c++) row[c] += g[c];
        if (dwpe) {
            float *prow = dwpe + (size_t)(n % T) * C;
            for (int c = 0; c < C; c++) prow[c] += g[c];
        }
    }
}
