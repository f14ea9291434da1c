// Tests of the chapter 8 exercises: each kernel against the CPU function
// of chapters 2 to 4 it replaces (the matrix product against its
// definition, summed in double), at sizes that are not multiples of any
// block size, run under the host emulation (no GPU needed).
//
// Each kernel runs in four orders of its block's threads (emu_schedule.h):
// the emulation's default (all at once with host threads, and in a
// shuffled order when a block's threads are fibers: emu.h), then one at a
// time lowest first, highest first and shuffled. A kernel that lacks a
// __syncthreads may pass some of them, and fails at least one every time.
// All four run before the verdict: a result that is right in one order
// and wrong in another, or wrong differently in each, depends on which
// thread ran first, and the message names a missing __syncthreads; one
// wrong the same way in every order is not a race, and is not called one.
// Each output array is
// followed on the device by a guard of GUARD floats that must stay as it
// was: a thread of the last block that writes past the end fails.
//
// The wrong versions each exercise's tests are meant to catch (each was
// tried as a change of the reference solution, graded with `make check
// EXERCISES=<that copy>`, and scored below full marks):
//   8.1  no bounds check in the kernel; a grid of n / threads blocks (the
//        tail left out); the index without blockIdx; the exact (erf)
//        GELU; a launch when n = 0.
//   8.2  no max subtracted; the max started at 0 instead of -inf; the
//        __syncthreads between the levels of the tree, the one before it
//        or the one after reading the result left out; one element per
//        thread (no stride over the row); a tree over D rather than over
//        the block's partials.
//   8.3  either __syncthreads left out; no zero fill past the edges; no
//        bounds check on the store; a grid of M / 16 by N / 16 blocks;
//        a and b tiles loaded with row and column swapped.
//   8.4  __shfl_down_sync (only lane 0 holds the sum) used as if every
//        lane had it; a lane stride of 1 (only the first 32 values); no
//        check of the last block's rows; the one-pass variance; the
//        variance divided by C - 1; a NULL bias read.
//   8.5  the __syncthreads left out; dst = instead of +=; a chunk's end
//        not cut at N; a lane stride of 1 (rows counted twice); no column
//        check; chunks = N / rows (the short last chunk left out); every
//        thread adding into dst with atomicAdd.
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "activation.h"
#include "attention.h"
#include "ch8_exercises.h"
#include "check_util.h"
#include "emu/emu_schedule.h"
#include "layernorm.h"
#include "linear.h"
#include "mem.h"
#include "runtime.cuh"

// Floats after each output array: more than any block's extra threads.
#define GUARD 1024
#define GUARD_VALUE 12345.0f
// The relative tolerance: max |got - want| / max |want| (as kcheck.cuh).
#define TOL 1e-5

static const EmuSchedule ORDERS[] = {EMU_CONCURRENT, EMU_SERIAL_FORWARD,
                                     EMU_SERIAL_REVERSE,
                                     EMU_SERIAL_SHUFFLED};
#define N_ORDERS ((int)(sizeof ORDERS / sizeof ORDERS[0]))

// Which order the threads ran in, for messages.
static const char *order_words(EmuSchedule o) {
    switch (o) {
    case EMU_SERIAL_FORWARD: return "one at a time, lowest first";
    case EMU_SERIAL_REVERSE: return "one at a time, highest first";
    case EMU_SERIAL_SHUFFLED: return "one at a time, shuffled";
    default: return "in the default order";
    }
}

// A device copy of n host floats (NULL for n = 0).
static float *to_device(const float *h, size_t n) {
    float *d = cuda_alloc_floats(n);
    cuda_upload(d, h, n);
    return d;
}

// A device output of n floats, NaN until written (so that an element
// never written fails), followed by the guard.
static float *device_output(size_t n) {
    float *h = alloc_floats(n + GUARD);
    for (size_t i = 0; i < n; i++) h[i] = NAN;
    for (size_t i = n; i < n + GUARD; i++) h[i] = GUARD_VALUE;
    float *d = to_device(h, n + GUARD);
    free(h);
    return d;
}

