// safetensors.c - the reader (validate everything, then hand out views) and
// the atomic writer. The format is described in safetensors.h.
#include "safetensors.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "mem.h"
#include "utf8.h"

// ---- shared by reader and writer -------------------------------------------

static const struct {
    const char *name;
    size_t size;
} DTYPES[] = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},   {"I16", 2}, {"U16", 2},
    {"F16", 2},  {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},
    {"F64", 8},  {"I64", 8}, {"U64", 8},
};

size_t st_dtype_size(const char *dtype) {
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (strcmp(DTYPES[i].name, dtype) == 0) return DTYPES[i].size;
    return 0;
}

// The file stores little-endian numbers and we hand them out as they are.
static bool host_is_little_endian(void) {
    uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

// numel = the product of the shape, bytes = numel * elem_size; -1 when
// either does not fit a size_t (a hostile header can ask for 2^70 bytes).
static int shape_bytes(const int64_t *shape, int ndim, size_t elem_size,
                       size_t *numel, size_t *bytes) {
    size_t count = 1;
    for (int d = 0; d < ndim; d++) {
        size_t dim = (size_t)shape[d];
        if (dim != 0 && count > SIZE_MAX / dim) return -1;
        count *= dim;
    }
    if (count > SIZE_MAX / elem_size) return -1;
    *numel = count;
    *bytes = count * elem_size;
    return 0;
}

// "[2, 3]" for messages.
static void format_shape(char *buf, size_t size, const int64_t *shape,
                         int ndim) {
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < ndim && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld",
                                 d ? ", " : "", (long long)shape[d]);
    if (used < size) snprintf(buf + used, size - used, "]");
}

// How many bytes of a name to print: at most max, never half a character.
static int clip_len(const char *s, size_t max) {
    size_t n = strlen(s);
    if (n <= max) return (int)n;
    while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80) max--;
    return (int)max;
}

// Room for a name of up to 80 bytes quoted by json_quote for a message
// (6 bytes for each control character, the quotes and the NUL).
#define QUOTE_SIZE (6 * 80 + 3)

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

