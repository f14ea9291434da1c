// Exercise 8.1 - reference answer: one thread per element, the tanh form.
#include "cuda_rt.h"

extern "C" {
#include "ch8_exercises.h"
}

#define GELU_THREADS 256
#define SQRT_2_OVER_PI 0.79788456080286535588f   // sqrt(2 / pi)

// Thread i of the grid handles element i; the last block's threads past
// n do nothing (the grid is rounded up to whole blocks).
__global__ static void gelu_tanh_kernel(float *out, const float *inp,
                                        size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = inp[i];
        float u = SQRT_2_OVER_PI * (x + 0.044715f * x * x * x);
        out[i] = 0.5f * x * (1.0f + tanhf(u));
    }
}

void ex_gelu_forward_cuda(float *out, const float *inp, size_t n) {
    if (n == 0) return;   // a grid of no blocks is a launch error
    LAUNCH(gelu_tanh_kernel, ceil_div(n, GELU_THREADS), GELU_THREADS, 0,
           out, inp, n);
}
