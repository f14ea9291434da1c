// ch8 - chapter 6's GPT trained on the GPU. It is ./ch6 (the same flags,
// presets, progress line, CSV log, checkpoints and samples: chapter 6's
// program drives it through run.h's TrainBackend) with the model's passes,
// clipping, AdamW and samples on the device. Without a GPU it cannot
// train, and says so with an error (a bare ./ch8 first checks every
// kernel against the CPU under the host emulation).
//
//   ./ch8                 train (chapter 6's default preset) on the GPU
//   ./ch8 --check         every kernel against its CPU function, on the GPU
//   ./ch8 --emulate       the same under the emulation (no GPU needed)
//   ./ch8 --gpt2          chapter 9's fine-tuning of GPT-2, on the GPU:
//                         ./ch9 --finetune's flags, then the GPU's
//
// --gpt2 borrows chapter 9's TrainTask (finetune.h: GPT-2's tokenizer,
// its weights loaded from Hugging Face's files, its samples, checkpoints
// and Hugging Face copy) for this program alone: the kernels know
// nothing of chapter 9, whose GPT-2 is chapter 5's model with the tanh
// GELU, biases and 50,257 ids, all of which they run.
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "flags.h"
#include "block.cuh"
#include "finetune.h"
#include "flash.cuh"
#include "gemm.cuh"
#include "generate.cuh"
#include "gpt_train.cuh"
#include "kcheck/kcheck.cuh"
#include "mha.cuh"
#include "run.h"
#include "runtime.cuh"

// The emulated build of the kernels, linked into this program beside the
// GPU's with every name given the suffix _emu (see the Makefile).
int kcheck_all_emu(bool verbose);
void cuda_device_describe_emu(char *buf, size_t size);

static int self_check(bool emulated) {
    char dev[160];
    if (emulated) cuda_device_describe_emu(dev, sizeof dev);
    else cuda_device_describe(dev, sizeof dev);
    printf("kernel self-check on %s\n", dev);
    int failed = emulated ? kcheck_all_emu(true) : kcheck_all(true);
    printf("%s\n", failed ? "self-check FAILED" : "every kernel agrees "
           "with the CPU");
    return failed ? 1 : 0;
}

typedef struct {
    bool check, emulate, tf32, bf16, flash, unfused, graph;
    bool bare;            // ./ch8 with no argument at all
    bool gpt2;            // ./ch8 --gpt2: chapter 9's task
    int sample_tokens;    // --gpt2: a sample's length (--sample-tokens)
    int causal_block;
    GptTrainCuda gt;
    bool attached;
} Gpu;

static const char TITLE[] = "Chapter 8: the GPU";

// No GPU (why says what was found): the self-check under the emulation
// instead, with the title and a line that says so. Returns its status.
static int emulated_instead(const char *why) {
    printf("== %s ==\n", TITLE);
    printf("no GPU here (%s),\nso the kernels are checked under the host "
           "emulation instead\n", why);
    return self_check(true);
}

// Training was asked for and there is no GPU: an error, status 1, never
// a run that seems to have worked. A bare ./ch8, the first command a
// reader types, first shows what does run here, the self-check.
static int cannot_train(const Gpu *g, const char *why) {
    if (g->bare) {
        emulated_instead(why);
        fflush(stdout);
        // (the self-check just printed says what ran instead)
        fprintf(stderr, "ch8: error: training needs a GPU: %s\n", why);
    } else {
        fprintf(stderr, "ch8: error: training needs a GPU: %s; try "
                "--emulate\n", why);
    }
    return 1;
}

static int before(void *ctx) {
    Gpu *g = ctx;
    char why[160];
    if (g->tf32 && g->bf16) {
        fprintf(stderr, "ch8: error: --tf32 and --bf16 both set the matrix "
                "products' precision: give one\n");
        return 2;
    }
    bool no_gpu = !g->emulate && !cuda_device_present(why, sizeof why);
    if (no_gpu && !g->check) return cannot_train(g, why);
    if (no_gpu) return emulated_instead(why);   // --check: the check, here
    if (!g->emulate && !cuda_code_present(why, sizeof why)) {
        fprintf(stderr, "ch8: error: %s\n", why);
        return 1;
    }
    if (g->check || g->emulate) {   // (train_main prints the title of a run)
        printf("== %s ==\n", TITLE);
        return self_check(g->emulate);
    }
    // bf16 (and so the tensor-core attention of --bf16 --flash) and TF32
    // came with compute capability 8.0: a T4 (7.5) trains in fp32 only.
    int cc = cuda_compute_capability();
    if ((g->bf16 || g->tf32) && cc < 80) {
        fprintf(stderr, "ch8: error: --%s needs a GPU of compute "
                "capability 8.0 or more (an A100, an RTX 30 or later); this "
                "one has %d.%d\n", g->bf16 ? "bf16" : "tf32", cc / 10,
                cc % 10);
        return 1;
    }
    cuda_set_tf32(g->tf32);
    gemm_set_bf16(g->bf16);
    block_set_fused(!g->unfused);
    mha_set_causal_block(g->causal_block);
    return -1;   // train
}

