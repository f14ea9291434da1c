// Exercise 9.4 - GPT-2's GELU, the tanh form, forward and backward.
// See ch9_exercises.h.
#include "ch9_exercises.h"
#include "exercise.h"

void ex_gelu_tanh_forward(float *out, const float *inp, size_t n) {
    EXERCISE_TODO("9.4");
}

void ex_gelu_tanh_backward(float *dinp, const float *dout, const float *inp,
                           size_t n) {
    EXERCISE_TODO("9.4");
}
