// Tests of chapter 6: ten training steps against PyTorch (AdamW, clipping
// and the schedule together), the optimiser pieces on known values, a
// run that stops and resumes reproducing the uninterrupted one bit for
// bit, the GPT's training hooks passing dropout on, and a NaN that stops
// training before it touches the weights.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_count.h"
#include "check_util.h"
#include "checkpoint.h"
#include "checkpoint_state.h"
#include "fixture.h"
#include "gpt_train.h"
#include "json.h"
#include "mem.h"
#include "optim.h"
#include "run.h"
#include "threads.h"
#include "train.h"

START_TEST(training_matches_pytorch) {
    Error err;
    Fixture *f = fixture_open("ch6_train.txt");
    Gpt m;
    Vocab v;
    ck_assert_msg(checkpoint_load("tests/reference/ch5_bias.safetensors",
                                  &m, &v, &err) == 0, "%s", err.msg);
    int dims[FIXTURE_MAX_DIMS];
    ck_assert_int_eq(fixture_dims(f, "x", dims), 3);
    int steps = dims[0], B = dims[1], T = dims[2];
    ck_assert_int_eq(T, m.cfg.block_size);
    // the settings of gen_ch6.py
    TrainConfig c = {.batch = B, .steps = steps, .lr = 1e-2f,
                     .min_lr = 1e-3f, .warmup = 3, .decay_steps = 8,
                     .adamw = {0.9f, 0.95f, 1e-8f, 0.1f}, .grad_clip = 3.0f,
                     .eval_every = 0, .eval_iters = 1, .seed = 1};
    GptTrain g;
    ck_assert_int_eq(gpt_train_init(&g, &m, &v, B, T, &err), 0);
    TrainModel tm = gpt_train_model(&g);
    Trainer t;
    ck_assert_int_eq(trainer_init(&t, &tm, &c, &err), 0);
    const float *xs = fixture_get(f, "x", NULL, 0);
    const float *ys = fixture_get(f, "y", NULL, 0);
    const float *loss = fixture_get(f, "loss", NULL, 0);
    const float *norm = fixture_get(f, "norm", NULL, 0);
    const float *lr = fixture_get(f, "lr", NULL, 0);
    int *x = xmalloc((size_t)B * T * sizeof *x);
    int *y = xmalloc((size_t)B * T * sizeof *y);
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < B * T; i++)
            x[i] = (int)xs[s * B * T + i], y[i] = (int)ys[s * B * T + i];
        StepResult r;
        gpt_train_set_batch(&g, x, y);
        ck_assert_msg(train_step_batch(&t, &r, &err) == 0, "%s", err.msg);
        ck_assert_msg(fabs(r.loss - loss[s]) <= 1e-5 * loss[s],
                      "step %d: loss %.9g, PyTorch %.9g", s + 1, r.loss,
                      loss[s]);
        ck_assert_msg(fabs(r.grad_norm - norm[s]) <= 1e-5 * norm[s],
                      "step %d: norm %.9g, PyTorch %.9g", s + 1, r.grad_norm,
                      norm[s]);
        ck_assert_msg(fabs(r.lr - lr[s]) <= 1e-7 * lr[s], "step %d: lr %g, "
                      "want %g", s + 1, r.lr, lr[s]);
    }
    for (int i = 0; i < g.model.n_tensors; i++) {
        const GptTensor *gt = &g.model.tensors[i];
        char key[96];
        snprintf(key, sizeof key, "param.%s", gt->name);
        size_t n = (size_t)gt->shape[0] * (gt->ndim == 2 ? gt->shape[1] : 1);
        const float *want = fixture_get(f, key, gt->shape, gt->ndim);
        double *w = xmalloc(n * sizeof *w), big = 0;
        for (size_t j = 0; j < n; j++) w[j] = want[j], big = fmax(big,
                                                                  fabs(w[j]));
        float *got = xmalloc(n * sizeof *got);
        memcpy(got, g.model.params + gt->offset, n * sizeof *got);
        if (strstr(gt->name, "c_attn.bias")) {
            // The key bias (channels C..2C-1) gets no gradient at all: it
            // adds q.b to every score of a row, which the softmax cancels.
            // Its computed gradient is rounding noise (1e-9 here, 1e-17 in
            // PyTorch's float64), and AdamW, dividing m by sqrt(v), turns
            // noise of any size into steps of about lr. So those entries
            // are only required to stay within 10 steps of lr.
            int C = g.model.cfg.n_embd;
            for (int j = C; j < 2 * C; j++) {
                ck_assert_msg(fabs(got[j] - w[j]) <= 2 * 10 * 1e-2,
                              "key bias %d moved too far", j);
                got[j] = (float)w[j];
            }
        }
        ck_assert_close(key, got, w, n, 1e-5 * big, 1e-4);
        free(got);
        free(w);
    }
    free(x), free(y);
    trainer_free(&t);
    gpt_train_free(&g);
    fixture_free(f);
}
END_TEST

