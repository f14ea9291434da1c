// ch6 - training the GPT on Tiny Shakespeare: AdamW with warmup and a
// cosine schedule, gradient clipping, evaluation, samples, a CSV log,
// checkpoints that resume exactly, and a profile of where the time goes.
//
//   ./ch6                          the default recipe: a few minutes here
//   ./ch6 --preset seed            seed 001's run (5000 steps of 64 x 128)
//   ./ch6 --preset nanogpt         nanoGPT's shakespeare-char recipe
//   ./ch6 --out run1 --save-every 500     checkpoints in run1/
//   ./ch6 --resume run1            continue it, bit for bit
//   ./ch6 --steps 50 --profile     time and memory by operation
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <unistd.h>

#include "checkpoint.h"
#include "dataset.h"
#include "error.h"
#include "flags.h"
#include "generate.h"
#include "mem.h"
#include "profile.h"
#include "progress.h"
#include "threads.h"
#include "timer.h"
#include "train.h"
#include "utf8.h"

// ---- presets ---------------------------------------------------------------

// Every setting of a run. A flag left at its "unset" value (-1, or "" for
// strings) takes the preset's value, or on --resume the saved run's.
typedef struct {
    const char *name, *about;
    int layers, heads, embd, block, bias;
    float dropout;
    TrainConfig t;
} Preset;

//> presets
static const Preset PRESETS[] = {
    // measured on 2 cores: val 1.7228 after 204 s of training steps
    // (3 min 38 s with evaluations and samples) at 17,400 tokens/s, the
    // slower of this machine's two speeds; 1.79 at step 1400
    {"default", "this machine's recipe: val <= 1.8 in a few minutes on "
     "2 cores", 4, 4, 128, 128, 0, 0.0f,
     {.batch = 16, .steps = 1800, .lr = 2e-3f, .min_lr = 2e-4f,
      .warmup = 100, .decay_steps = 1800, .adamw = {0.9f, 0.99f, 1e-8f, 0.1f},
      .grad_clip = 1.0f, .eval_every = 200, .eval_iters = 20, .seed = 1337}},
    {"seed", "seed 001's run: 4 layers, 4 heads, 128 wide, block 128, batch "
     "64, AdamW 3e-4, 5000 steps", 4, 4, 128, 128, 0, 0.0f,
     {.batch = 64, .steps = 5000, .lr = 3e-4f, .min_lr = 3e-4f,
      .warmup = 0, .decay_steps = 5000, .adamw = {0.9f, 0.999f, 1e-8f, 0.01f},
      .grad_clip = 0.0f, .eval_every = 500, .eval_iters = 50, .seed = 1337}},
    {"nanogpt", "nanoGPT's shakespeare-char: 6 layers, 6 heads, 384 wide, "
     "block 256, batch 64, dropout 0.2, lr 1e-3", 6, 6, 384, 256, 0, 0.2f,
     {.batch = 64, .steps = 5000, .lr = 1e-3f, .min_lr = 1e-4f,
      .warmup = 100, .decay_steps = 5000, .adamw = {0.9f, 0.99f, 1e-8f, 0.1f},
      .grad_clip = 1.0f, .eval_every = 250, .eval_iters = 200,
      .seed = 1337}},
};
//< presets

static const Preset *find_preset(const char *name) {
    for (size_t i = 0; i < sizeof PRESETS / sizeof PRESETS[0]; i++)
        if (strcmp(PRESETS[i].name, name) == 0) return &PRESETS[i];
    return NULL;
}

#define PICK(flag, preset) ((flag) >= 0 ? (flag) : (preset))

// ---- output ----------------------------------------------------------------

typedef struct {
    int *steps;             // the steps of the evaluations
    double *train, *val;    // their losses
    int n, cap;
} Curve;

static void curve_add(Curve *c, int step, double train, double val) {
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->steps = xrealloc(c->steps, (size_t)c->cap * sizeof *c->steps);
        c->train = xrealloc(c->train, (size_t)c->cap * sizeof *c->train);
        c->val = xrealloc(c->val, (size_t)c->cap * sizeof *c->val);
    }
    c->steps[c->n] = step, c->train[c->n] = train, c->val[c->n] = val;
    c->n++;
}

