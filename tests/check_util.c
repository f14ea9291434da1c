#include "check_util.h"

#include "exercise.h"

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
