// dropout.cu - chapter 3's dropout on the GPU: one thread per element,
// each drawing its own uniform from a hash of (seed, offset + i) (see
// dropout.cuh for why the GPU cannot use the CPU's generator).
#include "cuda_rt.h"

extern "C" {
#include "dropout.cuh"
}

#define DROPOUT_THREADS 256   // threads per block

//> dropout-cuda
// Thread i: draws element i's uniform, keeps it (scaled) or drops it,
// and writes the mask for the backward pass. out may be inp: each thread
// reads its one element before writing it.
__global__ void dropout_forward_kernel(float *out, float *mask,
                                       const float *inp, float p,
                                       float scale, uint64_t seed,
                                       uint64_t offset, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float m = dropout_uniform(seed, offset + i) < p ? 0.0f : scale;
    mask[i] = m;
    out[i] = inp[i] * m;
}

// dinp += dout * mask: the same factor as the forward pass, or nothing
// (or dinp = dout * mask, when not accumulate; dinp may be dout then).
__global__ void dropout_backward_kernel(float *dinp, bool accumulate,
                                        const float *dout,
                                        const float *mask, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float g = dout[i] * mask[i];
    dinp[i] = accumulate ? dinp[i] + g : g;
}
//< dropout-cuda

// p = 0: the identity, as the CPU (mask all ones, no draws).
__global__ void dropout_identity_kernel(float *out, float *mask,
                                        const float *inp, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    mask[i] = 1.0f;
    out[i] = inp[i];
}

void dropout_forward_cuda(float *out, float *mask, const float *inp,
                          float p, uint64_t seed, uint64_t offset,
                          size_t n) {
    if (!(p >= 0.0f && p < 1.0f))   // also catches NaN
        cuda_fail("dropout_forward_cuda", "p must be in [0, 1)", __FILE__,
                  __LINE__);
    if (n == 0) return;
    unsigned blocks = ceil_div(n, DROPOUT_THREADS);
    if (p == 0.0f)
        LAUNCH(dropout_identity_kernel, blocks, DROPOUT_THREADS, 0, out,
               mask, inp, n);
    else   // the same scale as the CPU: 1 / (1 - p) in float
        LAUNCH(dropout_forward_kernel, blocks, DROPOUT_THREADS, 0, out,
               mask, inp, p, 1.0f / (1.0f - p), seed, offset, n);
}

void dropout_backward_cuda(float *dinp, const float *dout, const float *mask,
                           size_t n) {
    if (n == 0) return;
    LAUNCH(dropout_backward_kernel, ceil_div(n, DROPOUT_THREADS),
           DROPOUT_THREADS, 0, dinp, true, dout, mask, n);
}

void dropout_backward_set_cuda(float *dinp, const float *dout,
                               const float *mask, size_t n) {
    if (n == 0) return;
    LAUNCH(dropout_backward_kernel, ceil_div(n, DROPOUT_THREADS),
           DROPOUT_THREADS, 0, dinp, false, dout, mask, n);
}
