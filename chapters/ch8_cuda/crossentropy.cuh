// crossentropy.cuh - chapter 5's language-model loss (crossentropy.h) on
// the GPU.
#ifndef CH8_CROSSENTROPY_CUH
#define CH8_CROSSENTROPY_CUH

#include "crossentropy.h"

#ifdef __cplusplus
extern "C" {
#endif

// As crossentropy_forward: the mean loss over the rows whose target is
// not -1 (0 when there are none) comes back to the host, and *n_valid
// (a host pointer, or NULL) gets their number. logits and targets are
// device pointers. Waits for the GPU (the loss is needed on the host).
float crossentropy_forward_cuda(const float *logits,  // (N, V)
                                const int *targets,   // (N,)
                                int N, int V, int *n_valid);

// The same in two halves, for a graph (runtime.cuh), which can hold no
// copy back to the host: the launches, which leave the sum on the
// device, and the read of the loss and of *n_valid after them (N as
// given to the launches).
void crossentropy_forward_launch_cuda(const float *logits,
                                      const int *targets, int N, int V);
float crossentropy_forward_read_cuda(int N, int *n_valid);

// As crossentropy_backward: dlogits = scale * (softmax - onehot), 0 for
// rows whose target is -1; overwritten, and may be logits itself.
void crossentropy_backward_cuda(float *dlogits,        // (N, V)
                                const float *logits,   // (N, V)
                                const int *targets,    // (N,)
                                int N, int V, float scale);

#ifdef __cplusplus
}
#endif

#endif
