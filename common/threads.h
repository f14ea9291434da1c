// threads.h - how many threads OpenMP's loops and OpenBLAS's GEMMs use.
//
// Both libraries start one thread per core by default. When an OpenMP loop
// and a multi-threaded GEMM run on the same two cores they get in each
// other's way, and small timings turn erratic; the demonstration timings of
// the chapters therefore run on one thread (threads_set(1)).
#ifndef COMMON_THREADS_H
#define COMMON_THREADS_H

typedef struct {
    int omp;    // OpenMP's thread count (1 without OpenMP)
    int blas;   // OpenBLAS's thread count (1 with NO_BLAS)
} ThreadCounts;

// Sets both to n threads and returns what they were.
ThreadCounts threads_set(int n);

// Puts back what threads_set returned.
void threads_restore(ThreadCounts prev);

#endif