// The eval losses as a small text chart: '*' train, 'o' val ('@' both).
static void draw_chart(const Curve *c) {
    enum { W = 64, H = 14 };
    if (c->n < 2) return;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < c->n; i++) {
        lo = fmin(lo, fmin(c->train[i], c->val[i]));
        hi = fmax(hi, fmax(c->train[i], c->val[i]));
    }
    if (hi - lo < 1e-9) hi = lo + 1;
    char grid[H][W + 1];
    memset(grid, ' ', sizeof grid);
    int last = c->steps[c->n - 1], first = c->steps[0];
    for (int i = 0; i < c->n; i++) {
        int col = last > first ? (int)((double)(c->steps[i] - first)
                                       / (last - first) * (W - 1)) : 0;
        for (int k = 0; k < 2; k++) {
            double y = k ? c->val[i] : c->train[i];
            int row = (int)((hi - y) / (hi - lo) * (H - 1) + 0.5);
            char *cell = &grid[row][col], mark = k ? 'o' : '*';
            *cell = (*cell == ' ' || *cell == mark) ? mark : '@';
        }
    }
    printf("loss curve  * train  o val  (evaluations from step %d to %d)\n",
           first, last);
    for (int r = 0; r < H; r++) {
        grid[r][W] = 0;
        double y = hi - (hi - lo) * r / (H - 1);
        printf("  %6.3f |%s\n", y, grid[r]);
    }
    printf("         +");
    for (int i = 0; i < W; i++) putchar('-');
    printf("\n          %-10d%*d\n", first, W - 10, last);
}

typedef struct {
    const Vocab *vocab;
} Printer;

static void print_id(int id, void *ctx) {
    const Printer *p = ctx;
    char buf[4];
    fwrite(buf, 1, (size_t)utf8_encode(p->vocab->chars[id], buf), stdout);
}

// A sample from the model as it is now, starting from a newline.
static void show_sample(const Gpt *m, const Vocab *v, int chars,
                        uint64_t seed) {
    if (chars <= 0) return;
    int *ids = xmalloc((size_t)(chars + 1) * sizeof *ids);
    int nl = vocab_id(v, '\n');
    ids[0] = nl >= 0 ? nl : 0;
    GenOptions o = {.max_new_tokens = chars, .sample = {0.8f, 0, 1.0f},
                    .seed = seed, .use_cache = true, .window = WINDOW_SLIDE};
    Printer p = {v};
    Error err;
    printf("---- sample (temperature 0.8)\n");
    if (generate(m, ids, 1, ids, &o, print_id, &p, NULL, &err) != 0)
        printf("(sampling failed: %s)", err.msg);
    printf("\n----\n");
    free(ids);
}

//> profile-report
// The activations' memory in floats, as gpt_acts_alloc lays it out and
// the forward pass touches it: per layer the block's ln_1, res1 and ln2
// (3 BTC; res2 belongs to Post-LN and is never touched here), the
// attention's q, k, v and y (4 BTC) and the B NH T^2 weights, the FFN's h
// and a at 4C (8 BTC) and the two dropout masks (2 BTC); once, the
// attention's qkv and yh (4 BTC), which every layer shares, and the masks
// too when dropout is 0; one backward scratch for all layers; and the
// model's own buffers (embeddings, the stream after every layer, ln_f,
// and logits with their gradient at B T V).
static double activation_floats(const GptConfig *c, int B, int T) {
    double bt = (double)B * T, btc = bt * c->n_embd, L = c->n_layer;
    double att = (double)B * c->n_head * T * T;
    double masks = 2 * btc * (c->dropout > 0 ? L : 1);
    double layer = 15 * btc + 4 * bt + att;
    double scratch = 20 * btc + att;
    double model = (5 + L) * btc + 2 * bt + 2 * bt * c->vocab_size;
    return L * layer + masks + 4 * btc + scratch + model;
}

