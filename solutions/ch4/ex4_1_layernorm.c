// Exercise 4.1 - reference answer, as plain loops in double.
#include <math.h>

#include "ch4_exercises.h"

void ex_layernorm_forward(float *out, float *mean, float *rstd,
                          const float *inp, const float *weight,
                          const float *bias, int N, int C) {
    for (int r = 0; r < N; r++) {
        const float *x = inp + (long)r * C;
        double m = 0, v = 0;
        for (int i = 0; i < C; i++) m += x[i];
        m /= C;
        for (int i = 0; i < C; i++) v += (x[i] - m) * (x[i] - m);
        double s = 1 / sqrt(v / C + 1e-5);
        for (int i = 0; i < C; i++)
            out[(long)r * C + i] = (float)((x[i] - m) * s * weight[i]
                                           + (bias ? bias[i] : 0));
        mean[r] = (float)m;
        rstd[r] = (float)s;
    }
}
