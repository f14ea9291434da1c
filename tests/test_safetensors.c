// Tests of the JSON parser (common/json.c) and of safetensors reading and
// writing (common/safetensors.c).
//
// The expectations are independent of the code under test: JSON texts with
// their decoded bytes written out by hand, a safetensors file assembled
// byte by byte here, a file written by Python's safetensors package
// (tests/reference/gen_safetensors.py), and one corrupt file per rule the
// reader enforces. Files go to a fresh folder under /tmp, removed at the
// end of each test.
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc_count.h"
#include "check_util.h"
#include "json.h"
#include "mem.h"
#include "safetensors.h"
#include "utf8.h"

#define PYTHON_FILE "tests/reference/st_python.safetensors"

// ---- helpers ----------------------------------------------------------------

typedef struct {
    char path[64];
} TmpDir;

static void tmpdir_make(TmpDir *d) {
    snprintf(d->path, sizeof d->path, "/tmp/st_test.XXXXXX");
    ck_assert_msg(mkdtemp(d->path) != NULL, "mkdtemp: %s", strerror(errno));
}

static void join(char *out, size_t size, const TmpDir *d, const char *name) {
    snprintf(out, size, "%s/%s", d->path, name);
}

// Entries of a folder (without . and ..), and how many look like our
// temporary files ("NAME.tmp.XXXXXX").
static int count_entries(const char *dir_path, int *n_tmp) {
    DIR *dir = opendir(dir_path);
    ck_assert_msg(dir != NULL, "opendir %s: %s", dir_path, strerror(errno));
    int n = 0;
    *n_tmp = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        n++;
        if (strstr(e->d_name, ".tmp.")) (*n_tmp)++;
    }
    closedir(dir);
    return n;
}

static void write_bytes(const char *path, const void *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "fopen %s: %s", path, strerror(errno));
    ck_assert(n == 0 || fwrite(bytes, 1, n, f) == n);
    ck_assert(fclose(f) == 0);
}

static char *slurp(const char *path, size_t *n) {
    Error err;
    char *buf = read_file(path, n, &err);
    ck_assert_msg(buf != NULL, "%s", err.msg);
    return buf;
}

// A safetensors file from its parts: the header size (8 bytes, little
// endian), the header text, then data_len bytes of data (0, 1, 2, ...).
static void write_st(const char *path, const char *header, size_t data_len) {
    size_t hlen = strlen(header);
    uint8_t *buf = xmalloc(8 + hlen + data_len);
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)((uint64_t)hlen >> (8 * i));
    memcpy(buf + 8, header, hlen);
    for (size_t i = 0; i < data_len; i++) buf[8 + hlen + i] = (uint8_t)i;
    write_bytes(path, buf, 8 + hlen + data_len);
    free(buf);
}

// ---- JSON -------------------------------------------------------------------

