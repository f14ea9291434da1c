#include "mt.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bleu.h"
#include "bpe.h"
#include "checkpoint_state.h"
#include "decode.h"
#include "error.h"
#include "flags.h"
#include "json.h"
#include "mem.h"
#include "pairs.h"
#include "plotdata.h"
#include "progress.h"
#include "report.h"
#include "safetensors.h"
#include "seq2seq.h"
#include "seq2seq_checkpoint.h"
#include "seq2seq_train.h"
#include "task.h"
#include "threads.h"
#include "autothreads.h"
#include "timer.h"
#include "train.h"
#include "translate.h"
#include "utf8.h"

// ---- presets ----------------------------------------------------------------

typedef struct {
    const char *name;
    int merges, max_len, embd, layers, heads, ffn, batch_tokens, epochs;
    float dropout, lr;
    int warmup;
    float minutes;        // the time budget (0: none)
} Preset;

//> mt-presets
static const Preset PRESETS[] = {
    {"default", 4000, 100, 128, 3, 4, 512, 4000, 20, 0.1f, 3e-3f, 400, 20},
    {"base", 8000, 75, 512, 6, 8, 2048, 1100, 68, 0.1f, 5e-4f, 4000, 0},
};
//< mt-presets

enum { N_PRESETS = sizeof PRESETS / sizeof PRESETS[0] };

// ---- flags ------------------------------------------------------------------

enum { MAX_LEN_MOST = 1024 };   // the largest --max-len

// The steps whose time gives the speed (and fits the budget), after the
// first, which pays for touching fresh memory. They are in the warmup,
// whose learning rates do not depend on the step count, so a run cut to
// fit is bit for bit the one --steps with the printed count gives. Then
// the budget is timed again every BUDGET_AGAIN steps (budget_again).
enum { SPEED_PROBE = 10, BUDGET_AGAIN = 100 };

typedef struct {
    const char *task, *preset, *data, *src_lang, *tgt_lang, *tokenizer;
    int merges, max_len;
    int embd, layers, heads, ffn;
    float dropout, smoothing;
    int batch_tokens, epochs, eval_every, show, beam, threads, print_every;
    int save_every, stop_at_step;
    float alpha, minutes;
    const char *save, *checkpoint, *translate, *translate_file;
    const char *plot_data;
    const char *out, *resume, *log;
    bool quiet, overwrite;
} Options;

