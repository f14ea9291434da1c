// ch7 - the encoder-decoder Transformer learns a synthetic "translation":
// reversing random strings (or copying, or sorting them). It shows the
// two masks of a padded batch, trains with chapter 6's trainer until the
// held-out examples come out exactly right, decodes some of them greedily
// and with beam search, and draws one example's cross-attention.
//
//   ./ch7                        reverse, until 100% held-out exact match
//   ./ch7 --task sort --steps 3000
//   ./ch7 --help
//   ./ch7 --task translate       German to English on Multi30k (mt.c)
//   ./ch7 --bleu HYP REF         BLEU and chrF of a file of translations
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bleu.h"
#include "decode.h"
#include "error.h"
#include "flags.h"
#include "mem.h"
#include "mt.h"
#include "plotdata.h"
#include "progress.h"
#include "safetensors.h"
#include "seq2seq.h"
#include "seq2seq_checkpoint.h"
#include "seq2seq_train.h"
#include "task.h"
#include "threads.h"
#include "autothreads.h"
#include "report.h"
#include "timer.h"
#include "train.h"
#include "utf8.h"

typedef struct {
    const char *task;
    int symbols, min_len, max_len;
    int embd, layers, heads, ffn;
    float dropout, smoothing;
    int held_out, eval_every, print_every, show, beam, threads;
    const char *head;   // "mean", or a head's number
    const char *save;   // a checkpoint of the trained model, or ""
    const char *plot_data;   // a folder for the heatmap's CSV, or ""
    float alpha;
    bool until_perfect, quiet;
} Options;

