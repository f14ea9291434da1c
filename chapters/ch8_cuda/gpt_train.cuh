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

#ifdef __cplusplus
}
#endif

#endif
