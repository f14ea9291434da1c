#include "vocab.h"

#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "utf8.h"

#define N_CODE_POINTS 0x110000   // U+0000 .. U+10FFFF
_Static_assert(VOCAB_SEEN_BYTES == N_CODE_POINTS / 8, "vocab.h's size");

//> vocab-build
int vocab_build(Vocab *v, const uint32_t *text, size_t n, Error *err) {
    if (n == 0) return error_set(err, "cannot build a vocabulary from "
                                 "an empty text");
    // The set of code points seen, one bit each (136 KiB). Walking the
    // bits in order yields the vocabulary already sorted.
    uint8_t *seen = xcalloc(N_CODE_POINTS / 8, 1);
    int count = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = text[i];
        if (c >= N_CODE_POINTS) {
            free(seen);
            return error_set(err, "value 0x%X at position %zu is not a "
                             "Unicode code point", c, i);
        }
        if (!(seen[c >> 3] & (1u << (c & 7)))) count++;
        seen[c >> 3] |= (uint8_t)(1u << (c & 7));
    }
    v->chars = xmalloc((size_t)count * sizeof *v->chars);
    v->size = 0;
    for (uint32_t c = 0; c < N_CODE_POINTS; c++)
        if (seen[c >> 3] & (1u << (c & 7))) v->chars[v->size++] = c;
    free(seen);
    return 0;
}
//< vocab-build

void vocab_free(Vocab *v) {
    free(v->chars);
    v->chars = NULL;
    v->size = 0;
}

//> vocab-lookup
int vocab_id(const Vocab *v, uint32_t cp) {
    int lo = 0, hi = v->size - 1;          // binary search: chars is sorted
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (v->chars[mid] == cp) return mid;
        if (v->chars[mid] < cp) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

int vocab_encode(const Vocab *v, const uint32_t *text, size_t n, int *ids,
                 Error *err) {
    for (size_t i = 0; i < n; i++) {
        ids[i] = vocab_id(v, text[i]);
        if (ids[i] < 0) {
            char what[48];
            utf8_describe(text[i], what, sizeof what);
            return error_set(err, "%s at position %zu is not in the "
                             "vocabulary", what, i);
        }
    }
    return 0;
}
//< vocab-lookup

char *vocab_decode(const Vocab *v, const int *ids, size_t n, size_t *len,
                   Error *err) {
    char *out = xmalloc(4 * n + 1), *p = out;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= v->size) {
            free(out);
            error_set(err, "token id %d at position %zu is outside the "
                      "vocabulary (0..%d)", ids[i], i, v->size - 1);
            return NULL;
        }
        p += utf8_encode(v->chars[ids[i]], p);
    }
    *p = '\0';
    if (len) *len = (size_t)(p - out);
    return out;
}

int *vocab_encode_utf8(const Vocab *v, const char *text, size_t bytes,
                       size_t *n, Error *err) {
    uint32_t *cps = xmalloc((bytes ? bytes : 1) * sizeof *cps);
    long count = utf8_decode(text, bytes, cps, err);
    int *ids = NULL;
    if (count >= 0) {
        ids = xmalloc((count ? (size_t)count : 1) * sizeof *ids);
        if (vocab_encode(v, cps, (size_t)count, ids, err) != 0) {
            free(ids);
            ids = NULL;
        } else {
            *n = (size_t)count;
        }
    }
    free(cps);
    return ids;
}
