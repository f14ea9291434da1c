// Exercise 8.3 - the tiled matrix product. See ch8_exercises.h.
//
// Write the kernel (a static __global__ function) and launch it from the
// function below with LAUNCH(...), as chapters/ch8_cuda/activation.cu does.
#include "cuda_rt.h"

extern "C" {
#include "ch8_exercises.h"
#include "exercise.h"
}

void ex_matmul_cuda(float *c, const float *a, const float *b, int M, int N,
                    int K) {
    EXERCISE_TODO("8.3");
}
