// autothreads.c - the controller behind --threads 0 (see autothreads.h).
#include "autothreads.h"

#include <stdio.h>
#include <string.h>

#include "threads.h"

//> autothreads
// The rules, in the order a run meets them:
// - The first step is left out (caches and threads warm up); the second,
//   on every core, is compared with steps on another count at once. After
//   that, the count in use costs the median of its last
//   AUTOTHREADS_RECENT steps.
// - A try runs up to TRY_STEPS steps on another count. A step that costs
//   more than ABORT times the count in use ends it there: on an idle
//   machine a losing try costs one slower step. Otherwise the median of
//   the try's steps decides: the new count stays if it is faster by more
//   than the noise (WIN). Two counts within a few tenths of each other
//   need that many steps to tell apart: a single step's time can be off
//   by half when another program runs.
// - Tries come back after INTERVAL_MIN seconds, and twice as long after
//   each try that lost, up to INTERVAL_MAX: a few tenths of a percent of
//   an idle run. When the steps' cost moves by more than MOVED either way
//   (a program started or ended beside the run), the next try is at once.
// - But a losing try may cost far more than a step: on a busy machine one
//   step of a small model on 2 threads took 30 times one on 1 thread. So
//   what the losing tries cost beyond the steps they replaced is held
//   under TRY_SHARE of the run's time: after a try that cost 0.5 s too
//   much, none for 25 s, whatever the rules above say.
enum { WARM_STEPS = 1, TRY_STEPS = AUTOTHREADS_RECENT };
static const double ABORT = 1.3;        // a try's step 30% slower: lost
static const double WIN = 0.97;         // a try's median 3% faster: won
static const double MOVED = 1.3;        // the load changed: try again now
static const double INTERVAL_MIN = 2.0, INTERVAL_MAX = 30.0;   // seconds
static const double TRY_SHARE = 0.02;
//< autothreads

static void set_threads(int n) { threads_set(n); }
void (*autothreads_set_hook)(int threads) = set_threads;

void autothreads_init(AutoThreads *a, int asked, int cores) {
    *a = (AutoThreads){.cores = cores > 1 ? cores : 1,
                       .adaptive = asked == 0 && cores > 1,
                       .interval = INTERVAL_MIN};
    a->threads = asked > 0 ? asked : a->cores;
    a->settled = !a->adaptive;
    autothreads_set_hook(a->threads);
}

void autothreads_from_flag(AutoThreads *a, int asked) {
    if (asked > 0) autothreads_init(a, threads_cap(asked, true), 0);
    else autothreads_init(a, 0, threads_cores());
}

// The median of n <= AUTOTHREADS_RECENT costs (of two: the smaller).
static double median(const double *x, int n) {
    double s[AUTOTHREADS_RECENT];
    for (int i = 0; i < n; i++) {   // insertion sort: at most 5
        int j = i;
        for (; j > 0 && s[j - 1] > x[i]; j--) s[j] = s[j - 1];
        s[j] = x[i];
    }
    return s[(n - 1) / 2];
}

// The next count to try, round robin over the neighbours of the count in
// use and the points halfway to 1 and to all cores (on two cores: the
// other count).
static int candidate(AutoThreads *a) {
    int n = a->threads, c[4] = {n - 1, n + 1, n / 2, (n + a->cores + 1) / 2};
    for (int k = 0; k < 4; k++) {
        int m = c[(a->next_candidate + k) % 4];
        if (m >= 1 && m <= a->cores && m != n) {
            a->next_candidate = (a->next_candidate + k + 1) % 4;
            return m;
        }
    }
    return n;
}

static void note(AutoThreads *a, double cost) {
    if (a->n_recent < AUTOTHREADS_RECENT) {
        a->recent[a->n_recent++] = cost;
        return;
    }
    for (int i = 1; i < AUTOTHREADS_RECENT; i++)
        a->recent[i - 1] = a->recent[i];
    a->recent[AUTOTHREADS_RECENT - 1] = cost;
}

static void end_probe(AutoThreads *a, bool won, double now) {
    int tried = a->probe;
    a->probe = 0;
    if (won) {
        a->was = a->threads;
        a->cost_was = now;
        a->cost_now = a->probe_cost;
        a->threads = tried;
        // the try's steps are the new count's recent ones
        memcpy(a->recent, a->tried, sizeof a->recent);
        a->n_recent = a->probe_steps;
        a->ref = a->probe_cost;
        a->interval = INTERVAL_MIN;      // and compared again soon
    } else {
        autothreads_set_hook(a->threads);
        a->ref = now;
        if (!a->settled) {               // the first decision: keep it
            a->was = tried;
            a->cost_was = a->probe_cost;
            a->cost_now = now;
        }
        a->interval = a->interval * 2 < INTERVAL_MAX ? a->interval * 2
                                                     : INTERVAL_MAX;
        double lost = a->probe_seconds - now * a->probe_work;
        if (lost > 0) a->earliest = a->clock + lost / TRY_SHARE;
    }
    a->next_probe = a->clock + a->interval;
}

bool autothreads_step(AutoThreads *a, double seconds, double work) {
    if (!a->adaptive || !(seconds > 0) || !(work > 0)) return false;
    a->steps++;
    a->clock += seconds;
    double cost = seconds / work;
    if (a->probe) {                      // a try's step
        a->tried[a->probe_steps++] = cost;
        a->probe_seconds += seconds;
        a->probe_work += work;
        double now = median(a->recent, a->n_recent);
        bool lost = cost > ABORT * now;
        if (!lost && a->probe_steps < TRY_STEPS) return false;
        a->probe_cost = lost ? cost : median(a->tried, a->probe_steps);
        bool wins = !lost && a->probe_cost < WIN * now;
        bool first = !a->settled;
        end_probe(a, wins, now);
        a->settled = true;
        a->first = first;
        if (wins && !first) a->changes++;
        return wins || first;
    }
    if (a->steps <= WARM_STEPS) return false;
    note(a, cost);
    // the first comparison as soon as one step was timed: a wrong count
    // can cost ten times a step
    if (a->n_recent < (a->settled ? AUTOTHREADS_RECENT : 1)) return false;
    double now = median(a->recent, a->n_recent);
    if (a->ref == 0) a->ref = now;
    bool moved = now > a->ref * MOVED || now * MOVED < a->ref;
    if (moved) a->interval = INTERVAL_MIN;
    if (!moved && a->settled && a->clock < a->next_probe) return false;
    if (a->clock < a->earliest) return false;
    a->probe = candidate(a);
    a->probe_seconds = a->probe_work = 0;
    a->probe_steps = 0;
    autothreads_set_hook(a->probe);
    return false;
}

void autothreads_describe(const AutoThreads *a, long step, char *buf,
                          size_t size) {
    if (a->was == 0) {   // fixed, or not compared yet
        snprintf(buf, size, "%d%s", a->threads, a->adaptive ? "" : " (fixed)");
        return;
    }
    char from[32] = "", how[48];
    if (!a->first) snprintf(from, sizeof from, " from step %ld", step);
    double ratio = a->cost_now > 0 ? a->cost_was / a->cost_now : 0;
    if (ratio < 1.05)   // a first try that lost by less than the noise
        snprintf(how, sizeof how, "about as fast");
    else
        snprintf(how, sizeof how, "%.1fx slower", ratio);
    snprintf(buf, size, "%d%s (%d thread%s ran %s%s)", a->threads, from,
             a->was, a->was == 1 ? "" : "s", how,
             a->was > a->threads && ratio >= 1.05 ? ": a busy machine" : "");
}