static void parse_flags(int argc, char **argv, Options *o, TrainConfig *t,
                        Task *task) {
    Flag flags[] = {
        {"task", FLAG_STRING, &o->task, "copy, reverse or sort; translate is "
         "German to English (./ch7 --task translate --help)"},
        {"symbols", FLAG_INT, &o->symbols, "letters in the alphabet"},
        {"min-len", FLAG_INT, &o->min_len, "shortest source string"},
        {"max-len", FLAG_INT, &o->max_len, "longest source string"},
        {"embd", FLAG_INT, &o->embd, "d_model: channels"},
        {"layers", FLAG_INT, &o->layers, "encoder layers, and as many "
         "decoder layers"},
        {"heads", FLAG_INT, &o->heads, "attention heads"},
        {"ffn", FLAG_INT, &o->ffn, "hidden units of each FFN"},
        {"dropout", FLAG_FLOAT, &o->dropout, "dropout in training"},
        {"smoothing", FLAG_FLOAT, &o->smoothing, "label smoothing eps"},
        {"batch", FLAG_INT, &t->batch, "examples per step"},
        {"steps", FLAG_INT, &t->steps, "the most training steps"},
        {"lr", FLAG_FLOAT, &t->lr, "peak learning rate"},
        {"warmup", FLAG_INT, &t->warmup, "steps of linear warmup"},
        {"until-perfect", FLAG_BOOL, &o->until_perfect, "stop at the first "
         "evaluation with 100% held-out exact match (=0: run every "
         "step of --steps)"},
        {"eval-every", FLAG_INT, &o->eval_every, "steps between held-out "
         "evaluations"},
        {"held-out", FLAG_INT, &o->held_out, "held-out examples"},
        {"show", FLAG_INT, &o->show, "held-out examples printed"},
        {"beam", FLAG_INT, &o->beam, "beam width of the beam search"},
        {"alpha", FLAG_FLOAT, &o->alpha, "length normalisation: score = "
         "log P / length^alpha"},
        {"head", FLAG_STRING, &o->head, "the cross-attention drawn: 'mean' "
         "of the heads, or one head's number"},
        {"seed", FLAG_U64, &t->seed, "initialisation, data and dropout"},
        {"threads", FLAG_INT, &o->threads, "threads (0: from 1 to one "
         "per core, the fastest as timed while it runs; more than the "
         "cores: capped)"},
        {"print-every", FLAG_INT, &o->print_every, "steps between progress "
         "lines when the output is not a terminal"},
        {"quiet", FLAG_BOOL, &o->quiet, "no progress lines"},
        {"save", FLAG_STRING, &o->save, "write the trained model to this "
         "safetensors file (none if not given)"},
        {"plot-data", FLAG_STRING, &o->plot_data, "also write the "
         "cross-attention heatmap's weights as a CSV file into this folder"},
    };
    const FlagRange range[] = {
        {"symbols", .lo = 1, .hi = 26}, {"min-len", .lo = 1, .hi = 200},
        {"max-len", .lo_flag = "min-len", .hi = 200},
        {"embd", .lo = 1, .hi = 4096}, {"layers", .lo = 1, .hi = 64},
        {"heads", .lo = 1, .hi_flag = "embd"}, {"ffn", .lo = 1, .hi = 65536},
        {"dropout", .lo = 0, .hi = 0.99}, {"smoothing", .lo = 0, .hi = 0.99},
        {"batch", .lo = 1, .hi = 65536}, {"steps", .lo = 1, .hi = 1e7},
        {"lr", .lo = 1e-30, .hi = 1}, {"warmup", .lo = 0, .hi = 1e7},
        {"eval-every", .lo = 1, .hi = 1e7},
        {"held-out", .lo = 1, .hi = 100000},
        {"show", .lo = 0, .hi_flag = "held-out"}, {"beam", .lo = 1, .hi = 64},
        {"alpha", .lo = 0, .hi = 2}, {"threads", .lo = 0, .hi = 1024},
        {"print-every", .lo = 1, .hi = 1e7},
    };
    int n_flags = sizeof flags / sizeof flags[0];
    int n_ranges = sizeof range / sizeof range[0];
    flags_parse(argc, argv, flags, n_flags, range, n_ranges,
                "Chapter 7: an encoder-decoder Transformer learns to copy, "
                "reverse or sort\nrandom strings, and shows its masks, its "
                "decoding and its cross-attention.\n\n"
                "./ch7 --bleu HYP REF [--lowercase] only scores the file HYP "
                "(one translation a\nline) against REF (one reference a "
                "line) with BLEU and chrF as sacreBLEU 2.6.0\ndoes by "
                "default; --lowercase makes BLEU case-insensitive (-lc).");
    if (task_kind_parse(o->task, &task->kind) != 0)
        flags_fail("--task must be copy, reverse, sort or translate, got '%s'",
                   o->task);
    if (!flags_given(&o->show) && o->show > o->held_out)
        o->show = o->held_out;
    flags_check_ranges(flags, n_flags, range, n_ranges);
    if (flags_given(&o->save) && *o->save == 0)
        flags_fail("--save is empty: give a file name");
    char *end;
    long h = strtol(o->head, &end, 10);
    if (strcmp(o->head, "mean") != 0
        && (*o->head == 0 || *end != 0 || h < 0 || h >= o->heads))
        flags_fail("--head must be 'mean' or a head from 0 to %d, got '%s'",
                   o->heads - 1, o->head);
    if (o->embd % o->heads != 0)
        flags_fail("--embd %d does not split into --heads %d", o->embd,
                   o->heads);
    task->symbols = o->symbols;
    task->min_len = o->min_len;
    task->max_len = o->max_len;
    // training never draws a held-out string, so most must be left over
    double strings = 0, k = 1;
    for (int n = 1; n <= o->max_len && strings < 1e9; n++) {
        k *= o->symbols;
        if (n >= o->min_len) strings += k;
    }
    if (strings < 4.0 * o->held_out)
        flags_fail("%.0f possible strings, fewer than 4 x --held-out %d",
                   strings, o->held_out);
    t->decay_steps = t->steps;
    t->min_lr = t->lr / 10;
}

// ---- scoring files: ./ch7 --bleu HYP REF ------------------------------------

