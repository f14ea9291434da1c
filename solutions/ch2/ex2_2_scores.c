// Exercise 2.2 - reference answer.
#include <math.h>

#include "ch2_exercises.h"

void ex_masked_scores(float *scores, const float *q, const float *k,
                      const int *key_mask, bool causal, int Tq, int Tk,
                      int HS) {
    double scale = 1.0 / sqrt((double)HS);
    for (int t = 0; t < Tq; t++)
        for (int s = 0; s < Tk; s++) {
            bool hidden = (causal && s > t + (Tk - Tq))
                          || (key_mask && key_mask[s] == 0);
            double dot = 0;
            for (int i = 0; i < HS; i++)
                dot += (double)q[t * HS + i] * k[s * HS + i];
            scores[t * Tk + s] = hidden ? -INFINITY : (float)(scale * dot);
        }
}
