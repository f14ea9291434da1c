// ch9 - GPT-2 small in the course's own C: OpenAI's weights, GPT-2's
// byte-level tokenizer, generation and fine-tuning.
//
//   make gpt2                        fetch GPT-2 small into data/gpt2/
//   ./ch9 --prompt "Hello"           generate: chapter 5's sampling and
//                                    KV cache, printed as it comes
//   ./ch9 --tokenize "Hello world"   the tokenizer's ids and tokens
//   ./ch9 --decode "15496 995"       the text of ids
//   ./ch9 --finetune [flags]         fine-tune on Tiny Shakespeare with
//                                    chapter 6's trainer (finetune.h)
//   ./ch9 --checkpoint OUT/model.safetensors --prompt "..."
//                                    generate with a fine-tuned model
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "autothreads.h"
#include "checkpoint.h"
#include "error.h"
#include "finetune.h"
#include "flags.h"
#include "generate.h"
#include "gpt2_model.h"
#include "json.h"
#include "mem.h"
#include "report.h"
#include "run.h"
#include "safetensors.h"
#include "threads.h"
#include "timer.h"
#include "token_out.h"
#include "tokenizer.h"
#include "utf8.h"

typedef struct {
    const char *model, *checkpoint, *prompt, *tokenize, *decode, *crop;
    int tokens, top_k, threads;
    float temperature, top_p;
    bool greedy, no_cache, sample_only, finetune;
    uint64_t seed;
} Options;

// ---- flags -----------------------------------------------------------------

