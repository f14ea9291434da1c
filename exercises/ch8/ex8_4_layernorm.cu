// Exercise 8.4 - LayerNorm forward, one warp per row. See ch8_exercises.h.
//
// Write the kernel (a static __global__ function) and launch it from the
// function below with LAUNCH(...), as chapters/ch8_cuda/activation.cu does.
#include "cuda_rt.h"

extern "C" {
#include "ch8_exercises.h"
#include "exercise.h"
}

void ex_layernorm_forward_cuda(float *out, float *mean, float *rstd,
                               const float *inp, const float *weight,
                               const float *bias, int N, int C) {
    EXERCISE_TODO("8.4");
}
