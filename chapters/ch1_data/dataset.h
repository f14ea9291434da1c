// dataset.h - the encoded corpus, its train/val split, and random batches.
#ifndef CH1_DATASET_H
#define CH1_DATASET_H

#include <stddef.h>

#include "error.h"
#include "rng.h"
#include "vocab.h"

// A contiguous run of token ids; the splits point into the full array.
typedef struct {
    const int *ids;
    size_t n;
} Split;

// Everything chapter 1 builds from a text file.
typedef struct {
    uint32_t *text;    // (N,) the file as code points
    int *ids;          // (N,) the same text as token ids
    size_t n;          // N
    Vocab vocab;
    Split train, val;  // views into ids: the first 90% and the rest
} Corpus;

// The corpus every GPT chapter trains on, relative to the repository root.
#define CORPUS_DEFAULT "data/tinyshakespeare.txt"

// Reads a UTF-8 file (with no NUL byte; its line ends as read_text reads
// them) and builds vocabulary, ids and the 90/10 split. When CORPUS_DEFAULT is missing, the message gives its
// two usual causes (the program runs from another folder, or the data
// was never fetched).
int corpus_load(Corpus *c, const char *path, Error *err);

// The text corpus_load reads: the file's bytes, line ends as read_text
// reads them, NUL-terminated (not counted in *bytes); NULL with
// corpus_load's messages for a missing file or one holding a NUL.
char *corpus_read(const char *path, size_t *bytes, Error *err);
void corpus_free(Corpus *c);

// A corpus of ids another tokenizer made (chapter 9: GPT-2's BPE): takes
// ids (malloc'd, n of them; c owns them now) and splits them 90/10 as
// corpus_load does. c has no text and no vocabulary.
void corpus_from_ids(Corpus *c, int *ids, size_t n);

// The floats' worth corpus_load holds at its peak for a file of `bytes`
// bytes, the most it can be (every character one byte): the file and its
// code points while it decodes, then the code points and the ids.
size_t corpus_floats(size_t bytes);

// The first floor(train_frac * n) ids are train, the rest val.
void split_train_val(const int *ids, size_t n, double train_frac,
                     Split *train, Split *val);

// B random windows of T+1 consecutive ids: x gets the first T, y the last
// T (the next token at every position). Needs n >= T + 1.
int get_batch(int *x, int *y, const Split *s, int B, int T, Rng *rng,
              Error *err);

#endif
