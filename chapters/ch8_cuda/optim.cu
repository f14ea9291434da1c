// optim.cu - chapter 6's AdamW step and gradient-norm clipping on the
// GPU.
//
// AdamW is one thread per weight, doing the CPU's operations in the
// CPU's order: the host computes the step's constants (the bias
// corrections, with the same powf and sqrtf) and the kernel the rest.
// The trainer updates all of a model's tensors in one launch
// (adamw_update_many_cuda), each with its own weight decay.
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
//      square root, as the CPU does. (When the device clips, for a graph,
//      this block's thread 0 also works out the clipping factor, in
//      double as the host would, once: the scale kernel's threads read
//      one float, and do no double arithmetic, which many GPUs run at
//      1/32 or 1/64 of their float speed.)
// A float times a float is exact in double, so every square is exact and
// only the additions round: the GPU and the CPU then differ by at most n
// roundings of a double (about n * 1.1e-16 of the sum), which is what
// kcheck.cu allows. Double arithmetic costs little here: the kernel
// waits on memory, one float read per multiply-add.
// The partials live in a scratch array of NORM_MAX_BLOCKS + 2 doubles
// (the partials, the total, the clipping factor as a float), allocated on
// the first call and kept until the program ends.
#include "cuda_rt.h"

#include <math.h>

extern "C" {
#include "optim.cuh"
}

#define ADAMW_THREADS 256
#define ADAMW_MAX_BLOCKS 64     // per tensor, in the one-launch update
#define NORM_THREADS 256        // a power of two (the tree halves it)
#define NORM_PER_THREAD 16      // floats per thread before another block
#define NORM_MAX_BLOCKS 1024    // enough to fill a GPU several times
#define SCALE_THREADS 256

//> adamw-cuda
// Weight i's update with the constants of step t from the host (decay is
// 1 - lr * wd, or 1 for a tensor that does not decay).
__device__ static inline void adamw_one(float *p, const float *g, float *m,
                                        float *v, size_t i, float b1,
                                        float b2, float eps, float bc2_sqrt,
                                        float step, float decay) {
    float gi = g[i];
    float mi = b1 * m[i] + (1.0f - b1) * gi;        // momentum
    float vi = b2 * v[i] + (1.0f - b2) * gi * gi;   // per-weight scale
    m[i] = mi, v[i] = vi;
    float denom = sqrtf(vi) / bc2_sqrt + eps;
    p[i] = p[i] * decay - step * mi / denom;        // decay, then the step
}

// Thread i updates weight i.
__global__ void adamw_kernel(float *p, const float *g, float *m, float *v,
                             size_t n, float b1, float b2, float eps,
                             float bc2_sqrt, float step, float decay) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) adamw_one(p, g, m, v, i, b1, b2, eps, bc2_sqrt, step, decay);
}

// Every tensor of a model in one launch: row y of the grid updates
// tensor y of the table (its offset, its size, whether it decays), its
// blocks striding over the tensor. One launch instead of one per tensor
// (a GPT has a dozen per layer, most of them small).
__global__ void adamw_many_kernel(float *p, const float *g, float *m,
                                  float *v, const AdamWRange *ranges,
                                  float b1, float b2, float eps,
                                  float bc2_sqrt, float step,
                                  float decay) {
    AdamWRange r = ranges[blockIdx.y];
    float d = r.decay ? decay : 1.0f;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < r.n;
         i += stride)
        adamw_one(p, g, m, v, r.offset + i, b1, b2, eps, bc2_sqrt, step, d);
}

// The step's constants, on the host exactly as adamw_update has them.
typedef struct {
    float b1, b2, bc2_sqrt, step, decay;
} AdamWStep;

static AdamWStep adamw_step(int t, float lr, float wd,
                            const AdamWConfig *c) {
    AdamWStep s;
    s.b1 = c->beta1, s.b2 = c->beta2;
    float bc1 = 1.0f - powf(s.b1, (float)t);        // bias corrections
    s.bc2_sqrt = sqrtf(1.0f - powf(s.b2, (float)t));
    s.step = lr / bc1, s.decay = 1.0f - lr * wd;
    return s;
}

void adamw_update_cuda(float *p, const float *g, float *m, float *v,
                       size_t n, int t, float lr, float wd,
                       const AdamWConfig *c) {
    if (n == 0) return;
    AdamWStep s = adamw_step(t, lr, wd, c);
    LAUNCH(adamw_kernel, ceil_div(n, ADAMW_THREADS), ADAMW_THREADS, 0, p, g,
           m, v, n, s.b1, s.b2, c->eps, s.bc2_sqrt, s.step, s.decay);
}

