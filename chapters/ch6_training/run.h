// run.h - the ./ch6 program as a function, so that another program can
// train the GPT the same way with its weights elsewhere, or another GPT
// on other tokens. ./ch6 is train_main(argc, argv, NULL); ./ch8 passes a
// TrainBackend that puts the model on the GPU, ./ch9 one whose TrainTask
// fine-tunes GPT-2, and both reuse everything else: the flags and
// presets, the progress line, the CSV log, checkpoints and --resume, the
// samples and the summary.
#ifndef CH6_RUN_H
#define CH6_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "flags.h"
#include "generate.h"
#include "gpt_train.h"
#include "train.h"

// A preset: the defaults of a run's flags. ./ch6 has three (run.c); a
// task (below) brings its own.
typedef struct {
    const char *name, *about;
    int layers, heads, embd, block, bias;   // a new model's shape
    float dropout;
    float minutes;        // the time budget (0: none): see fit_budget
    TrainConfig t;
} TrainPreset;

//> train-task
// What a run trains, when it is not ./ch6's new character-level GPT on
// chapter 1's corpus. ./ch9 fine-tunes GPT-2: its text is GPT-2's
// tokens, it starts from OpenAI's weights, and its samples and
// checkpoints speak of that tokenizer. Every function gets ctx, and
// those that return an int return 0, or -1 with a message; all must be
// set but print_end and finish, which may be NULL.
typedef struct {
    void *ctx;
    const TrainPreset *preset;   // the defaults (no --preset flag then)
    // First, for a new run (resume NULL) or the run saved in the folder
    // resume: makes ready the tokenizer (a run keeps a copy of its files,
    // save_files) and, for a new run, what the model will load from.
    int (*open)(void *ctx, const char *resume, Error *err);
    // The text at path as the tokenizer's ids: *ids (malloc'd), *n.
    int (*encode_file)(void *ctx, const char *path, int **ids, size_t *n,
                       Error *err);
    // A new run's model: its config from its files' headers, with *load
    // the floats' worth that loading holds beside the model (the memory
    // plan comes before anything large is read); then the model itself.
    int (*peek_model)(void *ctx, GptConfig *cfg, size_t *load, Error *err);
    int (*load_model)(void *ctx, Gpt *m, Error *err);
    // The tokenizer's name, which every checkpoint carries in place of a
    // character vocabulary (checkpoint_save_tokenizer), and the files
    // that rebuild it, written into the run's folder (--out).
    const char *tokenizer;
    int (*save_files)(void *ctx, const char *dir, Error *err);
    // Samples start from the id sample_start; print writes each new id
    // (its bytes), print_end what is left at the end of a sample.
    int sample_start, sample_tokens;   // (the default of --sample-tokens)
    TokenFn print;
    void (*print_end)(void *ctx);
    const char *reader;   // reads the checkpoints: "./ch9 --checkpoint"
    // At the end of a run that saved into out, its model as it ended:
    // ./ch9 writes it in Hugging Face's layout too. After the optimiser
    // is freed, so its memory is free to use.
    int (*finish)(void *ctx, const Gpt *m, const char *out, Error *err);
} TrainTask;
//< train-task

//> train-backend
// Where a run trains, when not on this CPU. Every function may be NULL.
typedef struct {
    const char *program;      // "ch8": in messages and --help
    const char *command;      // what runs it again, in the line that says
                              // how to resume: "ch9 --finetune" (NULL:
                              // program)
    const char *about;        // the --help description
    const char *title;        // the first line of a run: "== <title> =="
    const Flag *flags;        // extra flags (common/flags.h), parsed with
    int n_flags;              // ch6's and shown in --help after them
    const FlagRange *ranges;  // the extra flags' ranges, checked with
    int n_ranges;             // ch6's and shown in their --help lines
    void *ctx;                // passed to every function below
    // After the flags are parsed, before anything is loaded: returns -1
    // to go on training, or an exit status to stop there (./ch8 --check
    // runs its self-check here).
    int (*before)(void *ctx);
    // Once the host GptTrain g (new or resumed) and its TrainModel *tm
    // exist: replaces *tm by the backend's model, which wraps g (its
    // params stay g's host copy, its hooks of train.h all set). Returns 0,
    // or -1 with a message. The program then calls tm->load with the
    // trainer's moments (zero for a new run, the saved ones on --resume),
    // so the weights and moments need not be uploaded here.
    int (*attach)(void *ctx, GptTrain *g, TrainModel *tm, Error *err);
    // At the end, before g is freed: lets go of what attach made.
    void (*detach)(void *ctx);
    // One line for the banner and the summary ("GPU: NVIDIA H100, TF32
    // off"), into buf of size bytes.
    void (*describe)(void *ctx, char *buf, size_t size);
    // The check that the host has memory for the run (gpt_train_floats)
    // is skipped when this is true. The host GptTrain still allocates
    // its parameters, gradients, moments and activations, so a backend
    // sets it only if it made those smaller.
    bool skip_host_memory_check;
    // Writes the samples with the backend's model as it is now, with
    // generate()'s arguments less the model (./ch8: on the GPU). NULL:
    // the host copy is brought up to date (sync) and generate() runs on
    // the CPU.
    int (*generate)(void *ctx, const int *prompt, int n_prompt, int *out,
                    const GenOptions *o, TokenFn on_token, void *tctx,
                    GenStats *stats, Error *err);
    // What it trains, when not ./ch6's GPT (NULL): see TrainTask.
    const TrainTask *task;
} TrainBackend;

// The whole program: parses argv (ch6's flags and be's), trains, reports;
// returns the exit status (0, 1 for a failed step, 130 for Ctrl-C). A
// usage error or a failure to load exits the process, as ./ch6 does. be
// NULL: the CPU, which is ./ch6.
int train_main(int argc, char **argv, const TrainBackend *be);
//< train-backend

#endif
