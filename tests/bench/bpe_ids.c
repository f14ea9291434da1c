// bpe_ids - the token ids chapter 7's tokenizer gives every line of some
// files, for checking another implementation against it (bench_mt.py
// compares tests/reference/mt_torch.py's with these):
//
//   build/cc/bpe_ids CHECKPOINT FILE...
//
// The tokenizer is the "vocab" metadata of a checkpoint that ./ch7 --save
// wrote. For each file, in order, one output line per input line: its ids
// separated by spaces (an empty line for an empty one). The lines are
// those of read_text ("\r\n" and a lone "\r" end one too), as pairs.c
// reads the corpus.
#include <stdio.h>
#include <stdlib.h>

#include "bpe.h"
#include "error.h"
#include "mem.h"
#include "safetensors.h"
#include "utf8.h"

static void print_ids(Bpe *b, const char *path, int *buf) {
    size_t len;
    Error err;
    char *text = read_text(path, &len, &err);
    if (!text) die("%s", err.msg);
    for (size_t i = 0; i < len;) {
        size_t e = i;
        while (e < len && text[e] != '\n') e++;
        int k = bpe_encode(b, text + i, e - i, buf, &err);
        if (k < 0) die("%s: %s", path, err.msg);
        for (int j = 0; j < k; j++) printf(j ? " %d" : "%d", buf[j]);
        putchar('\n');
        i = e + 1;
    }
    free(text);
}

int main(int argc, char **argv) {
    error_set_progname("bpe_ids");
    if (argc < 3) die("usage: bpe_ids CHECKPOINT FILE...");
    StFile f;
    Error err;
    if (st_load(&f, argv[1], &err) != 0) die("%s", err.msg);
    const char *vocab = st_meta(&f, "vocab");
    Bpe b;
    if (!vocab || bpe_from_string(&b, vocab, &err) != 0)
        die("%s: no tokenizer (%s)", argv[1], vocab ? err.msg : "no vocab");
    st_free(&f);
    // room for the longest line: a token is at least one byte
    size_t most = 0;
    for (int k = 2; k < argc; k++) {
        size_t len;
        char *text = read_file(argv[k], &len, &err);
        if (!text) die("%s", err.msg);
        most = len > most ? len : most;
        free(text);
    }
    int *buf = xmalloc((most + 1) * sizeof *buf);
    for (int k = 2; k < argc; k++) print_ids(&b, argv[k], buf);
    free(buf);
    bpe_free(&b);
    return 0;
}
