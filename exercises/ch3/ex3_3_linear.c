// Exercise 3.3 - the linear layer's backward pass. See ch3_exercises.h.
#include "ch3_exercises.h"
#include "exercise.h"

void ex_linear_backward(float *dinp, float *dweight, float *dbias,
                        const float *dout, const float *inp,
                        const float *weight, int N, int C_in, int C_out) {
    EXERCISE_TODO("3.3");
}
