// gpt_train.h - chapter 5's GPT as a TrainModel (train.h): its batches
// are windows of a Split (x, and y the same window shifted by one), its
// loss the next-token cross-entropy, its checkpoint chapter 5's file
// with the step in it. The windows are the model's block_size long
// (chapter 6), or shorter (chapter 9 fine-tunes GPT-2, whose block is
// 1,024 tokens, on windows of 64).
#ifndef CH6_GPT_TRAIN_H
#define CH6_GPT_TRAIN_H

#include <stddef.h>

#include "checkpoint.h"
#include "dataset.h"
#include "gpt.h"
#include "train.h"
#include "vocab.h"

typedef struct {
    Gpt model;            // owned
    Vocab vocab;          // owned; written into every checkpoint
    // The ids' tokenizer when they are not vocab's characters (vocab is
    // then empty): its name, written into every checkpoint instead
    // (checkpoint_save_tokenizer); "" for chapter 1's characters.
    char tokenizer[CHECKPOINT_TOKENIZER_MAX];
    GptActs acts;         // (B, T)
    int B, T;             // a batch: B sequences of T <= block_size
    int *x, *y;           // the current batch, (B, T) each
    TrainTensor *tensors; // the model's tensors, as AdamW's ranges
    int part, parts;      // data-parallel: this rank's part of parts
    int *all_x, *all_y;   // (B * parts, T): the whole batch (parts > 1)
} GptTrain;

// Takes m and vocab (moved in: both are zeroed) and allocates gradients,
// activations and the batch for B sequences of T tokens, 1 <= T <=
// block_size (chapter 6 passes block_size). Returns 0, or -1 with a
// message (and m and vocab left as they were).
int gpt_train_init(GptTrain *g, Gpt *m, Vocab *vocab, int B, int T,
                   Error *err);
void gpt_train_free(GptTrain *g);

//> gpt-train-split
// Data-parallel training (dist.h): g trains on part `part` of `parts`.
// Every batch is then drawn whole, B * parts sequences from the same
// generator as one process would, and g keeps the B of them from
// part * B on: N ranks together see exactly the batches of one process
// with N times their batch. Returns 0 or -1 with a message.
int gpt_train_split(GptTrain *g, int part, int parts, Error *err);
//< gpt-train-split

// The TrainModel of g; its data is a const Split *. g must stay where it
// is while the trainer uses it.
TrainModel gpt_train_model(GptTrain *g);

// AdamW's ranges (offset, length, decay) of a model's tensor list; free()
// the result. Chapter 7's encoder-decoder uses it too.
TrainTensor *train_tensors(const GptTensor *t, int n);

// Sets the current batch: x, y (B, T) each.
void gpt_train_set_batch(GptTrain *g, const int *x, const int *y);

// The floats' worth a run of cfg with batch B x T allocates and keeps:
// the model (gpt_model_floats), gradients and AdamW's two moments
// (num_params each), the activations (gpt_acts_floats), the batch, and
// with parts > 1 (gpt_train_split) the whole batch too; the memory
// report and the check before allocating both use it.
size_t gpt_train_floats(const GptConfig *cfg, int B, int T, int parts);

// The T of a run of cfg that trains with tc: tc->window, or block_size
// when it is 0. -1 with a message when the window is longer than the
// model's block (a damaged or edited state file).
int gpt_train_window(const GptConfig *cfg, const TrainConfig *tc, int *T,
                     Error *err);

// Loads a run that trainer_save wrote in dir: the model and its
// vocabulary (or its tokenizer's name) into g, the training config and
// state into t, with the saved window (gpt_train_window). Neither may
// be initialised yet; on failure both are left zeroed. g takes part
// `part` of `parts` of every batch (0 and 1: all of it); the saved batch,
// t->cfg.batch, is the whole one and must divide by parts.
int gpt_trainer_resume(Trainer *t, GptTrain *g, const char *dir, int part,
                       int parts, Error *err);

// What gpt_trainer_resume will load from dir, read from the headers of
// its two files alone (no tensor is read), with the checks it makes of
// them and its messages: the model's config, the saved training config
// (whose batch, the whole one, must divide by parts) and in *held the
// floats' worth of the state file's header, which the resume holds
// while the run's memory (gpt_train_floats) is allocated (the moments
// go from the file straight into AdamW's). A run's memory is
// planned from these before anything of its size is read or allocated.
int gpt_resume_peek(const char *dir, int parts, GptConfig *cfg,
                    TrainConfig *tc, size_t *held, Error *err);

#endif