// The run's GPU memory (gpt_train_cuda_bytes) against what the GPU has
// free, before any of it is allocated: a run that does not fit is
// refused with one line, as the host's memory is checked on the CPU,
// rather than stopped by an allocation in its first step or sample.
static int check_gpu_memory(const Gpu *g, const GptTrain *host,
                            Error *err) {
    const GptConfig *c = &host->model.cfg;
    GenOptions sample = {.max_new_tokens = g->sample_tokens};
    int sample_T = generate_cuda_window(c, 1, &sample);
    size_t need = gpt_train_cuda_bytes(c, host->B, host->T, g->flash,
                                       sample_T);
    size_t free_bytes = cuda_memory_free();
    if (need <= free_bytes) return 0;
    return error_set(err, "the run needs about %.0f MiB of GPU memory, and "
                     "the GPU has %.0f MiB free: a smaller --batch%s needs "
                     "less", need / 1048576.0, free_bytes / 1048576.0,
                     g->gpt2 ? " or --window" : ", --block or model");
}

static int attach(void *ctx, GptTrain *host, TrainModel *tm, Error *err) {
    Gpu *g = ctx;
    const GptConfig *c = &host->model.cfg;
    int HS = c->n_embd / c->n_head;
    if (g->flash && g->bf16 && !attention_flash_tc_supports(HS))
        return error_set(err, "--bf16 --flash runs attention on the tensor "
                         "cores (flash_tc.cu), which take head sizes 16, "
                         "32, 48 and 64; this model's is %d", HS);
    if (check_gpu_memory(g, host, err) != 0
        || gpt_train_cuda_init(&g->gt, host, g->flash, err) != 0)
        return -1;
    if (gpt_train_cuda_set_graph(&g->gt, g->graph, err) != 0) {
        gpt_train_cuda_free(&g->gt);
        return -1;
    }
    g->attached = true;
    *tm = gpt_train_cuda_model(&g->gt);
    return 0;
}

static void detach(void *ctx) {
    Gpu *g = ctx;
    if (g->attached) gpt_train_cuda_free(&g->gt);
    g->attached = false;
}

// The samples, written by the model on the GPU in the trainer's
// activations (or, for windows longer than its batch's, a sample's own):
// nothing is copied back but each new token's logits.
static int generate_gpu(void *ctx, const int *prompt, int n_prompt,
                        int *out, const GenOptions *o, TokenFn on_token,
                        void *tctx, GenStats *stats, Error *err) {
    Gpu *g = ctx;
    return gpt_train_cuda_generate(&g->gt, prompt, n_prompt, out, o,
                                   on_token, tctx, stats, err);
}

static void describe(void *ctx, char *buf, size_t size) {
    Gpu *g = ctx;
    char dev[160];
    cuda_device_describe(dev, sizeof dev);
    char att[64];
    if (g->flash && g->bf16)
        snprintf(att, sizeof att, "fused, tensor cores (flash_tc.cu)");
    else if (g->flash)
        snprintf(att, sizeof att, "fused (flash.cu)");
    else if (g->causal_block > 0)
        snprintf(att, sizeof att, "with (T, T) weights, causal blocks of %d",
                 g->causal_block);
    else
        snprintf(att, sizeof att, "with (T, T) weights, whole");
    snprintf(buf, size, "GPU: %s; fp32%s; attention %s; %s kernels%s; "
             "%.0f MiB of GPU memory in use", dev, g->tf32
             ? " (TF32 products)" : g->bf16 ? " (bf16 products)" : "", att,
             g->unfused ? "unfused" : "fused",
             g->graph ? ", a CUDA graph a step" : "",
             cuda_memory_used() / 1048576.0);
}

// ./ch8 --gpt2's name in its usage line and the flags' messages, and the
// command that resumes it (./ch8 --gpt2 --resume DIR).
static char GPT2_PROGRAM[] = "ch8 --gpt2";

