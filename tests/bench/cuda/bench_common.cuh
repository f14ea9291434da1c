// bench_common.cuh - what every kernel benchmark of this folder shares:
// its command line, the device line, random inputs, the comparison with
// the CPU, and the timing of one version at one block size.
//
// Each benchmark (layernorm_forward.cu, softmax_forward.cu, ...) holds
// several versions of one kernel, from a naive first one to the chapter's,
// and for each version and block size prints one line:
//
//   block  256   max err 1.2e-07 ok      0.0421 ms   1195.3 GB/s
//
// the error being max|got - want| / max|want| against the CPU function of
// chapters 2-5 (as the kernel checks' compare(), chapters/ch8_cuda/kcheck/,
// tolerance 1e-5), and the time the median of --repeats runs after a few
// warm-up runs, measured with CUDA events. It builds with nvcc for a GPU,
// and with the host compiler under the chapter's emulation (emu/emu.h),
// where the times are the emulation's and mean nothing; there `make
// check` runs `--small`.
#ifndef BENCH_COMMON_CUH
#define BENCH_COMMON_CUH

#include "cuda_rt.h"

#include <algorithm>
#include <functional>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

extern "C" {
#include "mem.h"
#include "rng.h"
}

// The block sizes each version is timed at, where it allows them.
static const int BENCH_BLOCKS[] = {32, 64, 128, 256, 512, 1024};
static const int BENCH_NBLOCKS = 6;
static const double BENCH_TOL = 1e-5;   // as the kernel checks' FP32_TOL

// What the command line asked for.
struct BenchOpts {
    bool small;           // --small: small odd sizes, few runs (make check)
    bool validate_only;   // --validate-only: no timing
    int repeats;          // --repeats N: timed runs per block size
    int warmup;           // untimed runs before them
    int max_block;        // --max-block N: no larger blocks than this
    int failed;           // versions x block sizes that failed so far
    double tol;           // a version's largest error: BENCH_TOL unless
                          // the benchmark says why another
};

// Parses --small, --validate-only, --repeats N, --max-block N and --help;
// anything else is a usage error (exit 2), as the chapter programs do.
static inline BenchOpts bench_parse(int argc, char **argv,
                                    const char *what) {
    BenchOpts o = {false, false, 50, 5, 1024, 0, BENCH_TOL};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--small")) {
            o.small = true;
        } else if (!strcmp(argv[i], "--validate-only")) {
            o.validate_only = true;
        } else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
            o.repeats = atoi(argv[++i]);   // (--small overrides it)
            if (o.repeats < 1) {
                fprintf(stderr, "%s: --repeats must be at least 1\n",
                        argv[0]);
                exit(2);
            }
        } else if (!strcmp(argv[i], "--max-block") && i + 1 < argc) {
            o.max_block = atoi(argv[++i]);
            if (o.max_block < 32) {
                fprintf(stderr, "%s: --max-block must be at least 32\n",
                        argv[0]);
                exit(2);
            }
        } else if (!strcmp(argv[i], "--help")) {
            printf("%s: %s\n"
                   "  --small          small odd sizes, one timed run "
                   "(what make check runs, emulated)\n"
                   "  --validate-only  check every version, time none\n"
                   "  --repeats N      timed runs per block size "
                   "(default: 50; the median is printed)\n"
                   "  --max-block N    skip the block sizes above N (the "
                   "emulation under\n"
                   "                   ThreadSanitizer starts a host thread "
                   "per GPU thread)\n",
                   argv[0], what);
            exit(0);
        } else {
            fprintf(stderr, "%s: unknown flag '%s' (try --help)\n", argv[0],
                    argv[i]);
            exit(2);
        }
    }
    if (o.small) {   // the timing code runs, once, and no more
        o.warmup = 1;
        o.repeats = 1;
    }
    return o;
}

// The first lines: what is measured, and on what. Without a GPU (the
// nvcc build on a machine that has none) it says so and exits with 1.
static inline void bench_begin(const char *what) {
    char dev[200];
    if (!cuda_device_present(dev, sizeof dev)) {
        fprintf(stderr, "no GPU here (%s): the emulated build of this "
                "benchmark (make kbench-emu) checks its versions\n", dev);
        exit(1);
    }
    cuda_device_describe(dev, sizeof dev);
    printf("%s\ndevice: %s\n", what, dev);
#ifndef __CUDACC__
    printf("(emulated: the errors are real, the times are the host's and "
           "say nothing of a GPU)\n");
#endif
}

