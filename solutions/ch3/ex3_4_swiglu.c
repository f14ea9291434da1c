// Exercise 3.4 - reference answer, as plain loops.
#include <math.h>
#include <stdlib.h>

#include "ch3_exercises.h"

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

// y (N, O) = x (N, I) @ w^T, w (O, I)
static void matmul_t(float *y, const float *x, const float *w, int N, int I,
                     int O) {
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++) {
            double acc = 0;
            for (int i = 0; i < I; i++)
                acc += (double)x[(long)n * I + i] * w[(long)o * I + i];
            y[(long)n * O + o] = (float)acc;
        }
}

void ex_swiglu_forward(float *out, float *gate, float *up, const float *x,
                       const float *w_gate, const float *w_up,
                       const float *w_down, int N, int C, int H) {
    matmul_t(gate, x, w_gate, N, C, H);
    matmul_t(up, x, w_up, N, C, H);
    float *s = malloc((size_t)N * H * sizeof *s);
    for (long i = 0; i < (long)N * H; i++)
        s[i] = (float)(gate[i] * sigmoid(gate[i]) * up[i]);
    matmul_t(out, s, w_down, N, H, C);
    free(s);
}

// The linear layer's backward: dx += dy @ w, dw += dy^T @ x.
static void linear_grads(float *dx, float *dw, const float *dy,
                         const float *x, const float *w, int N, int I,
                         int O) {
    for (int n = 0; n < N; n++)
        for (int o = 0; o < O; o++) {
            float d = dy[(long)n * O + o];
            for (int i = 0; i < I; i++) {
                dw[(long)o * I + i] += d * x[(long)n * I + i];
                dx[(long)n * I + i] += d * w[(long)o * I + i];
            }
        }
}

void ex_swiglu_backward(float *dx, float *dw_gate, float *dw_up,
                        float *dw_down, const float *dout, const float *gate,
                        const float *up, const float *x, const float *w_gate,
                        const float *w_up, const float *w_down, int N, int C,
                        int H) {
    size_t nh = (size_t)N * H;
    float *s = malloc(nh * sizeof *s), *ds = calloc(nh, sizeof *ds);
    float *dg = malloc(nh * sizeof *dg), *du = malloc(nh * sizeof *du);
    for (size_t i = 0; i < nh; i++) {
        double sg = sigmoid(gate[i]);
        s[i] = (float)(gate[i] * sg * up[i]);
    }
    linear_grads(ds, dw_down, dout, s, w_down, N, H, C);
    for (size_t i = 0; i < nh; i++) {
        double g = gate[i], sg = sigmoid(g);
        dg[i] = (float)(ds[i] * up[i] * sg * (1 + g * (1 - sg)));
        du[i] = (float)(ds[i] * g * sg);
    }
    linear_grads(dx, dw_gate, dg, x, w_gate, N, C, H);
    linear_grads(dx, dw_up, du, x, w_up, N, C, H);
    free(s);
    free(ds);
    free(dg);
    free(du);
}
