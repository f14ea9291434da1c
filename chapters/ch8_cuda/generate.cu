// generate.cu - chapter 5's generation on the GPU (generate.cuh). Unlike
// the other files here, nothing of generate.c is rewritten: its loop,
// generate_with, takes its logits from a LogitsSource, and this file is
// a source whose logits come from the GPU. The loop, the sampling and the
// random numbers stay on the host: they are the same work whatever
// computes the logits, and one row of V logits is little to sample.
//
// No KV cache: every new token runs the whole window (at most block_size
// ids) through gpt_forward_cuda, nanoGPT's way. The cache is chapter 5's
// lesson; on the GPU it would need kernels of its own (one query against
// the cached keys, and the cache's upkeep) for text that is only a
// sample of the training's progress, while the trainer's activations are
// already there to run a full window in. Only the last position's V
// logits come back to the host: one small copy per token.
#include "cuda_rt.h"

#include <stdlib.h>

extern "C" {
#include "generate.cuh"
#include "layout.h"
#include "mem.h"
}

typedef struct {
    const GptCuda *m;
    GptCudaActs *a;
    float *logits;   // (V,) on the host
} GpuSource;

//> gpu-fill
// The window ids[0 .. n-1] as one sequence (B=1, T=n) through the whole
// model, without targets or dropout; then the logits of its last
// position, which predict the next id, to the host.
static int gpu_fill(void *self, const int *ids, int n, Error *err) {
    GpuSource *s = (GpuSource *)self;
    int V = s->m->cfg.vocab_size;
    if (gpt_forward_cuda(s->m, s->a, ids, NULL, 1, n, false, NULL, NULL,
                         err) != 0)
        return -1;
    cuda_download(s->logits, s->a->logits + (size_t)(n - 1) * V, V);
    return 0;
}
//< gpu-fill

int generate_cuda_window(const GptConfig *c, int n_prompt,
                         const GenOptions *o) {
    if (o->max_new_tokens <= 0) return 0;
    // the last window holds every id but the newest
    long n = (long)n_prompt + o->max_new_tokens - 1;
    return n < c->block_size ? (int)n : c->block_size;
}

int generate_cuda(const GptCuda *m, GptCudaActs *a, const int *prompt,
                  int n_prompt, int *out, const GenOptions *o,
                  TokenFn on_token, void *ctx, GenStats *stats, Error *err) {
    const GptConfig *c = &m->cfg;
    // refused before any token is written, not at the first long window
    int T = generate_cuda_window(c, n_prompt, o);
    if (T > 0 && !layout_fits(1, T, a->B, a->T))
        return error_set(err, "generate: GPU activations allocated for "
                         "B=%d T=%d cannot hold a window of %d tokens "
                         "(block_size=%d)", a->B, a->T, T, c->block_size);
    GpuSource s = {m, a, (float *)xmalloc((size_t)c->vocab_size
                                          * sizeof(float))};
    LogitsSource src = {&s, c->vocab_size, c->block_size, s.logits,
                        gpu_fill, NULL};   // no step: no cache
    int rc = generate_with(&src, prompt, n_prompt, out, o, on_token, ctx,
                           stats, err);
    free(s.logits);
    return rc;
}
