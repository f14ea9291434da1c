// gpt_train.cu - the GPU's TrainModel (gpt_train.cuh): gpt_train.c's
// functions, plus the four hooks of train.h through which the trainer
// clips, updates and saves weights that live on the device.
#include "cuda_rt.h"

#include <stdlib.h>
#include <string.h>

extern "C" {
#include "crossentropy.cuh"
#include "error.h"
#include "gemm.cuh"
#include "generate.cuh"
#include "gpt_train.cuh"
#include "layout.h"
#include "linear.cuh"
#include "mem.h"
#include "optim.cuh"
}

int gpt_train_cuda_init(GptTrainCuda *g, GptTrain *host, bool flash,
                        Error *err) {
    memset(g, 0, sizeof *g);
    const GptConfig *c = &host->model.cfg;
    g->host = host;
    g->flash = flash;
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
    cuda_graph_free(g->graph);
    gpt_cuda_acts_free(&g->acts);
    if (g->sample.mem) gpt_cuda_acts_free(&g->sample);
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

int gpt_train_cuda_set_graph(GptTrainCuda *g, bool on, Error *err) {
    if (on && g->host->model.cfg.dropout > 0)
        return error_set(err, "--graph needs --dropout 0: dropout draws a "
                         "new seed each step, which its kernels take as an "
                         "argument, and a graph replays the arguments it "
                         "recorded");
    g->use_graph = on;
    return 0;
}

//> graph-step-cuda
// The training step through a graph: the batch copied up (no graph can
// hold a copy from the host), then the graph, recorded at the first
// step that can (the one after the first, whose clip() tells max_norm)
// and again whenever what it recorded may have changed: another batch
// shape, another count of targets (the backward pass's scale), or
// device memory released since (a recorded pointer may be gone). Before
// recording, one step runs launch by launch, so that every buffer a
// step grows has grown (nothing may be released during the recording),
// and gemm.cu's bf16 copies get room for any operand. Then the loss and
// the norm are read, once each.
static int graph_step(GptTrainCuda *g, float *loss, Error *err) {
    GptTrain *h = g->host;
    GptCudaActs *a = &g->acts;
    if (gpt_step_prepare_cuda(&g->dev, a, h->x, h->y, h->B, h->T, true,
                              NULL, err) != 0)
        return -1;
    if (!g->graph || g->graph_B != h->B || g->graph_T != h->T
        || g->graph_targets != a->n_targets || g->graph_clip != g->max_norm
        || g->graph_frees != cuda_frees()) {
        cuda_graph_free(g->graph);
        gpt_step_launches_cuda(&g->dev, a, g->max_norm);   // (grows)
        gemm_bf16_reserve();
        g->graph_frees = cuda_frees();
        cuda_capture_begin();
        gpt_step_launches_cuda(&g->dev, a, g->max_norm);   // (recorded)
        g->graph = cuda_capture_end();
        g->graph_records++;
        g->graph_B = h->B, g->graph_T = h->T;
        g->graph_targets = a->n_targets, g->graph_clip = g->max_norm;
    }
    cuda_graph_launch(g->graph);
    *loss = crossentropy_forward_read_cuda(h->B * h->T, &a->n_targets);
    g->norm = grad_norm_read_cuda();
    g->stepped = true;
    return 0;
}
//< graph-step-cuda

static int forward(void *self, bool train, Rng *rng, float *loss,
                   Error *err) {
    GptTrainCuda *g = (GptTrainCuda *)self;
    GptTrain *h = g->host;
    g->stepped = false;
    if (g->use_graph && train && g->clip_known)
        return graph_step(g, loss, err);
    return gpt_forward_cuda(&g->dev, &g->acts, h->x, h->y, h->B, h->T, train,
                            rng, loss, err);
}

static void backward(void *self) {
    GptTrainCuda *g = (GptTrainCuda *)self;
    if (g->stepped) return;   // the graph did it
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
    if (g->stepped) {   // the graph clipped, with the max_norm it recorded
        g->stepped = false;
        if (max_norm != g->graph_clip)
            die("gpt_train_cuda: clip(%g) after a graph recorded with %g",
                max_norm, g->graph_clip);
        return g->norm;
    }
    g->clip_known = true, g->max_norm = max_norm;
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

// ---- samples ---------------------------------------------------------------

//> gpu-samples-cuda
int gpt_train_cuda_generate(GptTrainCuda *g, const int *prompt,
                            int n_prompt, int *out, const GenOptions *o,
                            TokenFn on_token, void *ctx, GenStats *stats,
                            Error *err) {
    const GptConfig *c = &g->dev.cfg;
    int T = generate_cuda_window(c, n_prompt, o);
    GptCudaActs *a = &g->acts;
    if (T > 0 && !layout_fits(1, T, a->B, a->T)) {   // the batch's: too
        a = &g->sample;                               // short a window
        if (!a->mem || a->T < T) {   // none yet, or too short: (re)made
            if (a->mem) gpt_cuda_acts_free(a);
            if (gpt_cuda_acts_alloc(a, c, 1, T, g->flash, false, err) != 0)
                return -1;
        }
    }
    return generate_cuda(&g->dev, a, prompt, n_prompt, out, o, on_token,
                         ctx, stats, err);
}
//< gpu-samples-cuda

// ---- the memory it takes ---------------------------------------------------

// The most floats of an operand that a product casts to bf16 in bf16
// mode: the head's (wte, its logits and their gradient), a layer's
// widest activation or weight, and on the (T, T) path the weights.
static size_t largest_operand(const GptConfig *c, int B, int T,
                              bool flash) {
    size_t bt = (size_t)B * T, C = (size_t)c->n_embd, F = (size_t)c->n_ffn;
    size_t V = (size_t)c->vocab_size, att = (size_t)B * c->n_head * T * T;
    size_t n[] = {V * C, bt * V, bt * F, F * C, 3 * bt * C, flash ? 0 : att};
    size_t most = 0;
    for (size_t i = 0; i < sizeof n / sizeof n[0]; i++)
        if (n[i] > most) most = n[i];
    return most;
}

size_t gpt_train_cuda_bytes(const GptConfig *c, int B, int T, bool flash,
                            int sample_T) {
    size_t P = gpt_param_count(c), bt = (size_t)B * T, f = sizeof(float);
    size_t C = (size_t)c->n_embd, F = (size_t)c->n_ffn;
    bool dropout = c->dropout > 0;
    // the weights, their gradients and AdamW's two moments; a sinusoidal
    // table (the weights' layout has no room for it)
    size_t bytes = 4 * P * f;
    if (c->positional == POS_SINUSOIDAL) bytes += (size_t)c->block_size * C
                                                 * f;
    bytes += gpt_cuda_acts_bytes(c, B, T, flash, dropout);
    if (sample_T > 0 && !layout_fits(1, sample_T, B, T))
        bytes += gpt_cuda_acts_bytes(c, 1, sample_T, flash, false);
    // the loss's rows; the column sums' chunks (a bias's, or a small
    // vocabulary's embedding); the fused attention's row dots
    size_t cols = 3 * C > F ? 3 * C : F;
    if (c->vocab_size <= 256 && (size_t)c->vocab_size * C > cols)
        cols = (size_t)c->vocab_size * C;
    bytes += bt * f + (size_t)column_chunks(B * T).chunks * cols * f;
    if (flash) bytes += bt * c->n_head * f;
    // bf16 mode: three copies, each of room for the largest operand
    if (gemm_bf16()) bytes += 3 * largest_operand(c, B, T, flash) * 2;
    return bytes + CUDA_BLAS_WORKSPACE_BYTES;
}
