#include "timer.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

double time_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double time_thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double time_best_ms(void (*work)(void *), void *arg, int min_reps,
                    int max_reps, double min_seconds) {
    double best = INFINITY, t_end = time_now() + min_seconds;
    for (int rep = 0;
         rep < min_reps || (time_now() < t_end && rep < max_reps); rep++) {
        double t0 = time_now();
        work(arg);
        best = fmin(best, 1e3 * (time_now() - t0));
    }
    return best;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double time_median_ms(void (*work)(void *), void *arg, int reps) {
    assert(reps >= 1 && reps <= TIME_MEDIAN_MAX_REPS);
    double ms[TIME_MEDIAN_MAX_REPS];
    work(arg);                                   // the warm-up, not timed
    for (int rep = 0; rep < reps; rep++) {
        double t0 = time_thread_cpu();
        work(arg);
        ms[rep] = 1e3 * (time_thread_cpu() - t0);
    }
    qsort(ms, (size_t)reps, sizeof ms[0], cmp_double);
    return (ms[(reps - 1) / 2] + ms[reps / 2]) / 2;
}
