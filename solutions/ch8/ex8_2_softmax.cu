// Exercise 8.2 - reference answer: one block per row, a tree reduction
// in shared memory for the maximum and then for the sum.
#include "cuda_rt.h"

extern "C" {
#include "ch8_exercises.h"
}

#define SOFTMAX_THREADS 128   // a power of two: the tree halves it

// The maximum (is_max) or the sum of every thread's v; every thread gets
// it. s: blockDim.x floats of shared memory.
__device__ static float block_reduce(float *s, float v, bool is_max) {
    unsigned t = threadIdx.x;
    s[t] = v;
    __syncthreads();   // every partial is written before any is read
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (t < half)
            s[t] = is_max ? fmaxf(s[t], s[t + half]) : s[t] + s[t + half];
        __syncthreads();   // this level is done before the next reads it
    }
    float r = s[0];
    __syncthreads();   // all have read s[0] before s is written again
    return r;
}

// Block n: row n. Its threads stride over the row, so any D works.
__global__ static void softmax_kernel(float *out, const float *inp, int D) {
    SHARED_ARRAY(float, s);
    const float *x = inp + (size_t)blockIdx.x * D;
    float *y = out + (size_t)blockIdx.x * D;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < D; i += blockDim.x) m = fmaxf(m, x[i]);
    m = block_reduce(s, m, true);
    float sum = 0.0f;
    for (int i = threadIdx.x; i < D; i += blockDim.x) sum += expf(x[i] - m);
    sum = block_reduce(s, sum, false);
    for (int i = threadIdx.x; i < D; i += blockDim.x)
        y[i] = expf(x[i] - m) / sum;
}

void ex_softmax_forward_cuda(float *out, const float *inp, int N, int D) {
    if (N == 0 || D == 0) return;
    LAUNCH(softmax_kernel, N, SOFTMAX_THREADS,
           SOFTMAX_THREADS * sizeof(float), out, inp, D);
}