START_TEST(json_parses_valid_documents) {
    const char *text =
        " {\"a\" : [1, -2.5e3, 0, 1E+2, -0.0, 3e-2, 12.75],\n"
        "  \"b\": {\"c\": null, \"d\": true, \"e\": false, \"f\": {}},\n"
        "  \"s\": \"x\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\",\n"
        "  \"raw\": \"na\xc3\xafve \xe2\x82\xac\", \"empty\": \"\", "
        "\"list\": [] }\t\r\n";
    Error err;
    Json *j = json_parse(text, strlen(text), &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_int_eq(j->type, JSON_OBJECT);
    ck_assert_int_eq(j->n, 6);
    const char *order[] = {"a", "b", "s", "raw", "empty", "list"};
    for (int i = 0; i < 6; i++) ck_assert_str_eq(j->keys[i], order[i]);

    const Json *a = json_get(j, "a");
    ck_assert_int_eq(a->type, JSON_ARRAY);
    ck_assert_int_eq(a->n, 7);
    const double nums[] = {1, -2500, 0, 100, -0.0, 0.03, 12.75};
    for (int i = 0; i < 7; i++) {
        ck_assert_int_eq(a->items[i].type, JSON_NUMBER);
        ck_assert_double_eq(a->items[i].num, nums[i]);
    }
    ck_assert(signbit(a->items[4].num));
    ck_assert_str_eq(a->items[1].str, "-2.5e3");   // the text, as written

    const Json *b = json_get(j, "b");
    ck_assert_int_eq(json_get(b, "c")->type, JSON_NULL);
    ck_assert_int_eq(json_get(b, "d")->type, JSON_BOOL);
    ck_assert(json_get(b, "d")->b);
    ck_assert(!json_get(b, "e")->b);
    ck_assert_int_eq(json_get(b, "f")->type, JSON_OBJECT);
    ck_assert_int_eq(json_get(b, "f")->n, 0);
    ck_assert_ptr_null(json_get(b, "zz"));
    ck_assert_ptr_null(json_get(a, "c"));   // not an object

    // Escapes, U+00E9 and U+1F600 (a surrogate pair) as exact UTF-8 bytes.
    const char want_s[] = "x\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80";
    const Json *s = json_get(j, "s");
    ck_assert_int_eq(s->type, JSON_STRING);
    ck_assert_uint_eq(s->str_len, sizeof want_s - 1);
    ck_assert(memcmp(s->str, want_s, sizeof want_s) == 0);
    ck_assert_str_eq(json_get(j, "raw")->str, "na\xc3\xafve \xe2\x82\xac");
    ck_assert_str_eq(json_get(j, "empty")->str, "");
    ck_assert_int_eq(json_get(j, "list")->n, 0);
    json_free(j);

    // Scalars at the top level, and nesting exactly at the limit.
    j = json_parse("\"\\uD834\\uDD1E\"", 14, &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_str_eq(j->str, "\xf0\x9d\x84\x9e");   // U+1D11E
    json_free(j);
    char deep[2 * JSON_MAX_DEPTH + 1];
    memset(deep, '[', JSON_MAX_DEPTH);
    memset(deep + JSON_MAX_DEPTH, ']', JSON_MAX_DEPTH);
    j = json_parse(deep, 2 * JSON_MAX_DEPTH, &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    json_free(j);
}
END_TEST

START_TEST(json_int64_is_exact) {
    struct { const char *text; int ok; int64_t want; } cases[] = {
        {"0", 1, 0},
        {"-0", 1, 0},
        {"9007199254740993", 1, 9007199254740993LL},   // 2^53 + 1
        {"9223372036854775807", 1, INT64_MAX},
        {"-9223372036854775808", 1, INT64_MIN},
        {"9223372036854775808", 0, 0},
        {"-9223372036854775809", 0, 0},
        {"100000000000000000000", 0, 0},
        {"1.0", 0, 0},
        {"1e3", 0, 0},
        {"\"5\"", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Error err;
        Json *j = json_parse(cases[i].text, strlen(cases[i].text), &err);
        ck_assert_msg(j != NULL, "%s: %s", cases[i].text, err.msg);
        int64_t v = 12345;
        int rc = json_int64(j, &v);
        ck_assert_msg(rc == (cases[i].ok ? 0 : -1), "%s: rc %d",
                      cases[i].text, rc);
        if (cases[i].ok)
            ck_assert_msg(v == cases[i].want, "%s: got %lld", cases[i].text,
                          (long long)v);
        json_free(j);
    }
}
END_TEST

START_TEST(json_rejects_invalid_documents) {
    // The text, the words the message must hold, and the byte it names.
    struct {
        const char *text;
        size_t len;   // 0: strlen(text)
        const char *want;
        int at;
    } cases[] = {
        {"[1,]", 0, "trailing comma", 2},
        {"{\"a\":1 ,}", 0, "trailing comma", 7},
        {"[01]", 0, "leading zero", 1},
        {"-01", 0, "leading zero", 0},
        {"\"\\ud800\"", 0, "lone surrogate \\uD800", 1},
        {"\"ab\\udc00\"", 0, "lone surrogate \\uDC00", 3},
        {"\"\\ud800\\u0041\"", 0, "lone surrogate", 1},
        {"\"\\ud800x\"", 0, "lone surrogate", 1},
        {"\"a\nb\"", 0, "unescaped control character 0x0a", 2},
        {"[\"\t\"]", 0, "unescaped control character 0x09", 2},
        {"{\"a\":1,\"b\":2,\"a\":3}", 0, "duplicate key \"a\"", 13},
        {"{\"a\":1} x", 0, "unexpected 'x' after the value", 8},
        {"[1]\0", 4, "byte 0x00 after the value", 3},
        {"1 2", 0, "after the value", 2},
        {"\"\xff\"", 0, "invalid UTF-8", 1},
        {"\"a\xc3\"", 0, "invalid UTF-8", 2},
        {"\"\xed\xa0\x80\"", 0, "invalid UTF-8", 1},   // an encoded surrogate
        {"\"\xc0\xaf\"", 0, "invalid UTF-8", 1},       // overlong '/'
        {"1.", 0, "after '.'", 2},
        {"1.e5", 0, "after '.'", 2},
        {"-", 0, "expected a digit", 1},
        {"+1", 0, "unexpected '+'", 0},
        {".5", 0, "unexpected '.'", 0},
        {"1e", 0, "exponent", 2},
        {"1e+", 0, "exponent", 3},
        {"1e999", 0, "too large", 0},
        {"[1 2]", 0, "expected ',' or ']'", 3},
        {"{\"a\" 1}", 0, "expected ':'", 5},
        {"{1:2}", 0, "expected a string key", 1},
        {"{\"a\":1,}", 0, "trailing comma", 6},
        {"\"abc", 0, "unterminated string", 0},
        {"", 0, "unexpected end of input", 0},
        {"  ", 0, "unexpected end of input", 2},
        {"[", 0, "unexpected end of input", 1},
        {"\"\\x\"", 0, "invalid escape '\\x'", 1},
        {"\"\\u00g0\"", 0, "4 hex digits", 1},
        {"\"\\u0000\"", 0, "\\u0000", 1},
        {"nul", 0, "invalid literal", 0},
        {"True", 0, "unexpected 'T'", 0},
        {"'a'", 0, "unexpected '''", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *text = cases[i].text;
        size_t len = cases[i].len ? cases[i].len : strlen(text);
        Error err = {"(no message)"};
        Json *j = json_parse(text, len, &err);
        ck_assert_msg(j == NULL, "case %zu (%s) was accepted", i, text);
        char at[32];
        snprintf(at, sizeof at, " at byte %d", cases[i].at);
        size_t m = strlen(err.msg), a = strlen(at);
        ck_assert_msg(strncmp(err.msg, "JSON: ", 6) == 0
                      && strstr(err.msg, cases[i].want) != NULL
                      && m > a && strcmp(err.msg + m - a, at) == 0,
                      "case %zu (%s): got \"%s\", want \"%s\" and \"%s\"", i,
                      text, err.msg, cases[i].want, at);
    }
    // One level deeper than the limit.
    char deep[2 * JSON_MAX_DEPTH + 2];
    memset(deep, '[', JSON_MAX_DEPTH + 1);
    memset(deep + JSON_MAX_DEPTH + 1, ']', JSON_MAX_DEPTH + 1);
    Error err;
    ck_assert_ptr_null(json_parse(deep, sizeof deep, &err));
    ck_assert_str_eq(err.msg, "JSON: nesting deeper than 64 at byte 64");
}
END_TEST

START_TEST(json_writes_escaped_strings) {
    const char in[] = "a\"b\\c\n\x01\x1f\t\xc3\xa9/";
    StrBuf b = {0};
    sb_printf(&b, "[%d,", 7);
    sb_json_string(&b, in, sizeof in - 1);
    sb_append(&b, "]", 1);
    ck_assert_str_eq(b.s, "[7,\"a\\\"b\\\\c\\n\\u0001\\u001f\\t\xc3\xa9/\"]");
    // And the parser reads it back to the same bytes.
    Error err;
    Json *j = json_parse(b.s, b.len, &err);
    ck_assert_msg(j != NULL, "%s", err.msg);
    ck_assert_str_eq(j->items[1].str, in);
    json_free(j);
    sb_free(&b);
}
END_TEST

// ---- safetensors: reading ---------------------------------------------------

START_TEST(st_reads_hand_built_file) {
    // Three tensors (listed out of data order, one of them empty), two
    // metadata entries, whitespace around the header, and the data bytes
    // written out: 1.0f and -2.5f, then the int32s 7 and -1.
    const char *header =
        " {\"b\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[8,16]},"
        "\"__metadata__\":{\"k\":\"v\",\"e\":\"\"},"
        "\"z\":{\"dtype\":\"F32\",\"shape\":[0, 3],\"data_offsets\":[16,16],"
        "\"extra\":1},"
        "\"a\":{\"dtype\":\"F32\",\"shape\":[1,2],\"data_offsets\":[0,8]}}   ";
    const uint8_t data[16] = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0,
                              0x07, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff};
    size_t hlen = strlen(header);
    uint8_t *file = xmalloc(8 + hlen + sizeof data);
    memset(file, 0, 8);
    file[0] = (uint8_t)hlen;   // the header is shorter than 256 bytes
    memcpy(file + 8, header, hlen);
    memcpy(file + 8 + hlen, data, sizeof data);
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    join(path, sizeof path, &d, "hand.safetensors");
    write_bytes(path, file, 8 + hlen + sizeof data);
    free(file);

    StFile f;
    Error err;
    ck_assert_msg(st_load(&f, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(f.n_tensors, 3);
    ck_assert_uint_eq(f.data_size, 16);
    // In data order: a [0, 8), b [8, 16), z [16, 16).
    ck_assert_str_eq(f.tensors[0].name, "a");
    ck_assert_str_eq(f.tensors[1].name, "b");
    ck_assert_str_eq(f.tensors[2].name, "z");
    const StTensor *a = st_find(&f, "a");
    ck_assert_str_eq(a->dtype, "F32");
    ck_assert_int_eq(a->ndim, 2);
    ck_assert_int_eq(a->shape[0], 1);
    ck_assert_int_eq(a->shape[1], 2);
    ck_assert_uint_eq(a->numel, 2);
    ck_assert_uint_eq(a->begin, 0);
    ck_assert_uint_eq(a->end, 8);
    float av[2];
    ck_assert_msg(st_copy_f32(&f, "a", av, 2, &err) == 0, "%s", err.msg);
    ck_assert_float_eq(av[0], 1.0f);
    ck_assert_float_eq(av[1], -2.5f);
    const StTensor *b = st_find(&f, "b");
    ck_assert_str_eq(b->dtype, "I32");
    ck_assert_uint_eq(b->elem_size, 4);
    int32_t bv[2];
    memcpy(bv, st_bytes(&f, b), sizeof bv);
    ck_assert_int_eq(bv[0], 7);
    ck_assert_int_eq(bv[1], -1);
    const StTensor *z = st_find(&f, "z");
    ck_assert_uint_eq(z->numel, 0);
    ck_assert_int_eq(z->shape[1], 3);
    ck_assert_ptr_null(st_find(&f, "c"));
    ck_assert_int_eq(f.n_meta, 2);
    ck_assert_str_eq(st_meta(&f, "k"), "v");
    ck_assert_str_eq(st_meta(&f, "e"), "");
    ck_assert_ptr_null(st_meta(&f, "v"));
    // Copying checks the dtype and the count.
    ck_assert_int_eq(st_copy_f32(&f, "b", av, 2, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "tensor \"b\": dtype is I32, "
                                 "expected F32"));
    ck_assert_int_eq(st_copy_f32(&f, "a", av, 3, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "shape [1, 2] has 2 values, "
                                 "expected 3"));
    ck_assert_int_eq(st_copy_f32(&f, "q", av, 2, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no tensor \"q\""));
    st_free(&f);

    // No tensors at all is a valid (empty) file.
    write_st(path, "{}      ", 0);
    ck_assert_msg(st_load(&f, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(f.n_tensors, 0);
    ck_assert_int_eq(f.n_meta, 0);
    st_free(&f);
    remove_tree(d.path);
}
END_TEST

START_TEST(st_reads_python_file) {
    // tests/reference/gen_safetensors.py wrote it with safetensors.torch.
    StFile f;
    Error err;
    ck_assert_msg(st_load(&f, PYTHON_FILE, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(f.n_tensors, 5);

    const StTensor *t = st_find(&f, "f32");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->ndim, 2);
    ck_assert_int_eq(t->shape[0], 2);
    ck_assert_int_eq(t->shape[1], 3);
    float fv[6];
    ck_assert_msg(st_copy_f32(&f, "f32", fv, 6, &err) == 0, "%s", err.msg);
    const float want_f[6] = {0.5f, -1.25f, 3.0f, 0.001f, -0.0f, 7.75f};
    ck_assert(memcmp(fv, want_f, sizeof fv) == 0);   // -0.0 bit for bit

    t = st_find(&f, "i64");
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t->dtype, "I64");
    ck_assert_int_eq(t->ndim, 1);
    ck_assert_int_eq(t->shape[0], 3);
    int64_t iv[3];
    memcpy(iv, st_bytes(&f, t), sizeof iv);
    ck_assert_int_eq(iv[0], 1);
    ck_assert_int_eq(iv[1], -2);
    ck_assert_int_eq(iv[2], (1LL << 40) + 3);

    t = st_find(&f, "h.f16");
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t->dtype, "F16");
    ck_assert_uint_eq(t->end - t->begin, 4);
    const uint8_t want_h[4] = {0x00, 0x3e, 0x00, 0xc0};   // 1.5, -2.0
    ck_assert(memcmp(st_bytes(&f, t), want_h, 4) == 0);

    t = st_find(&f, "scalar");
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t->dtype, "F64");
    ck_assert_int_eq(t->ndim, 0);
    ck_assert_uint_eq(t->numel, 1);
    double dv;
    memcpy(&dv, st_bytes(&f, t), sizeof dv);
    ck_assert_double_eq(dv, 3.25);

    t = st_find(&f, "u8");
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(t->dtype, "U8");
    ck_assert_int_eq(t->shape[0], 1);
    ck_assert_int_eq(t->shape[1], 3);
    ck_assert(memcmp(st_bytes(&f, t), "\x00\x07\xff", 3) == 0);

    ck_assert_int_eq(f.n_meta, 2);
    ck_assert_str_eq(st_meta(&f, "format"), "pt");
    ck_assert_str_eq(st_meta(&f, "note"),
                     "caf\xc3\xa9 \"quoted\"\nsecond line");
    st_free(&f);
}
END_TEST

// Every rule of the reader, broken once. The header is written as given,
// followed by data_len bytes of data.
static const struct {
    const char *header;
    size_t data_len;
    const char *want;
} CORRUPT[] = {
    {"{\"a\":", 0, "the header is not valid JSON: unexpected end of input "
     "at byte 5"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},}", 4,
     "not valid JSON: trailing comma at byte 53"},
    {"{\"a\":{},\"a\":{}}", 0, "not valid JSON: duplicate key \"a\""},
    {"{\"a\":\"\xff\"}", 0, "not valid JSON: invalid UTF-8"},
    {"[1, 2]", 0, "the header is an array, expected a JSON object"},
    {"{\"a\":5}", 0, "tensor \"a\": entry is a number, expected an object"},
    // a name with a newline (JSON's \n) leaves the message one line
    {"{\"a\\nb\":5}", 0, "tensor \"a\\nb\": entry is a number"},
    {"{\"a\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
     "tensor \"a\": missing \"dtype\""},
    {"{\"a\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4,
     "tensor \"a\": missing \"shape\""},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4,
     "tensor \"a\": missing \"data_offsets\""},
    {"{\"a\":{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
     "\"dtype\" is a number, expected a string"},
    {"{\"a\":{\"dtype\":\"F8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     "tensor \"a\": unknown dtype \"F8\""},
    {"{\"a\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
     "unknown dtype \"f32\""},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":4,\"data_offsets\":[0,16]}}", 16,
     "\"shape\" is a number, expected an array"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,-1],\"data_offsets\":[0,0]}}", 0,
     "shape entry 1 is negative (-1)"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", 8,
     "shape entry 0 is 2.5, expected a 64-bit integer"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[\"2\"],\"data_offsets\":[0,8]}}",
     8, "shape entry 0 is a string, expected a 64-bit integer"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],"
     "\"data_offsets\":[0,4]}}", 4, "shape has 9 dimensions, at most 8"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],"
     "\"data_offsets\":[0,4]}}", 4, "is too large (its byte size overflows)"},
    {"{\"a\":{\"dtype\":\"U8\",\"shape\":[99999999999999999999],"
     "\"data_offsets\":[0,4]}}", 4, "shape entry 0 is 99999999999999999999, "
     "expected a 64-bit integer"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4,
     "\"data_offsets\" must be two non-negative integers"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}}", 8,
     "\"data_offsets\" must be two non-negative integers"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,\"4\"]}}",
     4, "\"data_offsets\" must be two non-negative integers"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}}", 4,
     "\"data_offsets\" must be two non-negative integers"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":{}}}", 4,
     "\"data_offsets\" must be two non-negative integers"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 8,
     "data_offsets [8, 4] end before they begin"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4,
     "data_offsets [0, 8] go beyond the data section (4 bytes)"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,20]}}", 20,
     "tensor \"a\": shape [2, 3] F32 needs 24 bytes, data_offsets give 20"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12,
     "tensors \"a\" [0, 8) and \"b\" [4, 12) overlap"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12,
     "bytes [4, 8) of the data section belong to no tensor"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8,
     "bytes [4, 8) of the data section belong to no tensor"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
     "bytes [0, 4) of the data section belong to no tensor"},
    {"{}", 3, "bytes [0, 3) of the data section belong to no tensor"},
    {"{\"__metadata__\":[1]}", 0, "__metadata__ is an array, expected an "
     "object of strings"},
    {"{\"__metadata__\":{\"k\":\"v\",\"n\":1}}", 0,
     "__metadata__ value of \"n\" is a number, expected a string"},
};

