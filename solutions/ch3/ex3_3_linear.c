// Exercise 3.3 - reference answer, as plain loops (chapter 2's
// linear_backward does the same with two gemm calls).
#include "ch3_exercises.h"

void ex_linear_backward(float *dinp, float *dweight, float *dbias,
                        const float *dout, const float *inp,
                        const float *weight, int N, int C_in, int C_out) {
    for (int n = 0; n < N; n++) {
        const float *dy = dout + (long)n * C_out, *x = inp + (long)n * C_in;
        for (int o = 0; o < C_out; o++) {
            if (dbias) dbias[o] += dy[o];                 // db = sum dY
            const float *w = weight + (long)o * C_in;
            float *dw = dweight + (long)o * C_in;
            for (int i = 0; i < C_in; i++) {
                dw[i] += dy[o] * x[i];                    // dW = dY^T X
                if (dinp) dinp[(long)n * C_in + i] += dy[o] * w[i]; // dY W
            }
        }
    }
}
