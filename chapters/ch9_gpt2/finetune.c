#include "finetune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset.h"
#include "gpt2_model.h"
#include "mem.h"
#include "report.h"
#include "safetensors.h"
#include "utf8.h"

// ---- a GPT-2's files -------------------------------------------------------

int gpt2_files_check(const char *dir, bool weights, Error *err) {
    static const char *const files[] = {GPT2_CONFIG_FILE, GPT2_WEIGHTS_FILE,
                                        GPT2_VOCAB_FILE, GPT2_MERGES_FILE};
    for (int i = weights ? 0 : 2; i < 4; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        if (access(path, F_OK) == 0) continue;
        if (strcmp(dir, GPT2_DIR_DEFAULT) == 0)
            return error_set(err, "no GPT-2 files in %s: run make gpt2 "
                             "(550 MB, needs a network)", dir);
        return error_set(err, "%s has no %s: not a GPT-2 folder of Hugging "
                         "Face's", dir, files[i]);
    }
    return 0;
}

int gpt2_tokenizer_for(Gpt2Tokenizer *t, const char *dir, int V,
                       Error *err) {
    if (gpt2_tok_load_dir(t, dir, err) != 0) return -1;
    if (V <= 0 || t->vocab_size <= V) return 0;
    error_set(err, "%s: the tokenizer has %d tokens, the model only %d",
              dir, t->vocab_size, V);
    gpt2_tok_free(t);
    return -1;
}

int gpt2_copy_tokenizer(const char *dir, const char *to, Error *err) {
    static const char *const files[] = {GPT2_VOCAB_FILE, GPT2_MERGES_FILE};
    for (int i = 0; i < 2; i++) {
        char from[4096], path[4096];
        snprintf(from, sizeof from, "%s/%s", dir, files[i]);
        snprintf(path, sizeof path, "%s/%s", to, files[i]);
        size_t len;
        char *text = read_file(from, &len, err);
        if (!text) return -1;
        const void *part = text;
        int rc = write_file_atomically(path, &part, &len, 1, err);
        free(text);
        if (rc != 0) return -1;
    }
    return 0;
}

void gpt2_dir_of(char *buf, size_t size, const char *path) {
    snprintf(buf, size, "%s", path);
    char *slash = strrchr(buf, '/');
    if (!slash) snprintf(buf, size, ".");
    else if (slash == buf) slash[1] = 0;   // "/x": the root
    else *slash = 0;
}

// ---- the task's functions (run.h's TrainTask) -------------------------------

// The tokenizer: a resumed run's copy in its folder (the folder the run
// started from may have changed since, or be gone), or --model's.
static int task_open(void *ctx, const char *resume, Error *err) {
    Gpt2Finetune *f = ctx;
    if (resume) {
        const FlagFixed fixed[] = {{"model", &f->model}};
        flags_check_fixed(fixed, 1, resume);
        if (gpt2_files_check(resume, false, err) != 0)
            return error_set(err, "%s has no tokenizer: a run keeps a copy "
                             "of vocab.json and merges.txt", resume);
    } else if (gpt2_files_check(f->model, true, err) != 0) {
        error_exit(2, err->msg);   // (the files the command line names)
    }
    f->tok_dir = resume ? resume : f->model;
    if (gpt2_tokenizer_for(&f->tok, f->tok_dir, 0, err) != 0) return -1;
    f->have_tok = true;
    token_out_init(&f->out, &f->tok, stdout);
    // (a tokenizer without <|endoftext|> starts its samples from id 0)
    f->task.sample_start = f->tok.eot >= 0 ? f->tok.eot : 0;
    return 0;
}

// The text as GPT-2's ids, without special tokens: an "<|endoftext|>"
// in it is 13 characters of text (tiktoken's encode_ordinary).
static int task_encode(void *ctx, const char *path, int **ids, size_t *n,
                       Error *err) {
    Gpt2Finetune *f = ctx;
    size_t bytes;
    char *text = corpus_read(path, &bytes, err);
    if (!text) return -1;
    int *out = xmalloc((bytes ? bytes : 1) * sizeof *out);
    long k = gpt2_tok_encode(&f->tok, text, bytes, false, out, err);
    free(text);
    if (k < 0) {
        free(out);
        return -1;
    }
    *ids = xrealloc(out, (k ? (size_t)k : 1) * sizeof *out);
    *n = (size_t)k;
    return 0;
}