static void parse_flags(int argc, char **argv, Options *o, TrainConfig *t) {
    error_set_progname(argv[0]);
    const char *name = flags_peek(argc, argv, "preset");
    const Preset *p = NULL;
    for (int i = 0; i < N_PRESETS; i++)
        if (strcmp(PRESETS[i].name, name ? name : "default") == 0)
            p = &PRESETS[i];
    if (!p) flags_fail("--preset must be default or base, got '%s'", name);
    o->preset = p->name, o->merges = p->merges, o->max_len = p->max_len;
    o->embd = p->embd, o->layers = p->layers, o->heads = p->heads;
    o->ffn = p->ffn, o->batch_tokens = p->batch_tokens;
    o->epochs = p->epochs, o->dropout = p->dropout;
    t->lr = p->lr, t->warmup = p->warmup, o->minutes = p->minutes;
    Flag flags[] = {
        {"task", FLAG_STRING, &o->task, "translate (copy, reverse and sort "
         "are the synthetic tasks: ./ch7 --help)"},
        {"preset", FLAG_STRING, &o->preset, "the defaults of the flags "
         "below: default (a small model, 20 epochs or as many as fit in "
         "20 minutes) or base (the base model of Attention Is All You "
         "Need, trained as the blog post on German to English does: "
         "d_model 512, FFN 2048, 8 heads, 6 + 6 layers, at most 75 tokens, "
         "about 32 pairs a batch, 68 epochs)"},
        {"data", FLAG_STRING, &o->data, "the folder of the corpus: "
         "train, val and test_2016_flickr, .de and .en"},
        {"src", FLAG_STRING, &o->src_lang, "the source language: the "
         "files' suffix"},
        {"tgt", FLAG_STRING, &o->tgt_lang, "the target language"},
        {"tokenizer", FLAG_STRING, &o->tokenizer, "bpe (subwords learnt on "
         "the training text) or char"},
        {"merges", FLAG_INT, &o->merges, "BPE merges: the vocabulary is the "
         "characters plus this many subwords"},
        {"max-len", FLAG_INT, &o->max_len, "the longest sentence in tokens; "
         "longer training pairs are left out (not given: at least the "
         "longest val or test sentence, which are translated whole)"},
        {"embd", FLAG_INT, &o->embd, "d_model: channels"},
        {"layers", FLAG_INT, &o->layers, "encoder layers, and as many "
         "decoder layers"},
        {"heads", FLAG_INT, &o->heads, "attention heads"},
        {"ffn", FLAG_INT, &o->ffn, "hidden units of each FFN"},
        {"dropout", FLAG_FLOAT, &o->dropout, "dropout in training"},
        {"smoothing", FLAG_FLOAT, &o->smoothing, "label smoothing eps"},
        {"batch-tokens", FLAG_INT, &o->batch_tokens, "source + target "
         "tokens of a batch, padding included"},
        {"epochs", FLAG_INT, &o->epochs, "passes over the training pairs"},
        {"steps", FLAG_INT, &t->steps, "steps of the run (0: --epochs' "
         "worth; with --resume: extends the run)"},
        {"minutes", FLAG_FLOAT, &o->minutes, "fit the training in about "
         "this long: after its first steps, --steps becomes what fits here "
         "(at most --epochs' worth), printed; 0 = off, and off when --steps "
         "is given"},
        {"lr", FLAG_FLOAT, &t->lr, "peak learning rate"},
        {"warmup", FLAG_INT, &t->warmup, "steps of linear warmup"},
        {"eval-every", FLAG_INT, &o->eval_every, "steps between evaluations "
         "(val loss and greedy val BLEU; 0: only at the end)"},
        {"show", FLAG_INT, &o->show, "test sentences printed with their "
         "translations"},
        {"beam", FLAG_INT, &o->beam, "beam width (1: greedy)"},
        {"alpha", FLAG_FLOAT, &o->alpha, "beam search's length "
         "normalisation: score = log P / length^alpha"},
        {"seed", FLAG_U64, &t->seed, "initialisation, batches, dropout"},
        {"threads", FLAG_INT, &o->threads, "threads (0: from 1 to one "
         "per core, the fastest as timed while it runs; more than the "
         "cores: capped)"},
        {"print-every", FLAG_INT, &o->print_every, "steps between progress "
         "lines when the output is not a terminal"},
        {"quiet", FLAG_BOOL, &o->quiet, "no progress lines"},
        {"out", FLAG_STRING, &o->out, "save the run in this folder (its "
         "model.safetensors is a model --checkpoint takes)"},
        {"overwrite", FLAG_BOOL, &o->overwrite, "with --out: replace the run "
         "saved there (without it, a folder that holds a run is "
         "refused)"},
        {"save-every", FLAG_INT, &o->save_every, "steps between checkpoints "
         "in --out (0: only at the end)"},
        {"resume", FLAG_STRING, &o->resume, "continue the run saved in this "
         "folder"},
        {"stop-at-step", FLAG_INT, &o->stop_at_step, "stop after this step "
         "as Ctrl-C would, saving with --out, to --resume later (0: never)"},
        {"log", FLAG_STRING, &o->log, "write a CSV row per step and per "
         "evaluation here"},
        {"save", FLAG_STRING, &o->save, "write the trained model (with its "
         "tokenizer) to this safetensors file"},
        {"checkpoint", FLAG_STRING, &o->checkpoint, "translate with this "
         "saved model instead of training one"},
        {"translate", FLAG_STRING, &o->translate, "a sentence to translate "
         "(with --checkpoint)"},
        {"translate-file", FLAG_STRING, &o->translate_file, "translate every "
         "line of this file to standard output (with --checkpoint)"},
        {"plot-data", FLAG_STRING, &o->plot_data, "with --translate: also "
         "write the cross-attention of its translation (the last decoder "
         "layer, the mean of the heads) into this folder, as "
         "translation_attention.csv (chapter 7's figure)"},
    };
    const FlagRange range[] = {
        {"merges", .lo = 0, .hi = 100000},
        {"max-len", .lo = 2, .hi = MAX_LEN_MOST},
        {"embd", .lo = 1, .hi = 4096}, {"layers", .lo = 1, .hi = 64},
        {"heads", .lo = 1, .hi_flag = "embd"}, {"ffn", .lo = 1, .hi = 65536},
        {"dropout", .lo = 0, .hi = 0.99}, {"smoothing", .lo = 0, .hi = 0.99},
        {"batch-tokens", .lo = 16, .hi = 1e7},
        {"epochs", .lo = 1, .hi = 10000}, {"steps", .lo = 0, .hi = 1e8},
        {"lr", .lo = 1e-30, .hi = 1}, {"warmup", .lo = 0, .hi = 1e7},
        {"eval-every", .lo = 0, .hi = 1e8}, {"show", .lo = 0, .hi = 1000},
        {"beam", .lo = 1, .hi = 64}, {"alpha", .lo = 0, .hi = 2},
        {"threads", .lo = 0, .hi = 1024}, {"print-every", .lo = 1, .hi = 1e7},
        {"save-every", .lo = 0, .hi = 1e8},
        {"stop-at-step", .lo = 0, .hi = 1e8}, {"minutes", .lo = 0, .hi = 1e6},
    };
    int n_flags = sizeof flags / sizeof flags[0];
    int n_ranges = sizeof range / sizeof range[0];
    flags_parse(argc, argv, flags, n_flags, range, n_ranges,
                "Chapter 7, translation: an encoder-decoder Transformer "
                "learns German to\nEnglish on Multi30k, with a BPE "
                "tokenizer, and is measured with BLEU.");
    if (strcmp(o->task, "translate") != 0)
        flags_fail("--task must be translate here, got '%s'", o->task);
    if (strcmp(o->tokenizer, "bpe") != 0 && strcmp(o->tokenizer, "char"))
        flags_fail("--tokenizer must be bpe or char, got '%s'",
                   o->tokenizer);
    flags_check_ranges(flags, n_flags, range, n_ranges);
    const char *texts[][2] = {
        {"data", o->data}, {"src", o->src_lang}, {"tgt", o->tgt_lang},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (*texts[i][1] == 0) flags_fail("--%s is empty", texts[i][0]);
    // flags_given asks about the variable, not its value
    const struct { const char *name; const char *const *value; } maybe[] = {
        {"save", &o->save}, {"checkpoint", &o->checkpoint},
        {"translate", &o->translate}, {"translate-file", &o->translate_file},
        {"plot-data", &o->plot_data}, {"out", &o->out}, {"resume", &o->resume}, {"log", &o->log},
    };
    for (size_t i = 0; i < sizeof maybe / sizeof maybe[0]; i++)
        if (flags_given(maybe[i].value) && **maybe[i].value == 0)
            flags_fail("--%s is empty", maybe[i].name);
    if ((*o->translate || *o->translate_file) && !*o->checkpoint)
        flags_fail("--translate and --translate-file need --checkpoint "
                   "FILE");
    if (*o->translate && *o->translate_file)
        flags_fail("give --translate or --translate-file, not both");
    if (*o->checkpoint && *o->resume)
        flags_fail("--checkpoint translates and --resume trains: give one");
    if (*o->checkpoint && !*o->translate && !*o->translate_file)
        flags_fail("--checkpoint needs --translate or --translate-file");
    if (*o->plot_data && !*o->translate)
        flags_fail("--plot-data needs --checkpoint FILE --translate TEXT");
    if (o->overwrite && !flags_given(&o->out))
        flags_fail("--overwrite replaces the run saved in --out DIR: give "
                   "--out too");
    if (o->embd % o->heads != 0)
        flags_fail("--embd %d does not split into --heads %d", o->embd,
                   o->heads);
    if (strcmp(o->tokenizer, "char") == 0) {
        o->merges = 0;
        // a character a token: Multi30k's longest sentence is 257 bytes
        if (!flags_given(&o->max_len)) o->max_len = 300;
    }
    if (*o->resume) {
        // The saved run fixes the data, the tokenizer, the model, the
        // batches and the schedule; --steps may extend it, and
        // evaluation, saving and output may change freely.
        const FlagFixed fixed[] = {
            {"preset", &o->preset}, {"data", &o->data},
            {"src", &o->src_lang}, {"tgt", &o->tgt_lang},
            {"tokenizer", &o->tokenizer}, {"merges", &o->merges},
            {"max-len", &o->max_len}, {"embd", &o->embd},
            {"layers", &o->layers}, {"heads", &o->heads}, {"ffn", &o->ffn},
            {"dropout", &o->dropout}, {"smoothing", &o->smoothing},
            {"batch-tokens", &o->batch_tokens}, {"epochs", &o->epochs},
            {"lr", &t->lr}, {"warmup", &t->warmup}, {"seed", &t->seed},
            {"minutes", &o->minutes},
        };
        flags_check_fixed(fixed, (int)(sizeof fixed / sizeof fixed[0]),
                          o->resume);
        if (!*o->out) o->out = o->resume;   // keep saving where it lives
        o->minutes = 0;   // the saved run's step count stands
    }
    if (flags_given(&t->steps) && !flags_given(&o->minutes))
        o->minutes = 0;   // a step count asked for is kept
    // (the budget times the first steps, in the warmup: see SPEED_PROBE)
    if (o->minutes > 0 && t->warmup < 1 + SPEED_PROBE)
        flags_fail("--minutes needs --warmup %d or more, or give --steps",
                   1 + SPEED_PROBE);
}

// ---- the tokenizer ----------------------------------------------------------

// pairs.h's EncodeFn for a Bpe: its output needs room for a token a byte.
static int encode_bpe(const void *tok, const char *text, size_t len,
                      int *out, int cap, Error *err) {
    static int *room;
    static size_t room_n;
    if (len + 1 > room_n) {
        room_n = len + 1;
        room = xrealloc(room, room_n * sizeof *room);
    }
    int n = bpe_encode((Bpe *)tok, text, len, room, err);   // its cache
    if (n < 0) return -1;
    if (n > cap) return cap + 1;
    memcpy(out, room, (size_t)n * sizeof *out);
    return n;
}

static void path_of(char *buf, size_t size, const Options *o,
                    const char *split, const char *lang) {
    snprintf(buf, size, "%s/%s.%s", o->data, split, lang);
}

static void learn_tokenizer(Bpe *bpe, const Options *o) {
    char paths[2][4096];
    path_of(paths[0], sizeof paths[0], o, "train", o->src_lang);
    path_of(paths[1], sizeof paths[1], o, "train", o->tgt_lang);
    char *texts[2];
    size_t lens[2];
    Error err;
    for (int k = 0; k < 2; k++) {   // a "\r\n" read as '\n' (utf8.h)
        texts[k] = read_text(paths[k], &lens[k], &err);
        if (!texts[k] && flags_given(&o->data)) die("%s", err.msg);
        if (!texts[k])
            die("%s (the corpus comes with 'make data', run from the "
                "repository root)", err.msg);
    }
    double t0 = time_now();
    if (bpe_learn(bpe, (const char *const *)texts, lens, 2, o->merges,
                  &err) != 0) {
        // "text 2, line 7: ..." names the file
        int k, at = 0;
        if (sscanf(err.msg, "text %d, %n", &k, &at) == 1 && at > 0 && k >= 1
            && k <= 2)
            die("%s, %s", paths[k - 1], err.msg + at);
        die("%s", err.msg);
    }
    report_line("tokenizer", "%s: %d characters + %d merges = %d tokens "
                "(learnt in %.2f s on both languages' training text)",
                o->merges ? "BPE" : "characters", bpe->n_chars,
                bpe->n_merges, bpe->vocab_size, time_now() - t0);
    free(texts[0]);
    free(texts[1]);
}

// One split as ids: a pair with more than cap tokens on a side is left
// out when drop_long (training), an error otherwise. Returns how many
// were left out.
static int load_split(PairCorpus *c, const Options *o, Bpe *bpe,
                      const char *split, int cap, bool drop_long) {
    char s[4096], t[4096];
    path_of(s, sizeof s, o, split, o->src_lang);
    path_of(t, sizeof t, o, split, o->tgt_lang);
    int dropped;
    Error err;
    if (pairs_load(c, s, t, encode_bpe, bpe, cap, drop_long, &dropped,
                   &err) != 0)   // the hint only where it helps
        die("%s%s", err.msg, strstr(err.msg, "max_len cannot hold")
                             ? " (--max-len sets it)" : "");
    if (c->n == 0 && dropped)
        die("%s and %s: every pair is longer than --max-len %d tokens", s, t,
            cap);
    if (c->n == 0)   // nothing to train on, or to measure
        die("%s and %s hold no sentence pair", s, t);
    return dropped;
}

static void show_split(const PairCorpus *c, const char *split) {
    long ns = c->src_off[c->n], nt = c->tgt_off[c->n];
    printf("  %-16s %5d pairs, %6ld + %6ld tokens (%.1f + %.1f a "
           "sentence)\n", split, c->n, ns, nt, (double)ns / c->n,
           (double)nt / c->n);
}

// ---- evaluation -------------------------------------------------------------

// The references of a corpus's target side, as text.
static char **decode_all(const Bpe *bpe, const int *ids, const int *off,
                         int n) {
    char **s = xmalloc((size_t)(n ? n : 1) * sizeof *s);
    Error err;
    for (int i = 0; i < n; i++) {
        s[i] = bpe_decode(bpe, ids + off[i], off[i + 1] - off[i], NULL,
                          &err);
        if (!s[i]) die("%s", err.msg);
    }
    return s;
}

static void free_all(char **s, int n) {
    for (int i = 0; i < n; i++) free(s[i]);
    free(s);
}

// Translates the source side of c (at most n sentences) and scores it
// against the references refs. Returns the hypotheses (to free).
static char **translate_corpus(const Seq2Seq *m, const Bpe *bpe,
                               const PairCorpus *c, const DecodeConfig *dc,
                               BleuResult *bleu, ChrfResult *chrf,
                               char **refs, double *seconds) {
    Error err;
    int *out, *off = xmalloc(((size_t)c->n + 1) * sizeof *off);
    double t0 = time_now();
    if (translate_batch(m, c->src, c->src_off, c->n, dc, 100, &out, off,
                        &err) != 0)
        die("%s", err.msg);
    *seconds = time_now() - t0;
    char **hyps = decode_all(bpe, out, off, c->n);
    free(out);
    free(off);
    if (bleu_corpus(bleu, (const char *const *)hyps,
                    (const char *const *)refs, c->n, false, &err) != 0
        || (chrf && chrf_corpus(chrf, (const char *const *)hyps,
                                (const char *const *)refs, c->n, false,
                                &err) != 0))
        die("%s", err.msg);
    return hyps;
}

// ---- translating with a saved model -----------------------------------------

// A token as a label of the figure's CSV: a piece that starts a word
// without its space, one that goes on with a word after a '-' (unless it
// is punctuation), a special token as bpe_token_text names it. A ',' is
// quoted, so that gnuplot reads it as one field; a '"' is written ''.
static void plot_piece(FILE *f, const Bpe *bpe, int id, bool first) {
    char text[256];
    bpe_token_text(bpe, id, text, sizeof text);
    const char *s = text, *space = "\xe2\x96\x81";   // '▁', a space
    bool starts = strncmp(s, space, 3) == 0;
    if (starts) s += 3;
    bool letter = (unsigned char)*s >= 0x80 || (*s >= '0' && *s <= '9')
                  || ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'z');
    bool comma = strchr(s, ',') != NULL;
    if (comma) fputc('"', f);
    if (!starts && !first && letter && id >= BPE_ALPHA) fputc('-', f);
    for (; *s; s++) {
        if (*s == '"') fputs("''", f);
        else fputc(*s, f);
    }
    if (comma) fputc('"', f);
}

