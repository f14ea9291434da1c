// Tests of --threads 0's controller (chapters/ch6_training/autothreads.c)
// on a made-up machine: each step's time comes from a table of what one
// step costs at each thread count under each load, times a noise factor.
// The controller sets its counts through a hook here, so the tests run in
// microseconds and the same way on every machine.
//
// The wrong versions they catch: a controller that never tries another
// count (stays on 2 threads on a busy machine), one that tries too often
// or too long (an idle run pays more than 3%), one that switches on noise,
// one that never comes back when the load ends, one that ignores a count
// given with --threads N.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "autothreads.h"
#include "check_util.h"
#include "rng.h"

static int sim_threads, sim_sets;

static void sim_set(int n) {
    sim_threads = n;
    sim_sets++;
}

// One phase of a run: from step `from` on (0-based), a step at n threads
// takes cost[n] seconds (n <= 8), times a factor in [1 - noise, 1 + noise].
typedef struct {
    long from;
    double cost[9];
} Phase;

typedef struct {
    double seconds;     // the run's time
    double best;        // the time of the best fixed count of each phase
    long at[9];         // steps run at each count
    long changes;       // reported changes after the first decision
    long settled_at;    // the step whose end reported the first decision
    int threads[4096];  // the count of each step (the first 4096)
    char said[128];     // the last description
} Sim;

static void simulate(AutoThreads *a, const Phase *ph, int n_ph, int cores,
                     long steps, double noise, Sim *s) {
    memset(s, 0, sizeof *s);
    s->settled_at = -1;
    Rng r;
    rng_seed(&r, 7);
    int p = 0;
    for (long i = 0; i < steps; i++) {
        while (p + 1 < n_ph && i >= ph[p + 1].from) p++;
        double f = 1 + noise * (2 * rng_uniform(&r) - 1);
        double best = INFINITY;
        for (int n = 1; n <= cores; n++)
            if (ph[p].cost[n] < best) best = ph[p].cost[n];
        int n = sim_threads;
        ck_assert(n >= 1 && n <= cores);
        if (i < 4096) s->threads[i] = n;
        s->at[n]++;
        double dt = ph[p].cost[n] * f;
        s->seconds += dt;
        s->best += best * f;
        if (autothreads_step(a, dt, 2048)) {
            autothreads_describe(a, i + 1, s->said, sizeof s->said);
            if (s->settled_at < 0) s->settled_at = i + 1;
            else s->changes++;
        }
    }
}

static void start(AutoThreads *a, int asked, int cores) {
    autothreads_set_hook = sim_set;
    sim_sets = 0;
    autothreads_init(a, asked, cores);
}

// The 2-core machine of chapter 6's measurements: idle, 2 threads run a
// step 1.6x as fast as 1; beside a busy process, 1 thread is 2.4x as fast
// as 2.
static const Phase IDLE = {0, {0, 0.26, 0.16}};
static const Phase BUSY = {0, {0, 0.18, 0.43}};

// (a static Sim: its trace is too large for a test's stack under ASan)
static Sim sim;

START_TEST(idle_keeps_every_core) {
    AutoThreads a;
    start(&a, 0, 2);
    ck_assert(a.adaptive);
    ck_assert_int_eq(sim_threads, 2);   // it starts on every core
    // five minutes of the default run, steps 5% apart from each other
    simulate(&a, &IDLE, 1, 2, 1900, 0.05, &sim);
    ck_assert_msg(sim.seconds <= 1.03 * sim.best, "idle: %.1f s against "
                  "%.1f s on 2 threads throughout", sim.seconds, sim.best);
    ck_assert_int_eq(a.threads, 2);
    ck_assert_int_eq(sim.changes, 0);
    ck_assert_msg(sim.settled_at > 0 && sim.settled_at <= 4, "settled at "
                  "step %ld", sim.settled_at);
    double ratio;   // 1.6x, as the steps compared measured it
    ck_assert_msg(sscanf(sim.said, "2 (1 thread ran %lfx slower)", &ratio)
                  == 1, "said: %s", sim.said);
    ck_assert(ratio > 1.6 * 0.95 / 1.05 - 0.05 && ratio < 1.6 * 1.05 / 0.95);
    // the tries come back now and then, and less often the longer they
    // lose: some steps ran on 1 thread, spread over the run
    ck_assert(sim.at[1] >= 5 && sim.at[1] <= 20);
    long late = 0;
    for (long i = 1000; i < 1900; i++) late += sim.threads[i] == 1;
    ck_assert_msg(late >= 1, "no try in the second half of the run");
}
END_TEST

