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

// linear_backward_cuda, except that dinp is set to its gradient, not
// added to: the caller need not clear it first, and it is not read (a
// pass over it each way saved). dweight and dbias still get +=.
void linear_backward_set_cuda(float *dinp, float *dweight, float *dbias,
                              const float *dout, const float *inp,
                              const float *weight, int N, int C_in,
                              int C_out);

// dst (C,) += the sums of the columns of m (N, C), in an order fixed by
// N and C (the same bits every run). Not reentrant: the chunks' sums go
// through one scratch buffer of linear.cu's.
void column_sums_cuda(float *dst, const float *m, int N, int C);

// The pieces of column_sums_cuda, for a kernel that computes its own
// chunk sums (layernorm.cu): how N rows are cut into chunks of `rows`
// rows, the scratch (at least n floats, kept by linear.cu), and the last
// step, dst[c] += the sum over k < chunks of part[k * C + c].
typedef struct {
    int chunks, rows;
} ColumnChunks;
ColumnChunks column_chunks(int N);
float *column_scratch(size_t n);
void column_sums_finish_cuda(float *dst, const float *part, int chunks,
                             int C);

#ifdef __cplusplus
}
#endif

#endif
