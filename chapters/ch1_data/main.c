// ch1 - data preparation: from a text file to batches of token ids.
//
//   ./ch1                       Tiny Shakespeare with the defaults
//   ./ch1 --data FILE --batch 2 --block 16 --seed 7
//   ./ch1 --plot-data DIR       also the counts behind the baselines, as CSV
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bigram.h"
#include "dataset.h"
#include "error.h"
#include "flags.h"
#include "mem.h"
#include "plotdata.h"
#include "report.h"
#include "rng.h"
#include "timer.h"
#include "utf8.h"
#include "vocab.h"


// Prints text with newlines and tabs escaped, so a batch row fits a line.
static void print_escaped(const char *s) {
    for (; *s; s++) {
        if (*s == '\n') fputs("\\n", stdout);
        else if (*s == '\t') fputs("\\t", stdout);
        else if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else putchar(*s);
    }
}

static void print_ids_as_text(const Vocab *v, const int *ids, size_t n) {
    char *s = vocab_decode(v, ids, n, NULL, NULL);
    putchar('"');
    print_escaped(s);
    putchar('"');
    free(s);
}

static void show_corpus(const Corpus *c, const char *path) {
    size_t lines = 0;
    for (size_t i = 0; i < c->n; i++) lines += c->text[i] == '\n';
    printf("corpus      %s: %zu characters, %zu line%s\n", path, c->n, lines,
           lines == 1 ? "" : "s");
    printf("vocabulary  %d distinct characters, sorted by code point:\n",
           c->vocab.size);
    int *all = xmalloc((size_t)c->vocab.size * sizeof *all);
    for (int i = 0; i < c->vocab.size; i++) all[i] = i;
    printf("            ");
    print_ids_as_text(&c->vocab, all, (size_t)c->vocab.size);
    printf("\n            id 0 is ");
    print_ids_as_text(&c->vocab, all, 1);
    printf(", id %d is ", c->vocab.size - 1);
    print_ids_as_text(&c->vocab, all + c->vocab.size - 1, 1);
    printf("\n");
    free(all);
}

// Encodes and decodes text. When the text is the default and does not fit
// the vocabulary of another --data file, the file's own start is used.
static void show_round_trip(const Corpus *c, const char *text,
                            bool is_default) {
    const Vocab *v = &c->vocab;
    Error err;
    size_t n;
    char *own = NULL;
    int *ids = vocab_encode_utf8(v, text, strlen(text), &n, &err);
    if (!ids && is_default) {
        size_t len = c->n < 18 ? c->n : 18;
        own = vocab_decode(v, c->ids, len, NULL, NULL);
        text = own;
        ids = vocab_encode_utf8(v, text, strlen(text), &n, &err);
    }
    if (!ids) die("--text: %s", err.msg);
    // the ids folded under the text: "[32, 53, 1, ...]"
    char *list = xmalloc(n * 13 + 8), *end = list;
    end += sprintf(end, "[");
    for (size_t i = 0; i < n; i++) end += sprintf(end, i ? ", %d" : "%d",
                                                  ids[i]);
    sprintf(end, "]");
    printf("encode      \"%s\" ->\n", text);
    fold_print(stdout, list, printf("%*s", REPORT_INDENT, ""),
               REPORT_INDENT, REPORT_WIDTH);
    free(list);
    char *back = vocab_decode(v, ids, n, NULL, NULL);
    printf("decode      -> \"%s\" (%s)\n", back,
           strcmp(back, text) == 0 ? "round trip exact" : "MISMATCH");
    free(back);
    free(ids);
    free(own);
}

