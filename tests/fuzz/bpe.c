// Chapter 7's tokenizer loader (bpe_from_string): the input up to its
// first NUL byte is the tokenizer string; the text after it is encoded
// and decoded with what loads. What loads must write itself back as the
// same string, and decoding must give the text back when every
// character of the text is in the alphabet (no <unk>).
#include <stdbool.h>

#include "bpe.h"
#include "fuzz_util.h"

static const char DEFAULT_TEXT[] = "a dog  runs, \xc3\xbc ber";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = fuzz_cstr(data, size);
    Bpe t;
    Error err;
    if (bpe_from_string(&t, s, &err) != 0) {
        if (strchr(err.msg, '\n')) fuzz_fail("a message of two lines");
        free(s);
        return 0;
    }
    size_t len;
    char *back = bpe_to_string(&t, &len);
    if (len != strlen(s) || memcmp(back, s, len) != 0)
        fuzz_fail("the tokenizer does not write itself back as it was");
    free(back);
    const char *text = DEFAULT_TEXT;
    size_t n = sizeof DEFAULT_TEXT - 1;
    if (strlen(s) < size) {   // the text after the NUL
        text = s + strlen(s) + 1;
        n = size - strlen(s) - 1;
    }
    int *ids = malloc((n ? n : 1) * sizeof *ids);
    int k = bpe_encode(&t, text, n, ids, &err);
    if (k >= 0) {
        bool unk = false;
        for (int i = 0; i < k; i++) {
            if (ids[i] < 0 || ids[i] >= t.vocab_size)
                fuzz_fail("id %d outside the vocabulary", ids[i]);
            char buf[64];
            bpe_token_text(&t, ids[i], buf, sizeof buf);
            unk |= ids[i] == BPE_UNK;
        }
        size_t dlen;
        char *dec = bpe_decode(&t, ids, k, &dlen, &err);
        if (!dec) fuzz_fail("bpe_decode of its own ids: %s", err.msg);
        if (!unk && (dlen != n || memcmp(dec, text, n) != 0))
            fuzz_fail("decoding does not give the text back");
        free(dec);
    }
    // the second time the words come from the cache
    (void)bpe_encode(&t, text, n, ids, &err);
    free(ids);
    bpe_free(&t);
    free(s);
    return 0;
}