static void show_profile(const Trainer *t, int steps) {
    double total = 0;
    for (int k = 0; k < PROF_KINDS; k++)
        total += prof_seconds[k][0] + prof_seconds[k][1];
    if (steps < 1 || total <= 0) return;
    printf("profile     time per step by operation, over %d steps "
           "(wall time)\n", steps);
    printf("  %-34s %9s %9s %9s %6s\n", "operation", "forward", "backward",
           "total", "share");
    double attn = 0, ffn = 0;
    for (int k = 0; k < PROF_KINDS; k++) {
        double f = prof_seconds[k][0], b = prof_seconds[k][1];
        printf("  %-34s %7.2f ms %7.2f ms %7.2f ms %5.1f%%\n",
               prof_name((ProfKind)k), 1e3 * f / steps, 1e3 * b / steps,
               1e3 * (f + b) / steps, 100 * (f + b) / total);
        if (k == PROF_MATMUL || k == PROF_ATTENTION || k == PROF_MATMUL)
            attn += f + b;
        if (k == PROF_MATMUL || k == PROF_ELEMENTWISE || k == PROF_MATMUL)
            ffn += f + b;
    }
    printf("  attention (c_attn + core + c_proj) %.1f%%, FFN (c_fc + GELU "
           "+ c_proj) %.1f%% of the step\n", 100 * attn / total,
           100 * ffn / total);
    const GptConfig *c = &t->model.cfg;
    double mib = 4.0 / (1 << 20), n = (double)t->model.num_params;
    double acts = activation_floats(c, t->cfg.batch, c->block_size);
    printf("memory      parameters %.1f MiB, gradients %.1f MiB, AdamW "
           "moments %.1f MiB, activations %.1f MiB (batch %d x %d)\n",
           n * mib, n * mib, 2 * n * mib, acts * mib, t->cfg.batch,
           c->block_size);
    printf("            the activations are %.0fx the parameters: they "
           "grow with batch x block (and the attention weights with "
           "block^2), the parameters do not\n", acts / n);
}
//< profile-report

