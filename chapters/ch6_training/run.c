// run.c - the ./ch6 program (main.c calls it): training the GPT on Tiny
// Shakespeare with AdamW, warmup and a cosine schedule, clipping,
// evaluation, samples, a CSV log, checkpoints that resume exactly and a
// profile of where the time goes. A TrainBackend (run.h) moves the model
// elsewhere (./ch8: the GPU) and leaves all of this as it is.
//
// train_main reads as the run does: parse the flags, build the run (new
// or resumed), check the output folder, train, report.
#include "run.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chart.h"
#include "checkpoint.h"
#include "checkpoint_state.h"
#include "dataset.h"
#include "dist.h"
#include "error.h"
#include "flags.h"
#include "generate.h"
#include "gpt_train.h"
#include "mem.h"
#include "profile.h"
#include "profile_csv.h"
#include "progress.h"
#include "report.h"
#include "threads.h"
#include "autothreads.h"
#include "timer.h"
#include "utf8.h"

// ---- presets ---------------------------------------------------------------

//> presets
static const TrainPreset PRESETS[] = {
    // 1800 steps, or as many as fit in 5 minutes on the machine it runs
    // on; measured on 2 cores: val 1.7228 in 1800 steps with AVX-512, ...
    {"default", "the most of 5 minutes: up to 1800 steps, as many as fit "
     "here", 4, 4, 128, 128, 0, 0.0f, 5.0f,
     {.batch = 16, .steps = 1800, .lr = 2e-3f, .min_lr = 2e-4f,
      .warmup = 100, .decay_steps = 1800, .adamw = {0.9f, 0.99f, 1e-8f, 0.1f},
      .grad_clip = 1.0f, .eval_every = 200, .eval_iters = 20, .seed = 1337}},
    {"notes", "the course notes' run (Implementing a Transformer from "
     "scratch): 4 layers, 4 heads, 128 wide, block 128, batch 64, AdamW "
     "3e-4, 5000 steps", 4, 4, 128, 128, 0, 0.0f, 0.0f,
     {.batch = 64, .steps = 5000, .lr = 3e-4f, .min_lr = 3e-4f,
      .warmup = 0, .decay_steps = 5000, .adamw = {0.9f, 0.999f, 1e-8f, 0.01f},
      .grad_clip = 0.0f, .eval_every = 500, .eval_iters = 50, .seed = 1337}},
    {"nanogpt", "nanoGPT's shakespeare-char: 6 layers, 6 heads, 384 wide, "
     "block 256, batch 64, dropout 0.2, lr 1e-3", 6, 6, 384, 256, 0, 0.2f,
     0.0f,
     {.batch = 64, .steps = 5000, .lr = 1e-3f, .min_lr = 1e-4f,
      .warmup = 100, .decay_steps = 5000, .adamw = {0.9f, 0.99f, 1e-8f, 0.1f},
      .grad_clip = 1.0f, .eval_every = 250, .eval_iters = 200,
      .seed = 1337}},
};
//< presets

enum { N_PRESETS = sizeof PRESETS / sizeof PRESETS[0] };

static const TrainPreset *find_preset(const char *name) {
    for (int i = 0; i < N_PRESETS; i++)
        if (strcmp(PRESETS[i].name, name) == 0) return &PRESETS[i];
    return NULL;
}

// ---- flags -----------------------------------------------------------------

// Every setting of a run. The model and training settings start as the
// preset's (so --help shows them); a flag overrides one.
typedef struct {
    const char *preset, *data, *out, *resume, *log;
    int layers, heads, embd, block, bias;
    float dropout;
    TrainConfig t;
    int save_every, threads, sample_chars, print_every;
    float stop_at_val;
    float minutes;        // the time budget; 0: --steps as it is
    bool decay_given;     // --decay-steps was given: the budget keeps it
    bool quiet, profile;
    bool overwrite;       // --out may replace the run saved there
    const char *plot_data;   // NULL: no --plot-data (profile_csv.h)
} Options;

// ---- the time budget ------------------------------------------------------
//
// A step count that fits 5 minutes on one machine takes 10 on another. So
// the default run measures its own speed over its first steps and then
// fixes --steps (and the cosine's end) to what fits in --minutes. Those
// first steps are all in the warmup, whose learning rate does not depend
// on the step count, so the run is bit for bit the one that
// `./ch6 --steps N` with the printed N gives.
enum { BUDGET_PROBE = 20, BUDGET_MIN_PROBE = 5 };

// The step after which the count is fixed: 20, or the warmup if shorter.
static int budget_probe(const TrainConfig *t) {
    return t->warmup < BUDGET_PROBE ? t->warmup : BUDGET_PROBE;
}

// The name the messages give the program: "ch6", or the backend's.
static const char *program(const TrainBackend *be) {
    return be && be->program ? be->program : "ch6";
}

// The command that resumes a run: the program's name, or more.
static const char *command(const TrainBackend *be) {
    return be && be->command ? be->command : program(be);
}

// What the run trains when not ./ch6's own GPT (run.h), or NULL.
static const TrainTask *task_of(const TrainBackend *be) {
    return be ? be->task : NULL;
}

// A task's run loads its model and has one preset, so the flags that
// shape a new model and pick a preset are not its; --window (the T of
// its batches) is only its own: ./ch6 trains on whole blocks.
static bool flag_dropped(const char *name, bool task) {
    static const char *const model[] = {"preset", "layers", "heads",
                                        "embd", "block", "bias"};
    if (!task) return strcmp(name, "window") == 0;
    for (size_t i = 0; i < sizeof model / sizeof model[0]; i++)
        if (strcmp(name, model[i]) == 0) return true;
    return false;
}

// The n items of own (a Flag or a FlagRange each, size bytes, whose first
// member is the flag's name) less those flag_dropped drops, then the m
// items of extra, into *out (malloc'd); returns how many.
static int join_flags(void **out, const void *own, int n, const void *extra,
                      int m, size_t size, bool task) {
    char *all = xmalloc((size_t)(n + m) * size), *to = all;
    for (int i = 0; i < n; i++) {
        const char *item = (const char *)own + (size_t)i * size;
        if (flag_dropped(*(const char *const *)item, task)) continue;
        memcpy(to, item, size);
        to += size;
    }
    if (m > 0) {
        memcpy(to, extra, (size_t)m * size);
        to += (size_t)m * size;
    }
    *out = all;
    return (int)((size_t)(to - all) / size);
}

