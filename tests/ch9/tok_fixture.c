// tok_fixture.c - see tok_fixture.h.
#include "tok_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_util.h"
#include "mem.h"
#include "utf8.h"

#define REGEN "python3 tests/reference/gen_ch9_tokenizer.py writes it"

Json *tokfx_expected(void) {
    Error err;
    size_t n;
    char *text = read_file(TOK_DIR "/expected.json", &n, &err);
    if (!text) ck_abort_msg("%s (" REGEN ")", err.msg);
    Json *j = json_parse(text, n, &err);
    free(text);
    if (!j) ck_abort_msg(TOK_DIR "/expected.json: %s", err.msg);
    return j;
}

const Json *tokfx_get(const Json *obj, const char *key, JsonType type) {
    const Json *v = json_get(obj, key);
    if (!v || v->type != type)
        ck_abort_msg(TOK_DIR "/expected.json: \"%s\" is %s, expected %s",
                     key, v ? json_type_name(v->type) : "missing",
                     json_type_name(type));
    return v;
}

char *tokfx_hex(const char *hex, size_t *n) {
    size_t len = strlen(hex);
    char *out = xmalloc(len / 2 + 1);
    for (size_t i = 0; i + 1 < len; i += 2) {
        unsigned v;
        if (sscanf(hex + i, "%2x", &v) != 1) ck_abort_msg("bad hex %s", hex);
        out[i / 2] = (char)v;
    }
    *n = len / 2;
    out[*n] = '\0';
    return out;
}

int *tokfx_ids(const Json *arr, int *n) {
    if (arr->type != JSON_ARRAY) ck_abort_msg("ids are not an array");
    int *ids = xmalloc((size_t)(arr->n + 1) * sizeof *ids);
    for (int i = 0; i < arr->n; i++) {
        int64_t v;
        if (json_int64(&arr->items[i], &v)) ck_abort_msg("id is no integer");
        ids[i] = (int)v;
    }
    *n = arr->n;
    return ids;
}

char *tokfx_entry(const Json *item, size_t *n, int **ids, int *n_ids) {
    *ids = tokfx_ids(tokfx_get(item, "ids", JSON_ARRAY), n_ids);
    return tokfx_hex(tokfx_get(item, "hex", JSON_STRING)->str, n);
}

void tokfx_load(Gpt2Tokenizer *t) {
    Error err;
    if (gpt2_tok_load_dir(t, TOK_DIR, &err) != 0)
        ck_abort_msg("%s (" REGEN ")", err.msg);
}

void tokfx_small_text(StrBuf *vocab, StrBuf *merges_txt,
                      const char *const *merges, int n, bool eot) {
    Json *x = tokfx_expected();
    const Json *table = tokfx_get(x, "bytes_to_unicode", JSON_ARRAY);
    StrBuf v = {0}, m = {0};
    sb_append(&v, "{", 1);
    for (int b = 0; b < 256; b++) {   // byte b: its character, id b
        int64_t cp;
        char u[4];
        json_int64(&table->items[b], &cp);
        sb_json_string(&v, u, (size_t)utf8_encode((uint32_t)cp, u));
        sb_printf(&v, ":%d,", b);
    }
    sb_append(&m, "#version: 0.2\n", 14);
    for (int i = 0; i < n; i++) {   // "a b" makes "ab" (ASCII: as it is)
        const char *sp = strchr(merges[i], ' ');
        sb_append(&v, "\"", 1);
        sb_append(&v, merges[i], (size_t)(sp - merges[i]));
        sb_printf(&v, "%s\":%d,", sp + 1, 256 + i);
        sb_printf(&m, "%s\n", merges[i]);
    }
    if (eot) sb_printf(&v, "\"%s\":%d,", GPT2_EOT, 256 + n);
    v.s[v.len - 1] = '}';
    json_free(x);
    *vocab = v;
    *merges_txt = m;
}

void tokfx_small(Gpt2Tokenizer *t, const char *const *merges, int n,
                 bool eot) {
    StrBuf v, m;
    tokfx_small_text(&v, &m, merges, n, eot);
    Error err;
    if (gpt2_tok_from_text(t, v.s, v.len, "vocab.json", m.s, m.len,
                           "merges.txt", &err) != 0)
        ck_abort_msg("a small tokenizer: %s", err.msg);
    sb_free(&v);
    sb_free(&m);
}

const char *tokfx_escape(char *buf, size_t size, const char *s, size_t n) {
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && i < 40 && at + 8 < size; i++) {
        unsigned char c = (unsigned char)s[i];
        at += (size_t)(c >= 0x20 && c < 0x7f
                       ? snprintf(buf + at, size - at, "%c", c)
                       : snprintf(buf + at, size - at, "\\x%02x", c));
    }
    if (n > 40 && at + 4 < size) snprintf(buf + at, size - at, "...");
    return buf;
}

const char *tokfx_show(char *buf, size_t size, const int *ids, int n) {
    size_t at = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < n && i < 24 && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%d", i ? ", " : "",
                               ids[i]);
    if (at < size)
        snprintf(buf + at, size - at, "%s]", n > 24 ? ", ..." : "");
    return buf;
}
