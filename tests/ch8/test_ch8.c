// Tests of chapter 8: every kernel against the CPU function it replaces,
// run under the host emulation (chapters/ch8_cuda/emu/), so no GPU is
// needed. The checks themselves live beside the chapter's kernels
// (chapters/ch8_cuda/kcheck/: ./ch8 --check runs them on a GPU); each row
// of their table is one test here, its sizes odd on purpose (not
// multiples of a block or a warp).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_util.h"
#include "dataset.h"
#include "emu/emu_schedule.h"
#include "gemm.cuh"
#include "generate.cuh"
#include "gpt_train.cuh"
#include "kcheck/kcheck.cuh"
#include "mem.h"

// Under ThreadSanitizer (make check-tsan) the variants of the whole
// model's step are skipped: they launch no kernel that another check
// does not, and they are most of its time (make check runs them).
#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

// Row i of the checks' table, its inputs drawn from seed; how: "" or
// how the fibers switched, for the messages.
static void check_row(int i, uint64_t seed, const char *how) {
    const KCheck *c = kcheck_row(i);
    KReport rep = {.n = 0};
    c->run(&rep, c->sz, seed);
    ck_assert_msg(rep.n > 0, "%s: the check compared nothing", c->name);
    for (int j = 0; j < rep.n; j++) {
        const KResult *r = &rep.r[j];
        ck_assert_msg(r->ok, "%s at %s%s: error %.3g > tolerance %.1g",
                      r->name, r->sizes, how, r->err, r->tol);
    }
}

START_TEST(kernel_matches_the_cpu) {
#ifdef UNDER_TSAN
    if (kcheck_row(_i)->model_variant) return;
#endif
    check_row(_i, 77 + (uint64_t)_i, "");
}
END_TEST

#ifndef UNDER_TSAN   // (host threads there: no fibers)
// The checks with the fibers switching by glibc's swapcontext, the way
// of every machine but x86-64, where the emulator switches on its own
// (emu/emu.cpp): so that both ways are tested here. One row of each check
// function (its first) is enough for that, and costs a fifth of them all
// with a system call a switch.
static void use_swapcontext(void) { emu_use_swapcontext(true); }
static void use_own_switch(void) { emu_use_swapcontext(false); }

// The index of the k-th row that is the first of its check function
// (model variants aside); with k = -1, how many there are.
static int first_row(int k) {
    int n = 0;
    for (int i = 0; i < kcheck_rows(); i++) {
        if (kcheck_row(i)->model_variant
            || (i > 0 && kcheck_row(i - 1)->run == kcheck_row(i)->run))
            continue;
        if (n++ == k) return i;
    }
    return n;
}

START_TEST(kernel_matches_the_cpu_by_swapcontext) {
    ck_assert_msg(!emu_own_switch(), "the fibers do not use swapcontext");
    int i = first_row(_i);
    check_row(i, 177 + (uint64_t)i, " (swapcontext)");
}
END_TEST
#endif

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
    ck_assert_int_eq(gpt_train_init(g, &m, &v, B, mc.block_size, &err), 0);
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

