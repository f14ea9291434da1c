// Exercise 9.4 - reference answer, computed in double.
#include <math.h>

#include "ch9_exercises.h"

static const double SQRT_2_PI = 0.79788456080286535588;   // sqrt(2 / pi)
static const double CUBIC = 0.044715;

static double inner(double x) { return SQRT_2_PI * (x + CUBIC * x * x * x); }

void ex_gelu_tanh_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double x = inp[i];
        out[i] = (float)(0.5 * x * (1.0 + tanh(inner(x))));
    }
}

// d/dx 0.5 x (1 + tanh u) = 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) u',
// u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
void ex_gelu_tanh_backward(float *dinp, const float *dout, const float *inp,
                           size_t n) {
    for (size_t i = 0; i < n; i++) {
        double x = inp[i], t = tanh(inner(x));
        double du = SQRT_2_PI * (1.0 + 3.0 * CUBIC * x * x);
        double d = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
        dinp[i] += (float)(dout[i] * d);
    }
}
