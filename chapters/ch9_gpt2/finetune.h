// finetune.h - GPT-2 fine-tuned by chapter 6's trainer, and the files of
// a GPT-2 that ./ch9 reads.
//
// Chapter 6's program (run.h's train_main) trains whatever a TrainTask
// says. GPT-2's task: the corpus is the text tokenized by GPT-2's BPE
// (tokenizer.h), split 90/10 as chapter 1 splits its characters; a new
// run starts from a Hugging Face folder's weights (gpt2_model.h), loaded
// rather than initialised; each batch is B windows of --window tokens
// (64 by default: GPT-2's block of 1,024 would make the logits alone
// B x 1024 x 50257 floats); the samples start from <|endoftext|> and are
// printed through the tokenizer (token_out.h). Everything else is
// chapter 6's: its flags, the progress line, the CSV log, --minutes,
// the adaptive threads, evaluation, checkpoints, --resume, Ctrl-C, MPI.
//
// A run's folder (--out) holds chapter 6's two files and the tokenizer:
//   model.safetensors  chapter 5's format, the metadata key "tokenizer"
//                      ("gpt2") in place of chapter 1's "vocab"
//   state-N.safetensors  AdamW's moments, the generators, the config
//                      (with "window": the run's T)
//   vocab.json, merges.txt  the tokenizer's files, copied at the start:
//                      --resume and ./ch9 --checkpoint rebuild the
//                      tokenizer from the folder alone
//   hf/                at the end of a run, the model in Hugging Face's
//                      layout with the tokenizer's files: transformers'
//                      GPT2LMHeadModel.from_pretrained(OUT/hf) reads it
#ifndef CH9_FINETUNE_H
#define CH9_FINETUNE_H

#include <stdbool.h>

#include "error.h"
#include "flags.h"
#include "gpt.h"
#include "run.h"
#include "token_out.h"
#include "tokenizer.h"

#define GPT2_DIR_DEFAULT "data/gpt2"   // where make gpt2 puts it
#define GPT2_TOKENIZER "gpt2"          // the checkpoints' "tokenizer"
#define GPT2_VOCAB_FILE "vocab.json"
#define GPT2_MERGES_FILE "merges.txt"

// ---- a GPT-2's files -------------------------------------------------------

// 0 when dir holds the files of a GPT-2 in Hugging Face's layout
// (config.json and model.safetensors when weights, vocab.json and
// merges.txt always), else -1 with one line: for GPT2_DIR_DEFAULT, how
// to get them (make gpt2); for another folder, what it lacks. The
// programs exit with status 2 on it: the files are what the command line
// names.
int gpt2_files_check(const char *dir, bool weights, Error *err);

// Loads the tokenizer of dir (vocab.json, merges.txt). For a model of V
// tokens (V > 0) its ids must be fewer: -1 with a message otherwise.
int gpt2_tokenizer_for(Gpt2Tokenizer *t, const char *dir, int V,
                       Error *err);

// Copies dir's vocab.json and merges.txt into to, each atomically.
int gpt2_copy_tokenizer(const char *dir, const char *to, Error *err);

// The folder of a file's path ("." when it names none) into buf.
void gpt2_dir_of(char *buf, size_t size, const char *path);

// ---- fine-tuning -----------------------------------------------------------

//> gpt2-task
typedef struct {
    const char *model;     // --model: the folder a new run starts from
    const char *tok_dir;   // where the tokenizer came from (open)
    Gpt2Tokenizer tok;
    bool have_tok;
    TokenOut out;          // the samples' text
    Flag flags[1];         // --model
    TrainTask task;
    TrainBackend be;       // chapter 6's run, on this CPU, with task
} Gpt2Finetune;

// Makes f ready: f->be is what train_main(argc, argv, &f->be) needs
// to fine-tune GPT-2 (./ch9 --finetune). f must stay where it is; free
// it with gpt2_finetune_free after the run.
void gpt2_finetune_init(Gpt2Finetune *f);
void gpt2_finetune_free(Gpt2Finetune *f);
//< gpt2-task

#endif
