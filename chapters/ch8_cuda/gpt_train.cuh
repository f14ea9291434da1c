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
} GptTrainCuda;

// Copies host's model to the device and allocates the activations for its
// batch (flash: the fused attention). The host's own activations are
// released: the GPU does the passes. Returns 0 or -1 with a message.
int gpt_train_cuda_init(GptTrainCuda *g, GptTrain *host, bool flash,
                        Error *err);
void gpt_train_cuda_free(GptTrainCuda *g);

// The TrainModel of g (params and grads are the host's buffers).
TrainModel gpt_train_cuda_model(GptTrainCuda *g);

#ifdef __cplusplus
}
#endif

#endif