// Fills o from the preset and the command line: ch6's flags, then be's
// (NULL: none), in one parse and one --help.
static void parse_flags(Options *o, int argc, char **argv,
                        const TrainBackend *be) {
    error_set_progname(argv[0]);   // for an error before flags_parse
    const TrainTask *task = task_of(be);
    const TrainPreset *p = task ? task->preset : NULL;
    if (!p) {
        const char *name = flags_peek(argc, argv, "preset");
        p = find_preset(name ? name : "default");
        if (!p) flags_fail("--preset must be default, notes or nanogpt, got "
                           "'%s'", name);
    }
    *o = (Options){.preset = p->name, .data = CORPUS_DEFAULT,
                   .out = "", .resume = "", .log = "", .layers = p->layers,
                   .heads = p->heads, .embd = p->embd, .block = p->block,
                   .bias = p->bias, .dropout = p->dropout, .t = p->t,
                   .sample_chars = task ? task->sample_tokens : 300,
                   .print_every = 10, .minutes = p->minutes};
    TrainConfig *t = &o->t;
    // (a task's samples are of its tokens, not characters)
    const char *sample = task ? "sample-tokens" : "sample-chars";
    Flag flags[] = {
        {"preset", FLAG_STRING, &o->preset,
         "default, notes or nanogpt: the defaults of the flags below"},
        {"layers", FLAG_INT, &o->layers, "n_layer"},
        {"heads", FLAG_INT, &o->heads, "n_head"},
        {"embd", FLAG_INT, &o->embd, "n_embd"},
        {"block", FLAG_INT, &o->block, "block_size: context length"},
        {"bias", FLAG_INT, &o->bias, "1: biases in Linear and LayerNorm"},
        {"dropout", FLAG_FLOAT, &o->dropout, "dropout in training"},
        {"batch", FLAG_INT, &t->batch, "sequences per step (under mpirun: "
         "of all processes together)"},
        {"window", FLAG_INT, &t->window, "tokens in each sequence, at most "
         "the model's block_size"},
        {"steps", FLAG_INT, &t->steps, "steps of the whole run"},
        {"minutes", FLAG_FLOAT, &o->minutes, "fit the run in about this "
         "long: after its first steps, --steps becomes what fits here (at "
         "most its value), printed; 0 = off, and off when --steps is given"},
        {"lr", FLAG_FLOAT, &t->lr, "peak learning rate"},
        {"min-lr", FLAG_FLOAT, &t->min_lr, "learning rate at the end"},
        {"warmup", FLAG_INT, &t->warmup, "steps of linear warmup"},
        {"decay-steps", FLAG_INT, &t->decay_steps,
         "the cosine reaches min-lr at this step (--steps moves it too)"},
        {"beta1", FLAG_FLOAT, &t->adamw.beta1, "AdamW beta1"},
        {"beta2", FLAG_FLOAT, &t->adamw.beta2, "AdamW beta2"},
        {"weight-decay", FLAG_FLOAT, &t->adamw.weight_decay,
         "AdamW weight decay (2-D weights only)"},
        {"grad-clip", FLAG_FLOAT, &t->grad_clip,
         "global norm limit; 0 = off"},
        {"eval-every", FLAG_INT, &t->eval_every,
         "steps between evaluations; 0 = only at the end"},
        {"eval-iters", FLAG_INT, &t->eval_iters,
         "batches of train and val per evaluation"},
        {"seed", FLAG_U64, &t->seed, "initialisation, batches, dropout"},
        {"threads", FLAG_INT, &o->threads, "threads (0: from 1 to one "
         "per core, the fastest as timed while it runs; on a GPU or under "
         "mpirun: one per core, shared among the processes; more than the "
         "cores: capped)"},
        {"data", FLAG_STRING, &o->data, "UTF-8 text to train on (90% train)"},
        {"out", FLAG_STRING, &o->out, "save checkpoints in this folder"},
        {"overwrite", FLAG_BOOL, &o->overwrite, "with --out: replace the run "
         "saved there (without it, a folder that holds a run is "
         "refused)"},
        {"save-every", FLAG_INT, &o->save_every,
         "steps between checkpoints (0: only at the end)"},
        {"resume", FLAG_STRING, &o->resume,
         "continue the run saved in this folder"},
        {"log", FLAG_STRING, &o->log, "write a CSV row per step here"},
        {"stop-at-val", FLAG_FLOAT, &o->stop_at_val,
         "stop at the first evaluation with val loss <= this (0: never)"},
        {sample, FLAG_INT, &o->sample_chars, task ? "tokens sampled before "
         "and after the training, a third of them at each evaluation"
         : "characters sampled at each evaluation and at the end"},
        {"print-every", FLAG_INT, &o->print_every,
         "steps between progress lines when the output is not a terminal"},
        {"profile", FLAG_BOOL, &o->profile,
         "time and memory by operation at the end"},
        {"plot-data", FLAG_STRING, &o->plot_data, "with --profile: also "
         "write the profile as profile.csv into this folder"},
        {"quiet", FLAG_BOOL, &o->quiet, "no progress lines or samples"},
    };
    // one rule for every number: its range, said the same way
    const FlagRange range[] = {
        {"layers", .lo = 1, .hi = 1e9}, {"heads", .lo = 1, .hi = 1e9},
        {"embd", .lo = 1, .hi = 1e9}, {"block", .lo = 1, .hi = 1e9},
        {"bias", .lo = 0, .hi = 1}, {"dropout", .lo = 0, .hi = 0.99},
        {"batch", .lo = 1, .hi = 1e9}, {"window", .lo = 1, .hi = 100000},
        {"steps", .lo = 0, .hi = 1e9},
        {"lr", .lo = 1e-30, .hi = 1e30}, {"min-lr", .lo = 0, .hi = 1e30},
        {"warmup", .lo = 0, .hi = 1e9}, {"decay-steps", .lo = 0, .hi = 1e9},
        {"beta1", .lo = 0, .hi = 0.999999}, {"beta2", .lo = 0, .hi = 0.999999},
        {"weight-decay", .lo = 0, .hi = 1e30},
        {"grad-clip", .lo = 0, .hi = 1e30}, {"eval-every", .lo = 0, .hi = 1e9},
        // 10,000 batches of each split: 100 times nanoGPT's 200, and some
        // minutes an evaluation here; more would only look like a hang
        {"eval-iters", .lo = 1, .hi = 10000},
        {"threads", .lo = 0, .hi = 1024}, {"save-every", .lo = 0, .hi = 1e9},
        {sample, .lo = 0, .hi = 100000},
        {"print-every", .lo = 1, .hi = 1e9},
        {"stop-at-val", .lo = 0, .hi = 1e30}, {"minutes", .lo = 0, .hi = 1e6},
    };
    // ch6's flags and ranges, then be's, in one table each
    Flag *all;
    FlagRange *ranges;
    int n = join_flags((void **)&all, flags, sizeof flags / sizeof flags[0],
                       be ? be->flags : NULL, be ? be->n_flags : 0,
                       sizeof *flags, task != NULL);
    int nr = join_flags((void **)&ranges, range, sizeof range / sizeof
                        range[0], be ? be->ranges : NULL,
                        be ? be->n_ranges : 0, sizeof *range, task != NULL);
    flags_parse(argc, argv, all, n, ranges, nr,
                be && be->about ? be->about
                                : "Chapter 6: train the GPT on Tiny "
                                  "Shakespeare.");
    if (be && be->program) error_set_progname(be->program);   // from now on
    if (flags_given(&t->steps) && !flags_given(&t->decay_steps))
        t->decay_steps = t->steps;   // a shorter run ends its cosine too
    if (flags_given(&t->steps) && !flags_given(&o->minutes))
        o->minutes = 0;              // a step count asked for is kept
    o->decay_given = flags_given(&t->decay_steps);
    flags_check_ranges(all, n, ranges, nr);
    free(all);
    free(ranges);
    if (o->overwrite && !flags_given(&o->out))
        flags_fail("--overwrite replaces the run saved in --out DIR: give "
                   "--out too");
    if (*o->resume) {
        // The saved run fixes the model, the optimiser and the schedule;
        // a flag that would change them is an error, not silently ignored.
        // --steps extends the run (the cosine keeps its saved end), and
        // evaluation, saving and output may change freely.
        const FlagFixed fixed[] = {
            {"preset", &o->preset}, {"layers", &o->layers},
            {"heads", &o->heads}, {"embd", &o->embd}, {"block", &o->block},
            {"bias", &o->bias}, {"dropout", &o->dropout},
            {"batch", &t->batch}, {"window", &t->window}, {"lr", &t->lr},
            {"min-lr", &t->min_lr},
            {"warmup", &t->warmup}, {"decay-steps", &t->decay_steps},
            {"beta1", &t->adamw.beta1}, {"beta2", &t->adamw.beta2},
            {"weight-decay", &t->adamw.weight_decay},
            {"grad-clip", &t->grad_clip}, {"seed", &t->seed},
            {"minutes", &o->minutes},
        };
        flags_check_fixed(fixed, (int)(sizeof fixed / sizeof fixed[0]),
                          o->resume);
        if (!*o->out) o->out = o->resume;   // keep saving where it lives
        o->minutes = 0;   // the saved run's step count stands
    }
    if (!*o->resume && t->batch % dist_size() != 0)
        flags_fail("--batch %d does not split over %d processes: give a "
                   "multiple of %d", t->batch, dist_size(), dist_size());
    // (the budget times the first steps, in the warmup: see above)
    if (o->minutes > 0 && budget_probe(t) < BUDGET_MIN_PROBE)
        flags_fail("--minutes needs --warmup %d or more, or give --steps",
                   BUDGET_MIN_PROBE);
}