static void show_batch(const Corpus *c, int B, int T, uint64_t seed) {
    Rng rng;
    rng_seed(&rng, seed);
    int *x = xmalloc((size_t)B * T * sizeof *x);
    int *y = xmalloc((size_t)B * T * sizeof *y);
    Error err;
    if (get_batch(x, y, &c->train, B, T, &rng, &err) != 0)
        die("get_batch: %s", err.msg);
    printf("batch       get_batch(train, B=%d, T=%d), seed %llu: y is x "
           "shifted left by one\n", B, T, (unsigned long long)seed);
    for (int b = 0; b < B; b++) {
        printf("  x[%d] ", b);
        print_ids_as_text(&c->vocab, x + b * T, (size_t)T);
        printf("\n  y[%d] ", b);
        print_ids_as_text(&c->vocab, y + b * T, (size_t)T);
        printf("\n");
    }
    printf("  row 0 holds %d training examples, one per position:\n", T);
    for (int t = 0; t < T && t < 4; t++) {
        printf("    context ");
        print_ids_as_text(&c->vocab, x, (size_t)t + 1);
        printf(" -> next ");
        print_ids_as_text(&c->vocab, y + t, 1);
        printf("\n");
    }
    if (T > 4) printf("    ... and %d more\n", T - 4);
    free(x);
    free(y);
}

static void show_baselines(const Corpus *c, double alpha) {
    int V = c->vocab.size;
    long *uni = xcalloc((size_t)V, sizeof *uni);
    long *bi = xcalloc((size_t)V * V, sizeof *bi);
    unigram_count(uni, c->train.ids, c->train.n, V);
    bigram_count(bi, c->train.ids, c->train.n, V);
    report_line("baselines", "cross-entropy on val in nats per character "
                "(counts from train, add-%g smoothing)", alpha);
    printf("  uniform   ln %-5d %.4f   every character equally likely\n", V,
           log((double)V));
    printf("  unigram            %.4f   how common each character is\n",
           unigram_loss(uni, V, c->val.ids, c->val.n, alpha));
    printf("  bigram             %.4f   which character follows which\n",
           bigram_loss(bi, V, c->val.ids, c->val.n, alpha));
    printf("  (chapter 6's GPT: 1.7 to 1.9 in 5 minutes on 2 cores; "
           "nanoGPT's: 1.47)\n");
    free(uni);
    free(bi);
}

// The counts behind the baselines, for the book's figures: how often each
// character occurs in train (unigram.csv) and how often each follows each
// (bigram.csv, all V x V pairs, zeros included).
static void write_plot_data(const Corpus *c, const char *dir) {
    int V = c->vocab.size;
    long *uni = xcalloc((size_t)V, sizeof *uni);
    long *bi = xcalloc((size_t)V * V, sizeof *bi);
    unigram_count(uni, c->train.ids, c->train.n, V);
    bigram_count(bi, c->train.ids, c->train.n, V);
    Error err;
    FILE *f = plot_csv_open(dir, "unigram.csv", "id,char,count", &err);
    if (!f) die("%s", err.msg);
    for (int i = 0; i < V; i++) {
        fprintf(f, "%d,", i);
        plot_csv_label(f, c->vocab.chars[i]);
        fprintf(f, ",%ld\n", uni[i]);
    }
    if (plot_csv_close(f, dir, "unigram.csv", &err) != 0) die("%s", err.msg);
    f = plot_csv_open(dir, "bigram.csv", "prev,next,count", &err);
    if (!f) die("%s", err.msg);
    for (int a = 0; a < V; a++)
        for (int b = 0; b < V; b++)
            fprintf(f, "%d,%d,%ld\n", a, b, bi[(size_t)a * V + b]);
    if (plot_csv_close(f, dir, "bigram.csv", &err) != 0) die("%s", err.msg);
    printf("plot data   %s/unigram.csv and %s/bigram.csv\n", dir, dir);
    free(uni);
    free(bi);
}