static void parse_flags(Options *o, int argc, char **argv) {
    *o = (Options){.model = GPT2_DIR_DEFAULT, .checkpoint = "",
                   .prompt = "", .tokenize = "", .decode = "",
                   .crop = "slide", .tokens = 100, .top_k = 40,
                   .temperature = 1.0f, .top_p = 1.0f, .seed = 1337};
    Flag flags[] = {
        {"model", FLAG_STRING, &o->model, "a GPT-2 in Hugging Face's layout: "
         "a folder of config.json, model.safetensors, vocab.json and "
         "merges.txt"},
        {"checkpoint", FLAG_STRING, &o->checkpoint, "instead, a model that "
         "./ch9 --finetune saved (OUT/model.safetensors; the tokenizer's "
         "files beside it)"},
        {"prompt", FLAG_STRING, &o->prompt, "text to continue (none: start "
         "from <|endoftext|>, which the prompt may also hold)"},
        {"tokens", FLAG_INT, &o->tokens, "tokens to generate"},
        {"temperature", FLAG_FLOAT, &o->temperature,
         "sampling temperature; 0 = greedy"},
        {"top-k", FLAG_INT, &o->top_k, "sample from the k most likely; 0 = "
         "all (OpenAI's samples of GPT-2 took 40)"},
        {"top-p", FLAG_FLOAT, &o->top_p,
         "sample from the smallest set of mass p; 1 = all"},
        {"greedy", FLAG_BOOL, &o->greedy, "always the most likely token "
         "(--temperature 0)"},
        {"seed", FLAG_U64, &o->seed, "seed of the sampling"},
        {"no-cache", FLAG_BOOL, &o->no_cache,
         "generate without the KV cache (nanoGPT's way)"},
        {"crop", FLAG_STRING, &o->crop, "past block_size: slide (halve the "
         "context) or exact (nanoGPT); chapter 5's --window"},
        {"sample-only", FLAG_BOOL, &o->sample_only,
         "print only the prompt and its continuation"},
        {"threads", FLAG_INT, &o->threads,
         "threads for OpenMP and OpenBLAS (0: from 1 to one per core, "
         "the fastest as timed while it generates)"},
        {"tokenize", FLAG_STRING, &o->tokenize, "print this text's tokens "
         "and ids, and stop (needs only vocab.json and merges.txt)"},
        {"decode", FLAG_STRING, &o->decode, "print the text of these ids "
         "(\"15496 995\"), and stop"},
        {"finetune", FLAG_BOOL, &o->finetune, "fine-tune instead, with "
         "chapter 6's trainer and flags: ./ch9 --finetune --help lists "
         "them"},
    };
    const FlagRange ranges[] = {
        {"tokens", .lo = 0, .hi = 100000},
        {"temperature", .lo = 0, .hi = 1e30}, {"top-k", .lo = 0, .hi = 1e9},
        {"top-p", .lo = 1e-30, .hi = 1}, {"threads", .lo = 0, .hi = 1024},
    };
    int n = sizeof flags / sizeof flags[0];
    int nr = sizeof ranges / sizeof ranges[0];
    flags_parse(argc, argv, flags, n, ranges, nr,
                "Chapter 9: GPT-2 small with OpenAI's weights: generation, "
                "GPT-2's\ntokenizer, and fine-tuning (--finetune).");
    flags_check_ranges(flags, n, ranges, nr);
    // a path or text given as '' would otherwise be silently ignored
    const struct { const char *name; const char *const *value; } texts[] = {
        {"model", &o->model}, {"checkpoint", &o->checkpoint},
        {"tokenize", &o->tokenize}, {"decode", &o->decode},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (flags_given(texts[i].value) && !**texts[i].value)
            flags_fail("--%s is empty", texts[i].name);
    if (*o->checkpoint && flags_given(&o->model))
        flags_fail("--model and --checkpoint: give one model");
    if (*o->tokenize && *o->decode)
        flags_fail("--tokenize and --decode: give one");
    if (strcmp(o->crop, "slide") != 0 && strcmp(o->crop, "exact") != 0)
        flags_fail("--crop must be slide or exact, got '%s'", o->crop);
    if (o->greedy) o->temperature = 0;
}

// ---- the model's files -----------------------------------------------------

// The folder of the tokenizer's files, checked with what the model needs
// (weights: its own files too): a missing file is a usage error, and for
// data/gpt2 the message says how to get it.
static void find_files(const Options *o, bool weights, char *tok_dir,
                       size_t size) {
    Error err;
    struct stat st;
    if (*o->checkpoint) {
        if (stat(o->checkpoint, &st) != 0)
            die("cannot open %s: %s (a fine-tuning run saves "
                "OUT/model.safetensors)", o->checkpoint, strerror(errno));
        if (S_ISDIR(st.st_mode))
            flags_fail("--checkpoint takes a file, not a folder: try "
                       "--checkpoint %s/model.safetensors", o->checkpoint);
        gpt2_dir_of(tok_dir, size, o->checkpoint);
    } else {
        snprintf(tok_dir, size, "%s", o->model);
    }
    if (gpt2_files_check(tok_dir, weights && !*o->checkpoint, &err) != 0)
        error_exit(2, err.msg);
}

// The model's config from its files' headers, and in *load the floats'
// worth that loading holds beside the model: for a checkpoint its header
// and a slice of 64 KiB (chapter 5 reads its tensors into place), for
// Hugging Face's files one transposed tensor (gpt2_peek).
static void peek_model(const Options *o, GptConfig *c, size_t *load) {
    Error err;
    if (*o->checkpoint) {
        char name[CHECKPOINT_TOKENIZER_MAX];
        StFile f;
        if (checkpoint_tokenizer(o->checkpoint, name, &err) != 0
            || checkpoint_peek(o->checkpoint, c, NULL, &err) != 0
            || st_load_header(&f, o->checkpoint, &err) != 0)
            die("%s", err.msg);
        size_t header = f.size - f.data_size;
        st_free(&f);
        if (strcmp(name, GPT2_TOKENIZER) != 0)
            die("%s: a model of %s%s, not of GPT-2's tokens", o->checkpoint,
                *name ? name : "characters", *name ? " tokens" : "");
        *load = mem_floats(header + 65536);
        return;
    }
    size_t floats;
    if (gpt2_peek(o->model, c, &floats, &err) != 0) die("%s", err.msg);
    size_t model = gpt_model_floats(c);
    *load = floats > model ? floats - model : 0;
}

static void load_model(const Options *o, Gpt *m) {
    Error err;
    Vocab none;
    char name[CHECKPOINT_TOKENIZER_MAX];
    int rc = *o->checkpoint ? checkpoint_load_any(o->checkpoint, m, &none,
                                                  name, NULL, &err)
                            : gpt2_load(o->model, m, &err);
    if (rc != 0) die("%s", err.msg);
}

// ---- the tokenizer's views -------------------------------------------------

// A token's bytes for the eye, in double quotes: whole UTF-8 characters
// as they are, a control character, '"', '\' or a byte of a character
// cut short as a C escape (\n, \x8a).
static void print_token(FILE *out, const char *s, size_t n) {
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        const unsigned char *u = (const unsigned char *)s + i;
        int len = utf8_char_len(u, n - i);
        if (len > 1) {
            fwrite(u, 1, (size_t)len, out), i += (size_t)len;
            continue;
        }
        unsigned char c = *u;
        if (c == '\n') fputs("\\n", out);
        else if (c == '\t') fputs("\\t", out);
        else if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f) fprintf(out, "\\x%02x", c);
        else fputc(c, out);
        i++;
    }
    fputc('"', out);
}

