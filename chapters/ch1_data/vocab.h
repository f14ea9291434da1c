// vocab.h - the character vocabulary: every distinct Unicode code point of
// the training text, sorted, numbered 0..V-1. A token id is an index into
// the sorted table, so encode is a search and decode is an array lookup.
#ifndef CH1_VOCAB_H
#define CH1_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct {
    uint32_t *chars;   // (V,) code points in ascending order; id = index
    int size;          // V
} Vocab;

// The bytes of vocab_build's table of the code points seen, a bit each.
enum { VOCAB_SEEN_BYTES = 0x110000 / 8 };

// Builds the vocabulary of text (n code points). -1 if the text is empty
// or holds a value above U+10FFFF.
int vocab_build(Vocab *v, const uint32_t *text, size_t n, Error *err);
void vocab_free(Vocab *v);

// The id of code point cp, or -1 when it is not in the vocabulary.
int vocab_id(const Vocab *v, uint32_t cp);

// ids[i] = id of text[i]. -1 with a message naming the first character
// that is not in the vocabulary and its position.
int vocab_encode(const Vocab *v, const uint32_t *text, size_t n, int *ids,
                 Error *err);

// The UTF-8 string of n ids (NUL-terminated, malloc'd; *len gets its byte
// length when len is not NULL). NULL with a message on an id outside 0..V-1.
char *vocab_decode(const Vocab *v, const int *ids, size_t n, size_t *len,
                   Error *err);

// Convenience for programs: UTF-8 text -> ids (malloc'd), *n gets the count.
int *vocab_encode_utf8(const Vocab *v, const char *text, size_t bytes,
                       size_t *n, Error *err);

#endif