// The cross-attention of the last decoder layer while the model writes
// out[0 .. n) for the source src[0 .. S), the mean of the heads, into
// dir/translation_attention.csv: a row per (output, source) pair. The
// decoder reads <bos> and the translation (teacher forcing on its own
// output), so row t holds the weights with which it predicted out[t]
// (<eos> after the last, unless the translation fills max_len).
static void plot_translation(const Seq2Seq *m, const Bpe *bpe,
                             const int *src, int S, const int *out, int n,
                             const char *dir) {
    Error err;
    int T = n + 1 > m->cfg.max_len ? m->cfg.max_len : n + 1;
    int NH = m->cfg.n_head;
    int *tin = xmalloc((size_t)T * sizeof *tin);
    tin[0] = TOK_BOS;
    memcpy(tin + 1, out, (size_t)(T - 1) * sizeof *tin);
    Seq2SeqActs a;
    if (seq2seq_acts_alloc(&a, &m->cfg, 1, S, T, &err) != 0
        || seq2seq_forward(m, &a, src, tin, NULL, 1, S, T, 0, false, NULL,
                           NULL, &err) != 0)
        die("%s", err.msg);
    const float *att = seq2seq_cross_weights(&a, m->cfg.n_dec - 1);
    const char *name = "translation_attention.csv";
    FILE *f = plot_csv_open(dir, name, "output,source,predicts,"
                            "source_token,weight", &err);
    if (!f) die("%s", err.msg);
    for (int t = 0; t < T; t++)
        for (int s = 0; s < S; s++) {
            double w = 0;
            for (int h = 0; h < NH; h++)
                w += att[((size_t)h * T + t) * S + s];
            fprintf(f, "%d,%d,", t, s);
            plot_piece(f, bpe, t < n ? out[t] : TOK_EOS, t == 0);
            fputc(',', f);
            plot_piece(f, bpe, src[s], s == 0);
            fprintf(f, ",%.6f\n", w / NH);
        }
    if (plot_csv_close(f, dir, name, &err) != 0) die("%s", err.msg);
    seq2seq_acts_free(&a, &m->cfg);
    free(tin);
}