// ---- building the run ------------------------------------------------------

typedef struct {
    const TrainBackend *be;   // NULL: the CPU
    const TrainTask *task;    // NULL: ./ch6's new GPT on characters
    Corpus corpus;
    GptTrain gpt;         // the model, its activations and batch (with a
                          // backend: the host copy)
    Trainer trainer;      // the optimiser's state, the generators
    MemPlan mem;          // the run's memory (check_memory)
    AutoThreads threads;  // the thread count, fixed or timed (--threads)
} Run;

static void print_title(const TrainBackend *be);

// The corpus: chapter 1's characters, or the task's tokens, split 90/10.
static int load_corpus(Run *r, const Options *o, Error *err) {
    const TrainTask *task = r->task;
    if (!task) return corpus_load(&r->corpus, o->data, err);
    int *ids;
    size_t n;
    if (task->encode_file(task->ctx, o->data, &ids, &n, err) != 0) return -1;
    corpus_from_ids(&r->corpus, ids, n);
    return 0;
}

// Every batch and evaluation reads windows of T + 1 tokens (T the
// block, or a task's --window): a corpus whose splits are shorter is a
// usage error.
static void check_corpus(const Run *r, const Options *o, int T) {
    if (r->corpus.train.n < (size_t)T + 1 || r->corpus.val.n < (size_t)T + 1)
        flags_fail("%s is too short for --%s %d: train %zu tokens, val "
                   "%zu (need %d each)", o->data, r->task ? "window"
                   : "block", T, r->corpus.train.n, r->corpus.val.n, T + 1);
}

// The samples' generation: n new tokens after one, temperature 0.8.
static GenOptions sample_options(int n, uint64_t seed) {
    return (GenOptions){.max_new_tokens = n, .sample = {0.8f, 0, 1.0f},
                        .seed = seed, .use_cache = true,
                        .window = WINDOW_SLIDE};
}

//> memory-plan
// The run's memory at its peak (mem.h), before anything of its size is
// allocated or read: the model, its gradients, AdamW's moments, the
// activations and the batch, kept to the end, and a sample's generation
// (the KV cache, a window's activations; a backend's samples need only
// the logits here) now and then; a resumed run's config comes from its
// files' headers, and the state file's header, which it holds while it
// reads the moments from the file into the rest (held), is one more
// passing phase. A model that a task
// loads holds its files (load) beside the model alone, before the rest
// is allocated: a phase only by what it holds beyond the rest. A run
// that does not fit is refused at once. (The step times, 8 bytes a
// step, grow with the steps actually run: not counted.)
static size_t sample_floats(const Run *r, const Options *o,
                            const GptConfig *c) {
    GenOptions g = sample_options(o->sample_chars, 1);
    return (r->be && r->be->generate ? (size_t)c->vocab_size
                                     : generate_floats_for(c, 1, &g))
           + mem_floats(((size_t)o->sample_chars + 1) * sizeof(int));
}

static void check_memory(Run *r, const Options *o, const GptConfig *c,
                         int B, int T, size_t held, size_t load) {
    MemPlan *p = &r->mem;
    size_t train = gpt_train_floats(c, B, T, dist_size());
    size_t rest = train - gpt_model_floats(c);
    mem_plan_begin(p);
    mem_plan_keep(p, train);
    mem_plan_phase(p, sample_floats(r, o, c));
    mem_plan_phase(p, held);
    mem_plan_phase(p, load > rest ? load - rest : 0);
    Error err;
    bool check = !(r->be && r->be->skip_host_memory_check);
    // (a saved run's sizes are no flags: it fits elsewhere, or not)
    const char *hint = *o->resume ? "the saved run is too large here"
                       : r->task ? "lower --batch --window"
                                 : "lower --batch --block --embd --layers";
    if (check && mem_plan_check(p, hint, &err) != 0) error_exit(2, err.msg);
}

