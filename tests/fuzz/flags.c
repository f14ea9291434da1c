// The command-line parser (common/flags.c) through flags_parse_args,
// flags_parse without its exits: the input split at its NUL bytes is the
// argv after the program's name, over a table with a flag of every type.
// A value it accepts must be what the text says.
#include <math.h>
#include <stdbool.h>

#include "flags.h"
#include "fuzz_util.h"

enum { MAX_ARGS = 64 };
static const char DEFAULT_STR[] = "default";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int n_int = 1;
    uint64_t n_u64 = 2;
    float x = 0.5f;
    const char *str = DEFAULT_STR;
    bool on = false, on2 = true;
    const Flag flags[] = {
        {"batch", FLAG_INT, &n_int, "an int"},
        {"seed", FLAG_U64, &n_u64, "a uint64_t"},
        {"lr", FLAG_FLOAT, &x, "a float"},
        {"data", FLAG_STRING, &str, "a string"},
        {"quiet", FLAG_BOOL, &on, "a bool"},
        {"q", FLAG_BOOL, &on2, "another, whose name is a prefix"},
    };
    char *text = fuzz_cstr(data, size);
    char *argv[MAX_ARGS + 2] = {"fuzz"};
    int argc = 1;
    for (char *p = text; argc <= MAX_ARGS && p <= text + size;
         p += strlen(p) + 1)
        argv[argc++] = p;
    argv[argc] = NULL;
    (void)flags_peek(argc, argv, "batch");
    (void)flags_peek(argc, argv, "q");
    Error err;
    err.msg[0] = 0;
    int rc = flags_parse_args(argc, argv, flags, 6, &err);
    if (rc < -1 || rc > 1) fuzz_fail("flags_parse_args returned %d", rc);
    if (rc == -1 && (!err.msg[0] || strchr(err.msg, '\n')))
        fuzz_fail("an error without a one-line message");
    if (rc == 0) {
        if (!isfinite(x)) fuzz_fail("--lr took a value that is not finite");
        if (str != DEFAULT_STR
            && (str < text || str > text + size))
            fuzz_fail("--data points outside argv");
    }
    free(text);
    return 0;
}
