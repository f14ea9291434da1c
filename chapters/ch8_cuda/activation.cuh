// activation.cuh - chapter 3's GELU (activation.h) on the GPU.
#ifndef CH8_ACTIVATION_CUH
#define CH8_ACTIVATION_CUH

#include <stddef.h>

#include "activation.h"   // Activation, and the CPU functions ported here

#ifdef __cplusplus
extern "C" {
#endif

// As gelu_forward and gelu_backward (+= into dinp); device pointers.
void gelu_forward_cuda(float *out,        // (n,)
                       const float *inp,  // (n,)
                       Activation kind, size_t n);
void gelu_backward_cuda(float *dinp,       // (n,)
                        const float *dout, // (n,)
                        const float *inp,  // (n,)
                        Activation kind, size_t n);

// The same with the threads per block chosen (the benchmarks time them).
void gelu_forward_cuda_block(float *out, const float *inp, Activation kind,
                             size_t n, unsigned threads);

#ifdef __cplusplus
}
#endif

#endif