// What one call gave in each order of the threads: whether it was right,
// the first failure's message, and a hash of the outputs' bits. The
// orders run in turn, all of them, before the verdict: a result that
// changes with the order is a race, where one that is wrong the same way
// in every order is a mistake of the arithmetic or the indexing.
typedef struct {
    bool ran[N_ORDERS], failed[N_ORDERS];
    uint64_t bits[N_ORDERS];   // FNV-1a of every output, in its order
    int first;                 // the first order that failed, or -1
    char msg[600];             // its first message
} Orders;

static Orders orders_new(void) {
    Orders r;
    memset(&r, 0, sizeof r);
    r.first = -1;
    for (int o = 0; o < N_ORDERS; o++) r.bits[o] = 1469598103934665603u;
    return r;
}

// Records a failure of order o (its first message is kept).
static void orders_fail(Orders *r, int o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void orders_fail(Orders *r, int o, const char *fmt, ...) {
    r->ran[o] = true;
    if (r->failed[o]) return;
    r->failed[o] = true;
    if (r->first >= 0) return;
    r->first = o;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
}

// Checks the n floats at dev against want, within TOL, in order o, and
// (when guard) that the guard after them is untouched; adds their bits
// to the order's hash. what: the call and its sizes.
static void check_output(Orders *r, int o, const char *what,
                         const float *dev, const float *want, size_t n,
                         bool guard) {
    float *got = alloc_floats(n + GUARD);
    cuda_download(got, dev, n + GUARD);
    r->ran[o] = true;
    const unsigned char *b = (const unsigned char *)got;
    for (size_t i = 0; i < n * sizeof *got; i++)
        r->bits[o] = (r->bits[o] ^ b[i]) * 1099511628211u;
    double diff = 0, scale = 0;
    size_t worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (!(d <= diff)) diff = d, worst = i;   // a NaN is the worst
        if (fabs(want[i]) > scale) scale = fabs(want[i]);
        if (isnan(d)) break;
    }
    double err = diff / (scale > 0 ? scale : 1);
    float g = n ? got[worst] : 0;
    size_t stray = n;
    while (stray < n + GUARD && got[stray] == GUARD_VALUE) stray++;
    if (!(err <= TOL)) {
        // what the differing elements share (a factor, an offset, a sign)
        char hint[200] = "";
        double *w = malloc(n * sizeof *w);
        for (size_t i = 0; i < n; i++) w[i] = want[i];
        if (!tensor_diff_hint(got, w, n, TOL * (scale > 0 ? scale : 1), 0,
                              hint + 2, sizeof hint - 2))
            hint[2] = 0;
        else
            hint[0] = ';', hint[1] = ' ';
        free(w);
        orders_fail(r, o, "%s, threads %s: [%zu] is %g, want %g (error "
                    "%.2g > %.0g)%s", what, order_words(ORDERS[o]), worst,
                    g, n ? want[worst] : 0, err, TOL, hint);
    }
    if (guard && stray != n + GUARD)
        orders_fail(r, o, "%s, threads %s: wrote past the end, at [%zu] of "
                    "%zu floats (no bounds check in the last block?)", what,
                    order_words(ORDERS[o]), stray, n);
    free(got);
}

// The verdict over the orders that ran. A result that is right in one
// order and wrong in another, or wrong differently in each, depends on
// which thread ran first: a barrier is missing. (Every failure says so,
// whichever order failed first.)
static void orders_verdict(const Orders *r) {
    if (r->first < 0) return;
    char right[200] = "";
    bool differ = false;
    int last = -1;
    for (int o = 0; o < N_ORDERS; o++) {
        if (!r->ran[o]) continue;
        if (!r->failed[o])
            snprintf(right + strlen(right), sizeof right - strlen(right),
                     "%s%s", right[0] ? "; and " : "",
                     order_words(ORDERS[o]));
        if (last >= 0 && r->bits[o] != r->bits[last]) differ = true;
        last = o;
    }
    if (right[0])
        ck_abort_msg("%s. Right with the threads %s: a result that changes "
                     "with the order the threads run in means a missing "
                     "__syncthreads (a thread read shared memory before "
                     "another wrote it, or after another overwrote it)",
                     r->msg, right);
    if (differ)
        ck_abort_msg("%s. Wrong in every order of the threads, and "
                     "differently in each: a result that changes with the "
                     "order the threads run in means a missing "
                     "__syncthreads (a thread read shared memory before "
                     "another wrote it, or after another overwrote it)",
                     r->msg);
    ck_abort_msg("%s (the same in every order of the threads)", r->msg);
}

