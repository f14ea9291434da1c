// gpt_train.cu - the GPU's TrainModel (gpt_train.cuh): gpt_train.c's
// functions, plus the four hooks of train.h through which the trainer
// clips, updates and saves weights that live on the device.
#include "cuda_rt.h"

#include <stdlib.h>
#include <string.h>

extern "C" {
#include "gpt_train.cuh"
#include "mem.h"
#include "optim.cuh"
}

int gpt_train_cuda_init(GptTrainCuda *g, GptTrain *host, bool flash,
                        Error *err) {
    memset(g, 0, sizeof *g);
    const GptConfig *c = &host->model.cfg;
    g->host = host;
    g->host_tm = gpt_train_model(host);
    if (gpt_cuda_create(&g->dev, &host->model, err) != 0) return -1;
    if (gpt_cuda_acts_alloc(&g->acts, c, host->B, host->T, flash,
                            c->dropout > 0, err) != 0) {
        gpt_cuda_free(&g->dev);
        return -1;
    }
    g->m = cuda_alloc_floats(g->dev.num_params);
    g->v = cuda_alloc_floats(g->dev.num_params);
    cuda_zero(g->m, g->dev.num_params);
    cuda_zero(g->v, g->dev.num_params);
    // AdamW's table of tensors, on the device: one launch updates them all
    int n = host->model.n_tensors;
    AdamWRange *r = (AdamWRange *)xcalloc((size_t)n + 1, sizeof *r);
    for (int i = 0; i < n; i++) {
        const TrainTensor *t = &host->tensors[i];
        r[i] = (AdamWRange){t->offset, t->n, t->decay};
        if (t->n > g->largest) g->largest = t->n;
    }
    g->n_ranges = n;
    CUDA_CHECK(cudaMalloc((void **)&g->ranges, ((size_t)n + 1) * sizeof *r));
    CUDA_CHECK(cudaMemcpy(g->ranges, r, (size_t)n * sizeof *r,
                          cudaMemcpyHostToDevice));
    free(r);
    gpt_acts_free(&host->acts, c);   // the passes run on the GPU
    return 0;
}

void gpt_train_cuda_free(GptTrainCuda *g) {
    gpt_cuda_acts_free(&g->acts);
    gpt_cuda_free(&g->dev);
    cuda_free(g->m);
    cuda_free(g->v);
    cuda_free(g->ranges);
    memset(g, 0, sizeof *g);
}

// ---- the TrainModel functions ----------------------------------------------

static int batch(void *self, const void *data, Rng *rng, Error *err) {
    GptTrainCuda *g = (GptTrainCuda *)self;   // drawn on the host
    return g->host_tm.batch(g->host_tm.self, data, rng, err);
}

static int forward(void *self, bool train, Rng *rng, float *loss,
                   Error *err) {
    GptTrainCuda *g = (GptTrainCuda *)self;
    GptTrain *h = g->host;
    return gpt_forward_cuda(&g->dev, &g->acts, h->x, h->y, h->B, h->T, train,
                            rng, loss, err);
}

static void backward(void *self) {
    GptTrainCuda *g = (GptTrainCuda *)self;
    gpt_cuda_zero_grads(&g->dev);
    gpt_backward_cuda(&g->dev, &g->acts);
}

static int save(const void *self, const char *path, int step, Error *err) {
    const GptTrainCuda *g = (const GptTrainCuda *)self;
    gpt_cuda_download(&g->dev, &g->host->model);   // the host copy, fresh
    return g->host_tm.save(g->host_tm.self, path, step, err);
}

//> train-hooks-cuda
static double clip(void *self, float max_norm) {
    GptTrainCuda *g = (GptTrainCuda *)self;
    return clip_grad_norm_cuda(g->dev.grads, g->dev.num_params, max_norm);
}

// AdamW over the tensors train.c's update() takes range by range on
// the host, with the same decay for each, in one launch.
static void update(void *self, int t, float lr, const AdamWConfig *c) {
    GptTrainCuda *g = (GptTrainCuda *)self;
    adamw_update_many_cuda(g->dev.params, g->dev.grads, g->m, g->v,
                           g->ranges, g->n_ranges, g->largest, t, lr,
                           c->weight_decay, c);
}
//< train-hooks-cuda

static void sync(void *self, float *m, float *v) {
    GptTrainCuda *g = (GptTrainCuda *)self;
    gpt_cuda_download(&g->dev, &g->host->model);
    if (m) cuda_download(m, g->m, g->dev.num_params);
    if (v) cuda_download(v, g->v, g->dev.num_params);
}

static void load(void *self, const float *m, const float *v) {
    GptTrainCuda *g = (GptTrainCuda *)self;
    gpt_cuda_upload(&g->dev, &g->host->model);
    if (m) cuda_upload(g->m, m, g->dev.num_params);
    if (v) cuda_upload(g->v, v, g->dev.num_params);
}

TrainModel gpt_train_cuda_model(GptTrainCuda *g) {
    TrainModel tm = g->host_tm;
    tm.self = g;
    tm.batch = batch;
    tm.forward = forward;
    tm.backward = backward;
    tm.save = save;
    tm.clip = clip;
    tm.update = update;
    tm.sync = sync;
    tm.load = load;
    return tm;
}