static int task_peek(void *ctx, GptConfig *cfg, size_t *load, Error *err) {
    Gpt2Finetune *f = ctx;
    size_t floats;
    if (gpt2_peek(f->model, cfg, &floats, err) != 0) return -1;
    if (f->tok.vocab_size > cfg->vocab_size)
        return error_set(err, "%s: the tokenizer has %d tokens, the model "
                         "only %d", f->tok_dir, f->tok.vocab_size,
                         cfg->vocab_size);
    size_t model = gpt_model_floats(cfg);
    *load = floats > model ? floats - model : 0;
    return 0;
}

static int task_load(void *ctx, Gpt *m, Error *err) {
    Gpt2Finetune *f = ctx;
    return gpt2_load(f->model, m, err);
}

static int task_save_files(void *ctx, const char *dir, Error *err) {
    Gpt2Finetune *f = ctx;
    return gpt2_copy_tokenizer(f->tok_dir, dir, err);
}

static void task_print(int id, void *ctx) {
    Gpt2Finetune *f = ctx;
    token_out_id(id, &f->out);
}

static void task_print_end(void *ctx) {
    Gpt2Finetune *f = ctx;
    token_out_end(&f->out);
}

// The run's model in Hugging Face's layout, with the tokenizer: OUT/hf.
static int task_finish(void *ctx, const Gpt *m, const char *out,
                       Error *err) {
    Gpt2Finetune *f = ctx;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/hf", out);
    if (gpt2_save(dir, m, err) != 0
        || gpt2_copy_tokenizer(f->tok_dir, dir, err) != 0)
        return -1;
    report_line("saved", "%s/ in Hugging Face's layout (./ch9 --model and "
                "transformers' from_pretrained read it)", dir);
    return 0;
}

// ---- the run ---------------------------------------------------------------

//> gpt2-preset
// The defaults of ./ch9 --finetune: batches of 4 windows of 64 tokens,
// AdamW at a peak of 1e-4 (nanoGPT fine-tunes GPT-2 at 3e-5 with batches
// of 32 x 1024 tokens; smaller batches, noisier gradients, take a larger
// rate), a short warmup and a cosine to a tenth; no dropout, as nanoGPT's
// fine-tuning; and, as ./ch6, the most of 5 minutes.
static const TrainPreset GPT2_PRESET = {
    "finetune", "fine-tune GPT-2: up to 500 steps, as many as fit in 5 "
    "minutes", 0, 0, 0, 0, 0, 0.0f, 5.0f,
    {.batch = 4, .window = 64, .steps = 500, .lr = 1e-4f, .min_lr = 1e-5f,
     .warmup = 20, .decay_steps = 500, .adamw = {0.9f, 0.95f, 1e-8f, 0.1f},
     .grad_clip = 1.0f, .eval_every = 50, .eval_iters = 10, .seed = 1337}};
//< gpt2-preset

void gpt2_finetune_init(Gpt2Finetune *f) {
    memset(f, 0, sizeof *f);
    f->model = GPT2_DIR_DEFAULT;
    f->flags[0] = (Flag){"model", FLAG_STRING, &f->model, "the GPT-2 to "
                         "fine-tune: a Hugging Face folder (config.json, "
                         "model.safetensors, vocab.json, merges.txt)"};
    f->task = (TrainTask){
        .ctx = f, .preset = &GPT2_PRESET, .open = task_open,
        .encode_file = task_encode, .peek_model = task_peek,
        .load_model = task_load, .tokenizer = GPT2_TOKENIZER,
        .save_files = task_save_files, .sample_tokens = 100,
        .print = task_print, .print_end = task_print_end,
        .reader = "./ch9 --checkpoint", .finish = task_finish};
    f->be = (TrainBackend){
        .program = "ch9", .command = "ch9 --finetune",
        .title = "Chapter 9: GPT-2, fine-tuned",
        .about = "Chapter 9: fine-tune GPT-2 on a text with chapter 6's "
                 "trainer\n(./ch9 --finetune, then chapter 6's flags).",
        .flags = f->flags, .n_flags = 1, .task = &f->task};
}

void gpt2_finetune_free(Gpt2Finetune *f) {
    if (f->have_tok) gpt2_tok_free(&f->tok);
    f->have_tok = false;
}
