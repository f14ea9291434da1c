// ch5 - the whole GPT: its configuration, where its parameters are, what
// an untrained one writes, and how fast it writes with a KV cache.
//
//   ./ch5                                the course notes' model, untrained
//   ./ch5 --checkpoint model.safetensors --prompt "ROMEO:" --tokens 500
//   ./ch5 --checkpoint model.safetensors --score "some text to score"
//   ./ch5 --checkpoint model.safetensors --sample-only --seed 7
//   ./ch5 --save model.safetensors       write the untrained model
//   ./ch5 --plot-data DIR                also the figures' numbers, as CSV
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "dataset.h"
#include "error.h"
#include "flags.h"
#include "generate.h"
#include "gpt.h"
#include "mem.h"
#include "plotdata.h"
#include "positional.h"
#include "report.h"
#include "rng.h"
#include "safetensors.h"
#include "threads.h"
#include "timer.h"
#include "utf8.h"


// ---- what the model is -----------------------------------------------------

static void show_config(const GptConfig *c, const char *source) {
    report_line("model", "%s", source);
    printf("  vocab_size %d, block_size %d, n_layer %d, n_head %d, n_embd "
           "%d\n", c->vocab_size, c->block_size, c->n_layer, c->n_head,
           c->n_embd);
    printf("  head size %d, FFN %d, dropout %g, bias %s, positions %s,\n"
           "  LM head tied to wte\n", c->n_embd / c->n_head, c->n_ffn,
           c->dropout, c->bias ? "true" : "false",
           pos_kind_name(c->positional));
}

// The part of the model a tensor belongs to, for --plot-data's
// params.csv: nanoGPT's names say it (ln_1, ln_2 and ln_f are the norms).
static const char *param_part(const char *name) {
    if (strcmp(name, "lm_head.weight") == 0) return "LM head";
    if (strstr(name, ".wte.")) return "token embedding";
    if (strstr(name, ".wpe.")) return "position embedding";
    if (strstr(name, ".attn.")) return "attention";
    if (strstr(name, ".mlp.")) return "FFN";
    return "LayerNorm";
}

