#include "param_file.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

static size_t numel(const GptTensor *t) {
    return (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
}

static const GptTensor *find(const GptTensor *t, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0) return &t[i];
    return NULL;
}

// ---- saving ----------------------------------------------------------------

int param_file_save(const char *path, const float *params,
                    const GptTensor *t, int n, const ParamAlias *alias,
                    int n_alias, const char *const *keys,
                    const char *const *values, int n_meta, Error *err) {
    StWriteTensor *w = xcalloc((size_t)(n + n_alias), sizeof *w);
    for (int i = 0; i < n; i++)
        w[i] = (StWriteTensor){t[i].name, params + t[i].offset, t[i].ndim,
                               {t[i].shape[0], t[i].shape[1]}};
    for (int i = 0; i < n_alias; i++) {
        const GptTensor *of = find(t, n, alias[i].of);
        if (!of) {
            free(w);
            return error_set(err, "%s: alias %s of %s, which the model "
                             "lacks", path, alias[i].name, alias[i].of);
        }
        w[n + i] = w[of - t];
        w[n + i].name = alias[i].name;
    }
    int rc = st_save(path, w, n + n_alias, keys, values, n_meta, err);
    free(w);
    return rc;
}

// ---- checking --------------------------------------------------------------

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
    return 0;
}

int param_file_check(const StFile *f, const GptTensor *t, int n,
                     const ParamAlias *alias, int n_alias,
                     const char *model, Error *err) {
    // every tensor the model has must be there, with its shape ...
    for (int i = 0; i < n; i++)
        if (check_tensor(f, t[i].name, t[i].ndim, t[i].shape, err) != 0)
            return -1;
    // ... and nothing else, except the aliases ...
    for (int i = 0; i < f->n_tensors; i++) {
        const char *name = f->tensors[i].name;
        bool known = find(t, n, name) != NULL;
        for (int j = 0; j < n_alias && !known; j++)
            known = strcmp(name, alias[j].name) == 0;
        char q[6 * 80 + 3];   // the file's name, quoted: one line
        if (!known)
            return error_set(err, "%s: tensor %s is not part of this "
                             "model%s%s%s", f->path,
                             json_quote(q, sizeof q, name, 80),
                             model ? " (" : "", model ? model : "",
                             model ? ")" : "");
    }
    // ... each equal to the tensor it repeats
    for (int i = 0; i < n_alias; i++) {
        const ParamAlias *a = &alias[i];
        const GptTensor *of = find(t, n, a->of);
        const StTensor *copy = st_find(f, a->name);
        if (!of)
            return error_set(err, "%s: alias %s of %s, which the model "
                             "lacks", f->path, a->name, a->of);
        if (!copy && !a->required) continue;
        if (check_tensor(f, a->name, of->ndim, of->shape, err) != 0)
            return -1;
    }
    return 0;
}

int param_file_fits(const StFile *f, size_t n, Error *err) {
    size_t have = 0;   // at most the file's size: no overflow
    for (int i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].dtype, "F32") == 0)
            have += f->tensors[i].numel;
    if (n > have && n - have > have + 65536)
        return error_set(err, "%s: the config describes a model of %zu "
                         "parameters, the file's F32 tensors hold %zu "
                         "values", f->path, n, have);
    return 0;
}

// Whether tensor t of f holds the same bytes as want, read a slice at a
// time (a file read by its header alone is never held whole).
static int equals_in_file(const StFile *f, const StTensor *t,
                          const float *want, bool *same, Error *err) {
    enum { SLICE = 1 << 16 };
    size_t size = t->end - t->begin;
    uint8_t *buf = f->data ? NULL : xmalloc(SLICE);
    int rc = 0;
    *same = true;
    for (size_t at = 0; at < size && *same && rc == 0; at += SLICE) {
        size_t k = size - at < SLICE ? size - at : SLICE;
        const void *got = buf;
        if (f->data) got = (const uint8_t *)st_bytes(f, t) + at;
        else rc = st_read_range(f, t, at, k, buf, err);
        if (rc == 0) *same = memcmp(got, (const uint8_t *)want + at, k) == 0;
    }
    free(buf);
    return rc;
}

int param_file_copy(const StFile *f, float *params, const GptTensor *t,
                    int n, const ParamAlias *alias, int n_alias,
                    Error *err) {
    for (int i = 0; i < n; i++) {
        float *p = params + t[i].offset;
        size_t k = numel(&t[i]);
        if (st_copy_f32(f, t[i].name, p, k, err) != 0) return -1;
        for (size_t j = 0; j < k; j++)
            if (!isfinite(p[j]))
                return error_set(err, "%s: tensor %s holds %g at element "
                                 "%zu", f->path, t[i].name, p[j], j);
    }
    for (int i = 0; i < n_alias; i++) {
        const StTensor *copy = st_find(f, alias[i].name);
        const GptTensor *of = find(t, n, alias[i].of);
        bool same;
        if (!copy) continue;   // (param_file_check: not required)
        if (equals_in_file(f, copy, params + of->offset, &same, err) != 0)
            return -1;
        if (!same)
            return error_set(err, "%s: %s differs from %s; this model ties "
                             "them", f->path, alias[i].name, alias[i].of);
    }
    return 0;
}

// ---- metadata --------------------------------------------------------------

int param_file_step(const StFile *f, int *step, Error *err) {
    const char *steps = st_meta(f, "step");
    char *end = NULL;
    long s = steps ? strtol(steps, &end, 10) : 0;
    if (steps && (*steps == 0 || *end != 0 || s < 0 || s > INT32_MAX))
        return error_set(err, "%s: metadata \"step\" is '%s', not a step "
                         "count", f->path, steps);
    *step = (int)s;
    return 0;
}

void float_shortest(char buf[static 32], float x) {
    char s[32];   // (gcc's sanitizer builds warn of snprintf into buf)
    for (int digits = 6; digits <= 9; digits++) {
        snprintf(s, sizeof s, "%.*g", digits, (double)x);
        if (strtof(s, NULL) == x) break;
    }
    memcpy(buf, s, sizeof s);
}

int config_int(const Json *cfg, const char *key, int min, int *out,
               const char *path, Error *err) {
    const Json *v = json_get(cfg, key);
    int64_t x;
    if (!v)
        return error_set(err, "%s: the config metadata has no \"%s\"", path,
                         key);
    if (json_int64(v, &x) != 0 || x < min || x > INT32_MAX)
        return error_set(err, "%s: config \"%s\" must be a whole number "
                         ">= %d", path, key, min);
    *out = (int)x;
    return 0;
}
