// linear.cu - chapter 2's linear layer on the GPU: the two products go
// to cuBLAS (gemm_cuda, the same calls as linear.c makes to gemm), and
// the bias is two small kernels of our own.
#include "cuda_rt.h"

extern "C" {
#include "gemm.cuh"
#include "linear.cuh"
}

// Every row of out starts as the bias: out[n, o] = bias[o].
__global__ void bias_fill_kernel(float *out, const float *bias, int N,
                                 int C_out) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)N * C_out) out[i] = bias[i % C_out];
}

// dbias[o] += the sum of column o of dout over the N rows. Thread o owns
// column o and adds its rows in order, so the sum is the same every run
// (no atomics); neighbouring threads read neighbouring floats.
__global__ void bias_grad_kernel(float *dbias, const float *dout, int N,
                                 int C_out) {
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= C_out) return;
    float sum = 0.0f;
    for (int n = 0; n < N; n++) sum += dout[(size_t)n * C_out + o];
    dbias[o] += sum;
}

//> linear-cuda
void linear_forward_cuda(float *out, const float *inp, const float *weight,
                         const float *bias, int N, int C_in, int C_out) {
    if (N == 0 || C_out == 0) return;
    size_t n = (size_t)N * C_out;
    if (bias) LAUNCH(bias_fill_kernel, ceil_div(n, 256), 256, 0, out, bias,
                     N, C_out);
    else if (C_in == 0) cuda_zero(out, n);
    if (C_in == 0) return;
    // out (N, C_out) = inp (N, C_in) @ weight^T (C_in, C_out) [+ out]
    gemm_cuda(false, true, N, C_out, C_in, 1.0f, inp, C_in, weight, C_in,
              bias ? 1.0f : 0.0f, out, C_out);
}

void linear_backward_cuda(float *dinp, float *dweight, float *dbias,
                          const float *dout, const float *inp,
                          const float *weight, int N, int C_in, int C_out) {
    if (N == 0 || C_out == 0) return;
    if (dinp && C_in > 0)   // dinp (N, C_in) += dout (N, C_out) @ weight
        gemm_cuda(false, false, N, C_in, C_out, 1.0f, dout, C_out, weight,
                  C_in, 1.0f, dinp, C_in);
    if (C_in > 0)           // dweight (C_out, C_in) += dout^T @ inp
        gemm_cuda(true, false, C_out, C_in, N, 1.0f, dout, C_out, inp,
                  C_in, 1.0f, dweight, C_in);
    if (dbias) LAUNCH(bias_grad_kernel, ceil_div((size_t)C_out, 128), 128,
                      0, dbias, dout, N, C_out);
}
//< linear-cuda