static int translate_saved(const Options *o) {
    Error err;
    // a folder that cannot take the figure's data fails before the work
    if (*o->plot_data && plot_dir_check(o->plot_data, &err) != 0)
        die("%s", err.msg);
    Seq2Seq m;
    char *vocab = NULL;
    if (seq2seq_load(o->checkpoint, &m, NULL, &vocab, &err) != 0)
        die("%s", err.msg);
    Bpe bpe;
    if (!vocab || bpe_from_string(&bpe, vocab, &err) != 0)
        die("%s: not a translation model (%s)", o->checkpoint,
            vocab ? "no BPE tokenizer in it" : "no tokenizer in it");
    free(vocab);
    // the sentences: one, or every line of a file, cut at the line ends
    // of utf8.h ("\r\n" as "\n")
    char *text;
    size_t bytes;
    if (*o->translate) {
        text = text_copy(o->translate, &bytes);
    } else if (!(text = read_text(o->translate_file, &bytes, &err))) {
        die("%s", err.msg);
    }
    const char *from = *o->translate ? "--translate" : o->translate_file;
    if (bytes == 0) die("%s is empty: no sentence to translate", from);
    int n = 0;
    for (size_t i = 0; i < bytes; i++) n += text[i] == '\n';
    if (bytes > 0 && text[bytes - 1] != '\n') n++;
    int *off = xmalloc(((size_t)n + 1) * sizeof *off);
    int *ids = xmalloc((bytes + 1) * sizeof *ids);
    off[0] = 0;
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        size_t end = at;
        while (end < bytes && text[end] != '\n') end++;
        int len = bpe_encode(&bpe, text + at, end - at, ids + off[k], &err);
        if (len < 0) die("%s, line %d: %s", from, k + 1, err.msg);
        if (len > m.cfg.max_len)
            die("%s, line %d: %d tokens, more than the model's %d", from,
                k + 1, len, m.cfg.max_len);
        off[k + 1] = off[k] + len;
        at = end + 1;
    }
    DecodeConfig dc = decode_config_default();
    dc.beam = o->beam, dc.alpha = o->alpha;
    int *out, *out_off = xmalloc(((size_t)n + 1) * sizeof *out_off);
    // 64 sentences a batch greedy, 32 (128 rows) with a beam: the fastest
    // here (a 2-core Xeon); larger batches ran slower, not faster
    int batch = dc.beam > 1 ? 32 : 64, S = 1;
    for (int k = 0; k < n; k++)
        if (off[k + 1] - off[k] > S) S = off[k + 1] - off[k];
    MemPlan p;   // the model is loaded: the translation's memory
    mem_plan_begin(&p);
    mem_plan_phase(&p, translate_batch_floats(&m.cfg, n, S, dc.beam, batch));
    if (*o->plot_data)   // after it: one sentence's forward pass
        mem_plan_phase(&p, seq2seq_acts_floats(&m.cfg, 1, S,
                                               m.cfg.max_len));
    if (mem_plan_check(&p, "lower --beam, or fewer lines at once",
                       &err) != 0)
        error_exit(2, err.msg);
    if (translate_batch(&m, ids, off, n, &dc, batch, &out, out_off, &err)
        != 0)
        die("%s", err.msg);
    for (int k = 0; k < n; k++) {
        char *s = bpe_decode(&bpe, out + out_off[k],
                             out_off[k + 1] - out_off[k], NULL, &err);
        if (!s) die("%s", err.msg);
        printf("%s\n", s);
        free(s);
    }
    if (*o->plot_data)
        plot_translation(&m, &bpe, ids, off[1], out, out_off[1],
                         o->plot_data);
    free(out);
    free(out_off);
    free(ids);
    free(off);
    free(text);
    bpe_free(&bpe);
    seq2seq_free(&m);
    return 0;
}

