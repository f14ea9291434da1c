// The JSON parser (common/json.c): json_parse on the raw bytes, then
// json_get, json_int64 and json_type_name over every value it returns.
#include "fuzz_util.h"
#include "json.h"

// Walks the tree, checking what json.h promises of it.
static void walk(const Json *j, int depth) {
    if (depth > JSON_MAX_DEPTH + 1)
        fuzz_fail("a tree deeper than JSON_MAX_DEPTH");
    (void)json_type_name(j->type);
    int64_t v;
    switch (j->type) {
    case JSON_NUMBER:
        if (!j->str || strlen(j->str) != j->str_len)
            fuzz_fail("a number without its text");
        if (json_int64(j, &v) == 0 && (strchr(j->str, '.')
                                       || strpbrk(j->str, "eE")))
            fuzz_fail("json_int64 took \"%s\", not a plain integer", j->str);
        break;
    case JSON_STRING:
        if (strlen(j->str) != j->str_len)
            fuzz_fail("a string with a NUL inside");
        if (json_int64(j, &v) == 0) fuzz_fail("json_int64 of a string");
        break;
    case JSON_OBJECT:
        for (int i = 0; i < j->n; i++) {
            // keys are unique, so each finds its own value
            if (json_get(j, j->keys[i]) != &j->items[i])
                fuzz_fail("json_get(\"%s\") is not the value of that key",
                          j->keys[i]);
            walk(&j->items[i], depth + 1);
        }
        (void)json_get(j, "no such key \x01");
        break;
    case JSON_ARRAY:
        if (json_get(j, "x")) fuzz_fail("json_get found a key in an array");
        for (int i = 0; i < j->n; i++) walk(&j->items[i], depth + 1);
        break;
    case JSON_NULL:
    case JSON_BOOL:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    Error err;
    Json *j = json_parse((const char *)data, size, &err);
    if (!j) {
        if (strncmp(err.msg, "JSON: ", 6) != 0 || strchr(err.msg, '\n'))
            fuzz_fail("error message not of the form \"JSON: ...\": %s",
                      err.msg);
        return 0;
    }
    walk(j, 0);
    json_free(j);
    return 0;
}
