#include "threads.h"

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
