// Tests of chapter 8: every kernel against the CPU function it replaces,
// run under the host emulation (chapters/ch8_cuda/emu.h), so no GPU is
// needed. The checks themselves live in the chapter (kcheck.cu: ./ch8
// --check runs them on a GPU); each entry of their table is one test
// here, its sizes odd on purpose (not multiples of a block or a warp).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_util.h"
#include "dataset.h"
#include "gpt_train.cuh"
#include "kcheck.cuh"
#include "mem.h"

START_TEST(kernel_matches_the_cpu) {
    const KCheck *c = &KCHECKS[_i];
    KReport rep = {.n = 0};
    c->run(&rep, c->sz, 77 + (uint64_t)_i);
    ck_assert_msg(rep.n > 0, "%s: the check compared nothing", c->name);
    for (int j = 0; j < rep.n; j++) {
        const KResult *r = &rep.r[j];
        ck_assert_msg(r->ok, "%s at %s: error %.3g > tolerance %.1g",
                      r->name, r->sizes, r->err, r->tol);
    }
}
END_TEST

// A small GPT of the corpus's vocabulary, the same for every call.
static void tiny_gpt(GptTrain *g, const Corpus *c, int B) {
    GptConfig mc = {.vocab_size = c->vocab.size, .block_size = 11,
                    .n_layer = 2, .n_head = 2, .n_embd = 18, .n_ffn = 72,
                    .dropout = 0.0f, .bias = true,
                    .positional = POS_LEARNED};
    Gpt m;
    Error err;
    ck_assert_int_eq(gpt_create(&m, &mc, &err), 0);
    Rng r;
    rng_seed(&r, 5);
    gpt_init(&m, &r);
    Vocab v = {.size = c->vocab.size};
    v.chars = xmalloc((size_t)v.size * sizeof *v.chars);
    memcpy(v.chars, c->vocab.chars, (size_t)v.size * sizeof *v.chars);
    ck_assert_int_eq(gpt_train_init(g, &m, &v, B, &err), 0);
}

// Chapter 6's trainer driving the GPU's TrainModel (gpt_train.cu: the
// passes, clipping and AdamW through the hooks of train.h) follows the
// same trainer on the CPU step for step: the losses and gradient norms
// within 1e-5, and after five steps the weights and AdamW's moments,
// brought back by the sync hook, within 1e-4 of the CPU's (five steps of
// AdamW on top of the step check's rounding). No dropout: the GPU's masks
// are not the CPU's.
START_TEST(gpu_trainer_follows_the_cpu) {
    char dir[] = "/tmp/ch8_test_XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/text.txt", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 40; i++)
        fprintf(f, "now is the winter of our discontent %d;\n", i % 9);
    fclose(f);
    Corpus c;
    Error err;
    ck_assert_msg(corpus_load(&c, path, &err) == 0, "%s", err.msg);
    unlink(path);
    rmdir(dir);
    TrainConfig tc = {.batch = 3, .steps = 5, .lr = 3e-3f, .min_lr = 3e-4f,
                      .warmup = 1, .decay_steps = 5,
                      .adamw = {0.9f, 0.99f, 1e-8f, 0.1f},
                      .grad_clip = 0.5f, .eval_every = 0, .eval_iters = 1,
                      .seed = 9};
    GptTrain cpu, host;
    tiny_gpt(&cpu, &c, tc.batch);
    tiny_gpt(&host, &c, tc.batch);
    GptTrainCuda gpu;
    ck_assert_int_eq(gpt_train_cuda_init(&gpu, &host, false, &err), 0);
    TrainModel tm_cpu = gpt_train_model(&cpu);
    TrainModel tm_gpu = gpt_train_cuda_model(&gpu);
    Trainer a, b;
    ck_assert_int_eq(trainer_init(&a, &tm_cpu, &tc, &err), 0);
    ck_assert_int_eq(trainer_init(&b, &tm_gpu, &tc, &err), 0);
    tm_gpu.load(tm_gpu.self, b.m, b.v);   // as ./ch8 does after attach
    for (int s = 0; s < tc.steps; s++) {
        StepResult ra, rb;
        ck_assert_int_eq(train_step(&a, &c.train, &ra, &err), 0);
        ck_assert_msg(train_step(&b, &c.train, &rb, &err) == 0, "%s",
                      err.msg);
        ck_assert_msg(fabsf(rb.loss - ra.loss) <= 1e-5f * ra.loss,
                      "step %d: loss %.7f on the GPU, %.7f on the CPU",
                      s + 1, rb.loss, ra.loss);
        ck_assert_msg(fabs(rb.grad_norm - ra.grad_norm)
                          <= 1e-5 * ra.grad_norm,
                      "step %d: gradient norm %.7f on the GPU, %.7f on "
                      "the CPU", s + 1, rb.grad_norm, ra.grad_norm);
    }
    tm_gpu.sync(tm_gpu.self, b.m, b.v);
    const float *want[] = {a.model.params, a.m, a.v};
    const float *got[] = {b.model.params, b.m, b.v};
    const char *what[] = {"weights", "first moments", "second moments"};
    size_t n = a.model.num_params;
    for (int k = 0; k < 3; k++) {
        double diff = 0, scale = 0;
        for (size_t i = 0; i < n; i++) {
            double d = fabs((double)got[k][i] - want[k][i]);
            if (!(d <= diff)) diff = d;
            scale = fmax(scale, fabs(want[k][i]));
        }
        ck_assert_msg(diff <= 1e-4 * scale, "%s: largest difference %.3g "
                      "(scale %.3g)", what[k], diff, scale);
    }
    trainer_free(&a);
    trainer_free(&b);
    gpt_train_cuda_free(&gpu);
    gpt_train_free(&cpu);
    gpt_train_free(&host);
    corpus_free(&c);
}
END_TEST

Suite *ch8_suite(void) {
    Suite *s = suite_create("ch8");
    TCase *tc = tcase_new("kernels", "ch8");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, kernel_matches_the_cpu, 0, N_KCHECKS);
    suite_add_tcase(s, tc);
    TCase *tt = tcase_new("trainer", "ch8");
    tcase_set_timeout(tt, 120);
    tcase_add_test(tt, gpu_trainer_follows_the_cpu);
    suite_add_tcase(s, tt);
    return s;
}