// n draws of N(mean, std^2) from seed.
static float *randn_shifted(size_t n, float mean, float std, uint64_t seed) {
    float *p = randn_floats(n, std, seed);
    for (size_t i = 0; i < n; i++) p[i] += mean;
    return p;
}

// ---- 8.1 GELU -----------------------------------------------------------------

// ex_gelu_forward_cuda on n normal values against chapter 3's tanh GELU;
// the guard after out is checked only when check_guard (the second test:
// the first gives the points for the values).
static void gelu_case(size_t n, bool check_guard, uint64_t seed) {
    float *x = randn_floats(n, 2.0f, seed), *want = alloc_floats(n + 1);
    // the scale of the comparison: gelu(3) ~ 3. (Alone, a value in the
    // negative tail would be compared with itself: there the textbook
    // 0.5 x (1 + tanh u) cancels a few digits, harmlessly.)
    x[0] = 3.0f;
    gelu_forward(want, x, GELU_TANH, n);
    float *d_x = to_device(x, n);
    char what[64];
    snprintf(what, sizeof what, "ex_gelu_forward_cuda n=%zu", n);
    Orders r = orders_new();
    for (int o = 0; o < N_ORDERS; o += check_guard ? 1 : 2) {
        emu_set_schedule(ORDERS[o], 7 + o);
        float *d_y = device_output(n);
        ex_gelu_forward_cuda(d_y, d_x, n);
        check_output(&r, o, what, d_y, want, n, check_guard);
        cuda_free(d_y);
    }
    emu_set_schedule(EMU_CONCURRENT, 0);
    cuda_free(d_x);
    free(x), free(want);
    orders_verdict(&r);
}

START_TEST(ex8_1_matches_chapter_3) {
    // 0 and +-1 by hand first: gelu(1) = 0.5 (1 + tanh(sqrt(2/pi) 1.044715))
    const float x[4] = {0, 1, -1, 10};
    const double want[4] = {0, 0.8411919906082768, -0.15880800939172324,
                            10};
    float *d_x = to_device(x, 4), *d_y = device_output(4), y[4];
    ex_gelu_forward_cuda(d_y, d_x, 4);
    cuda_download(y, d_y, 4);
    ck_assert_close("ex_gelu_forward_cuda(0, 1, -1, 10) (the tanh form)", y,
                    want, 4, 1e-6, 1e-6);
    cuda_free(d_x), cuda_free(d_y);
    gelu_case(1, false, 1);
    gelu_case(1000, false, 2);
    gelu_case(4099, false, 3);
}
END_TEST

START_TEST(ex8_1_last_block) {
    // n = 0 launches nothing; then sizes that end inside a block
    ex_gelu_forward_cuda(NULL, NULL, 0);
    gelu_case(1, true, 4);
    gelu_case(257, true, 5);
    gelu_case(4099, true, 6);
}
END_TEST

TCase *ex8_1_tcase(void) {
    TCase *tc = tcase_new("ex8.1", "ch8 exercises");
    tcase_add_test(tc, ex8_1_matches_chapter_3);
    tcase_add_test(tc, ex8_1_last_block);
    return tc;
}

// ---- 8.2 softmax --------------------------------------------------------------

// ex_softmax_forward_cuda on x (N, D) against chapter 2's softmax_forward,
// in every order.
static void softmax_case(const char *label, const float *x, int N, int D) {
    size_t n = (size_t)N * D;
    float *want = alloc_floats(n);
    softmax_forward(want, x, N, D);
    float *d_x = to_device(x, n);
    char what[96];
    snprintf(what, sizeof what, "ex_softmax_forward_cuda N=%d D=%d%s", N, D,
             label);
    Orders r = orders_new();
    for (int o = 0; o < N_ORDERS; o++) {
        emu_set_schedule(ORDERS[o], 11 + o);
        float *d_y = device_output(n);
        ex_softmax_forward_cuda(d_y, d_x, N, D);
        check_output(&r, o, what, d_y, want, n, true);
        cuda_free(d_y);
    }
    emu_set_schedule(EMU_CONCURRENT, 0);
    cuda_free(d_x);
    free(want);
    orders_verdict(&r);
}