int main(int argc, char **argv) {
    Gpu gpu;
    memset(&gpu, 0, sizeof gpu);
    // ./ch8 --gpt2 ...: the rest is chapter 9's task's command line
    gpu.gpt2 = flags_take(&argc, argv, "gpt2");
    if (gpu.gpt2) argv[0] = GPT2_PROGRAM;
    gpu.bare = argc == 1 && !gpu.gpt2;
    gpu.causal_block = mha_causal_block();
    const Flag flags[] = {
        {"check", FLAG_BOOL, &gpu.check,
         "check every kernel against its CPU function on the GPU, and stop"},
        {"emulate", FLAG_BOOL, &gpu.emulate,
         "the same check under the host emulation (no GPU needed)"},
        {"tf32", FLAG_BOOL, &gpu.tf32,
         "TF32 tensor cores for the matrix products (faster, 10-bit "
         "mantissas)"},
        {"bf16", FLAG_BOOL, &gpu.bf16,
         "bf16 mixed precision: the matrix products' operands rounded to "
         "bf16 (7-bit mantissas) for the tensor cores; their sums, the "
         "weights and all else stay fp32"},
        {"flash", FLAG_BOOL, &gpu.flash,
         "fused attention (flash.cu): the T x T weights are never "
         "stored, far less memory but slower today, as chapter 8 "
         "explains; with --bf16, on the tensor cores (flash_tc.cu, head "
         "sizes 16, 32, 48, 64)"},
        {"unfused", FLAG_BOOL, &gpu.unfused,
         "the block's plain kernels, one per CPU function, instead of "
         "the fused ones (fewer passes over memory, as chapter 8 "
         "explains): the same step, to compare"},
        {"graph", FLAG_BOOL, &gpu.graph,
         "record a training step's launches once as a CUDA graph and "
         "replay it each step (needs --dropout 0)"},
        {"causal-block", FLAG_INT, &gpu.causal_block,
         "query rows per block of the (T, T) attention's products: the "
         "part of the T x T square past the blocks is never computed "
         "(0: the whole square)"},
    };
    const FlagRange ranges[] = {{"causal-block", .lo = 0, .hi = 65536}};
    enum { N_FLAGS = sizeof flags / sizeof flags[0] };
    TrainBackend be = {
        .program = "ch8",
        .title = TITLE,
        .about = "Chapter 8: chapter 6's training on the GPU (CUDA,\n"
                 "cuBLAS and this chapter's kernels). Without a GPU it\n"
                 "cannot train; --emulate checks the kernels under the\n"
                 "host emulation. ./ch8 --gpt2 fine-tunes chapter 9's\n"
                 "GPT-2 instead (./ch8 --gpt2 --help).",
        .flags = flags, .n_flags = N_FLAGS,
        .ranges = ranges, .n_ranges = 1,
        .ctx = &gpu, .before = before, .attach = attach, .detach = detach,
        .describe = describe, .generate = generate_gpu,
    };
    // --gpt2: chapter 9's task and its flag (--model), then the GPU's
    Gpt2Finetune ft;
    Flag all[N_FLAGS + sizeof ft.flags / sizeof ft.flags[0]];
    if (gpu.gpt2) {
        gpt2_finetune_init(&ft);
        int n = ft.be.n_flags;
        memcpy(all, ft.be.flags, (size_t)n * sizeof *all);
        memcpy(all + n, flags, sizeof flags);
        be.command = GPT2_PROGRAM;   // (its errors say "ch8": 80 columns)
        be.title = "Chapter 8: GPT-2, fine-tuned on the GPU";
        be.about = "Chapter 8 with chapter 9's task: fine-tune GPT-2 on the "
                   "GPU\n(./ch8 --gpt2, then ./ch9 --finetune's flags and "
                   "the GPU's).\n--steps 0 loads, evaluates and samples.";
        be.flags = all, be.n_flags = n + N_FLAGS;
        be.task = &ft.task;
        // a sample's length, for the memory check: its window may be
        // longer than the batch's (chapter 6 parses and checks the flag;
        // ./ch8's own samples, of chapter 6's GPT, fit in its batch)
        const char *len = flags_peek(argc, argv, "sample-tokens");
        gpu.sample_tokens = len ? atoi(len) : ft.task.sample_tokens;
    }
    int rc = train_main(argc, argv, &be);
    if (gpu.gpt2) gpt2_finetune_free(&ft);
    return rc;
}
