// Exercise 8.5 - column sums in chunks, without atomics. See
// ch8_exercises.h.
//
// Write the two kernels (static __global__ functions) and launch them from
// the function below with LAUNCH(...), as chapters/ch8_cuda/linear.cu
// does.
#include "cuda_rt.h"

extern "C" {
#include "ch8_exercises.h"
#include "exercise.h"
}

void ex_column_sums_cuda(float *dst, const float *m, int N, int C, int rows,
                         float *part) {
    EXERCISE_TODO("8.5");
}
