// json.c - a recursive-descent JSON parser: one function per rule of the
// RFC 8259 grammar (value, object, array, string, number), each reading
// from a cursor into a tree node. See json.h for what is accepted.
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"
#include "utf8.h"

typedef struct {
    const char *s;   // the text
    size_t len;
    size_t pos;      // the next byte to read
    int depth;       // arrays and objects currently open
    Error *err;
} Parser;

// Fills the error with "JSON: <problem> at byte <at>"; returns -1.
__attribute__((format(printf, 3, 4)))
static int fail(Parser *p, size_t at, const char *fmt, ...) {
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return error_set(p->err, "JSON: %s at byte %zu", what, at);
}

// How many bytes of s to print so that messages stay short: at most max,
// and never half of a UTF-8 character.
static int clip_len(const char *s, size_t max) {
    size_t n = strlen(s);
    if (n <= max) return (int)n;
    while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80) max--;
    return (int)max;
}

// "unexpected 'x'", "unexpected byte 0x01" or "unexpected end of input",
// for the byte at the cursor.
static int fail_unexpected(Parser *p, const char *context) {
    if (p->pos >= p->len)
        return fail(p, p->pos, "unexpected end of input%s", context);
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c > 0x20 && c < 0x7f)
        return fail(p, p->pos, "unexpected '%c'%s", c, context);
    return fail(p, p->pos, "unexpected byte 0x%02x%s", c, context);
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static void skip_ws(Parser *p) {
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

// Frees what a node owns (not the node itself). Safe on a zeroed node and
// on one that a failed parse left half-built.
static void json_clear(Json *j) {
    free(j->str);
    for (int i = 0; i < j->n; i++) {
        json_clear(&j->items[i]);
        if (j->keys) free(j->keys[i]);
    }
    free(j->items);
    free(j->keys);
    memset(j, 0, sizeof *j);
}

void json_free(Json *j) {
    if (!j) return;
    json_clear(j);
    free(j);
}

static int parse_value(Parser *p, Json *out);

// ---- literals and numbers --------------------------------------------------

static int parse_literal(Parser *p, Json *out) {
    static const struct { const char *word; JsonType type; bool b; } LIT[] = {
        {"true", JSON_BOOL, true}, {"false", JSON_BOOL, false},
        {"null", JSON_NULL, false}};
    for (size_t k = 0; k < sizeof LIT / sizeof LIT[0]; k++) {
        size_t n = strlen(LIT[k].word);
        if (p->len - p->pos >= n
            && memcmp(p->s + p->pos, LIT[k].word, n) == 0) {
            out->type = LIT[k].type;
            out->b = LIT[k].b;
            p->pos += n;
            return 0;
        }
    }
    return fail(p, p->pos, "invalid literal (expected true, false or null)");
}

// number = [ "-" ] ( "0" / [1-9] *digit ) [ "." 1*digit ]
//          [ ("e" / "E") [ "+" / "-" ] 1*digit ]
static int parse_number(Parser *p, Json *out) {
    size_t start = p->pos;
    const char *s = p->s;
    if (p->pos < p->len && s[p->pos] == '-') p->pos++;
    if (p->pos < p->len && s[p->pos] == '0') {
        p->pos++;
        if (p->pos < p->len && is_digit(s[p->pos]))
            return fail(p, start, "leading zero in number");
    } else if (p->pos < p->len && is_digit(s[p->pos])) {
        while (p->pos < p->len && is_digit(s[p->pos])) p->pos++;
    } else {
        return fail_unexpected(p, " in number (expected a digit)");
    }
    if (p->pos < p->len && s[p->pos] == '.') {
        p->pos++;
        if (p->pos >= p->len || !is_digit(s[p->pos]))
            return fail_unexpected(p, " in number (expected a digit "
                                   "after '.')");
        while (p->pos < p->len && is_digit(s[p->pos])) p->pos++;
    }
    if (p->pos < p->len && (s[p->pos] == 'e' || s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (s[p->pos] == '+' || s[p->pos] == '-'))
            p->pos++;
        if (p->pos >= p->len || !is_digit(s[p->pos]))
            return fail_unexpected(p, " in number (expected a digit in "
                                   "the exponent)");
        while (p->pos < p->len && is_digit(s[p->pos])) p->pos++;
    }
    // The grammar matched: keep the text (for json_int64) and convert it.
    size_t n = p->pos - start;
    out->type = JSON_NUMBER;
    out->str = xmalloc(n + 1);
    memcpy(out->str, s + start, n);
    out->str[n] = '\0';
    out->str_len = n;
    out->num = strtod(out->str, NULL);
    if (!isfinite(out->num))
        return fail(p, start, "number %s is too large for a double", out->str);
    return 0;
}

// ---- strings ---------------------------------------------------------------

static int hex4(const char *s, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + (uint32_t)d;
    }
    *out = v;
    return 0;
}

