#include "timer.h"

#include <math.h>
#include <time.h>

double time_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
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
