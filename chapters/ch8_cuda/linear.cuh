// linear.cuh - chapter 2's linear layer (linear.h) on the GPU.
#ifndef CH8_LINEAR_CUH
#define CH8_LINEAR_CUH

#include "linear.h"

#ifdef __cplusplus
extern "C" {
#endif

// As linear_forward and linear_backward (+=); device pointers.
void linear_forward_cuda(float *out,          // (N, C_out)
                         const float *inp,    // (N, C_in)
                         const float *weight, // (C_out, C_in)
                         const float *bias,   // (C_out,) or NULL
                         int N, int C_in, int C_out);
void linear_backward_cuda(float *dinp,         // (N, C_in) or NULL
                          float *dweight,      // (C_out, C_in)
                          float *dbias,        // (C_out,) or NULL
                          const float *dout,   // (N, C_out)
                          const float *inp,    // (N, C_in)
                          const float *weight, // (C_out, C_in)
                          int N, int C_in, int C_out);

#ifdef __cplusplus
}
#endif

#endif
