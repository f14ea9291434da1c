#include "checkpoint.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mem.h"
#include "safetensors.h"
#include "utf8.h"

// ---- saving ----------------------------------------------------------------

// The config as the JSON object of the "config" metadata key.
static void config_json(StrBuf *b, const GptConfig *c) {
    // the dropout in the fewest digits that read back as the same float
    char drop[32];
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(drop, sizeof drop, "%.*g", digits, (double)c->dropout);
        if (strtof(drop, NULL) == c->dropout) break;
    }
    sb_printf(b, "{\"vocab_size\": %d, \"block_size\": %d, \"n_layer\": %d, "
              "\"n_head\": %d, \"n_embd\": %d, \"n_ffn\": %d, \"bias\": %s, "
              "\"dropout\": %s, \"positional\": \"%s\"}", c->vocab_size,
              c->block_size, c->n_layer, c->n_head, c->n_embd, c->n_ffn,
              c->bias ? "true" : "false", drop,
              pos_kind_name(c->positional));
}

//> checkpoint-save
int checkpoint_save_step(const char *path, const Gpt *m, const Vocab *vocab,
                         int step, Error *err) {
    if (vocab->size != m->cfg.vocab_size)
        return error_set(err, "%s: the vocabulary has %d characters, the "
                         "model %d", path, vocab->size, m->cfg.vocab_size);
    // every tensor of the state_dict, then lm_head.weight: wte again
    int n = m->n_tensors + 1;
    StWriteTensor *t = xcalloc((size_t)n, sizeof *t);
    for (int i = 0; i < m->n_tensors; i++) {
        const GptTensor *g = &m->tensors[i];
        t[i] = (StWriteTensor){g->name, m->params + g->offset, g->ndim,
                               {g->shape[0], g->shape[1]}};
    }
    t[n - 1] = t[0];
    t[n - 1].name = "lm_head.weight";
    StrBuf config = {0}, chars = {0};
    config_json(&config, &m->cfg);
    for (int i = 0; i < vocab->size; i++) {
        char buf[4];
        sb_append(&chars, buf, (size_t)utf8_encode(vocab->chars[i], buf));
    }
    char steps[16];
    snprintf(steps, sizeof steps, "%d", step);
    const char *keys[] = {"config", "vocab", "format", "step"};
    const char *values[] = {config.s, chars.s ? chars.s : "", "pt", steps};
    int rc = st_save(path, t, n, keys, values, step >= 0 ? 4 : 3, err);
    sb_free(&config);
    sb_free(&chars);
    free(t);
    return rc;
}
//< checkpoint-save

int checkpoint_save(const char *path, const Gpt *m, const Vocab *vocab,
                    Error *err) {
    return checkpoint_save_step(path, m, vocab, -1, err);
}

// ---- loading: first every check, then the model ----------------------------

static int config_int(const Json *cfg, const char *key, int *out,
                      const char *path, Error *err) {
    const Json *v = json_get(cfg, key);
    int64_t x;
    if (!v)
        return error_set(err, "%s: the config metadata has no \"%s\"", path,
                         key);
    if (json_int64(v, &x) != 0 || x < 1 || x > INT32_MAX)
        return error_set(err, "%s: config \"%s\" must be a whole number "
                         ">= 1", path, key);
    *out = (int)x;
    return 0;
}