// "PATH: tensor "NAME": <problem>"; returns -1.
__attribute__((format(printf, 4, 5)))
static int tensor_fail(Error *err, const char *path, const char *name,
                       const char *fmt, ...) {
    char what[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char q[QUOTE_SIZE];
    return error_set(err, "%s: tensor %s: %s", path,
                     json_quote(q, sizeof q, name, 80), what);
}

// ---- reading ---------------------------------------------------------------

// Checks one header entry and fills t from it.
static int read_tensor(StTensor *t, const char *path, const char *name,
                       const Json *entry, size_t data_size, Error *err) {
    char q[QUOTE_SIZE];
    if (entry->type != JSON_OBJECT)
        return tensor_fail(err, path, name, "entry is %s, expected an "
                           "object", json_type_name(entry->type));
    const Json *dtype = json_get(entry, "dtype");
    const Json *shape = json_get(entry, "shape");
    const Json *offsets = json_get(entry, "data_offsets");
    if (!dtype || !shape || !offsets)
        return tensor_fail(err, path, name, "missing \"%s\"",
                           !dtype ? "dtype" : !shape ? "shape"
                                                     : "data_offsets");
    // dtype
    if (dtype->type != JSON_STRING)
        return tensor_fail(err, path, name, "\"dtype\" is %s, expected a "
                           "string", json_type_name(dtype->type));
    t->elem_size = st_dtype_size(dtype->str);
    if (t->elem_size == 0)
        return tensor_fail(err, path, name, "unknown dtype %s",
                           json_quote(q, sizeof q, dtype->str, 20));
    snprintf(t->dtype, sizeof t->dtype, "%s", dtype->str);
    // shape
    if (shape->type != JSON_ARRAY)
        return tensor_fail(err, path, name, "\"shape\" is %s, expected an "
                           "array", json_type_name(shape->type));
    if (shape->n > ST_MAX_DIMS)
        return tensor_fail(err, path, name, "shape has %d dimensions, at "
                           "most %d are supported", shape->n, ST_MAX_DIMS);
    t->ndim = shape->n;
    for (int d = 0; d < t->ndim; d++) {
        const Json *dim = &shape->items[d];
        if (json_int64(dim, &t->shape[d]) != 0)
            return tensor_fail(err, path, name, "shape entry %d is %.*s, "
                               "expected a 64-bit integer", d,
                               dim->type == JSON_NUMBER
                                   ? clip_len(dim->str, 30) : 40,
                               dim->type == JSON_NUMBER
                                   ? dim->str : json_type_name(dim->type));
        if (t->shape[d] < 0)
            return tensor_fail(err, path, name, "shape entry %d is "
                               "negative (%lld)", d, (long long)t->shape[d]);
    }
    char shape_str[200];
    format_shape(shape_str, sizeof shape_str, t->shape, t->ndim);
    size_t bytes;
    if (shape_bytes(t->shape, t->ndim, t->elem_size, &t->numel, &bytes))
        return tensor_fail(err, path, name, "shape %s %s is too large "
                           "(its byte size overflows)", shape_str, t->dtype);
    // data_offsets
    int64_t range[2];
    if (offsets->type != JSON_ARRAY || offsets->n != 2
        || json_int64(&offsets->items[0], &range[0]) != 0
        || json_int64(&offsets->items[1], &range[1]) != 0
        || range[0] < 0 || range[1] < 0)
        return tensor_fail(err, path, name, "\"data_offsets\" must be two "
                           "non-negative integers [begin, end]");
    if (range[0] > range[1])
        return tensor_fail(err, path, name, "data_offsets [%lld, %lld] "
                           "end before they begin", (long long)range[0],
                           (long long)range[1]);
    if ((uint64_t)range[1] > data_size)
        return tensor_fail(err, path, name, "data_offsets [%lld, %lld] go "
                           "beyond the data section (%zu bytes)",
                           (long long)range[0], (long long)range[1],
                           data_size);
    t->begin = (size_t)range[0];
    t->end = (size_t)range[1];
    if (t->end - t->begin != bytes)
        return tensor_fail(err, path, name, "shape %s %s needs %zu bytes, "
                           "data_offsets give %zu", shape_str, t->dtype,
                           bytes, t->end - t->begin);
    return 0;
}

static int read_metadata(StFile *f, const char *path, const Json *meta,
                         Error *err) {
    char q[QUOTE_SIZE];
    if (meta->type != JSON_OBJECT)
        return error_set(err, "%s: __metadata__ is %s, expected an object "
                         "of strings", path, json_type_name(meta->type));
    f->meta_keys = xcalloc((size_t)meta->n + 1, sizeof *f->meta_keys);
    f->meta_values = xcalloc((size_t)meta->n + 1, sizeof *f->meta_values);
    f->n_meta = meta->n;
    for (int i = 0; i < meta->n; i++) {
        const Json *v = &meta->items[i];
        if (v->type != JSON_STRING)
            return error_set(err, "%s: __metadata__ value of %s is %s, "
                             "expected a string", path,
                             json_quote(q, sizeof q, meta->keys[i], 80),
                             json_type_name(v->type));
        f->meta_keys[i] = xstrdup(meta->keys[i]);
        f->meta_values[i] = xstrdup(v->str);
    }
    return 0;
}

static int cmp_by_offset(const void *a, const void *b) {
    const StTensor *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

static int hole(const char *path, size_t begin, size_t end, Error *err) {
    // (the format requires every byte to be used)
    return error_set(err, "%s: bytes [%zu, %zu) of the data section belong "
                     "to no tensor", path, begin, end);
}

// Sorted by offset, the tensors must tile the data section: each one
// begins where the one before ended, the first at 0, the last at the end.
static int check_tiling(StFile *f, const char *path, Error *err) {
    qsort(f->tensors, (size_t)f->n_tensors, sizeof *f->tensors,
          cmp_by_offset);
    size_t at = 0;   // where the next tensor must begin
    for (int i = 0; i < f->n_tensors; i++) {
        const StTensor *t = &f->tensors[i];
        if (t->begin < at) {
            const StTensor *prev = &f->tensors[i - 1];
            char q1[QUOTE_SIZE], q2[QUOTE_SIZE];
            return error_set(err, "%s: tensors %s [%zu, %zu) and %s [%zu, "
                             "%zu) overlap", path,
                             json_quote(q1, sizeof q1, prev->name, 80),
                             prev->begin, prev->end,
                             json_quote(q2, sizeof q2, t->name, 80),
                             t->begin, t->end);
        }
        if (t->begin > at) return hole(path, at, t->begin, err);
        at = t->end;
    }
    if (at != f->data_size) return hole(path, at, f->data_size, err);
    return 0;
}

// The 8-byte size, then the JSON header; on success *root is the header.
static int read_header(StFile *f, const char *path, Json **root,
                       Error *err) {
    if (f->size < 8)
        return error_set(err, "%s: %zu bytes is too short for a "
                         "safetensors file (8 at least)", path, f->size);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = (n << 8) | f->buf[i];
    if (n > f->size - 8) {
        // A header starts with '{' right after its size: without one,
        // the 8 bytes were never a size (a text file, a program), and the
        // number they make says nothing. With one, the file is cut short.
        if (f->size > 8 && f->buf[8] != '{')
            return error_set(err, "%s is not a safetensors file (its first 8 "
                             "bytes are no header size)", path);
        return error_set(err, "%s: header size %llu goes beyond the end of "
                         "the file (%zu bytes)", path, (unsigned long long)n,
                         f->size);
    }
    f->data = f->buf + 8 + n;
    f->data_size = f->size - 8 - (size_t)n;
    Error jerr;
    *root = json_parse((const char *)f->buf + 8, (size_t)n, &jerr);
    if (!*root) {
        const char *why = jerr.msg;
        if (strncmp(why, "JSON: ", 6) == 0) why += 6;
        return error_set(err, "%s: the header is not valid JSON: %s", path,
                         why);
    }
    if ((*root)->type != JSON_OBJECT)
        return error_set(err, "%s: the header is %s, expected a JSON "
                         "object", path, json_type_name((*root)->type));
    return 0;
}

// Everything after reading the bytes; the caller frees on failure.
static int parse_file(StFile *f, const char *path, Error *err) {
    Json *root = NULL;
    int rc = read_header(f, path, &root, err);
    const Json *meta = json_get(root, "__metadata__");
    if (rc == 0) {
        int count = root->n - (meta ? 1 : 0);
        f->tensors = xcalloc((size_t)count + 1, sizeof *f->tensors);
        f->n_tensors = count;
        if (meta) rc = read_metadata(f, path, meta, err);
    }
    for (int i = 0, k = 0; rc == 0 && i < root->n; i++) {
        if (&root->items[i] == meta) continue;
        StTensor *t = &f->tensors[k++];
        t->name = xstrdup(root->keys[i]);
        rc = read_tensor(t, path, t->name, &root->items[i], f->data_size,
                         err);
    }
    if (rc == 0) rc = check_tiling(f, path, err);
    json_free(root);
    return rc;
}

// f holds the bytes in f->buf (it owns them): name it and check it all.
static int load_buf(StFile *f, const char *path, Error *err) {
    f->path = xstrdup(path);
    if (parse_file(f, path, err) != 0) {
        st_free(f);
        return -1;
    }
    return 0;
}

int st_load(StFile *f, const char *path, Error *err) {
    memset(f, 0, sizeof *f);
    if (!host_is_little_endian())
        return error_set(err, "%s: cannot load safetensors on a big-endian "
                         "machine", path);
    Error ferr;
    char *bytes = read_file(path, &f->size, &ferr);
    if (!bytes) return error_set(err, "%s", ferr.msg);
    f->buf = (uint8_t *)bytes;
    return load_buf(f, path, err);
}

// Reads exactly n bytes into buf: 0, or -1 (ferror tells an error from
// a file that ended first).
static int read_exactly(FILE *fp, void *buf, size_t n) {
    return n == 0 || fread(buf, 1, n, fp) == n ? 0 : -1;
}

int st_load_header(StFile *f, const char *path, Error *err) {
    memset(f, 0, sizeof *f);
    if (!host_is_little_endian())
        return error_set(err, "%s: cannot load safetensors on a big-endian "
                         "machine", path);
    FILE *fp = fopen(path, "rb");
    if (!fp) return error_set(err, "cannot open %s: %s", path,
                              strerror(errno));
    // the file's size from the file system: the data is never read
    struct stat st;
    int e = fstat(fileno(fp), &st) != 0 ? errno
            : S_ISDIR(st.st_mode) ? EISDIR : 0;
    bool odd = e == 0 && !S_ISREG(st.st_mode);   // a pipe, a device
    if (e || odd) {
        fclose(fp);
        return error_set(err, "cannot read %s: %s", path,
                         odd ? "not a regular file" : strerror(e));
    }
    f->size = (size_t)st.st_size;
    // The 8-byte size and the byte after it (read_header looks at it),
    // then the header whole when that size fits in the file.
    size_t lead = f->size < 9 ? f->size : 9;
    uint8_t first[9];
    int rc = read_exactly(fp, first, lead);
    uint64_t n = 0;
    for (int i = 7; lead >= 8 && i >= 0; i--) n = (n << 8) | first[i];
    size_t have = lead >= 8 && n <= f->size - 8 ? 8 + (size_t)n : lead;
    f->buf = xmalloc(have + 1);
    memcpy(f->buf, first, lead < have ? lead : have);
    if (rc == 0 && have > lead)
        rc = read_exactly(fp, f->buf + lead, have - lead);
    e = ferror(fp) ? errno : 0;
    fclose(fp);
    if (rc != 0) {
        st_free(f);
        if (e) return error_set(err, "cannot read %s: %s", path,
                                strerror(e));
        return error_set(err, "%s: the file ended before its header did "
                         "(it changed while being read)", path);
    }
    f->buf[have] = 0;
    if (load_buf(f, path, err) != 0) return -1;
    f->data = NULL;   // never read: nothing may point into it
    return 0;
}

int st_load_bytes(StFile *f, const void *bytes, size_t n, const char *name,
                  Error *err) {
    memset(f, 0, sizeof *f);
    if (!host_is_little_endian())
        return error_set(err, "%s: cannot load safetensors on a big-endian "
                         "machine", name);
    // a copy with a NUL after it, as read_file gives
    f->buf = xmalloc(n + 1);
    if (n) memcpy(f->buf, bytes, n);
    f->buf[n] = 0;
    f->size = n;
    return load_buf(f, name, err);
}

void st_free(StFile *f) {
    for (int i = 0; i < f->n_tensors; i++) free(f->tensors[i].name);
    for (int i = 0; i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->tensors);
    free(f->meta_keys);
    free(f->meta_values);
    free(f->buf);
    free(f->path);
    memset(f, 0, sizeof *f);
}

const StTensor *st_find(const StFile *f, const char *name) {
    for (int i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    return NULL;
}

const char *st_meta(const StFile *f, const char *key) {
    for (int i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta_keys[i], key) == 0) return f->meta_values[i];
    return NULL;
}

const void *st_bytes(const StFile *f, const StTensor *t) {
    return f->data + t->begin;
}

int st_read_range(const StFile *f, const StTensor *t, size_t from,
                  size_t n, void *out, Error *err) {
    if (from > t->end - t->begin || n > t->end - t->begin - from)
        return error_set(err, "%s: bytes %zu to %zu of a tensor of %zu",
                         f->path, from, from + n, t->end - t->begin);
    int fd = open(f->path, O_RDONLY);
    if (fd < 0)
        return error_set(err, "cannot open %s: %s", f->path,
                         strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size != f->size)
        rc = error_set(err, "%s changed since its header was read",
                       f->path);
    char *p = out;
    off_t at = (off_t)(f->size - f->data_size + t->begin + from);
    for (size_t left = n; rc == 0 && left > 0;) {
        ssize_t k = pread(fd, p, left, at);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0)
            rc = error_set(err, "cannot read %s: %s", f->path,
                           k < 0 ? strerror(errno) : "it ended early");
        else p += k, at += k, left -= (size_t)k;
    }
    close(fd);
    return rc;
}

int st_copy_f32(const StFile *f, const char *name, float *out, size_t n,
                Error *err) {
    const StTensor *t = st_find(f, name);
    char q[QUOTE_SIZE];
    if (!t)
        return error_set(err, "%s: no tensor %s", f->path,
                         json_quote(q, sizeof q, name, 80));
    if (strcmp(t->dtype, "F32") != 0)
        return tensor_fail(err, f->path, name, "dtype is %s, expected F32",
                           t->dtype);
    if (t->numel != n) {
        char shape_str[200];
        format_shape(shape_str, sizeof shape_str, t->shape, t->ndim);
        return tensor_fail(err, f->path, name, "shape %s has %zu values, "
                           "expected %zu", shape_str, t->numel, n);
    }
    if (n && f->data) memcpy(out, st_bytes(f, t), n * sizeof *out);
    else if (n) return st_read_range(f, t, 0, n * sizeof *out, out, err);
    return 0;
}

// ---- writing ---------------------------------------------------------------

// The data bytes of one tensor to write (check_inputs made sure they fit).
static size_t write_bytes(const StWriteTensor *t) {
    size_t numel = 0, bytes = 0;
    shape_bytes(t->shape, t->ndim, sizeof(float), &numel, &bytes);
    return bytes;
}

static bool is_utf8(const char *s) {
    size_t n = strlen(s);
    uint32_t *cps = xmalloc((n + 1) * sizeof *cps);
    bool ok = utf8_decode(s, n, cps, NULL) >= 0;
    free(cps);
    return ok;
}

// Everything st_save can check before touching the disk.
static int check_inputs(const char *path, const StWriteTensor *t, int n,
                        const char *const *meta_keys,
                        const char *const *meta_values, int n_meta,
                        Error *err) {
    if (n < 0 || n_meta < 0 || (n > 0 && !t)
        || (n_meta > 0 && (!meta_keys || !meta_values)))
        return error_set(err, "cannot save %s: bad tensor or metadata list",
                         path);
    size_t total = 0;   // the data section's size must fit too
    char quoted[QUOTE_SIZE];
    for (int i = 0; i < n; i++) {
        const char *name = t[i].name;
        if (!name || !name[0] || !is_utf8(name))
            return error_set(err, "cannot save %s: tensor %d has an empty, "
                             "missing or non-UTF-8 name", path, i);
        if (strcmp(name, "__metadata__") == 0)
            return error_set(err, "cannot save %s: \"__metadata__\" is "
                             "reserved, not a tensor name", path);
        json_quote(quoted, sizeof quoted, name, 80);
        for (int k = 0; k < i; k++)
            if (strcmp(t[k].name, name) == 0)
                return error_set(err, "cannot save %s: tensor %s appears "
                                 "twice", path, quoted);
        if (t[i].ndim < 0 || t[i].ndim > ST_MAX_DIMS)
            return error_set(err, "cannot save %s: tensor %s has %d "
                             "dimensions (0 to %d allowed)", path, quoted,
                             t[i].ndim, ST_MAX_DIMS);
        size_t numel, bytes;
        for (int d = 0; d < t[i].ndim; d++)
            if (t[i].shape[d] < 0)
                return error_set(err, "cannot save %s: tensor %s has a "
                                 "negative dimension", path, quoted);
        if (shape_bytes(t[i].shape, t[i].ndim, sizeof(float), &numel,
                        &bytes) != 0
            || bytes > SIZE_MAX - total || (numel > 0 && !t[i].data))
            return error_set(err, "cannot save %s: tensor %s is too large "
                             "or has no data", path, quoted);
        total += bytes;
    }
    for (int i = 0; i < n_meta; i++) {
        if (!meta_keys[i] || !meta_values[i] || !is_utf8(meta_keys[i])
            || !is_utf8(meta_values[i]))
            return error_set(err, "cannot save %s: metadata entry %d is "
                             "missing or not UTF-8", path, i);
        for (int k = 0; k < i; k++)
            if (strcmp(meta_keys[k], meta_keys[i]) == 0)
                return error_set(err, "cannot save %s: metadata key %s "
                                 "appears twice", path,
                                 json_quote(quoted, sizeof quoted,
                                            meta_keys[i], 80));
    }
    return 0;
}

// The header JSON, as the reference implementation writes it (no spaces,
// "__metadata__" first), padded with spaces so that the data section
// starts at a multiple of 8 bytes.
static void build_header(StrBuf *h, const StWriteTensor *t, int n,
                         const char *const *meta_keys,
                         const char *const *meta_values, int n_meta) {
    sb_append(h, "{", 1);
    if (n_meta > 0) {
        sb_append(h, "\"__metadata__\":{", 16);
        for (int i = 0; i < n_meta; i++) {
            if (i) sb_append(h, ",", 1);
            sb_json_string(h, meta_keys[i], strlen(meta_keys[i]));
            sb_append(h, ":", 1);
            sb_json_string(h, meta_values[i], strlen(meta_values[i]));
        }
        sb_append(h, "}", 1);
    }
    size_t offset = 0;
    for (int i = 0; i < n; i++) {
        size_t bytes = write_bytes(&t[i]);
        if (i || n_meta > 0) sb_append(h, ",", 1);
        sb_json_string(h, t[i].name, strlen(t[i].name));
        sb_append(h, ":{\"dtype\":\"F32\",\"shape\":[", 25);
        for (int d = 0; d < t[i].ndim; d++)
            sb_printf(h, "%s%lld", d ? "," : "", (long long)t[i].shape[d]);
        sb_printf(h, "],\"data_offsets\":[%zu,%zu]}", offset, offset + bytes);
        offset += bytes;
    }
    sb_append(h, "}", 1);
    while ((8 + h->len) % 8 != 0) sb_append(h, " ", 1);
}

static int write_all(FILE *fp, const void *p, size_t n) {
    return n == 0 || fwrite(p, 1, n, fp) == n ? 0 : -1;
}

// mkstemp makes a file only its owner can read; a checkpoint gets the
// permissions any new file gets (0666 less the umask), like fopen's.
static mode_t new_file_mode(void) {
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

// Syncs the folder holding path, so that the rename itself is on disk.
static int sync_parent_dir(const char *path) {
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    int rc = fd < 0 ? -1 : fsync(fd);
    int saved = errno;
    if (fd >= 0) close(fd);
    free(dir);
    // Some filesystems cannot sync a folder (EINVAL): nothing to be done.
    if (rc != 0 && saved == EINVAL) rc = 0;
    errno = saved;
    return rc;
}

// The target, before anything is written: the rename at the end would
// replace a device such as /dev/full by a regular file, and would find a
// folder in the way only after all the writing.
static int check_target(const char *path, Error *err) {
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode)) return 0;
    if (S_ISDIR(st.st_mode))
        return error_set(err, "cannot save %s: it is a folder; give a file "
                         "name", path);
    return error_set(err, "cannot save %s: a device or other special file, "
                     "not a regular file", path);
}