static double peak_mib(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024.0;   // Linux reports KiB
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// ---- main ------------------------------------------------------------------

int main(int argc, char **argv) {
    const char *preset_name = "default", *data = "data/tinyshakespeare.txt";
    const char *out = "", *resume = "", *log_path = "";
    int layers = -1, heads = -1, embd = -1, block = -1, bias = -1;
    int batch = -1, steps = -1, warmup = -1, decay_steps = -1;
    int eval_every = -1, eval_iters = -1, save_every = 0, threads = 0;
    int sample_chars = 300;
    float dropout = -1, lr = -1, min_lr = -1, beta1 = -1, beta2 = -1;
    float weight_decay = -1, grad_clip = -1, stop_at_val = 0;
    uint64_t seed = 0;
    bool quiet = false, profile = false;
    Flag flags[] = {
        {"preset", FLAG_STRING, &preset_name,
         "default, seed or nanogpt; the flags below override it"},
        {"layers", FLAG_INT, &layers, "n_layer (-1: the preset's)"},
        {"heads", FLAG_INT, &heads, "n_head"},
        {"embd", FLAG_INT, &embd, "n_embd"},
        {"block", FLAG_INT, &block, "block_size: context length"},
        {"bias", FLAG_INT, &bias, "1: biases in Linear and LayerNorm"},
        {"dropout", FLAG_FLOAT, &dropout, "dropout in training"},
        {"batch", FLAG_INT, &batch, "sequences per step"},
        {"steps", FLAG_INT, &steps, "steps of the whole run"},
        {"lr", FLAG_FLOAT, &lr, "peak learning rate"},
        {"min-lr", FLAG_FLOAT, &min_lr, "learning rate at the end"},
        {"warmup", FLAG_INT, &warmup, "steps of linear warmup"},
        {"decay-steps", FLAG_INT, &decay_steps,
         "the cosine reaches min-lr at this step"},
        {"beta1", FLAG_FLOAT, &beta1, "AdamW beta1"},
        {"beta2", FLAG_FLOAT, &beta2, "AdamW beta2"},
        {"weight-decay", FLAG_FLOAT, &weight_decay,
         "AdamW weight decay (2-D weights only)"},
        {"grad-clip", FLAG_FLOAT, &grad_clip, "global norm limit; 0 = off"},
        {"eval-every", FLAG_INT, &eval_every,
         "steps between evaluations; 0 = only at the end"},
        {"eval-iters", FLAG_INT, &eval_iters,
         "batches of train and val per evaluation"},
        {"seed", FLAG_U64, &seed, "seed (0: the preset's, 1337)"},
        {"threads", FLAG_INT, &threads, "threads (0: one per core)"},
        {"data", FLAG_STRING, &data, "UTF-8 text to train on (90% train)"},
        {"out", FLAG_STRING, &out, "save checkpoints in this folder"},
        {"save-every", FLAG_INT, &save_every,
         "steps between checkpoints (0: only at the end)"},
        {"resume", FLAG_STRING, &resume,
         "continue the run saved in this folder"},
        {"log", FLAG_STRING, &log_path, "write a CSV row per step here"},
        {"stop-at-val", FLAG_FLOAT, &stop_at_val,
         "stop at the first evaluation with val loss <= this"},
        {"sample-chars", FLAG_INT, &sample_chars,
         "characters sampled at each evaluation and at the end"},
        {"profile", FLAG_BOOL, &profile,
         "time and memory by operation at the end"},
        {"quiet", FLAG_BOOL, &quiet, "no per-step lines"},
    };
    flags_parse(argc, argv, flags, sizeof flags / sizeof flags[0],
                "Chapter 6: train the GPT on Tiny Shakespeare.");
    const Preset *p = find_preset(preset_name);
    if (!p) flags_fail("--preset must be default, seed or nanogpt, got '%s'",
                       preset_name);
    if (save_every < 0 || sample_chars < 0 || threads < 0)
        flags_fail("--save-every, --sample-chars and --threads must be >= "
                   "0");
    // -1 means "the preset's value"; any other negative is a mistake
    const struct { const char *name; double v; } unset[] = {
        {"layers", layers}, {"heads", heads}, {"embd", embd},
        {"block", block}, {"bias", bias}, {"dropout", dropout},
        {"batch", batch}, {"steps", steps}, {"lr", lr}, {"min-lr", min_lr},
        {"warmup", warmup}, {"decay-steps", decay_steps}, {"beta1", beta1},
        {"beta2", beta2}, {"weight-decay", weight_decay},
        {"grad-clip", grad_clip}, {"eval-every", eval_every},
        {"eval-iters", eval_iters},
    };
    for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++)
        if (unset[i].v < 0 && unset[i].v != -1)
            flags_fail("--%s must be >= 0, or -1 for the preset's value "
                       "(got %g)", unset[i].name, unset[i].v);
    if (threads == 0) threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    threads_set(threads > 0 ? threads : 1);

    Error err;
    Corpus corpus;
    if (corpus_load(&corpus, data, &err) != 0) die("%s", err.msg);
    Trainer t;
    Vocab vocab = {0};
    if (*resume) {
        // The saved run fixes the model, the optimiser and the schedule;
        // a flag that would change them is an error, not silently ignored.
        // --steps extends the run (the cosine keeps its saved end), and
        // evaluation, saving and output may change freely.
        const struct { const char *name; bool set; } fixed[] = {
            {"preset", strcmp(preset_name, "default") != 0},
            {"layers", layers >= 0}, {"heads", heads >= 0},
            {"embd", embd >= 0}, {"block", block >= 0}, {"bias", bias >= 0},
            {"dropout", dropout >= 0}, {"batch", batch >= 0},
            {"lr", lr >= 0}, {"min-lr", min_lr >= 0}, {"warmup", warmup >= 0},
            {"decay-steps", decay_steps >= 0}, {"beta1", beta1 >= 0},
            {"beta2", beta2 >= 0}, {"weight-decay", weight_decay >= 0},
            {"grad-clip", grad_clip >= 0}, {"seed", seed != 0},
        };
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            if (fixed[i].set)
                flags_fail("--%s cannot change on --resume: the run saved "
                           "in %s fixes it (start a new run to change it)",
                           fixed[i].name, resume);
        if (!*out) out = resume;   // keep saving where the run lives
        if (trainer_resume(&t, resume, &vocab, &err) != 0) die("%s",
                                                                err.msg);
        if (vocab.size != corpus.vocab.size
            || memcmp(vocab.chars, corpus.vocab.chars,
                      (size_t)vocab.size * sizeof *vocab.chars) != 0)
            die("%s: the checkpoint's vocabulary is not the one of %s",
                resume, data);
        if (steps >= 0 && steps < t.step)
            flags_fail("--steps %d: the run in %s is already at step %d",
                       steps, resume, t.step);
        if (eval_iters == 0) flags_fail("--eval-iters must be >= 1");
        if (steps >= 0) t.cfg.steps = steps;   // a run may be extended
        if (eval_every >= 0) t.cfg.eval_every = eval_every;
        if (eval_iters > 0) t.cfg.eval_iters = eval_iters;
        printf("resumed     %s at step %d of %d\n", resume, t.step,
               t.cfg.steps);
    } else {
        GptConfig mc = {.vocab_size = corpus.vocab.size,
                        .block_size = PICK(block, p->block),
                        .n_layer = PICK(layers, p->layers),
                        .n_head = PICK(heads, p->heads),
                        .n_embd = PICK(embd, p->embd),
                        .n_ffn = gpt_ffn_width(PICK(embd, p->embd)),
                        .dropout = PICK(dropout, p->dropout),
                        .bias = PICK(bias, p->bias) != 0,
                        .positional = POS_LEARNED};
        TrainConfig tc = p->t;
        tc.batch = PICK(batch, tc.batch);
        tc.steps = PICK(steps, tc.steps);
        tc.lr = PICK(lr, tc.lr);
        tc.min_lr = PICK(min_lr, tc.min_lr);
        tc.warmup = PICK(warmup, tc.warmup);
        tc.decay_steps = decay_steps >= 0 ? decay_steps
                         : steps >= 0 ? tc.steps : tc.decay_steps;
        tc.adamw.beta1 = PICK(beta1, tc.adamw.beta1);
        tc.adamw.beta2 = PICK(beta2, tc.adamw.beta2);
        tc.adamw.weight_decay = PICK(weight_decay, tc.adamw.weight_decay);
        tc.grad_clip = PICK(grad_clip, tc.grad_clip);
        tc.eval_every = PICK(eval_every, tc.eval_every);
        tc.eval_iters = PICK(eval_iters, tc.eval_iters);
        if (seed) tc.seed = seed;
        if (!(tc.lr > 0) || tc.min_lr < 0 || tc.adamw.beta1 >= 1
            || tc.adamw.beta2 >= 1)
            flags_fail("need lr > 0, min-lr >= 0 and betas below 1");
        Gpt m;
        if (gpt_create(&m, &mc, &err) != 0) flags_fail("%s", err.msg);
        Rng init;
        rng_seed(&init, tc.seed);
        gpt_init(&m, &init);
        if (trainer_init(&t, &m, &tc, &err) != 0) flags_fail("%s", err.msg);
        vocab.size = corpus.vocab.size;
        vocab.chars = xmalloc((size_t)vocab.size * sizeof *vocab.chars);
        memcpy(vocab.chars, corpus.vocab.chars,
               (size_t)vocab.size * sizeof *vocab.chars);
    }
    const GptConfig *mc = &t.model.cfg;
    const TrainConfig *c = &t.cfg;
    int B = c->batch, T = mc->block_size;
    printf("model       %d layers, %d heads, %d wide, block %d, dropout %g, "
           "bias %s: %zu parameters\n", mc->n_layer, mc->n_head,
           mc->n_embd, T, mc->dropout, mc->bias ? "true" : "false",
           t.model.num_params);
    char sched[96];
    if (c->min_lr == c->lr && c->warmup == 0)
        snprintf(sched, sizeof sched, "constant");
    else if (c->steps <= c->warmup)   // the run ends inside its warmup
        snprintf(sched, sizeof sched, "warmup %d: the run ends before the "
                 "peak, no cosine", c->warmup);
    else
        snprintf(sched, sizeof sched, "warmup %d, cosine to step %d",
                 c->warmup, c->decay_steps);
    printf("training    preset %s: batch %d x %d = %d tokens/step, %d "
           "steps, lr %g -> %g (%s), AdamW betas (%g, %g), weight decay "
           "%g, clip %g, %d thread%s\n", *resume ? "(resumed)" : p->name,
           B, T, B * T, c->steps, c->lr, c->min_lr, sched, c->adamw.beta1,
           c->adamw.beta2, c->adamw.weight_decay, c->grad_clip, threads,
           threads == 1 ? "" : "s");

    // A folder that cannot take checkpoints should fail now, not after
    // the run it was meant to save.
    if (*out) {
        struct stat st;
        if ((mkdir(out, 0777) != 0 && errno != EEXIST)
            || access(out, W_OK) != 0)
            die("cannot save checkpoints in %s: %s", out, strerror(errno));
        if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode))
            die("cannot save checkpoints in %s: not a folder", out);
    }
    FILE *log = NULL;
    if (*log_path) {
        log = fopen(log_path, *resume ? "a" : "w");
        if (!log) die("cannot write %s", log_path);
        if (!*resume)
            fprintf(log, "step,train_loss,val_loss,lr,grad_norm,"
                         "tokens_per_s\n");
    }
    Curve curve = {0};
    int left = c->steps - t.step;
    double *times = xmalloc((size_t)(left > 0 ? left : 1) * sizeof *times);
    int n_times = 0;
    bool tty = isatty(fileno(stdout)) && !quiet;
    prof_on = profile;
    double t_start = time_now(), train_time = 0, last_val = NAN;
    int exit_code = 0;
    bool reached = false;
    while (t.step < c->steps) {
        StepResult r;
        double t0 = time_now();
        if (train_step(&t, &corpus.train, &r, &err) != 0) {
            if (tty) printf("\n");
            fprintf(stderr, "%s: error: %s\n", error_progname(), err.msg);
            if (*out)
                fprintf(stderr, "%s: the last good checkpoint in %s is "
                        "left as it was\n", error_progname(), out);
            exit_code = 1;
            break;
        }
        double dt = time_now() - t0;
        train_time += dt;
        times[n_times++] = dt;
        double tps = B * T / dt;
        if (log)
            fprintf(log, "%d,%.6f,,%.6g,%.6f,%.0f\n", t.step, r.loss, r.lr,
                    r.grad_norm, tps);
        if (!quiet) {
            char eta[32];
            format_duration(train_time / n_times * (c->steps - t.step), eta,
                            sizeof eta);
            printf("%sstep %d/%d | loss %.4f | lr %.2e | norm %.4f | %.1f ms "
                   "| %.0f tok/s | ETA %s%s", tty ? "\r\033[K" : "", t.step,
                   c->steps, r.loss, r.lr, r.grad_norm, 1e3 * dt, tps, eta,
                   tty ? "" : "\n");
            fflush(stdout);
        }
        bool last = t.step == c->steps;
        prof_on = false;   // evaluations and samples are not profiled
        if ((c->eval_every > 0 && t.step % c->eval_every == 0) || last) {
            double tl, vl;
            if (evaluate(&t, &corpus.train, 0, &tl, &err) != 0
                || evaluate(&t, &corpus.val, 1, &vl, &err) != 0)
                die("%s", err.msg);
            last_val = vl;
            curve_add(&curve, t.step, tl, vl);
            if (tty) printf("\n");
            printf("eval step %d: train %.4f, val %.4f\n", t.step, tl, vl);
            fflush(stdout);
            if (log) fprintf(log, "%d,%.6f,%.6f,,,\n", t.step, tl, vl);
            if (!last && !quiet)
                show_sample(&t.model, &vocab, sample_chars / 3, t.step);
            if (stop_at_val > 0 && vl <= stop_at_val) {
                printf("reached val %.4f <= %.4f at step %d after %.2f s\n",
                       vl, stop_at_val, t.step, time_now() - t_start);
                reached = true;
            }
        }
        bool save = *out && (last || reached
                             || (save_every > 0 && t.step % save_every == 0));
        if (save && trainer_save(&t, out, &vocab, &err) != 0)
            die("%s", err.msg);
        prof_on = profile;
        if (reached) break;
    }
    prof_on = false;
    if (log) fclose(log);
    if (tty && exit_code == 0 && !quiet) printf("\n");
    if (n_times > 0) {
        // the median step time, leaving out the first few (warm-up)
        int skip = n_times > 8 ? 4 : 0;
        qsort(times + skip, (size_t)(n_times - skip), sizeof *times,
              cmp_double);
        double med = times[skip + (n_times - skip) / 2];
        char val[32] = "none";   // no evaluation ran (a failed step)
        if (!isnan(last_val)) snprintf(val, sizeof val, "%.4f", last_val);
        printf("summary: steps %d, %.2f s training, %.0f tokens/s (median "
               "of steps %d..), val %s, peak memory %.1f MiB\n", t.step,
               train_time, B * T / med, skip + 1, val, peak_mib());
    }
    if (exit_code == 0) {
        draw_chart(&curve);
        show_sample(&t.model, &vocab, sample_chars, 1);
        if (*out) printf("saved       %s/model.safetensors (./ch5 "
                         "--checkpoint loads it)\n", out);
    }
    if (profile) show_profile(&t, n_times);
    free(times);
    free(curve.steps), free(curve.train), free(curve.val);
    trainer_free(&t);
    vocab_free(&vocab);
    corpus_free(&corpus);
    return exit_code;
}