static int parse_config(const StFile *f, GptConfig *c, Error *err) {
    const char *path = f->path, *text = st_meta(f, "config");
    if (!text)
        return error_set(err, "%s: no \"config\" in the metadata; is this a "
                         "chapter 5 checkpoint?", path);
    Error jerr;
    Json *cfg = json_parse(text, strlen(text), &jerr);
    if (!cfg)
        return error_set(err, "%s: config metadata: %s", path, jerr.msg);
    int rc = -1;
    const Json *bias = json_get(cfg, "bias");
    const Json *drop = json_get(cfg, "dropout");
    const Json *pos = json_get(cfg, "positional");
    if (cfg->type != JSON_OBJECT)
        error_set(err, "%s: config metadata is %s, expected an object", path,
                  json_type_name(cfg->type));
    else if (config_int(cfg, "vocab_size", &c->vocab_size, path, err) != 0
             || config_int(cfg, "block_size", &c->block_size, path, err)
             || config_int(cfg, "n_layer", &c->n_layer, path, err)
             || config_int(cfg, "n_head", &c->n_head, path, err)
             || config_int(cfg, "n_embd", &c->n_embd, path, err)
             || (json_get(cfg, "n_ffn")
                 && config_int(cfg, "n_ffn", &c->n_ffn, path, err)))
        ;
    else if (!bias || bias->type != JSON_BOOL)
        error_set(err, "%s: config \"bias\" must be true or false", path);
    else if (!drop || drop->type != JSON_NUMBER)
        error_set(err, "%s: config \"dropout\" must be a number", path);
    else if (!pos || pos->type != JSON_STRING
             || pos_kind_parse(pos->str, &c->positional) != 0)
        error_set(err, "%s: config \"positional\" must be \"learned\" or "
                  "\"sinusoidal\"", path);
    else {
        if (!json_get(cfg, "n_ffn"))    // nanoGPT's files: GPT-2's 4C
            c->n_ffn = gpt_ffn_width(c->n_embd);
        c->bias = bias->b;
        c->dropout = (float)drop->num;
        Error cerr;
        if (gpt_config_check(c, &cerr) != 0)
            error_set(err, "%s: %s", path, cerr.msg);
        else
            rc = 0;
    }
    json_free(cfg);
    return rc;
}

// The "vocab" metadata: exactly V distinct characters in ascending order,
// the order chapter 1's vocabulary numbers them in.
static int parse_vocab(const StFile *f, int V, Vocab *vocab, Error *err) {
    const char *text = st_meta(f, "vocab");
    if (!text)
        return error_set(err, "%s: no \"vocab\" in the metadata", f->path);
    size_t len = strlen(text);
    uint32_t *cps = xmalloc((len + 1) * sizeof *cps);
    Error uerr;
    long n = utf8_decode(text, len, cps, &uerr);
    int rc = -1;
    if (n < 0)
        error_set(err, "%s: vocab metadata: %s", f->path, uerr.msg);
    else if (n != V)
        error_set(err, "%s: vocab metadata has %ld characters, the config "
                  "says vocab_size %d", f->path, n, V);
    else {
        rc = 0;
        for (long i = 1; i < n && rc == 0; i++)
            if (cps[i] <= cps[i - 1])
                rc = error_set(err, "%s: vocab metadata: character %ld "
                               "(U+%04X) is not above the one before it; "
                               "ids follow ascending code points", f->path,
                               i, cps[i]);
    }
    if (rc != 0) {
        free(cps);
        return -1;
    }
    vocab->chars = cps;
    vocab->size = V;
    return 0;
}

static void shape_str(char *buf, size_t size, int ndim, const int64_t *s) {
    int k = snprintf(buf, size, "[");
    for (int i = 0; i < ndim && k < (int)size; i++)
        k += snprintf(buf + k, size - (size_t)k, i ? ", %lld" : "%lld",
                      (long long)s[i]);
    if (k < (int)size) snprintf(buf + k, size - (size_t)k, "]");
}