// The \uXXXX escape at p->pos (which points at the 'u'), with its second
// half when it is a high surrogate. Appends the UTF-8 of the code point.
static int parse_unicode_escape(Parser *p, StrBuf *b) {
    size_t at = p->pos - 1;   // the backslash
    uint32_t cp, lo;
    if (p->len - p->pos < 5 || hex4(p->s + p->pos + 1, &cp) != 0)
        return fail(p, at, "\\u must be followed by 4 hex digits");
    p->pos += 5;
    if (cp == 0)
        return fail(p, at, "\\u0000 (NUL) is not allowed in strings");
    if (cp >= 0xdc00 && cp <= 0xdfff)
        return fail(p, at, "lone surrogate \\u%04X", cp);
    if (cp >= 0xd800 && cp <= 0xdbff) {
        // A high surrogate: a low one must follow, as another \uXXXX.
        if (p->len - p->pos < 6 || p->s[p->pos] != '\\'
            || p->s[p->pos + 1] != 'u' || hex4(p->s + p->pos + 2, &lo) != 0
            || lo < 0xdc00 || lo > 0xdfff)
            return fail(p, at, "lone surrogate \\u%04X", cp);
        p->pos += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    char utf8[4];
    sb_append(b, utf8, (size_t)utf8_encode(cp, utf8));
    return 0;
}

static int parse_escape(Parser *p, StrBuf *b) {
    size_t at = p->pos;   // the backslash
    p->pos++;
    if (p->pos >= p->len) return fail(p, at, "unterminated string");
    char e = p->s[p->pos];
    const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
    const char *hit = e ? strchr(from, e) : NULL;
    if (hit) {
        sb_append(b, to + (hit - from), 1);
        p->pos++;
        return 0;
    }
    if (e == 'u') return parse_unicode_escape(p, b);
    if ((unsigned char)e > 0x20 && (unsigned char)e < 0x7f)
        return fail(p, at, "invalid escape '\\%c'", e);
    return fail(p, at, "invalid escape (backslash before byte 0x%02x)",
                (unsigned char)e);
}

// Length of the UTF-8 sequence that lead byte b starts (0: not a lead).
static size_t utf8_seq_len(unsigned char b) {
    return b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3
         : (b >> 3) == 0x1e ? 4 : 0;
}

// A string literal starting at the quote under the cursor, decoded into a
// new NUL-terminated buffer.
static int parse_string(Parser *p, char **str, size_t *str_len) {
    size_t start = p->pos;
    StrBuf b = {0};
    sb_append(&b, "", 0);   // an empty string is "", not NULL
    p->pos++;
    for (;;) {
        if (p->pos >= p->len) {
            sb_free(&b);
            return fail(p, start, "unterminated string");
        }
        unsigned char c = (unsigned char)p->s[p->pos];
        int rc = 0;
        if (c == '"') {
            p->pos++;
            break;
        } else if (c < 0x20) {
            rc = fail(p, p->pos, "unescaped control character 0x%02x in "
                      "string", c);
        } else if (c == '\\') {
            rc = parse_escape(p, &b);
        } else {
            // One whole character, checked with the strict decoder.
            size_t n = utf8_seq_len(c);
            if (n == 0) n = 1;   // the decoder names the bad lead byte
            if (n > p->len - p->pos) n = p->len - p->pos;
            uint32_t cp[4];
            if (utf8_decode(p->s + p->pos, n, cp, NULL) != 1)
                rc = fail(p, p->pos, "invalid UTF-8 in string");
            else {
                sb_append(&b, p->s + p->pos, n);
                p->pos += n;
            }
        }
        if (rc) {
            sb_free(&b);
            return rc;
        }
    }
    *str = b.s;
    *str_len = b.len;
    return 0;
}

// ---- arrays and objects ----------------------------------------------------

// Makes room for one more item (and key, for objects) and returns it zeroed.
// n is counted at once, so clearing the parent frees a half-parsed item.
static Json *add_item(Json *parent, int *cap) {
    if (parent->n == *cap) {
        *cap = *cap ? 2 * *cap : 4;
        parent->items = xrealloc(parent->items,
                                 (size_t)*cap * sizeof *parent->items);
        if (parent->type == JSON_OBJECT)
            parent->keys = xrealloc(parent->keys,
                                    (size_t)*cap * sizeof *parent->keys);
    }
    Json *item = &parent->items[parent->n];
    memset(item, 0, sizeof *item);
    if (parent->keys) parent->keys[parent->n] = NULL;
    parent->n++;
    return item;
}

// After a value inside [ ] or { }: a ',' and another item, or the close.
// Returns 1 for "more", 0 for "closed", -1 on error.
static int next_or_close(Parser *p, char close) {
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ',') {
        size_t comma = p->pos++;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == close)
            return fail(p, comma, "trailing comma");
        return 1;
    }
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return 0;
    }
    return fail_unexpected(p, close == ']' ? " (expected ',' or ']')"
                                           : " (expected ',' or '}')");
}

