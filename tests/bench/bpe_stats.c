// bpe_stats - the numbers of chapter 7's text about subwords, measured on
// Multi30k (`make data` fetches it):
//
//   make bpe-stats            (builds build/<variant>/bpe_stats, runs it)
//
// For characters (0 merges), BPE with 2,000, 4,000 and 8,000 merges learnt
// on train.de and train.en together, and whole words split at spaces: the
// vocabulary size and the mean number of tokens per sentence of train,
// German and English. Then the time to learn each BPE, and to encode all
// of train (both languages) with it. Every line of the six files is also
// decoded and compared with itself, byte for byte.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "error.h"
#include "mem.h"
#include "timer.h"
#include "utf8.h"

#define DIR "data/multi30k/"

static const char *const FILES[6] = {
    "train.de", "train.en", "val.de", "val.en", "test_2016_flickr.de",
    "test_2016_flickr.en"};

typedef struct {
    char *text;
    size_t len;
    int lines;
} Text;

static Text load(const char *name) {
    char path[256];
    snprintf(path, sizeof path, DIR "%s", name);
    Error err;
    Text t = {0};
    t.text = read_text(path, &t.len, &err);   // as ./ch7 reads it
    if (!t.text) die("%s (run make data)", err.msg);
    for (size_t i = 0; i < t.len; i++) t.lines += t.text[i] == '\n';
    return t;
}

// Encodes every line of t; returns the tokens. With check, also decodes
// each line and compares it with itself.
static long encode_all(Bpe *b, const Text *t, int *buf, int check) {
    long tokens = 0;
    Error err;
    for (size_t i = 0; i < t->len;) {
        size_t e = i;
        while (e < t->len && t->text[e] != '\n') e++;
        int n = bpe_encode(b, t->text + i, e - i, buf, &err);
        if (n < 0) die("%s", err.msg);
        if (check) {
            size_t dl;
            char *d = bpe_decode(b, buf, n, &dl, &err);
            if (!d || dl != e - i || memcmp(d, t->text + i, dl) != 0)
                die("a line does not come back from decoding");
            free(d);
        }
        tokens += n;
        i = e + 1;
    }
    return tokens;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

// The distinct strings among all[0 .. n-1] (sorted in place).
static size_t distinct(char **all, size_t n) {
    qsort(all, n, sizeof *all, cmp_str);
    size_t d = 0;
    for (size_t i = 0; i < n; i++) d += i == 0 || strcmp(all[i], all[i - 1]);
    return d;
}

// Whole words: the words between spaces of train, how many distinct
// (German, English, both: the softmax a word model would need), and the
// mean words per sentence.
static void word_stats(const Text *tr) {
    long words[2] = {0, 0};
    size_t cap = 1 << 16, n = 0, d[2];
    char **all = xmalloc(cap * sizeof *all);
    for (int k = 0; k < 2; k++) {
        char *s = xmalloc(tr[k].len + 1);
        memcpy(s, tr[k].text, tr[k].len + 1);
        size_t first = n;
        for (char *tok = strtok(s, " \n"); tok; tok = strtok(NULL, " \n")) {
            if (n == cap) all = xrealloc(all, (cap *= 2) * sizeof *all);
            all[n++] = strdup(tok);
            words[k]++;
        }
        d[k] = distinct(all + first, n - first);
        free(s);
    }
    size_t both = distinct(all, n);
    for (size_t i = 0; i < n; i++) free(all[i]);
    free(all);
    printf("%-12s %8zu %10.2f %10.2f   (distinct: %zu German, %zu "
           "English)\n", "words", both, (double)words[0] / tr[0].lines,
           (double)words[1] / tr[1].lines, d[0], d[1]);
}

int main(void) {
    error_set_progname("bpe_stats");
    Text t[6];
    for (int k = 0; k < 6; k++) t[k] = load(FILES[k]);
    const char *texts[2] = {t[0].text, t[1].text};
    size_t lens[2] = {t[0].len, t[1].len};
    size_t maxlen = 0;
    for (int k = 0; k < 6; k++) maxlen = t[k].len > maxlen ? t[k].len : maxlen;
    int *buf = xmalloc((maxlen + 1) * sizeof *buf);
    printf("%-12s %8s %10s %10s %9s %9s\n", "tokenizer", "vocab",
           "tok/de", "tok/en", "learn s", "encode s");
    const int merges[4] = {0, 2000, 4000, 8000};
    for (int m = 0; m < 4; m++) {
        Bpe b;
        Error err;
        double t0 = time_now();
        if (bpe_learn(&b, texts, lens, 2, merges[m], &err)) die("%s", err.msg);
        double learn = time_now() - t0;
        t0 = time_now();
        long de = encode_all(&b, &t[0], buf, 0);
        long en = encode_all(&b, &t[1], buf, 0);
        double enc = time_now() - t0;
        for (int k = 0; k < 6; k++) encode_all(&b, &t[k], buf, 1);
        char name[32];
        snprintf(name, sizeof name, m ? "bpe %d" : "characters", merges[m]);
        printf("%-12s %8d %10.2f %10.2f %9.3f %9.3f\n", name, b.vocab_size,
               (double)de / t[0].lines, (double)en / t[1].lines, learn, enc);
        bpe_free(&b);
    }
    word_stats(t);
    free(buf);
    for (int k = 0; k < 6; k++) free(t[k].text);
    return 0;
}
