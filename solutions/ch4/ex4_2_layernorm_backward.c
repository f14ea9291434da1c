// Exercise 4.2 - reference answer, as plain loops in double.
#include "ch4_exercises.h"

void ex_layernorm_backward(float *dinp, float *dweight, float *dbias,
                           const float *dout, const float *inp,
                           const float *weight, const float *mean,
                           const float *rstd, int N, int C) {
    for (int r = 0; r < N; r++) {
        const float *x = inp + (long)r * C, *dy = dout + (long)r * C;
        double s = rstd[r], mg = 0, mgx = 0;
        for (int i = 0; i < C; i++) {
            double xhat = (x[i] - mean[r]) * s, g = weight[i] * dy[i];
            mg += g / C;
            mgx += g * xhat / C;
            dweight[i] += (float)(dy[i] * xhat);
            if (dbias) dbias[i] += dy[i];
        }
        for (int i = 0; i < C; i++) {
            double xhat = (x[i] - mean[r]) * s, g = weight[i] * dy[i];
            dinp[(long)r * C + i] += (float)(s * (g - mg - xhat * mgx));
        }
    }
}