START_TEST(schedule_and_clipping_known_values) {
    // warmup: (it + 1) / (warmup + 1) of the peak
    ck_assert_float_eq_tol(lr_schedule(0, 4, 20, 1.0f, 0.1f), 0.2f, 1e-7);
    ck_assert_float_eq_tol(lr_schedule(3, 4, 20, 1.0f, 0.1f), 0.8f, 1e-7);
    // the cosine: peak at the end of warmup, halfway at the middle
    ck_assert_float_eq_tol(lr_schedule(4, 4, 20, 1.0f, 0.1f), 1.0f, 1e-7);
    ck_assert_float_eq_tol(lr_schedule(12, 4, 20, 1.0f, 0.1f), 0.55f, 1e-6);
    ck_assert_float_eq_tol(lr_schedule(20, 4, 20, 1.0f, 0.1f), 0.1f, 1e-7);
    ck_assert_float_eq(lr_schedule(21, 4, 20, 1.0f, 0.1f), 0.1f);
    // clipping a 3-4 vector (norm 5) to 1: 0.6, 0.8, direction kept
    float g[2] = {3, 4};
    ck_assert_double_eq_tol(clip_grad_norm(g, 2, 1.0f), 5.0, 1e-12);
    ck_assert_float_eq_tol(g[0], 0.6f, 1e-6);
    ck_assert_float_eq_tol(g[1], 0.8f, 1e-6);
    float h[2] = {0.3f, 0.4f};   // below the limit: untouched
    clip_grad_norm(h, 2, 1.0f);
    ck_assert(h[0] == 0.3f && h[1] == 0.4f);
    // AdamW's first step moves by lr against the sign of the gradient
    AdamWConfig c = {0.9f, 0.95f, 1e-8f, 0.0f};
    float p[3] = {1, 1, 1}, gr[3] = {0.5f, -2e-3f, 0}, m[3] = {0}, v[3] = {0};
    adamw_update(p, gr, m, v, 3, 1, 0.1f, 0.0f, &c);
    ck_assert_float_eq_tol(p[0], 0.9f, 1e-6);
    ck_assert_float_eq_tol(p[1], 1.1f, 1e-5);
    ck_assert_float_eq(p[2], 1.0f);
    // weight decay alone: p *= 1 - lr * wd
    float q[1] = {2}, z[1] = {0}, mq[1] = {0}, vq[1] = {0};
    adamw_update(q, z, mq, vq, 1, 1, 0.1f, 0.5f, &c);
    ck_assert_float_eq_tol(q[0], 1.9f, 1e-6);
}
END_TEST

// ---- a small run on a small text --------------------------------------------

static char dir[64];

static void small_corpus(Corpus *c) {
    snprintf(dir, sizeof dir, "/tmp/ch6_test_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/text.txt", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 60; i++)
        fprintf(f, "to be or not to be, that is the question %d.\n", i % 7);
    fclose(f);
    Error err;
    ck_assert_msg(corpus_load(c, path, &err) == 0, "%s", err.msg);
    unlink(path);
}