// --graph: the same trainer with each training step replayed from a CUDA
// graph (recorded at step 2, replayed at steps 3 to 6, the evaluations
// in between launch by launch) gives the very bits of the trainer
// without one, losses, norms, weights and moments, in fp32 (_i = 0) and
// in bf16 (_i = 1, where the products' bf16 copies must be found as the
// recording found them). A model with dropout is refused.
START_TEST(gpu_trainer_by_graph_as_without) {
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
    TrainConfig tc = {.batch = 3, .steps = 6, .lr = 3e-3f, .min_lr = 3e-4f,
                      .warmup = 1, .decay_steps = 6,
                      .adamw = {0.9f, 0.99f, 1e-8f, 0.1f},
                      .grad_clip = 0.5f, .eval_every = 0, .eval_iters = 1,
                      .seed = 9};
    bool was = gemm_bf16();
    gemm_set_bf16(_i == 1);
    GptTrain host[2];
    GptTrainCuda gpu[2];
    TrainModel tm[2];
    Trainer t[2];
    for (int k = 0; k < 2; k++) {   // k = 1 through the graph
        tiny_gpt(&host[k], &c, tc.batch);
        ck_assert_int_eq(gpt_train_cuda_init(&gpu[k], &host[k], false, &err),
                         0);
        ck_assert_int_eq(gpt_train_cuda_set_graph(&gpu[k], k == 1, &err), 0);
        tm[k] = gpt_train_cuda_model(&gpu[k]);
        ck_assert_int_eq(trainer_init(&t[k], &tm[k], &tc, &err), 0);
        tm[k].load(tm[k].self, t[k].m, t[k].v);
    }
    for (int s = 0; s < tc.steps; s++) {
        StepResult r[2];
        double ev[2];
        for (int k = 0; k < 2; k++) {
            ck_assert_msg(train_step(&t[k], &c.train, &r[k], &err) == 0,
                          "%s", err.msg);
            ck_assert_msg(evaluate(&t[k], &c.val, 1, &ev[k], &err) == 0,
                          "%s", err.msg);
        }
        ck_assert_msg(r[1].loss == r[0].loss && r[1].grad_norm ==
                      r[0].grad_norm && ev[1] == ev[0], "step %d: loss "
                      "%.9g, norm %.9g, val %.9g by the graph; %.9g, %.9g, "
                      "%.9g without", s + 1, r[1].loss, r[1].grad_norm,
                      ev[1], r[0].loss, r[0].grad_norm, ev[0]);
    }
    // recorded once (step 2), replayed since: evaluations in between
    // neither release memory nor change what it recorded
    ck_assert_int_eq(gpu[1].graph_records, 1);
    for (int k = 0; k < 2; k++) tm[k].sync(tm[k].self, t[k].m, t[k].v);
    size_t n = t[0].model.num_params;
    ck_assert(memcmp(t[0].model.params, t[1].model.params, n * 4) == 0);
    ck_assert(memcmp(t[0].m, t[1].m, n * 4) == 0);
    ck_assert(memcmp(t[0].v, t[1].v, n * 4) == 0);
    for (int k = 0; k < 2; k++) {
        trainer_free(&t[k]);
        gpt_train_cuda_free(&gpu[k]);
        gpt_train_free(&host[k]);
    }
    gemm_set_bf16(was);
    // dropout: refused, with the reason
    GptTrain d;
    tiny_gpt(&d, &c, tc.batch);
    d.model.cfg.dropout = 0.1f;
    GptTrainCuda dg;
    ck_assert_int_eq(gpt_train_cuda_init(&dg, &d, false, &err), 0);
    ck_assert_int_eq(gpt_train_cuda_set_graph(&dg, true, &err), -1);
    ck_assert_msg(strstr(err.msg, "--dropout 0"), "%s", err.msg);
    gpt_train_cuda_free(&dg);
    gpt_train_free(&d);
    corpus_free(&c);
}
END_TEST

// ---- sampling on the GPU ----------------------------------------------------

// A random GPT of odd sizes (37 ids, 3 heads of 7, a block of 16), its
// weights drawn wide (std 0.3; the 1-D ones around 0.5) so that the next
// id depends strongly on the context: a wrong window or a wrong row of
// logits changes the text within a few tokens.
static void random_gpt(Gpt *m, bool bias, PosKind pos, uint64_t seed) {
    GptConfig mc = {.vocab_size = 37, .block_size = 16, .n_layer = 2,
                    .n_head = 3, .n_embd = 21, .n_ffn = 50, .dropout = 0,
                    .bias = bias, .positional = pos};
    Error err;
    ck_assert_msg(gpt_create(m, &mc, &err) == 0, "%s", err.msg);
    Rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < m->n_tensors; i++) {
        const GptTensor *t = &m->tensors[i];
        size_t n = (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
        rng_normal_fill(&r, m->params + t->offset, n,
                        t->ndim == 1 ? 0.5f : 0.0f, 0.3f);
    }
}

static void count_token(int id, void *ctx) {
    (void)id;
    ++*(int *)ctx;
}

// The GPU's generator (generate.cu: chapter 5's loop with the logits of a
// full window computed on the GPU) writes exactly the ids that chapter
// 5's generate() writes on the CPU with its KV cache, for the same seed
// and options: 40 new tokens, so that the window of 16 slides (and, with
// the exact window, moves at every step), at temperature 0.8 with and
// without top-k, from a short prompt and from one longer than a block.
// The activations are a batch's (B=2, T=16), as the trainer's are; one
// model takes the fused attention. The GPU's logits are not bit-identical
// to the CPU's, but an id would differ only if a uniform draw landed
// within about 1e-6 of a boundary between two ids.
START_TEST(gpu_samples_as_the_cpu) {
    const SampleOptions samplings[] = {{0.8f, 0, 1.0f}, {0.8f, 5, 1.0f}};
    int prompt[19];
    for (int i = 0; i < 19; i++) prompt[i] = (7 * i + 3) % 37;
    for (int c = 0; c < 2; c++) {
        Gpt m;
        random_gpt(&m, c == 0, c == 0 ? POS_LEARNED : POS_SINUSOIDAL,
                   11 + (uint64_t)c);
        int np = c == 0 ? 3 : 19, total = np + 40;
        Error err;
        GptCuda d;
        GptCudaActs a;
        ck_assert_int_eq(gpt_cuda_create(&d, &m, &err), 0);
        ck_assert_msg(gpt_cuda_acts_alloc(&a, &m.cfg, 2, 16, c == 1, false,
                                          &err) == 0, "%s", err.msg);
        for (int s = 0; s < 2; s++)
            for (int w = 0; w < 2; w++) {
                GenOptions o = {.max_new_tokens = 40,
                                .sample = samplings[s], .seed = 5 + s,
                                .use_cache = true,
                                .window = w ? WINDOW_EXACT : WINDOW_SLIDE};
                int cpu[59], gpu[59], called = 0;
                GenStats st;
                ck_assert_msg(generate(&m, prompt, np, cpu, &o, NULL, NULL,
                                       NULL, &err) == 0, "%s", err.msg);
                ck_assert_msg(generate_cuda(&d, &a, prompt, np, gpu, &o,
                                            count_token, &called, &st,
                                            &err) == 0, "%s", err.msg);
                for (int i = 0; i < total; i++)
                    ck_assert_msg(gpu[i] == cpu[i], "model %d, sampling %d,"
                                  " window %d: id %d is %d on the GPU, %d on"
                                  " the CPU", c, s, w, i, gpu[i], cpu[i]);
                // no cache on the GPU: every token is a full window
                ck_assert_int_eq(called, 40);
                ck_assert_int_eq(st.tokens, 40);
                ck_assert_int_eq(st.prefills, 40);
            }
        gpt_cuda_acts_free(&a);
        gpt_cuda_free(&d);
        gpt_free(&m);
    }
}
END_TEST

