// Exercise 4.2 - LayerNorm backward. See ch4_exercises.h.
#include "ch4_exercises.h"
#include "exercise.h"

void ex_layernorm_backward(float *dinp, float *dweight, float *dbias,
                           const float *dout, const float *inp,
                           const float *weight, const float *mean,
                           const float *rstd, int N, int C) {
    EXERCISE_TODO("4.2");
}