// The lines of a file, as Python reads them: split at each line end
// (read_text's "\n", "\r\n" and a lone "\r"), no empty line after a
// final one. The strings point into *text, which the caller frees with
// the array.
static char **read_lines(const char *path, int *n, char **text) {
    Error err;
    size_t len;
    char *t = read_text(path, &len, &err);
    if (!t) die("%s", err.msg);
    if (strlen(t) != len) die("%s: holds a NUL byte", path);
    int cap = 16, k = 0;
    char **lines = xmalloc((size_t)cap * sizeof *lines);
    for (char *p = t; *p;) {
        char *end = strchr(p, '\n');
        if (k == cap) lines = xrealloc(lines, (size_t)(cap *= 2)
                                              * sizeof *lines);
        lines[k++] = p;
        if (!end) break;
        *end = 0;
        p = end + 1;
    }
    *n = k;
    *text = t;
    return lines;
}

// Prints both scores, signatures included, lined up at their '=' as
// sacreBLEU's command line does (`sacrebleu REF -i HYP -m bleu chrf -w 2`).
static _Noreturn void bleu_main(const char *hyp_path, const char *ref_path,
                                bool lowercase) {
    int nh, nr;
    char *ht, *rt;
    char **hyps = read_lines(hyp_path, &nh, &ht);
    char **refs = read_lines(ref_path, &nr, &rt);
    if (nh == 0 && nr == 0)   // sacreBLEU would score nothing as 0
        die("%s and %s are empty: nothing to score", hyp_path, ref_path);
    if (nh != nr)
        die("%s has %d lines but %s has %d: one translation a line for "
            "each reference", hyp_path, nh, ref_path, nr);
    Error err;
    BleuResult b;
    ChrfResult c;
    if (bleu_corpus(&b, (const char *const *)hyps, (const char *const *)refs,
                    nh, lowercase, &err) != 0
        || chrf_corpus(&c, (const char *const *)hyps,
                       (const char *const *)refs, nh, false, &err) != 0)
        die("%s", err.msg);
    char lines[2][512];
    bleu_format(lines[0], sizeof lines[0], &b, true);
    chrf_format(lines[1], sizeof lines[1], &c, true);
    int eq[2], w = 0;
    for (int i = 0; i < 2; i++) {
        eq[i] = (int)(strstr(lines[i], " = ") - lines[i]);
        if (eq[i] > w) w = eq[i];
    }
    for (int i = 0; i < 2; i++) printf("%*s%s\n", w - eq[i], "", lines[i]);
    free(hyps), free(refs), free(ht), free(rt);
    exit(0);
}

// `--bleu HYP REF` takes two values, which the flag parser cannot: it is
// read here, before the parser sees the command line.
static void bleu_mode(int argc, char **argv) {
    int at = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--bleu") == 0) at = i;
    if (!at) return;
    const char *files[2] = {NULL, NULL};
    bool lowercase = false;
    int nf = 0;
    for (int i = 1; i < argc; i++) {
        if (i == at) continue;
        if (strcmp(argv[i], "--lowercase") == 0) lowercase = true;
        else if (strcmp(argv[i], "--help") == 0) return;
        else if (strncmp(argv[i], "--", 2) == 0 || nf == 2)
            flags_fail("--bleu HYP REF takes only --lowercase besides, "
                       "got '%s'", argv[i]);
        else files[nf++] = argv[i];
    }
    if (nf < 2) flags_fail("--bleu needs two files: HYP REF");
    bleu_main(files[0], files[1], lowercase);
}

// ---- the data --------------------------------------------------------------

// Training draws fresh random examples at every step, never one of the
// held-out set: a string drawn that is one of them is drawn again.
typedef struct {
    const Task *task;
    const TaskSet *held;
} TrainData;

static bool held_out(const TaskSet *held, const int *src) {
    for (int i = 0; i < held->n; i++)
        if (memcmp(held->src + (size_t)i * held->S, src,
                   (size_t)held->S * sizeof *src) == 0)
            return true;
    return false;
}

// Every batch fills the capacity: *B rows of *S and *T ids.
static int fill_random(const void *self, Rng *rng, int *src, int *tgt_in,
                       int *tgt_out, int *Bp, int *Sp, int *Tp, Error *err) {
    const TrainData *d = self;
    int B = *Bp, S = *Sp, T = *Tp;
    (void)err;
    for (int b = 0; b < B; b++)
        do
            task_example(d->task, rng, src + (size_t)b * S,
                         tgt_in + (size_t)b * T, tgt_out + (size_t)b * T);
        while (held_out(d->held, src + (size_t)b * S));
    return 0;
}

