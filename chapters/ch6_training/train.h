// train.h - the trainer: one step (forward, backward, clipping, the
// learning rate, AdamW) and evaluation, for any model that offers the
// small interface TrainModel. Chapter 5's GPT offers it through
// gpt_train.h, chapter 7's encoder-decoder through its own; the training
// state on disk, so that a run can stop and resume exactly where it was,
// is checkpoint_state.h.
#ifndef CH6_TRAIN_H
#define CH6_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "optim.h"
#include "rng.h"

//> train-config
typedef struct {
    int batch;            // B sequences per step
    int window;           // T tokens in each (a GPT's); 0: its block_size
    int steps;            // steps in the whole run
    float lr, min_lr;     // the schedule's peak and floor
    int warmup;           // steps of linear warmup
    int decay_steps;      // the cosine reaches min_lr here
    AdamWConfig adamw;    // betas, eps, weight decay (2-D weights only)
    float grad_clip;      // global norm limit; 0 = off
    int eval_every;       // steps between evaluations; 0 = only at the end
    int eval_iters;       // batches of train and of val per evaluation
    uint64_t seed;        // initialisation, batches, dropout
} TrainConfig;
//< train-config

// 0, or -1 with a message unless batch >= 1, window >= 0, steps >= 0
// and eval_iters >= 1.
int train_config_check(const TrainConfig *cfg, Error *err);

//> train-model
// A range of the parameters that AdamW updates with one weight decay.
typedef struct {
    size_t offset, n;     // params[offset .. offset + n)
    bool decay;           // gets weight decay (matrices, not vectors)
} TrainTensor;

// What the trainer needs from a model. Its parameters and their
// gradients are one buffer each. The model keeps its own batch, drawn by
// batch() from a dataset of its own kind (the GPT: windows of a text; an
// encoder-decoder: pairs of sentences), so the trainer never looks inside
// a batch.
typedef struct {
    void *self;                   // the model, its activations, its batch
    float *params, *grads;        // num_params each
    size_t num_params;
    const TrainTensor *tensors;   // n_tensors ranges covering params
    int n_tensors;
    // Draws the next batch from data with rng.
    int (*batch)(void *self, const void *data, Rng *rng, Error *err);
    // The mean loss of the current batch. train: with dropout drawn from
    // rng; otherwise none, and rng may be NULL.
    int (*forward)(void *self, bool train, Rng *rng, float *loss,
                   Error *err);
    // The gradient of the last forward's loss into grads (overwritten).
    void (*backward)(void *self);
    // Writes the model to path, atomically, with step in its metadata.
    int (*save)(const void *self, const char *path, int step, Error *err);

    // Four optional hooks for a model whose weights live elsewhere (the
    // GPU of chapter 8). NULL for a model in this process's memory, which
    // the trainer then updates itself. When they are set, params (and
    // m, v of the Trainer) are only a host copy, current after sync():
    // the model clips, updates and keeps its moments on its own side.
    //
    // Scales the model's own gradients as clip_grad_norm does and
    // returns their norm before clipping (max_norm <= 0: no clipping).
    double (*clip)(void *self, float max_norm);
    // AdamW on the model's own parameters and moments, range by range as
    // tensors says (weight decay c->weight_decay where decay, else 0), at
    // step t = 1, 2, ... and learning rate lr: what adamw_update does.
    void (*update)(void *self, int t, float lr, const AdamWConfig *c);
    // Brings the host copy up to date: the parameters into params, the
    // moments into m and v (num_params each). Saving calls it first.
    void (*sync)(void *self, float *m, float *v);
    // The other way: params (host) and the moments m, v become the
    // model's own. Resuming calls it after reading the saved run.
    void (*load)(void *self, const float *m, const float *v);
} TrainModel;
//< train-model

// Everything a run changes as it goes; a checkpoint holds all of it.
typedef struct {
    TrainModel model;     // what is trained (the trainer does not own it)
    TrainConfig cfg;
    float *m, *v;         // AdamW's moments, num_params each (with the
                          // model's hooks: its host copy, see sync)
    int step;             // steps done
    Rng data_rng;         // draws the training batches
    Rng drop_rng;         // draws the dropout masks
} Trainer;

// Allocates the moments for model and seeds the generators from
// cfg->seed. Returns 0 or -1 with a message. A model with hooks must
// start with its own moments at zero (or be given these by its load).
int trainer_init(Trainer *t, const TrainModel *model, const TrainConfig *cfg,
                 Error *err);
void trainer_free(Trainer *t);

// What one step did.
typedef struct {
    float loss;           // the batch's mean loss, before the update
    double grad_norm;     // before clipping
    float lr;
} StepResult;

//> train-step-api
// One optimisation step on a batch drawn from data (the model's kind of
// dataset): forward with dropout, backward, global-norm clipping, the
// learning rate of this step, AdamW. Allocates nothing. When the loss or
// the gradient norm is not finite the weights are left as they were and
// -1 comes back with a message.
int train_step(Trainer *t, const void *data, StepResult *r, Error *err);
//< train-step-api

// The same step on the model's current batch: what train_step does after
// drawing it (the parity test sets PyTorch's batches and calls this).
int train_step_batch(Trainer *t, StepResult *r, Error *err);

// Mean loss over cfg.eval_iters batches of data, dropout off. The
// batches come from a generator seeded with (seed, step, which), so an
// evaluation does not disturb training and a resumed run sees the same.
int evaluate(Trainer *t, const void *data, int which, double *loss,
             Error *err);

//> budget-steps
// A run's length from its speed: `done` steps have run, each further step
// should take `per_step` seconds, and `left` seconds remain. Returns the
// step count that fits, never more than `steps`; from 100 on, a multiple
// of 10 (a round number for --steps to repeat the run with).
int budget_steps(int done, int steps, double per_step, double left);

// The same later in the run, when the steps have got slower: `steps` as
// it is while what is left fits `left` within a tenth, or else the count
// that fits (at least done + 1, the step that ends the run).
int budget_again(int done, int steps, double per_step, double left);
//< budget-steps

#endif
