// Exercise 2.3 - reference answer.
#include <math.h>

#include "ch2_exercises.h"

void ex_attention_head(float *out, float *att, const float *q,
                       const float *k, const float *v, const int *key_mask,
                       bool causal, int Tq, int Tk, int HS) {
    // scores with -inf where hidden (exercise 2.2), then a softmax that
    // leaves hidden keys at 0 and a row with nothing visible all zero
    ex_masked_scores(att, q, k, key_mask, causal, Tq, Tk, HS);
    for (int t = 0; t < Tq; t++) {
        float *row = att + t * Tk;
        float m = -INFINITY;
        for (int s = 0; s < Tk; s++)
            if (row[s] > m) m = row[s];
        double sum = 0;
        for (int s = 0; s < Tk; s++)
            sum += row[s] == -INFINITY ? 0.0 : exp((double)row[s] - m);
        for (int s = 0; s < Tk; s++)
            row[s] = row[s] == -INFINITY ? 0.0f
                                         : (float)(exp((double)row[s] - m)
                                                   / sum);
        for (int i = 0; i < HS; i++) {
            double acc = 0;
            for (int s = 0; s < Tk; s++) acc += (double)row[s] * v[s * HS + i];
            out[t * HS + i] = (float)acc;
        }
    }
}
