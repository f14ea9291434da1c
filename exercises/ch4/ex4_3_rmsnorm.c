// Exercise 4.3 - RMSNorm, forward and backward. See ch4_exercises.h.
#include "ch4_exercises.h"
#include "exercise.h"

void ex_rmsnorm_forward(float *out, float *rstd, const float *inp,
                        const float *weight, int N, int C) {
    EXERCISE_TODO("4.3");
}

void ex_rmsnorm_backward(float *dinp, float *dweight, const float *dout,
                         const float *inp, const float *weight,
                         const float *rstd, int N, int C) {
    EXERCISE_TODO("4.3");
}