// The report's line on it, which a run prints before it allocates.
static void report_memory(const Run *r, const Options *o, const GptConfig *c,
                          int B, int T) {
    double mib = sizeof(float) / 1048576.0;
    size_t acts = gpt_acts_floats(c, B, T);
    size_t train = gpt_train_floats(c, B, T, dist_size());
    report_line("memory", "estimated %.0f MiB at the peak: this process "
                "%.1f, activations %.1f (%d x %d), weights with gradients "
                "and AdamW's moments %.1f, a sample %.1f (MiB)",
                mem_plan_mib(&r->mem), r->mem.resident / 1048576.0,
                acts * mib, B, T, (train - acts) * mib,
                sample_floats(r, o, c) * mib);
    fflush(stdout);   // seen before the allocation, even in a log
}
//< memory-plan

// A new run's model: from the flags, or the task's from its files, with
// the run's dropout. *load: what loading it holds beside it.
static GptConfig new_config(const Run *r, const Options *o, size_t *load) {
    *load = 0;
    if (r->task) {
        GptConfig c;
        Error err;
        if (r->task->peek_model(r->task->ctx, &c, load, &err) != 0)
            die("%s", err.msg);
        c.dropout = o->dropout;
        return c;
    }
    return (GptConfig){.vocab_size = r->corpus.vocab.size,
                       .block_size = o->block, .n_layer = o->layers,
                       .n_head = o->heads, .n_embd = o->embd,
                       .n_ffn = gpt_ffn_width(o->embd),
                       .dropout = o->dropout, .bias = o->bias != 0,
                       .positional = POS_LEARNED};
}

// The T of a new run's batches: the block, or a task's --window.
static int new_window(const Run *r, const Options *o, const GptConfig *mc) {
    if (!r->task) return mc->block_size;
    if (o->t.window > mc->block_size)
        flags_fail("--window %d is longer than the model's block of %d "
                   "tokens", o->t.window, mc->block_size);
    return o->t.window;
}

// A new run, checked before anything of its size is allocated: its
// model, the corpus against its window, its memory.
static void plan_run(Run *r, const Options *o) {
    size_t load;
    GptConfig mc = new_config(r, o, &load);
    Error err;
    if (gpt_config_check(&mc, &err) != 0) flags_fail("%s", err.msg);
    int T = new_window(r, o, &mc);
    check_corpus(r, o, T);
    check_memory(r, o, &mc, o->t.batch / dist_size(), T, 0, load);
}

// The new run's model: made and initialised, or loaded by the task.
static void new_model(const Run *r, const Options *o, const GptConfig *mc,
                      Gpt *m) {
    Error err;
    if (r->task) {
        if (r->task->load_model(r->task->ctx, m, &err) != 0)
            die("%s", err.msg);
        m->cfg.dropout = o->dropout;
        return;
    }
    if (gpt_create(m, mc, &err) != 0) flags_fail("%s", err.msg);
    Rng init;
    rng_seed(&init, o->t.seed);
    gpt_init(m, &init);
}

// Then made, once no usage error can come: its first lines are printed
// before it allocates, which for a large run takes a while.
static void start_run(Run *r, const Options *o) {
    size_t load;
    GptConfig mc = new_config(r, o, &load);
    int B = o->t.batch / dist_size();   // this process's part of a batch
    int T = new_window(r, o, &mc);
    print_title(r->be);
    report_memory(r, o, &mc, B, T);
    Gpt m;
    new_model(r, o, &mc, &m);
    // (a task's run has no characters: its checkpoints name its tokenizer)
    Vocab vocab = {.size = r->corpus.vocab.size};
    vocab.chars = xmalloc((size_t)vocab.size * sizeof *vocab.chars);
    if (vocab.size > 0)
        memcpy(vocab.chars, r->corpus.vocab.chars,
               (size_t)vocab.size * sizeof *vocab.chars);
    Error err;
    if (gpt_train_init(&r->gpt, &m, &vocab, B, T, &err) != 0
        || gpt_train_split(&r->gpt, dist_rank(), dist_size(), &err) != 0)
        die("%s", err.msg);
    if (r->task)
        snprintf(r->gpt.tokenizer, sizeof r->gpt.tokenizer, "%s",
                 r->task->tokenizer);
    TrainModel tm = gpt_train_model(&r->gpt);
    if (trainer_init(&r->trainer, &tm, &o->t, &err) != 0)
        flags_fail("%s", err.msg);
}

// The program's first line, once, when no usage error can come any more.
static void print_title(const TrainBackend *be) {
    static bool done;
    if (!done) printf("== %s ==\n", be ? be->title : "Chapter 6: training");
    done = true;
}

// What the ids of the run saved in o->resume are, from its checkpoint's
// header, against this run's: chapter 1's characters, or the task's
// tokenizer. (Characters are then checked against --data's once loaded.)
static void check_saved_tokens(const Run *r, const Options *o) {
    char path[4096], name[CHECKPOINT_TOKENIZER_MAX];
    snprintf(path, sizeof path, "%s/model.safetensors", o->resume);
    Error err;
    if (checkpoint_tokenizer(path, name, &err) != 0) die("%s", err.msg);
    const char *want = r->task ? r->task->tokenizer : "";
    if (strcmp(name, want) != 0)
        die("%s holds a run on %s%s; ./%s trains on %s%s", o->resume,
            *name ? name : "characters", *name ? " tokens" : "",
            program(r->be), *want ? want : "characters",
            *want ? " tokens" : "");
}

// --resume's folder, before anything else is read: a run's, of the
// ids this run trains on.
static void check_resume_folder(const Run *r, const Options *o) {
    struct stat st;
    if (stat(o->resume, &st) != 0)
        die("--resume %s: %s (give the --out DIR of an earlier run)",
            o->resume, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", o->resume);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        flags_fail("--resume takes a run's folder, not a file: try "
                   "--resume %s", slash ? dir : ".");
    }
    check_saved_tokens(r, o);
}

