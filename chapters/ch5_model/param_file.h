// param_file.h - a model's parameters as a safetensors file, for any
// model that keeps them as chapter 5's GPT does: one float buffer and a
// list of named tensors (GptTensor: name, offset, shape). checkpoint.h
// writes the GPT with these functions, chapter 7 its encoder-decoder;
// what each model adds is its config and vocabulary in the metadata.
//
// A tied weight is one tensor of the list that PyTorch's state_dict
// names once for every module using it (the GPT's wte and lm_head).
// safetensors refuses shared storage, so the file holds a copy under each
// other name: a ParamAlias. On load a copy must equal its tensor byte for
// byte, since the model has nowhere to keep a different one.
#ifndef CH5_PARAM_FILE_H
#define CH5_PARAM_FILE_H

#include <stdbool.h>

#include "error.h"
#include "gpt.h"
#include "json.h"
#include "safetensors.h"

typedef struct {
    const char *name;   // the second name: "lm_head.weight"
    const char *of;     // the tensor of the list: "transformer.wte.weight"
    bool required;      // must be in the file (else: checked when there)
} ParamAlias;

// Writes the n tensors of the list (their values from params), then a
// copy of each alias's tensor under its name, and the n_meta metadata
// pairs, atomically (st_save). Returns 0, or -1 with a message.
int param_file_save(const char *path, const float *params,
                    const GptTensor *t, int n, const ParamAlias *alias,
                    int n_alias, const char *const *keys,
                    const char *const *values, int n_meta, Error *err);

// Checks a file's header against the list, in this order: every tensor
// present, F32, of its shape; no tensor that is neither in the list nor
// an alias (the message adds "(model)" when model is not NULL); each
// alias present when required, and when present of its tensor's shape.
// Reads no data: f may come from st_load_header. Returns 0, or -1 with
// one line naming the file and the tensor.
int param_file_check(const StFile *f, const GptTensor *t, int n,
                     const ParamAlias *alias, int n_alias,
                     const char *model, Error *err);

// Before a model of n parameters is created for a file: -1 with a
// message when n is far beyond the F32 values of the file's tensors
// (more than twice as many, and 65536 more), else 0. A config that claims
// a huge model (a damaged or hostile file) is so refused before its
// parameters are allocated, while a model a little larger than the file
// is still created, for param_file_check to name the tensor that is
// missing or of the wrong shape.
int param_file_fits(const StFile *f, size_t n, Error *err);

// Copies the list's tensors from a checked file into params, one at a
// time (from the file itself when st_load_header read f: it is never
// held whole), then compares each alias present with its tensor. -1 with
// one line naming the tensor when a value is not finite, an alias
// differs, or the file cannot be read (or changed since its header was).
int param_file_copy(const StFile *f, float *params, const GptTensor *t,
                    int n, const ParamAlias *alias, int n_alias,
                    Error *err);

// ---- metadata shared by the models' files ---------------------------------

// The "step" key: *step gets its value, or 0 when absent; -1 with a
// message unless it is a whole number in [0, INT32_MAX].
int param_file_step(const StFile *f, int *step, Error *err);

// x in the fewest digits (6 to 9) that read back as the same float: 0.1f
// is "0.1", not "0.100000001".
void float_shortest(char buf[static 32], float x);

// The whole number key of a config object, at least min; -1 with a
// message naming path and key when it is missing or not one.
int config_int(const Json *cfg, const char *key, int min, int *out,
               const char *path, Error *err);

#endif
