// ch3_util.h - helpers shared by the chapter 3 tests (test_ch3.c and
// test_ex3.c), on top of chapter 2's (random inputs, fixture copies, the
// weighted-sum loss).
#ifndef TESTS_CH3_UTIL_H
#define TESTS_CH3_UTIL_H

#include "ch2/ch2_util.h"

// tests/reference/<file>, or the test fails saying how to make it.
static inline Fixture *fx3_open(const char *file) {
    char path[256];
    snprintf(path, sizeof path, "tests/reference/%s", file);
    Error err;
    Fixture *f = fixture_load(path, &err);
    ck_assert_msg(f != NULL, "%s (python3 tests/reference/gen_%.3s.py "
                  "writes it)", err.msg, file);
    return f;
}

// fixture_get of "<prefix>.<what>" (shape checked when shape is not NULL).
static inline const float *fx_get2(const Fixture *f, const char *prefix,
                                   const char *what, const int *shape,
                                   int ndim) {
    char key[96];
    snprintf(key, sizeof key, "%s.%s", prefix, what);
    return fixture_get(f, key, shape, ndim);
}

// Values pushed at least `gap` away from 0, for functions with a kink
// there (ReLU): a finite difference across the kink measures nothing.
static inline float *randn_away_from_zero(size_t n, float gap,
                                          uint64_t seed) {
    float *p = randn_floats(n, 1.0f, seed);
    for (size_t i = 0; i < n; i++) p[i] += p[i] < 0 ? -gap : gap;
    return p;
}

#endif
