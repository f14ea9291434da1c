// translate.h - a trained model applied to many sentences: they are
// sorted by length and decoded in batches (greedy or beam search), and
// the outputs come back in the input's order.
#ifndef CH7_TRANSLATE_H
#define CH7_TRANSLATE_H

#include "decode.h"
#include "error.h"
#include "seq2seq.h"

// n sources: source i is src[off[i] .. off[i+1]). Writes the output ids of
// sentence i to out[out_off[i] .. out_off[i+1]) (out_off has n + 1
// entries; out is allocated here, the caller frees *out). batch: sentences
// decoded together (beam search decodes batch * beam rows). An empty
// source gives an empty output. Returns 0, or -1 with a message.
int translate_batch(const Seq2Seq *m, const int *src, const int *off, int n,
                    const DecodeConfig *dc, int batch, int **out,
                    int *out_off, Error *err);

// The floats' worth translate_batch allocates for n sources of at most S
// tokens with beam width beam (1: greedy), outputs included, on as many
// threads as it would use: for a memory plan (mem.h).
size_t translate_batch_floats(const Seq2SeqConfig *c, int n, int S,
                              int beam, int batch);

#endif
