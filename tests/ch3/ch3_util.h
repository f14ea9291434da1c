// ch3_util.h - helpers shared by the chapter 3 tests (test_ch3.c and
// test_ex3.c), on top of chapter 2's (random inputs, fixture copies, the
// weighted-sum loss).
#ifndef TESTS_CH3_UTIL_H
#define TESTS_CH3_UTIL_H

#include "ch2/ch2_util.h"

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
