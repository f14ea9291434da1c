// Exercise 8.1 - GELU on the GPU, one thread per element. See ch8_exercises.h.
//
// Write the kernel (a static __global__ function) and launch it from the
// function below with LAUNCH(...), as chapters/ch8_cuda/activation.cu does.
#include "cuda_rt.h"

extern "C" {
#include "ch8_exercises.h"
#include "exercise.h"
}

void ex_gelu_forward_cuda(float *out, const float *inp, size_t n) {
    EXERCISE_TODO("8.1");
}
