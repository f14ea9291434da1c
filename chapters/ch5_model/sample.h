// sample.h - turning the model's logits into the next character.
//
// The logits of the last position are divided by a temperature (below 1
// sharpens the distribution, above 1 flattens it; 0 means greedy: always
// the most likely character), optionally cut to the k most likely
// (top-k) or to the smallest set whose probability reaches p (top-p, the
// "nucleus"), turned into probabilities by a softmax, and one character
// is drawn from them with a single uniform number from the generator:
// the first id whose running total of probability exceeds it.
#ifndef CH5_SAMPLE_H
#define CH5_SAMPLE_H

#include <stddef.h>

#include "error.h"
#include "rng.h"

typedef struct {
    float temperature;  // 0: greedy; otherwise > 0
    int top_k;          // 0: off; keep the k most likely
    float top_p;        // 1: off; keep the nucleus of mass top_p
} SampleOptions;

// 0 when the options are usable, else -1 with a message naming the bad
// one (temperature < 0, top_k < 0, top_p not in (0, 1]).
int sample_options_check(const SampleOptions *o, Error *err);

// Work space for one vocabulary size, so that sampling allocates nothing.
typedef struct {
    int V;
    float *probs;       // (V,)
    struct SampleSlot { float p; int id; } *sorted;  // (V,)
} Sampler;

void sampler_init(Sampler *s, int V);
// The floats' worth that sampler_init allocates.
size_t sampler_floats(int V);
void sampler_free(Sampler *s);

//> sample-api
// Logits below the k-th largest become -INFINITY (ties with the k-th are
// kept, as nanoGPT's logits[logits < v[-1]] = -inf). k <= 0 or k >= V
// changes nothing.
void top_k_filter(float *logits, int V, int k, Sampler *s);

// probs (summing to 1): keeps the most likely ids, in order of
// probability (ties by lower id), until their total reaches p, zeroes
// the rest and renormalises. p >= 1 keeps everything.
void top_p_filter(float *probs, int V, float p, Sampler *s);

// The next id for these logits (V of them; not modified). Greedy
// (temperature 0) draws nothing from rng; otherwise exactly one
// rng_uniform. The lowest id wins ties in greedy mode.
int sample_next(const float *logits, const SampleOptions *o, Sampler *s,
                Rng *rng);
//< sample-api

#endif
