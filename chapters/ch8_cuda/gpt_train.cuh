// gpt_train.cuh - chapter 6's trainable GPT (gpt_train.h) on the GPU: a
// TrainModel (train.h) whose forward and backward passes, clipping and
// AdamW run on the device, so that chapter 6's trainer and program drive
// it unchanged.
//
// It wraps a host GptTrain, which keeps what the GPU does not need to own:
// the configuration and tensor list, the vocabulary, the batch (drawn on
// the host by chapter 6's get_batch, then copied up) and the host copy of
// the weights, brought up to date (sync) before anything on the host
// reads it: a checkpoint, a sample, the summary.
#ifndef CH8_GPT_TRAIN_CUH
#define CH8_GPT_TRAIN_CUH

#include <stdbool.h>

#include "generate.h"
#include "gpt_cuda.cuh"
#include "gpt_train.h"
#include "optim.cuh"
#include "runtime.cuh"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    GptTrain *host;       // not owned
    TrainModel host_tm;   // the host model's own TrainModel (its batches)
    GptCuda dev;
    GptCudaActs acts;
    float *m, *v;         // AdamW's moments, on the device
    AdamWRange *ranges;   // the tensors, for AdamW (on the device)
    int n_ranges;
    size_t largest;       // the largest tensor's floats
    // --graph (gpt_train_cuda_set_graph): the training step's launches
    // recorded once and replayed (gpt_train.cu)
    bool use_graph;
    CudaGraph *graph;     // or NULL, until the second training step
    int graph_B, graph_T, graph_targets;   // what it was recorded for
    float graph_clip;
    unsigned long graph_frees;   // cuda_frees() when it was recorded
    int graph_records;    // how many times a step was recorded
    bool clip_known;      // a step has told max_norm (clip's argument)
    float max_norm;
    bool stepped;         // forward ran the whole step: backward and clip
    double norm;          //   have nothing left to do; clip returns this
    // The samples' activations, one sequence, when the batch's cannot
    // hold a sample's longest window: chapter 9's batches are windows of
    // 64 tokens of GPT-2's 1,024, its samples 100 tokens long. Allocated
    // at the first such sample, again larger for a longer one.
    bool flash;
    GptCudaActs sample;   // (sample.mem NULL: none yet)
} GptTrainCuda;

// Copies host's model to the device and allocates the activations for its
// batch (flash: the fused attention). The host's own activations are
// released: the GPU does the passes. Returns 0 or -1 with a message.
int gpt_train_cuda_init(GptTrainCuda *g, GptTrain *host, bool flash,
                        Error *err);
void gpt_train_cuda_free(GptTrainCuda *g);

// Training steps as one CUDA graph each (on), or launch by launch (off,
// the default). Returns -1 with a message when the model cannot: its
// dropout draws a new seed each step, which the kernels take as an
// argument, and a graph replays the arguments it recorded.
int gpt_train_cuda_set_graph(GptTrainCuda *g, bool on, Error *err);

// The TrainModel of g (params and grads are the host's buffers).
TrainModel gpt_train_cuda_model(GptTrainCuda *g);

// A sample from g's model as it is now: generate_cuda (generate.cuh) in
// the batch's activations when they hold its longest window, else in
// g->sample. As generate()'s arguments, less the model.
int gpt_train_cuda_generate(GptTrainCuda *g, const int *prompt,
                            int n_prompt, int *out, const GenOptions *o,
                            TokenFn on_token, void *ctx, GenStats *stats,
                            Error *err);

// The bytes of device memory that a run of the model c, with batches of
// B x T and samples of windows up to sample_T tokens, takes on the GPU
// (flash: the fused attention), with gemm_bf16 as it is now: what
// gpt_train_cuda_init allocates (the weights, their gradients, AdamW's
// moments, the batch's activations) and what the steps and samples grow
// as they go (a sample's activations, the loss's, the column sums' and
// the fused attention's scratch, bf16 mode's copies of the products'
// operands, cuBLAS's workspace). Computed before any of it is allocated,
// to refuse a run that does not fit with one line rather than fail at
// an allocation in its first step.
size_t gpt_train_cuda_bytes(const GptConfig *c, int B, int T, bool flash,
                            int sample_T);

#ifdef __cplusplus
}
#endif

#endif