// st_load_header refuses the file at path as st_load does, word for
// word, and leaves its StFile empty.
static void same_refusal(const char *path) {
    StFile f;
    Error whole = {"(no message)"}, head = {"(no message)"};
    ck_assert_int_eq(st_load(&f, path, &whole), -1);
    ck_assert_int_eq(st_load_header(&f, path, &head), -1);
    ck_assert_msg(strcmp(head.msg, whole.msg) == 0, "the header alone: "
                  "\"%s\", the whole file: \"%s\"", head.msg, whole.msg);
    ck_assert(f.buf == NULL && f.tensors == NULL && f.n_meta == 0);
}

START_TEST(st_rejects_corrupt_files) {
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    join(path, sizeof path, &d, "bad.safetensors");
    for (size_t i = 0; i < sizeof CORRUPT / sizeof CORRUPT[0]; i++) {
        write_st(path, CORRUPT[i].header, CORRUPT[i].data_len);
        StFile f;
        Error err = {"(no message)"};
        int rc = st_load(&f, path, &err);
        ck_assert_msg(rc == -1, "case %zu was accepted: %s", i,
                      CORRUPT[i].header);
        ck_assert_msg(strncmp(err.msg, path, strlen(path)) == 0
                      && strstr(err.msg, CORRUPT[i].want) != NULL
                      && strchr(err.msg, '\n') == NULL,
                      "case %zu: got \"%s\", want \"%s\"", i, err.msg,
                      CORRUPT[i].want);
        ck_assert_msg(f.buf == NULL && f.tensors == NULL && f.n_meta == 0,
                      "case %zu: the StFile was not emptied", i);
        st_free(&f);   // safe on an emptied one
        same_refusal(path);
    }
    remove_tree(d.path);
}
END_TEST

