// mha.cu - chapter 2's head split and merge on the GPU: one thread per
// float of the (B, NH, T, HS) side, so both directions are one gather.
#include "cuda_rt.h"

extern "C" {
#include "mha.cuh"
}

// i indexes (b, h, t, s) of the heads' layout; its channel is h*HS + s.
__device__ static inline size_t stream_index(size_t i, int ld, int NH,
                                             int T, int HS) {
    int s = (int)(i % HS);
    size_t r = i / HS;
    int t = (int)(r % T);
    r /= T;
    int h = (int)(r % NH);
    size_t b = r / NH;
    return (b * T + t) * ld + (size_t)h * HS + s;
}

__global__ void heads_split_kernel(float *out, const float *inp, int ld,
                                   int NH, int T, int HS, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = inp[stream_index(i, ld, NH, T, HS)];
}

__global__ void heads_merge_kernel(float *out, const float *inp, int ld,
                                   int NH, int T, int HS, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[stream_index(i, ld, NH, T, HS)] = inp[i];
}

void heads_split_cuda(float *out, const float *inp, int ld, int B, int T,
                      int C, int NH) {
    size_t n = (size_t)B * T * C;
    if (n == 0) return;
    LAUNCH(heads_split_kernel, ceil_div(n, 256), 256, 0, out, inp, ld, NH,
           T, C / NH, n);
}

void heads_merge_cuda(float *out, const float *inp, int ld, int B, int T,
                      int C, int NH) {
    size_t n = (size_t)B * T * C;
    if (n == 0) return;
    LAUNCH(heads_merge_kernel, ceil_div(n, 256), 256, 0, out, inp, ld, NH,
           T, C / NH, n);
}