// A prompt id outside the vocabulary is refused with the CPU's message,
// before a token is written, and so are activations too small for the
// generation's longest window (allocated for T=8: 3 + 14 tokens reach
// the block of 16).
START_TEST(gpu_sampling_refuses_bad_input) {
    Gpt m;
    random_gpt(&m, true, POS_LEARNED, 3);
    Error err, cpu_err;
    GptCuda d;
    GptCudaActs a, small;
    ck_assert_int_eq(gpt_cuda_create(&d, &m, &err), 0);
    ck_assert_int_eq(gpt_cuda_acts_alloc(&a, &m.cfg, 1, 16, false, false,
                                         &err), 0);
    ck_assert_int_eq(gpt_cuda_acts_alloc(&small, &m.cfg, 4, 8, false,
                                         false, &err), 0);
    GenOptions o = {.max_new_tokens = 5, .sample = {0.8f, 0, 1.0f},
                    .seed = 1, .use_cache = true, .window = WINDOW_SLIDE};
    const int bad[][3] = {{4, 37, 1}, {4, 2, -1}};
    int out[8], called = 0;
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(generate(&m, bad[k], 3, out, &o, NULL, NULL, NULL,
                                  &cpu_err), -1);
        ck_assert_int_eq(generate_cuda(&d, &a, bad[k], 3, out, &o,
                                       count_token, &called, NULL, &err),
                         -1);
        ck_assert_str_eq(err.msg, cpu_err.msg);
    }
    const int good[3] = {4, 2, 1};
    o.max_new_tokens = 14;
    ck_assert_int_eq(generate_cuda(&d, &small, good, 3, out, &o, count_token,
                                   &called, NULL, &err), -1);
    ck_assert_msg(strstr(err.msg, "a window of 16 tokens (block_size=16)"),
                  "%s", err.msg);
    ck_assert_int_eq(called, 0);
    gpt_cuda_acts_free(&small);
    gpt_cuda_acts_free(&a);
    gpt_cuda_free(&d);
    gpt_free(&m);
}
END_TEST

Suite *ch8_suite(void) {
    Suite *s = suite_create("ch8");
    TCase *tc = tcase_new("kernels", "ch8");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, kernel_matches_the_cpu, 0, kcheck_rows());
    suite_add_tcase(s, tc);
#ifndef UNDER_TSAN   // (host threads there: no fibers)
    TCase *tu = tcase_new("swapcontext", "ch8");
    tcase_set_timeout(tu, 60);
    tcase_add_checked_fixture(tu, use_swapcontext, use_own_switch);
    tcase_add_loop_test(tu, kernel_matches_the_cpu_by_swapcontext, 0,
                        first_row(-1));
    suite_add_tcase(s, tu);
#endif
    TCase *tt = tcase_new("trainer", "ch8");
    tcase_set_timeout(tt, 120);
    tcase_add_test(tt, gpu_trainer_follows_the_cpu);
    tcase_add_loop_test(tt, gpu_trainer_by_graph_as_without, 0, 2);
    suite_add_tcase(s, tt);
    TCase *tg = tcase_new("generate", "ch8");
    tcase_set_timeout(tg, 120);
    tcase_add_test(tg, gpu_samples_as_the_cpu);
    tcase_add_test(tg, gpu_sampling_refuses_bad_input);
    suite_add_tcase(s, tg);
    return s;
}