// ---- a run on disk ----------------------------------------------------------
//
// --out DIR holds chapter 6's pair of files (checkpoint_state.h): the
// model with its tokenizer, and the optimiser's state. DIR/translate.json
// holds what else fixes the run: the corpus and how it is cut into
// batches, which --resume reads back.

static void run_file_path(char *buf, size_t size, const char *dir) {
    snprintf(buf, size, "%s/translate.json", dir);
}

static void run_file_write(const Options *o, const char *dir) {
    StrBuf b = {0};
    const char *texts[][2] = {{"data", o->data}, {"src", o->src_lang},
                              {"tgt", o->tgt_lang},
                              {"tokenizer", o->tokenizer}};
    sb_append(&b, "{", 1);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        sb_printf(&b, "\"%s\": ", texts[i][0]);
        sb_json_string(&b, texts[i][1], strlen(texts[i][1]));
        sb_append(&b, ", ", 2);
    }
    sb_printf(&b, "\"batch_tokens\": %d, \"smoothing\": %.9g, "
              "\"epochs\": %d}\n", o->batch_tokens, o->smoothing, o->epochs);
    char path[4096];
    run_file_path(path, sizeof path, dir);
    // whole or not at all, as the checkpoints beside it
    const void *parts[1] = {b.s};
    Error err;
    if (write_file_atomically(path, parts, &b.len, 1, &err) != 0)
        die("%s", err.msg);
    sb_free(&b);
}

// Reads DIR/translate.json into o; o's strings then point into the
// returned tree (free it at the end).
static Json *run_file_read(Options *o, const char *dir) {
    char path[4096];
    run_file_path(path, sizeof path, dir);
    Error err;
    size_t len;
    char *text = read_file(path, &len, &err);
    if (!text)
        die("%s (--resume takes a translation run's --out DIR)", err.msg);
    Json *j = json_parse(text, len, &err);
    free(text);
    if (!j) die("%s: %s", path, err.msg);
    const char *keys[] = {"data", "src", "tgt", "tokenizer"};
    const char **dst[] = {&o->data, &o->src_lang, &o->tgt_lang,
                          &o->tokenizer};
    for (int i = 0; i < 4; i++) {
        const Json *v = json_get(j, keys[i]);
        if (!v || v->type != JSON_STRING)
            die("%s: no string \"%s\"", path, keys[i]);
        *dst[i] = v->str;
    }
    const Json *bt = json_get(j, "batch_tokens"),
               *sm = json_get(j, "smoothing"), *ep = json_get(j, "epochs");
    int64_t tokens, epochs;
    if (!bt || json_int64(bt, &tokens) != 0 || tokens < 16 || tokens > 1e7
        || !ep || json_int64(ep, &epochs) != 0 || epochs < 1
        || epochs > 10000 || !sm || sm->type != JSON_NUMBER
        || !(sm->num >= 0 && sm->num <= 0.99))
        die("%s: batch_tokens, smoothing or epochs missing or out of range",
            path);
    o->batch_tokens = (int)tokens, o->epochs = (int)epochs;
    o->smoothing = (float)sm->num;
    return j;
}

// ---- building the run -------------------------------------------------------

typedef struct {
    Bpe bpe;
    char *vocab;              // the tokenizer as text, for checkpoints
    PairCorpus train, val, test;
    PairBatcher tb, vb;       // training and validation batches
    Seq2SeqTrain g;           // the model, its activations and batch
    Trainer tr;               // the optimiser's state, the generators
    Json *saved;              // --resume: the run's translate.json
    double mem_mib;           // the memory estimate (check_memory)
    AutoThreads threads;      // --threads: fixed, or timed as it runs
} Run;

static int longest(const PairCorpus *c) {
    return c->max_src > c->max_tgt ? c->max_src : c->max_tgt;
}

//> mt-max-len
// The three splits as ids, and their batches for seed's shuffles. The
// val and test sets are translated whole, every sentence counted in
// their BLEU as in any published score, so the model's max_len must hold
// their longest sentence. With fit (--max-len not given) it grows to
// that, and says so: few merges make long sentences (characters alone,
// --merges 0, about 200 tokens). Training pairs longer than max_len are
// left out, as the blog post does.
static void load_data(Run *r, Options *o, uint64_t seed, bool fit) {
    int cap = fit ? MAX_LEN_MOST : o->max_len, was = o->max_len;
    load_split(&r->val, o, &r->bpe, "val", cap, false);
    load_split(&r->test, o, &r->bpe, "test_2016_flickr", cap, false);
    int need = longest(&r->val) > longest(&r->test) ? longest(&r->val)
                                                    : longest(&r->test);
    if (need > o->max_len) o->max_len = need;
    int dropped = load_split(&r->train, o, &r->bpe, "train", o->max_len,
                             true);
    show_split(&r->train, "train");
    if (dropped)
        printf("  (%d training pair%s longer than %d tokens left out)\n",
               dropped, dropped == 1 ? "" : "s", o->max_len);
    show_split(&r->val, "val");
    show_split(&r->test, "test_2016_flickr");
    if (o->max_len > was)
        report_line("max-len", "%d tokens, not %d: the longest sentence of "
                    "the val and test sets, which are translated whole",
                    o->max_len, was);
    Error err;
    if (batcher_init(&r->tb, &r->train, o->batch_tokens, seed, &err) != 0
        || batcher_init(&r->vb, &r->val, o->batch_tokens, seed, &err) != 0)
        die("%s", err.msg);
    report_line("batches", "%d of at most %d tokens an epoch, %.1f%% of them "
                "padding", r->tb.n_batches, o->batch_tokens,
                100 * batcher_padding(&r->tb));
}
//< mt-max-len

// The activations' capacity: B rows of S and T tokens that hold the
// largest batch of either corpus.
static void capacity(const Run *r, int *B, int *S, int *T) {
    *S = r->tb.max_S > r->vb.max_S ? r->tb.max_S : r->vb.max_S;
    *T = r->tb.max_T > r->vb.max_T ? r->tb.max_T : r->vb.max_T;
    *B = 1;
    const PairBatcher *both[2] = {&r->tb, &r->vb};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < both[k]->n_batches; i++) {
            const PairBatch *pb = &both[k]->b[i];
            int need = (int)(((long)pb->rows * pb->S + *S - 1) / *S);
            int need_t = (int)(((long)pb->rows * pb->T + *T - 1) / *T);
            if (need < need_t) need = need_t;
            if (need > *B) *B = need;
        }
}

// What translating corpus c's sources (100 a batch, as translate_corpus
// does) allocates with beam width beam.
static size_t translate_floats(const Seq2SeqConfig *cfg, const PairCorpus *c,
                               int beam) {
    return translate_batch_floats(cfg, c->n, c->max_src, beam, 100);
}

