// Exercise 3.1 - ReLU, forward and backward. See ch3_exercises.h.
#include "ch3_exercises.h"
#include "exercise.h"

void ex_relu_forward(float *out, const float *inp, size_t n) {
    EXERCISE_TODO("3.1");
}

void ex_relu_backward(float *dinp, const float *dout, const float *inp,
                      size_t n) {
    EXERCISE_TODO("3.1");
}