static void show_tokenizer(const Gpt2Tokenizer *t, const char *dir) {
    char eot[48] = "no <|endoftext|>";
    if (t->eot >= 0) snprintf(eot, sizeof eot, "<|endoftext|> is %d", t->eot);
    report_line("tokenizer", "%s: %d tokens, %d merges, %s", dir,
                t->vocab_size, t->n_merges, eot);
}

// --tokenize: the text's ids, then each token's bytes ("<|endoftext|>"
// in it is that one token).
static int tokenize_main(Gpt2Tokenizer *t, const char *text) {
    size_t bytes;
    char *s = text_copy(text, &bytes);   // line ends as a file's
    int *ids = xmalloc((bytes ? bytes : 1) * sizeof *ids);
    Error err;
    long n = gpt2_tok_encode(t, s, bytes, true, ids, &err);
    if (n < 0) flags_fail("--tokenize: %s", err.msg);
    report_line("text", "%zu bytes, %ld token%s", bytes, n,
                n == 1 ? "" : "s");
    StrBuf line = {0};
    for (long i = 0; i < n; i++) sb_printf(&line, i ? " %d" : "%d", ids[i]);
    report_line("ids", "%s", line.s ? line.s : "");
    for (long i = 0; i < n; i++) {
        size_t len;
        const char *tok = gpt2_tok_token(t, ids[i], &len);
        printf("  %8d  ", ids[i]);
        print_token(stdout, tok, len);
        printf("\n");
    }
    sb_free(&line);
    free(ids);
    free(s);
    return 0;
}

// --decode's ids, separated by spaces or commas, each in [0, V): into a
// new array (*n of them). A bad one is a usage error, before any report.
static int *decode_ids(const Gpt2Tokenizer *t, const char *text, int *n) {
    int *ids = xmalloc((strlen(text) / 2 + 1) * sizeof *ids);
    *n = 0;
    for (const char *p = text; *p;) {
        if (strchr(" ,\t\n", *p)) {
            p++;
            continue;
        }
        char *end;
        long id = strtol(p, &end, 10);
        if (end == p || id < 0 || id >= t->vocab_size)
            flags_fail("--decode: '%.*s' is no token id: the ids are 0 to %d",
                       (int)(end > p ? end - p : 1), p, t->vocab_size - 1);
        ids[(*n)++] = (int)id;
        p = end;
    }
    if (*n == 0) flags_fail("--decode: no id in '%s'", text);
    return ids;
}

