// The UTF-8 decoder (common/utf8.c) against a second, independent one
// written from the table of well-formed byte sequences (Unicode 15,
// table 3-7), and chapter 1's text reader (corpus_load) on the same bytes
// as a file. Valid text must decode to the same code points, which
// utf8_encode turns back into the same bytes; invalid text must be
// refused, at the same offset.
#include <stdbool.h>

#include "dataset.h"
#include "fuzz_util.h"
#include "utf8.h"

// Table 3-7: the lead byte fixes the range of the second byte.
static long reference_decode(const uint8_t *s, size_t n, uint32_t *out,
                             size_t *bad_at) {
    long count = 0;
    size_t i = 0;
    while (i < n) {
        uint8_t b = s[i];
        int len;
        uint8_t lo = 0x80, hi = 0xbf;   // the second byte's range
        if (b <= 0x7f) len = 1;
        else if (b >= 0xc2 && b <= 0xdf) len = 2;
        else if (b == 0xe0) len = 3, lo = 0xa0;
        else if (b >= 0xe1 && b <= 0xec) len = 3;
        else if (b == 0xed) len = 3, hi = 0x9f;
        else if (b >= 0xee && b <= 0xef) len = 3;
        else if (b == 0xf0) len = 4, lo = 0x90;
        else if (b >= 0xf1 && b <= 0xf3) len = 4;
        else if (b == 0xf4) len = 4, hi = 0x8f;
        else { *bad_at = i; return -1; }
        if (i + (size_t)len > n) { *bad_at = i; return -1; }
        uint32_t cp = len == 1 ? b : len == 2 ? b & 0x1fu
                    : len == 3 ? b & 0x0fu : b & 0x07u;
        for (int k = 1; k < len; k++) {
            uint8_t c = s[i + (size_t)k];
            uint8_t l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xbf;
            if (c < l || c > h) { *bad_at = i; return -1; }
            cp = cp << 6 | (c & 0x3fu);
        }
        out[count++] = cp;
        i += (size_t)len;
    }
    return count;
}

// Returns whether the bytes are valid UTF-8.
static bool check_decoder(const uint8_t *data, size_t size) {
    uint32_t *got = malloc((size ? size : 1) * sizeof *got);
    uint32_t *want = malloc((size ? size : 1) * sizeof *want);
    Error err;
    size_t bad_at = 0;
    long n = utf8_decode((const char *)data, size, got, &err);
    long m = reference_decode(data, size, want, &bad_at);
    if ((n < 0) != (m < 0))
        fuzz_fail("utf8_decode says %s, the reference %s",
                  n < 0 ? err.msg : "valid", m < 0 ? "invalid" : "valid");
    if (n < 0) {
        char at[64];
        snprintf(at, sizeof at, "at byte %zu ", bad_at);
        if (!strstr(err.msg, at))
            fuzz_fail("utf8_decode: \"%s\", the reference: %s", err.msg, at);
    } else {
        if (n != m) fuzz_fail("%ld code points, the reference %ld", n, m);
        size_t at = 0;
        for (long i = 0; i < n; i++) {
            if (got[i] != want[i])
                fuzz_fail("code point %ld: U+%04X, the reference U+%04X", i,
                          got[i], want[i]);
            char buf[4];
            int len = utf8_encode(got[i], buf);
            if (at + (size_t)len > size || memcmp(buf, data + at, len) != 0)
                fuzz_fail("utf8_encode(U+%04X) does not give back its "
                          "bytes", got[i]);
            char desc[64];
            utf8_describe(got[i], desc, sizeof desc);
            at += (size_t)len;
        }
        if (at != size) fuzz_fail("the encoding is shorter than the text");
    }
    free(got);
    free(want);
    return n >= 0;
}

static void check_corpus(const uint8_t *data, size_t size) {
    char path[128];
    fuzz_write(path, sizeof path, fuzz_dir(), "corpus.txt", data, size);
    Corpus c;
    memset(&c, 0, sizeof c);
    Error err;
    if (corpus_load(&c, path, &err) != 0) return;
    if (c.train.n + c.val.n != c.n) fuzz_fail("the split loses ids");
    for (size_t i = 0; i < c.n; i++)
        if (c.ids[i] < 0 || c.ids[i] >= c.vocab.size
            || c.vocab.chars[c.ids[i]] != c.text[i])
            fuzz_fail("id %zu does not stand for its character", i);
    corpus_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // corpus_load refuses invalid text with utf8_decode's own message;
    // its vocabulary walks all 1.1 million code points, a few milliseconds
    // that are spent on valid text only
    if (check_decoder(data, size)) check_corpus(data, size);
    return 0;
}
