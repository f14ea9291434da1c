#include "gpt2_model.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hf_config.h"
#include "hf_names.h"
#include "json.h"
#include "mem.h"
#include "param_file.h"

// A quoted tensor name for a message (names come from the file).
typedef struct { char s[6 * 80 + 3]; } Quoted;
static const char *quote(Quoted *q, const char *name) {
    return json_quote(q->s, sizeof q->s, name, 80);
}

static bool has_prefix(const char *name) {
    return strncmp(name, "transformer.", 12) == 0;
}

// ---- the plan: every tensor of the file, checked against the model ---------

// One tensor of the file, and where it goes.
typedef struct {
    const StTensor *t;
    int role;         // HfRole (hf_name_map's)
    int dst;          // the model's tensor (m->tensors), or -1
} Item;

static int find_tensor(const Gpt *m, const char *name) {
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0) return i;
    return -1;
}

// "[2, 3]" for messages.
static const char *shape_str(char *buf, size_t size, const int64_t *s,
                             int ndim) {
    int k = snprintf(buf, size, "[");
    for (int i = 0; i < ndim && k > 0 && (size_t)k < size; i++)
        k += snprintf(buf + k, size - (size_t)k, i ? ", %lld" : "%lld",
                      (long long)s[i]);
    if (k > 0 && (size_t)k < size) snprintf(buf + k, size - (size_t)k, "]");
    return buf;
}

// t's dtype is F32 and its shape is (d0, d1), or (d0,) when d1 is 0.
// (t is a tensor of the model: its name needs no quoting.)
static int check_dtype_shape(const StFile *f, const StTensor *t, int d0,
                             int d1, const char *why, Error *err) {
    if (strcmp(t->dtype, "F32") != 0)
        return error_set(err, "%s: tensor %s is %s; only F32 files load%s",
                         f->path, t->name, t->dtype,
                         strcmp(t->dtype, "F16") == 0
                         || strcmp(t->dtype, "BF16") == 0
                         ? " (transformers: model.float().save_pretrained"
                           "(DIR))" : "");
    int nd = d1 ? 2 : 1;
    const int64_t want[2] = {d0, d1};
    char got[160], need[64];
    if (t->ndim != nd || t->shape[0] != d0 || (nd == 2 && t->shape[1] != d1))
        return error_set(err, "%s: tensor %s has shape %s, config.json "
                         "needs %s%s", f->path, t->name,
                         shape_str(got, sizeof got, t->shape, t->ndim),
                         shape_str(need, sizeof need, want, nd), why);
    return 0;
}

// The file's tensor t: its role, the model's tensor it becomes, and
// every check of its name, dtype and shape.
static int plan_one(Item *it, const StFile *f, const StTensor *t,
                    const Gpt *m, bool prefixed, Error *err) {
    char ours[128];
    Quoted q;
    int role = hf_name_map(ours, sizeof ours, t->name);
    int layer = hf_layer_of(t->name);
    *it = (Item){t, role, -1};
    if (role >= 0 && role != HF_TIED && has_prefix(t->name) != prefixed)
        return error_set(err, "%s: tensor %s %s the \"transformer.\" "
                         "prefix that the others %s", f->path,
                         quote(&q, t->name), prefixed ? "lacks" : "has",
                         prefixed ? "have" : "lack");
    if (role == HF_SKIP && layer < m->cfg.n_layer) return 0;
    const GptConfig *c = &m->cfg;
    if (role == HF_TIED)
        return check_dtype_shape(f, t, c->vocab_size, c->n_embd, "", err);
    it->dst = role < 0 ? -1 : find_tensor(m, ours);
    if (it->dst < 0 && layer >= c->n_layer)
        return error_set(err, "%s: tensor %s is beyond the %d layers of "
                         "config.json", f->path, quote(&q, t->name),
                         c->n_layer);
    if (it->dst < 0)
        return error_set(err, "%s: tensor %s is not part of a GPT-2 "
                         "(GPT2LMHeadModel)", f->path, quote(&q, t->name));
    const GptTensor *g = &m->tensors[it->dst];
    if (role == HF_TRANSPOSE)   // stored (in, out)
        return check_dtype_shape(f, t, g->shape[1], g->shape[0],
                                 " (Conv1D: in, out)", err);
    return check_dtype_shape(f, t, g->shape[0],
                             g->ndim == 2 ? g->shape[1] : 0, "", err);
}

