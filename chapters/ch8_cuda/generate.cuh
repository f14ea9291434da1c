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
// run it in (the trainer's: they must hold B=1 and T=block_size, which
// layout_fits allows for any batch of full-length sequences). prompt and
// out are host arrays. o->use_cache is ignored: there is no cache here.
// The pass overwrites a's last forward pass (a training step makes its
// own). Returns 0, or -1 with a message (bad options, a bad id, or
// activations too small).
int generate_cuda(const GptCuda *m, GptCudaActs *a, const int *prompt,
                  int n_prompt, int *out, const GenOptions *o,
                  TokenFn on_token, void *ctx, GenStats *stats, Error *err);

#ifdef __cplusplus
}
#endif

#endif