// The run's memory at its peak (mem.h), refused (exit 2) when it does not
// fit, before anything that size is allocated: training cfg's model on
// r's batches (the model unless made, which is held already), kept to the
// end, then one at a time the greedy translation of the val set and the
// test set's with the beam. (The texts of the references and
// translations, tens of KiB, are left out.) Sets r->mem_mib the first
// time.
static void check_memory(Run *r, const Seq2SeqConfig *cfg, int beam,
                         bool made) {
    int B, S, T;
    capacity(r, &B, &S, &T);
    MemPlan p;
    mem_plan_begin(&p);
    mem_plan_keep(&p, seq2seq_train_floats(cfg, B, S, T)
                      - (made ? seq2seq_model_floats(cfg) : 0));
    mem_plan_phase(&p, translate_floats(cfg, &r->val, 1));
    mem_plan_phase(&p, translate_floats(cfg, &r->test, 1));
    mem_plan_phase(&p, translate_floats(cfg, &r->test, beam));
    Error err;
    if (mem_plan_check(&p, "lower --batch-tokens --embd --layers",
                       &err) != 0)
        error_exit(2, err.msg);
    if (r->mem_mib == 0) r->mem_mib = mem_plan_mib(&p);
    fflush(stdout);   // what was said so far, before the allocation
}

// The model m (new or loaded) goes into r->g with activations for the
// largest batch; checks the memory first.
static void build_model(Run *r, Seq2Seq *m, const Options *o) {
    int B, S, T;
    capacity(r, &B, &S, &T);
    Error err;
    check_memory(r, &m->cfg, o->beam, true);
    if (seq2seq_train_init(&r->g, m, B, S, T, o->smoothing, &err) != 0)
        die("%s", err.msg);
    r->g.vocab = r->vocab;
    const Seq2SeqConfig *c = &r->g.model.cfg;
    report_line("model", "d_model %d, %d + %d layers, %d heads, FFN %d, "
                "tied embeddings: %zu parameters; memory estimated %.0f MiB "
                "at the peak", c->n_embd, c->n_enc, c->n_dec, c->n_head,
                c->n_ffn, r->g.model.num_params, r->mem_mib);
}

static const char BANNER[] = "== Chapter 7: German to English ==\n\n";

static void start_run(Run *r, Options *o, TrainConfig *tc) {
    printf("%s", BANNER);
    learn_tokenizer(&r->bpe, o);
    r->vocab = bpe_to_string(&r->bpe, NULL);
    load_data(r, o, tc->seed, !flags_given(&o->max_len));
    if (tc->steps == 0) tc->steps = o->epochs * r->tb.n_batches;
    tc->decay_steps = tc->steps;
    tc->min_lr = tc->lr / 10;
    Seq2SeqConfig cfg = seq2seq_config_default(r->bpe.vocab_size,
                                               o->max_len + 1);
    cfg.n_embd = o->embd, cfg.n_enc = cfg.n_dec = o->layers;
    cfg.n_head = o->heads, cfg.n_ffn = o->ffn, cfg.dropout = o->dropout;
    Error err;
    if (seq2seq_config_check(&cfg, &err) != 0) flags_fail("%s", err.msg);
    check_memory(r, &cfg, o->beam, false);
    Seq2Seq m;
    if (seq2seq_create(&m, &cfg, &err) != 0) die("%s", err.msg);
    Rng rng;
    rng_seed(&rng, tc->seed);
    seq2seq_init(&m, &rng);
    build_model(r, &m, o);
    TrainModel tm = seq2seq_train_model(&r->g);
    if (trainer_init(&r->tr, &tm, tc, &err) != 0) die("%s", err.msg);
}