// One tensor of the file against what the model expects of it.
static int check_tensor(const StFile *f, const char *name, int ndim,
                        const int *shape, Error *err) {
    const StTensor *t = st_find(f, name);
    if (!t)
        return error_set(err, "%s: tensor %s is missing", f->path, name);
    if (strcmp(t->dtype, "F32") != 0)
        return error_set(err, "%s: tensor %s is %s, expected F32", f->path,
                         name, t->dtype);
    int64_t want[2] = {shape[0], shape[1]};
    if (t->ndim != ndim || t->shape[0] != want[0]
        || (ndim == 2 && t->shape[1] != want[1])) {
        char got[96], exp[96];
        shape_str(got, sizeof got, t->ndim, t->shape);
        shape_str(exp, sizeof exp, ndim, want);
        return error_set(err, "%s: tensor %s has shape %s, the config needs "
                         "%s", f->path, name, got, exp);
    }
    const uint8_t *p = st_bytes(f, t);
    for (size_t i = 0; i < t->numel; i++) {
        float x;
        memcpy(&x, p + 4 * i, 4);
        if (!isfinite(x))
            return error_set(err, "%s: tensor %s holds %g at element %zu",
                             f->path, name, x, i);
    }
    return 0;
}

//> checkpoint-load
int checkpoint_load_step(const char *path, Gpt *m, Vocab *vocab, int *step,
                         Error *err) {
    memset(m, 0, sizeof *m);
    memset(vocab, 0, sizeof *vocab);
    StFile f;
    if (st_load(&f, path, err) != 0) return -1;   // the file's own checks
    GptConfig cfg;
    Gpt shape;   // a model of that config, for the list of its tensors
    int rc = -1;
    bool have_shape = false;
    if (parse_config(&f, &cfg, err) != 0) goto done;
    if (gpt_create(&shape, &cfg, err) != 0) goto done;
    have_shape = true;
    // every tensor the model has must be there, with its shape ...
    for (int i = 0; i < shape.n_tensors; i++) {
        const GptTensor *t = &shape.tensors[i];
        if (check_tensor(&f, t->name, t->ndim, t->shape, err) != 0)
            goto done;
    }
    // ... and nothing else, except the tied head, equal to wte
    for (int i = 0; i < f.n_tensors; i++) {
        const char *name = f.tensors[i].name;
        bool known = strcmp(name, "lm_head.weight") == 0;
        for (int j = 0; j < shape.n_tensors && !known; j++)
            known = strcmp(name, shape.tensors[j].name) == 0;
        if (!known) {
            error_set(err, "%s: tensor %s is not part of this model (%s)",
                      path, name, cfg.bias ? "bias true" : "bias false");
            goto done;
        }
    }
    const StTensor *head = st_find(&f, "lm_head.weight");
    if (head) {
        const int *s = shape.tensors[0].shape;
        if (check_tensor(&f, "lm_head.weight", 2, s, err) != 0) goto done;
        const StTensor *wte = st_find(&f, "transformer.wte.weight");
        if (memcmp(st_bytes(&f, head), st_bytes(&f, wte),
                   head->end - head->begin) != 0) {
            error_set(err, "%s: lm_head.weight differs from "
                      "transformer.wte.weight; this model ties them", path);
            goto done;
        }
    }
    const char *steps = st_meta(&f, "step");
    char *end = NULL;
    long s = steps ? strtol(steps, &end, 10) : 0;
    if (steps && (*steps == 0 || *end != 0 || s < 0 || s > INT32_MAX)) {
        error_set(err, "%s: metadata \"step\" is '%s', not a step count",
                  path, steps);
        goto done;
    }
    if (step) *step = (int)s;
    if (parse_vocab(&f, cfg.vocab_size, vocab, err) != 0) goto done;
    // all checked: now copy
    for (int i = 0; i < shape.n_tensors; i++) {
        const GptTensor *t = &shape.tensors[i];
        size_t n = (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
        if (st_copy_f32(&f, t->name, shape.params + t->offset, n, err) != 0)
            goto done;   // cannot happen after check_tensor
    }
    *m = shape;
    have_shape = false;
    rc = 0;
done:
    if (have_shape) gpt_free(&shape);
    if (rc != 0) vocab_free(vocab);
    st_free(&f);
    return rc;
}
//< checkpoint-load

int checkpoint_load(const char *path, Gpt *m, Vocab *vocab, Error *err) {
    return checkpoint_load_step(path, m, vocab, NULL, err);
}