START_TEST(busy_machine_moves_to_one_thread) {
    AutoThreads a;
    start(&a, 0, 2);
    simulate(&a, &BUSY, 1, 2, 1000, 0.2, &sim);
    // (a winning try runs its five steps, on the faster count)
    ck_assert_msg(sim.settled_at > 0 && sim.settled_at <= 7, "settled at "
                  "step %ld", sim.settled_at);
    for (long i = 2; i < sim.settled_at; i++)
        ck_assert_int_eq(sim.threads[i], 1);
    for (long i = sim.settled_at; i < sim.settled_at + 10; i++)
        ck_assert_int_eq(sim.threads[i], 1);
    ck_assert_msg(sim.seconds <= 1.10 * sim.best, "busy: %.1f s against "
                  "%.1f s on 1 thread throughout", sim.seconds, sim.best);
    ck_assert_int_eq(a.threads, 1);
    ck_assert_int_eq(sim.changes, 0);
    // (2.4x, as the steps compared measured it, 20% apart)
    double ratio;
    ck_assert_msg(sscanf(sim.said, "1 (2 threads ran %lfx slower: a busy "
                         "machine)", &ratio) == 1, "said: %s", sim.said);
    ck_assert(ratio > 2.4 * 0.8 / 1.2 && ratio < 2.4 * 1.2 / 0.8);
}
END_TEST

// A busy process starts at step 600 and ends at step 1200.
START_TEST(follows_the_load_as_it_changes) {
    Phase ph[3] = {IDLE, BUSY, IDLE};
    ph[1].from = 600, ph[2].from = 1200;
    AutoThreads a;
    start(&a, 0, 2);
    simulate(&a, ph, 3, 2, 2000, 0.05, &sim);
    // the change is seen within a few steps: the steps' cost moved
    long busy_at = -1, idle_at = -1;
    for (long i = 600; i < 1200 && busy_at < 0; i++)
        if (sim.threads[i] == 1 && sim.threads[i + 1] == 1
            && sim.threads[i + 2] == 1)
            busy_at = i;
    ck_assert_msg(busy_at >= 0 && busy_at <= 606, "on 1 thread from step "
                  "%ld", busy_at);
    // the end of it is not (1 thread's cost hardly moves), so it waits
    // for the next try: at most 30 s of steps away
    for (long i = 1200; i < 2000 && idle_at < 0; i++)
        if (sim.threads[i] == 2 && sim.threads[i + 1] == 2
            && sim.threads[i + 2] == 2)
            idle_at = i;
    ck_assert_msg(idle_at >= 0 && (idle_at - 1200) * 0.18 <= 32, "back on 2 "
                  "threads from step %ld", idle_at);
    ck_assert_int_eq(sim.changes, 2);
    ck_assert_msg(sim.seconds <= 1.10 * sim.best, "%.1f s against %.1f s at "
                  "each phase's best count", sim.seconds, sim.best);
    ck_assert_int_eq(a.threads, 2);
    ck_assert(strstr(sim.said, "2 from step ") == sim.said);
}
END_TEST

