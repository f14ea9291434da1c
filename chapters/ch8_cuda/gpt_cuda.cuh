// gpt_cuda.cuh - chapter 5's GPT (gpt.h) on the GPU: the weights, their
// gradients and every activation live in device memory, and the forward
// and backward passes make gpt.c's list of calls, each a GPU call.
//
// The host model (a Gpt) stays the master copy of the configuration, the
// tensor list and, between uploads and downloads, the weights: a GptCuda
// mirrors its params buffer with the same layout (the same offsets), so
// a checkpoint is written from the host copy by chapter 5's code.
#ifndef CH8_GPT_CUDA_CUH
#define CH8_GPT_CUDA_CUH

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "block.cuh"
#include "error.h"
#include "gpt.h"
#include "rng.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    GptConfig cfg;
    size_t num_params;
    float *params, *grads;   // device, num_params each, the host's layout
    GptWeights w, g;         // device views into them (w.h, g.h: host
                             // arrays of n_layer BlockWeights)
    const float *pos;        // (block_size, C): w.wpe, or pos_table
    float *pos_table;        // the sinusoidal table's device copy, or NULL
} GptCuda;

// Allocates the device copy of m (its weights uploaded, gradients zero).
// Returns 0, or -1 with a message.
int gpt_cuda_create(GptCuda *d, const Gpt *m, Error *err);
void gpt_cuda_free(GptCuda *d);
// Weights host -> device, and device -> host (m must be d's model).
void gpt_cuda_upload(GptCuda *d, const Gpt *m);
void gpt_cuda_download(const GptCuda *d, Gpt *m);
void gpt_cuda_zero_grads(GptCuda *d);

// GptActs on the device, for B sequences of up to T tokens: the stream
// after each block, every block's cache (BlockCacheCuda), one scratch,
// ln_f, the logits (their gradient overwrites them in the backward pass),
// and the batch's ids and targets. flash: the fused attention (no (T, T)
// weights stored); dropout: room for masks (a model trained without
// dropout keeps none).
typedef struct {
    int B, T;            // the most it was allocated for
    int cur_B, cur_T;    // the last forward pass's shape
    bool flash, dropout;
    float dropout_p;     // of the last forward pass
    int n_targets;       // of the last forward pass
    bool has_targets;    // whether it had targets
    uint64_t seed;       // its dropout seed
    int *idx, *targets;  // (B, T) each
    float *x0;           // (B, T, C) embeddings, after dropout
    float *emb_mask;     // (B, T, C) or NULL
    float *res;          // (L, B, T, C) the stream after each block
    BlockCacheCuda *blocks;   // L of them (a host array)
    BlockScratchCuda scratch;
    float *lnf, *lnf_mean, *lnf_rstd;   // (B,T,C), (B,T), (B,T)
    float *logits;       // (B, T, V), then their gradient
    float *dx, *dx2;     // (B, T, C)
    float *mem;          // the one device allocation
    // bf16 mode (on when allocated): the bf16 copies of the activations
    // that the backward pass multiplies again, kept from the forward
    // pass (gemm.cuh's gemm_bf16_pin), in a second allocation; else NULL
    uint16_t *lnf16, *mem16;
} GptCudaActs;

int gpt_cuda_acts_alloc(GptCudaActs *a, const GptConfig *cfg, int B, int T,
                        bool flash, bool dropout, Error *err);
// The floats it allocates, without allocating (for the memory report).
size_t gpt_cuda_acts_floats(const GptConfig *cfg, int B, int T, bool flash,
                            bool dropout);
// All the bytes it allocates: those floats, the batch's ids and targets,
// and in bf16 mode (gemm_bf16, as the allocation reads it) the copies.
size_t gpt_cuda_acts_bytes(const GptConfig *cfg, int B, int T, bool flash,
                           bool dropout);
void gpt_cuda_acts_free(GptCudaActs *a);

//> gpt-cuda-api
// As gpt_forward, with idx and targets host arrays (checked there, then
// copied to the device). Dropout draws one 64-bit seed from rng per pass
// for dropout.cu's counter-based generator: site 0 is the embeddings,
// sites 1 + 2l and 2 + 2l block l's two sub-layers, each B*T*C counters.
int gpt_forward_cuda(const GptCuda *m, GptCudaActs *a, const int *idx,
                     const int *targets, int B, int T, bool train, Rng *rng,
                     float *loss, Error *err);

// As gpt_backward: += into m->grads, from the last forward's batch (its
// ids and targets are already on the device, so none are passed).
void gpt_backward_cuda(GptCuda *m, GptCudaActs *a);

// A training step in the halves a graph needs (runtime.cuh: a graph can
// record no copy to or from the host). gpt_step_prepare_cuda is
// gpt_forward_cuda's host part: the checks, the dropout seed, the batch
// copied up, the targets counted (the backward pass's scale). Then
// gpt_step_launches_cuda launches the whole step on that batch:
// gradients cleared, the forward pass with the loss's sum left on the
// device (crossentropy_forward_read_cuda reads it), the backward pass,
// and the gradient's norm and clipping (clip_grad_norm_launch_cuda;
// grad_norm_read_cuda reads the norm). It copies nothing and waits for
// nothing.
int gpt_step_prepare_cuda(const GptCuda *m, GptCudaActs *a, const int *idx,
                          const int *targets, int B, int T, bool train,
                          Rng *rng, Error *err);
void gpt_step_launches_cuda(GptCuda *m, GptCudaActs *a, float max_norm);
//< gpt-cuda-api

#ifdef __cplusplus
}
#endif

#endif