static void resume_run(Run *r, const Options *o) {
    Error err;
    // the run's memory, from its files' headers, before they are read
    GptConfig mc;
    TrainConfig saved;
    size_t held;
    int T;
    if (gpt_resume_peek(o->resume, dist_size(), &mc, &saved, &held, &err)
        || gpt_train_window(&mc, &saved, &T, &err) != 0)
        die("%s", err.msg);
    check_memory(r, o, &mc, saved.batch / dist_size(), T, held, 0);
    if (gpt_trainer_resume(&r->trainer, &r->gpt, o->resume, dist_rank(),
                           dist_size(), &err) != 0)
        die("%s", err.msg);
    const Vocab *v = &r->gpt.vocab, *want = &r->corpus.vocab;
    if (!r->task
        && (v->size != want->size
            || memcmp(v->chars, want->chars,
                      (size_t)v->size * sizeof *v->chars) != 0))
        die("%s: the checkpoint's vocabulary is not the one of %s",
            o->resume, o->data);
    TrainConfig *c = &r->trainer.cfg;
    if (flags_given(&o->t.steps)) {   // a run may be extended
        if (o->t.steps < r->trainer.step)
            flags_fail("--steps %d: the run in %s is already at step %d",
                       o->t.steps, o->resume, r->trainer.step);
        c->steps = o->t.steps;
    }
    if (flags_given(&o->t.eval_every)) c->eval_every = o->t.eval_every;
    if (flags_given(&o->t.eval_iters)) c->eval_iters = o->t.eval_iters;
    print_title(r->be);
    report_line("resumed", "%s at step %d of %d", o->resume, r->trainer.step,
                c->steps);
    if (c->steps > c->decay_steps && c->decay_steps > c->warmup) {
        int from = c->decay_steps + 1 > r->trainer.step + 1
                       ? c->decay_steps + 1 : r->trainer.step + 1;
        report_line("schedule", "the saved cosine ends at step %d: steps %d "
                    "to %d run at its floor, lr %g", c->decay_steps, from,
                    c->steps, c->min_lr);
    }
}

// Hands the model to the backend, which replaces the trainer's model by
// its own, and gives that one the weights and the moments (zero, or the
// saved ones on --resume).
static void attach_backend(Run *r) {
    const TrainBackend *be = r->be;
    if (!be || !be->attach) return;
    TrainModel tm = r->trainer.model;
    Error err;
    if (be->attach(be->ctx, &r->gpt, &tm, &err) != 0) die("%s", err.msg);
    if (tm.num_params != r->trainer.model.num_params)
        die("%s: the backend's model has %zu parameters, the run %zu",
            program(be), tm.num_params, r->trainer.model.num_params);
    r->trainer.model = tm;
    if (tm.load) tm.load(tm.self, r->trainer.m, r->trainer.v);
}

// Brings the host copy of the weights up to date before it is read
// (samples): with a backend they live elsewhere and change there.
static void sync_host(Run *r) {
    TrainModel *tm = &r->trainer.model;
    if (tm->sync) tm->sync(tm->self, r->trainer.m, r->trainer.v);
}

// The backend's line ("GPU: ..."), or "" for the CPU.
static void describe(const Run *r, char *buf, size_t size) {
    buf[0] = 0;
    if (r->be && r->be->describe) r->be->describe(r->be->ctx, buf, size);
}

static void print_run(const Run *r, const Options *o) {
    const GptConfig *mc = &r->gpt.model.cfg;
    const TrainConfig *c = &r->trainer.cfg;
    int B = c->batch, T = r->gpt.T, n = r->threads.threads;
    char threads_text[64];
    if (r->threads.adaptive)   // settled and changed in the progress lines
        snprintf(threads_text, sizeof threads_text, "1 to %d threads, the "
                 "fastest as it runs", n);
    else
        snprintf(threads_text, sizeof threads_text, "%d thread%s", n,
                 n == 1 ? "" : "s");
    report_line("model", "%d layer%s, %d head%s, %d wide, block %d, "
                "dropout %g, bias %s: %zu parameters", mc->n_layer,
                mc->n_layer == 1 ? "" : "s", mc->n_head,
                mc->n_head == 1 ? "" : "s", mc->n_embd, mc->block_size,
                mc->dropout,
                mc->bias ? "true" : "false", r->gpt.model.num_params);
    char sched[96];
    lr_schedule_describe(sched, sizeof sched, c->steps, c->warmup,
                         c->decay_steps, c->lr, c->min_lr,
                         o->minutes > 0 && !o->decay_given);
    char steps[64];
    snprintf(steps, sizeof steps, o->minutes > 0 ? "up to %d steps (what "
             "fits in %g min)" : "%d steps", c->steps, o->minutes);
    report_line("training", "preset %s: batch %d x %d = %d tokens/step, "
                "%s, lr %g -> %g (%s), AdamW betas (%g, %g), weight decay "
                "%g, clip %g, %s", *o->resume ? "(resumed)"
                : o->preset, B, T, B * T, steps, c->lr, c->min_lr, sched,
                c->adamw.beta1, c->adamw.beta2, c->adamw.weight_decay,
                c->grad_clip, threads_text);
    char dev[256];
    describe(r, dev, sizeof dev);
    if (*dev) report_line("device", "%s", dev);
    if (dist_size() > 1)
        report_line("processes", "%d MPI ranks, %d sequences of each batch "
                    "apiece; their gradients are averaged by one all-reduce "
                    "of %zu floats (%.1f MB) a step", dist_size(),
                    B / dist_size(), r->trainer.model.num_params,
                    4e-6 * (double)r->trainer.model.num_params);
}

// ---- training --------------------------------------------------------------

static void print_id(int id, void *ctx) {
    const Vocab *v = ctx;
    char buf[4];
    fwrite(buf, 1, (size_t)utf8_encode(v->chars[id], buf), stdout);
}

// A sample from the model as it is now, n tokens after a newline (or
// the task's first id), each printed as it comes: by the backend's
// generate when it has one, else on the host copy.
static void show_sample(Run *r, int n, uint64_t seed) {
    if (n <= 0) return;
    const Vocab *v = &r->gpt.vocab;
    const TrainBackend *be = r->be;
    const TrainTask *task = r->task;
    TokenFn print = task ? task->print : print_id;
    void *pctx = task ? task->ctx : (void *)v;
    int *ids = xmalloc((size_t)(n + 1) * sizeof *ids);
    int nl = task ? -1 : vocab_id(v, '\n');
    ids[0] = task ? task->sample_start : nl >= 0 ? nl : 0;
    GenOptions g = sample_options(n, seed);
    Error err;
    printf("---- sample (temperature 0.8)\n");
    int rc;
    if (be && be->generate) {
        rc = be->generate(be->ctx, ids, 1, ids, &g, print, pctx, NULL, &err);
    } else {
        sync_host(r);
        rc = generate(&r->gpt.model, ids, 1, ids, &g, print, pctx, NULL,
                      &err);
    }
    if (task && task->print_end) task->print_end(task->ctx);
    if (rc != 0) printf("(sampling failed: %s)", err.msg);
    printf("\n----\n");
    free(ids);
}

// What the loop leaves for the report.
typedef struct {
    Curve curve;          // every evaluation's losses
    double *times;        // the time of each step
    int n_times, cap_times;
    double train_time, last_val;
    double start;         // time_now() when training began
    int exit_code;        // 0, 1 (a failed step) or 130 (Ctrl-C)
} Outcome;

