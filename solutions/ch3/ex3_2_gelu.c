// Exercise 3.2 - reference answer.
#include <math.h>

#include "ch3_exercises.h"

// Phi(x) = (1 + erf(x / sqrt 2)) / 2, computed as erfc(-x / sqrt 2) / 2,
// which stays accurate for very negative x.
static double cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

static double pdf(double x) {
    return exp(-0.5 * x * x) / sqrt(2.0 * 3.14159265358979323846);
}

void ex_gelu_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = (float)(inp[i] * cdf(inp[i]));
}

void ex_gelu_backward(float *dinp, const float *dout, const float *inp,
                      size_t n) {
    for (size_t i = 0; i < n; i++) {
        double x = inp[i];
        dinp[i] += (float)(dout[i] * (cdf(x) + x * pdf(x)));
    }
}