// --decode: the text of the ids, whole characters as they complete.
static int decode_main(const Gpt2Tokenizer *t, const int *ids, int n) {
    report_line("ids", "%d id%s", n, n == 1 ? "" : "s");
    printf("----\n");
    TokenOut out;
    token_out_init(&out, t, stdout);
    for (int i = 0; i < n; i++) token_out_id(ids[i], &out);
    token_out_end(&out);
    printf("\n----\n");
    return 0;
}

// ---- generation ------------------------------------------------------------

// The prompt's ids (<|endoftext|> in it is that token); an empty prompt
// is <|endoftext|> alone, GPT-2's start of a document. Room for the
// tokens to come after them.
static int *prompt_ids(Gpt2Tokenizer *t, const Options *o, int *n_prompt) {
    size_t bytes;
    char *s = text_copy(o->prompt, &bytes);
    size_t room = (bytes ? bytes : 1) + (size_t)o->tokens;
    int *ids = xmalloc(room * sizeof *ids);
    Error err;
    long n = gpt2_tok_encode(t, s, bytes, true, ids, &err);
    free(s);
    if (n < 0) flags_fail("--prompt: %s", err.msg);
    if (n == 0) {
        if (t->eot < 0)
            flags_fail("--prompt is empty and the tokenizer has no "
                       "<|endoftext|> to start from: give one");
        ids[n++] = t->eot;
    }
    *n_prompt = (int)n;
    return ids;
}

// Memory, before the model is loaded: the model, kept; then its loading
// (what it holds beside the model), and the generation's KV cache,
// window and ids, one after the other. Refused with one line.
static void check_memory(const GptConfig *c, size_t load, size_t gen,
                         bool print) {
    MemPlan p;
    mem_plan_begin(&p);
    mem_plan_keep(&p, gpt_model_floats(c));
    mem_plan_phase(&p, load);
    mem_plan_phase(&p, gen);
    Error err;
    if (mem_plan_check(&p, "the model is too large here", &err) != 0)
        error_exit(2, err.msg);
    if (!print) return;
    double mib = sizeof(float) / 1048576.0;
    report_line("memory", "estimated %.0f MiB at the peak: this process "
                "%.1f, the model %.1f, loading it %.1f, generation %.1f "
                "(MiB)", mem_plan_mib(&p), p.resident / 1048576.0,
                gpt_model_floats(c) * mib, load * mib, gen * mib);
    fflush(stdout);   // seen before the allocation, even in a log
}

static void show_model(const GptConfig *c, const Options *o) {
    report_line("model", "%s: %d layer%s, %d heads, %d wide, block %d, "
                "%s GELU: %zu parameters", *o->checkpoint ? o->checkpoint
                : o->model, c->n_layer, c->n_layer == 1 ? "" : "s",
                c->n_head, c->n_embd, c->block_size,
                activation_name(c->act), gpt_param_count(c));
}

// Each new token printed as it comes, and timed: with --threads 0,
// chapter 6's AutoThreads moves between 1 thread and one per core to the
// count that writes fastest now (beside a busy program, one thread reads
// the weights faster than two that wait for each other). The gap since
// the last token is one token's time; the first, after the prompt's pass,
// is not timed.
typedef struct {
    TokenOut out;
    AutoThreads threads;
    double last;          // time_now() at the last token; 0: none yet
    int tokens;           // new tokens so far
    char how[96];         // the count's last change, for the report
} Writer;

static void write_token(int id, void *ctx) {
    Writer *w = ctx;
    token_out_id(id, &w->out);
    double now = time_now();
    w->tokens++;
    if (w->last > 0 && autothreads_step(&w->threads, now - w->last, 1.0))
        autothreads_describe(&w->threads, w->tokens, w->how,
                             sizeof w->how);
    w->last = now;
}