// An evaluation: its losses printed, kept for the chart and logged as a
// row of the CSV; a sample (a third of the length) unless last.
static void evaluate_now(Run *r, const Options *o, FILE *log, Outcome *out,
                         bool last, bool *reached) {
    Trainer *t = &r->trainer;
    Error err;
    double tl, vl;
    if (evaluate(t, &r->corpus.train, 0, &tl, &err) != 0
        || evaluate(t, &r->corpus.val, 1, &vl, &err) != 0)
        die("%s", err.msg);
    out->last_val = vl;
    curve_add(&out->curve, t->step, tl, vl);
    printf("eval step %d: train %.4f, val %.4f\n", t->step, tl, vl);
    fflush(stdout);
    if (!last && !o->quiet && o->sample_chars / 3 > 0 && dist_rank() == 0) {
        show_sample(r, o->sample_chars / 3, (uint64_t)t->step);
    }
    // (a task's evaluation before its first step is where the run
    // starts, not where it stops)
    if (o->stop_at_val > 0 && vl <= o->stop_at_val && t->step > 0) {
        // the wall time, evaluations included (tests/bench/bench.py reads
        // this line, and train_torch.py writes it the same way)
        printf("reached val %.4f <= %.4f at step %d after %.2f s\n", vl,
               o->stop_at_val, t->step, time_now() - out->start);
        *reached = true;
    }
    if (log) fprintf(log, "%d,,%.6f,%.6f,,,\n", t->step, tl, vl);
}

// A task's new run starts where the model it loaded stands: its losses,
// and the sample that ends the run (the same seed), to compare with.
static void evaluate_first(Run *r, const Options *o, FILE *log,
                           Outcome *out, bool *reached) {
    evaluate_now(r, o, log, out, true, reached);
    if (!o->quiet && dist_rank() == 0) show_sample(r, o->sample_chars, 1);
}

static int cmp_double(const void *a, const void *b);

//> budget
// After the probe's steps: the median step time (the first four left out:
// caches and threads warm up), an evaluation's cost estimated as its
// forward passes at a third of a step each, and the step count that fits
// what is left of the budget, never more than asked.
static double median_of(const double *times, int n) {
    double *t = xmalloc((size_t)n * sizeof *t);
    memcpy(t, times, (size_t)n * sizeof *t);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    double m = t[n / 2];
    free(t);
    return m;
}

static void fit_budget(Run *r, const Options *o, const Outcome *out,
                       double elapsed, Progress *pr) {
    TrainConfig *c = &r->trainer.cfg;
    int n = out->n_times, skip = n > 8 ? 4 : 0;
    double step = median_of(out->times + skip, n - skip);
    double eval = 2.0 * c->eval_iters * step / 3;
    double per_step = step + (c->eval_every > 0 ? eval / c->eval_every : 0);
    double left = o->minutes * 60 - elapsed - eval;   // the final one too
    int fit = budget_steps(r->trainer.step, c->steps, per_step, left);
    if (fit == c->steps) {
        report_line("budget", "%.3f s a step here: all %d steps fit in %g "
                    "minute%s", step, c->steps, o->minutes,
                    o->minutes == 1 ? "" : "s");
        return;
    }
    int was = c->steps;
    c->steps = fit;
    if (!o->decay_given) c->decay_steps = c->steps;
    pr->total_steps = c->steps;
    report_line("budget", "%.3f s a step here: %d of %d steps fit in %g "
                "minute%s\n(--steps %d repeats this run)", step, c->steps,
                was, o->minutes, o->minutes == 1 ? "" : "s", c->steps);
}
//< budget

//> budget-again
// At each evaluation after that, the count is timed again on the last
// BUDGET_AGAIN steps: a machine that got busy (another program, a laptop
// on battery) makes the rest slower than the first steps said. When what
// is left would overrun the budget by more than a tenth, the count and
// the cosine's end come down to what fits now (never up: a run that got
// faster ends early, within its budget). Such a run is no longer the one
// --steps N trains: its cosine was cut short on the way.
enum { BUDGET_AGAIN = 20 };
static void refit_budget(Run *r, const Options *o, const Outcome *out,
                         double elapsed, Progress *pr) {
    TrainConfig *c = &r->trainer.cfg;
    int n = out->n_times < BUDGET_AGAIN ? out->n_times : BUDGET_AGAIN;
    double step = median_of(out->times + out->n_times - n, n);
    double eval = 2.0 * c->eval_iters * step / 3;
    double per_step = step + (c->eval_every > 0 ? eval / c->eval_every : 0);
    double left = o->minutes * 60 - elapsed - eval;
    int fit = budget_again(r->trainer.step, c->steps, per_step, left);
    if (fit == c->steps) return;
    int was = c->steps;
    c->steps = fit;
    if (!o->decay_given) c->decay_steps = c->steps;
    pr->total_steps = c->steps;
    report_line("budget", "steps got slower, %.3f s each now: %d of %d "
                "steps fit in %g minute%s", step, c->steps, was, o->minutes,
                o->minutes == 1 ? "" : "s");
}
//< budget-again

//> save-rank0
// Rank 0 writes the run for all: the ranks hold the same weights and
// moments, which the check below makes sure of before it is trusted.
static void save_checkpoint(Run *r, const Options *o) {
    Trainer *t = &r->trainer;   // (no backend: params are current)
    if (!dist_same(t->model.params, t->model.num_params)
        || !dist_same(t->m, t->model.num_params))
        die("step %d: the processes' weights differ (a bug, or unlike "
            "hardware): not saving", t->step);
    Error err;
    if (dist_rank() == 0 && trainer_save(t, o->out, &err) != 0)
        die("%s", err.msg);
}
//< save-rank0