START_TEST(ex8_2_matches_chapter_2) {
    // D of one, fewer than a block, not a power of two, many blocks' worth
    static const int SIZES[][2] = {{3, 1}, {4, 37}, {5, 200}, {2, 777},
                                   {2, 1500}};
    for (size_t k = 0; k < sizeof SIZES / sizeof *SIZES; k++) {
        int N = SIZES[k][0], D = SIZES[k][1];
        float *x = randn_floats((size_t)N * D, 3.0f, 20 + k);
        softmax_case("", x, N, D);
        free(x);
    }
}
END_TEST

START_TEST(ex8_2_extreme_rows) {
    // Row 0 near 1000 (exp overflows without the max), row 1 near -1000
    // (the max started at 0 underflows every exp to 0), row 2 with its
    // maximum, 120 above the rest, in the LAST element (a reduction that
    // drops the tail takes a max 120 too small: exp(120) overflows), row
    // 3 all equal (1/D each).
    const int N = 4, D = 777;
    float *x = randn_floats((size_t)N * D, 1.0f, 30);
    for (int i = 0; i < D; i++) {
        x[i] += 1000.0f;
        x[D + i] -= 1000.0f;
        x[3 * D + i] = 2.5f;
    }
    x[3 * D - 1] = 130.0f;
    softmax_case(" (logits near 1000 and -1000, a max at the end)", x, N, D);
    free(x);
}
END_TEST

TCase *ex8_2_tcase(void) {
    TCase *tc = tcase_new("ex8.2", "ch8 exercises");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ex8_2_matches_chapter_2);
    tcase_add_test(tc, ex8_2_extreme_rows);
    return tc;
}

// ---- 8.3 the tiled matrix product ----------------------------------------------

// ex_matmul_cuda on random a (M, K), b (K, N) against the sums in double.
static void matmul_case(int M, int N, int K, uint64_t seed) {
    float *a = randn_floats((size_t)M * K, 1.0f, seed);
    float *b = randn_floats((size_t)K * N, 1.0f, seed + 100);
    float *want = alloc_floats((size_t)M * N);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int k = 0; k < K; k++)
                s += (double)a[(size_t)i * K + k] * b[(size_t)k * N + j];
            want[(size_t)i * N + j] = (float)s;
        }
    float *d_a = to_device(a, (size_t)M * K), *d_b = to_device(b, (size_t)K * N);
    char what[64];
    snprintf(what, sizeof what, "ex_matmul_cuda M=%d N=%d K=%d", M, N, K);
    Orders r = orders_new();
    for (int o = 0; o < N_ORDERS; o++) {
        emu_set_schedule(ORDERS[o], 40 + o);
        float *d_c = device_output((size_t)M * N);
        ex_matmul_cuda(d_c, d_a, d_b, M, N, K);
        check_output(&r, o, what, d_c, want, (size_t)M * N, true);
        cuda_free(d_c);
    }
    emu_set_schedule(EMU_CONCURRENT, 0);
    cuda_free(d_a), cuda_free(d_b);
    free(a), free(b), free(want);
    orders_verdict(&r);
}

START_TEST(ex8_3_whole_tiles) {
    // sizes in whole tiles, K over several of them
    matmul_case(16, 16, 16, 50);
    matmul_case(32, 48, 64, 51);
}
END_TEST

START_TEST(ex8_3_ragged_edges) {
    matmul_case(1, 1, 1, 60);
    matmul_case(17, 33, 47, 61);    // every edge ragged, K over 3 tiles
    matmul_case(50, 3, 70, 62);     // a thin c
    matmul_case(5, 40, 9, 63);      // K less than a tile
}
END_TEST

TCase *ex8_3_tcase(void) {
    TCase *tc = tcase_new("ex8.3", "ch8 exercises");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ex8_3_whole_tiles);
    tcase_add_test(tc, ex8_3_ragged_edges);
    return tc;
}

// ---- 8.4 LayerNorm, one warp per row ------------------------------------------

