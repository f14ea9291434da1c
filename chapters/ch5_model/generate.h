// generate.h - writing text with the model, one character at a time.
//
// Each step feeds the context (the newest tokens, at most block_size of
// them) to the model, samples the next id from the last position's logits
// (sample.h) and appends it. Done naively, as nanoGPT's generate, every
// step runs the whole context through every layer again, although only
// the newest token is new. The KV cache keeps each layer's keys and
// values of the tokens already seen, so a step runs one token through the
// layers and attends over the cached keys: one position's worth of work.
//
// The window. The model has learned positions 0 .. block_size-1 only, so
// once the text is longer than that the context must be cropped, and with
// absolute positions a crop renumbers every token: every cached key
// becomes stale. Two policies, both followed identically with and without
// the cache, so that the same seed writes the same text either way:
//   WINDOW_SLIDE (default): when the context outgrows block_size, drop
//       the oldest tokens down to block_size/2 and go on; the cache is
//       rebuilt once every block_size/2 + 1 new tokens.
//   WINDOW_EXACT: nanoGPT's crop, the newest block_size tokens at every
//       step; past block_size the cache is rebuilt at every step, so the
//       cache buys nothing there.
#ifndef CH5_GENERATE_H
#define CH5_GENERATE_H

#include <stdbool.h>
#include <stdint.h>

#include "gpt.h"
#include "sample.h"

typedef enum { WINDOW_SLIDE, WINDOW_EXACT } WindowPolicy;

typedef struct {
    int max_new_tokens;
    SampleOptions sample;
    uint64_t seed;
    bool use_cache;
    WindowPolicy window;
} GenOptions;

typedef struct {
    int tokens;          // new tokens written
    int prefills;        // times the context went through the full stack
    double seconds;      // wall time of the generation loop
} GenStats;

// Called with every new id as soon as it is chosen (may be NULL).
typedef void (*TokenFn)(int id, void *ctx);

//> generate-api
// Appends up to o->max_new_tokens ids to the n_prompt ids of prompt
// (n_prompt >= 1, ids in [0, V)), writing all of them to out (room for
// n_prompt + max_new_tokens ints; out may be prompt when it has that
// room). Returns 0, or -1 with a message (bad options, bad id).
int generate(const Gpt *m, const int *prompt, int n_prompt, int *out,
             const GenOptions *o, TokenFn on_token, void *ctx,
             GenStats *stats, Error *err);
//< generate-api

// The floats' worth that generate allocates for a model of config c
// (its KV cache, one layer's activations for the longest window it runs
// through the stack whole, the sampler), besides out: for a prompt of
// n_prompt ids and the options o, and (generate_floats) the most that
// any generation may take, a prompt of block_size ids with
// WINDOW_EXACT.
size_t generate_floats_for(const GptConfig *c, int n_prompt,
                           const GenOptions *o);
size_t generate_floats(const GptConfig *c);

//> logits-source
// Where the loop's logits come from. generate() hands the loop below this
// CPU model and its KV cache; chapter 8 hands it the GPU's model. The
// loop keeps the rest: the checks, the window, the sampler and the
// generator, so that the same logits give the same ids on every model.
//   fill: runs the window ids[0 .. n-1] (1 <= n <= block_size, at
//         positions 0 .. n-1) through the whole model;
//   step: runs only the newest id, the window being the last call's
//         plus that id (chapter 5's cache); NULL: every token is a fill.
// Both leave in logits the V logits that predict the next id, and return
// 0, or -1 with a message.
typedef struct {
    void *self;                    // passed to fill and step
    int vocab_size, block_size;    // the model's V and its longest window
    const float *logits;           // (V,) on the host
    int (*fill)(void *self, const int *ids, int n, Error *err);
    int (*step)(void *self, int id, Error *err);
} LogitsSource;

// generate() with the logits from src (o->use_cache is src's business:
// the loop steps whenever src->step is set and the window only grew).
int generate_with(const LogitsSource *src, const int *prompt, int n_prompt,
                  int *out, const GenOptions *o, TokenFn on_token,
                  void *ctx, GenStats *stats, Error *err);
//< logits-source

#endif
