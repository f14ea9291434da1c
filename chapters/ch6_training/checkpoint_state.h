// checkpoint_state.h - a training run on disk, for any TrainModel.
//
// dir/model.safetensors is the model's own file, written by model.save
// (for the GPT, chapter 5's checkpoint, which ./ch5 loads) with the step
// in its metadata. dir/state-<step>.safetensors holds AdamW's moments
// (the tensors adamw.m and adamw.v) and, in the metadata entry
// train_state, the step, both generators and the training config as
// JSON. Both files are written atomically, the state first, and older
// state files are removed only after the model file names the new step,
// so a crash at any moment leaves a consistent pair.
#ifndef CH6_CHECKPOINT_STATE_H
#define CH6_CHECKPOINT_STATE_H

#include <signal.h>
#include <stdbool.h>

#include "safetensors.h"
#include "train.h"

// Saves the run of t in dir (created if missing). A model with a sync
// hook (train.h) first brings its parameters and moments into the host
// copies (t->model.params, t->m, t->v), which is why t's buffers change.
int trainer_save(const Trainer *t, const char *dir, Error *err);

// Resuming comes in two halves, because only the model's own code can
// load the model file, and the model must be built for the saved batch
// size before the trainer can take the moments:
//
//   1. load dir/model.safetensors and its step (the model's code)
//   2. train_state_load(&s, dir, step): the config, generators, moments
//      (or train_state_peek: the same but the moments, which step 4 then
//      reads from the file, one tensor at a time)
//   3. build the model for s.cfg.batch, trainer_init(t, model, &s.cfg)
//   4. trainer_restore(t, &s), train_state_free(&s)
//
// gpt_trainer_resume (gpt_train.h) is that sequence for the GPT.
typedef struct {
    TrainConfig cfg;
    int step;
    Rng data_rng, drop_rng;
    StFile file;          // the state file, holding the moments
} TrainState;

// Reads dir/state-<step>.safetensors and checks that it holds step.
int train_state_load(TrainState *s, const char *dir, int step, Error *err);
// The same from the file's header alone (st_load_header): the config,
// the step and the generators, and in s->file the tensors' names and
// shapes and the file's size, but not the moments, which trainer_restore
// then reads from the file itself (st_copy_f32): for a plan of the memory
// made before anything large is read, and for a resume that never holds
// the file whole. Free it with train_state_free.
int train_state_peek(TrainState *s, const char *dir, int step, Error *err);
// Copies the moments, the step and the generators of s into t, whose
// model must have the saved number of parameters. A model with a load
// hook then receives its parameters (already in t->model.params from
// step 1) and the moments. A program that gives the trainer another
// model after this (./ch8 puts the GPU's in) calls that one's load.
int trainer_restore(Trainer *t, const TrainState *s, Error *err);
void train_state_free(TrainState *s);

// A folder that cannot take checkpoints should fail before the run it
// was meant to save: creates dir if missing and checks that it is a
// folder we may write in. Returns 0, or -1 with a message. Also removes
// the temporary files (NAME.safetensors.tmp.XXXXXX) that a run killed
// while saving left there.
int checkpoint_dir_check(const char *dir, Error *err);

// Nothing a user saved is lost unasked: before a run saves into dir
// (--out), an earlier run there is refused. Returns 0 when dir holds no
// run's file, or when it is the folder the run resumes (resumed: that
// folder, "" for a new run); otherwise -1 with a message that names the
// step saved there and the ways on: --resume dir, another folder, or
// --overwrite. With overwrite it removes that run's files instead
// (model.safetensors and every state file), so that the folder never
// holds parts of two runs, and returns 0.
int checkpoint_dir_claim(const char *dir, const char *resumed,
                         bool overwrite, Error *err);

// Ctrl-C during a run: between catch_sigint() and release_sigint(), a
// first Ctrl-C only sets `interrupted`, so that the loop can end its
// step, save, and say how to resume, instead of losing the run; a second
// one quits at once with status 130 (the files on disk stay whole).
// SIGUSR1 (`kill -USR1 PID`) asks for the same stop, and never quits at
// once: under mpirun it is the signal that reaches every rank in time.
extern volatile sig_atomic_t interrupted;
void catch_sigint(void);
void release_sigint(void);

#endif