// Creates the temporary file PATH.tmp.XXXXXX beside path: returns its
// descriptor and its name in *tmp (to free), or -1 with a message.
static int open_temp(const char *path, char **tmp, Error *err) {
    size_t len = strlen(path);
    *tmp = xmalloc(len + sizeof ".tmp.XXXXXX");
    memcpy(*tmp, path, len);
    memcpy(*tmp + len, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = mkstemp(*tmp);
    if (fd < 0) {
        error_set(err, "cannot save %s: cannot create a temporary file "
                  "there: %s", path, strerror(errno));
        free(*tmp);
        *tmp = NULL;
    }
    return fd;
}

int write_file_check(const char *path, Error *err) {
    char *tmp;
    int fd = check_target(path, err) == 0 ? open_temp(path, &tmp, err) : -1;
    if (fd < 0) return -1;
    close(fd);
    unlink(tmp);
    free(tmp);
    return 0;
}

//> write-atomically
int write_file_atomically(const char *path, const void *const *parts,
                          const size_t *sizes, int n, Error *err) {
    char *tmp;   // PATH.tmp.XXXXXX, renamed to path at the end
    int fd = check_target(path, err) == 0 ? open_temp(path, &tmp, err) : -1;
    if (fd < 0) return -1;
    // Past a file-size limit (ulimit -f) the kernel would kill us with
    // SIGXFSZ in the middle of the write; ignored, the write fails with
    // EFBIG instead, which is reported like a full disk.
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGXFSZ, &ignore, &old);
    const char *step = "cannot write";
    FILE *fp = fdopen(fd, "wb");
    int failed = !fp || fchmod(fd, new_file_mode()) != 0;
    for (int i = 0; i < n && !failed; i++)
        failed = write_all(fp, parts[i], sizes[i]);
    if (!failed) {
        step = "cannot flush";
        failed = fflush(fp) != 0 || fsync(fd) != 0;
    }
    int saved = errno;
    if (!fp) close(fd);
    else if (fclose(fp) != 0 && !failed) {
        failed = 1;
        saved = errno;
        step = "cannot close";
    }
    sigaction(SIGXFSZ, &old, NULL);
    if (!failed && rename(tmp, path) != 0) {
        failed = 1;
        saved = errno;
        step = "cannot rename the temporary file to";
    }
    if (failed) {
        unlink(tmp);
        free(tmp);
        return error_set(err, "%s %s: %s", step, path, strerror(saved));
    }
    free(tmp);
    if (sync_parent_dir(path) != 0)
        return error_set(err, "%s was written, but syncing its folder "
                         "failed: %s", path, strerror(errno));
    return 0;
}
//< write-atomically