static void cleanup_dir(void) {
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

// A GPT and its trainer, as ./ch6 holds them.
typedef struct {
    GptTrain g;
    Trainer t;
} SmallRun;

// The small run's training settings.
static TrainConfig small_config(void) {
    return (TrainConfig){.batch = 4, .steps = 8, .lr = 3e-3f,
                         .min_lr = 3e-4f, .warmup = 2, .decay_steps = 8,
                         .adamw = {0.9f, 0.99f, 1e-8f, 0.1f},
                         .grad_clip = 1.0f, .eval_every = 0, .eval_iters = 2,
                         .seed = 42};
}

// A GPT of embd wide, block long, for vocab and batches of batch,
// initialised from the small config's seed.
static void sized_gpt(GptTrain *g, const Vocab *vocab, int embd, int block,
                      int batch) {
    GptConfig mc = {.vocab_size = vocab->size, .block_size = block,
                    .n_layer = 2, .n_head = 2, .n_embd = embd,
                    .n_ffn = 4 * embd, .dropout = 0.1f, .bias = true,
                    .positional = POS_LEARNED};
    TrainConfig tc = small_config();
    tc.batch = batch;
    Gpt m;
    Error err;
    ck_assert_int_eq(gpt_create(&m, &mc, &err), 0);
    Rng r;
    rng_seed(&r, tc.seed);
    gpt_init(&m, &r);
    Vocab v = {.size = vocab->size};
    v.chars = xmalloc((size_t)v.size * sizeof *v.chars);
    memcpy(v.chars, vocab->chars, (size_t)v.size * sizeof *v.chars);
    ck_assert_int_eq(gpt_train_init(g, &m, &v, tc.batch,
                                    m.cfg.block_size, &err), 0);
}

// The small run's GPT.
static void small_gpt(GptTrain *g, const Vocab *vocab) {
    sized_gpt(g, vocab, 16, 8, small_config().batch);
}

static void small_run(SmallRun *run, const Corpus *c) {
    small_gpt(&run->g, &c->vocab);
    TrainConfig tc = small_config();
    Error err;
    TrainModel tm = gpt_train_model(&run->g);
    ck_assert_int_eq(trainer_init(&run->t, &tm, &tc, &err), 0);
}

static void small_run_free(SmallRun *run) {
    trainer_free(&run->t);
    gpt_train_free(&run->g);
}

// What gpt_resume_peek reads from the headers of the run saved in out is
// run's: its model's config, its training config, and the state file's
// size (which holds AdamW's two moments). Its batch of 4 splits into 2
// and 4 processes, not into 3.
static void peek_matches(const char *out, const SmallRun *run) {
    GptConfig mc;
    TrainConfig tc;
    size_t held = 0;
    Error err;
    ck_assert_msg(gpt_resume_peek(out, 2, &mc, &tc, &held, &err) == 0, "%s",
                  err.msg);
    const GptConfig *want = &run->g.model.cfg;
    ck_assert(mc.vocab_size == want->vocab_size
              && mc.block_size == want->block_size
              && mc.n_layer == want->n_layer && mc.n_head == want->n_head
              && mc.n_embd == want->n_embd && mc.n_ffn == want->n_ffn
              && mc.bias == want->bias && mc.dropout == want->dropout
              && mc.positional == want->positional && mc.act == want->act);
    ck_assert(tc.batch == 4 && tc.steps == 8 && tc.lr == 3e-3f
              && tc.decay_steps == 8 && tc.seed == 42);
    char p[160];
    snprintf(p, sizeof p, "%s/state-%d.safetensors", out, run->t.step);
    struct stat st;
    ck_assert_int_eq(stat(p, &st), 0);
    // the resume holds the state file's header alone: the moments go
    // from the file into AdamW's own
    ck_assert_uint_gt(held, 0);
    ck_assert_uint_le(held, mem_floats((size_t)st.st_size)
                            - 2 * run->g.model.num_params);
    ck_assert_int_eq(gpt_resume_peek(out, 3, &mc, &tc, &held, &err), -1);
    ck_assert_msg(strstr(err.msg, "does not split into 3"), "%s", err.msg);
}

// Eight steps straight, against four steps, a checkpoint, a fresh
// process's worth of state loaded from it, and four more: the same losses
// and the same weights, bit for bit (dropout on, so the dropout generator
// must come back too; GPT-2's tanh GELU, so the model file must say
// which GELU the run trains with).
START_TEST(resume_is_bit_exact) {
    Corpus c;
    small_corpus(&c);
    Error err;
    SmallRun a, b;
    small_run(&a, &c);
    a.g.model.cfg.act = GELU_TANH;
    float straight[8];
    for (int s = 0; s < 8; s++) {
        StepResult r;
        ck_assert_int_eq(train_step(&a.t, &c.train, &r, &err), 0);
        straight[s] = r.loss;
    }
    small_run(&b, &c);
    b.g.model.cfg.act = GELU_TANH;
    for (int s = 0; s < 4; s++) {
        StepResult r;
        ck_assert_int_eq(train_step(&b.t, &c.train, &r, &err), 0);
        ck_assert(r.loss == straight[s]);
    }
    char out[96];
    snprintf(out, sizeof out, "%s/run", dir);
    ck_assert_msg(trainer_save(&b.t, out, &err) == 0, "%s", err.msg);
    peek_matches(out, &b);
    small_run_free(&b);
    SmallRun r2;
    ck_assert_msg(gpt_trainer_resume(&r2.t, &r2.g, out, 0, 1, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(r2.t.step, 4);
    ck_assert_int_eq(r2.t.cfg.steps, 8);
    ck_assert_int_eq(r2.g.model.cfg.act, GELU_TANH);
    ck_assert_int_eq(r2.g.vocab.size, c.vocab.size);
    for (int s = 4; s < 8; s++) {
        StepResult r;
        ck_assert_int_eq(train_step(&r2.t, &c.train, &r, &err), 0);
        ck_assert_msg(r.loss == straight[s], "step %d: %.9g after resuming, "
                      "%.9g straight", s + 1, r.loss, straight[s]);
    }
    ck_assert_int_eq(memcmp(a.g.model.params, r2.g.model.params,
                            a.g.model.num_params * sizeof(float)), 0);
    // a second save leaves only the newest state file beside the model
    ck_assert_int_eq(trainer_save(&r2.t, out, &err), 0);
    char p[160];
    snprintf(p, sizeof p, "%s/state-4.safetensors", out);
    ck_assert_int_ne(access(p, F_OK), 0);
    snprintf(p, sizeof p, "%s/state-8.safetensors", out);
    ck_assert_int_eq(access(p, F_OK), 0);
    // and the model file is chapter 5's: ./ch5 --checkpoint loads it
    Gpt m;
    Vocab mv;
    int step;
    snprintf(p, sizeof p, "%s/model.safetensors", out);
    ck_assert_int_eq(checkpoint_load_step(p, &m, &mv, &step, &err), 0);
    ck_assert_int_eq(step, 8);
    gpt_free(&m), vocab_free(&mv);
    small_run_free(&a), small_run_free(&r2);
    corpus_free(&c);
    cleanup_dir();
}
END_TEST

// --threads 0 changes the thread count between steps (autothreads.c): a
// run must not notice. Six steps on 1 thread, on 2, and on 2, 1, 2, 1...
// (a count set between two steps, as the controller does), at a size
// where OpenBLAS's products and the parallel loops do split the work
// (batch 8 x block 32 x 64 wide), dropout on: the same losses and the
// same weights, moments and dropout stream, bit for bit.
// (Not with OPENBLAS_CORETYPE set: see gemm_same_on_any_thread_count.)
START_TEST(training_is_the_same_on_any_thread_count) {
    if (getenv("OPENBLAS_CORETYPE")) return;
    Corpus c;
    small_corpus(&c);
    Error err;
    enum { RUNS = 3, STEPS = 6 };
    SmallRun run[RUNS];
    float loss[RUNS][STEPS];
    ThreadCounts prev = threads_set(1);
    for (int k = 0; k < RUNS; k++) {
        sized_gpt(&run[k].g, &c.vocab, 64, 32, 8);
        TrainConfig tc = small_config();
        tc.batch = 8;
        TrainModel tm = gpt_train_model(&run[k].g);
        ck_assert_int_eq(trainer_init(&run[k].t, &tm, &tc, &err), 0);
        for (int s = 0; s < STEPS; s++) {
            threads_set(k == 0 ? 1 : k == 1 ? 2 : 2 - s % 2);
            StepResult r;
            ck_assert_int_eq(train_step(&run[k].t, &c.train, &r, &err), 0);
            loss[k][s] = r.loss;
        }
    }
    threads_restore(prev);
    size_t n = run[0].g.model.num_params * sizeof(float);
    for (int k = 1; k < RUNS; k++) {
        for (int s = 0; s < STEPS; s++)
            ck_assert_msg(loss[k][s] == loss[0][s], "run %d step %d: %.9g, "
                          "on 1 thread %.9g", k, s + 1, loss[k][s],
                          loss[0][s]);
        ck_assert_int_eq(memcmp(run[k].g.model.params, run[0].g.model.params,
                                n), 0);
        ck_assert_int_eq(memcmp(run[k].t.m, run[0].t.m, n), 0);
        ck_assert_int_eq(memcmp(run[k].t.v, run[0].t.v, n), 0);
        ck_assert_int_eq(memcmp(&run[k].t.drop_rng, &run[0].t.drop_rng,
                                sizeof run[0].t.drop_rng), 0);
    }
    for (int k = 0; k < RUNS; k++) small_run_free(&run[k]);
    corpus_free(&c);
    cleanup_dir();
}
END_TEST

// The GPT's TrainModel passes training on: its forward hook in training
// is gpt_forward with dropout (the same loss for the same seed: the same
// masks), out of training it is without, and the two differ. A hook that
// dropped the flag, so that ./ch6 would train without dropout, passed
// every other test (resume_is_bit_exact too: a run without dropout
// resumes as exactly).
START_TEST(gpt_train_passes_training_on) {
    Corpus c;
    small_corpus(&c);
    GptTrain g;
    small_gpt(&g, &c.vocab);   // dropout 0.1
    TrainModel tm = gpt_train_model(&g);
    Rng r;
    rng_seed(&r, 7);
    Error err;
    ck_assert_msg(tm.batch(tm.self, &c.train, &r, &err) == 0, "%s",
                  err.msg);
    float train, eval, want_train, want_eval;
    rng_seed(&r, 8);
    ck_assert_msg(tm.forward(tm.self, true, &r, &train, &err) == 0
                  && tm.forward(tm.self, false, NULL, &eval, &err) == 0,
                  "%s", err.msg);
    GptActs a;
    ck_assert_int_eq(gpt_acts_alloc(&a, &g.model.cfg, g.B, g.T, &err), 0);
    rng_seed(&r, 8);
    ck_assert_msg(gpt_forward(&g.model, &a, g.x, g.y, g.B, g.T, true, &r,
                              &want_train, &err) == 0
                  && gpt_forward(&g.model, &a, g.x, g.y, g.B, g.T, false,
                                 NULL, &want_eval, &err) == 0, "%s",
                  err.msg);
    ck_assert_msg(train == want_train && eval == want_eval && train != eval,
                  "the hook's loss in training %.9g, with dropout %.9g; out "
                  "of training %.9g, without %.9g", train, want_train, eval,
                  want_eval);
    gpt_acts_free(&a, &g.model.cfg);
    gpt_train_free(&g);
    corpus_free(&c);
    cleanup_dir();
}
END_TEST

START_TEST(nan_stops_before_the_update) {
    Corpus c;
    small_corpus(&c);
    SmallRun run;
    small_run(&run, &c);
    Trainer *t = &run.t;
    Error err;
    StepResult r;
    ck_assert_int_eq(train_step(t, &c.train, &r, &err), 0);
    t->model.params[t->model.tensors[3].offset] = NAN;   // a poisoned weight
    size_t n = t->model.num_params;
    float *before = xmalloc(n * sizeof *before);
    memcpy(before, t->model.params, n * sizeof *before);
    ck_assert_int_eq(train_step(t, &c.train, &r, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "NaN"));
    ck_assert_ptr_nonnull(strstr(err.msg, "step 2"));
    ck_assert_int_eq(t->step, 1);
    ck_assert_int_eq(memcmp(before, t->model.params, n * sizeof *before), 0);
    free(before);
    small_run_free(&run);
    corpus_free(&c);
    cleanup_dir();
}
END_TEST

// No allocation inside a training step: once the trainer is set up,
// steps and evaluations make no malloc, calloc, realloc or aligned_alloc
// call of our own (tests/alloc_count.h: the runner is linked with --wrap
// for them). The first step runs before counting, so that nothing
// started lazily is mistaken for a step's allocation.
START_TEST(train_step_allocates_nothing) {
    unsigned long before = alloc_count();
    free(xmalloc(16));                       // the counter sees our calls
    ck_assert_uint_eq(alloc_count(), before + 1);
    Corpus c;
    small_corpus(&c);
    SmallRun run;
    small_run(&run, &c);
    Error err;
    StepResult r;
    ck_assert_int_eq(train_step(&run.t, &c.train, &r, &err), 0);
    // no ck_assert in between: Check itself allocates to record each one
    before = alloc_count();
    int rc = 0;
    for (int i = 0; i < 3; i++) rc |= train_step(&run.t, &c.train, &r, &err);
    double loss;
    rc |= evaluate(&run.t, &c.val, 1, &loss, &err);
    unsigned long after = alloc_count();
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(after, before);
    small_run_free(&run);
    corpus_free(&c);
}
END_TEST

START_TEST(resume_refusals) {
    Error err;
    SmallRun r;
    ck_assert_int_eq(gpt_trainer_resume(&r.t, &r.g, "/nonexistent/run", 0, 1,
                                        &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/run/model"));
    // a chapter 5 model without training state
    Corpus c;
    small_corpus(&c);
    SmallRun a;
    small_run(&a, &c);
    char out[96], p[160];
    snprintf(out, sizeof out, "%s/run", dir);
    ck_assert_int_eq(trainer_save(&a.t, out, &err), 0);
    snprintf(p, sizeof p, "%s/state-0.safetensors", out);
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(gpt_trainer_resume(&r.t, &r.g, out, 0, 1, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "state-0.safetensors"));
    // the headers alone are refused the same way
    GptConfig mc;
    TrainConfig tc;
    size_t held;
    Error peek;
    ck_assert_int_eq(gpt_resume_peek(out, 1, &mc, &tc, &held, &peek), -1);
    ck_assert_str_eq(peek.msg, err.msg);
    ck_assert_ptr_null(r.g.vocab.chars);
    ck_assert_ptr_null(r.t.m);
    small_run_free(&a);
    corpus_free(&c);
    cleanup_dir();
}
END_TEST

// ---- the trainer through the hooks: weights that live elsewhere ------------

// A GPT whose weights live elsewhere, as a GPU's do: dev is the copy that
// trains (its forward, backward, clipping and AdamW with its own moments),
// host the copy the trainer sees in params and saves. The two meet only
// through sync and load, whose calls are counted with the others.
typedef struct {
    GptTrain *host, dev;
    TrainModel d;         // dev's own TrainModel, which the hooks call
    float *m, *v;         // the moments, on dev's side
    int clips, updates, syncs, loads;
} Remote;

static int remote_batch(void *self, const void *data, Rng *rng, Error *err) {
    Remote *r = self;
    return r->d.batch(r->d.self, data, rng, err);
}

static int remote_forward(void *self, bool train, Rng *rng, float *loss,
                          Error *err) {
    Remote *r = self;
    return r->d.forward(r->d.self, train, rng, loss, err);
}

static void remote_backward(void *self) {
    Remote *r = self;
    r->d.backward(r->d.self);
}

// The checkpoint is the host's: what sync brought home.
static int remote_save(const void *self, const char *path, int step,
                       Error *err) {
    const Remote *r = self;
    return checkpoint_save_step(path, &r->host->model, &r->host->vocab, step,
                                err);
}

static double remote_clip(void *self, float max_norm) {
    Remote *r = self;
    r->clips++;
    return clip_grad_norm(r->d.grads, r->d.num_params, max_norm);
}

static void remote_update(void *self, int t, float lr, const AdamWConfig *c) {
    Remote *r = self;
    r->updates++;
    for (int i = 0; i < r->d.n_tensors; i++) {
        const TrainTensor *g = &r->d.tensors[i];
        size_t o = g->offset;
        adamw_update(r->d.params + o, r->d.grads + o, r->m + o, r->v + o,
                     g->n, t, lr, g->decay ? c->weight_decay : 0.0f, c);
    }
}

static void remote_sync(void *self, float *m, float *v) {
    Remote *r = self;
    size_t n = r->d.num_params * sizeof(float);
    r->syncs++;
    memcpy(r->host->model.params, r->d.params, n);
    memcpy(m, r->m, n);
    memcpy(v, r->v, n);
}

static void remote_load(void *self, const float *m, const float *v) {
    Remote *r = self;
    size_t n = r->d.num_params * sizeof(float);
    r->loads++;
    memcpy(r->d.params, r->host->model.params, n);
    memcpy(r->m, m, n);
    memcpy(r->v, v, n);
}

// Puts a remote side beside host, a GPT of the same shape: its weights
// and moments start as NaN, so that a step that runs before load() shows.
static void remote_init(Remote *r, GptTrain *host) {
    memset(r, 0, sizeof *r);
    r->host = host;
    Gpt m;
    Error err;
    ck_assert_int_eq(gpt_create(&m, &host->model.cfg, &err), 0);
    for (size_t i = 0; i < m.num_params; i++) m.params[i] = NAN;
    Vocab v = {.size = host->vocab.size};
    v.chars = xmalloc((size_t)v.size * sizeof *v.chars);
    memcpy(v.chars, host->vocab.chars, (size_t)v.size * sizeof *v.chars);
    ck_assert_int_eq(gpt_train_init(&r->dev, &m, &v, host->B, host->T, &err),
                     0);
    r->d = gpt_train_model(&r->dev);
    size_t n = r->d.num_params;
    r->m = alloc_floats(n), r->v = alloc_floats(n);
    for (size_t i = 0; i < n; i++) r->m[i] = r->v[i] = NAN;
}

static TrainModel remote_model(Remote *r) {
    TrainModel h = gpt_train_model(r->host);
    h.self = r;
    h.batch = remote_batch, h.forward = remote_forward;
    h.backward = remote_backward, h.save = remote_save;
    h.clip = remote_clip, h.update = remote_update;
    h.sync = remote_sync, h.load = remote_load;
    return h;
}

static void remote_free(Remote *r) {
    gpt_train_free(&r->dev);
    free(r->m), free(r->v);
}

// Whether n floats are the same bits.
static bool same(const float *a, const float *b, size_t n) {
    return memcmp(a, b, n * sizeof *a) == 0;
}

// Through the hooks, the trainer gives the CPU's run bit for bit: the
// same losses and norms, and after sync the same weights and moments;
// the host copy is left alone between syncs (the trainer neither clips
// nor updates it itself); a save syncs, and a resume loads, exactly.
// A state file for step 7 whose train_state has "key": value in place of
// the key's usual value; train_state_load must refuse it, saying want.
static void state_refused(const char *key, const char *value,
                          const char *want) {
    StrBuf b = {0};
    const char *keys[] = {"step", "batch", "steps", "lr", "min_lr", "warmup",
                          "decay_steps", "beta1", "beta2", "eps",
                          "weight_decay", "grad_clip", "eval_every",
                          "eval_iters"};
    const char *usual[] = {"7", "4", "100", "0.001", "0.0001", "10", "90",
                           "0.9", "0.95", "1e-08", "0.1", "1", "50", "5"};
    sb_printf(&b, "{\"seed\": \"1337\"");
    for (int i = 0; i < 14; i++)
        sb_printf(&b, ", \"%s\": %s", keys[i],
                  strcmp(keys[i], key) == 0 ? value : usual[i]);
    for (int r = 0; r < 2; r++) {
        sb_printf(&b, ", \"%s_next\": 3, \"%s_state\": \"",
                  r ? "drop_rng" : "data_rng", r ? "drop_rng" : "data_rng");
        for (int i = 0; i < RNG_N; i++) sb_printf(&b, "%08x", i);
        sb_append(&b, "\"", 1);
    }
    sb_append(&b, "}", 1);
    const float mv[2] = {0.5f, 1};
    StWriteTensor t[2] = {{"adamw.m", mv, 1, {2}}, {"adamw.v", mv, 1, {2}}};
    const char *meta_key[1] = {"train_state"}, *meta_value[1] = {b.s};
    char out[96], p[160];
    snprintf(out, sizeof out, "%s/state", dir);
    ck_assert(mkdir(out, 0777) == 0 || errno == EEXIST);
    snprintf(p, sizeof p, "%s/state-7.safetensors", out);
    Error err;
    ck_assert_msg(st_save(p, t, 2, meta_key, meta_value, 1, &err) == 0, "%s",
                  err.msg);
    TrainState s;
    int rc = train_state_load(&s, out, 7, &err);
    if (!want) {   // the usual values load
        ck_assert_msg(rc == 0, "%s", err.msg);
        ck_assert_int_eq(s.step, 7);
        ck_assert_int_eq(s.cfg.batch, 4);
        train_state_free(&s);
    } else {
        ck_assert_msg(rc == -1, "%s: %s loaded", key, value);
        ck_assert_msg(strstr(err.msg, want) && strstr(err.msg, p),
                      "message '%s' lacks '%s'", err.msg, want);
    }
    unlink(p);
    sb_free(&b);
}

START_TEST(state_numbers_refused) {
    snprintf(dir, sizeof dir, "/tmp/ch6_test_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    state_refused("step", "7", NULL);
    // whole numbers are whole: not rounded to one, not cast out of range
    state_refused("step", "7.5", "no whole number \"step\"");
    state_refused("batch", "1e300", "no whole number \"batch\"");
    state_refused("eval_iters", "4294967301", "no whole number "
                  "\"eval_iters\"");
    state_refused("lr", "\"fast\"", "no number \"lr\"");
    // and each within its flag's range
    state_refused("beta2", "1.5", "\"beta2\" must be in [0, 0.999999], "
                  "got 1.5");
    state_refused("warmup", "-3", "\"warmup\" must be in [0, 1000000000], "
                  "got -3");
    state_refused("batch", "0", "\"batch\" must be in [1, ");
    state_refused("steps", "[", "train_state metadata: JSON");
    cleanup_dir();
}
END_TEST

START_TEST(trainer_through_hooks_is_exact) {
    Corpus c;
    small_corpus(&c);
    Error err;
    SmallRun a;   // on the CPU: 4 steps, a snapshot, 4 more
    small_run(&a, &c);
    size_t n = a.g.model.num_params;
    float loss[8];
    double norm[8];
    float *p4 = xmalloc(n * sizeof *p4), *m4 = xmalloc(n * sizeof *m4),
          *v4 = xmalloc(n * sizeof *v4);
    for (int s = 0; s < 8; s++) {
        if (s == 4) {
            memcpy(p4, a.t.model.params, n * sizeof *p4);
            memcpy(m4, a.t.m, n * sizeof *m4);
            memcpy(v4, a.t.v, n * sizeof *v4);
        }
        StepResult r;
        ck_assert_int_eq(train_step(&a.t, &c.train, &r, &err), 0);
        loss[s] = r.loss, norm[s] = r.grad_norm;
    }

    // the same run through the hooks, as ./ch8 does: a model put in
    // after trainer_init, then loaded with the trainer's (zero) moments
    GptTrain host;
    small_gpt(&host, &c.vocab);
    float *p0 = xmalloc(n * sizeof *p0);
    memcpy(p0, host.model.params, n * sizeof *p0);
    Remote *b = xmalloc(sizeof *b);
    remote_init(b, &host);
    TrainConfig tc = small_config();
    Trainer t;
    TrainModel tm = remote_model(b);
    ck_assert_int_eq(trainer_init(&t, &tm, &tc, &err), 0);
    tm.load(tm.self, t.m, t.v);
    for (int s = 0; s < 4; s++) {
        StepResult r;
        ck_assert_int_eq(train_step(&t, &c.train, &r, &err), 0);
        ck_assert_msg(r.loss == loss[s] && r.grad_norm == norm[s],
                      "step %d: loss %.9g norm %.9g through the hooks, "
                      "%.9g %.9g on the CPU", s + 1, r.loss, r.grad_norm,
                      loss[s], norm[s]);
    }
    ck_assert_int_eq(b->clips, 4);
    ck_assert_int_eq(b->updates, 4);
    ck_assert_int_eq(b->syncs, 0);
    ck_assert(same(p0, t.model.params, n));   // the host copy: untouched
    for (size_t i = 0; i < n; i++) ck_assert(t.m[i] == 0 && t.v[i] == 0);
    char out[96];
    snprintf(out, sizeof out, "%s/run", dir);
    ck_assert_msg(trainer_save(&t, out, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(b->syncs, 1);
    ck_assert(same(p4, t.model.params, n));
    ck_assert(same(m4, t.m, n) && same(v4, t.v, n));
    trainer_free(&t);
    remote_free(b);
    gpt_train_free(&host);

    // resuming it: the model file into a host copy, the state, a remote
    // side, and trainer_restore, which loads it
    char p[160];
    snprintf(p, sizeof p, "%s/model.safetensors", out);
    Gpt m;
    Vocab mv;
    int step;
    ck_assert_int_eq(checkpoint_load_step(p, &m, &mv, &step, &err), 0);
    ck_assert_int_eq(step, 4);
    TrainState st;
    ck_assert_msg(train_state_load(&st, out, step, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(gpt_train_init(&host, &m, &mv, st.cfg.batch,
                                    m.cfg.block_size, &err), 0);
    remote_init(b, &host);
    tm = remote_model(b);
    ck_assert_int_eq(trainer_init(&t, &tm, &st.cfg, &err), 0);
    ck_assert_int_eq(trainer_restore(&t, &st, &err), 0);
    train_state_free(&st);
    ck_assert_int_eq(b->loads, 1);
    ck_assert(same(p4, b->dev.model.params, n));
    ck_assert(same(m4, b->m, n) && same(v4, b->v, n));
    for (int s = 4; s < 8; s++) {
        StepResult r;
        ck_assert_int_eq(train_step(&t, &c.train, &r, &err), 0);
        ck_assert_msg(r.loss == loss[s] && r.grad_norm == norm[s],
                      "step %d after resuming through the hooks: loss %.9g "
                      "norm %.9g, straight %.9g %.9g", s + 1, r.loss,
                      r.grad_norm, loss[s], norm[s]);
    }
    ck_assert_int_eq(trainer_save(&t, out, &err), 0);
    ck_assert(same(a.t.model.params, t.model.params, n));
    ck_assert(same(a.t.m, t.m, n) && same(a.t.v, t.v, n));
    ck_assert_int_eq(checkpoint_load_step(p, &m, &mv, &step, &err), 0);
    ck_assert_int_eq(step, 8);
    ck_assert(same(a.t.model.params, m.params, n));   // what was written
    gpt_free(&m), vocab_free(&mv);
    trainer_free(&t);
    remote_free(b);
    gpt_train_free(&host);
    free(b), free(p0), free(p4), free(m4), free(v4);
    small_run_free(&a);
    corpus_free(&c);
    cleanup_dir();
}
END_TEST

// ---- the program on a backend ----------------------------------------------

// A backend for train_main whose model is a Remote: what ./ch8 does with
// its GPU, here in memory. It records what was called, and prints that at
// the end of the run for the test to read.
typedef struct {
    Remote remote;
    int stop;             // --fake-stop: what before() returns
    int befores, attaches, detaches;
} FakeBackend;

static int fake_before(void *ctx) {
    FakeBackend *f = ctx;
    f->befores++;
    return f->stop;
}

static int fake_attach(void *ctx, GptTrain *g, TrainModel *tm, Error *err) {
    (void)err;
    FakeBackend *f = ctx;
    f->attaches++;
    ck_assert_ptr_eq(tm->params, g->model.params);   // the host's model
    remote_init(&f->remote, g);
    *tm = remote_model(&f->remote);
    return 0;
}

static void fake_detach(void *ctx) {
    FakeBackend *f = ctx;
    f->detaches++;
    remote_free(&f->remote);
}

static void fake_describe(void *ctx, char *buf, size_t size) {
    (void)ctx;
    snprintf(buf, size, "remote: weights in a private copy");
}

// A run of the program: on the fake backend (then its counters are
// printed at the end), or on the CPU.
typedef struct {
    bool fake;
    char **args;
    int n;
} ProgramRun;

static int program_body(void *ctx) {
    const ProgramRun *p = ctx;
    char *argv[32] = {p->fake ? "ch8" : "ch6"};
    for (int i = 0; i < p->n; i++) argv[1 + i] = p->args[i];
    FakeBackend f = {.stop = -1};
    Flag extra[] = {{"fake-stop", FLAG_INT, &f.stop,
                     "-1, or the status before() stops with"}};
    TrainBackend be = {.program = "ch8", .about = "A fake backend.",
                       .flags = extra, .n_flags = 1, .ctx = &f,
                       .before = fake_before, .attach = fake_attach,
                       .detach = fake_detach, .describe = fake_describe};
    int rc = train_main(1 + p->n, argv, p->fake ? &be : NULL);
    if (p->fake)
        printf("fake: before %d attach %d detach %d clip %d update %d "
               "sync %d load %d\n", f.befores, f.attaches, f.detaches,
               f.remote.clips, f.remote.updates, f.remote.syncs,
               f.remote.loads);
    return rc;
}

// Runs train_main in a child process with stdout in dir/name.txt (and
// stderr in dir/name.err), on the fake backend when fake (which then
// prints its counters), else on the CPU. Returns the child's exit status.
static int run_program(const char *name, bool fake, char **args, int n) {
    char out[160], err[160];
    snprintf(out, sizeof out, "%s/%s.txt", dir, name);
    snprintf(err, sizeof err, "%s/%s.err", dir, name);
    ProgramRun p = {fake, args, n};
    return run_in_child(out, err, program_body, &p);
}

// The whole of dir/name, NUL-terminated, its length in *len when len is
// not NULL; free() it.
static char *slurp_n(const char *name, size_t *len) {
    char path[160];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = xmalloc((size_t)n + 1);
    ck_assert_int_eq(fread(s, 1, (size_t)n, f), n);
    s[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return s;
}

static char *slurp(const char *name) { return slurp_n(name, NULL); }

// Whether dir/a/name and dir/b/name hold the same bytes.
static bool same_file(const char *a, const char *b, const char *name) {
    char pa[96], pb[96];
    snprintf(pa, sizeof pa, "%s/%s", a, name);
    snprintf(pb, sizeof pb, "%s/%s", b, name);
    size_t na, nb;
    char *x = slurp_n(pa, &na), *y = slurp_n(pb, &nb);
    bool same = na == nb && memcmp(x, y, na) == 0;
    free(x), free(y);
    return same;
}

// The report's lines that depend on the weights (the evaluations and the
// samples), not on the time taken or the folder: in a new string.
static char *weight_lines(const char *name) {
    char *s = slurp(name), *keep = xmalloc(strlen(s) + 1), *k = keep;
    bool sample = false;
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "---- sample", 11) == 0) sample = true;
        else if (strcmp(line, "----") == 0) sample = false;
        if (sample || strncmp(line, "eval ", 5) == 0)
            k += sprintf(k, "%s\n", line);
    }
    free(s);
    return keep;
}

// ./ch6's program on a backend (the fake one above, its weights in a
// private copy): before() runs first and can stop the program; the
// backend's flag is parsed; the evaluations, the samples (the host copy
// synced before each) and the checkpoint are the CPU's, bit for bit, for
// a new run and for a resumed one (whose moments reach the backend
// through load).
START_TEST(program_runs_on_a_backend) {
    Corpus c;
    small_corpus(&c);   // for dir
    corpus_free(&c);
    char text[128], cpu[128], fake[128];
    snprintf(text, sizeof text, "%s/text.txt", dir);
    FILE *f = fopen(text, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 80; i++)
        fprintf(f, "to be or not to be, that is the question %d.\n", i % 9);
    fclose(f);
    snprintf(cpu, sizeof cpu, "%s/cpu", dir);
    snprintf(fake, sizeof fake, "%s/fake", dir);
    char *common[] = {"--data", text, "--layers", "1", "--heads", "2",
                      "--embd", "8", "--block", "8", "--batch", "2",
                      "--dropout", "0.1", "--warmup", "1", "--eval-every",
                      "2", "--eval-iters", "1", "--sample-chars", "30",
                      "--threads", "1", "--steps", "4", "--out", NULL};
    enum { N = sizeof common / sizeof common[0] };
    char *args[N + 2];
    memcpy(args, common, sizeof common);

    args[N - 1] = fake, args[N] = "--fake-stop", args[N + 1] = "7";
    ck_assert_int_eq(run_program("stop", true, args, N + 2), 7);
    char *out = slurp("stop.txt");
    ck_assert_ptr_nonnull(strstr(out, "fake: before 1 attach 0"));
    ck_assert_ptr_null(strstr(out, "model "));   // nothing loaded
    free(out);

    args[N - 1] = cpu;
    ck_assert_int_eq(run_program("cpu", false, args, N), 0);
    args[N - 1] = fake;
    ck_assert_int_eq(run_program("fake", true, args, N), 0);
    out = slurp("fake.txt");
    ck_assert_ptr_nonnull(strstr(out, "device      remote: weights in a "
                                      "private copy\n"));
    // and in the summary, under it
    ck_assert_ptr_nonnull(strstr(out, " MiB\n         remote: weights in"));
    // the host copy synced three times: for the sample at the evaluation
    // of step 2, for the checkpoint at step 4, for the final sample
    ck_assert_msg(strstr(out, "fake: before 1 attach 1 detach 1 clip 4 "
                              "update 4 sync 3 load 1\n") != NULL, "%s", out);
    free(out);
    char *want = weight_lines("cpu.txt"), *got = weight_lines("fake.txt");
    ck_assert_ptr_nonnull(strstr(want, "eval step 4"));
    ck_assert_ptr_nonnull(strstr(want, "---- sample"));
    ck_assert_str_eq(got, want);
    free(want), free(got);
    ck_assert(same_file("cpu", "fake", "model.safetensors"));
    ck_assert(same_file("cpu", "fake", "state-4.safetensors"));

    char *more[] = {"--resume", cpu, "--data", text, "--steps", "6",
                    "--sample-chars", "30", "--threads", "1"};
    ck_assert_int_eq(run_program("cpu2", false, more, 10), 0);
    more[1] = fake;
    ck_assert_int_eq(run_program("fake2", true, more, 10), 0);
    want = weight_lines("cpu2.txt"), got = weight_lines("fake2.txt");
    ck_assert_ptr_nonnull(strstr(want, "eval step 6"));
    ck_assert_str_eq(got, want);
    free(want), free(got);
    ck_assert(same_file("cpu", "fake", "model.safetensors"));
    ck_assert(same_file("cpu", "fake", "state-6.safetensors"));
    cleanup_dir();
}
END_TEST

// ---- the trainer with a model that is not a GPT ----------------------------

// The smallest model: four parameters pulled towards a target, loss
// 0.5 |p - target|^2, its gradient p - target. Two ranges: p[0..1] a
// "matrix" with weight decay, p[2..3] a "vector" without. batch() draws
// the target from the generator; the counters record the calls.
typedef struct {
    float params[4], grads[4];
    TrainTensor tensors[2];
    float target;
    int batches, forwards, backwards, train_forwards;
} Toy;

static int toy_batch(void *self, const void *data, Rng *rng, Error *err) {
    (void)err;
    Toy *t = self;
    t->target = *(const float *)data + 0.01f * rng_uniform(rng);
    t->batches++;
    return 0;
}

static int toy_forward(void *self, bool train, Rng *rng, float *loss,
                       Error *err) {
    (void)rng, (void)err;
    Toy *t = self;
    double l = 0;
    for (int i = 0; i < 4; i++)
        l += 0.5 * (t->params[i] - t->target) * (t->params[i] - t->target);
    *loss = (float)l;
    t->forwards++;
    t->train_forwards += train;
    return 0;
}

static void toy_backward(void *self) {
    Toy *t = self;
    for (int i = 0; i < 4; i++) t->grads[i] = t->params[i] - t->target;
    t->backwards++;
}

static TrainModel toy_model(Toy *t) {
    t->tensors[0] = (TrainTensor){0, 2, true};
    t->tensors[1] = (TrainTensor){2, 2, false};
    return (TrainModel){.self = t, .params = t->params, .grads = t->grads,
                        .num_params = 4, .tensors = t->tensors,
                        .n_tensors = 2, .batch = toy_batch,
                        .forward = toy_forward, .backward = toy_backward};
}

// The trainer drives any TrainModel: one batch, one forward in training
// mode and one backward per step; AdamW with this step's learning rate
// and with weight decay on the ranges that ask for it only; evaluation
// in eval mode without touching the parameters.
START_TEST(trainer_drives_any_model) {
    Toy toy = {.params = {1, 1, 1, 1}};
    TrainModel tm = toy_model(&toy);
    TrainConfig c = {.batch = 1, .steps = 3, .lr = 0.1f, .min_lr = 0.01f,
                     .warmup = 1, .decay_steps = 3,
                     .adamw = {0.9f, 0.95f, 1e-8f, 0.5f}, .grad_clip = 0,
                     .eval_every = 0, .eval_iters = 5, .seed = 3};
    Trainer t;
    Error err;
    ck_assert_int_eq(trainer_init(&t, &tm, &c, &err), 0);
    // the same updates by hand: both halves see the same gradients, so
    // they differ only by the decay
    float want[4] = {1, 1, 1, 1}, m[4] = {0}, v[4] = {0};
    float target = 2.0f;
    Rng data;
    rng_seed(&data, c.seed);   // the trainer's batch generator
    for (int s = 0; s < 3; s++) {
        StepResult r;
        ck_assert_int_eq(train_step(&t, &target, &r, &err), 0);
        float tg = target + 0.01f * rng_uniform(&data), g[4];
        for (int i = 0; i < 4; i++) g[i] = want[i] - tg;
        float lr = lr_schedule(s, c.warmup, c.decay_steps, c.lr, c.min_lr);
        ck_assert_float_eq(r.lr, lr);
        adamw_update(want, g, m, v, 2, s + 1, lr, 0.5f, &c.adamw);
        adamw_update(want + 2, g + 2, m + 2, v + 2, 2, s + 1, lr, 0.0f,
                     &c.adamw);
    }
    for (int i = 0; i < 4; i++)
        ck_assert_msg(toy.params[i] == want[i], "p[%d] = %.9g, want %.9g",
                      i, toy.params[i], want[i]);
    ck_assert(toy.params[0] != toy.params[2]);   // the decay made a mark
    ck_assert_int_eq(toy.batches, 3);
    ck_assert_int_eq(toy.train_forwards, 3);
    ck_assert_int_eq(toy.backwards, 3);
    double loss;
    float kept[4];
    memcpy(kept, toy.params, sizeof kept);
    ck_assert_int_eq(evaluate(&t, &target, 0, &loss, &err), 0);
    ck_assert_int_eq(toy.forwards, 3 + 5);
    ck_assert_int_eq(toy.train_forwards, 3);      // evaluation: eval mode
    ck_assert_int_eq(toy.backwards, 3);
    ck_assert_int_eq(memcmp(kept, toy.params, sizeof kept), 0);
    ck_assert(loss > 0 && loss < 0.5 * 4 * 1.1 * 1.1);
    trainer_free(&t);
}
END_TEST

Suite *ch6_suite(void) {
    Suite *s = suite_create("ch6");
    TCase *tc = tcase_new("train", "ch6");
    tcase_add_test(tc, training_matches_pytorch);
    tcase_add_test(tc, schedule_and_clipping_known_values);
    tcase_add_test(tc, resume_is_bit_exact);
    tcase_add_test(tc, training_is_the_same_on_any_thread_count);
    tcase_add_test(tc, gpt_train_passes_training_on);
    tcase_add_test(tc, nan_stops_before_the_update);
    tcase_add_test(tc, train_step_allocates_nothing);
    tcase_add_test(tc, resume_refusals);
    tcase_add_test(tc, state_numbers_refused);
    tcase_add_test(tc, trainer_drives_any_model);
    tcase_add_test(tc, trainer_through_hooks_is_exact);
    tcase_add_test(tc, program_runs_on_a_backend);
    suite_add_tcase(s, tc);
    return s;
}
