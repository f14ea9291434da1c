// task.h - the synthetic translation tasks of ./ch7: a "source sentence"
// is a random string of symbols, and its "translation" is the same
// string copied, reversed or sorted:
//
//   source  c a f e b          copy     c a f e b
//                              reverse  b e f a c
//                              sort     a b c e f
//
// Copying is the Annotated Transformer's first example: the decoder can
// read position t of the source at step t. Reversing makes it read
// position n-1-t of a source whose length n varies, so it must find the
// end through the padding mask; its cross-attention draws the
// anti-diagonal. Sorting needs every position at once.
//
// The vocabulary: 0 <pad>, 1 <bos>, 2 <eos>, then the symbols, shown as
// the letters a, b, c, ...
#ifndef CH7_TASK_H
#define CH7_TASK_H

#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "rng.h"

enum { TOK_PAD = 0, TOK_BOS = 1, TOK_EOS = 2, TOK_FIRST = 3 };

typedef enum { TASK_COPY, TASK_REVERSE, TASK_SORT } TaskKind;

typedef struct {
    TaskKind kind;
    int symbols;            // K: ids TOK_FIRST .. TOK_FIRST + K - 1
    int min_len, max_len;   // of a source
} Task;

// 0, or -1 with a message: 1 <= K <= 26, 1 <= min_len <= max_len <= 200.
int task_check(const Task *t, Error *err);
const char *task_kind_name(TaskKind k);
int task_kind_parse(const char *s, TaskKind *out);   // 0, or -1

// The vocabulary size, and the lengths of a batch's rows: S = max_len
// source tokens, T = max_len + 1 target positions (<bos> or <eos> more).
int task_vocab(const Task *t);
int task_src_len(const Task *t);
int task_tgt_len(const Task *t);

//> task-example
// One random example, padded: src (S), tgt_in (T) = <bos> y, tgt_out (T)
// = y <eos>, where y is the source's translation.
void task_example(const Task *t, Rng *rng, int *src, int *tgt_in,
                  int *tgt_out);
//< task-example

// A fixed set of n examples (the held-out set), drawn from its own seed.
typedef struct {
    int n, S, T;
    int *src, *tgt_in, *tgt_out;   // (n, S), (n, T), (n, T)
} TaskSet;

void task_set_make(TaskSet *s, const Task *t, int n, uint64_t seed);
void task_set_free(TaskSet *s);

// The translation of src (S, padded) as the model should give it, in
// out; returns its length.
int task_answer(const Task *t, const int *src, int *out);

// Prints ids as text: symbols as letters, <pad> as '_', <bos> '^', <eos>
// '$'; n ids (stops at the first pad when stop_at_pad).
void task_print(FILE *f, const int *ids, int n, int stop_at_pad);

#endif