static int parse_array(Parser *p, Json *out) {
    out->type = JSON_ARRAY;
    p->pos++;   // '['
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
        return 0;
    }
    int cap = 0, more = 1;
    while (more == 1) {
        if (parse_value(p, add_item(out, &cap)) != 0) return -1;
        more = next_or_close(p, ']');
    }
    return more;
}

typedef struct {
    const char *key;
    size_t pos;
} KeyRef;

static int cmp_keyref(const void *a, const void *b) {
    const KeyRef *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

// Duplicate keys, found by sorting (a header may hold thousands of keys, so
// comparing every pair would be slow). Reports the later of a pair.
static int check_duplicates(Parser *p, const Json *obj, const size_t *pos) {
    if (obj->n < 2) return 0;
    KeyRef *refs = xmalloc((size_t)obj->n * sizeof *refs);
    for (int i = 0; i < obj->n; i++) refs[i] = (KeyRef){obj->keys[i], pos[i]};
    qsort(refs, (size_t)obj->n, sizeof *refs, cmp_keyref);
    int rc = 0;
    char q[400];
    for (int i = 1; i < obj->n && rc == 0; i++)
        if (strcmp(refs[i - 1].key, refs[i].key) == 0)
            rc = fail(p, refs[i].pos, "duplicate key %s",
                      json_quote(q, sizeof q, refs[i].key, 60));
    free(refs);
    return rc;
}

static int parse_object(Parser *p, Json *out) {
    out->type = JSON_OBJECT;
    p->pos++;   // '{'
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
        return 0;
    }
    int cap = 0, more = 1;
    size_t *key_pos = NULL;   // where each key starts, for the messages
    while (more == 1) {
        skip_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != '"') {
            more = fail_unexpected(p, " (expected a string key)");
            break;
        }
        Json *value = add_item(out, &cap);
        key_pos = xrealloc(key_pos, (size_t)cap * sizeof *key_pos);
        key_pos[out->n - 1] = p->pos;
        size_t key_len;
        if (parse_string(p, &out->keys[out->n - 1], &key_len) != 0) {
            more = -1;
            break;
        }
        skip_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != ':') {
            more = fail_unexpected(p, " (expected ':' after the key)");
            break;
        }
        p->pos++;
        if (parse_value(p, value) != 0) {
            more = -1;
            break;
        }
        more = next_or_close(p, '}');
    }
    if (more == 0) more = check_duplicates(p, out, key_pos);
    free(key_pos);
    return more;
}