// Held-out exact match: the share of examples whose greedy decoding is
// the right answer, ending with <eos>.
static int exact_match(const Seq2Seq *m, Seq2SeqState *st, const Task *task,
                       const TaskSet *set, const DecodeConfig *dc, int *out,
                       int *len, bool *done, double *share, Error *err) {
    int S = set->S, T = set->T;
    if (greedy_decode(m, st, set->src, set->n, S, dc, out, T, len, done,
                      err) != 0)
        return -1;
    int right = 0, want[200];
    for (int i = 0; i < set->n; i++) {
        int n = task_answer(task, set->src + (size_t)i * S, want);
        right += done[i] && len[i] == n
                 && memcmp(out + (size_t)i * T, want, n * sizeof *want) == 0;
    }
    *share = (double)right / set->n;
    return 0;
}

// ---- what is printed -------------------------------------------------------

static void show_masks(const Task *task, uint64_t seed) {
    Rng r;
    rng_seed(&r, seed);
    int S = task_src_len(task), T = task_tgt_len(task);
    int *src = xmalloc((size_t)S * sizeof *src);
    int *tin = xmalloc((size_t)T * sizeof *tin);
    int *tout = xmalloc((size_t)T * sizeof *tout);
    // a short example, so that both sequences are padded
    Task shorter = *task;
    shorter.max_len = task->min_len;
    task_example(&shorter, &r, src, tin, tout);
    for (int i = shorter.max_len; i < S; i++) src[i] = TOK_PAD;
    for (int i = shorter.max_len + 1; i < T; i++) tin[i] = tout[i] = TOK_PAD;
    printf("One padded example ('_' is <pad>, '^' <bos>, '$' <eos>):\n");
    printf("  source         ");
    task_print(stdout, src, S, 0);
    printf("\n  decoder input  ");
    task_print(stdout, tin, T, 0);
    printf("\n  decoder target ");
    task_print(stdout, tout, T, 0);
    printf("\n\nIts masks, '1' where a query (row) may read a key (column):\n");
    print_attention_masks(stdout, tin, T, src, S, TOK_PAD);
    printf("\n");
    free(src);
    free(tin);
    free(tout);
}

// A token of the toy tasks as a label of the heatmap's CSV.
static void plot_token(FILE *f, int tok) {
    if (tok == TOK_BOS) fputs("<bos>", f);
    else if (tok == TOK_EOS) fputs("<eos>", f);
    else fputc('a' + tok - TOK_FIRST, f);
}

