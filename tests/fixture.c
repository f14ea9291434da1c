#include "fixture.h"

#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "utf8.h"

typedef struct {
    char name[64];
    int ndim, shape[FIXTURE_MAX_DIMS];
    size_t n;
    float *data;
} Tensor;

struct Fixture {
    char path[256];
    Tensor *t;
    int count;
};

// The end of the line that starts at p.
static char *line_end(char *p) {
    char *e = strchr(p, '\n');
    return e ? e : p + strlen(p);
}

// Parses "name d0 d1 ..." (one line, already cut at its end).
static int parse_header(Tensor *t, char *line, const char *where,
                        Error *err) {
    char *p = line;
    size_t len = 0;
    if (!isalpha((unsigned char)*p) && *p != '_')
        return error_set(err, "%s: expected a tensor name, got \"%.40s\"",
                         where, line);
    while (isalnum((unsigned char)p[len]) || p[len] == '_' || p[len] == '.')
        len++;
    if (len == 0 || len >= sizeof t->name || (p[len] && !isspace(
            (unsigned char)p[len])))
        return error_set(err, "%s: expected a tensor name, got \"%.40s\"",
                         where, line);
    memcpy(t->name, p, len);
    t->name[len] = '\0';
    p += len;
    t->ndim = 0;
    t->n = 1;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r') p++;
        if (*p == '\0') return 0;
        char *end;
        errno = 0;
        long d = strtol(p, &end, 10);
        if (end == p || errno || d < 0 || d > 1L << 30
            || (*end && !isspace((unsigned char)*end)))
            return error_set(err, "%s: bad dimension in \"%.40s\"", where,
                             line);
        if (t->ndim == FIXTURE_MAX_DIMS)
            return error_set(err, "%s: more than %d dimensions", where,
                             FIXTURE_MAX_DIMS);
        t->shape[t->ndim++] = (int)d;
        if (d > 0 && t->n > ((size_t)1 << 30) / (size_t)d)
            return error_set(err, "%s: tensor %s is too large", where,
                             t->name);
        t->n *= (size_t)d;
        p = end;
    }
}

// Reads t->n numbers starting at *pos; advances *pos and *line.
static int parse_values(Tensor *t, char **pos, int *line, const char *path,
                        Error *err) {
    t->data = xmalloc((t->n ? t->n : 1) * sizeof *t->data);
    char *p = *pos;
    for (size_t i = 0; i < t->n; i++) {
        while (isspace((unsigned char)*p)) *line += *p++ == '\n';
        char *end;
        float v = strtof(p, &end);    // errno ERANGE on subnormals: fine
        if (end == p || (*end && !isspace((unsigned char)*end)))
            return error_set(err, "%s:%d: tensor %s: value %zu of %zu is "
                             "missing or not a number", path, *line,
                             t->name, i + 1, t->n);
        t->data[i] = v;
        p = end;
    }
    *pos = p;
    return 0;
}

static int parse(Fixture *f, char *text, Error *err) {
    char *p = text, where[300];
    int line = 1;
    if (strncmp(p, "# fixture v1", 12) != 0 || (p[12] != '\n' && p[12]
            != '\r' && p[12] != '\0'))
        return error_set(err, "%s: not a fixture file (the first line must "
                         "be \"# fixture v1\")", f->path);
    int cap = 0;
    for (;;) {
        while (isspace((unsigned char)*p)) line += *p++ == '\n';
        if (*p == '\0') return 0;
        char *e = line_end(p), saved = *e;
        if (*p == '#') {                     // a comment line
            p = e;
            continue;
        }
        if (f->count == cap) {
            cap = cap ? 2 * cap : 16;
            f->t = xrealloc(f->t, (size_t)cap * sizeof *f->t);
        }
        Tensor *t = &f->t[f->count];
        memset(t, 0, sizeof *t);
        snprintf(where, sizeof where, "%s:%d", f->path, line);
        *e = '\0';
        int rc = parse_header(t, p, where, err);
        *e = saved;
        if (rc != 0) return -1;
        for (int i = 0; i < f->count; i++)
            if (strcmp(f->t[i].name, t->name) == 0)
                return error_set(err, "%s: tensor %s appears twice", where,
                                 t->name);
        f->count++;                          // now owned by f, even if bad
        p = e;
        if (parse_values(t, &p, &line, f->path, err) != 0) return -1;
    }
}

Fixture *fixture_load(const char *path, Error *err) {
    size_t len;
    char *text = read_file(path, &len, err);
    if (!text) return NULL;
    Fixture *f = xcalloc(1, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", path);
    if (strlen(text) != len) {
        error_set(err, "%s: not a text file (holds a NUL byte)", path);
        free(text);
        fixture_free(f);
        return NULL;
    }
    int rc = parse(f, text, err);
    free(text);
    if (rc != 0) {
        fixture_free(f);
        return NULL;
    }
    return f;
}

void fixture_free(Fixture *f) {
    if (!f) return;
    for (int i = 0; i < f->count; i++) free(f->t[i].data);
    free(f->t);
    free(f);
}

static void shape_str(const int *shape, int ndim, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ",%d" : "%d",
                                 shape[i]);
    if (used < size) snprintf(buf + used, size - used, ")");
}

const float *fixture_find(const Fixture *f, const char *name,
                          const int *shape, int ndim, size_t *n,
                          Error *err) {
    const Tensor *t = NULL;
    for (int i = 0; i < f->count && !t; i++)
        if (strcmp(f->t[i].name, name) == 0) t = &f->t[i];
    if (!t) {
        error_set(err, "%s: no tensor named %s", f->path, name);
        return NULL;
    }
    bool same = !shape || ndim == t->ndim;
    for (int i = 0; shape && same && i < ndim; i++)
        same = shape[i] == t->shape[i];
    if (!same) {
        char got[128], want[128];
        shape_str(t->shape, t->ndim, got, sizeof got);
        shape_str(shape, ndim, want, sizeof want);
        error_set(err, "%s: tensor %s has shape %s, expected %s", f->path,
                  name, got, want);
        return NULL;
    }
    if (n) *n = t->n;
    return t->data;
}

int fixture_dims(const Fixture *f, const char *name, int *shape) {
    for (int i = 0; i < f->count; i++)
        if (strcmp(f->t[i].name, name) == 0) {
            memcpy(shape, f->t[i].shape, sizeof f->t[i].shape);
            return f->t[i].ndim;
        }
    return -1;
}

const float *fixture_get(const Fixture *f, const char *name,
                         const int *shape, int ndim) {
    Error err;
    const float *p = fixture_find(f, name, shape, ndim, NULL, &err);
    if (!p) ck_abort_msg("%s", err.msg);
    return p;
}
