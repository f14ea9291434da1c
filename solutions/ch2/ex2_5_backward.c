// Exercise 2.5 - reference answer.
#include <math.h>
#include <stdlib.h>

#include "ch2_exercises.h"

void ex_attention_head_backward(float *dq, float *dk, float *dv,
                                const float *dout, const float *att,
                                const float *q, const float *k,
                                const float *v, int Tq, int Tk, int HS) {
    double scale = 1.0 / sqrt((double)HS);
    double *ds = malloc((size_t)Tk * sizeof *ds);   // one row of dL/dscores
    for (int t = 0; t < Tq; t++) {
        const float *a = att + t * Tk, *g = dout + t * HS;
        // out[t] = sum_s a[s] v[s]: dv[s] += a[s] g, da[s] = g . v[s]
        double dot = 0;                              // sum_s da[s] a[s]
        for (int s = 0; s < Tk; s++) {
            double da = 0;
            for (int i = 0; i < HS; i++) {
                dv[s * HS + i] += (float)(a[s] * g[i]);
                da += (double)g[i] * v[s * HS + i];
            }
            ds[s] = da;
            dot += da * a[s];
        }
        // through the softmax, then scores[t][s] = scale * q[t] . k[s]
        for (int s = 0; s < Tk; s++) {
            double d = a[s] * (ds[s] - dot) * scale;
            for (int i = 0; i < HS; i++) {
                dq[t * HS + i] += (float)(d * k[s * HS + i]);
                dk[s * HS + i] += (float)(d * q[t * HS + i]);
            }
        }
    }
    free(ds);
}