// The parameters by tensor, one block's worth shown (all blocks are
// alike), with each line's share of the total. csv (NULL: none) gets the
// same lines as rows: tensor,part,layers,params,percent, params being
// all the layers' together.
static void show_params(const Gpt *m, FILE *csv) {
    const GptConfig *c = &m->cfg;
    double total = (double)m->num_params;
    printf("parameters  %zu in total (%.2fM)\n", m->num_params, total / 1e6);
    for (int i = 0; i < m->n_tensors; i++) {
        const GptTensor *t = &m->tensors[i];
        const char *name = t->name;
        bool in_block = strncmp(name, "transformer.h.", 14) == 0;
        if (in_block && strncmp(name, "transformer.h.0.", 16) != 0)
            continue;
        size_t n = (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
        char shape[32];
        if (t->ndim == 2) snprintf(shape, sizeof shape, "(%d, %d)",
                                   t->shape[0], t->shape[1]);
        else snprintf(shape, sizeof shape, "(%d,)", t->shape[0]);
        int layers = in_block ? c->n_layer : 1;
        if (in_block)
            printf("  %-34s %-11s %7zu x %d = %8zu  %5.1f%%\n", name, shape,
                   n, c->n_layer, n * c->n_layer,
                   100.0 * n * c->n_layer / total);
        else
            printf("  %-34s %-11s %22zu  %5.1f%%\n", name, shape, n,
                   100.0 * n / total);
        if (csv)
            fprintf(csv, "%s,%s,%d,%zu,%.1f\n", name, param_part(name),
                    layers, n * layers, 100.0 * n * layers / total);
    }
    printf("  %-34s %-11s %22s\n", "lm_head.weight", "= wte", "0 (tied)");
    if (csv)
        fprintf(csv, "lm_head.weight,%s,1,0,0.0\n",
                param_part("lm_head.weight"));
    if (c->n_layer == 4 && c->n_embd == 128 && c->block_size == 128)
        printf("  (the course notes call this model ~1.6M and ~200K parameters; "
               "both are off)\n");
}

// ---- printing generated text -----------------------------------------------

typedef struct {
    const Vocab *vocab;
    bool echo;
} Printer;

static void print_id(int id, void *ctx) {
    const Printer *p = ctx;
    if (!p->echo) return;
    char buf[4];
    int n = utf8_encode(p->vocab->chars[id], buf);
    fwrite(buf, 1, (size_t)n, stdout);
    fflush(stdout);
}

// ---- scoring -----------------------------------------------------------------

// --score's loss: gpt_score's windows of block_size when the text is
// longer than block_size, otherwise one window of all its characters but
// the last (a shorter context). At least 2 characters.
static int score_ids(const Gpt *m, const int *ids, size_t n, double *loss,
                     Error *err) {
    if (n < 2)
        return error_set(err, "the text has %zu character%s; scoring needs "
                         "at least 2", n, n == 1 ? "" : "s");
    if (n > (size_t)m->cfg.block_size) return gpt_score(m, ids, n, loss, err);
    int T = (int)n - 1;
    GptActs a;
    if (gpt_acts_alloc(&a, &m->cfg, 1, T, err) != 0) return -1;
    float l;
    int rc = gpt_forward(m, &a, ids, ids + 1, 1, T, false, NULL, &l, err);
    gpt_acts_free(&a, &m->cfg);
    *loss = l;
    return rc;
}

// The sinusoidal position table of the model's size (block_size
// positions, n_embd channels), for the book's figure: the table a model
// made with --positional sinusoidal adds to its token embeddings.
static void write_plot_data(const GptConfig *c, const char *dir) {
    int T = c->block_size, C = c->n_embd;
    float *pe = alloc_floats((size_t)T * C);
    sinusoidal_table(pe, T, C);
    Error err;
    FILE *f = plot_csv_open(dir, "positional.csv", "position,channel,value",
                            &err);
    if (!f) die("%s", err.msg);
    for (int t = 0; t < T; t++)
        for (int i = 0; i < C; i++)
            fprintf(f, "%d,%d,%.6f\n", t, i, pe[(size_t)t * C + i]);
    if (plot_csv_close(f, dir, "positional.csv", &err) != 0)
        die("%s", err.msg);
    free(pe);
}

// The time of each new token, for --plot-data's generation.csv: from the
// token before, the first token's from the call of generate (so it
// includes the pass over the prompt). Each run keeps the smaller time.
typedef struct {
    double *best_ms;   // one per token, INFINITY before the first run
    int n;
    double last;       // time_now() of the token before
} TokenClock;

static void tick_id(int id, void *ctx) {
    (void)id;
    TokenClock *c = ctx;
    double now = time_now();
    c->best_ms[c->n] = fmin(c->best_ms[c->n], 1e3 * (now - c->last));
    c->n++;
    c->last = now;
}

// The speed comparison's generation again, token by token, into
// dir/generation.csv: the milliseconds of each token with the cache and
// without it, each the fastest of PLOT_RUNS runs, the least disturbed by
// whatever else the machine does. The same generate as the report's.
enum { PLOT_RUNS = 5 };

static void write_generation(const Gpt *m, const int *prompt, int n_prompt,
                             GenOptions opt, const char *dir) {
    int n = opt.max_new_tokens;
    int *out = xmalloc((size_t)(n_prompt + n) * sizeof *out);
    double *best[2];   // with the cache, without it
    for (int k = 0; k < 2; k++) {
        best[k] = xmalloc((size_t)n * sizeof *best[k]);
        for (int i = 0; i < n; i++) best[k][i] = INFINITY;
    }
    Error err;
    for (int run = 0; run < PLOT_RUNS; run++)
        for (int k = 0; k < 2; k++) {
            opt.use_cache = k == 0;
            TokenClock c = {best[k], 0, time_now()};
            if (generate(m, prompt, n_prompt, out, &opt, tick_id, &c, NULL,
                         &err) != 0)
                die("%s", err.msg);
        }
    FILE *f = plot_csv_open(dir, "generation.csv",
                            "token,cached_ms,uncached_ms", &err);
    if (!f) die("%s", err.msg);
    for (int i = 0; i < n; i++)
        fprintf(f, "%d,%.4f,%.4f\n", i + 1, best[0][i], best[1][i]);
    if (plot_csv_close(f, dir, "generation.csv", &err) != 0)
        die("%s", err.msg);
    free(best[0]), free(best[1]);
    free(out);
}

// ---- memory ----------------------------------------------------------------

// A --prompt the vocabulary cannot encode is a usage error, said before
// the report begins (and before the model is made); its line ends are
// read as a file's (utf8.h), as generation will read them.
static void check_prompt(const Vocab *v, const char *prompt, bool given) {
    if (!given) return;
    Error err;
    size_t n, bytes;
    char *text = text_copy(prompt, &bytes);
    int *ids = vocab_encode_utf8(v, text, bytes, &n, &err);
    free(text);
    if (!ids) flags_fail("--prompt: %s", err.msg);
    free(ids);
}

// What the run asks of the model, for its memory plan.
typedef struct {
    size_t loss_chars;    // the untrained model's loss on so many (0: none)
    size_t score_bytes;   // the text to score (0: none)
    size_t room;          // prompt and generated ids (0: no generation)
    int plot_tokens;      // generation.csv's tokens (0: none)
    bool positional_csv;  // positional.csv
} Work;

// The run's memory at its peak (mem.h), checked before the model is made
// (made false) or once it is loaded: the model, kept to the end, then one
// at a time the untrained loss's batch, the scoring, the generation (run
// once, twice or more: one at a time), the position table. Refused with
// one line; print: the report's line on it, after the title.
static void check_memory(const GptConfig *c, bool made, const Work *w,
                         bool print) {
    MemPlan p;
    mem_plan_begin(&p);
    size_t model = gpt_model_floats(c), loss = 0, score = 0, gen = 0;
    if (!made) mem_plan_keep(&p, model);
    if (w->loss_chars) loss = gpt_score_floats(c, w->loss_chars);
    size_t n = w->score_bytes;   // characters: at most its bytes
    if (n > (size_t)c->block_size) score = gpt_score_floats(c, n);
    else if (n >= 2) score = gpt_acts_floats(c, 1, (int)n - 1);
    if (n) score += mem_floats(6 * n);   // the text, as code points, ids
    if (w->room)
        gen = generate_floats(c) + mem_floats(2 * w->room * sizeof(int)
                                              + 2 * sizeof(double)
                                              * w->plot_tokens);
    mem_plan_phase(&p, loss);
    mem_plan_phase(&p, score);
    mem_plan_phase(&p, gen);
    if (w->positional_csv)
        mem_plan_phase(&p, (size_t)c->block_size * c->n_embd);
    Error err;
    if (mem_plan_check(&p, made ? "the checkpoint's model is too large here"
                       : "lower --layers --embd --block", &err) != 0)
        error_exit(2, err.msg);
    if (!print) return;
    printf("== Chapter 5: the whole GPT ==\n");
    const double mib = sizeof(float) / 1048576.0;
    report_line("memory", "estimated %.0f MiB at the peak: this process "
                "%.1f, the model %.1f, then one at a time the loss's batch "
                "%.1f and generation %.1f (MiB)", mem_plan_mib(&p),
                p.resident / 1048576.0, model * mib,
                (loss > score ? loss : score) * mib, gen * mib);
    fflush(stdout);   // seen before the allocation, even in a log
}

// ---- main ------------------------------------------------------------------

int main(int argc, char **argv) {
    const char *data = CORPUS_DEFAULT, *checkpoint = "";
    const char *save = "", *prompt = "\n", *score = "", *window = "slide";
    const char *score_file = "", *positional = "learned", *plot_dir = "";
    int tokens = 200, top_k = 0, layers = 4, heads = 4, embd = 128;
    int block = 128, threads = 1;
    float temperature = 1.0f, top_p = 1.0f, dropout = 0.1f;
    bool no_cache = false, bias = false, sample_only = false;
    uint64_t seed = 1337;
    Flag flags[] = {
        {"checkpoint", FLAG_STRING, &checkpoint,
         "safetensors model to load; none: a new, untrained one"},
        {"data", FLAG_STRING, &data,
         "text whose characters make the untrained model's vocabulary"},
        {"prompt", FLAG_STRING, &prompt, "text to continue"},
        {"tokens", FLAG_INT, &tokens, "characters to generate"},
        {"temperature", FLAG_FLOAT, &temperature,
         "sampling temperature; 0 = greedy"},
        {"top-k", FLAG_INT, &top_k, "sample from the k most likely; 0 = all"},
        {"top-p", FLAG_FLOAT, &top_p,
         "sample from the smallest set of mass p; 1 = all"},
        {"seed", FLAG_U64, &seed, "seed of the initialisation and sampling"},
        {"no-cache", FLAG_BOOL, &no_cache,
         "generate without the KV cache (nanoGPT's way)"},
        {"window", FLAG_STRING, &window,
         "past block_size: slide (halve the context) or exact (nanoGPT)"},
        {"sample-only", FLAG_BOOL, &sample_only,
         "print only the prompt and its continuation (no model report, no "
         "speed comparison)"},
        {"score", FLAG_STRING, &score,
         "print 'loss <value>': mean cross-entropy of this text (at least "
         "2 characters)"},
        {"score-file", FLAG_STRING, &score_file,
         "as --score, for the text of this file"},
        {"save", FLAG_STRING, &save, "write the model to this safetensors file"},
        {"threads", FLAG_INT, &threads,
         "threads for OpenMP and OpenBLAS (at most the machine's cores)"},
        {"layers", FLAG_INT, &layers, "untrained model: n_layer"},
        {"heads", FLAG_INT, &heads, "untrained model: n_head"},
        {"embd", FLAG_INT, &embd, "untrained model: n_embd"},
        {"block", FLAG_INT, &block, "untrained model: block_size"},
        {"dropout", FLAG_FLOAT, &dropout, "untrained model: dropout"},
        {"bias", FLAG_BOOL, &bias, "untrained model: biases (GPT-2)"},
        {"positional", FLAG_STRING, &positional,
         "untrained model: learned or sinusoidal"},
        {"plot-data", FLAG_STRING, &plot_dir, "also write CSV files into "
         "this folder: the sinusoidal position table of the model's size "
         "(block x embd), and with the report the parameters "
         "(params.csv) and each token's time with and without the cache "
         "(generation.csv, when both are measured)"},
    };
    // one rule for every number: its range, said the same way
    const FlagRange ranges[] = {
        {"tokens", .lo = 0, .hi = 100000},
        {"temperature", .lo = 0, .hi = 1e30}, {"top-k", .lo = 0, .hi = 1e9},
        {"top-p", .lo = 1e-30, .hi = 1}, {"threads", .lo = 1, .hi = 1e9},
        {"layers", .lo = 1, .hi = 4096}, {"heads", .lo = 1, .hi = 65536},
        {"embd", .lo = 1, .hi = 65536}, {"block", .lo = 1, .hi = 65536},
        {"dropout", .lo = 0, .hi = 0.99},
    };
    int n_flags = sizeof flags / sizeof flags[0];
    int n_ranges = sizeof ranges / sizeof ranges[0];
    flags_parse(argc, argv, flags, n_flags, ranges, n_ranges,
                "Chapter 5: the whole GPT - parameters, checkpoints, "
                "generation with a KV cache.");
    flags_check_ranges(flags, n_flags, ranges, n_ranges);
    // a path or text flag given as '' would otherwise be silently ignored
    const struct { const char *name; const char *const *value; } texts[] = {
        {"checkpoint", &checkpoint}, {"data", &data}, {"prompt", &prompt},
        {"score", &score}, {"score-file", &score_file}, {"save", &save},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (flags_given(texts[i].value) && !**texts[i].value)
            flags_fail("--%s is empty", texts[i].name);
    bool scoring = *score || *score_file;
    if (*score && *score_file)
        flags_fail("--score and --score-file: give one text to score");
    if (scoring && sample_only)
        flags_fail("--sample-only samples; it does not go with --score");
    WindowPolicy policy = WINDOW_SLIDE;
    if (strcmp(window, "exact") == 0) policy = WINDOW_EXACT;
    else if (strcmp(window, "slide") != 0)
        flags_fail("--window must be slide or exact, got '%s'", window);
    Error err;
    Work work = {.room = scoring ? 0 : strlen(prompt) + (size_t)tokens,
                 .score_bytes = strlen(score),
                 .positional_csv = *plot_dir != 0};
    if (*score_file) {
        struct stat st;
        if (stat(score_file, &st) == 0) work.score_bytes = (size_t)st.st_size;
    }
    bool report = !scoring && !sample_only;
    if (report && *plot_dir && !no_cache && tokens <= 1000)
        work.plot_tokens = tokens;
    // a folder that cannot take the CSV file fails before any work, and
    // so does a --save that cannot be written
    if (flags_given(&plot_dir) && plot_dir_check(plot_dir, &err) != 0)
        die("%s", err.msg);
    if (*save && write_file_check(save, &err) != 0) die("%s", err.msg);
    GenOptions opt = {.max_new_tokens = tokens, .seed = seed,
                      .use_cache = !no_cache, .window = policy,
                      .sample = {temperature, top_k, top_p}};
    if (sample_options_check(&opt.sample, &err) != 0)
        flags_fail("%s", err.msg);
    threads_set(threads_cap(threads, true));   // past the cores: capped

    // the model: loaded, or new with the vocabulary of the data
    Gpt m;
    Vocab vocab;
    const char *source;
    char label[512];
    double untrained_loss = -1;
    if (*checkpoint) {
        if (checkpoint_load(checkpoint, &m, &vocab, &err) != 0)
            die("%s", err.msg);
        check_prompt(&vocab, prompt, flags_given(&prompt) && !scoring);
        check_memory(&m.cfg, true, &work, report);
        snprintf(label, sizeof label, "loaded from %s", checkpoint);
        source = label;
    } else {
        Corpus corpus;
        if (corpus_load(&corpus, data, &err) != 0) die("%s", err.msg);
        vocab.size = corpus.vocab.size;
        vocab.chars = xmalloc((size_t)vocab.size * sizeof *vocab.chars);
        memcpy(vocab.chars, corpus.vocab.chars,
               (size_t)vocab.size * sizeof *vocab.chars);
        GptConfig cfg = {.vocab_size = vocab.size, .block_size = block,
                         .n_layer = layers, .n_head = heads, .n_embd = embd,
                         .n_ffn = gpt_ffn_width(embd), .dropout = dropout,
                         .bias = bias, .positional = POS_LEARNED};
        if (pos_kind_parse(positional, &cfg.positional) != 0)
            flags_fail("--positional must be learned or sinusoidal, got "
                       "'%s'", positional);
        if (gpt_config_check(&cfg, &err) != 0) flags_fail("%s", err.msg);
        // the untrained model's loss on the start of the corpus
        size_t n = 16 * (size_t)block + 1;
        if (report && corpus.n >= n) work.loss_chars = n;
        check_prompt(&vocab, prompt, flags_given(&prompt) && !scoring);
        check_memory(&cfg, false, &work, report);
        if (gpt_create(&m, &cfg, &err) != 0) flags_fail("%s", err.msg);
        Rng rng;
        rng_seed(&rng, seed);
        gpt_init(&m, &rng);
        if (work.loss_chars
            && gpt_score(&m, corpus.ids, n, &untrained_loss, &err) != 0)
            die("%s", err.msg);
        corpus_free(&corpus);
        snprintf(label, sizeof label, "new, GPT-2 initialisation with seed "
                 "%llu, untrained (vocabulary of %s)",
                 (unsigned long long)seed, data);
        source = label;
    }

    if (*plot_dir) write_plot_data(&m.cfg, plot_dir);
    if (scoring) {
        // the text, its line ends read as utf8.h says ("\r\n" as "\n")
        char *text;
        size_t bytes;
        if (*score_file) {
            text = read_text(score_file, &bytes, &err);
            if (!text) die("%s", err.msg);
        } else {
            text = text_copy(score, &bytes);
        }
        size_t n;
        int *ids = vocab_encode_utf8(&vocab, text, bytes, &n, &err);
        double loss = 0;
        if (!ids || score_ids(&m, ids, n, &loss, &err) != 0) {
            // the file's text is data (status 1), --score's a usage error
            if (*score_file) die("%s: %s", score_file, err.msg);
            flags_fail("--score: %s", err.msg);
        }
        printf("loss %.6f\n", loss);
        free(ids);
        free(text);
    } else {
        char first[5];
        if (!flags_given(&prompt) && vocab_id(&vocab, '\n') < 0) {
            // the default "\n" is not in a text without line ends: start
            // from the vocabulary's first character instead
            first[utf8_encode(vocab.chars[0], first)] = 0;
            prompt = first;
        }
        size_t n_prompt, bytes;
        char *text = text_copy(prompt, &bytes);   // line ends as a file's
        int *ids = vocab_encode_utf8(&vocab, text, bytes, &n_prompt, &err);
        if (!ids) flags_fail("--prompt: %s", err.msg);
        if (!sample_only) {
            show_config(&m.cfg, source);
            FILE *csv = NULL;
            if (*plot_dir) {
                csv = plot_csv_open(plot_dir, "params.csv", "tensor,part,"
                                    "layers,params,percent", &err);
                if (!csv) die("%s", err.msg);
            }
            show_params(&m, csv);
            if (*plot_dir) {
                if (plot_csv_close(csv, plot_dir, "params.csv", &err) != 0)
                    die("%s", err.msg);
                printf("plot data   %s/positional.csv\n", plot_dir);
                printf("plot data   %s/params.csv\n", plot_dir);
            }
        }
        if (untrained_loss >= 0)
            report_line("loss", "%.4f on the first %d characters of %s;\na "
                        "uniform guess scores ln %d = %.4f: the small init "
                        "makes every logit near 0", untrained_loss,
                        16 * m.cfg.block_size + 1, data, m.cfg.vocab_size,
                        log((double)m.cfg.vocab_size));
        size_t room = n_prompt + (size_t)tokens;
        ids = xrealloc(ids, room * sizeof *ids);
        if (!sample_only) {
            report_line("sample", "%d characters, temperature %g, top-k %d, "
                        "top-p %g, seed %llu, %s", tokens, temperature,
                        top_k, top_p, (unsigned long long)seed,
                        no_cache ? "no KV cache" : "KV cache");
            printf("----\n");
        }
        printf("%s", text);
        Printer pr = {&vocab, true};
        GenStats st;
        if (generate(&m, ids, (int)n_prompt, ids, &opt, print_id, &pr, &st,
                     &err) != 0)
            die("%s", err.msg);
        printf("\n");
        if (!sample_only) {
            printf("----\n");
            report_line("speed", "%d tokens in %.3f s: %.0f tokens/s (%d full "
                        "pass%s over the context, %s window)", st.tokens,
                        st.seconds,
                        st.tokens / (st.seconds > 0 ? st.seconds : 1e-9),
                        st.prefills, st.prefills == 1 ? "" : "es", window);
        }
        if (!sample_only && !no_cache && tokens > 0 && tokens <= 1000) {
            // the same generation the naive way, for the comparison
            opt.use_cache = false;
            int *again = xmalloc(room * sizeof *again);
            GenStats slow;
            if (generate(&m, ids, (int)n_prompt, again, &opt, NULL, NULL,
                         &slow, &err) != 0)
                die("%s", err.msg);
            bool same = memcmp(ids, again, room * sizeof *ids) == 0;
            report_line("", "without the cache: %.0f tokens/s (%d full "
                        "pass%s), %.1fx slower; same text: %s",
                        slow.tokens / (slow.seconds > 0 ? slow.seconds : 1e-9),
                        slow.prefills, slow.prefills == 1 ? "" : "es",
                        slow.seconds / (st.seconds > 0 ? st.seconds : 1e-9),
                        same ? "yes" : "NO");
            free(again);
            if (*plot_dir) {
                write_generation(&m, ids, (int)n_prompt, opt, plot_dir);
                printf("plot data   %s/generation.csv\n", plot_dir);
            }
        }
        free(ids);
        free(text);
    }
    if (*save) {
        if (checkpoint_save(save, &m, &vocab, &err) != 0) die("%s", err.msg);
        printf("saved       %s\n", save);
    }
    vocab_free(&vocab);
    gpt_free(&m);
    return 0;
}
