#include "dataset.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem.h"
#include "utf8.h"

// The share of a corpus that trains; the rest is val.
static const double TRAIN_FRAC = 0.9;

char *corpus_read(const char *path, size_t *bytes, Error *err) {
    char *raw = read_text(path, bytes, err);   // "\r\n" read as "\n"
    if (!raw && strcmp(path, CORPUS_DEFAULT) == 0 && access(path, F_OK) != 0) {
        char inner[sizeof err->msg];
        snprintf(inner, sizeof inner, "%s", err->msg);
        error_set(err, "%s (run from the repository root, after "
                  "'make data')", inner);
        return NULL;
    }
    if (!raw) return NULL;
    // A NUL is no text, and a checkpoint, whose metadata are C strings,
    // could not store it in the vocabulary: refused before any training.
    const char *nul = memchr(raw, '\0', *bytes);
    if (nul) {
        size_t at = (size_t)(nul - raw);
        free(raw);
        error_set(err, "%s: a NUL byte (U+0000) at byte offset %zu; a text "
                  "file holds none", path, at);
        return NULL;
    }
    return raw;
}

int corpus_load(Corpus *c, const char *path, Error *err) {
    size_t bytes;
    char *raw = corpus_read(path, &bytes, err);
    if (!raw) return -1;
    c->text = xmalloc((bytes ? bytes : 1) * sizeof *c->text);
    long n = utf8_decode(raw, bytes, c->text, err);
    free(raw);
    if (n < 0) {
        free(c->text);
        char inner[sizeof err->msg];
        snprintf(inner, sizeof inner, "%s", err->msg);
        return error_set(err, "%s: %s", path, inner);
    }
    if (n < 2) {
        free(c->text);
        return error_set(err, "%s: needs at least 2 characters, has %ld",
                         path, n);
    }
    c->n = (size_t)n;
    vocab_build(&c->vocab, c->text, c->n, NULL);  // decoded: cannot fail
    c->ids = xmalloc(c->n * sizeof *c->ids);
    vocab_encode(&c->vocab, c->text, c->n, c->ids, NULL);  // cannot fail
    split_train_val(c->ids, c->n, TRAIN_FRAC, &c->train, &c->val);
    return 0;
}

void corpus_from_ids(Corpus *c, int *ids, size_t n) {
    *c = (Corpus){.ids = ids, .n = n};
    split_train_val(c->ids, c->n, TRAIN_FRAC, &c->train, &c->val);
}

size_t corpus_floats(size_t bytes) {
    Corpus c;
    size_t text = bytes * sizeof *c.text, ids = bytes * sizeof *c.ids;
    size_t decoding = bytes + 1 + text, kept = text + ids;
    return mem_floats((decoding > kept ? decoding : kept)
                      + VOCAB_SEEN_BYTES);
}

void corpus_free(Corpus *c) {
    free(c->text);
    free(c->ids);
    vocab_free(&c->vocab);
}

//> split
void split_train_val(const int *ids, size_t n, double train_frac,
                     Split *train, Split *val) {
    size_t n_train = (size_t)(train_frac * (double)n);
    if (n_train > n) n_train = n;
    train->ids = ids;
    train->n = n_train;
    val->ids = ids + n_train;
    val->n = n - n_train;
}
//< split

//> get-batch
int get_batch(int *x, int *y, const Split *s, int B, int T, Rng *rng,
              Error *err) {
    if (B < 1 || T < 1)
        return error_set(err, "batch size and block size must be >= 1 "
                         "(got %d and %d)", B, T);
    if (s->n < (size_t)T + 1)
        return error_set(err, "a block of %d needs %d tokens, this split "
                         "has %zu", T, T + 1, s->n);
    if (s->n - (size_t)T > UINT32_MAX)
        return error_set(err, "split of %zu tokens is too large", s->n);
    // Window start i is valid when its last target, ids[i + T], exists:
    // i + T <= n - 1, so i ranges over 0 .. n - T - 1: n - T choices.
    for (int b = 0; b < B; b++) {
        size_t i = rng_below(rng, (uint32_t)(s->n - (size_t)T));
        for (int t = 0; t < T; t++) {
            x[b * T + t] = s->ids[i + t];
            y[b * T + t] = s->ids[i + t + 1];   // the next token
        }
    }
    return 0;
}
//< get-batch
