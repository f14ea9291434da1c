// Tests of chapter 6: ten training steps against PyTorch (AdamW, clipping
// and the schedule together), the optimiser pieces on known values, a
// run that stops and resumes reproducing the uninterrupted one bit for
// bit, and a NaN that stops training before it touches the weights.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc_count.h"
#include "check_util.h"
#include "checkpoint.h"
#include "fixture.h"
#include "mem.h"
#include "optim.h"
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
    Trainer t;
    ck_assert_int_eq(trainer_init(&t, &m, &c, &err), 0);
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
        ck_assert_msg(train_step_on(&t, x, y, &r, &err) == 0, "%s", err.msg);
        ck_assert_msg(fabs(r.loss - loss[s]) <= 1e-5 * loss[s],
                      "step %d: loss %.9g, PyTorch %.9g", s + 1, r.loss,
                      loss[s]);
        ck_assert_msg(fabs(r.grad_norm - norm[s]) <= 1e-5 * norm[s],
                      "step %d: norm %.9g, PyTorch %.9g", s + 1, r.grad_norm,
                      norm[s]);
        ck_assert_msg(fabs(r.lr - lr[s]) <= 1e-7 * lr[s], "step %d: lr %g, "
                      "want %g", s + 1, r.lr, lr[s]);
    }
    for (int i = 0; i < t.model.n_tensors; i++) {
        const GptTensor *g = &t.model.tensors[i];
        char key[96];
        snprintf(key, sizeof key, "param.%s", g->name);
        size_t n = (size_t)g->shape[0] * (g->ndim == 2 ? g->shape[1] : 1);
        const float *want = fixture_get(f, key, g->shape, g->ndim);
        double *w = xmalloc(n * sizeof *w), big = 0;
        for (size_t j = 0; j < n; j++) w[j] = want[j], big = fmax(big,
                                                                  fabs(w[j]));
        float *got = xmalloc(n * sizeof *got);
        memcpy(got, t.model.params + g->offset, n * sizeof *got);
        if (strstr(g->name, "c_attn.bias")) {
            // The key bias (channels C..2C-1) gets no gradient at all: it
            // adds q.b to every score of a row, which the softmax cancels.
            // Its computed gradient is rounding noise (1e-9 here, 1e-17 in
            // PyTorch's float64), and AdamW, dividing m by sqrt(v), turns
            // noise of any size into steps of about lr. So those entries
            // are only required to stay within 10 steps of lr.
            int C = t.model.cfg.n_embd;
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
    vocab_free(&v);
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

static void small_trainer(Trainer *t, const Corpus *c) {
    GptConfig mc = {.vocab_size = c->vocab.size, .block_size = 8,
                    .n_layer = 2, .n_head = 2, .n_embd = 16, .n_ffn = 64,
                    .dropout = 0.1f, .bias = true,
                    .positional = POS_LEARNED};
    TrainConfig tc = {.batch = 4, .steps = 8, .lr = 3e-3f, .min_lr = 3e-4f,
                      .warmup = 2, .decay_steps = 8,
                      .adamw = {0.9f, 0.99f, 1e-8f, 0.1f}, .grad_clip = 1.0f,
                      .eval_every = 0, .eval_iters = 2, .seed = 42};
    Gpt m;
    Error err;
    ck_assert_int_eq(gpt_create(&m, &mc, &err), 0);
    Rng r;
    rng_seed(&r, tc.seed);
    gpt_init(&m, &r);
    ck_assert_int_eq(trainer_init(t, &m, &tc, &err), 0);
}

// Eight steps straight, against four steps, a checkpoint, a fresh
// process's worth of state loaded from it, and four more: the same losses
// and the same weights, bit for bit (dropout on, so the dropout generator
// must come back too).
START_TEST(resume_is_bit_exact) {
    Corpus c;
    small_corpus(&c);
    Error err;
    Trainer a, b;
    small_trainer(&a, &c);
    float straight[8];
    for (int s = 0; s < 8; s++) {
        StepResult r;
        ck_assert_int_eq(train_step(&a, &c.train, &r, &err), 0);
        straight[s] = r.loss;
    }
    small_trainer(&b, &c);
    for (int s = 0; s < 4; s++) {
        StepResult r;
        ck_assert_int_eq(train_step(&b, &c.train, &r, &err), 0);
        ck_assert(r.loss == straight[s]);
    }
    char out[96];
    snprintf(out, sizeof out, "%s/run", dir);
    ck_assert_msg(trainer_save(&b, out, &c.vocab, &err) == 0, "%s", err.msg);
    trainer_free(&b);
    Trainer r2;
    Vocab v;
    ck_assert_msg(trainer_resume(&r2, out, &v, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(r2.step, 4);
    ck_assert_int_eq(r2.cfg.steps, 8);
    for (int s = 4; s < 8; s++) {
        StepResult r;
        ck_assert_int_eq(train_step(&r2, &c.train, &r, &err), 0);
        ck_assert_msg(r.loss == straight[s], "step %d: %.9g after resuming, "
                      "%.9g straight", s + 1, r.loss, straight[s]);
    }
    ck_assert_int_eq(memcmp(a.model.params, r2.model.params,
                            a.model.num_params * sizeof(float)), 0);
    // a second save leaves only the newest state file beside the model
    ck_assert_int_eq(trainer_save(&r2, out, &v, &err), 0);
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
    trainer_free(&a), trainer_free(&r2);
    vocab_free(&v);
    corpus_free(&c);
    cleanup_dir();
}
END_TEST

START_TEST(nan_stops_before_the_update) {
    Corpus c;
    small_corpus(&c);
    Trainer t;
    small_trainer(&t, &c);
    Error err;
    StepResult r;
    ck_assert_int_eq(train_step(&t, &c.train, &r, &err), 0);
    t.model.params[t.model.tensors[3].offset] = NAN;   // a poisoned weight
    float *before = xmalloc(t.model.num_params * sizeof *before);
    memcpy(before, t.model.params, t.model.num_params * sizeof *before);
    ck_assert_int_eq(train_step(&t, &c.train, &r, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "NaN"));
    ck_assert_ptr_nonnull(strstr(err.msg, "step 2"));
    ck_assert_int_eq(t.step, 1);
    ck_assert_int_eq(memcmp(before, t.model.params,
                            t.model.num_params * sizeof *before), 0);
    free(before);
    trainer_free(&t);
    corpus_free(&c);
    cleanup_dir();
}
END_TEST

// The "no allocation inside a training step": once the trainer is
// set up, steps and evaluations make no malloc, calloc, realloc or
// aligned_alloc call of our own (tests/alloc_count.h: the runner is linked
// with --wrap for them). The first step runs before counting, so that
// nothing started lazily is mistaken for a step's allocation.
START_TEST(train_step_allocates_nothing) {
    unsigned long before = alloc_count();
    free(xmalloc(16));                       // the counter sees our calls
    ck_assert_uint_eq(alloc_count(), before + 1);
    Corpus c;
    small_corpus(&c);
    Trainer t;
    small_trainer(&t, &c);
    Error err;
    StepResult r;
    ck_assert_int_eq(train_step(&t, &c.train, &r, &err), 0);
    // no ck_assert in between: Check itself allocates to record each one
    before = alloc_count();
    int rc = 0;
    for (int i = 0; i < 3; i++) rc |= train_step(&t, &c.train, &r, &err);
    double loss;
    rc |= evaluate(&t, &c.val, 1, &loss, &err);
    unsigned long after = alloc_count();
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(after, before);
    trainer_free(&t);
    corpus_free(&c);
}
END_TEST

START_TEST(resume_refusals) {
    Error err;
    Trainer t;
    Vocab v;
    ck_assert_int_eq(trainer_resume(&t, "/nonexistent/run", &v, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/run/model"));
    // a chapter 5 model without training state
    Corpus c;
    small_corpus(&c);
    Trainer a;
    small_trainer(&a, &c);
    char out[96], p[160];
    snprintf(out, sizeof out, "%s/run", dir);
    ck_assert_int_eq(trainer_save(&a, out, &c.vocab, &err), 0);
    snprintf(p, sizeof p, "%s/state-0.safetensors", out);
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(trainer_resume(&t, out, &v, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "state-0.safetensors"));
    ck_assert_ptr_null(v.chars);
    trainer_free(&a);
    corpus_free(&c);
    cleanup_dir();
}
END_TEST

Suite *ch6_suite(void) {
    Suite *s = suite_create("ch6");
    TCase *tc = tcase_new("train", "ch6");
    tcase_add_test(tc, training_matches_pytorch);
    tcase_add_test(tc, schedule_and_clipping_known_values);
    tcase_add_test(tc, resume_is_bit_exact);
    tcase_add_test(tc, nan_stops_before_the_update);
    tcase_add_test(tc, train_step_allocates_nothing);
    tcase_add_test(tc, resume_refusals);
    suite_add_tcase(s, tc);
    return s;
}
