// checkpoint.h - saving and loading a model as a safetensors file that
// PyTorch reads (safetensors.torch.load_file) and that a PyTorch program
// could have written.
//
// Tensors: nanoGPT's state_dict names and shapes, float32, Linear weights
// (out, in): transformer.wte.weight, transformer.wpe.weight (learned
// positions only), transformer.h.{i}.ln_1.weight, ...attn.c_attn.weight,
// ...attn.c_proj.weight, ...ln_2.weight, ...mlp.c_fc.weight,
// ...mlp.c_proj.weight (with .bias for each when bias is true),
// transformer.ln_f.weight (and .bias), and lm_head.weight, written as a
// copy of wte. On load lm_head.weight may be absent; when present it must
// equal wte, since the model ties them.
//
// Metadata (safetensors allows string values only):
//   "config": a JSON object with vocab_size, block_size, n_layer, n_head,
//             n_embd, n_ffn, bias, dropout, positional ("learned" or
//             "sinusoidal") and gelu ("exact" or "tanh", the FFN's
//             activation; a file without it, as nanoGPT's and this
//             project's before chapter 9, is exact)
//   "vocab":  the vocabulary, its characters in id order, as one UTF-8
//             string (so in ascending code-point order, as chapter 1
//             builds it)
// or, in place of "vocab", for a model whose ids are another tokenizer's
// (chapter 9: GPT-2's byte-level BPE, whose files go beside the
// checkpoint; chapter 9 says how):
//   "tokenizer": its name ("gpt2"), 1 to 31 printable ASCII characters
// Other metadata keys are ignored on load.
#ifndef CH5_CHECKPOINT_H
#define CH5_CHECKPOINT_H

#include "gpt.h"
#include "vocab.h"

//> checkpoint-api
// Writes m and its vocabulary to path atomically: a temporary file in the
// same folder, flushed to disk, then renamed over path, so a crash leaves
// the old file or the new one, never half of one. Returns 0, or -1 with a
// message.
int checkpoint_save(const char *path, const Gpt *m, const Vocab *vocab,
                    Error *err);

// Reads path, checks everything (see checkpoint.c) and only then creates
// the model and the vocabulary. Returns 0, or -1 with one line naming the
// file, the tensor or key and the problem; *m and *vocab are then zeroed
// (nothing half-loaded, nothing to free).
int checkpoint_load(const char *path, Gpt *m, Vocab *vocab, Error *err);
//< checkpoint-api

// The same pair for chapter 6's training checkpoints, which also record
// how many steps the model has been trained: the metadata key "step"
// (a decimal string). checkpoint_load_step gives 0 when it is absent.
int checkpoint_save_step(const char *path, const Gpt *m, const Vocab *vocab,
                         int step, Error *err);
int checkpoint_load_step(const char *path, Gpt *m, Vocab *vocab, int *step,
                         Error *err);

// A model whose ids are a tokenizer's, not characters: the same file
// with the metadata key "tokenizer" naming it instead of "vocab".
// checkpoint_load_any loads a file of either kind: characters into
// *vocab and "" into tokenizer, or the tokenizer's name into tokenizer
// and an empty *vocab; checkpoint_load and checkpoint_load_step refuse a
// file of a tokenizer's ids with a message that names it.
// checkpoint_tokenizer reads the name alone from the header ("" for
// characters).
enum { CHECKPOINT_TOKENIZER_MAX = 32 };   // a name's bytes with its NUL
int checkpoint_save_tokenizer(const char *path, const Gpt *m,
                              const char *tokenizer, int step, Error *err);
// (tokenizer: room for CHECKPOINT_TOKENIZER_MAX bytes)
int checkpoint_load_any(const char *path, Gpt *m, Vocab *vocab,
                        char *tokenizer, int *step, Error *err);
int checkpoint_tokenizer(const char *path, char *tokenizer, Error *err);

// The config and the step of the checkpoint at path from its header
// alone (st_load_header: no tensor is read), with the checks that
// checkpoint_load makes of them and its messages: for a plan of the
// memory (mem.h) made before the model is loaded. step may be NULL.
int checkpoint_peek(const char *path, GptConfig *cfg, int *step,
                    Error *err);

#endif