// One example's cross-attention in the last decoder layer, as shades:
// rows are the output tokens, columns the source tokens. With plot_dir
// the same weights also go to plot_dir/cross_attention.csv, one row per
// (output, source) pair.
static void show_heatmap(const Seq2Seq *m, const Task *task, const int *src,
                         const int *answer, int n, int head,
                         const char *plot_dir, Error *err) {
    int S = task_src_len(task), T = n + 1, NH = m->cfg.n_head;
    int *tin = xmalloc((size_t)T * sizeof *tin);
    tin[0] = TOK_BOS;
    memcpy(tin + 1, answer, (size_t)n * sizeof *tin);
    Seq2SeqActs a;
    if (seq2seq_acts_alloc(&a, &m->cfg, 1, S, T, err) != 0
        || seq2seq_forward(m, &a, src, tin, NULL, 1, S, T, 0, false, NULL,
                           NULL, err) != 0) {
        fprintf(stderr, "%s\n", err->msg);
        free(tin);
        seq2seq_acts_free(&a, &m->cfg);
        return;
    }
    const float *att = seq2seq_cross_weights(&a, m->cfg.n_dec - 1);
    const char *shades = " .:-=+*#%@";
    int cols = 0;
    while (cols < S && src[cols] != TOK_PAD) cols++;
    FILE *csv = NULL;
    if (*plot_dir) {
        csv = plot_csv_open(plot_dir, "cross_attention.csv", "output,source,"
                            "decoder_input,predicts,source_token,weight", err);
        if (!csv) die("%s", err->msg);
    }
    printf("Cross-attention in the last decoder layer (%s),\none row per "
           "output token:\n", head < 0 ? "the mean of the heads" : "one head");
    printf("      ");
    task_print(stdout, src, cols, 1);
    printf("   (source)\n");
    for (int t = 0; t < T; t++) {
        printf("  %c -> ", t == 0 ? '^' : 'a' + tin[t] - TOK_FIRST);
        for (int s = 0; s < cols; s++) {
            double w = 0;
            for (int h = 0; h < NH; h++)
                if (head < 0 || h == head)
                    w += att[((size_t)h * T + t) * S + s];
            w /= head < 0 ? NH : 1;
            if (csv) {
                fprintf(csv, "%d,%d,", t, s);
                plot_token(csv, tin[t]);
                fputc(',', csv);
                plot_token(csv, t < n ? answer[t] : TOK_EOS);
                fputc(',', csv);
                plot_token(csv, src[s]);
                fprintf(csv, ",%.6f\n", w);
            }
            int k = (int)(w * 10);
            putchar(shades[k > 9 ? 9 : k]);
        }
        printf("   predicts ");
        task_print(stdout, t < n ? &answer[t] : (int[]){TOK_EOS}, 1, 0);
        printf("\n");
    }
    printf("  (shade of the weight: ' ' below 0.1 ... '@' 0.9 and more)\n");
    if (csv) {
        if (plot_csv_close(csv, plot_dir, "cross_attention.csv", err) != 0)
            die("%s", err->msg);
        printf("  (plot data: %s/cross_attention.csv)\n", plot_dir);
    }
    printf("\n");
    free(tin);
    seq2seq_acts_free(&a, &m->cfg);
}

static void show_examples(const Seq2Seq *m, const Task *task,
                          const TaskSet *set, const int *greedy,
                          const int *glen, const DecodeConfig *dc, int show,
                          Error *err) {
    int S = set->S, T = set->T;
    Seq2SeqState st;
    int *out = xmalloc((size_t)show * T * sizeof *out);
    int *len = xmalloc((size_t)show * sizeof *len);
    bool *done = xmalloc((size_t)show * sizeof *done);
    float *score = xmalloc((size_t)show * sizeof *score);
    if (seq2seq_state_alloc(&st, &m->cfg, show, S, T, dc->beam, err) != 0
        || beam_decode(m, &st, set->src, show, S, dc, out, T, len, done,
                       score, err) != 0) {
        fprintf(stderr, "%s\n", err->msg);
    } else {
        printf("Held-out examples, greedy and beam search (k=%d):\n",
               dc->beam);
        for (int i = 0; i < show; i++) {
            const int *src = set->src + (size_t)i * S;
            int want[200], n = task_answer(task, src, want), ns = 0;
            while (ns < S && src[ns] != TOK_PAD) ns++;
            printf("  ");
            task_print(stdout, src, ns, 0);
            printf("%*s -> ", task->max_len - ns, "");
            task_print(stdout, greedy + (size_t)i * T, glen[i], 0);
            printf("%*s| ", task->max_len + 2 - glen[i], "");
            task_print(stdout, out + (size_t)i * T, len[i], 0);
            bool right = done[i] && len[i] == n
                         && memcmp(out + (size_t)i * T, want,
                                   (size_t)n * sizeof *want) == 0;
            if (!right)
                printf("%*s(wrong)", task->max_len + 2 - len[i], "");
            printf("\n");
        }
        printf("\n");
    }
    seq2seq_state_free(&st, &m->cfg);
    free(out);
    free(len);
    free(done);
    free(score);
}