static int generate_main(Gpt2Tokenizer *t, const Options *o,
                         const GptConfig *c, size_t load) {
    int n_prompt;
    int *ids = prompt_ids(t, o, &n_prompt);
    GenOptions g = {.max_new_tokens = o->tokens, .seed = o->seed,
                    .use_cache = !o->no_cache,
                    .window = strcmp(o->crop, "exact") == 0
                                  ? WINDOW_EXACT : WINDOW_SLIDE,
                    .sample = {o->temperature, o->top_k, o->top_p}};
    size_t gen = generate_floats_for(c, n_prompt, &g)
                 + mem_floats((size_t)(n_prompt + o->tokens) * sizeof(int));
    bool report = !o->sample_only;
    check_memory(c, load, gen, report);
    if (report) {
        show_model(c, o);
        report_line("sample", "%d tokens after %d of the prompt, %s, seed "
                    "%llu, %s", o->tokens, n_prompt, o->temperature == 0
                    ? "greedy" : "sampled", (unsigned long long)o->seed,
                    o->no_cache ? "no KV cache" : "KV cache");
        if (o->temperature > 0)
            report_line("", "temperature %g, top-k %d, top-p %g",
                        o->temperature, o->top_k, o->top_p);
        printf("----\n");
        fflush(stdout);
    }
    Gpt m;
    load_model(o, &m);
    Writer w = {.last = 0};
    token_out_init(&w.out, t, stdout);
    autothreads_from_flag(&w.threads, o->threads);
    for (int i = 0; i < n_prompt; i++) token_out_id(ids[i], &w.out);
    GenStats st;
    Error err;
    if (generate(&m, ids, n_prompt, ids, &g, write_token, &w, &st,
                 &err) != 0)
        die("%s", err.msg);
    token_out_end(&w.out);
    printf("\n");
    if (report) {
        printf("----\n");
        report_line("speed", "%d tokens in %.3f s: %.1f tokens/s (%d full "
                    "pass%s over the context, %s window)", st.tokens,
                    st.seconds, st.tokens / (st.seconds > 0 ? st.seconds
                                                            : 1e-9),
                    st.prefills, st.prefills == 1 ? "" : "es", o->crop);
        if (*w.how) report_line("threads", "%s", w.how);
    }
    gpt_free(&m);
    free(ids);
    return 0;
}

// ---- main ------------------------------------------------------------------

int main(int argc, char **argv) {
    error_set_progname(argv[0]);
    // ./ch9 --finetune ...: the rest is chapter 6's command line
    if (flags_take(&argc, argv, "finetune")) {
        Gpt2Finetune f;
        gpt2_finetune_init(&f);
        int rc = train_main(argc, argv, &f.be);
        gpt2_finetune_free(&f);
        return rc;
    }
    Options o;
    parse_flags(&o, argc, argv);
    bool tok_only = *o.tokenize || *o.decode;
    char dir[4096];
    find_files(&o, !tok_only, dir, sizeof dir);
    // (generation then adapts the count: write_token)
    threads_set(o.threads > 0 ? threads_cap(o.threads, true)
                              : threads_cores());
    GptConfig c;
    size_t load = 0;
    if (!tok_only) peek_model(&o, &c, &load);
    Gpt2Tokenizer t;
    Error err;
    if (gpt2_tokenizer_for(&t, dir, tok_only ? 0 : c.vocab_size, &err) != 0)
        die("%s", err.msg);
    int n_ids = 0, *ids = *o.decode ? decode_ids(&t, o.decode, &n_ids)
                                    : NULL;
    if (!o.sample_only) {
        printf("== Chapter 9: GPT-2%s ==\n", tok_only ? "'s tokenizer" : "");
        show_tokenizer(&t, dir);
    }
    int rc = *o.tokenize ? tokenize_main(&t, o.tokenize)
             : ids ? decode_main(&t, ids, n_ids)
                   : generate_main(&t, &o, &c, load);
    free(ids);
    gpt2_tok_free(&t);
    return rc;
}