// ex_layernorm_forward_cuda on x (N, C) against chapter 4's
// layernorm_forward: out, mean and rstd, in every order.
static void layernorm_case(const char *label, const float *x, int N, int C,
                           bool bias, uint64_t seed) {
    size_t n = (size_t)N * C;
    float *w = randn_shifted((size_t)C, 1.0f, 0.2f, seed);
    float *b = randn_floats((size_t)C, 0.2f, seed + 1);
    float *want = alloc_floats(n), *wm = alloc_floats((size_t)N);
    float *ws = alloc_floats((size_t)N);
    layernorm_forward(want, wm, ws, x, w, bias ? b : NULL, 1, N, C);
    float *d_x = to_device(x, n), *d_w = to_device(w, (size_t)C);
    float *d_b = bias ? to_device(b, (size_t)C) : NULL;
    char what[96];
    Orders r = orders_new();
    for (int o = 0; o < N_ORDERS; o++) {
        emu_set_schedule(ORDERS[o], 70 + o);
        float *d_y = device_output(n), *d_m = device_output((size_t)N);
        float *d_s = device_output((size_t)N);
        ex_layernorm_forward_cuda(d_y, d_m, d_s, d_x, d_w, d_b, N, C);
        snprintf(what, sizeof what, "ex_layernorm_forward_cuda N=%d C=%d%s%s"
                 ": out", N, C, bias ? "" : " (bias NULL)", label);
        check_output(&r, o, what, d_y, want, n, true);
        snprintf(what, sizeof what, "ex_layernorm_forward_cuda N=%d C=%d%s"
                 ": mean", N, C, label);
        check_output(&r, o, what, d_m, wm, (size_t)N, true);
        snprintf(what, sizeof what, "ex_layernorm_forward_cuda N=%d C=%d%s"
                 ": rstd", N, C, label);
        check_output(&r, o, what, d_s, ws, (size_t)N, true);
        cuda_free(d_y), cuda_free(d_m), cuda_free(d_s);
    }
    emu_set_schedule(EMU_CONCURRENT, 0);
    cuda_free(d_x), cuda_free(d_w), cuda_free(d_b);
    free(w), free(b), free(want), free(wm), free(ws);
    orders_verdict(&r);
}

START_TEST(ex8_4_matches_chapter_4) {
    // C of one, under a warp, not a multiple of 32, many warps' worth; N
    // not a multiple of any number of warps per block
    static const int SIZES[][3] = {{3, 1, 1}, {7, 20, 1}, {9, 100, 0},
                                   {5, 300, 1}, {13, 64, 1}};
    for (size_t k = 0; k < sizeof SIZES / sizeof *SIZES; k++) {
        int N = SIZES[k][0], C = SIZES[k][1];
        float *x = randn_floats((size_t)N * C, 1.5f, 80 + k);
        layernorm_case("", x, N, C, SIZES[k][2] != 0, 90 + k);
        free(x);
    }
}
END_TEST

START_TEST(ex8_4_shifted_rows) {
    // mean 10, spread 0.1: E[x^2] - mean^2 cancels away most of the
    // variance's digits in float
    const int N = 6, C = 100;
    float *x = randn_shifted((size_t)N * C, 10.0f, 0.1f, 100);
    layernorm_case(" (mean 10, std 0.1)", x, N, C, true, 101);
    free(x);
}
END_TEST

TCase *ex8_4_tcase(void) {
    TCase *tc = tcase_new("ex8.4", "ch8 exercises");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ex8_4_matches_chapter_4);
    tcase_add_test(tc, ex8_4_shifted_rows);
    return tc;
}

// ---- 8.5 column sums in chunks ---------------------------------------------------

// A device copy of n host floats followed by GUARD floats of NaN: a read
// past the end (a chunk not cut at N) brings a NaN into the sum.
static float *to_device_nan_after(const float *h, size_t n) {
    float *p = alloc_floats(n + GUARD);
    memcpy(p, h, n * sizeof *p);
    for (size_t i = n; i < n + GUARD; i++) p[i] = NAN;
    float *d = to_device(p, n + GUARD);
    free(p);
    return d;
}

// A device copy of n host floats followed by the guard.
static float *to_device_guarded(const float *h, size_t n) {
    float *d = device_output(n);
    cuda_upload(d, h, n);
    return d;
}