//> gpt2-plan
// Checks the whole header against the model before any data is read:
// every tensor known, F32, of its shape, in one layout; every tensor of
// the model present once. items gets one entry per tensor of the file.
static int plan(Item *items, const StFile *f, const Gpt *m, Error *err) {
    // the layout, save_pretrained's or the Hub's: most names say which
    int with = 0, without = 0;
    for (int i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, "lm_head.weight") != 0)
            has_prefix(f->tensors[i].name) ? with++ : without++;
    bool prefixed = with > without;
    int *seen = xcalloc((size_t)m->n_tensors, sizeof *seen);
    int rc = 0;
    for (int i = 0; i < f->n_tensors && rc == 0; i++) {
        rc = plan_one(&items[i], f, &f->tensors[i], m, prefixed, err);
        if (rc == 0 && items[i].dst >= 0 && seen[items[i].dst]++)
            rc = error_set(err, "%s: two tensors are %s", f->path,
                           m->tensors[items[i].dst].name);
    }
    for (int i = 0; i < m->n_tensors && rc == 0; i++)
        if (!seen[i])
            rc = error_set(err, "%s: tensor %s is missing", f->path,
                           m->tensors[i].name + (prefixed ? 0 : 12));
    free(seen);
    return rc;
}
//< gpt2-plan

// ---- reading the data, tensor by tensor ----------------------------------

static int check_finite(const StFile *f, const StTensor *t, const float *x,
                        Error *err) {
    for (size_t i = 0; i < t->numel; i++)
        if (!isfinite(x[i]))
            return error_set(err, "%s: tensor %s holds %g at element %zu",
                             f->path, t->name, x[i], i);
    return 0;
}

//> gpt2-read
// One planned tensor into the model: straight into its parameters, or
// (a Conv1D weight) into scratch and transposed from there.
static int read_tensor(const StFile *f, const Item *it, Gpt *m,
                       float *scratch, Error *err) {
    const GptTensor *g = &m->tensors[it->dst];
    float *dst = m->params + g->offset;
    float *land = it->role == HF_TRANSPOSE ? scratch : dst;
    if (st_read_range(f, it->t, 0, it->t->end - it->t->begin, land,
                      err) != 0
        || check_finite(f, it->t, land, err) != 0)
        return -1;
    if (it->role == HF_TRANSPOSE)   // (in, out) -> (out, in)
        conv1d_transpose(dst, scratch, g->shape[1], g->shape[0]);
    return 0;
}
//< gpt2-read

// lm_head.weight against wte, a scratch's worth at a time.
static int check_tied(const StFile *f, const Item *it, const Gpt *m,
                      float *scratch, size_t chunk, Error *err) {
    size_t n = it->t->numel;
    for (size_t i = 0; i < n; i += chunk) {
        size_t k = n - i < chunk ? n - i : chunk;
        if (st_read_range(f, it->t, i * sizeof(float), k * sizeof(float),
                          scratch, err) != 0)
            return -1;
        if (memcmp(scratch, m->w.wte + i, k * sizeof(float)) != 0)
            return error_set(err, "%s: lm_head.weight differs from "
                             "wte.weight; this model ties them", f->path);
    }
    return 0;
}

static int read_all(const StFile *f, const Item *items, Gpt *m,
                    Error *err) {
    size_t chunk = gpt2_scratch_floats(&m->cfg);
    float *scratch = alloc_floats(chunk);
    int rc = 0;
    for (int i = 0; i < f->n_tensors && rc == 0; i++)
        if (items[i].dst >= 0)
            rc = read_tensor(f, &items[i], m, scratch, err);
    for (int i = 0; i < f->n_tensors && rc == 0; i++)   // wte is in now
        if (items[i].role == HF_TIED)
            rc = check_tied(f, &items[i], m, scratch, chunk, err);
    free(scratch);
    return rc;
}

// ---- loading ---------------------------------------------------------------

//> gpt2-memory
size_t gpt2_scratch_floats(const GptConfig *c) {
    size_t C = (size_t)c->n_embd, qkv = 3 * C * C, fc = C * c->n_ffn;
    return qkv > fc ? qkv : fc;
}

size_t gpt2_load_floats(const GptConfig *cfg, size_t header_bytes) {
    return gpt_model_floats(cfg) + gpt2_scratch_floats(cfg)
           + mem_floats(GPT2_HEADER_FACTOR * header_bytes);
}

// The config and the header, with every check that needs no model: the
// sizes the config claims against the file's (param_file_fits), so that
// a damaged config cannot make us allocate a model far beyond the file.
static int read_headers(const char *config_path, const char *weights_path,
                        GptConfig *cfg, StFile *f, Error *err) {
    memset(f, 0, sizeof *f);
    if (hf_config_load(config_path, cfg, err) != 0
        || st_load_header(f, weights_path, err) != 0)
        return -1;
    if (param_file_fits(f, gpt_param_count(cfg), err) != 0) {
        st_free(f);
        return -1;
    }
    return 0;
}
//< gpt2-memory

//> gpt2-load
int gpt2_load_files(const char *config_path, const char *weights_path,
                    Gpt *m, Error *err) {
    memset(m, 0, sizeof *m);
    GptConfig cfg;
    StFile f;
    if (read_headers(config_path, weights_path, &cfg, &f, err) != 0)
        return -1;
    Gpt model;
    int rc = -1;
    if (gpt_create(&model, &cfg, err) == 0) {
        Item *items = xcalloc((size_t)f.n_tensors + 1, sizeof *items);
        rc = plan(items, &f, &model, err) == 0        // all checked, then
             && read_all(&f, items, &model, err) == 0 // the data
             ? 0 : -1;
        free(items);
        if (rc == 0) *m = model;
        else gpt_free(&model);
    }
    st_free(&f);
    return rc;
}
//< gpt2-load

