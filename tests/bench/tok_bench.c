// tok_bench - how fast chapter 9's GPT-2 tokenizer encodes a file, on one
// thread; tests/bench/tokenizer.py runs it beside tiktoken:
//
//   build/cc/tok_bench [--tokenizer DIR] [--repeats N] FILE
//
// DIR (default tests/reference/ch9_tok) holds vocab.json and merges.txt,
// or encoder.json and vocab.bpe. The whole file is one text, encoded
// without <|endoftext|> (as tiktoken's encode_ordinary). Prints
//   ids N fnv1a64 HASH     the ids' count and their hash (as little-endian
//                          uint32s, FNV-1a 64), to compare with tiktoken's
//   cold S                 best time in seconds over N encodings, each by
//                          a freshly loaded tokenizer: an empty cache
//   warm S                 best over N encodings by one tokenizer that has
//                          seen the text before: every piece in its cache
//   load S                 best time to read the two files
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "mem.h"
#include "timer.h"
#include "tokenizer.h"
#include "utf8.h"

static void load(Gpt2Tokenizer *t, const char *dir) {
    Error err;
    if (gpt2_tok_load_dir(t, dir, &err) != 0) die("%s", err.msg);
}

// Encodes the text once; the seconds it took.
static double encode(Gpt2Tokenizer *t, const char *text, size_t n, int *ids,
                     long *count) {
    Error err;
    double t0 = time_now();
    *count = gpt2_tok_encode(t, text, n, false, ids, &err);
    double s = time_now() - t0;
    if (*count < 0) die("%s", err.msg);
    return s;
}

static double min_d(double a, double b) { return a < b ? a : b; }

int main(int argc, char **argv) {
    error_set_progname("tok_bench");
    const char *dir = "tests/reference/ch9_tok", *path = NULL;
    int repeats = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tokenizer") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (argv[i][0] != '-' && !path) path = argv[i];
        else die("usage: tok_bench [--tokenizer DIR] [--repeats N] FILE");
    }
    if (!path || repeats < 1)
        die("usage: tok_bench [--tokenizer DIR] [--repeats N] FILE");
    size_t n;
    Error err;
    char *text = read_file(path, &n, &err);
    if (!text) die("%s", err.msg);
    int *ids = xmalloc((n + 1) * sizeof *ids);
    double cold = 1e30, warm = 1e30, load_s = 1e30;
    long count = 0;
    Gpt2Tokenizer t;
    for (int r = 0; r < repeats; r++) {   // a new tokenizer each time
        double t0 = time_now();
        load(&t, dir);
        load_s = min_d(load_s, time_now() - t0);
        cold = min_d(cold, encode(&t, text, n, ids, &count));
        gpt2_tok_free(&t);
    }
    load(&t, dir);
    encode(&t, text, n, ids, &count);
    for (int r = 0; r < repeats; r++)
        warm = min_d(warm, encode(&t, text, n, ids, &count));
    gpt2_tok_free(&t);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (long i = 0; i < count; i++)
        for (int k = 0; k < 4; k++)
            h = (h ^ (((uint32_t)ids[i] >> (8 * k)) & 0xff))
                * 0x100000001b3ULL;
    printf("ids %ld fnv1a64 %016llx\ncold %.6f\nwarm %.6f\nload %.6f\n",
           count, (unsigned long long)h, cold, warm, load_s);
    free(ids);
    free(text);
    return 0;
}