// Problems with the file itself, before any JSON.
START_TEST(st_rejects_bad_files) {
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    StFile f;
    Error err;

    join(path, sizeof path, &d, "missing.safetensors");
    ck_assert_int_eq(st_load(&f, path, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    ck_assert_ptr_nonnull(strstr(err.msg, strerror(ENOENT)));
    same_refusal(path);

    ck_assert_int_eq(st_load(&f, d.path, &err), -1);   // a folder
    ck_assert_ptr_nonnull(strstr(err.msg, d.path));
    ck_assert_ptr_nonnull(strstr(err.msg, strerror(EISDIR)));
    same_refusal(d.path);

    join(path, sizeof path, &d, "short.safetensors");
    write_bytes(path, "", 0);
    ck_assert_int_eq(st_load(&f, path, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "0 bytes is too short"));
    same_refusal(path);
    write_bytes(path, "\x02\0\0\0\0", 5);
    ck_assert_int_eq(st_load(&f, path, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "5 bytes is too short"));
    same_refusal(path);
    // the size alone, and the size with one byte after it
    write_bytes(path, "\x05\0\0\0\0\0\0\0", 8);
    same_refusal(path);
    write_bytes(path, "\x05\0\0\0\0\0\0\0{", 9);
    same_refusal(path);

    // A header size larger than the file, and one near 2^64.
    write_bytes(path, "\xe8\x03\0\0\0\0\0\0{}      ", 16);
    ck_assert_int_eq(st_load(&f, path, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "header size 1000 goes beyond the "
                                 "end of the file (16 bytes)"));
    same_refusal(path);
    write_bytes(path, "\xff\xff\xff\xff\xff\xff\xff\xff{}      ", 16);
    ck_assert_int_eq(st_load(&f, path, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "header size 18446744073709551615 "
                                 "goes beyond"));
    same_refusal(path);
    // A text file: its first 8 bytes make a size beyond any file, and no
    // JSON header follows them. It is said to be no safetensors file, not
    // given a header size of 7953764122556964899 beyond the file.
    write_bytes(path, "First Citizen:\nBefore we proceed", 32);
    ck_assert_int_eq(st_load(&f, path, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "is not a safetensors file"));
    ck_assert_ptr_null(strstr(err.msg, "goes beyond"));
    same_refusal(path);
    remove_tree(d.path);
}
END_TEST

// st_load_header: the same tensors and metadata as st_load, from the
// header alone. A data section of 1 GiB (a sparse file) is not read: what
// the reader allocates stays under 64 KiB; cut one byte short, the file
// is refused, as st_load refuses it.
START_TEST(st_reads_header_alone) {
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    join(path, sizeof path, &d, "model.safetensors");
    float a[6] = {1, 2, 3, 4, 5, 6}, b[2] = {-1, 0.5f};
    const StWriteTensor t[2] = {{"a", a, 2, {2, 3}}, {"b", b, 1, {2}}};
    const char *keys[] = {"config", "step"}, *values[] = {"{}", "7"};
    Error err;
    ck_assert_msg(st_save(path, t, 2, keys, values, 2, &err) == 0, "%s",
                  err.msg);
    StFile whole, head;
    ck_assert_msg(st_load(&whole, path, &err) == 0, "%s", err.msg);
    ck_assert_msg(st_load_header(&head, path, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(head.size, whole.size);
    ck_assert_uint_eq(head.data_size, whole.data_size);
    ck_assert_ptr_null(head.data);
    ck_assert_int_eq(head.n_tensors, 2);
    for (int i = 0; i < 2; i++) {
        const StTensor *x = &head.tensors[i], *y = &whole.tensors[i];
        ck_assert_str_eq(x->name, y->name);
        ck_assert_str_eq(x->dtype, "F32");
        ck_assert_int_eq(x->ndim, t[i].ndim);
        for (int k = 0; k < x->ndim; k++)
            ck_assert_int_eq(x->shape[k], t[i].shape[k]);
        ck_assert_uint_eq(x->begin, y->begin);
        ck_assert_uint_eq(x->end, y->end);
    }
    ck_assert_int_eq(head.n_meta, 2);
    ck_assert_str_eq(st_meta(&head, "step"), "7");
    ck_assert_str_eq(st_meta(&head, "config"), "{}");
    // st_copy_f32 on the header alone reads each tensor from the file:
    // the values, with the checks of a whole file's copy
    float got[6] = {0};
    ck_assert_msg(st_copy_f32(&head, "b", got, 2, &err) == 0, "%s",
                  err.msg);
    ck_assert(got[0] == -1.0f && got[1] == 0.5f && got[2] == 0.0f);
    ck_assert_msg(st_copy_f32(&head, "a", got, 6, &err) == 0, "%s",
                  err.msg);
    for (int i = 0; i < 6; i++) ck_assert(got[i] == a[i]);
    ck_assert_int_eq(st_copy_f32(&head, "a", got, 5, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "has 6 values, expected 5"));
    // a part of a tensor: a's values 2 to 4, and nothing past its end
    memset(got, 0, sizeof got);
    const StTensor *ta = st_find(&head, "a");
    ck_assert_msg(st_read_range(&head, ta, 2 * sizeof(float),
                                3 * sizeof(float), got, &err) == 0, "%s",
                  err.msg);
    ck_assert(got[0] == 3 && got[1] == 4 && got[2] == 5 && got[3] == 0);
    ck_assert_int_eq(st_read_range(&head, ta, 4 * sizeof(float),
                                   3 * sizeof(float), got, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "bytes 16 to 28 of a tensor of "
                                 "24"));
    ck_assert_int_eq(st_read_range(&head, ta, SIZE_MAX, 2, got, &err), -1);
    // a file that changed since its header was read is refused
    ck_assert_int_eq(truncate(path, (off_t)head.size - 1), 0);
    ck_assert_int_eq(st_copy_f32(&head, "b", got, 2, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "changed since its header was "
                                 "read"));
    remove(path);
    ck_assert_int_eq(st_copy_f32(&head, "b", got, 2, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot open"));
    st_free(&whole);
    st_free(&head);

    const char *big = "{\"big\":{\"dtype\":\"F32\",\"shape\":[268435456],"
                      "\"data_offsets\":[0,1073741824]}}";
    write_st(path, big, 0);
    off_t size = (off_t)(8 + strlen(big)) + ((off_t)1 << 30);
    ck_assert_int_eq(truncate(path, size), 0);
    long before = alloc_live();
    alloc_peak_reset();
    int rc = st_load_header(&head, path, &err);
    long took = alloc_peak() - before;
    ck_assert_msg(rc == 0, "%s", err.msg);
    ck_assert_msg(took < 65536, "the header alone took %ld bytes", took);
    ck_assert_uint_eq(head.size, (size_t)size);
    ck_assert_uint_eq(head.tensors[0].numel, 268435456);
    st_free(&head);
    ck_assert_int_eq(truncate(path, size - 1), 0);
    ck_assert_int_eq(st_load_header(&head, path, &err), -1);
    ck_assert_msg(strstr(err.msg, "go beyond the data section") != NULL,
                  "%s", err.msg);
    remove_tree(d.path);
}
END_TEST

// ---- safetensors: writing ---------------------------------------------------

START_TEST(st_round_trip) {
    float wte[12], bias[5], scalar = 42.5f;
    for (int i = 0; i < 12; i++) wte[i] = 0.25f * (float)i - 1.0f;
    for (int i = 0; i < 5; i++) bias[i] = -1e-7f * (float)(i + 1);
    bias[2] = -0.0f;
    const StWriteTensor t[3] = {
        {"transformer.wte.weight", wte, 2, {3, 4}},
        {"ln \"f\".bias\n", bias, 1, {5}},
        {"scalar", &scalar, 0, {0}},
    };
    const char *keys[] = {"config", "vocab \xe2\x82\xac", "empty"};
    const char *values[] = {"{\"n_layer\": 2}",
                            "a\"b\\c\nd\t\xc3\xbc\xf0\x9f\x98\x80\x01", ""};
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    join(path, sizeof path, &d, "model.safetensors");
    Error err;
    ck_assert_msg(st_save(path, t, 3, keys, values, 3, &err) == 0, "%s",
                  err.msg);

    StFile f;
    ck_assert_msg(st_load(&f, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(f.n_tensors, 3);
    for (int i = 0; i < 3; i++) {
        // Written in the given order, so the data order is the same.
        const StTensor *s = &f.tensors[i];
        ck_assert_str_eq(s->name, t[i].name);
        ck_assert_str_eq(s->dtype, "F32");
        ck_assert_int_eq(s->ndim, t[i].ndim);
        for (int k = 0; k < t[i].ndim; k++)
            ck_assert_int_eq(s->shape[k], t[i].shape[k]);
        ck_assert(memcmp(st_bytes(&f, s), t[i].data, s->numel * 4) == 0);
    }
    ck_assert_uint_eq(f.tensors[2].numel, 1);
    ck_assert_int_eq(f.n_meta, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_str_eq(f.meta_keys[i], keys[i]);
        ck_assert_str_eq(f.meta_values[i], values[i]);
    }
    st_free(&f);

    // The file itself: the data section starts at a multiple of 8 right
    // after the header, which is padded with spaces, and holds the tensors
    // back to back.
    size_t n;
    uint8_t *bytes = (uint8_t *)slurp(path, &n);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | bytes[i];
    ck_assert_uint_eq((8 + hlen) % 8, 0);
    ck_assert_uint_eq(n, 8 + hlen + (12 + 5 + 1) * 4);
    ck_assert_int_eq(bytes[8], '{');
    size_t close = 8 + (size_t)hlen - 1;
    while (bytes[close] == ' ') close--;
    ck_assert_int_eq(bytes[close], '}');
    ck_assert_uint_lt(8 + hlen - 1 - close, 8);   // at most 7 spaces
    ck_assert(memcmp(bytes + 8 + hlen, wte, sizeof wte) == 0);
    ck_assert(memcmp(bytes + 8 + hlen + 48, bias, sizeof bias) == 0);
    free(bytes);
    remove_tree(d.path);
}
END_TEST

START_TEST(st_writes_reference_layout) {
    // The exact bytes, as Python's safetensors would write them.
    const float w[2] = {1.0f, -2.0f};
    const StWriteTensor t[1] = {{"w", w, 1, {2}}};
    const char *keys[] = {"k"}, *values[] = {"v\n"};
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    join(path, sizeof path, &d, "w.safetensors");
    Error err;
    ck_assert_msg(st_save(path, t, 1, keys, values, 1, &err) == 0, "%s",
                  err.msg);
    const char want_header[] = "{\"__metadata__\":{\"k\":\"v\\n\"},\"w\":{"
        "\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}       ";
    size_t hlen = sizeof want_header - 1;   // 81 + 7 spaces: 8 + 88 = 96
    ck_assert_uint_eq((8 + hlen) % 8, 0);
    size_t n;
    char *bytes = slurp(path, &n);
    ck_assert_uint_eq(n, 8 + hlen + 8);
    ck_assert(memcmp(bytes, "\x58\0\0\0\0\0\0\0", 8) == 0);   // 88
    ck_assert_msg(memcmp(bytes + 8, want_header, hlen) == 0, "header %.*s",
                  (int)hlen, bytes + 8);
    ck_assert(memcmp(bytes + 8 + hlen, "\0\0\x80\x3f\0\0\0\xc0", 8) == 0);
    free(bytes);

    // No tensors and no metadata: "{}" and 6 spaces.
    ck_assert_msg(st_save(path, NULL, 0, NULL, NULL, 0, &err) == 0, "%s",
                  err.msg);
    bytes = slurp(path, &n);
    ck_assert_uint_eq(n, 16);
    ck_assert(memcmp(bytes, "\x08\0\0\0\0\0\0\0{}      ", 16) == 0);
    free(bytes);
    remove_tree(d.path);
}
END_TEST

START_TEST(st_save_replaces_atomically) {
    const float a[3] = {1, 2, 3}, b[2] = {4, 5};
    const StWriteTensor ta[1] = {{"a", a, 1, {3}}};
    const StWriteTensor tb[1] = {{"b", b, 2, {1, 2}}};
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    join(path, sizeof path, &d, "ckpt.safetensors");
    Error err;
    ck_assert_msg(st_save(path, ta, 1, NULL, NULL, 0, &err) == 0, "%s",
                  err.msg);
    ck_assert_msg(st_save(path, tb, 1, NULL, NULL, 0, &err) == 0, "%s",
                  err.msg);
    StFile f;
    ck_assert_msg(st_load(&f, path, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(f.n_tensors, 1);
    ck_assert_ptr_null(st_find(&f, "a"));
    float got[2];
    ck_assert_msg(st_copy_f32(&f, "b", got, 2, &err) == 0, "%s", err.msg);
    ck_assert(got[0] == 4 && got[1] == 5);
    st_free(&f);
    int n_tmp;
    ck_assert_int_eq(count_entries(d.path, &n_tmp), 1);
    ck_assert_int_eq(n_tmp, 0);
    // The usual permissions of a new file, not mkstemp's 0600.
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    mode_t mask = umask(0);
    umask(mask);
    ck_assert_uint_eq(st.st_mode & 0777, 0666 & ~mask);

    // Into a folder that does not exist: an error, and nothing created.
    char missing[160];
    snprintf(missing, sizeof missing, "%s/nope/x.safetensors", d.path);
    ck_assert_int_eq(st_save(missing, ta, 1, NULL, NULL, 0, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, missing));
    ck_assert_ptr_nonnull(strstr(err.msg, strerror(ENOENT)));
    ck_assert_int_eq(count_entries(d.path, &n_tmp), 1);
    remove_tree(d.path);
}
END_TEST

// st_save in a child process whose files may not grow beyond 4 KiB, so
// that writing the temporary file fails half-way. Returns st_save's result
// and its message (through a pipe: the child's exit status is left to
// the tools that may watch it, such as valgrind).
static int save_with_small_file_limit(const char *path,
                                      const StWriteTensor *t, char *msg,
                                      size_t size) {
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        signal(SIGXFSZ, SIG_IGN);   // a failed write, not a killed process
        struct rlimit lim = {4096, 4096};
        Error err = {"(no message)"};
        int rc = setrlimit(RLIMIT_FSIZE, &lim) == 0
                 ? st_save(path, t, 1, NULL, NULL, 0, &err) : 1;
        char out[sizeof err.msg + 8];
        int len = snprintf(out, sizeof out, "%d %s", rc, err.msg);
        if (write(fds[1], out, (size_t)len) != len) _exit(3);
        _exit(0);
    }
    close(fds[1]);
    char buf[600];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof buf - 1
           && (r = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
    close(fds[0]);
    waitpid(pid, NULL, 0);
    int rc = 1;
    char *space = strchr(buf, ' ');
    if (space) {
        rc = atoi(buf);
        snprintf(msg, size, "%s", space + 1);
    } else {
        snprintf(msg, size, "no answer from the child");
    }
    return rc;
}

START_TEST(st_failed_save_keeps_old_file) {
    const float a[3] = {1, 2, 3};
    const StWriteTensor old[1] = {{"a", a, 1, {3}}};
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    join(path, sizeof path, &d, "ckpt.safetensors");
    Error err;
    ck_assert_msg(st_save(path, old, 1, NULL, NULL, 0, &err) == 0, "%s",
                  err.msg);
    size_t n_before, n_after;
    char *before = slurp(path, &n_before);

    // 1. Refused before any file is made: duplicate names.
    const StWriteTensor dup[2] = {{"x", a, 1, {3}}, {"x", a, 1, {1}}};
    ck_assert_int_eq(st_save(path, dup, 2, NULL, NULL, 0, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, path));
    ck_assert_ptr_nonnull(strstr(err.msg, "tensor \"x\" appears twice"));

    // 2. The write itself fails (file size limit) half-way.
    enum { BIG = 1 << 14 };   // 64 KiB of floats, over the 4 KiB limit
    float *big = alloc_floats(BIG);
    const StWriteTensor large[1] = {{"big", big, 1, {BIG}}};
    char msg[600];
    int rc = save_with_small_file_limit(path, large, msg, sizeof msg);
    free(big);
    ck_assert_msg(rc == -1, "save under the file size limit: %d %s", rc, msg);
    ck_assert_msg(strstr(msg, path) && strstr(msg, strerror(EFBIG)),
                  "message: %s", msg);

    char *after = slurp(path, &n_after);
    ck_assert_uint_eq(n_after, n_before);
    ck_assert(memcmp(before, after, n_before) == 0);
    free(after);
    int n_tmp;
    ck_assert_int_eq(count_entries(d.path, &n_tmp), 1);
    ck_assert_int_eq(n_tmp, 0);

    // 3. The target is a folder (with a file inside): refused before
    // anything is written (the rename would fail only at the end).
    char folder[160], inside[200];
    snprintf(folder, sizeof folder, "%s/dir.safetensors", d.path);
    ck_assert_int_eq(mkdir(folder, 0755), 0);
    snprintf(inside, sizeof inside, "%s/keep", folder);
    write_bytes(inside, "x", 1);
    ck_assert_int_eq(st_save(folder, old, 1, NULL, NULL, 0, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "it is a folder"));
    ck_assert_ptr_nonnull(strstr(err.msg, folder));
    ck_assert_int_eq(count_entries(d.path, &n_tmp), 2);
    ck_assert_int_eq(n_tmp, 0);
    ck_assert_int_eq(count_entries(folder, &n_tmp), 1);

    after = slurp(path, &n_after);
    ck_assert_uint_eq(n_after, n_before);
    ck_assert(memcmp(before, after, n_before) == 0);
    free(after);
    free(before);
    remove_tree(d.path);
}
END_TEST

// write_file_check: what write_file_atomically would refuse, found
// without writing anything, and no file left behind either way.
START_TEST(write_check_finds_bad_targets) {
    TmpDir d;
    tmpdir_make(&d);
    char ok[128], file[128], under[160];
    join(ok, sizeof ok, &d, "new.safetensors");
    join(file, sizeof file, &d, "file");
    write_bytes(file, "x", 1);
    snprintf(under, sizeof under, "%s/m.safetensors", file);
    Error err;
    ck_assert_msg(write_file_check(ok, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(write_file_check(d.path, &err), -1);   // a folder
    ck_assert_msg(strstr(err.msg, "it is a folder"), "%s", err.msg);
    ck_assert_int_eq(write_file_check(under, &err), -1);    // no folder
    ck_assert_msg(strstr(err.msg, "cannot create a temporary file there")
                  && strstr(err.msg, under), "%s", err.msg);
    ck_assert_int_eq(write_file_check("/dev/null", &err), -1);
    ck_assert_msg(strstr(err.msg, "device or other special file"), "%s",
                  err.msg);
    int n_tmp;
    ck_assert_int_eq(count_entries(d.path, &n_tmp), 1);   // the file alone
    ck_assert_int_eq(n_tmp, 0);
    remove_tree(d.path);
}
END_TEST

START_TEST(st_save_rejects_bad_input) {
    const float a[2] = {1, 2};
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    join(path, sizeof path, &d, "x.safetensors");
    struct { StWriteTensor t; const char *want; } cases[] = {
        {{"__metadata__", a, 1, {2}}, "reserved"},
        {{"", a, 1, {2}}, "empty, missing or non-UTF-8 name"},
        {{"bad\xff", a, 1, {2}}, "non-UTF-8 name"},
        {{NULL, a, 1, {2}}, "missing"},
        {{"a", a, 9, {1, 1, 1, 1, 1, 1, 1, 1}}, "9 dimensions"},
        {{"a", a, 1, {-2}}, "negative dimension"},
        {{"a", NULL, 1, {2}}, "has no data"},
        {{"a", a, 3, {INT64_MAX, INT64_MAX, 4}}, "too large"},
    };
    Error err;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(st_save(path, &cases[i].t, 1, NULL, NULL, 0, &err),
                         -1);
        ck_assert_msg(strstr(err.msg, path) && strstr(err.msg,
                                                      cases[i].want),
                      "case %zu: %s", i, err.msg);
    }
    const char *keys[] = {"k", "k"}, *values[] = {"1", "2"};
    const StWriteTensor ok[1] = {{"a", a, 1, {2}}};
    ck_assert_int_eq(st_save(path, ok, 1, keys, values, 2, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "metadata key \"k\" appears "
                                 "twice"));
    const char *bad_values[] = {"\xc3"};
    ck_assert_int_eq(st_save(path, ok, 1, keys, bad_values, 1, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "not UTF-8"));
    int n_tmp;
    ck_assert_int_eq(count_entries(d.path, &n_tmp), 0);
    remove_tree(d.path);
}
END_TEST

Suite *safetensors_suite(void) {
    Suite *s = suite_create("safetensors");
    TCase *tc = tcase_new("json", "common");
    tcase_add_test(tc, json_parses_valid_documents);
    tcase_add_test(tc, json_int64_is_exact);
    tcase_add_test(tc, json_rejects_invalid_documents);
    tcase_add_test(tc, json_writes_escaped_strings);
    suite_add_tcase(s, tc);
    tc = tcase_new("st_read", "common");
    tcase_add_test(tc, st_reads_hand_built_file);
    tcase_add_test(tc, st_reads_python_file);
    tcase_add_test(tc, st_rejects_corrupt_files);
    tcase_add_test(tc, st_rejects_bad_files);
    tcase_add_test(tc, st_reads_header_alone);
    suite_add_tcase(s, tc);
    tc = tcase_new("st_write", "common");
    tcase_add_test(tc, st_round_trip);
    tcase_add_test(tc, st_writes_reference_layout);
    tcase_add_test(tc, st_save_replaces_atomically);
    tcase_add_test(tc, st_failed_save_keeps_old_file);
    tcase_add_test(tc, write_check_finds_bad_targets);
    tcase_add_test(tc, st_save_rejects_bad_input);
    suite_add_tcase(s, tc);
    return s;
}
