// bigram.h - the losses a model must beat, from counting alone.
//
// All three are the mean cross-entropy (in nats) of predicting each val
// character, with probabilities counted on train:
//   uniform  P(b) = 1 / V                       -> ln V
//   unigram  P(b) = (count(b) + a) / (N + a V)
//   bigram   P(b | prev a) = (count(a,b) + a) / (count(a,.) + a V)
// "a" is add-alpha (Laplace) smoothing: without it a pair never seen in
// train would get probability 0 and an infinite loss.
#ifndef CH1_BIGRAM_H
#define CH1_BIGRAM_H

#include <stddef.h>

// counts (V,) += occurrences of each id in ids.
void unigram_count(long *counts, const int *ids, size_t n, int V);

// counts (V,V) += transitions: counts[a * V + b] counts ids[i] = a followed
// by ids[i+1] = b, over the n - 1 adjacent pairs.
void bigram_count(long *counts, const int *ids, size_t n, int V);

// Mean -ln P over the n ids of a text (unigram) or its n - 1 transitions
// (bigram), with add-alpha smoothing of the counts.
double unigram_loss(const long *counts, int V, const int *ids, size_t n,
                    double alpha);
double bigram_loss(const long *counts, int V, const int *ids, size_t n,
                   double alpha);

#endif
