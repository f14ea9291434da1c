#define _GNU_SOURCE   // sched_getaffinity, before any header
#include "threads.h"

#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "error.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#ifndef NO_BLAS
#include <cblas.h>   // OpenBLAS's openblas_{get,set}_num_threads
#endif

ThreadCounts threads_set(int n) {
    ThreadCounts prev = {1, 1};
#ifdef _OPENMP
    prev.omp = omp_get_max_threads();
    omp_set_num_threads(n);
#endif
#ifndef NO_BLAS
    prev.blas = openblas_get_num_threads();
    openblas_set_num_threads(n);
#endif
    (void)n;
    return prev;
}

void threads_restore(ThreadCounts prev) {
#ifdef _OPENMP
    omp_set_num_threads(prev.omp);
#endif
#ifndef NO_BLAS
    openblas_set_num_threads(prev.blas);
#endif
    (void)prev;
}

static int cores_online(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int threads_cores(void) {
    int n = cores_online();
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0
        && CPU_COUNT(&set) < n)
        n = CPU_COUNT(&set);
    return n;
}

int threads_cap(int n, bool note) {
    int cores = threads_cores();
    if (n <= cores) return n;
    if (note) {
        // the machine's cores, or the share of them this process may use
        const char *where = cores == cores_online() ? "this machine has"
                                                    : "this process may run on";
        fprintf(stderr, "%s: note: --threads %d, but %s %d core%s: using "
                "%d\n", error_progname(), n, where, cores,
                cores == 1 ? "" : "s", cores);
    }
    return cores;
}
