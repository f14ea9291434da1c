#include "check_util.h"

#include "exercise.h"
#include "mem.h"
#include "rng.h"

TCase *tcase_new(const char *name, const char *tags) {
    TCase *tc = tcase_create(name);
    tcase_set_tags(tc, tags);
    tcase_set_timeout(tc, TEST_TIMEOUT);
    return tc;
}

// What every exercise stub calls: fails the calling test with a message
// the grader recognises as "not implemented".
_Noreturn void exercise_not_implemented(const char *id, const char *func) {
    ck_abort_msg("exercise %s not implemented (%s)", id, func);
    __builtin_unreachable();   // ck_abort_msg does not return
}

Fixture *fixture_open(const char *path, const char *script) {
    Error err;
    Fixture *f = fixture_load(path, &err);
    ck_assert_msg(f != NULL, "%s (python3 tests/reference/%s writes it)",
                  err.msg, script);
    return f;
}

float *randn_floats(size_t n, float std, uint64_t seed) {
    Rng rng;
    rng_seed(&rng, seed);
    float *p = alloc_floats(n);
    rng_normal_fill(&rng, p, n, 0.0f, std);
    return p;
}
