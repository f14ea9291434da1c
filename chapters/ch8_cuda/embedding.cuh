// embedding.cuh - chapter 5's embedding layer (embedding.h) on the GPU.
#ifndef CH8_EMBEDDING_CUH
#define CH8_EMBEDDING_CUH

#include "embedding.h"   // the CPU functions ported here

#ifdef __cplusplus
extern "C" {
#endif

// As embedding_forward; device pointers (idx too: a device int array).
void embedding_forward_cuda(float *out,          // (B, T, C)
                            const int *idx,      // (B, T) ids in [0, V)
                            const float *wte,    // (V, C)
                            float scale,         // of the rows
                            const float *pos,    // (>= T, C)
                            int B, int T, int C);

// As embedding_backward (+=; dwpos may be NULL), with the vocabulary
// size V last (the GPU's way depends on it). The same result every run:
// no float atomics (see embedding.cu). Not reentrant: a small vocabulary
// sums through linear.cu's scratch buffer.
void embedding_backward_cuda(float *dwte,        // (V, C)
                             float *dwpos,       // (>= T, C) or NULL
                             const float *dout,  // (B, T, C)
                             const int *idx,     // (B, T)
                             float scale, int B, int T, int C, int V);

#ifdef __cplusplus
}
#endif

#endif
