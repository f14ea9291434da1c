// Exercise 4.1 - LayerNorm forward. See ch4_exercises.h.
#include "ch4_exercises.h"
#include "exercise.h"

void ex_layernorm_forward(float *out, float *mean, float *rstd,
                          const float *inp, const float *weight,
                          const float *bias, int N, int C) {
    EXERCISE_TODO("4.1");
}