// Steps 20% apart from each other where 1 thread is 8% slower than 2:
// too close to call. Either count is good enough; what must not happen is
// a switch back and forth on every lucky step, whose tries cost time.
START_TEST(noise_does_not_move_it) {
    Phase close = {0, {0, 0.173, 0.16}};
    AutoThreads a;
    start(&a, 0, 2);
    simulate(&a, &close, 1, 2, 3000, 0.2, &sim);
    ck_assert_msg(sim.seconds <= 1.04 * sim.best, "%.1f s against %.1f s "
                  "on 2 threads throughout", sim.seconds, sim.best);
    ck_assert_msg(sim.changes <= 10, "%ld changes in 3000 steps",
                  sim.changes);
}
END_TEST

// A busy spell of 300 steps, then 2 threads only 1.17x as fast as 1 (a
// virtual machine whose second core is shared), steps 25% apart: a
// controller that needs a margin wider than the gap to move back, or
// that judges on one or two steps, stays on 1 thread, or keeps leaving 2
// after a few unlucky steps.
START_TEST(a_close_call_finds_the_faster) {
    Phase ph[2] = {BUSY, {300, {0, 0.187, 0.16}}};
    AutoThreads a;
    start(&a, 0, 2);
    simulate(&a, ph, 2, 2, 3300, 0.25, &sim);
    long on2 = 0;
    for (long i = 300; i < 3300 && i < 4096; i++) on2 += sim.threads[i] == 2;
    ck_assert_msg(on2 >= 0.85 * 3000, "%ld of the last 3000 steps on 2 "
                  "threads", on2);
    ck_assert_msg(sim.seconds <= 1.05 * sim.best, "%.1f s against %.1f s "
                  "at each phase's best", sim.seconds, sim.best);
}
END_TEST

// Eight cores, four of them busy: the best count is 4, several steps of
// the search away from 8.
START_TEST(many_cores_find_the_best_count) {
    Phase ph = {0, {0}};
    for (int n = 1; n <= 8; n++)
        ph.cost[n] = n <= 4 ? 0.6 / n : 0.15 * (1 + 0.5 * (n - 4));
    AutoThreads a;
    start(&a, 0, 8);
    ck_assert_int_eq(sim_threads, 8);
    simulate(&a, &ph, 1, 8, 2000, 0.05, &sim);
    ck_assert_int_eq(a.threads, 4);
    ck_assert_msg(sim.seconds <= 1.10 * sim.best, "%.1f s against %.1f s on "
                  "4 threads", sim.seconds, sim.best);
}
END_TEST

START_TEST(a_count_given_stays) {
    AutoThreads a;
    start(&a, 2, 2);
    ck_assert(!a.adaptive);
    ck_assert_int_eq(sim_threads, 2);
    simulate(&a, &BUSY, 1, 2, 200, 0.05, &sim);
    ck_assert_int_eq(sim_sets, 1);
    ck_assert_int_eq(sim.at[2], 200);
    ck_assert_int_eq(sim.settled_at, -1);
    char buf[64];
    autothreads_describe(&a, 200, buf, sizeof buf);
    ck_assert_str_eq(buf, "2 (fixed)");
    // one core: nothing to choose
    start(&a, 0, 1);
    ck_assert(!a.adaptive);
    ck_assert_int_eq(sim_threads, 1);
}
END_TEST

// The programs' hook (threads_set), put back after each test: the runner
// may run the suites in one process.
static void (*real_hook)(int);
static void keep_the_hook(void) { real_hook = autothreads_set_hook; }
static void put_back_the_hook(void) { autothreads_set_hook = real_hook; }

Suite *ch6_threads_suite(void) {
    Suite *s = suite_create("ch6_threads");
    TCase *tc = tcase_new("threads", "ch6");
    tcase_add_checked_fixture(tc, keep_the_hook, put_back_the_hook);
    tcase_add_test(tc, idle_keeps_every_core);
    tcase_add_test(tc, busy_machine_moves_to_one_thread);
    tcase_add_test(tc, follows_the_load_as_it_changes);
    tcase_add_test(tc, noise_does_not_move_it);
    tcase_add_test(tc, a_close_call_finds_the_faster);
    tcase_add_test(tc, many_cores_find_the_best_count);
    tcase_add_test(tc, a_count_given_stays);
    suite_add_tcase(s, tc);
    return s;
}