// ex_column_sums_cuda on m (N, C) in chunks of `rows`, dst starting from
// random values (+=), against chapter 2's bias gradient, in every order;
// the result's bits in each order go to bits (C floats per order) when
// it is not NULL.
static void colsum_case(int N, int C, int rows, uint64_t seed,
                        float *bits) {
    size_t n = (size_t)N * C;
    int chunks = (N + rows - 1) / rows;
    float *m = randn_floats(n, 1.0f, seed);
    float *dst0 = randn_floats((size_t)C, 1.0f, seed + 1);
    float *want = alloc_floats((size_t)C);
    memcpy(want, dst0, (size_t)C * sizeof *want);
    linear_backward(NULL, NULL, want, m, NULL, NULL, N, 0, C);
    float *d_m = to_device_nan_after(m, n);
    char what[96];
    snprintf(what, sizeof what, "ex_column_sums_cuda N=%d C=%d rows=%d "
             "(%d chunk%s)", N, C, rows, chunks, chunks == 1 ? "" : "s");
    Orders r = orders_new();
    for (int o = 0; o < N_ORDERS; o++) {
        emu_set_schedule(ORDERS[o], 110 + o);
        float *d_dst = to_device_guarded(dst0, (size_t)C);
        float *d_part = device_output((size_t)chunks * C);
        ex_column_sums_cuda(d_dst, d_m, N, C, rows, d_part);
        check_output(&r, o, what, d_dst, want, (size_t)C, true);
        // the scratch: its chunks * C floats may hold anything, but
        // nothing may be written after them
        float *g = alloc_floats(GUARD);
        cuda_download(g, d_part + (size_t)chunks * C, GUARD);
        for (int i = 0; i < GUARD; i++)
            if (g[i] != GUARD_VALUE) {
                orders_fail(&r, o, "%s, threads %s: wrote past the chunks "
                            "* C floats of part, at [%zu]", what,
                            order_words(ORDERS[o]),
                            (size_t)chunks * C + (size_t)i);
                break;
            }
        free(g);
        if (bits) cuda_download(bits + (size_t)o * C, d_dst, (size_t)C);
        cuda_free(d_dst), cuda_free(d_part);
    }
    emu_set_schedule(EMU_CONCURRENT, 0);
    cuda_free(d_m);
    free(m), free(dst0), free(want);
    orders_verdict(&r);
}

START_TEST(ex8_5_matches_chapter_2) {
    // {N, C, rows}: a short last chunk; four chunks of 10 rows, C under
    // two tiles; one row and one column; one chunk of all rows; chunks
    // shorter than the 8 lanes; rows past N
    static const int SIZES[][3] = {{601, 70, 256}, {37, 45, 10},
                                   {1, 1, 4},      {300, 33, 300},
                                   {50, 97, 5},    {20, 40, 64}};
    for (size_t k = 0; k < sizeof SIZES / sizeof *SIZES; k++)
        colsum_case(SIZES[k][0], SIZES[k][1], SIZES[k][2], 120 + 3 * k,
                    NULL);
}
END_TEST

START_TEST(ex8_5_same_bits_every_order) {
    // Sums whose order depends on which thread runs first (atomicAdd)
    // round differently in different orders; the chunked sums never do.
    const int N = 777, C = 41, rows = 64;
    float *bits = alloc_floats((size_t)N_ORDERS * C);
    colsum_case(N, C, rows, 140, bits);
    for (int o = 1; o < N_ORDERS; o++)
        for (int c = 0; c < C; c++)
            ck_assert_msg(memcmp(&bits[(size_t)o * C + c], &bits[c],
                                 sizeof(float)) == 0,
                          "ex_column_sums_cuda N=%d C=%d: dst[%d] is %.9g "
                          "with the threads %s but %.9g %s: the sum's order "
                          "depends on the threads (atomics?)", N, C, c,
                          bits[(size_t)o * C + c], order_words(ORDERS[o]),
                          bits[c], order_words(ORDERS[0]));
    free(bits);
}
END_TEST

TCase *ex8_5_tcase(void) {
    TCase *tc = tcase_new("ex8.5", "ch8 exercises");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, ex8_5_matches_chapter_2);
    tcase_add_test(tc, ex8_5_same_bits_every_order);
    return tc;
}
