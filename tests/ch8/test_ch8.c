// Tests of chapter 8: every kernel against the CPU function it replaces,
// run under the host emulation (chapters/ch8_cuda/emu.h), so no GPU is
// needed. The checks themselves live in the chapter (kcheck.cu: ./ch8
// --check runs them on a GPU); each entry of their table is one test
// here, its sizes odd on purpose (not multiples of a block or a warp).
#include <stdio.h>

#include "check_util.h"
#include "kcheck.cuh"

START_TEST(kernel_matches_the_cpu) {
    const KCheck *c = &KCHECKS[_i];
    KReport rep = {.n = 0};
    c->run(&rep, c->sz, 77 + (uint64_t)_i);
    ck_assert_msg(rep.n > 0, "%s: the check compared nothing", c->name);
    for (int j = 0; j < rep.n; j++) {
        const KResult *r = &rep.r[j];
        ck_assert_msg(r->ok, "%s at %s: error %.3g > tolerance %.1g",
                      r->name, r->sizes, r->err, r->tol);
    }
}
END_TEST

Suite *ch8_suite(void) {
    Suite *s = suite_create("ch8");
    TCase *tc = tcase_new("kernels", "ch8");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, kernel_matches_the_cpu, 0, N_KCHECKS);
    suite_add_tcase(s, tc);
    return s;
}
