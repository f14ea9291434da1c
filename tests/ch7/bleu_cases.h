// bleu_cases.h - the sacreBLEU reference cases of chapter 7's scores, for
// test_ch7_bleu.c and test_ex7.c. Two JSON files hold them, each a map
// from a case's name to its corpus and what sacreBLEU 2.6.0 made of it:
//   tests/reference/ch7_bleu.json       ours, tests/reference/gen_bleu.py
//                                       (under "cases"; chrF too)
//   data/bleu/sacrebleu_2.6.0_vectors.json   the course's (`make data`
//                                       copies it from ../shared/data)
#ifndef TESTS_BLEU_CASES_H
#define TESTS_BLEU_CASES_H

#include <stdbool.h>

#include "json.h"

#define BLEU_FIXTURE "tests/reference/ch7_bleu.json"
#define BLEU_VECTORS "data/bleu/sacrebleu_2.6.0_vectors.json"

typedef struct {
    const char *name;
    const Json *j;            // the case's object
    int n;                    // sentences
    const char **hyps, **refs;
    bool lowercase;
} BleuCase;

// The map of cases in the file at path. A missing file: NULL, and when
// optional, a one-line note on stderr (otherwise the running test
// fails). *root gets the tree to json_free.
const Json *bleu_cases_load(const char *path, bool optional, Json **root);

// Case i of the map; free with bleu_case_free.
void bleu_case_get(BleuCase *bc, const Json *cases, int i);
void bleu_case_free(BleuCase *bc);

// Element i of the array at key (i < 0: the value at key itself), which
// must be a number; fails the running test otherwise.
double bleu_case_num(const BleuCase *bc, const char *key, int i);
// The string at key, or element i of the array there.
const char *bleu_case_str(const BleuCase *bc, const char *key, int i);

#endif