void adamw_update_many_cuda(float *p, const float *g, float *m, float *v,
                            const AdamWRange *ranges, int n_ranges,
                            size_t largest, int t, float lr, float wd,
                            const AdamWConfig *c) {
    if (n_ranges == 0 || largest == 0) return;
    AdamWStep s = adamw_step(t, lr, wd, c);
    unsigned blocks = ceil_div(largest, ADAMW_THREADS);
    if (blocks > ADAMW_MAX_BLOCKS) blocks = ADAMW_MAX_BLOCKS;
    LAUNCH(adamw_many_kernel, dim3(blocks, n_ranges), ADAMW_THREADS, 0, p,
           g, m, v, ranges, s.b1, s.b2, c->eps, s.bc2_sqrt, s.step,
           s.decay);
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

// Pass 2, one block: *total = the sum of the `parts` partials. With
// coef (the device clips), thread 0 also sets *coef to clip_grad_norm's
// factor max_norm / (norm + 1e-6), computed in double as the host does
// (the same bits), or to 1 when that is not below 1.
__global__ void sum_partials_kernel(double *total, float *coef,
                                    const double *partial, int parts,
                                    float max_norm) {
    double acc = 0;
    for (int b = threadIdx.x; b < parts; b += NORM_THREADS) acc += partial[b];
    double sum = block_sum(acc);
    if (threadIdx.x == 0) {
        *total = sum;
        if (coef) {
            double c = max_norm / (sqrt(sum) + 1e-6);
            *coef = c < 1 ? (float)c : 1.0f;
        }
    }
}
//< norm-cuda

// g[i] *= s.
__global__ void scale_kernel(float *g, size_t n, float s) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) g[i] *= s;
}

static double *norm_scratch;   // the partials, the total, the factor

// The clipping factor's slot: a float in the scratch's last double.
static float *clip_coef(void) {
    return (float *)(norm_scratch + NORM_MAX_BLOCKS + 1);
}

// The two passes of grad_norm_cuda, the square of the norm left in
// norm_scratch[NORM_MAX_BLOCKS]; with max_norm > 0, the clipping factor
// in clip_coef() too.
static void sumsq_launch(const float *g, size_t n, float max_norm) {
    if (!norm_scratch)
        CUDA_CHECK(cudaMalloc((void **)&norm_scratch,
                              (NORM_MAX_BLOCKS + 2) * sizeof(double)));
    unsigned blocks = ceil_div(n, NORM_THREADS * NORM_PER_THREAD);
    if (blocks > NORM_MAX_BLOCKS) blocks = NORM_MAX_BLOCKS;
    LAUNCH(sumsq_partial_kernel, blocks, NORM_THREADS, 0, norm_scratch, g,
           n);
    LAUNCH(sum_partials_kernel, 1, NORM_THREADS, 0,
           norm_scratch + NORM_MAX_BLOCKS,
           max_norm > 0 ? clip_coef() : (float *)NULL, norm_scratch,
           (int)blocks, max_norm);
}

double grad_norm_cuda(const float *g, size_t n) {
    if (n == 0) return 0.0;
    sumsq_launch(g, n, 0.0f);
    double sum;
    CUDA_CHECK(cudaMemcpy(&sum, norm_scratch + NORM_MAX_BLOCKS, sizeof sum,
                          cudaMemcpyDeviceToHost));
    return sqrt(sum);
}

// g[i] *= *coef, clip_grad_norm_cuda's rule decided on the device (the
// factor from sum_partials_kernel; 1 means no clipping, and nothing is
// written).
__global__ void clip_scale_kernel(float *g, size_t n, const float *coef) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    float c = *coef;
    if (i < n && c < 1.0f) g[i] *= c;
}

void clip_grad_norm_launch_cuda(float *g, size_t n, float max_norm) {
    if (n == 0) return;
    sumsq_launch(g, n, max_norm);
    if (max_norm > 0)
        LAUNCH(clip_scale_kernel, ceil_div(n, SCALE_THREADS), SCALE_THREADS,
               0, g, n, (const float *)clip_coef());
}

double grad_norm_read_cuda(void) {
    if (!norm_scratch) return 0.0;
    double sum;
    CUDA_CHECK(cudaMemcpy(&sum, norm_scratch + NORM_MAX_BLOCKS, sizeof sum,
                          cudaMemcpyDeviceToHost));
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
