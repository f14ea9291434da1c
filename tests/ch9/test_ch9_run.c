// Tests of chapter 9's program side: GPT-2 fine-tuned through chapter 6's
// trainer (finetune.h), generation on a GPT-2 with chapter 5's KV cache,
// and text written as tokens come (token_out.h). The model is the tiny
// GPT-2 of tests/reference/ch9_ft/ (gen_ch9_ft.py: transformers' own,
// untrained, with the tokenizer of ch9_tok/), trained on the start of
// Tiny Shakespeare; each run of the program is a child process.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_util.h"
#include "checkpoint.h"
#include "finetune.h"
#include "generate.h"
#include "gpt2_model.h"
#include "mem.h"
#include "run.h"
#include "token_out.h"
#include "utf8.h"

#define FT_MODEL "tests/reference/ch9_ft"

static char dir[64];

// A fresh folder, with data.txt: the first 20,000 bytes of Tiny
// Shakespeare (some 6,000 tokens: a run's 90/10 split has windows
// enough, and its encoding takes a moment).
static void make_dir(void) {
    snprintf(dir, sizeof dir, "/tmp/ch9_run_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    Error err;
    size_t n;
    char *text = read_file(SHAKESPEARE_PATH, &n, &err);
    ck_assert_msg(text != NULL, "%s", err.msg);
    char path[160];
    snprintf(path, sizeof path, "%s/data.txt", dir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(text, 1, 20000, f), 20000);
    fclose(f);
    free(text);
}

// The file dir/name (a path that starts with '/' as it is).
static char *slurp(const char *name, size_t *len) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", name[0] == '/' ? "" : dir, name);
    Error err;
    char *s = read_file(path + (name[0] == '/'), len, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    return s;
}

static bool same_file(const char *a, const char *b) {
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    bool same = na == nb && memcmp(x, y, na) == 0;
    free(x), free(y);
    return same;
}

// ---- the program, in a child -----------------------------------------------

// Raises SIGUSR1 (kill -USR1: chapter 6's stop, as a Ctrl-C) once the
// samples have printed more than stop_after tokens; -1: never.
static int stop_after = -1, printed;
static TokenFn sample_print;

static void print_and_stop(int id, void *ctx) {
    sample_print(id, ctx);
    if (stop_after >= 0 && ++printed > stop_after) {
        stop_after = -1;
        raise(SIGUSR1);
    }
}

// body(line) in a child (run_in_child), with stdout in dir/name.txt and
// stderr in dir/name.err: its exit status.
static int in_child(int (*body)(void *), const char *line,
                    const char *name) {
    char out[200], err[200];
    snprintf(out, sizeof out, "%s/%s.txt", dir, name);
    snprintf(err, sizeof err, "%s/%s.err", dir, name);
    return run_in_child(out, err, body, (void *)line);
}

// train_main on the command line "PROG ARGS" (words between spaces), as
// ./ch9 --finetune when PROG is ch9, as ./ch6 otherwise.
static int train_program(void *line) {
    char words[1024];
    snprintf(words, sizeof words, "%s", (const char *)line);
    char *argv[64];
    int argc = 0;
    for (char *w = strtok(words, " "); w && argc < 63; w = strtok(NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    if (strcmp(argv[0], "ch9") != 0) return train_main(argc, argv, NULL);
    Gpt2Finetune f;
    gpt2_finetune_init(&f);
    sample_print = f.task.print;
    f.task.print = print_and_stop;
    int rc = train_main(argc, argv, &f.be);
    gpt2_finetune_free(&f);
    return rc;
}

// ./ch9 --finetune ARGS in a child (in_child): the data of make_dir, one
// thread, two batches an evaluation, and the model of FT_MODEL unless
// ARGS resume a run. Returns its exit status. (A new run trains at
// FAST's learning rate.)
#define FAST "--lr 1e-2 "
static int finetune(const char *name, const char *args) {
    char line[1024];
    snprintf(line, sizeof line, "ch9 %s --data %s/data.txt --threads 1 "
             "--eval-iters 2 %s", strstr(args, "--resume") ? ""
             : "--model " FT_MODEL, dir, args);
    return in_child(train_program, line, name);
}

// The val loss of the evaluation at step, from dir/name.txt.
static double val_at(const char *name, int step) {
    char file[80], want[48];
    snprintf(file, sizeof file, "%s.txt", name);
    snprintf(want, sizeof want, "eval step %d: train ", step);
    size_t n;
    char *s = slurp(file, &n);
    char *at = strstr(s, want);
    ck_assert_msg(at != NULL, "%s: no '%s'", file, want);
    double train, val;
    ck_assert_int_eq(sscanf(at + strlen(want), "%lf, val %lf", &train, &val),
                     2);
    free(s);
    return val;
}

// Whether dir/name holds text, perhaps folded over lines (report.h):
// every run of white space is taken as one space.
static bool holds(const char *name, const char *text) {
    size_t n;
    char *s = slurp(name, &n), *to = s;
    for (const char *c = s; *c; c++)
        if (!(*c == ' ' || *c == '\n') || to == s || to[-1] != ' ')
            *to++ = *c == '\n' ? ' ' : *c;
    *to = 0;
    bool yes = strstr(s, text) != NULL;
    free(s);
    return yes;
}

// ---- fine-tuning -----------------------------------------------------------

// A run evaluates the model it loaded first, with a sample, and again at
// the end; the loss goes down. Its folder holds a checkpoint naming
// GPT-2's tokenizer, the tokenizer's files and the Hugging Face copy,
// which loads as the same model.
START_TEST(finetune_learns_and_saves) {
    make_dir();
    char args[200];
    snprintf(args, sizeof args, FAST "--steps 20 --eval-every 10 --batch 2 "
             "--window 32 --sample-tokens 12 --out %s/run", dir);
    ck_assert_int_eq(finetune("a", args), 0);
    double v0 = val_at("a", 0), v20 = val_at("a", 20);
    ck_assert_msg(v0 > 7.0 && v20 < v0 - 0.5, "val %g -> %g", v0, v20);
    ck_assert(holds("a.txt", "== Chapter 9: GPT-2, fine-tuned =="));
    ck_assert(holds("a.txt", "batch 2 x 32 = 64 tokens/step"));
    ck_assert(holds("a.txt", "/run/model.safetensors (./ch9 --checkpoint "
                    "loads it)"));
    char want[4096];
    ck_assert_ptr_nonnull(getcwd(want, sizeof want - 64));
    strcat(want, "/" FT_MODEL "/vocab.json");
    ck_assert(same_file("run/vocab.json", want));
    ck_assert(same_file("run/merges.txt", "run/hf/merges.txt"));
    char path[160], name[CHECKPOINT_TOKENIZER_MAX];
    snprintf(path, sizeof path, "%s/run/model.safetensors", dir);
    Error err;
    ck_assert_int_eq(checkpoint_tokenizer(path, name, &err), 0);
    ck_assert_str_eq(name, GPT2_TOKENIZER);
    Gpt a, b;
    Vocab none;
    int step;
    ck_assert_msg(checkpoint_load_any(path, &a, &none, name, &step, &err) == 0,
                  "%s", err.msg);
    ck_assert_int_eq(step, 20);
    ck_assert_int_eq(none.size, 0);
    snprintf(path, sizeof path, "%s/run/hf", dir);
    ck_assert_msg(gpt2_load(path, &b, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(a.num_params, b.num_params);
    ck_assert(memcmp(a.params, b.params, a.num_params * sizeof(float)) == 0);
    ck_assert_int_eq(a.cfg.act, GELU_TANH);
    gpt_free(&a), gpt_free(&b);
    // chapter 5's loader, which reads characters, names the tokenizer
    snprintf(path, sizeof path, "%s/run/model.safetensors", dir);
    ck_assert_int_eq(checkpoint_load(path, &a, &none, &err), -1);
    ck_assert_msg(strstr(err.msg, "gpt2 tokens, not characters"), "%s",
                  err.msg);
    remove_tree(dir);
}
END_TEST

// Ten steps (of 2 windows of 16 tokens), stopped by a signal (chapter
// 6's Ctrl-C) after the evaluation at step 5, saved there and resumed to
// 10: the files of a run that went to 10 straight, bit for bit, dropout
// on.
START_TEST(finetune_resumes_bit_exact) {
    make_dir();
    const char *common = FAST "--steps 10 --eval-every 5 --dropout 0.1 "
                         "--sample-tokens 9 --seed 7 --batch 2 --window 16";
    char args[300];
    snprintf(args, sizeof args, "%s --out %s/a", common, dir);
    ck_assert_int_eq(finetune("a", args), 0);
    // the samples before step 1 (9 tokens) and at step 5 (3): stopped
    // within the second, so at the end of step 5
    stop_after = 10;
    snprintf(args, sizeof args, "%s --out %s/b", common, dir);
    ck_assert_int_eq(finetune("b", args), 130);
    stop_after = -1;
    ck_assert(holds("b.txt", "interrupted at step 5; saved in "));
    ck_assert(holds("b.txt", "./ch9 --finetune --resume "));
    snprintf(args, sizeof args, "--resume %s/b --model " FT_MODEL, dir);
    ck_assert_int_eq(finetune("c", args), 2);   // --model is the run's
    ck_assert(holds("c.err", "--model cannot change on --resume"));
    snprintf(args, sizeof args, "--resume %s/b --window 32", dir);
    ck_assert_int_eq(finetune("c", args), 2);
    ck_assert(holds("c.err", "--window cannot change on --resume"));
    // the run's own folder holds its tokenizer: --model is not needed
    snprintf(args, sizeof args, "--resume %s/b --sample-tokens 9", dir);
    ck_assert_int_eq(finetune("c", args), 0);
    ck_assert(holds("c.txt", "resumed "));
    ck_assert(same_file("a/model.safetensors", "b/model.safetensors"));
    ck_assert(same_file("a/state-10.safetensors", "b/state-10.safetensors"));
    ck_assert(same_file("a/hf/model.safetensors", "b/hf/model.safetensors"));
    ck_assert_double_eq(val_at("a", 10), val_at("c", 10));
    remove_tree(dir);
}
END_TEST

// What a run refuses before it trains: a window past the model's block,
// a folder without a GPT-2, and chapter 6's program on a GPT-2 run (and
// ./ch9 on chapter 6's), each in one line.
START_TEST(finetune_refusals) {
    make_dir();
    ck_assert_int_eq(finetune("a", "--window 129"), 2);
    ck_assert(holds("a.err", "--window 129 is longer than the model's block "
                    "of 128 tokens"));
    ck_assert_int_eq(finetune("a", "--window 0"), 2);
    ck_assert(holds("a.err", "--window must be in [1, 100000], got 0"));
    ck_assert_int_eq(finetune("a", "--model /nonexistent"), 2);
    ck_assert(holds("a.err", "/nonexistent has no config.json"));
    ck_assert_int_eq(finetune("a", "--layers 2"), 2);   // the model's own
    ck_assert(holds("a.err", "unknown flag '--layers'"));
    char args[200];
    snprintf(args, sizeof args, FAST "--steps 1 --out %s/run "
             "--sample-tokens 0", dir);
    ck_assert_int_eq(finetune("a", args), 0);
    // chapter 6's program on that run
    snprintf(args, sizeof args, "ch6 --resume %s/run", dir);
    ck_assert_int_eq(in_child(train_program, args, "b"), 1);
    ck_assert(holds("b.err", "/run holds a run on gpt2 tokens; ./ch6 trains "
                    "on characters"));
    remove_tree(dir);
}
END_TEST

// ---- generation ------------------------------------------------------------

// The fixture's GPT-2 writes the same ids with the KV cache and without
// it, greedy and sampled, over more tokens than its block of 128 (the
// window slides); greedy twice is the same text, and so is a seed.
START_TEST(generation_same_with_and_without_cache) {
    Gpt m;
    Error err;
    ck_assert_msg(gpt2_load(FT_MODEL, &m, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m.cfg.act, GELU_TANH);
    enum { NEW = 140, P = 3 };
    int prompt[P] = {2047, 39, 1832}, out[4][P + NEW];
    for (int greedy = 0; greedy < 2; greedy++) {
        for (int k = 0; k < 4; k++) {
            GenOptions o = {.max_new_tokens = NEW, .seed = 11,
                            .use_cache = k % 2 == 0, .window = WINDOW_SLIDE,
                            .sample = {greedy ? 0.0f : 0.9f, 40, 0.95f}};
            GenStats st;
            ck_assert_msg(generate(&m, prompt, P, out[k], &o, NULL, NULL,
                                   &st, &err) == 0, "%s", err.msg);
            ck_assert_int_eq(st.tokens, NEW);
            if (k % 2 == 0) ck_assert_int_gt(st.prefills, 1);   // slid
        }
        for (int k = 1; k < 4; k++)
            ck_assert_msg(memcmp(out[0], out[k], sizeof out[0]) == 0,
                          "greedy %d: run %d differs", greedy, k);
    }
    gpt_free(&m);
}
END_TEST

// ---- text as the tokens come -----------------------------------------------

// What token_out writes for bytes given in pieces: the text, whole
// characters only, into a string.
static char *written(const char *const *pieces, int n) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    TokenOut o;
    token_out_init(&o, NULL, f);
    for (int i = 0; i < n; i++) {
        token_out_bytes(&o, pieces[i], strlen(pieces[i]));
        fflush(f);
        // a character cut by a piece's end waits for the next piece
        if (i == 0 && n > 1) ck_assert_int_eq(len, strcspn(pieces[0],
                                                           "\xc3\xe2\xf0"));
    }
    token_out_end(&o);
    fclose(f);
    return buf;
}

START_TEST(token_out_writes_whole_characters) {
    struct { const char *pieces[3]; int n; const char *want; } cases[] = {
        {{"caf\xc3", "\xa9!"}, 2, "caf\xc3\xa9!"},               // é
        {{"\xf0\x9f", "\x98", "\x80"}, 3, "\xf0\x9f\x98\x80"},     // emoji
        {{"\xe2\x82", "A"}, 2, "\xef\xbf\xbd" "A"},  // cut off: one U+FFFD
        {{"a\xe2\x82"}, 1, "a\xef\xbf\xbd"},         // the end in a char
        {{"\x80\xc0\xaf"}, 1, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
        {{"\xed\xa0\x80"}, 1, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = written(cases[i].pieces, cases[i].n);
        ck_assert_msg(strcmp(got, cases[i].want) == 0, "case %zu", i);
        free(got);
    }
    const unsigned char ok[] = "\xf4\x8f\xbf\xbf", past[] = "\xf4\x90\x80\x80";
    ck_assert_int_eq(utf8_char_len(ok, 4), 4);
    ck_assert_int_eq(utf8_char_len(past, 4), -1);
    ck_assert_int_eq(utf8_char_len(ok, 2), 0);
    ck_assert_int_eq(utf8_char_len((const unsigned char *)"\xe2\x82(", 3), -2);
}
END_TEST

Suite *ch9_run_suite(void) {
    Suite *s = suite_create("ch9_run");
    TCase *tc = tcase_new("gpt2 run", "ch9");
    tcase_set_timeout(tc, 4 * TEST_TIMEOUT);
    tcase_add_test(tc, finetune_learns_and_saves);
    tcase_add_test(tc, finetune_resumes_bit_exact);
    tcase_add_test(tc, finetune_refusals);
    tcase_add_test(tc, generation_same_with_and_without_cache);
    tcase_add_test(tc, token_out_writes_whole_characters);
    suite_add_tcase(s, tc);
    return s;
}