// dir/name into buf; -1 with a message when it does not fit.
static int join(char *buf, size_t size, const char *dir, const char *name,
                Error *err) {
    int n = snprintf(buf, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size)
        return error_set(err, "%s: the folder's name is too long", dir);
    return 0;
}

// dir's two files; a folder with only a PyTorch .bin or a sharded
// model is told what is missing.
static int model_paths(char *config, char *weights, size_t size,
                       const char *dir, Error *err) {
    if (join(config, size, dir, GPT2_CONFIG_FILE, err) != 0
        || join(weights, size, dir, GPT2_WEIGHTS_FILE, err) != 0)
        return -1;
    struct stat st;
    char other[4096];
    if (stat(weights, &st) == 0) return 0;
    if (join(other, sizeof other, dir, "model.safetensors.index.json",
             err) == 0 && stat(other, &st) == 0)
        return error_set(err, "%s holds a sharded model (model.safetensors"
                         ".index.json); this loader reads one "
                         "model.safetensors", dir);
    if (join(other, sizeof other, dir, "pytorch_model.bin", err) == 0
        && stat(other, &st) == 0)
        return error_set(err, "%s holds pytorch_model.bin, not "
                         "model.safetensors: convert it with transformers "
                         "(from_pretrained, then save_pretrained)", dir);
    return 0;   // the load names the missing file
}

int gpt2_load(const char *dir, Gpt *m, Error *err) {
    char config[4096], weights[4096];
    memset(m, 0, sizeof *m);
    if (model_paths(config, weights, sizeof config, dir, err) != 0)
        return -1;
    return gpt2_load_files(config, weights, m, err);
}

int gpt2_peek(const char *dir, GptConfig *cfg, size_t *floats, Error *err) {
    char config[4096], weights[4096];
    StFile f;
    if (model_paths(config, weights, sizeof config, dir, err) != 0
        || read_headers(config, weights, cfg, &f, err) != 0)
        return -1;
    if (floats) *floats = gpt2_load_floats(cfg, f.size - f.data_size);
    st_free(&f);
    return 0;
}

// ---- saving ----------------------------------------------------------------

//> gpt2-save
// The model's tensors as save_pretrained writes them: each Conv1D weight
// transposed back to (in, out) in *copies (the caller frees it).
static StWriteTensor *hf_tensors(const Gpt *m, float **copies) {
    size_t n = 0;
    char hf[128];
    for (int i = 0; i < m->n_tensors; i++)
        if (hf_name_map(hf, sizeof hf, m->tensors[i].name) == HF_TRANSPOSE)
            n += (size_t)m->tensors[i].shape[0] * m->tensors[i].shape[1];
    *copies = alloc_floats(n);
    StWriteTensor *w = xcalloc((size_t)m->n_tensors, sizeof *w);
    float *next = *copies;
    for (int i = 0; i < m->n_tensors; i++) {
        const GptTensor *t = &m->tensors[i];
        const float *p = m->params + t->offset;
        w[i] = (StWriteTensor){t->name, p, t->ndim, {t->shape[0],
                                                      t->shape[1]}};
        if (hf_name_map(hf, sizeof hf, t->name) != HF_TRANSPOSE) continue;
        conv1d_transpose(next, p, t->shape[0], t->shape[1]);
        w[i].data = next;
        w[i].shape[0] = t->shape[1], w[i].shape[1] = t->shape[0];
        next += (size_t)t->shape[0] * t->shape[1];
    }
    return w;
}

int gpt2_save(const char *dir, const Gpt *m, Error *err) {
    StrBuf json = {0};
    char config[4096], weights[4096];
    Error why;
    if (hf_config_json(&json, &m->cfg, &why) != 0) {
        sb_free(&json);
        return error_set(err, "cannot save %s in Hugging Face's format: %s",
                         dir, why.msg);
    }
    int rc = -1;
    if (join(config, sizeof config, dir, GPT2_CONFIG_FILE, err) == 0
        && join(weights, sizeof weights, dir, GPT2_WEIGHTS_FILE, err) == 0) {
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            error_set(err, "cannot create %s: %s", dir, strerror(errno));
        else if (write_file_check(config, err) == 0) {
            float *copies;
            StWriteTensor *w = hf_tensors(m, &copies);
            const char *key = "format", *value = "pt";
            const void *part = json.s;
            rc = st_save(weights, w, m->n_tensors, &key, &value, 1, err) == 0
                 && write_file_atomically(config, &part, &json.len, 1,
                                          err) == 0 ? 0 : -1;
            free(w);
            free(copies);
        }
    }
    sb_free(&json);
    return rc;
}
//< gpt2-save
