// mha.cuh - chapter 2's head split and merge (mha.h) on the GPU.
#ifndef CH8_MHA_CUH
#define CH8_MHA_CUH

#include "mha.h"

#ifdef __cplusplus
extern "C" {
#endif

// As heads_split and heads_merge; device pointers.
void heads_split_cuda(float *out,        // (B, NH, T, HS)
                      const float *inp,  // (B, T, ld)
                      int ld, int B, int T, int C, int NH);
void heads_merge_cuda(float *out,        // (B, T, ld), channels 0..C-1
                      const float *inp,  // (B, NH, T, HS)
                      int ld, int B, int T, int C, int NH);

#ifdef __cplusplus
}
#endif

#endif
