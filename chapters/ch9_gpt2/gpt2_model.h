// gpt2_model.h - OpenAI's GPT-2, as Hugging Face ships it, loaded into
// chapter 5's model; and a model written back in Hugging Face's format.
//
// A model folder holds config.json (hf_config.h) and model.safetensors,
// in either of the layouts that exist (hf_names.h): save_pretrained's,
// names under "transformer.", or the Hub's, without the prefix and with
// each layer's mask buffers. Other files (the tokenizer's, a
// generation_config.json) are not read here.
//
// Loading trusts nothing in the files: the config is checked key by key,
// and every tensor of the header, its name, dtype (F32 only) and shape,
// before any tensor's data is read; then the data comes tensor by tensor
// straight into the model's parameters (Conv1D weights through one
// scratch tensor, transposed), each value checked to be finite. The
// whole file is never in memory: the load's peak is the model, one
// tensor and the header (gpt2_load_floats), about 1.02 times the weights
// for GPT-2 small. Any problem is one line naming the file and the key
// or tensor, and nothing is left half-loaded.
#ifndef CH9_GPT2_MODEL_H
#define CH9_GPT2_MODEL_H

#include <stddef.h>

#include "gpt.h"
#include "safetensors.h"

#define GPT2_CONFIG_FILE "config.json"
#define GPT2_WEIGHTS_FILE "model.safetensors"

//> gpt2-load-api
// Loads dir/config.json and dir/model.safetensors into m, which it
// creates (gpt_free releases it). Returns 0, or -1 with a message and m
// zeroed.
int gpt2_load(const char *dir, Gpt *m, Error *err);

// The same, with the two files named.
int gpt2_load_files(const char *config_path, const char *weights_path,
                    Gpt *m, Error *err);

// What gpt2_load(dir) will load, from the config and the weights'
// header alone (no tensor is read): the config, and in *floats (when not
// NULL) the floats' worth it allocates at its peak (gpt2_load_floats),
// for a plan of the memory (mem.h) made before the load.
int gpt2_peek(const char *dir, GptConfig *cfg, size_t *floats, Error *err);
//< gpt2-load-api

// The floats' worth gpt2_load allocates at its peak for a model of cfg
// from a file whose header (the 8 bytes of its size and the JSON) is
// header_bytes long: the model (gpt_model_floats), the scratch tensor
// (gpt2_scratch_floats), and the header with what it is parsed into
// (GPT2_HEADER_FACTOR times its bytes, at most).
size_t gpt2_load_floats(const GptConfig *cfg, size_t header_bytes);

// The scratch tensor the load reads each Conv1D weight into before it
// transposes it: the largest of them, 3C x C or C x F floats.
size_t gpt2_scratch_floats(const GptConfig *cfg);

// Bytes of memory per byte of a safetensors header, at most, while it is
// read: its text and its parsed JSON, measured at 15 to 19.4 (GPT-2
// small's header of 15 KB, the fixtures' of 2.5 KB), of which the text
// and the list of tensors, 2.9 at most, are kept while the model is
// loaded. Counted whole on top of the model: a few hundred KB.
enum { GPT2_HEADER_FACTOR = 24 };

//> gpt2-save-api
// Writes m into dir (made if missing) as transformers' save_pretrained
// does: dir/model.safetensors with the tensors under "transformer."
// names, the Conv1D weights transposed back to (in, out), no
// lm_head.weight (tied), and dir/config.json (hf_config_json), each
// written atomically (st_save, write_file_atomically).
// GPT2LMHeadModel.from_pretrained(dir) then loads it. The transposed
// copies are made first: saving holds the block weights twice (0.7 times
// the model more, for GPT-2 small). -1 with a message when m is no GPT-2
// (hf_config_json) or a file cannot be written.
int gpt2_save(const char *dir, const Gpt *m, Error *err);
//< gpt2-save-api

#endif