// The run's memory at its peak (mem.h), before anything of its size is
// allocated: training (the model, its gradients, AdamW's moments, the
// activations, the batch), the held-out set with its decoding state and
// outputs, kept to the end; then one at a time the held-out greedy
// decoding's work space, the beam search of the examples shown (its
// state and work space) and the heatmap's forward pass. Refused with one
// line (exit 2); returns the estimate in MiB.
static double check_memory(const Seq2SeqConfig *c, const Options *o,
                           const TrainConfig *tc, int S, int T) {
    MemPlan p;
    mem_plan_begin(&p);
    size_t held = (size_t)o->held_out, row = S + 2 * (size_t)T;
    mem_plan_keep(&p, seq2seq_train_floats(c, tc->batch, S, T)
                      + seq2seq_state_floats(c, o->held_out, S, T, 1)
                      + mem_floats(held * (row + T + 1) * sizeof(int)
                                   + held * sizeof(bool)));
    mem_plan_phase(&p, greedy_decode_floats(c, o->held_out));
    if (o->show > 0)
        mem_plan_phase(&p, seq2seq_state_floats(c, o->show, S, T, o->beam)
                           + beam_decode_floats(c, o->show, o->beam, T)
                           + mem_floats((size_t)o->show * (T + 3)
                                        * sizeof(int)));
    mem_plan_phase(&p, seq2seq_acts_floats(c, 1, S, T));
    Error err;
    if (mem_plan_check(&p, "lower --batch --embd --ffn --layers",
                       &err) != 0)
        error_exit(2, err.msg);
    return mem_plan_mib(&p);
}

