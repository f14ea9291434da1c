// seq2seq_checkpoint.h - the encoder-decoder as a safetensors file, the
// way chapter 5 saves the GPT (param_file.h does the work for both).
//
// Tensors: the names and shapes of seq2seq.h's tensor list, which are
// those of the PyTorch module in tests/reference/gen_ch7_model.py,
// float32. A tied model (cfg.tie) holds one (V, C) matrix that PyTorch's
// state_dict names three times, src_embed.weight, tgt_embed.weight and
// generator.weight, so the file holds it three times too, and loading
// requires the three copies to be equal byte for byte. load_state_dict
// (strict) of the PyTorch module takes such a file as it is.
//
// Metadata (strings):
//   "config"  JSON: src_vocab, tgt_vocab, max_len, n_enc, n_dec, n_head,
//             n_embd, n_ffn, dropout, bias, tie, act ("relu", "gelu" or
//             "gelu_tanh") and pad; every key required on load
//   "vocab"   what the tokens mean, a string the caller chooses: ./ch7's
//             synthetic tasks write the task ("reverse:10"), a model of
//             real sentences its subword vocabulary; absent when not given
//   "step"    the steps trained, when given
//   "format"  "pt"
#ifndef CH7_SEQ2SEQ_CHECKPOINT_H
#define CH7_SEQ2SEQ_CHECKPOINT_H

#include "error.h"
#include "seq2seq.h"

//> seq2seq-checkpoint-api
// Writes m to path atomically (a crash leaves the old file or the new
// one), with step (-1: none) and vocab (NULL: none; else UTF-8) in the
// metadata. Returns 0, or -1 with a message.
int seq2seq_save(const char *path, const Seq2Seq *m, int step,
                 const char *vocab, Error *err);

// Reads path and checks all of it (the config, every tensor present,
// F32, of its shape and finite, no unknown tensor, the tied copies equal,
// the step) before it creates the model in *m. *step (when not NULL)
// gets the step, 0 when the file has none; *vocab (when not NULL) a copy
// of the "vocab" metadata for the caller to free, or NULL when the file
// has none. Returns 0, or -1 with one line naming the file and the key or
// tensor at fault, and then *m, *step and *vocab are as they were.
int seq2seq_load(const char *path, Seq2Seq *m, int *step, char **vocab,
                 Error *err);
//< seq2seq-checkpoint-api

// "relu", "gelu" or "gelu_tanh": the config's names of the activations.
const char *seq2seq_act_name(Activation act);
int seq2seq_act_parse(const char *s, Activation *out);   // 0, or -1

#endif