// The file's three parts: the header's size, the header, every tensor.
static int write_st_file(const char *path, const StrBuf *header,
                         const StWriteTensor *t, int n, Error *err) {
    uint8_t size[8];
    for (int i = 0; i < 8; i++)
        size[i] = (uint8_t)((uint64_t)header->len >> (8 * i));
    const void **parts = xmalloc((size_t)(n + 2) * sizeof *parts);
    size_t *sizes = xmalloc((size_t)(n + 2) * sizeof *sizes);
    parts[0] = size;
    sizes[0] = 8;
    parts[1] = header->s;
    sizes[1] = header->len;
    for (int i = 0; i < n; i++) {
        parts[i + 2] = t[i].data;
        sizes[i + 2] = write_bytes(&t[i]);
    }
    int rc = write_file_atomically(path, parts, sizes, n + 2, err);
    free(parts);
    free(sizes);
    return rc;
}

int st_save(const char *path, const StWriteTensor *t, int n,
            const char *const *meta_keys, const char *const *meta_values,
            int n_meta, Error *err) {
    if (!host_is_little_endian())
        return error_set(err, "cannot save %s: safetensors needs a "
                         "little-endian machine", path);
    if (check_inputs(path, t, n, meta_keys, meta_values, n_meta, err))
        return -1;
    StrBuf header = {0};
    build_header(&header, t, n, meta_keys, meta_values, n_meta);
    int rc = write_st_file(path, &header, t, n, err);
    sb_free(&header);
    return rc;
}
