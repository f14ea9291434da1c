// optim.cu - chapter 6's AdamW step and gradient-norm clipping on the
// GPU.
//
// AdamW is one thread per weight, doing the CPU's operations in the
// CPU's order: the host computes the step's constants (the bias
// corrections, with the same powf and sqrtf) and the kernel the rest.
// The results agree with the CPU's to float rounding, not bit for bit:
// nvcc (and g++ for the emulation, in C++) fuses a multiply and an add
// into one fma, one rounding instead of the C build's two.
//
// The norm is a reduction over every gradient of the model, so it is
// done in two passes and in double, without atomics, in an order fixed
// by n alone (the same result run after run):
//   1. NORM blocks (at most NORM_MAX_BLOCKS) each add the squares of a
//      grid-stride share of g: each thread in its own double, then a
//      tree in shared memory; block b writes partial b.
//   2. One block adds the partials the same way, and the host takes the
//      square root, as the CPU does.
// A float times a float is exact in double, so every square is exact and
// only the additions round: the GPU and the CPU then differ by at most n
// roundings of a double (about n * 1.1e-16 of the sum), which is what
// kcheck.cu allows. Double arithmetic costs little here: the kernel
// waits on memory, one float read per multiply-add.
// The partials live in a scratch array of NORM_MAX_BLOCKS + 1 doubles,
// allocated on the first call and kept until the program ends.
#include "cuda_rt.h"

#include <math.h>

extern "C" {
#include "optim.cuh"
}

#define ADAMW_THREADS 256
#define NORM_THREADS 256        // a power of two (the tree halves it)
#define NORM_PER_THREAD 16      // floats per thread before another block
#define NORM_MAX_BLOCKS 1024    // enough to fill a GPU several times
#define SCALE_THREADS 256

//> adamw-cuda
// Thread i updates weight i; the constants of step t come from the host.
__global__ void adamw_kernel(float *p, const float *g, float *m, float *v,
                             size_t n, float b1, float b2, float eps,
                             float bc2_sqrt, float step, float decay) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float gi = g[i];
    float mi = b1 * m[i] + (1.0f - b1) * gi;        // momentum
    float vi = b2 * v[i] + (1.0f - b2) * gi * gi;   // per-weight scale
    m[i] = mi, v[i] = vi;
    float denom = sqrtf(vi) / bc2_sqrt + eps;
    p[i] = p[i] * decay - step * mi / denom;        // decay, then the step
}

void adamw_update_cuda(float *p, const float *g, float *m, float *v,
                       size_t n, int t, float lr, float wd,
                       const AdamWConfig *c) {
    if (n == 0) return;
    const float b1 = c->beta1, b2 = c->beta2;
    // the bias corrections, on the host exactly as adamw_update has them
    const float bc1 = 1.0f - powf(b1, (float)t);
    const float bc2_sqrt = sqrtf(1.0f - powf(b2, (float)t));
    const float step = lr / bc1, decay = 1.0f - lr * wd;
    LAUNCH(adamw_kernel, ceil_div(n, ADAMW_THREADS), ADAMW_THREADS, 0, p, g,
           m, v, n, b1, b2, c->eps, bc2_sqrt, step, decay);
}
//< adamw-cuda

// The sum of x over the block's NORM_THREADS threads, halving in shared
// memory so that the order of the additions is fixed; thread 0 gets it.
__device__ static double block_sum(double x) {
    __shared__ double buf[NORM_THREADS];
    int tid = threadIdx.x;
    buf[tid] = x;
    __syncthreads();
    for (int half = NORM_THREADS / 2; half > 0; half /= 2) {
        if (tid < half) buf[tid] += buf[tid + half];
        __syncthreads();
    }
    return buf[0];
}

//> norm-cuda
// Pass 1: block b's threads take g[b * NORM_THREADS + tid] and every
// gridDim.x * NORM_THREADS floats after it (neighbours read neighbours),
// square each exactly in double, and the block's sum is partial[b].
__global__ void sumsq_partial_kernel(double *partial, const float *g,
                                     size_t n) {
    size_t stride = (size_t)gridDim.x * NORM_THREADS;
    double acc = 0;
    for (size_t i = (size_t)blockIdx.x * NORM_THREADS + threadIdx.x; i < n;
         i += stride) {
        double x = g[i];
        acc += x * x;
    }
    double sum = block_sum(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = sum;
}

// Pass 2, one block: *total = the sum of the `parts` partials.
__global__ void sum_partials_kernel(double *total, const double *partial,
                                    int parts) {
    double acc = 0;
    for (int b = threadIdx.x; b < parts; b += NORM_THREADS) acc += partial[b];
    double sum = block_sum(acc);
    if (threadIdx.x == 0) *total = sum;
}
//< norm-cuda

// g[i] *= s.
__global__ void scale_kernel(float *g, size_t n, float s) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) g[i] *= s;
}

static double *norm_scratch;   // the partials, then the total

double grad_norm_cuda(const float *g, size_t n) {
    if (n == 0) return 0.0;
    if (!norm_scratch)
        CUDA_CHECK(cudaMalloc((void **)&norm_scratch,
                              (NORM_MAX_BLOCKS + 1) * sizeof(double)));
    unsigned blocks = ceil_div(n, NORM_THREADS * NORM_PER_THREAD);
    if (blocks > NORM_MAX_BLOCKS) blocks = NORM_MAX_BLOCKS;
    double *total = norm_scratch + NORM_MAX_BLOCKS;
    LAUNCH(sumsq_partial_kernel, blocks, NORM_THREADS, 0, norm_scratch, g,
           n);
    LAUNCH(sum_partials_kernel, 1, NORM_THREADS, 0, total, norm_scratch,
           (int)blocks);
    double sum;
    CUDA_CHECK(cudaMemcpy(&sum, total, sizeof sum, cudaMemcpyDeviceToHost));
    return sqrt(sum);
}

double clip_grad_norm_cuda(float *g, size_t n, float max_norm) {
    double norm = grad_norm_cuda(g, n);
    if (max_norm <= 0) return norm;
    double coef = max_norm / (norm + 1e-6);   // as clip_grad_norm
    if (coef < 1)
        LAUNCH(scale_kernel, ceil_div(n, SCALE_THREADS), SCALE_THREADS, 0, g,
               n, (float)coef);
    return norm;
}
