// Chapter 7's scorers (bleu.c): the 13a tokenizer on the raw bytes, then
// corpus BLEU and chrF of a hypothesis and a reference, the input's text
// before its first NUL byte and the text after it. The first byte picks
// lowercasing. A score must be a number in [0, 100].
#include <math.h>

#include "bleu.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    bool lower = size > 0 && (data[0] & 1);
    Error err;
    char *tok = bleu_tokenize_13a((const char *)data, size, lower, &err);
    // (a NUL byte of the line is one of the output too, where a C string
    // ends: only a line without one can be checked)
    if (tok && !memchr(data, 0, size)) {
        size_t n = strlen(tok);
        if (n && (tok[n - 1] == ' ' || tok[0] == ' ' || strstr(tok, "  ")))
            fuzz_fail("13a tokens not joined by single spaces: \"%s\"", tok);
    }
    free(tok);
    char *text = fuzz_cstr(data, size);
    const char *hyp = text;
    const char *ref = strlen(text) < size ? text + strlen(text) + 1 : "";
    BleuResult b;
    if (bleu_corpus(&b, &hyp, &ref, 1, lower, &err) == 0) {
        // (exp(log 100) may round to 100.00000000000001, in sacreBLEU too)
        if (!(b.score >= 0 && b.score <= 100 + 1e-9))
            fuzz_fail("BLEU %g", b.score);
        char line[512];
        bleu_format(line, sizeof line, &b, true);
    }
    ChrfResult c;
    if (chrf_corpus(&c, &hyp, &ref, 1, lower, &err) == 0) {
        if (!(c.score >= 0 && c.score <= 100))
            fuzz_fail("chrF %g", c.score);
        char line[512];
        chrf_format(line, sizeof line, &c, true);
    }
    free(text);
    return 0;
}