static void train(Run *r, const Options *o, FILE *log, Outcome *out) {
    Trainer *t = &r->trainer;
    const TrainConfig *c = &t->cfg;
    double tokens = (double)c->batch * r->gpt.T;
    // grown as the steps run: --steps 1000000000 asks for no 8 GB up front
    out->cap_times = 1024;
    out->times = xmalloc((size_t)out->cap_times * sizeof *out->times);
    out->last_val = NAN;
    Progress pr;
    progress_start(&pr, stdout, c->steps, o->print_every);
    // mpirun hands rank 0 a terminal of its own whether or not its own
    // output goes to one: plain lines, which read well in both
    if (dist_with_mpi()) pr.tty = false;
    catch_sigint();
    prof_on = o->profile;
    // stop: the ranks agreed to stop after a Ctrl-C or SIGUSR1. The loop
    // reads it, never `interrupted` itself, which a signal may set on one
    // rank between the agreement and the next test of the loop.
    bool reached = false, stop = false;
    double start = time_now();
    out->start = start;
    if (r->task && !*o->resume) evaluate_first(r, o, log, out, &reached);
    while (t->step < c->steps && !reached && !stop) {
        StepResult s;
        Error err;
        double t0 = time_now();
        if (train_step(t, &r->corpus.train, &s, &err) != 0) {
            // (the loss and the norm are the whole batch's: every rank
            // fails this step, and rank 0 says so)
            progress_end(&pr);
            if (dist_rank() == 0)
                fprintf(stderr, "%s: error: %s\n", error_progname(), err.msg);
            if (*o->out && dist_rank() == 0)
                fprintf(stderr, "%s: the last good checkpoint in %s is "
                        "left as it was\n", error_progname(), o->out);
            out->exit_code = 1;
            break;
        }
        double dt = time_now() - t0;
        out->train_time += dt;
        if (out->n_times == out->cap_times)
            out->times = xrealloc(out->times, (size_t)(out->cap_times *= 2)
                                              * sizeof *out->times);
        out->times[out->n_times++] = dt;
        if (autothreads_step(&r->threads, dt, tokens) && !o->quiet
            && dist_rank() == 0) {
            char how[96];
            autothreads_describe(&r->threads, t->step, how, sizeof how);
            progress_end(&pr);
            report_line("threads", "%s", how);
        }
        if (log)
            fprintf(log, "%d,%.6f,,,%.6g,%.6f,%.0f\n", t->step, s.loss,
                    s.lr, s.grad_norm, tokens / dt);
        if (!o->quiet) {
            char extra[96];
            snprintf(extra, sizeof extra, "loss %.4f  lr %.1e  norm %#.4g",
                     s.loss, s.lr, s.grad_norm);
            progress_update(&pr, t->step, tokens, dt, extra);
        }
        if (o->minutes > 0 && t->step == budget_probe(c)
            && t->step < c->steps) {
            progress_end(&pr);
            fit_budget(r, o, out, time_now() - start, &pr);
            // every rank must run as many steps: rank 0's count stands
            dist_broadcast_int(&t->cfg.steps);
            dist_broadcast_int(&t->cfg.decay_steps);
            pr.total_steps = c->steps;
        }
        bool last = t->step == c->steps;
        prof_on = false;   // evaluations and samples are not profiled
        if ((c->eval_every > 0 && t->step % c->eval_every == 0) || last) {
            progress_end(&pr);
            evaluate_now(r, o, log, out, last, &reached);
            if (o->minutes > 0 && !last && !reached
                && t->step > budget_probe(c)) {
                refit_budget(r, o, out, time_now() - start, &pr);
                dist_broadcast_int(&t->cfg.steps);   // rank 0's stands
                dist_broadcast_int(&t->cfg.decay_steps);
                pr.total_steps = c->steps;
            }
        }
        // a Ctrl-C reaches the ranks at different steps: all stop at once
        stop = dist_any(interrupted);
        bool save = last || reached || stop
                    || (o->save_every > 0 && t->step % o->save_every == 0);
        if (*o->out && save) save_checkpoint(r, o);
        prof_on = o->profile;
    }
    prof_on = false;
    progress_end(&pr);
    release_sigint();
    // a new run of --steps 0 (it evaluates and samples what it made or
    // loaded) saves that too, as its report says
    if (*o->out && c->steps == 0 && t->step == 0 && out->exit_code == 0)
        save_checkpoint(r, o);
    if (stop) {
        out->exit_code = 130;   // the shell's code for a Ctrl-C
        if (*o->out)
            printf("interrupted at step %d; saved in %s: ./%s --resume %s "
                   "goes on from here\n", t->step, o->out, command(r->be),
                   o->out);
        else
            printf("interrupted at step %d; nothing saved (--out DIR keeps "
                   "checkpoints)\n", t->step);
    }
}

// ---- the report ------------------------------------------------------------

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double peak_mib(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024.0;   // Linux reports KiB
}

static void print_summary(const Run *r, Outcome *out) {
    if (out->n_times == 0) return;
    // the median step time, leaving out the first few (warm-up)
    int n = out->n_times, skip = n > 8 ? 4 : 0;
    qsort(out->times + skip, (size_t)(n - skip), sizeof *out->times,
          cmp_double);
    double med = out->times[skip + (n - skip) / 2];
    char val[32] = "none";   // no evaluation ran (a failed step)
    if (!isnan(out->last_val)) snprintf(val, sizeof val, "%.4f",
                                        out->last_val);
    char dev[256];
    describe(r, dev, sizeof dev);
    // two lines (three on a GPU) that tests/bench/bench.py reads, and
    // PyTorch's train_torch.py writes the same way
    printf("summary: steps %d, %.2f s training, %.0f tokens/s (median of "
           "steps %d..)\n         val %s, peak memory %.1f MiB\n",
           r->trainer.step, out->train_time,
           r->trainer.cfg.batch * r->gpt.T / med, skip + 1, val, peak_mib());
    if (*dev) fold_print(stdout, dev, printf("%9s", ""), 9, REPORT_WIDTH);
    if (dist_size() > 1)   // rank 0's share: the others' is much the same
        printf("all-reduce: %.2f ms a step, %.1f%% of the training time, "
               "on each of %d ranks\n", 1e3 * dist_reduce_seconds() / n,
               100 * dist_reduce_seconds() / out->train_time, dist_size());
}

//> profile-report
// Where a step's time went, by kind of work, and what its memory holds:
// the sizes come from the same tables the allocation used.
static void show_profile(const Run *r, int steps) {
    double total = 0;
    for (int k = 0; k < PROF_KINDS; k++)
        total += prof_seconds[k][0] + prof_seconds[k][1];
    if (steps < 1 || total <= 0) return;
    report_line("profile", "time per step by kind of work, over %d steps "
                "(wall time)", steps);
    printf("  %-22s %10s %11s %10s %6s\n", "kind", "forward", "backward",
           "total", "share");
    for (int k = 0; k < PROF_KINDS; k++) {
        double f = prof_seconds[k][0], b = prof_seconds[k][1];
        printf("  %-22s %7.2f ms %8.2f ms %7.2f ms %5.1f%%\n",
               prof_name((ProfKind)k), 1e3 * f / steps, 1e3 * b / steps,
               1e3 * (f + b) / steps, 100 * (f + b) / total);
    }
    const GptConfig *c = &r->gpt.model.cfg;
    int B = r->gpt.B;   // this process's part of a batch
    double mib = sizeof(float) / 1048576.0;
    double n = (double)r->gpt.model.num_params;
    double acts = (double)gpt_acts_floats(c, B, r->gpt.T);
    report_line("memory", "parameters %.1f MiB, gradients %.1f MiB, AdamW "
                "moments %.1f MiB, activations %.1f MiB (batch %d x %d): "
                "%.0fx the parameters; they grow with batch x block (the "
                "attention weights with block^2)", n * mib, n * mib,
                2 * n * mib, acts * mib, B, r->gpt.T, acts / n);
}
//< profile-report

