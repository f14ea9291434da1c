// pairs.h - a parallel corpus as token ids, and the batches a training
// run draws from it.
//
// A corpus is two text files with one sentence a line, line i of one the
// translation of line i of the other (Multi30k: train.de / train.en). Each
// line goes through a tokenizer (byte-pair encoding, or characters) once,
// at load time; what is kept are the ids, one flat array per side.
//
// Batches are cut by token count, not by sentence count: a batch of short
// sentences holds many of them, a batch of long ones few, and every batch
// costs about the same. The sentences are sorted by length first, so that
// the sentences of a batch have nearly one length and little of the batch
// is padding; the batches are cut once, and every epoch visits all of
// them in its own shuffled order.
#ifndef CH7_PAIRS_H
#define CH7_PAIRS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "rng.h"
#include "seq2seq_train.h"

// Turns one line (UTF-8, no newline) into at most cap ids in out. Returns
// the number of ids, or -1 with a message. A line that needs more than cap
// ids returns cap + 1 (the caller says what is too long).
typedef int (*EncodeFn)(const void *tok, const char *text, size_t len,
                        int *out, int cap, Error *err);

typedef struct {
    int n;                  // sentence pairs
    int *src_off, *tgt_off; // (n + 1,) pair i is ids[off[i] .. off[i+1])
    int *src, *tgt;         // every sentence's ids, one after the other
    int max_src, max_tgt;   // the longest sentence of each side, in ids
    int *line;              // (n,) the file's line number (1-based)
} PairCorpus;

// Loads src_path and tgt_path (the same number of lines) through encode.
// A pair with more than max_len ids on a side is left out when `drop_long`
// (training) and is an error otherwise (a test set is translated whole);
// *dropped counts those left out. An empty line is kept: it translates to
// an empty line. Returns 0, or -1 with a message naming file and line.
int pairs_load(PairCorpus *c, const char *src_path, const char *tgt_path,
               EncodeFn encode, const void *tok, int max_len, bool drop_long,
               int *dropped, Error *err);
void pairs_free(PairCorpus *c);

static inline int pairs_src_len(const PairCorpus *c, int i) {
    return c->src_off[i + 1] - c->src_off[i];
}
static inline int pairs_tgt_len(const PairCorpus *c, int i) {
    return c->tgt_off[i + 1] - c->tgt_off[i];
}

// One batch: pairs order[first .. first + rows) of the sorted order,
// padded to S source ids and T target positions (the longest target + 1
// for <bos> / <eos>).
typedef struct {
    int first, rows, S, T;
} PairBatch;

// The batches of one corpus, and where a run is in them.
typedef struct {
    const PairCorpus *c;
    int *order;             // (n,) pair indices, sorted by length
    PairBatch *b;           // the batches, in sorted order
    int n_batches;
    int max_rows, max_S, max_T;   // the largest of any batch
    long src_tokens, tgt_tokens;  // real ids, of every batch
    long src_slots, tgt_slots;    // ids + padding: rows * S and rows * T
    uint64_t seed;          // each epoch's shuffle comes from seed, epoch
    long drawn;             // batches drawn so far: the epoch and position
    int epoch;              // the epoch `perm` holds (-1: none yet)
    int *perm;              // (n_batches,) this epoch's order
} PairBatcher;

// Cuts the corpus into batches of at most `tokens` source + target slots
// (padding counted: rows * (S + T)), after sorting the pairs by (target
// length, source length, line). Returns 0, or -1 with a message when one
// pair alone is over the limit.
int batcher_init(PairBatcher *b, const PairCorpus *c, int tokens,
                 uint64_t seed, Error *err);
void batcher_free(PairBatcher *b);

// The share of a batch's slots that is padding, over all batches.
double batcher_padding(const PairBatcher *b);

// Fills batch k of the whole run (epoch k / n_batches, at its shuffled
// position): src (rows, S), tgt_in (rows, T) = <bos> y, tgt_out (rows, T)
// = y <eos>, packed with strides S and T, pad elsewhere.
void batcher_fill(const PairBatcher *b, const PairBatch *pb, int *src,
                  int *tgt_in, int *tgt_out);

// Batch number k of the run, in its epoch's shuffled order.
const PairBatch *batcher_batch(PairBatcher *b, long k);

// The batcher as a PairSource for chapter 6's trainer: each fill is the
// next batch of the run (b->drawn counts them; a resumed run sets it to
// its step). The trainer's generator is not used: the order is a function
// of the seed and the step alone, so a resumed run sees the same batches.
PairSource batcher_source(PairBatcher *b);

// The plain negative log-likelihood (no label smoothing, no dropout) of
// g's model per target token, over every batch of b: each batch's mean
// weighted by its target tokens (each sentence's <eos> counted, padding
// not), so that it is the mean over all of them however they are
// batched (the val loss of ./ch7 --task translate). g's capacity must
// hold b's largest batch; its batch buffers are overwritten. Returns 0
// with *nll, or -1 with a message.
int batcher_nll(const PairBatcher *b, Seq2SeqTrain *g, double *nll,
                Error *err);

#endif