int main(int argc, char **argv) {
    error_set_progname(argv[0]);
    bleu_mode(argc, argv);
    // German to English is a program of its own (mt.c)
    const char *mode = flags_peek(argc, argv, "task");
    if ((mode && strcmp(mode, "translate") == 0)
        || flags_peek(argc, argv, "checkpoint")
        || flags_peek(argc, argv, "translate")
        || flags_peek(argc, argv, "translate-file")
        || flags_peek(argc, argv, "resume"))
        return mt_main(argc, argv);
    Options o = {.task = "reverse", .symbols = 10, .min_len = 3,
                 .max_len = 8, .embd = 32, .layers = 2, .heads = 4,
                 .ffn = 128, .dropout = 0, .smoothing = 0.1f,
                 .held_out = 200, .eval_every = 50, .print_every = 50,
                 .show = 4, .beam = 4, .threads = 0, .head = "mean",
                 .alpha = 1.0f, .until_perfect = true, .save = "",
                 .plot_data = ""};
    TrainConfig tc = {.batch = 64, .steps = 600, .lr = 3e-3f,
                      .warmup = 100,
                      .adamw = {0.9f, 0.98f, 1e-9f, 0.01f},
                      .grad_clip = 1.0f, .eval_every = 0, .eval_iters = 1,
                      .seed = 1337};
    Task task;
    parse_flags(argc, argv, &o, &tc, &task);
    AutoThreads threads;   // fixed, or timed as it runs (chapter 6)
    autothreads_from_flag(&threads, o.threads);
    Error err;
    // a folder that cannot take the CSV file fails before any work, and
    // so does a --save that cannot be written
    if (flags_given(&o.plot_data) && plot_dir_check(o.plot_data, &err) != 0)
        die("%s", err.msg);
    if (*o.save && write_file_check(o.save, &err) != 0) die("%s", err.msg);

    int S = task_src_len(&task), T = task_tgt_len(&task);
    Seq2SeqConfig cfg = seq2seq_config_default(task_vocab(&task), T);
    cfg.n_embd = o.embd, cfg.n_enc = cfg.n_dec = o.layers;
    cfg.n_head = o.heads, cfg.n_ffn = o.ffn, cfg.dropout = o.dropout;
    if (seq2seq_config_check(&cfg, &err) != 0) flags_fail("%s", err.msg);
    double mib = check_memory(&cfg, &o, &tc, S, T);

    printf("== Chapter 7: the encoder-decoder Transformer ==\n\n");
    printf("Task: %s strings of %d to %d letters from an alphabet of %d.\n\n",
           task_kind_name(task.kind), task.min_len, task.max_len,
           task.symbols);
    show_masks(&task, tc.seed);
    fflush(stdout);   // seen before the allocation, even in a log

    Seq2Seq m;
    Rng r;
    rng_seed(&r, tc.seed);
    if (seq2seq_create(&m, &cfg, &err) != 0) die("%s", err.msg);
    seq2seq_init(&m, &r);
    printf("Model: d_model %d, %d + %d layers, %d heads, FFN %d (ReLU), "
           "tied embeddings:\n%zu parameters; memory estimated %.0f MiB at "
           "the peak.\n\n", cfg.n_embd, cfg.n_enc, cfg.n_dec, cfg.n_head,
           cfg.n_ffn, m.num_params, mib);

    Seq2SeqTrain g;
    Trainer tr;
    if (seq2seq_train_init(&g, &m, tc.batch, S, T, o.smoothing, &err) != 0)
        die("%s", err.msg);
    char vocab[160];
    snprintf(vocab, sizeof vocab, "task %s, letters a-%c, lengths %d-%d; "
             "ids: 0 <pad>, 1 <bos>, 2 <eos>, 3.. the letters",
             task_kind_name(task.kind), 'a' + task.symbols - 1, task.min_len,
             task.max_len);
    g.vocab = vocab;
    TrainModel tm = seq2seq_train_model(&g);
    if (trainer_init(&tr, &tm, &tc, &err) != 0) die("%s", err.msg);
    TaskSet held;
    task_set_make(&held, &task, o.held_out, tc.seed + 1);
    TrainData data = {&task, &held};
    PairSource source = {&data, fill_random};

    DecodeConfig dc = decode_config_default();
    dc.beam = o.beam, dc.alpha = o.alpha;
    Seq2SeqState st;
    if (seq2seq_state_alloc(&st, &cfg, held.n, S, T, 1, &err) != 0)
        die("%s", err.msg);
    int *out = xmalloc((size_t)held.n * T * sizeof *out);
    int *len = xmalloc((size_t)held.n * sizeof *len);
    bool *done = xmalloc((size_t)held.n * sizeof *done);

    printf("Training (%d examples per step, label smoothing %g; loss is "
           "the smoothed\ncross-entropy, nll the plain one):\n", tc.batch,
           o.smoothing);
    Progress p;
    progress_start(&p, stdout, tc.steps, o.print_every);
    double t0 = time_now(), share = 0;
    int step = 0;
    while (step < tc.steps) {
        StepResult res;
        double ts = time_now();
        if (train_step(&tr, &source, &res, &err) != 0)
            die("%s", err.msg);
        step++;
        double dt = time_now() - ts;
        if (autothreads_step(&threads, dt, (double)tc.batch * (S + T))
            && !o.quiet) {
            char how[96];
            autothreads_describe(&threads, step, how, sizeof how);
            progress_end(&p);
            report_line("threads", "%s", how);
        }
        char extra[80];
        snprintf(extra, sizeof extra, "loss %.4f  nll %.4f", res.loss,
                 g.last.nll);
        if (!o.quiet)
            progress_update(&p, step, (double)tc.batch * (S + T), dt,
                            extra);
        if (step % o.eval_every == 0 || step == tc.steps) {
            if (exact_match(&g.model, &st, &task, &held, &dc, out, len, done,
                            &share, &err) != 0)
                die("%s", err.msg);
            progress_end(&p);
            printf("step %d: held-out exact match %.1f%% (%d of %d)  "
                   "[%.1f s]\n", step, 100 * share,
                   (int)lround(share * held.n), held.n, time_now() - t0);
            if (o.until_perfect && share == 1.0) break;
        }
    }
    progress_end(&p);
    printf("\n");
    if (*o.save) {
        if (seq2seq_save(o.save, &g.model, step, vocab, &err) != 0)
            die("%s", err.msg);
        printf("saved the model to %s\n\n", o.save);
    }
    show_examples(&g.model, &task, &held, out, len, &dc, o.show, &err);
    {
        int want[200], n = task_answer(&task, held.src, want);
        show_heatmap(&g.model, &task, held.src, want, n,
                     strcmp(o.head, "mean") == 0 ? -1 : atoi(o.head),
                     o.plot_data, &err);
    }
    free(out);
    free(len);
    free(done);
    seq2seq_state_free(&st, &cfg);
    task_set_free(&held);
    trainer_free(&tr);
    seq2seq_train_free(&g);
    return 0;
}
