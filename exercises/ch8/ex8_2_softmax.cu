// Exercise 8.2 - softmax, one block per row. See ch8_exercises.h.
//
// Write the kernel (a static __global__ function) and launch it from the
// function below with LAUNCH(...), as chapters/ch8_cuda/activation.cu does.
#include "cuda_rt.h"

extern "C" {
#include "ch8_exercises.h"
#include "exercise.h"
}

void ex_softmax_forward_cuda(float *out, const float *inp, int N, int D) {
    EXERCISE_TODO("8.2");
}
