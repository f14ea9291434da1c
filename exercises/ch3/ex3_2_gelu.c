// Exercise 3.2 - GELU (exact), forward and backward. See ch3_exercises.h.
#include "ch3_exercises.h"
#include "exercise.h"

void ex_gelu_forward(float *out, const float *inp, size_t n) {
    EXERCISE_TODO("3.2");
}

void ex_gelu_backward(float *dinp, const float *dout, const float *inp,
                      size_t n) {
    EXERCISE_TODO("3.2");
}
