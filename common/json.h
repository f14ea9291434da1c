// json.h - a small, strict JSON (RFC 8259) parser, and a string builder for
// writing JSON.
//
// The project reads JSON in two places: the header of a safetensors file and
// the model configuration stored in a checkpoint's metadata. Both come from
// files a user hands us, so the parser checks everything the RFC requires
// and refuses what it leaves open:
//   * the whole text must be one value (whitespace around it is allowed);
//   * numbers follow the grammar exactly (no leading zeros, no "1.", no
//     "+1", no NaN) and must fit a double;
//   * strings must be valid UTF-8 with no raw control characters; escapes
//     include \uXXXX with surrogate pairs; \u0000 is refused, so every
//     decoded string is an ordinary NUL-terminated C string;
//   * duplicate keys in one object are an error (the RFC leaves them
//     undefined; for a file format that is a bug or an attack);
//   * arrays and objects nest at most JSON_MAX_DEPTH deep.
// Every error is one line: "JSON: <problem> at byte N", N counted from 0.
#ifndef COMMON_JSON_H
#define COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define JSON_MAX_DEPTH 64

typedef enum {
    JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT
} JsonType;

// One value of the tree. Which fields mean something depends on type:
//   JSON_BOOL    b
//   JSON_NUMBER  num (the value as a double) and str/str_len (the number
//                exactly as written, so integers beyond 2^53 stay exact)
//   JSON_STRING  str/str_len: the decoded UTF-8, NUL-terminated
//   JSON_ARRAY   items[0..n)
//   JSON_OBJECT  keys[i] -> items[i], i in [0, n), in the order of the text
typedef struct Json {
    JsonType type;
    bool b;
    double num;
    char *str;
    size_t str_len;
    int n;
    struct Json *items;
    char **keys;
} Json;

// Parses len bytes of text (no NUL needed). NULL with a message on error.
Json *json_parse(const char *text, size_t len, Error *err);
void json_free(Json *j);

// The value of key in obj; NULL when obj is not an object or has no key.
const Json *json_get(const Json *obj, const char *key);

// Reads a number written as a plain integer ("42", "-7"; not "4.2e1" or
// "42.0", as the safetensors reference implementation does) exactly, from
// its text, into *out. Returns 0, or -1 when j is not such a number or it
// does not fit int64_t.
int json_int64(const Json *j, int64_t *out);

// "null", "a boolean", "a number", "a string", "an array", "an object":
// for messages such as "shape is a string, expected an array".
const char *json_type_name(JsonType type);

// ---- writing ---------------------------------------------------------------

// A growable NUL-terminated string. Start from StrBuf b = {0}; free b.s
// (or call sb_free) when done.
typedef struct {
    char *s;
    size_t len, cap;
} StrBuf;

void sb_append(StrBuf *b, const char *s, size_t n);
void sb_printf(StrBuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
// Appends s (n bytes of UTF-8) as a JSON string literal, with its quotes:
// '"', '\\' and control characters are escaped, everything else (including
// non-ASCII UTF-8) is copied as it is.
void sb_json_string(StrBuf *b, const char *s, size_t n);
void sb_free(StrBuf *b);

// s for a one-line message: its first max bytes (never half a character)
// as a JSON string literal, so that a name holding a newline or a quote
// cannot break the line or the quoting. Written into buf (size bytes,
// cut short there), which it returns.
const char *json_quote(char *buf, size_t size, const char *s, size_t max);

#endif
