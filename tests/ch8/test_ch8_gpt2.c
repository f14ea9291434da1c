// Tests of chapter 8 with chapter 9's GPT-2 (./ch8 --gpt2): the GPU's
// trainer and samples, under the host emulation, against the CPU's, on
// models that have what GPT-2 has and chapter 6's GPT lacks: the tanh
// GELU, biases, a vocabulary that is a multiple of nothing (2,053 ids,
// a prime, so that every kernel's last block over the vocabulary is
// partial, and large enough for the embedding's many-ids path), and
// batches of windows shorter than the block, whose samples run longer
// windows than a batch holds. The tiny GPT-2 of tests/reference/ch9_ft/
// (transformers' own, loaded by chapter 9's loader) runs too.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "checkpoint.h"
#include "dataset.h"
#include "finetune.h"
#include "gemm.cuh"
#include "generate.cuh"
#include "gpt2_model.h"
#include "gpt_train.cuh"
#include "mem.h"
#include "run.h"
#include "utf8.h"

#define FT_MODEL "tests/reference/ch9_ft"

enum { V_ODD = 2053, BLOCK = 24, WINDOW = 9, BATCH = 3 };

// Every weight drawn anew and wide (std 0.5; the 1-D ones, LayerNorm's
// and the biases, around 0.5), so that the FFN's inputs are of order 1,
// where the tanh GELU and the exact one differ (by up to 2e-4; near 0
// they agree), and the next id depends strongly on the context.
static void draw_wide(Gpt *m, uint64_t seed) {
    Rng r;
    rng_seed(&r, seed);
    for (int i = 0; i < m->n_tensors; i++) {
        const GptTensor *t = &m->tensors[i];
        size_t n = (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
        rng_normal_fill(&r, m->params + t->offset, n,
                        t->ndim == 1 ? 0.5f : 0.0f, 0.5f);
    }
}

// A GPT-2 in miniature: 2 layers, 2 heads of 8, block 24, 2,053 ids.
static void tiny_gpt2(Gpt *m, uint64_t seed) {
    GptConfig c = {.vocab_size = V_ODD, .block_size = BLOCK, .n_layer = 2,
                   .n_head = 2, .n_embd = 16, .n_ffn = 64, .dropout = 0,
                   .bias = true, .positional = POS_LEARNED,
                   .act = GELU_TANH};
    Error err;
    ck_assert_msg(gpt_create(m, &c, &err) == 0, "%s", err.msg);
    draw_wide(m, seed);
}

// The model of variant k: the tiny GPT-2 above (k < 4), or the fixture's
// GPT-2 as chapter 9 loads it (its config: 2,048 ids, block 128, the
// tanh GELU, biases, the tied head), its untrained weights (whose FFN
// inputs are all near 0) drawn wide as well.
static void model_of(Gpt *m, int k) {
    if (k < 4) {
        tiny_gpt2(m, 21);
        return;
    }
    Error err;
    ck_assert_msg(gpt2_load(FT_MODEL, m, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(m->cfg.act, GELU_TANH);
    ck_assert(m->cfg.bias);
    m->cfg.dropout = 0;   // its config's 0.1: the GPU's masks are not
                          // the CPU's (the task takes --dropout's 0)
    draw_wide(m, 22);
}

// A GptTrain of the model of variant k with batches of B x T, as chapter
// 9's task makes its run's: no characters, GPT-2's tokenizer named.
static void train_of(GptTrain *g, int k, int B, int T) {
    Gpt m;
    model_of(&m, k);
    Vocab none = {.size = 0, .chars = xmalloc(1)};
    Error err;
    ck_assert_msg(gpt_train_init(g, &m, &none, B, T, &err) == 0, "%s",
                  err.msg);
    snprintf(g->tokenizer, sizeof g->tokenizer, "gpt2");
}

// A corpus of 3,000 ids that visits every id of [0, V): a walk of
// stride 1,031 (prime to V) with a step back every seventh id, so that a
// window holds a pattern to learn.
static void id_corpus(Corpus *c, int V) {
    size_t n = 3000;
    int *ids = xmalloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++)
        ids[i] = (int)((i * 1031 + (i / 7) * 11) % (size_t)V);
    corpus_from_ids(c, ids, n);
}

// The largest difference between got and want, against want's largest
// magnitude (scale).
static double worst_diff(const float *got, const float *want, size_t n,
                         double *scale) {
    double diff = 0;
    *scale = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (!(d <= diff)) diff = d;
        *scale = fmax(*scale, fabs(want[i]));
    }
    return diff;
}

// Chapter 6's trainer on the GPU's TrainModel follows the same trainer
// on the CPU for four steps of 3 windows of 9 tokens (the block is 24;
// the fixture's 128, windows of 16), with an evaluation after each: the
// losses, gradient norms and evaluations within 1e-5, and at the end the
// weights and AdamW's moments within 1e-4 of the CPU's (the tolerances
// of chapter 6's GPT in test_ch8.c; the keys' bias aside, below).
// Variants: the fused block (_i 0), the plain one (1), the fused
// attention (2), the steps replayed from a CUDA graph (3), the
// fixture's GPT-2 (4).
START_TEST(gpt2_trainer_follows_the_cpu) {
    int k = _i, T = k < 4 ? WINDOW : 16;
    bool was_fused = block_fused();
    block_set_fused(k != 1);
    GptTrain cpu, host;
    train_of(&cpu, k, BATCH, T);
    train_of(&host, k, BATCH, T);
    ck_assert_int_lt(T, cpu.model.cfg.block_size);
    Corpus c;
    id_corpus(&c, cpu.model.cfg.vocab_size);
    TrainConfig tc = {.batch = BATCH, .window = T, .steps = 4, .lr = 3e-3f,
                      .min_lr = 3e-4f, .warmup = 1, .decay_steps = 4,
                      .adamw = {0.9f, 0.95f, 1e-8f, 0.1f},
                      .grad_clip = 1.0f, .eval_every = 0, .eval_iters = 1,
                      .seed = 13};
    Error err;
    GptTrainCuda gpu;
    ck_assert_msg(gpt_train_cuda_init(&gpu, &host, k == 2, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(gpt_train_cuda_set_graph(&gpu, k == 3, &err), 0);
    TrainModel tm_cpu = gpt_train_model(&cpu);
    TrainModel tm_gpu = gpt_train_cuda_model(&gpu);
    Trainer a, b;
    ck_assert_int_eq(trainer_init(&a, &tm_cpu, &tc, &err), 0);
    ck_assert_int_eq(trainer_init(&b, &tm_gpu, &tc, &err), 0);
    tm_gpu.load(tm_gpu.self, b.m, b.v);   // as ./ch8 does after attach
    for (int s = 1; s <= tc.steps; s++) {
        StepResult ra, rb;
        double ea, eb;
        ck_assert_msg(train_step(&a, &c.train, &ra, &err) == 0, "%s",
                      err.msg);
        ck_assert_msg(train_step(&b, &c.train, &rb, &err) == 0, "%s",
                      err.msg);
        ck_assert_int_eq(evaluate(&a, &c.val, 1, &ea, &err), 0);
        ck_assert_msg(evaluate(&b, &c.val, 1, &eb, &err) == 0, "%s",
                      err.msg);
        ck_assert_msg(fabsf(rb.loss - ra.loss) <= 1e-5f * ra.loss,
                      "variant %d, step %d: loss %.7f on the GPU, %.7f on "
                      "the CPU", k, s, rb.loss, ra.loss);
        ck_assert_msg(fabs(rb.grad_norm - ra.grad_norm)
                          <= 1e-5 * ra.grad_norm,
                      "variant %d, step %d: gradient norm %.7f on the GPU, "
                      "%.7f on the CPU", k, s, rb.grad_norm, ra.grad_norm);
        ck_assert_msg(fabs(eb - ea) <= 1e-5 * ea, "variant %d, step %d: val "
                      "%.7f on the GPU, %.7f on the CPU", k, s, eb, ea);
    }
    if (k == 3) ck_assert_int_eq(gpu.graph_records, 1);
    tm_gpu.sync(tm_gpu.self, b.m, b.v);
    // The keys' bias has no gradient in exact arithmetic (it adds one
    // number to every score of a row, which no softmax sees): what it
    // gets is rounding, which AdamW's division by the gradient's size
    // turns into steps of up to lr, other ones on each side. Left out.
    const GptConfig *mc = &cpu.model.cfg;
    for (int l = 0; l < mc->n_layer; l++) {
        size_t at = (size_t)(cpu.model.w.h[l].attn_c_attn_b
                             - cpu.model.params) + (size_t)mc->n_embd;
        memcpy(b.model.params + at, a.model.params + at,
               (size_t)mc->n_embd * sizeof(float));
    }
    const float *want[] = {a.model.params, a.m, a.v};
    const float *got[] = {b.model.params, b.m, b.v};
    const char *what[] = {"weights", "first moments", "second moments"};
    for (int j = 0; j < 3; j++) {
        double scale, diff = worst_diff(got[j], want[j], a.model.num_params,
                                        &scale);
        ck_assert_msg(diff <= 1e-4 * scale, "variant %d, %s: largest "
                      "difference %.3g (scale %.3g)", k, what[j], diff,
                      scale);
    }
    trainer_free(&a);
    trainer_free(&b);
    gpt_train_cuda_free(&gpu);
    gpt_train_free(&cpu);
    gpt_train_free(&host);
    corpus_free(&c);
    block_set_fused(was_fused);
}
END_TEST

static void count_token(int id, void *ctx) {
    (void)id;
    ++*(int *)ctx;
}

// The GPU trainer's samples (gpt_train_cuda_generate) are the CPU's ids,
// greedy and sampled (temperature 0.8, the 40 most likely), from one id:
// 5 new tokens, whose windows fit in the batch's activations (3 x 9),
// then 40, whose windows grow past 9 to the block of 24 and slide, with
// both window policies: those run in activations of the sample's own,
// made once for the longest window, where a full window's logits are
// then compared with the CPU's. With the fused attention (_i = 1) too.
// (An id would differ only where a draw, or the top two logits, lay
// within about 1e-6 of each other.)
START_TEST(gpt2_samples_as_the_cpu) {
    GptTrain host;
    train_of(&host, 0, BATCH, WINDOW);
    Gpt cpu;
    tiny_gpt2(&cpu, 21);
    Error err;
    GptTrainCuda gpu;
    ck_assert_msg(gpt_train_cuda_init(&gpu, &host, _i == 1, &err) == 0, "%s",
                  err.msg);
    const SampleOptions samplings[] = {{0.0f, 0, 1.0f}, {0.8f, 40, 1.0f}};
    const int lengths[] = {5, 40};
    for (int l = 0; l < 2; l++)
        for (int s = 0; s < 2; s++)
            for (int w = 0; w < 2; w++) {
                GenOptions o = {.max_new_tokens = lengths[l],
                                .sample = samplings[s], .seed = 3 + s,
                                .use_cache = true,
                                .window = w ? WINDOW_EXACT : WINDOW_SLIDE};
                int prompt = 2050, want[41], got[41], called = 0;
                GenStats st;
                ck_assert_msg(generate(&cpu, &prompt, 1, want, &o, NULL,
                                       NULL, NULL, &err) == 0, "%s",
                              err.msg);
                ck_assert_msg(gpt_train_cuda_generate(&gpu, &prompt, 1, got,
                                                      &o, count_token,
                                                      &called, &st, &err)
                                  == 0, "%s", err.msg);
                for (int i = 0; i <= lengths[l]; i++)
                    ck_assert_msg(got[i] == want[i], "%d tokens, sampling "
                                  "%d, window %d: id %d is %d on the GPU, "
                                  "%d on the CPU", lengths[l], s, w, i,
                                  got[i], want[i]);
                ck_assert_int_eq(called, lengths[l]);
                ck_assert_int_eq(st.tokens, lengths[l]);
                // the short samples ran in the batch's activations
                ck_assert(l == 1 || gpu.sample.mem == NULL);
            }
    ck_assert_int_eq(gpu.sample.T, BLOCK);
    // and there a full window's logits, every position's, are the CPU's
    // (within 1e-5 of the largest): what the samples are drawn from
    int ids[BLOCK];
    for (int i = 0; i < BLOCK; i++) ids[i] = (i * 389 + 5) % V_ODD;
    GptActs ca;
    ck_assert_int_eq(gpt_acts_alloc(&ca, &cpu.cfg, 1, BLOCK, &err), 0);
    ck_assert_int_eq(gpt_forward(&cpu, &ca, ids, NULL, 1, BLOCK, false, NULL,
                                 NULL, &err), 0);
    ck_assert_msg(gpt_forward_cuda(&gpu.dev, &gpu.sample, ids, NULL, 1,
                                   BLOCK, false, NULL, NULL, &err) == 0,
                  "%s", err.msg);
    size_t n = (size_t)BLOCK * V_ODD;
    float *logits = xmalloc(n * sizeof *logits);
    cuda_download(logits, gpu.sample.logits, n);
    double scale, diff = worst_diff(logits, ca.logits, n, &scale);
    ck_assert_msg(diff <= 1e-5 * scale, "logits: largest difference %.3g "
                  "(scale %.3g)", diff, scale);
    free(logits);
    gpt_acts_free(&ca, &cpu.cfg);
    // a sample whose window the batch cannot hold, and no room for one:
    // generate_cuda refuses it before the first token, naming the sizes
    GenOptions o = {.max_new_tokens = 12, .sample = {0.0f, 0, 1.0f},
                    .use_cache = true, .window = WINDOW_SLIDE};
    int prompt = 7, out[13], called = 0;
    ck_assert_int_eq(generate_cuda(&gpu.dev, &gpu.acts, &prompt, 1, out, &o,
                                   count_token, &called, NULL, &err), -1);
    ck_assert_msg(strstr(err.msg, "B=3 T=9 cannot hold a window of 12 "
                         "tokens"), "%s", err.msg);
    ck_assert_int_eq(called, 0);
    gpt_train_cuda_free(&gpu);
    gpt_train_free(&host);
    gpt_free(&cpu);
}
END_TEST

// The GPU's memory that a GPT-2-small run takes (gpt_train_cuda_bytes),
// against the sum of its parts worked out here by hand: the weights,
// gradients and AdamW's moments, the activations of a batch of 4 x 64
// (whose logits alone are 4 x 64 x 50,257 floats), a sample's own
// activations for a window of 100 (the batch's hold 64), and no more
// than 5% besides (the scratch). A sample that fits in the batch adds
// nothing; bf16 mode adds its copies of the products' operands.
START_TEST(gpt2_gpu_memory_counts_its_parts) {
    GptConfig c = {.vocab_size = 50257, .block_size = 1024, .n_layer = 12,
                   .n_head = 12, .n_embd = 768, .n_ffn = 3072,
                   .dropout = 0, .bias = true, .positional = POS_LEARNED,
                   .act = GELU_TANH};
    size_t P = gpt_param_count(&c);
    ck_assert_uint_eq(P, 124439808);   // GPT-2 small, wpe included
    size_t f = sizeof(float);
    size_t acts = gpt_cuda_acts_bytes(&c, 4, 64, false, false);
    size_t logits = (size_t)4 * 64 * 50257 * f;
    ck_assert_uint_gt(acts, logits);
    size_t sample = gpt_cuda_acts_bytes(&c, 1, 100, false, false);
    size_t parts = 4 * P * f + acts + sample;
    size_t bytes = gpt_train_cuda_bytes(&c, 4, 64, false, 100);
    ck_assert_msg(bytes >= parts && bytes <= parts + parts / 20, "%zu bytes "
                  "for parts of %zu", bytes, parts);
    ck_assert_uint_eq(gpt_train_cuda_bytes(&c, 4, 64, false, 64),
                      bytes - sample);
    bool was = gemm_bf16();
    gemm_set_bf16(true);
    size_t bf16 = gpt_train_cuda_bytes(&c, 4, 64, false, 100);
    gemm_set_bf16(was);
    // three bf16 copies of room for the largest operand, wte (V x C)
    ck_assert_uint_gt(bf16, bytes + 3 * (size_t)50257 * 768 * 2);
}
END_TEST

// ---- the whole run ----------------------------------------------------------

// What ./ch8 --gpt2 gives chapter 6's program besides chapter 9's task,
// less its flags and its checks of the device: the model on the GPU (the
// emulation, here) and the samples written there.
typedef struct {
    GptTrainCuda gt;
    bool attached;
} TestGpu;

static int gpu_attach(void *ctx, GptTrain *host, TrainModel *tm,
                      Error *err) {
    TestGpu *g = ctx;
    if (gpt_train_cuda_init(&g->gt, host, false, err) != 0) return -1;
    g->attached = true;
    *tm = gpt_train_cuda_model(&g->gt);
    return 0;
}

static void gpu_detach(void *ctx) {
    TestGpu *g = ctx;
    if (g->attached) gpt_train_cuda_free(&g->gt);
    g->attached = false;
}

static int gpu_generate(void *ctx, const int *prompt, int n_prompt, int *out,
                        const GenOptions *o, TokenFn on_token, void *tctx,
                        GenStats *stats, Error *err) {
    TestGpu *g = ctx;
    return gpt_train_cuda_generate(&g->gt, prompt, n_prompt, out, o,
                                   on_token, tctx, stats, err);
}

// train_main on the command line "PROG ARGS" (words between spaces) with
// chapter 9's task: on the CPU, as ./ch9 --finetune, when PROG is ch9;
// on the GPU, as ./ch8 --gpt2, when it is gpu.
static int finetune_program(void *line) {
    char words[1024];
    snprintf(words, sizeof words, "%s", (const char *)line);
    char *argv[64];
    int argc = 0;
    for (char *w = strtok(words, " "); w && argc < 63; w = strtok(NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    Gpt2Finetune f;
    gpt2_finetune_init(&f);
    TestGpu gpu = {.attached = false};
    TrainBackend be = f.be;
    if (strcmp(argv[0], "gpu") == 0) {
        be.command = "ch8 --gpt2";
        be.ctx = &gpu, be.attach = gpu_attach, be.detach = gpu_detach;
        be.generate = gpu_generate;
    }
    int rc = train_main(argc, argv, &be);
    gpt2_finetune_free(&f);
    return rc;
}

static char dir[64];

// "PROG ARGS" in a child, its output in dir/name.txt and dir/name.err,
// on the first 20,000 bytes of Tiny Shakespeare (dir/data.txt) with the
// fixture's GPT-2 unless ARGS resume a run: its exit status.
static int finetune(const char *prog, const char *name, const char *args) {
    char line[1024], out[200], err[200];
    snprintf(line, sizeof line, "%s %s --data %s/data.txt --threads 1 "
             "--eval-iters 2 %s", prog, strstr(args, "--resume") ? ""
             : "--model " FT_MODEL, dir, args);
    snprintf(out, sizeof out, "%s/%s.txt", dir, name);
    snprintf(err, sizeof err, "%s/%s.err", dir, name);
    return run_in_child(out, err, finetune_program, line);
}

// The file dir/name, NUL-terminated.
static char *slurp(const char *name) {
    char path[200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    Error err;
    size_t n;
    char *s = read_file(path, &n, &err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    return s;
}

// The train and val losses of the evaluation at step in dir/name.
static void losses_at(const char *name, int step, double loss[2]) {
    char *s = slurp(name), want[48];
    snprintf(want, sizeof want, "eval step %d: train ", step);
    char *at = strstr(s, want);
    ck_assert_msg(at != NULL, "%s: no '%s'", name, want);
    ck_assert_int_eq(sscanf(at + strlen(want), "%lf, val %lf", &loss[0],
                            &loss[1]), 2);
    free(s);
}

// How many times dir/name holds text.
static int count_of(const char *name, const char *text) {
    char *s = slurp(name);
    int n = 0;
    for (const char *p = s; (p = strstr(p, text)); p += strlen(text)) n++;
    free(s);
    return n;
}

// The model of the run saved in dir/run: its checkpoint, or its
// Hugging Face copy (hf).
static void saved_model(Gpt *m, const char *run, bool hf) {
    char path[200];
    Error err;
    if (hf) {
        snprintf(path, sizeof path, "%s/%s/hf", dir, run);
        ck_assert_msg(gpt2_load(path, m, &err) == 0, "%s", err.msg);
        return;
    }
    snprintf(path, sizeof path, "%s/%s/model.safetensors", dir, run);
    Vocab none;
    char tok[CHECKPOINT_TOKENIZER_MAX];
    int step;
    ck_assert_msg(checkpoint_load_any(path, m, &none, tok, &step, &err) == 0,
                  "%s", err.msg);
    ck_assert_str_eq(tok, "gpt2");
    ck_assert_int_eq(step, 4);
    vocab_free(&none);
}

// Chapter 9's fine-tuning run on the GPU (chapter 6's program with the
// task and the GPU's backend, as ./ch8 --gpt2 is) against the same run
// on the CPU (./ch9 --finetune): four steps of 2 windows of 16 tokens
// (the block is 128), evaluations before, at step 2 and at the end,
// samples of 40 tokens (longer than a window: written in activations of
// their own) and of 13. Both end well, their losses agree to the 4
// printed decimals (within 2e-4), their checkpoints name GPT-2's
// tokenizer and hold the same weights within 1e-4 of the largest (the
// keys' bias aside, as above), and the GPU's run has its tokenizer's
// files and its Hugging Face copy, which is its checkpoint's model bit
// for bit; each resumed to step 6, they agree again. Then --steps 0 on
// the GPU: the model loaded, evaluated and sampled, nothing trained.
START_TEST(gpt2_finetune_run_on_the_gpu) {
    snprintf(dir, sizeof dir, "/tmp/ch8_gpt2_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    Error err;
    size_t n;
    char *text = read_file(SHAKESPEARE_PATH, &n, &err);
    ck_assert_msg(text != NULL, "%s", err.msg);
    char path[200];
    snprintf(path, sizeof path, "%s/data.txt", dir);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(text, 1, 20000, f), 20000);
    fclose(f);
    free(text);
    const char *common = "--lr 1e-2 --steps 4 --eval-every 2 --batch 2 "
                         "--window 16 --sample-tokens 40";
    char args[300];
    snprintf(args, sizeof args, "%s --out %s/cpu", common, dir);
    ck_assert_int_eq(finetune("ch9", "cpu", args), 0);
    snprintf(args, sizeof args, "%s --out %s/gpu", common, dir);
    ck_assert_int_eq(finetune("gpu", "gpu", args), 0);
    for (int step = 0; step <= 4; step += 2) {
        double a[2], b[2];
        losses_at("cpu.txt", step, a);
        losses_at("gpu.txt", step, b);
        for (int k = 0; k < 2; k++)
            ck_assert_msg(fabs(a[k] - b[k]) <= 2e-4, "step %d: %s loss %.4f "
                          "on the GPU, %.4f on the CPU", step,
                          k ? "val" : "train", b[k], a[k]);
    }
    ck_assert_int_eq(count_of("gpu.txt", "---- sample"), 3);
    ck_assert_int_eq(count_of("cpu.txt", "---- sample"), 3);
    ck_assert_int_eq(count_of("gpu.txt", "(sampling failed"), 0);
    Gpt a, b, hf;
    saved_model(&a, "cpu", false);
    saved_model(&b, "gpu", false);
    saved_model(&hf, "gpu", true);
    ck_assert_int_eq(a.num_params, b.num_params);
    for (int l = 0; l < a.cfg.n_layer; l++) {   // the keys' bias
        size_t at = (size_t)(a.w.h[l].attn_c_attn_b - a.params)
                    + (size_t)a.cfg.n_embd;
        memcpy(b.params + at, a.params + at,
               (size_t)a.cfg.n_embd * sizeof(float));
    }
    double scale, diff = worst_diff(b.params, a.params, a.num_params, &scale);
    ck_assert_msg(diff <= 1e-4 * scale, "weights: largest difference %.3g "
                  "(scale %.3g)", diff, scale);
    gpt_free(&a);   // the Hugging Face copy against the GPU's own file
    saved_model(&a, "gpu", false);
    ck_assert_int_eq(hf.num_params, a.num_params);
    ck_assert(memcmp(hf.params, a.params, a.num_params * sizeof(float)) == 0);
    gpt_free(&a), gpt_free(&b), gpt_free(&hf);
    const char *files[] = {"gpu/vocab.json", "gpu/merges.txt",
                           "gpu/state-4.safetensors", "gpu/hf/vocab.json"};
    for (int k = 0; k < 4; k++) free(slurp(files[k]));
    // each resumed on its own side to step 6: the same losses again
    snprintf(args, sizeof args, "--resume %s/cpu --steps 6", dir);
    ck_assert_int_eq(finetune("ch9", "cpu6", args), 0);
    snprintf(args, sizeof args, "--resume %s/gpu --steps 6", dir);
    ck_assert_int_eq(finetune("gpu", "gpu6", args), 0);
    ck_assert_int_eq(count_of("gpu6.txt", "resumed "), 1);
    double a6[2], b6[2];
    losses_at("cpu6.txt", 6, a6);
    losses_at("gpu6.txt", 6, b6);
    for (int k = 0; k < 2; k++)
        ck_assert_msg(fabs(a6[k] - b6[k]) <= 2e-4, "resumed, step 6: loss "
                      "%.4f on the GPU, %.4f on the CPU", b6[k], a6[k]);
    free(slurp("gpu/state-6.safetensors"));
    // --steps 0: generation only
    ck_assert_int_eq(finetune("gpu", "gen", "--steps 0 --sample-tokens 30"),
                     0);
    ck_assert_int_eq(count_of("gen.txt", "eval step 0: train "), 1);
    ck_assert_int_eq(count_of("gen.txt", "---- sample"), 2);
    ck_assert_int_eq(count_of("gen.txt", "(sampling failed"), 0);
    remove_tree(dir);
}
END_TEST

Suite *ch8_gpt2_suite(void) {
    Suite *s = suite_create("ch8_gpt2");
    TCase *tt = tcase_new("trainer", "ch8");
    tcase_set_timeout(tt, 180);
    tcase_add_loop_test(tt, gpt2_trainer_follows_the_cpu, 0, 5);
    suite_add_tcase(s, tt);
    TCase *tg = tcase_new("generate", "ch8");
    tcase_set_timeout(tg, 180);
    tcase_add_loop_test(tg, gpt2_samples_as_the_cpu, 0, 2);
    tcase_add_test(tg, gpt2_gpu_memory_counts_its_parts);
    suite_add_tcase(s, tg);
    TCase *tr = tcase_new("run", "ch8");
    tcase_set_timeout(tr, 300);
    tcase_add_test(tr, gpt2_finetune_run_on_the_gpu);
    suite_add_tcase(s, tr);
    return s;
}
