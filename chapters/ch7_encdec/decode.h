// decode.h - turning a source into a target with a trained model: greedy
// decoding and beam search, both on the cached state of seq2seq.h (the
// encoder runs once per source; each new target token costs one
// position through every decoder layer).
//
// Both decode a batch of B sources at once. Each sentence starts from
// <bos> and ends at its own <eos>, or when it reaches its length limit:
// its source's real length + extra tokens (the course notes' program
// allows 50 more than the source), and never more than the state holds.
// The output holds the tokens after <bos>, without the <eos>. A <pad>
// the model chooses is a token like any other here (it prints as
// nothing); fed back, it is hidden from the later positions as the full
// forward pass hides every <pad> (seq2seq_step), so decoding with the
// cache and without it give the same tokens.
#ifndef CH7_DECODE_H
#define CH7_DECODE_H

#include <stdbool.h>

#include "error.h"
#include "seq2seq.h"

typedef struct {
    int bos, eos;   // the start and end tokens
    int extra;      // the length limit: source length + extra
    int beam;       // beam width k (1 with alpha 0: greedy's output)
    float alpha;    // length normalisation, below
} DecodeConfig;

// bos 1, eos 2, extra 50, beam 4, alpha 1 (the mean log-probability).
DecodeConfig decode_config_default(void);

//> greedy-api
// Greedy decoding of B sources (B, S): at every step each sentence takes
// its most likely next token, of equal logits the lowest id (the first
// of the largest). st must be allocated with copies = 1, for
// at least B sources of S tokens. out (B, max_out): row b gets len[b]
// tokens (the rest is left as it was); done[b] (may be NULL) tells
// whether the sentence ended with <eos>. Returns 0, or -1 with a message.
int greedy_decode(const Seq2Seq *m, Seq2SeqState *st, const int *src,
                  int B, int S, const DecodeConfig *dc, int *out,
                  int max_out, int *len, bool *done, Error *err);
//< greedy-api

//> beam-api
// Beam search: each source keeps the k best partial translations (the
// beams), ranked by their log-probability log P(y) = sum of log p(y_t |
// y_<t, x). A beam that emits <eos> is finished; its score is the
// length-normalised
//
//     score(y) = log P(y) / |y|^alpha        (|y| counts the <eos>)
//
// alpha = 0 ranks by log P itself (which favours short outputs), alpha =
// 1 by the mean log-probability per token. The search of a source stops
// when no live beam can still beat its best finished one: log P only
// falls as a beam grows, so a live beam's best possible score is its log
// P over the longest length allowed, to the alpha. At the length limit
// the live beams count as finished. Ties: candidates of equal log P rank
// by the lower beam (row), then the lower token, and a finished
// hypothesis replaces the best only with a greater score; so width 1
// with alpha 0 makes greedy decoding's choices, ties included. st must be
// allocated with copies = dc->beam. Returns the best of each source as
// greedy_decode does; score (B,) may be NULL.
int beam_decode(const Seq2Seq *m, Seq2SeqState *st, const int *src, int B,
                int S, const DecodeConfig *dc, int *out, int max_out,
                int *len, bool *done, float *score, Error *err);
//< beam-api

// The floats' worth of work space each allocates while it runs (besides
// the state), for a memory plan (mem.h).
size_t greedy_decode_floats(const Seq2SeqConfig *c, int B);
size_t beam_decode_floats(const Seq2SeqConfig *c, int B, int k,
                          int max_out);

#endif
