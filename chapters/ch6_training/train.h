// train.h - training the GPT: one step (a batch, forward, backward,
// clipping, AdamW), evaluation, and the training state that a checkpoint
// saves so that a run can stop and resume exactly where it was.
#ifndef CH6_TRAIN_H
#define CH6_TRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "dataset.h"
#include "gpt.h"
#include "optim.h"
#include "rng.h"

//> train-config
typedef struct {
    int batch;            // B sequences per step
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

// Everything a run changes as it goes; a checkpoint holds all of it.
typedef struct {
    Gpt model;
    TrainConfig cfg;
    float *m, *v;         // AdamW's moments, num_params each
    int step;             // steps done
    Rng data_rng;         // draws the training batches
    Rng drop_rng;         // draws the dropout masks
    GptActs acts;         // (batch, block_size)
    int *x, *y;           // the current batch
} Trainer;

// Allocates what a run of model m needs (m is moved into the trainer)
// and seeds its generators from cfg->seed. Returns 0 or -1 with a message.
int trainer_init(Trainer *t, Gpt *m, const TrainConfig *cfg, Error *err);
void trainer_free(Trainer *t);

// What one step did.
typedef struct {
    float loss;           // the batch's mean loss, before the update
    double grad_norm;     // before clipping
    float lr;
} StepResult;

//> train-step-api
// One optimisation step on a batch from train: forward with dropout,
// backward, global-norm clipping, the learning rate of this step, AdamW.
// Allocates nothing. When the loss or the gradient norm is not finite the
// weights are left as they were and -1 comes back with a message.
int train_step(Trainer *t, const Split *train, StepResult *r, Error *err);
//< train-step-api

// The same step on a given batch x, y (cfg.batch x block_size each):
// what train_step does after drawing its batch (the parity test feeds
// PyTorch's batches through it).
int train_step_on(Trainer *t, const int *x, const int *y, StepResult *r,
                  Error *err);

// Mean loss over cfg.eval_iters batches of split, dropout off. The
// batches come from a generator seeded with (seed, step, which), so an
// evaluation does not disturb training and a resumed run sees the same.
int evaluate(Trainer *t, const Split *s, int which, double *loss,
             Error *err);

// Checkpoints. dir/model.safetensors is chapter 5's file (./ch5 loads it)
// with the step in its metadata; dir/state-<step>.safetensors holds the
// AdamW moments, the step, both generators and the training config. Both
// are written atomically, the state first, and older state files are
// removed only after the model file names the new step, so a crash at any
// moment leaves a consistent pair.
int trainer_save(const Trainer *t, const char *dir, const Vocab *vocab,
                 Error *err);
// Loads a run saved by trainer_save: the model, the vocabulary, the
// training config and state. t must not be initialised yet.
int trainer_resume(Trainer *t, const char *dir, Vocab *vocab, Error *err);

#endif
