// Exercise 4.3 - reference answer, as plain loops in double.
#include <math.h>

#include "ch4_exercises.h"

void ex_rmsnorm_forward(float *out, float *rstd, const float *inp,
                        const float *weight, int N, int C) {
    for (int r = 0; r < N; r++) {
        const float *x = inp + (long)r * C;
        double ms = 0;
        for (int i = 0; i < C; i++) ms += (double)x[i] * x[i] / C;
        double s = 1 / sqrt(ms + 1e-6);
        for (int i = 0; i < C; i++)
            out[(long)r * C + i] = (float)(x[i] * s * weight[i]);
        rstd[r] = (float)s;
    }
}

// xhat = x * rstd; with g = weight * dout,
// dinp = rstd * (g - xhat * mean(g * xhat))
void ex_rmsnorm_backward(float *dinp, float *dweight, const float *dout,
                         const float *inp, const float *weight,
                         const float *rstd, int N, int C) {
    for (int r = 0; r < N; r++) {
        const float *x = inp + (long)r * C, *dy = dout + (long)r * C;
        double s = rstd[r], mgx = 0;
        for (int i = 0; i < C; i++) {
            mgx += (double)weight[i] * dy[i] * x[i] * s / C;
            dweight[i] += (float)(dy[i] * x[i] * s);
        }
        for (int i = 0; i < C; i++)
            dinp[(long)r * C + i] += (float)(s * (weight[i] * dy[i]
                                                  - x[i] * s * mgx));
    }
}
