// check_util.h - Check assertions over the shared test runtime.
#ifndef TESTS_CHECK_UTIL_H
#define TESTS_CHECK_UTIL_H

#include <check.h>

#include "testing.h"

// Default per-test timeout in seconds (CK_TIMEOUT_MULTIPLIER scales it,
// which the sanitizer and valgrind runs use).
#define TEST_TIMEOUT 10

#define ck_assert_close(what, got, want, n, atol, rtol) do {               \
        char msg_[768];                                                    \
        ck_assert_msg(tensor_close(what, got, want, n, atol, rtol, msg_,   \
                                   sizeof msg_), "%s", msg_);              \
    } while (0)

#define ck_assert_close_f(what, got, want, n, atol, rtol) do {             \
        char msg_[768];                                                    \
        ck_assert_msg(tensor_close_f(what, got, want, n, atol, rtol, msg_, \
                                     sizeof msg_), "%s", msg_);            \
    } while (0)

#define ck_assert_grad(what, loss, ctx, param, grad, n, eps, atol, rtol)    \
    do {                                                                   \
        char msg_[768];                                                    \
        ck_assert_msg(grad_check(what, loss, ctx, param, grad, n, eps,     \
                                 atol, rtol, msg_, sizeof msg_),           \
                      "%s", msg_);                                         \
    } while (0)

// Ends a test that cannot run without a real GPU (the emulation of
// chapter 8 runs every kernel, so none should need it): the grader shows
// "skipped: needs a GPU" and counts the test neither passed nor failed.
#define SKIP_NEEDS_GPU_MSG "skipped: needs a GPU"
#define SKIP_NEEDS_GPU() ck_abort_msg(SKIP_NEEDS_GPU_MSG)

// A TCase with the project's timeout and Check tags (space-separated, such
// as "ch1" or "ch1 exercises": CK_INCLUDE_TAGS=ch1 runs only those).
TCase *tcase_new(const char *name, const char *tags);

// Loads the reference fixture tests/reference/<file>, or fails the running
// test with the loader's message and the command that writes the file:
// tests/reference/gen_chN_ex.py for chN_ex.*, gen_chN.py for any other
// chN_* (the naming the generators follow).
#include "fixture.h"
Fixture *fixture_open(const char *file);

// n draws of N(0, std^2) from a generator seeded with seed, in a new
// alloc_floats array (free it).
#include <stddef.h>
#include <stdint.h>
float *randn_floats(size_t n, float std, uint64_t seed);

// Removes path: a file, or a folder with everything in it.
void remove_tree(const char *path);

// Caps the data memory of the running test (forked: the runner keeps its
// own) at bytes, so that an allocation past it fails. False, and nothing
// done, under AddressSanitizer, which reserves terabytes of address space
// up front: no such limit can hold there.
#include <stdbool.h>
bool limit_data_memory(size_t bytes);

// Runs body(ctx) in a child process with its standard output in the file
// out_path and its standard error in err_path, and returns the child's
// exit status: body's value. A test runs a whole program so (train_main)
// without the program's exits and output ending the test.
int run_in_child(const char *out_path, const char *err_path,
                 int (*body)(void *), void *ctx);

// Tiny Shakespeare, for tests that need the real corpus (`make check`
// fetches it first).
#define SHAKESPEARE_PATH "data/tinyshakespeare.txt"

#endif
