// generate.cuh - chapter 5's generation (generate.h) with the GPU's model:
// chapter 5's loop (its checks, window, sampler and generator: the same
// seed and options write the same text), its logits computed on the GPU.
#ifndef CH8_GENERATE_CUH
#define CH8_GENERATE_CUH

#include "generate.h"
#include "gpt_cuda.cuh"

#ifdef __cplusplus
extern "C" {
#endif

// As generate(), with the model m on the device and the activations a to
// run it in: they must hold one sequence of the longest window the
// generation runs (generate_cuda_window), which layout_fits allows in a
// batch of full-length sequences for any generation, and in a batch of
// shorter windows (chapter 9's --window) for a short one. prompt and
// out are host arrays. o->use_cache is ignored: there is no cache here.
// The pass overwrites a's last forward pass (a training step makes its
// own). Returns 0, or -1 with a message (bad options, a bad id, or
// activations too small).
int generate_cuda(const GptCuda *m, GptCudaActs *a, const int *prompt,
                  int n_prompt, int *out, const GenOptions *o,
                  TokenFn on_token, void *ctx, GenStats *stats, Error *err);

// The longest window that generate_cuda runs through the model for a
// prompt of n_prompt ids and the options o: with no cache, every window
// up to the text's length less its last token, at most block_size (0
// when it writes no token).
int generate_cuda_window(const GptConfig *c, int n_prompt,
                         const GenOptions *o);

#ifdef __cplusplus
}
#endif

#endif
