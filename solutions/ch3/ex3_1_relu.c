// Exercise 3.1 - reference answer.
#include "ch3_exercises.h"

void ex_relu_forward(float *out, const float *inp, size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void ex_relu_backward(float *dinp, const float *dout, const float *inp,
                      size_t n) {
    // the slope is 1 where the input was positive, 0 elsewhere
    for (size_t i = 0; i < n; i++)
        if (inp[i] > 0.0f) dinp[i] += dout[i];
}
