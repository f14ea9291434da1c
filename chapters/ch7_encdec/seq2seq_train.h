// seq2seq_train.h - the encoder-decoder as something chapter 6's trainer
// can train (a TrainModel: train.h). The trainer does not know what a
// model is; it asks for a batch, a forward pass with a loss, a backward
// pass, and runs AdamW, the schedule, clipping and evaluation as it does
// for the GPT.
//
// The batches come from a PairSource: a function that fills rows of
// (source, decoder input, decoder target), padded, and says how many rows
// and how long. ./ch7's synthetic tasks are one; a corpus of sentence
// pairs, cut into batches by token count, is another.
#ifndef CH7_SEQ2SEQ_TRAIN_H
#define CH7_SEQ2SEQ_TRAIN_H

#include "error.h"
#include "rng.h"
#include "seq2seq.h"
#include "train.h"

//> pair-source
// fill's contract. On entry *B, *S, *T are the capacity: room for *B * *S
// source and *B * *T target ids. fill picks the batch's sizes B', S', T'
// with
//
//   S' <= *S,  T' <= *T,  B'S' <= *B * *S,  B'T' <= *B * *T
//
// (a batch of short sentences may have more rows than *B, one of long
// ones fewer), writes src as B' rows of S' ids, tgt_in and tgt_out as B'
// rows of T' ids, each packed (row b at b * S' and b * T', no gaps),
// padded with the model's pad id after each sentence's end, and sets
// *B, *S, *T to B', S', T'. Returns 0, or -1 with a message. A source of
// fixed shape fills the capacity as it is (./ch7's synthetic tasks).
typedef struct {
    const void *self;
    int (*fill)(const void *self, Rng *rng, int *src, int *tgt_in,
                int *tgt_out, int *B, int *S, int *T, Error *err);
} PairSource;
//< pair-source

typedef struct {
    Seq2Seq model;        // owned
    Seq2SeqActs acts;     // for (B, S, T), in tokens (seq2seq.h)
    int B, S, T;          // the capacity: B pairs of S and T tokens
    int cur_B, cur_S, cur_T;  // the current batch's sizes, from fill
    float eps;            // label smoothing of the loss trained on
    int *src, *tgt_in, *tgt_out;   // the current batch, packed
    TrainTensor *tensors; // the model's tensors, as AdamW's ranges
    SmoothedLoss last;    // the last forward pass's loss and plain NLL
    const char *vocab;    // what the ids mean, written into checkpoints
                          // (the caller's string; NULL: none)
} Seq2SeqTrain;

// Takes over *m (which is cleared) and allocates its gradients and the
// activations. Returns 0, or -1 with a message.
int seq2seq_train_init(Seq2SeqTrain *g, Seq2Seq *m, int B, int S, int T,
                       float eps, Error *err);
void seq2seq_train_free(Seq2SeqTrain *g);
TrainModel seq2seq_train_model(Seq2SeqTrain *g);

// The floats' worth of the model (seq2seq_model_floats), its gradients,
// AdamW's two moments, the activations and the batch of such a run, for
// the capacity (B, S, T) in tokens as above (for the check before
// allocating).
size_t seq2seq_train_floats(const Seq2SeqConfig *cfg, int B, int S, int T);

#endif