// --resume DIR: the tokenizer and model from DIR/model.safetensors, the
// optimiser and generators from its state file, the batches from
// translate.json; the run then goes on bit for bit as if never stopped.
static void resume_run(Run *r, Options *o, const TrainConfig *tc) {
    const char *dir = o->resume;
    r->saved = run_file_read(o, dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    Error err;
    Seq2Seq m;
    int step;
    if (seq2seq_load(path, &m, &step, &r->vocab, &err) != 0)
        die("%s", err.msg);
    if (!r->vocab || bpe_from_string(&r->bpe, r->vocab, &err) != 0)
        die("%s: not a translation model (%s)", path,
            r->vocab ? "no BPE tokenizer in it" : "no tokenizer in it");
    if (flags_given(&tc->steps) && tc->steps < step)   // may extend it
        flags_fail("--steps %d: the run in %s is already at step %d",
                   tc->steps, dir, step);
    o->max_len = m.cfg.max_len - 1;
    printf("%s", BANNER);
    report_line("tokenizer", "%s: %d characters + %d merges = %d tokens "
                "(from %s)", r->bpe.n_merges ? "BPE" : "characters",
                r->bpe.n_chars, r->bpe.n_merges, r->bpe.vocab_size, path);
    TrainState st;
    if (train_state_load(&st, dir, step, &err) != 0) die("%s", err.msg);
    load_data(r, o, st.cfg.seed, false);   // the saved model's max_len
    if (flags_given(&tc->steps)) st.cfg.steps = tc->steps;
    build_model(r, &m, o);
    TrainModel tm = seq2seq_train_model(&r->g);
    if (trainer_init(&r->tr, &tm, &st.cfg, &err) != 0
        || trainer_restore(&r->tr, &st, &err) != 0)
        die("%s", err.msg);
    train_state_free(&st);
    r->tb.drawn = r->tr.step;   // the batches go on where they stopped
    report_line("resumed", "%s at step %d of %d", dir, r->tr.step,
                r->tr.cfg.steps);
}

static void run_free(Run *r) {
    trainer_free(&r->tr);
    seq2seq_train_free(&r->g);
    batcher_free(&r->tb);
    batcher_free(&r->vb);
    pairs_free(&r->train);
    pairs_free(&r->val);
    pairs_free(&r->test);
    bpe_free(&r->bpe);
    free(r->vocab);
    json_free(r->saved);
}

// ---- training ---------------------------------------------------------------

typedef struct {
    char **val_refs;
    DecodeConfig greedy;
    double t0;
} Eval;

// Val nll and greedy val BLEU, printed and logged.
static void evaluate_now(Run *r, const Eval *e, FILE *log) {
    Error err;
    double vl;
    if (batcher_nll(&r->vb, &r->g, &vl, &err) != 0) die("%s", err.msg);
    BleuResult bl;
    double secs;
    char **hyps = translate_corpus(&r->g.model, &r->bpe, &r->val,
                                   &e->greedy, &bl, NULL, e->val_refs, &secs);
    free_all(hyps, r->val.n);
    printf("eval step %d (epoch %.2f): val nll %.4f, val BLEU %.2f "
           "(greedy)  [%.0f s]\n", r->tr.step,
           (double)r->tr.step / r->tb.n_batches, vl, bl.score,
           time_now() - e->t0);
    fflush(stdout);
    if (log) fprintf(log, "%d,,,,,,%.6f,%.4f\n", r->tr.step, vl, bl.score);
}

// How a run's loop ended.
enum { RUN_DONE = 0, RUN_FAILED = 1, RUN_STOPPED = 2, RUN_INTERRUPTED = 130 };

// Returns RUN_DONE, RUN_FAILED (a loss that was not finite),
// RUN_STOPPED (at --stop-at-step) or RUN_INTERRUPTED (Ctrl-C).
static int train(Run *r, const Options *o, FILE *log, double *train_time,
                 long *tokens_done, long *targets_done) {
    Trainer *tr = &r->tr;
    Seq2SeqTrain *g = &r->g;
    Eval e = {.val_refs = decode_all(&r->bpe, r->val.tgt, r->val.tgt_off,
                                     r->val.n),
              .greedy = decode_config_default(), .t0 = time_now()};
    e.greedy.beam = 1;
    PairSource source = batcher_source(&r->tb);
    Progress p;
    progress_start(&p, stdout, tr->cfg.steps, o->print_every);
    int first = tr->step, rc = RUN_DONE;
    double probe_time = 0, recent_time = 0;
    long probe_tokens = 0;
    int recent_steps = 0;
    catch_sigint();
    // halt: the signal flag as read once after a step, which decides both
    // that step's save and the end of the loop (a signal that lands after
    // the read is seen after the next step, never between the two)
    bool stop = false, halt = false;
    while (tr->step < tr->cfg.steps && !halt && !stop) {
        StepResult res;
        Error err;
        double ts = time_now();
        if (train_step(tr, &source, &res, &err) != 0) {
            progress_end(&p);
            fprintf(stderr, "%s: error: %s\n", error_progname(), err.msg);
            if (*o->out)
                fprintf(stderr, "%s: the last good checkpoint in %s is "
                        "left as it was\n", error_progname(), o->out);
            rc = RUN_FAILED;
            break;
        }
        double dt = time_now() - ts;
        *train_time += dt;
        long tokens = g->last.n_valid;
        for (int i = 0; i < g->acts.cur_B; i++)
            for (int j = 0; j < g->acts.cur_S; j++)
                tokens += g->src[(size_t)i * g->acts.cur_S + j] != TOK_PAD;
        *tokens_done += tokens;
        *targets_done += g->last.n_valid;
        if (log)
            fprintf(log, "%d,%.6f,%.6f,%.6g,%.6f,%.0f,,\n", tr->step,
                    res.loss, g->last.nll, res.lr, res.grad_norm,
                    tokens / dt);
        if (!o->quiet) {
            char extra[80];
            snprintf(extra, sizeof extra, "loss %.4f  nll %.4f  lr %.1e",
                     res.loss, g->last.nll, res.lr);
            progress_update(&p, tr->step, (double)tokens, dt, extra);
        }
        if (autothreads_step(&r->threads, dt, (double)tokens) && !o->quiet) {
            char how[96];
            autothreads_describe(&r->threads, tr->step, how, sizeof how);
            progress_end(&p);
            report_line("threads", "%s", how);
        }
        if (tr->step > first + 1) probe_time += dt, probe_tokens += tokens;
        if (tr->step == first + 1 + SPEED_PROBE
            && tr->step < tr->cfg.steps) {
            // what an epoch and the whole run cost on this machine
            progress_end(&p);
            double per_step = probe_time / SPEED_PROBE;
            if (o->minutes > 0) {
                int was = tr->cfg.steps;
                tr->cfg.steps = budget_steps(tr->step, was, per_step,
                                             o->minutes * 60 - *train_time);
                tr->cfg.decay_steps = tr->cfg.steps;
                p.total_steps = tr->cfg.steps;
                if (tr->cfg.steps == was)
                    report_line("budget", "all %d steps fit in %g minutes",
                                was, o->minutes);
                else
                    report_line("budget", "%d of %d steps (%.1f epochs) fit "
                                "in %g minutes\n(--steps %d repeats this "
                                "run)", tr->cfg.steps, was,
                                (double)tr->cfg.steps / r->tb.n_batches,
                                o->minutes, tr->cfg.steps);
            }
            char epoch[32], run[32];
            format_duration(per_step * r->tb.n_batches, epoch, sizeof epoch);
            format_duration(per_step * (tr->cfg.steps - first), run,
                            sizeof run);
            report_line("speed", "%.0f tokens/s here: an epoch takes about "
                        "%s, this run about %s", probe_tokens / probe_time,
                        epoch, run);
            fflush(stdout);
        }
        // the budget timed again every BUDGET_AGAIN steps, as chapter 6's
        // is at its evaluations: a machine that got busy shortens the run
        if (tr->step > first + 1 + SPEED_PROBE) {
            recent_time += dt;
            if (++recent_steps == BUDGET_AGAIN) {
                int was = tr->cfg.steps;
                if (o->minutes > 0)
                    tr->cfg.steps = budget_again(tr->step, was, recent_time
                                                 / recent_steps, o->minutes
                                                 * 60 - *train_time);
                if (tr->cfg.steps != was) {
                    tr->cfg.decay_steps = tr->cfg.steps;
                    p.total_steps = tr->cfg.steps;
                    progress_end(&p);
                    report_line("budget", "steps got slower, %.3f s each "
                                "now: %d of %d steps fit in %g minutes",
                                recent_time / recent_steps, tr->cfg.steps,
                                was, o->minutes);
                }
                recent_time = 0, recent_steps = 0;
            }
        }
        bool last = tr->step == tr->cfg.steps;
        if ((o->eval_every > 0 && tr->step % o->eval_every == 0) || last) {
            progress_end(&p);
            evaluate_now(r, &e, log);
        }
        stop = tr->step == o->stop_at_step && !last;
        halt = interrupted;
        bool save = last || halt || stop
                    || (o->save_every > 0 && tr->step % o->save_every == 0);
        if (*o->out && save && trainer_save(tr, o->out, &err) != 0)
            die("%s", err.msg);
    }
    progress_end(&p);
    release_sigint();
    free_all(e.val_refs, r->val.n);
    if (halt || stop) {
        rc = halt ? RUN_INTERRUPTED : RUN_STOPPED;
        const char *how = halt ? "interrupted" : "stopped as asked";
        if (*o->out)
            printf("%s at step %d; saved in %s: ./ch7 --resume %s goes on "
                   "from here\n", how, tr->step, o->out, o->out);
        else
            printf("%s at step %d; nothing saved (--out DIR keeps "
                   "checkpoints)\n", how, tr->step);
    }
    return rc;
}

// ---- the report -------------------------------------------------------------

// Test BLEU and chrF, greedy and with beam search, and a few sentences.
static void report_test(const Run *r, const Options *o) {
    const PairCorpus *test = &r->test;
    char **refs = decode_all(&r->bpe, test->tgt, test->tgt_off, test->n);
    printf("\ntest set (%d sentences):\n", test->n);
    DecodeConfig greedy = decode_config_default(), beam = greedy;
    greedy.beam = 1;
    beam.beam = o->beam, beam.alpha = o->alpha;
    char **shown = NULL;
    for (int k = 0; k < 2; k++) {
        const DecodeConfig *dc = k ? &beam : &greedy;
        if (k && o->beam == 1) break;
        BleuResult bl;
        ChrfResult cf;
        double secs;
        char **hyps = translate_corpus(&r->g.model, &r->bpe, test, dc, &bl,
                                       &cf, refs, &secs);
        char line[256];
        bleu_format(line, sizeof line, &bl, true);
        printf("  %-8s %s\n", k ? "beam" : "greedy", line);
        chrf_format(line, sizeof line, &cf, true);
        printf("  %-8s %s\n", "", line);
        printf("  %-8s %.1f sentences/s\n", "", test->n / secs);
        if (!shown) shown = hyps;
        else free_all(hyps, test->n);
    }
    char **srcs = decode_all(&r->bpe, test->src, test->src_off, test->n);
    for (int i = 0; i < o->show && i < test->n; i++)
        printf("\n  source     %s\n  reference  %s\n  greedy     %s\n",
               srcs[i], refs[i], shown[i]);
    free_all(srcs, test->n);
    free_all(shown, test->n);
    free_all(refs, test->n);
}

// The CSV's rows are buffered: a write that failed (a full disk) shows
// at the latest when the file is closed, and fails the run there.
static void log_close(FILE *log, const char *path) {
    bool failed = ferror(log) != 0;
    int saved = errno;
    if (fclose(log) != 0) failed = true, saved = errno;
    if (failed) die("--log %s: cannot write it: %s", path, strerror(saved));
}

int mt_main(int argc, char **argv) {
    Options o = {.task = "translate", .data = "data/multi30k",
                 .src_lang = "de", .tgt_lang = "en", .tokenizer = "bpe",
                 .smoothing = 0.1f, .eval_every = 0, .show = 5, .beam = 4,
                 .alpha = 1.0f, .threads = 0, .print_every = 50,
                 .save = "", .checkpoint = "", .translate = "",
                 .translate_file = "", .plot_data = "", .out = "",
                 .resume = "", .log = ""};
    TrainConfig tc = {.batch = 1, .steps = 0,
                      .adamw = {0.9f, 0.98f, 1e-9f, 0.01f},
                      .grad_clip = 1.0f, .eval_every = 0, .eval_iters = 1,
                      .seed = 1337};
    parse_flags(argc, argv, &o, &tc);
    Run r = {0};
    autothreads_from_flag(&r.threads, o.threads);
    if (*o.checkpoint) return translate_saved(&o);

    Error err;
    // a folder that holds another run is not replaced unasked; one that
    // cannot take the run fails before the run, and so does a --save that
    // cannot be written
    if (*o.out && checkpoint_dir_claim(o.out, o.resume, o.overwrite, &err)
        != 0)
        flags_fail("%s", err.msg);
    if (*o.out && checkpoint_dir_check(o.out, &err) != 0) die("%s", err.msg);
    if (*o.save && write_file_check(o.save, &err) != 0) die("%s", err.msg);
    if (*o.resume) resume_run(&r, &o, &tc);
    else start_run(&r, &o, &tc);
    if (*o.out) run_file_write(&o, o.out);
    FILE *log = NULL;
    if (*o.log) {
        log = fopen(o.log, *o.resume ? "a" : "w");
        if (!log) die("--log %s: cannot write it: %s", o.log, strerror(errno));
        // a step's row has its batch's numbers, an evaluation's the last two
        if (!*o.resume)
            fprintf(log, "step,loss,nll,lr,grad_norm,tokens_per_s,val_nll,"
                         "val_bleu\n");
        // a full disk (or /dev/full) fails here, before the run
        if (fflush(log) != 0)
            die("--log %s: cannot write it: %s", o.log, strerror(errno));
    }
    const TrainConfig *c = &r.tr.cfg;
    char sched[96];   // chapter 6's words for it
    lr_schedule_describe(sched, sizeof sched, c->steps, c->warmup,
                         c->decay_steps, c->lr, c->min_lr, o.minutes > 0);
    report_line("training", "%d steps (%.1f epochs), lr %g -> %g (%s), "
                "label smoothing %g, dropout %g", c->steps,
                (double)c->steps / r.tb.n_batches, c->lr, c->min_lr, sched,
                o.smoothing, r.g.model.cfg.dropout);
    if (o.minutes > 0)
        report_line("", "or as many steps as fit in %g minutes here, timed "
                    "on the first %d", o.minutes, 1 + SPEED_PROBE);
    printf("\n");

    double train_time = 0;
    long tokens_done = 0, targets_done = 0;
    int rc = train(&r, &o, log, &train_time, &tokens_done, &targets_done);
    if (log) log_close(log, o.log);
    if (train_time > 0)
        printf("\ntrained     %d steps in %.1f s: %.0f tokens/s (source + "
               "target),\n            %.0f target tokens/s\n", r.tr.step,
               train_time,
               tokens_done / train_time, targets_done / train_time);
    if (rc == RUN_DONE && *o.out)
        report_line("saved", "%s/model.safetensors (./ch7 --checkpoint "
                    "%s/model.safetensors --translate TEXT)", o.out, o.out);
    if (rc == RUN_DONE && *o.save) {
        if (seq2seq_save(o.save, &r.g.model, r.tr.step, r.vocab, &err) != 0)
            die("%s", err.msg);
        report_line("saved", "%s (./ch7 --checkpoint %s --translate TEXT)",
                    o.save, o.save);
    }
    if (rc == RUN_DONE) report_test(&r, &o);
    run_free(&r);
    return rc == RUN_STOPPED ? 0 : rc;
}
