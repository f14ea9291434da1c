// Exercise 2.1 - reference answer.
#include <math.h>

#include "ch2_exercises.h"

void ex_softmax(float *out, const float *inp, int N, int D) {
    for (int n = 0; n < N; n++) {
        const float *x = inp + (long)n * D;
        float *y = out + (long)n * D;
        // softmax(x) = softmax(x - c) for any c; c = max(x) makes every
        // exponent <= 0 (no overflow) and one of them 0 (sum >= 1).
        float m = x[0];
        for (int i = 1; i < D; i++)
            if (x[i] > m) m = x[i];
        double sum = 0;
        for (int i = 0; i < D; i++) sum += exp((double)x[i] - m);
        for (int i = 0; i < D; i++)
            y[i] = (float)(exp((double)x[i] - m) / sum);
    }
}