static int parse_value(Parser *p, Json *out) {
    skip_ws(p);
    if (p->pos >= p->len) return fail_unexpected(p, "");
    char c = p->s[p->pos];
    if (c == '[' || c == '{') {
        if (p->depth == JSON_MAX_DEPTH)
            return fail(p, p->pos, "nesting deeper than %d", JSON_MAX_DEPTH);
        p->depth++;
        int rc = c == '[' ? parse_array(p, out) : parse_object(p, out);
        p->depth--;
        return rc;
    }
    if (c == '"') {
        out->type = JSON_STRING;
        return parse_string(p, &out->str, &out->str_len);
    }
    if (c == '-' || is_digit(c)) return parse_number(p, out);
    if (c == 't' || c == 'f' || c == 'n') return parse_literal(p, out);
    return fail_unexpected(p, "");
}

Json *json_parse(const char *text, size_t len, Error *err) {
    Parser p = {text, len, 0, 0, err};
    Json *root = xcalloc(1, sizeof *root);
    int rc = parse_value(&p, root);
    if (rc == 0) {
        skip_ws(&p);
        if (p.pos < p.len) rc = fail_unexpected(&p, " after the value");
    }
    if (rc != 0) {
        json_free(root);
        return NULL;
    }
    return root;
}

// ---- looking things up -----------------------------------------------------

const Json *json_get(const Json *obj, const char *key) {
    if (!obj || obj->type != JSON_OBJECT) return NULL;
    for (int i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return &obj->items[i];
    return NULL;
}

int json_int64(const Json *j, int64_t *out) {
    if (!j || j->type != JSON_NUMBER) return -1;
    const char *s = j->str;
    bool neg = *s == '-';
    if (neg) s++;
    // Accumulate the magnitude, refusing anything beyond the range.
    uint64_t limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    uint64_t v = 0;
    for (; *s; s++) {
        if (!is_digit(*s)) return -1;   // a fraction or an exponent
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (limit - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (!neg) *out = (int64_t)v;
    else *out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    return 0;
}

const char *json_type_name(JsonType type) {
    switch (type) {
    case JSON_NULL: return "null";
    case JSON_BOOL: return "a boolean";
    case JSON_NUMBER: return "a number";
    case JSON_STRING: return "a string";
    case JSON_ARRAY: return "an array";
    case JSON_OBJECT: return "an object";
    }
    return "?";
}

// ---- writing ---------------------------------------------------------------

static void sb_reserve(StrBuf *b, size_t extra) {
    if (b->len + extra + 1 <= b->cap) return;
    size_t cap = b->cap ? 2 * b->cap : 64;
    while (cap < b->len + extra + 1) cap *= 2;
    b->s = xrealloc(b->s, cap);
    b->cap = cap;
}

void sb_append(StrBuf *b, const char *s, size_t n) {
    sb_reserve(b, n);
    if (n) memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void sb_printf(StrBuf *b, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n > 0) {
        sb_reserve(b, (size_t)n);
        vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
    }
    va_end(ap2);
}

void sb_json_string(StrBuf *b, const char *s, size_t n) {
    sb_append(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\"
                        : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t" : c == '\b' ? "\\b"
                        : c == '\f' ? "\\f" : NULL;
        if (esc) sb_append(b, esc, 2);
        else if (c < 0x20) sb_printf(b, "\\u%04x", c);
        else sb_append(b, (const char *)&c, 1);
    }
    sb_append(b, "\"", 1);
}

const char *json_quote(char *buf, size_t size, const char *s, size_t max) {
    StrBuf b = {0};
    sb_json_string(&b, s, (size_t)clip_len(s, max));
    snprintf(buf, size, "%s", b.s);
    sb_free(&b);
    return buf;
}

void sb_free(StrBuf *b) {
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}