int main(int argc, char **argv) {
    const char *data = CORPUS_DEFAULT;
    const char *default_text = "To be or not to be", *text = default_text;
    const char *plot_dir = "";
    int batch = 4, block = 8;
    uint64_t seed = 1337;
    float alpha = 1.0f;
    Flag flags[] = {
        {"data", FLAG_STRING, &data, "UTF-8 text file to read"},
        {"batch", FLAG_INT, &batch, "rows in the example batch (B)"},
        {"block", FLAG_INT, &block, "tokens per row, the context length (T)"},
        {"seed", FLAG_U64, &seed, "random seed for the batch"},
        {"text", FLAG_STRING, &text, "string to encode and decode"},
        {"alpha", FLAG_FLOAT, &alpha, "add-alpha smoothing of the baselines"},
        {"plot-data", FLAG_STRING, &plot_dir, "also write the unigram and "
         "bigram counts as CSV files into this folder"},
    };
    const FlagRange ranges[] = {
        {"batch", .lo = 1, .hi = 64}, {"block", .lo = 1, .hi = 4096},
        {"alpha", .lo = 1e-30, .hi = 1e30},
    };
    int n_flags = sizeof flags / sizeof flags[0];
    int n_ranges = sizeof ranges / sizeof ranges[0];
    flags_parse(argc, argv, flags, n_flags, ranges, n_ranges,
                "Chapter 1: reads a text, builds its character vocabulary, "
                "encodes it,\nsplits it 90/10, samples a batch and prints the "
                "losses to beat.");
    flags_check_ranges(flags, n_flags, ranges, n_ranges);
    if (!*data) flags_fail("--data is empty: give a text file");
    // --text's line ends are read as a file's are (utf8.h)
    bool is_default = text == default_text;
    size_t text_bytes;
    char *own_text = text_copy(text, &text_bytes);
    text = own_text;
    Error err;
    // a folder that cannot take the CSV files fails before any work
    if (flags_given(&plot_dir) && plot_dir_check(plot_dir, &err) != 0)
        die("%s", err.msg);

    double t0 = time_now();
    // The memory (mem.h), checked twice: the corpus's before it is read,
    // from the file's size; then, with its vocabulary known, the rest.
    MemPlan plan;
    mem_plan_begin(&plan);
    plan.runtime = 0;   // no matrix products, no threads
    struct stat st;
    if (stat(data, &st) == 0 && S_ISREG(st.st_mode))
        mem_plan_keep(&plan, corpus_floats((size_t)st.st_size));
    if (mem_plan_check(&plan, "give a smaller --data file", &err) != 0)
        error_exit(2, err.msg);
    Corpus c;
    if (corpus_load(&c, data, &err) != 0) die("%s", err.msg);
    if (c.train.n < (size_t)block + 1 || c.val.n < 2)
        flags_fail("%s is too short for --block %d: train %zu tokens, val "
                   "%zu (need %d and 2)", data, block, c.train.n, c.val.n,
                   block + 1);
    // The bigram baseline counts every pair of characters: V x V numbers,
    // which a text of many distinct characters cannot afford. One at a
    // time: the batch, the vocabulary's ids, the text's round trip (its
    // ids, their list, the text again), the counts.
    size_t V = (size_t)c.vocab.size, chars = strlen(text) + 64;
    mem_plan_begin(&plan);
    plan.runtime = 0;
    mem_plan_phase(&plan, mem_floats(2 * (size_t)batch * block * sizeof(int)));
    mem_plan_phase(&plan, mem_floats(V * sizeof(int) + 22 * chars));
    mem_plan_phase(&plan, mem_floats((V + V * V) * sizeof(long)));
    char hint[96];
    snprintf(hint, sizeof hint, "--data has %zu distinct characters", V);
    if (mem_plan_check(&plan, hint, &err) != 0)
        error_exit(2, err.msg);
    if (!is_default) {   // a bad --text fails before any output
        size_t n;
        int *ids = vocab_encode_utf8(&c.vocab, text, strlen(text), &n, &err);
        if (!ids) flags_fail("--text: %s", err.msg);
        free(ids);
    }
    printf("== Chapter 1: data preparation ==\n");
    show_corpus(&c, data);
    show_round_trip(&c, text, is_default);
    printf("split       train %zu tokens (first 90%%), val %zu tokens\n",
           c.train.n, c.val.n);
    show_batch(&c, batch, block, seed);
    show_baselines(&c, alpha);
    if (*plot_dir) write_plot_data(&c, plot_dir);
    printf("time        %.3f s\n", time_now() - t0);
    corpus_free(&c);
    free(own_text);
    return 0;
}