// The exit status: 1 when any version failed its check.
static inline int bench_end(const BenchOpts &o) {
    if (o.failed) printf("%d check(s) FAILED\n", o.failed);
    else printf("every version agrees with the CPU\n");
    return o.failed ? 1 : 0;
}

// n normal(mean, std) floats on the host (free()).
static inline float *bench_randn(Rng *rng, size_t n, float mean, float std) {
    float *p = (float *)xmalloc((n ? n : 1) * sizeof *p);
    rng_normal_fill(rng, p, n, mean, std);
    return p;
}

// A device copy of n host floats.
static inline float *bench_to_device(const float *h, size_t n) {
    float *d = cuda_alloc_floats(n);
    cuda_upload(d, h, n);
    return d;
}

// Fills n device floats with NaN bytes, so that whatever a version leaves
// unwritten shows in its check (and not the previous version's result).
static inline void bench_poison(float *dev, size_t n) {
    CUDA_CHECK(cudaMemset(dev, 0xff, n * sizeof *dev));
}

// max|got - want| / max|want| of two host arrays; a NaN in got gives NaN.
static inline double bench_rel_err_host(const float *got,
                                        const float *want, size_t n) {
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (diff == diff && !(d <= diff)) diff = d;   // a NaN sticks
        if (fabs(want[i]) > scale) scale = fabs(want[i]);
    }
    return diff / (scale > 0 ? scale : 1.0);
}

// The same for a device array against a host one.
static inline double bench_rel_err(const float *got_dev,
                                   const float *want, size_t n) {
    float *got = (float *)xmalloc((n ? n : 1) * sizeof *got);
    cuda_download(got, got_dev, n);
    double e = bench_rel_err_host(got, want, n);
    free(got);
    return e;
}

// The larger of two errors, NaN winning (a plain max would drop it).
static inline double bench_worse(double a, double b) {
    return (a != a || b != b) ? NAN : (a > b ? a : b);
}

// The median time in ms of run(), over o.repeats runs after o.warmup
// untimed ones, each between two events.
static inline double bench_time(const BenchOpts &o,
                                const std::function<void()> &run) {
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < o.warmup; i++) run();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> ms(o.repeats);
    for (int i = 0; i < o.repeats; i++) {
        CUDA_CHECK(cudaEventRecord(start));
        run();
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        CUDA_CHECK(cudaEventElapsedTime(&ms[i], start, stop));
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    std::sort(ms.begin(), ms.end());
    int n = o.repeats;
    return n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
}

// One version at each of its block sizes: prepare() poisons the outputs,
// run(block) runs the version, check() returns its error against the CPU,
// and then (unless --validate-only) run(block) is timed. bytes: what the
// kernel must move at least (0: no GB/s, for a compute-bound kernel).
// blocks == NULL: the version picks its own block size (the chapter's
// public function), run(0) once.
static inline void bench_version(BenchOpts &o, const char *name,
                                 const int *blocks, int nblocks,
                                 double bytes,
                                 const std::function<void()> &prepare,
                                 const std::function<void(int)> &run,
                                 const std::function<double()> &check) {
    printf("%s\n", name);
    int own = 0;
    if (!blocks) blocks = &own, nblocks = 1;
    for (int b = 0; b < nblocks; b++) {
        if (blocks[b] > o.max_block) continue;
        prepare();
        run(blocks[b]);
        CUDA_CHECK(cudaDeviceSynchronize());
        double err = check();
        bool ok = err <= o.tol;   // false for NaN
        if (!ok) o.failed++;
        if (blocks[b]) printf("  block %4d", blocks[b]);
        else printf("  block  own");
        printf("   max err %.1e %-6s", err, ok ? "ok" : "FAILED");
        if (!o.validate_only) {
            double ms = bench_time(o, [&] { run(blocks[b]); });
            printf("  %9.4f ms", ms);
            if (bytes > 0) printf("  %8.1f GB/s", bytes / (ms * 1e-3) / 1e9);
        }
        printf("\n");
        fflush(stdout);
    }
}

#endif
