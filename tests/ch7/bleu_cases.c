#include "bleu_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_util.h"
#include "mem.h"
#include "utf8.h"

const Json *bleu_cases_load(const char *path, bool optional, Json **root) {
    *root = NULL;
    if (optional && access(path, F_OK) != 0) {
        fprintf(stderr, "note: %s is missing (`make data` copies it from "
                "../shared/data/bleu/); its cases are skipped\n", path);
        return NULL;
    }
    Error err;
    size_t len;
    char *text = read_file(path, &len, &err);
    ck_assert_msg(text != NULL, "%s%s", err.msg, optional ? "" :
                  " (python3 tests/reference/gen_bleu.py writes it)");
    *root = json_parse(text, len, &err);
    free(text);
    ck_assert_msg(*root != NULL, "%s: %s", path, err.msg);
    const Json *cases = json_get(*root, "cases");
    if (!cases) cases = *root;
    ck_assert_msg(cases->type == JSON_OBJECT && cases->n > 0,
                  "%s: no cases", path);
    return cases;
}

static const Json *get(const Json *obj, const char *name, const char *key,
                       JsonType type) {
    const Json *v = json_get(obj, key);
    ck_assert_msg(v && v->type == type, "case %s: %s missing or %s", name,
                  key, v ? json_type_name(v->type) : "absent");
    return v;
}

void bleu_case_get(BleuCase *bc, const Json *cases, int i) {
    const Json *c = &cases->items[i];
    bc->name = cases->keys[i];
    bc->j = c;
    const Json *h = get(c, bc->name, "hyps", JSON_ARRAY);
    const Json *r = get(c, bc->name, "refs", JSON_ARRAY);
    ck_assert_msg(h->n == r->n, "case %s: %d hyps, %d refs", bc->name, h->n,
                  r->n);
    bc->n = h->n;
    bc->hyps = xmalloc((size_t)(bc->n + 1) * sizeof *bc->hyps);
    bc->refs = xmalloc((size_t)(bc->n + 1) * sizeof *bc->refs);
    for (int k = 0; k < bc->n; k++) {
        ck_assert(h->items[k].type == JSON_STRING);
        ck_assert(r->items[k].type == JSON_STRING);
        bc->hyps[k] = h->items[k].str;
        bc->refs[k] = r->items[k].str;
    }
    bc->lowercase = get(c, bc->name, "lowercase", JSON_BOOL)->b;
}

void bleu_case_free(BleuCase *bc) {
    free(bc->hyps);
    free(bc->refs);
}

double bleu_case_num(const BleuCase *bc, const char *key, int i) {
    const Json *v = get(bc->j, bc->name, key, i < 0 ? JSON_NUMBER
                        : JSON_ARRAY);
    if (i < 0) return v->num;
    ck_assert_msg(i < v->n && v->items[i].type == JSON_NUMBER,
                  "case %s: %s[%d] missing", bc->name, key, i);
    return v->items[i].num;
}

const char *bleu_case_str(const BleuCase *bc, const char *key, int i) {
    const Json *v = get(bc->j, bc->name, key, i < 0 ? JSON_STRING
                        : JSON_ARRAY);
    if (i < 0) return v->str;
    ck_assert_msg(i < v->n && v->items[i].type == JSON_STRING,
                  "case %s: %s[%d] missing", bc->name, key, i);
    return v->items[i].str;
}
