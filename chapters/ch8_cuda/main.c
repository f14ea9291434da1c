// ch8 - chapter 6's GPT on the GPU. Without a GPU it says so and checks
// every kernel against the CPU under the host emulation instead.
//
//   ./ch8 --check        every kernel against its CPU function, on the GPU
//   ./ch8 --emulate      the same under the emulation (no GPU needed)
#include <stdbool.h>
#include <stdio.h>

#include "error.h"
#include "flags.h"
#include "kcheck.cuh"
#include "runtime.cuh"

// The emulated build of the kernels, linked into this program beside the
// GPU's with every name given the suffix _emu (see the Makefile).
int kcheck_all_emu(bool verbose);
void cuda_device_describe_emu(char *buf, size_t size);

static int self_check(bool emulated) {
    char dev[160];
    if (emulated) cuda_device_describe_emu(dev, sizeof dev);
    else cuda_device_describe(dev, sizeof dev);
    printf("kernel self-check on %s\n", dev);
    int failed = emulated ? kcheck_all_emu(true) : kcheck_all(true);
    printf("%s\n", failed ? "self-check FAILED" : "every kernel agrees "
           "with the CPU");
    return failed ? 1 : 0;
}

int main(int argc, char **argv) {
    bool check = false, emulate = false;
    Flag flags[] = {
        {"check", FLAG_BOOL, &check,
         "check every kernel against its CPU function on the GPU"},
        {"emulate", FLAG_BOOL, &emulate,
         "the same check under the host emulation (no GPU needed)"},
    };
    flags_parse(argc, argv, flags, 2, "Chapter 8: the GPU. Checks every "
                "kernel of the chapter against the CPU function it "
                "replaces.");
    char why[160];
    if (!emulate && !cuda_device_present(why, sizeof why)) {
        printf("no GPU here (%s): checking the kernels under the host "
               "emulation instead\n", why);
        emulate = true;
    }
    return self_check(emulate);
}
