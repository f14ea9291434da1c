// ch1_exercises.h - the exercises of chapter 1. Your answers go in
// exercises/ch1/ (one file per exercise); `make check EXERCISES=exercises`
// grades them. Each function is the chapter's own code to write again, with
// its contract spelled out; the tests in tests/ch1/test_ex1.c hold you to it.
#ifndef CH1_EXERCISES_H
#define CH1_EXERCISES_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "rng.h"
#include "vocab.h"

// Exercise 1.1 - vocabulary, encode, decode.
// Build v from text (n code points): v->chars gets the distinct code points
// in ascending order, malloc'd (vocab_free() releases it), v->size their
// count. Returns 0, or -1 when n == 0.
int ex_vocab_build(Vocab *v, const uint32_t *text, size_t n);
// ids[i] = the id (index in v->chars) of text[i]. Returns 0, or -1 when a
// code point is not in the vocabulary.
int ex_encode(const Vocab *v, const uint32_t *text, size_t n, int *ids);
// text[i] = the code point of ids[i]. Returns 0, or -1 for an id outside
// 0..V-1.
int ex_decode(const Vocab *v, const int *ids, size_t n, uint32_t *text);

// Exercise 1.2 - a random batch.
// For each row b = 0..B-1 in order, draw ONE start offset with
// rng_below(rng, n - T) and copy ids[off .. off+T-1] to x[b*T ..] and
// ids[off+1 .. off+T] to y[b*T ..]. x and y are (B, T). n >= T + 1.
void ex_get_batch(int *x, int *y, const int *ids, size_t n, int B, int T,
                  Rng *rng);

// Exercise 1.3 - the train/val split.
// train gets the first floor(train_frac * n) ids, val the rest; both are
// views into ids (no copy). 0 <= train_frac <= 1.
void ex_split(const int *ids, size_t n, double train_frac, Split *train,
              Split *val);

// Exercise 1.4 - the bigram baseline.
// counts is (V, V), zeroed by the caller: add 1 to counts[a*V + b] for
// every adjacent pair ids[i] = a, ids[i+1] = b.
void ex_bigram_count(long *counts, const int *ids, size_t n, int V);
// The mean of -ln P(ids[i+1] | ids[i]) over the n - 1 pairs, where
// P(b | a) = (counts[a*V+b] + alpha) / (sum_c counts[a*V+c] + alpha*V);
// NAN (math.h) when n < 2, which has no pair to average.
double ex_bigram_loss(const long *counts, int V, const int *ids, size_t n,
                      double alpha);

// Exercise 1.5 - a strict UTF-8 decoder.
// Decode n bytes into out (room for n code points) and return the count.
// On malformed input return -1 and set *bad_offset to the byte offset where
// the first malformed sequence starts: a byte that cannot start a
// character, a missing continuation byte, a sequence cut off by the end,
// an overlong form, a surrogate (U+D800..U+DFFF) or a value above U+10FFFF.
long ex_utf8_decode(const char *bytes, size_t n, uint32_t *out,
                    size_t *bad_offset);

#endif