static void report(Run *r, const Options *o, Outcome *out) {
    print_summary(r, out);
    if (out->exit_code == 0 && dist_rank() == 0) {
        curve_draw(&out->curve, stdout);
        show_sample(r, o->sample_chars, 1);
        if (*o->out)
            report_line("saved", "%s/model.safetensors (%s loads it)",
                        o->out, r->task ? r->task->reader
                                        : "./ch5 --checkpoint");
    }
    if (o->profile) show_profile(r, out->n_times);
    if (o->plot_data && dist_rank() == 0)
        profile_csv_write(o->plot_data, out->n_times);
}

// ---- the program -----------------------------------------------------------

// The CSV's rows are buffered: a write that failed (a full disk) shows
// at the latest when the file is closed, and fails the run there.
static void log_close(FILE *log, const char *path) {
    bool failed = ferror(log) != 0;
    int saved = errno;
    if (fclose(log) != 0) failed = true, saved = errno;
    if (failed) die("--log %s: cannot write it: %s", path, strerror(saved));
}

// --threads 0: the count that runs fastest (autothreads.h), from one to a
// thread per core this process may run on (taskset, or mpirun's binding
// of each rank to its cores, narrow the machine's). With several ranks on
// one machine: no more threads in all than cores, and fixed (each rank's
// step waits for the others', so no rank can time its own). A backend
// (the GPU's) keeps a fixed count too: its steps do not run on these
// threads. A count given is capped at the cores, as in every program
// (rank 0 says so).
static void run_threads(AutoThreads *a, int asked, bool fixed) {
    if (asked > 0) {
        autothreads_init(a, threads_cap(asked, dist_rank() == 0), 0);
        return;
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = threads_cores();
    int share = online > 0 ? (int)(online / dist_local_size()) : 1;
    if (n > share) n = share;
    if (n < 1) n = 1;
    autothreads_init(a, fixed ? n : 0, n);
}

// The task's last word on a run that ended well and saved into --out
// (./ch9: a copy in Hugging Face's layout). A failure fails the run.
static void finish_task(Run *r, const Options *o, Outcome *out) {
    const TrainTask *task = r->task;
    Error err;
    if (!task || !task->finish) return;
    if (task->finish(task->ctx, &r->gpt.model, o->out, &err) != 0) {
        fprintf(stderr, "%s: error: %s\n", error_progname(), err.msg);
        out->exit_code = 1;
    }
}

int train_main(int argc, char **argv, const TrainBackend *be) {
    error_set_progname(argv[0]);
    dist_init();   // first: under mpirun only rank 0 prints, even --help
    Options o;
    parse_flags(&o, argc, argv, be);
    Run r = {.be = be, .task = task_of(be)};
    run_threads(&r.threads, o.threads, be || dist_size() > 1);
    if (be && be->before) {
        int rc = be->before(be->ctx);
        if (rc != -1) return rc;
    }

    Error err;
    // an --out folder that holds another run is not replaced unasked
    if (dist_rank() == 0 && *o.out
        && checkpoint_dir_claim(o.out, o.resume, o.overwrite, &err) != 0)
        flags_fail("%s", err.msg);
    if (*o.resume) check_resume_folder(&r, &o);
    const TrainTask *task = r.task;
    if (task && task->open(task->ctx, *o.resume ? o.resume : NULL, &err))
        die("%s", err.msg);
    if (load_corpus(&r, &o, &err) != 0) die("%s", err.msg);
    if (*o.resume) resume_run(&r, &o);
    else plan_run(&r, &o);   // made below, after the output's checks
    if (*o.resume) check_corpus(&r, &o, r.gpt.T);
    // rank 0 alone writes: the checkpoints and the log
    bool writer = dist_rank() == 0;
    if (writer && *o.out && checkpoint_dir_check(o.out, &err) != 0)
        die("%s", err.msg);
    // a task's run keeps its tokenizer's files beside its checkpoints
    if (writer && *o.out && task && strcmp(o.out, o.resume) != 0
        && task->save_files(task->ctx, o.out, &err) != 0)
        die("%s", err.msg);
    if (writer && o.plot_data) profile_csv_check(o.plot_data, o.profile);
    FILE *log = NULL;
    if (writer && *o.log) {   // before anything is printed: a bad path
                              // fails first
        log = fopen(o.log, *o.resume ? "a" : "w");
        if (!log) die("--log %s: cannot write it: %s", o.log, strerror(errno));
        // a step's row has the loss of its batch; an evaluation's row the
        // losses averaged over --eval-iters batches of each split
        if (!*o.resume)
            fprintf(log, "step,batch_loss,eval_train_loss,eval_val_loss,lr,"
                         "grad_norm,tokens_per_s\n");
        // a full disk (or /dev/full) fails here, before the run
        if (fflush(log) != 0)
            die("--log %s: cannot write it: %s", o.log, strerror(errno));
    }
    if (!*o.resume) start_run(&r, &o);
    // Dropout: rank 0 draws its masks as one process would, every other
    // rank from a stream of its own (the same masks on every part of a
    // batch would tie the parts together).
    if (dist_rank() > 0)
        rng_seed(&r.trainer.drop_rng, r.trainer.cfg.seed + 1
                 + 0x9E3779B97F4A7C15u * (uint64_t)dist_rank()
                 + (uint64_t)r.trainer.step);
    attach_backend(&r);
    print_title(be);
    print_run(&r, &o);
    // an output that cannot be written (a full disk) stops the run now,
    // not after it trained to the end
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout))
        die("cannot write the output%s%s", errno ? ": " : "",
            errno ? strerror(errno) : "");

    Outcome out = {0};
    train(&r, &o, log, &out);
    if (log) log_close(log, o.log);
    report(&r, &o, &out);

    free(out.times);
    curve_free(&out.curve);
    if (r.task) sync_host(&r);   // (its finish reads the host copy)
    if (be && be->detach) be->detach(be->ctx);
    trainer_free(&r.trainer);
    if (out.exit_code == 0 && *o.out && dist_rank() == 0)
        finish_task(&r, &o, &out);
    gpt_train_free(&r.gpt);
    corpus_free(&r.corpus);
    return out.exit_code;
}
