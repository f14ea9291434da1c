// Tests of the chapter 5 exercises. Expected values come from published
// parameter counts, hand computation, the definitions evaluated in double
// inside the test (and their finite differences), defining properties
// (RoPE's relative positions) and the PyTorch fixture written by
// tests/reference/gen_ch5_ex.py, never from the reference solutions or the
// chapter's version of the same function.
//
// The wrong versions each exercise's tests are meant to catch (each was
// tried as a change of the reference solution, graded with `make check
// EXERCISES=<that copy>`, and scored below full marks):
//   5.1  the head counted apart from wte; wpe counted for sinusoidal
//        positions; F taken as 4C; the count in int; ln_f forgotten; the
//        LayerNorms' biases, ln_f's bias, the FFN's biases left out, or
//        c_attn's bias counted as C.
//   5.2  the angle, or w_i, in float; an exponent of -j / C (the odd
//        channel's own index) or -i / C (no 2) or -2i / C in integers;
//        halves (sines, then cosines) instead of interleaved pairs; sin
//        and cos swapped; the last channel of an odd C left out, or given
//        a cosine.
//   5.3  the (k+1)-th largest as the threshold; ties at the k-th broken
//        (only values above the (k+1)-th kept, or the first k by index);
//        the k-th smallest; k >= V, or k <= 0, not left alone (the new
//        case with negative logits and k 0 or -1 catches the latter); -1e9
//        instead of -INFINITY.
//   5.4  > p instead of >= p; ties ordered by the higher index; no
//        renormalisation; the token that crosses p left out; smallest
//        first; tokens taken in index order. Equivalent, so not caught: no
//        special case for p <= 0 (the first token alone already reaches
//        it) or for p >= 1 (the total never reaches it: every token kept).
//        Not caught and not wrong: the running total in float (the
//        contract only advises double; no row in the tests sits within a
//        float rounding of p).
//   5.5  the head's product written over dwte (=) instead of added; no
//        head, or no lookup, gradient; dwpe's row n / T instead of n % T;
//        dwpe or the looked-up rows assigned instead of summed; row n of
//        dwte instead of row idx[n]; dlogits read transposed; dwpe NULL
//        not checked (a crash).
//   5.6  halves (i, i + HS/2) instead of interleaved pairs; an exponent of
//        -i / HS (no 2) or -2i / HS in integers; the position from the
//        row's global index, or from b, or without pos0; row[2i] updated
//        before it is read for row[2i+1]; the rotation's sign flipped;
//        the angle, or w_i, in float (caught by the new case at positions
//        1000 .. 1023).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch5_exercises.h"
#include "check_util.h"
#include "fixture.h"
#include "mem.h"
#include "rng.h"

// ---- 5.1 parameter count --------------------------------------------------

static GptConfig config(int V, int block, int L, int NH, int C, bool bias,
                        PosKind pos) {
    GptConfig c = {.vocab_size = V, .block_size = block, .n_layer = L,
                   .n_head = NH, .n_embd = C, .n_ffn = 4 * C,
                   .dropout = 0.0f, .bias = bias, .positional = pos};
    return c;
}

START_TEST(ex5_1_gpt2_sizes) {
    // The four released GPT-2 checkpoints (V 50257, block 1024, biases,
    // learned positions, the head tied): what sum(p.numel()) gives for
    // them in nanoGPT. The GPT-2 paper's table says 117M, 345M, 762M and
    // 1542M (the lecture "The Transformer Architecture Step by Step" repeats
    // them): all four below the real counts.
    static const struct { int L, NH, C; size_t want; } gpt2[] = {
        {12, 12, 768, 124439808u}, {24, 16, 1024, 354823168u},
        {36, 20, 1280, 774030080u}, {48, 25, 1600, 1557611200u},
    };
    for (int i = 0; i < 4; i++) {
        GptConfig c = config(50257, 1024, gpt2[i].L, gpt2[i].NH, gpt2[i].C,
                             true, POS_LEARNED);
        size_t got = ex_gpt_param_count(&c);
        ck_assert_msg(got == gpt2[i].want, "GPT-2 with %d layers, %d wide: "
                      "got %zu, want %zu", gpt2[i].L, gpt2[i].C, got,
                      gpt2[i].want);
    }
}
END_TEST

START_TEST(ex5_1_seed_model_and_gpt3) {
    // The course notes' model: V 65, block 128, 4 layers, 128 wide, no biases,
    // learned positions. By hand:
    //   wte 65*128 = 8,320          wpe 128*128 = 16,384
    //   a block: 12 * 128^2 + 2 * 128 = 196,608 + 256 = 196,864, four of
    //   them 787,456                ln_f 128
    //   total 8,320 + 16,384 + 787,456 + 128 = 812,288
    // (the course notes say ~1.6M and ~200K: both wrong.) Sinusoidal
    // positions drop wpe, 16,384 of them.
    GptConfig c = config(65, 128, 4, 4, 128, false, POS_LEARNED);
    size_t got = ex_gpt_param_count(&c);
    ck_assert_msg(got == 812288u, "the course notes' model: got %zu, want 812288",
                  got);
    c.positional = POS_SINUSOIDAL;
    got = ex_gpt_param_count(&c);
    ck_assert_msg(got == 812288u - 16384u, "sinusoidal positions: got %zu,"
                  " want 795904 (no wpe)", got);
    // GPT-3 175B's shape (96 layers, 12288 wide, context 2048) in nanoGPT's
    // layout, far beyond 2^31. By hand:
    //   wte 50257*12288 = 617,558,016    wpe 2048*12288 = 25,165,824
    //   a block 12 * 12288^2 + 13 * 12288 = 1,811,939,328 + 159,744
    //         = 1,812,099,072, times 96 = 173,961,510,912
    //   ln_f 2 * 12288 = 24,576
    //   total 174,604,259,328 (the paper's "175.0B")
    c = config(50257, 2048, 96, 96, 12288, true, POS_LEARNED);
    uint64_t want = 174604259328u;
    got = ex_gpt_param_count(&c);
    ck_assert_msg((uint64_t)got == want, "GPT-3 175B: got %zu, want "
                  "174604259328 (count in size_t: int overflows)", got);
}
END_TEST

START_TEST(ex5_1_tensor_by_tensor) {
    // A tiny model, every nanoGPT tensor listed with its shape: the count
    // is their sum, for each choice of bias and positions.
    // F is not 4C here: a count that assumes GPT-2's width fails
    const int V = 5, block = 3, L = 2, C = 2, F = 3;
    const struct { const char *name; int rows, cols; bool is_bias; } t[] = {
        {"ln_1.weight", C, 1, false}, {"ln_1.bias", C, 1, true},
        {"attn.c_attn.weight", 3 * C, C, false},
        {"attn.c_attn.bias", 3 * C, 1, true},
        {"attn.c_proj.weight", C, C, false},
        {"attn.c_proj.bias", C, 1, true},
        {"ln_2.weight", C, 1, false}, {"ln_2.bias", C, 1, true},
        {"mlp.c_fc.weight", F, C, false}, {"mlp.c_fc.bias", F, 1, true},
        {"mlp.c_proj.weight", C, F, false},
        {"mlp.c_proj.bias", C, 1, true},
    };
    for (int bias = 0; bias <= 1; bias++)
        for (int learned = 0; learned <= 1; learned++) {
            size_t want = (size_t)V * C;                 // wte (= lm_head)
            if (learned) want += (size_t)block * C;      // wpe
            for (int l = 0; l < L; l++)
                for (size_t i = 0; i < sizeof t / sizeof *t; i++)
                    if (bias || !t[i].is_bias)
                        want += (size_t)t[i].rows * t[i].cols;
            want += bias ? 2 * C : C;                    // ln_f
            GptConfig c = config(V, block, L, 1, C, bias,
                                 learned ? POS_LEARNED : POS_SINUSOIDAL);
            c.n_ffn = F;
            size_t got = ex_gpt_param_count(&c);
            ck_assert_msg(got == want, "V 5, block 3, 2 layers, C 2, F 3, "
                          "bias %d, %s positions: got %zu, want %zu", bias,
                          learned ? "learned" : "sinusoidal", got, want);
        }
}
END_TEST

TCase *ex5_1_tcase(void) {
    TCase *tc = tcase_new("ex5.1", "ch5 exercises");
    tcase_add_test(tc, ex5_1_gpt2_sizes);
    tcase_add_test(tc, ex5_1_seed_model_and_gpt3);
    tcase_add_test(tc, ex5_1_tensor_by_tensor);
    return tc;
}

// ---- 5.2 sinusoidal positions ---------------------------------------------

// The definition in double: channel j is sin (even j) or cos (odd j) of
// t * 10000^(-2 (j/2) / C).
static double sinusoid_def(int t, int j, int C) {
    double angle = t * pow(10000.0, -2.0 * (j / 2) / C);
    return j % 2 == 0 ? sin(angle) : cos(angle);
}

static void sinusoid_case(int T, int C, double atol) {
    size_t n = (size_t)T * C;
    float *pe = alloc_floats(n);
    double *want = xmalloc(n * sizeof *want);
    ex_sinusoidal_table(pe, T, C);
    for (int t = 0; t < T; t++)
        for (int j = 0; j < C; j++)
            want[(size_t)t * C + j] = sinusoid_def(t, j, C);
    char what[64];
    snprintf(what, sizeof what, "sinusoidal table T %d, C %d", T, C);
    ck_assert_close(what, pe, want, n, atol, 0);
    free(pe);
    free(want);
}

START_TEST(ex5_2_known_values) {
    // C 4: w_0 = 1, w_1 = 10000^(-1/2) = 0.01. Row 0 is (0, 1, 0, 1).
    float pe[3 * 4];
    ex_sinusoidal_table(pe, 3, 4);
    const double want[3 * 4] = {
        0, 1, 0, 1,
        sin(1.0), cos(1.0), sin(0.01), cos(0.01),
        sin(2.0), cos(2.0), sin(0.02), cos(0.02),
    };
    ck_assert_close("sinusoidal table T 3, C 4", pe, want, 12, 1e-7, 0);
}
END_TEST

START_TEST(ex5_2_matches_definition) {
    // Positions up to 1023, where an angle rounded to float is off by up
    // to 3e-5: only a double angle stays within 1e-6. Odd C: the last
    // channel is the sine of its pair.
    sinusoid_case(1024, 64, 1e-6);
    sinusoid_case(50, 7, 1e-6);
    sinusoid_case(5, 1, 1e-6);
}
END_TEST

START_TEST(ex5_2_matches_pytorch) {
    // the course notes' SinusoidalPositionalEncoding, T 16, C 8
    Fixture *f = fixture_open("ch5_ex.txt");
    const int shape[2] = {16, 8};
    float pe[16 * 8];
    ex_sinusoidal_table(pe, 16, 8);
    ck_assert_close_f("table vs the course notes' construction", pe,
                      fixture_get(f, "sin.pe", shape, 2), 16 * 8, 1e-6, 0);
    fixture_free(f);
}
END_TEST

TCase *ex5_2_tcase(void) {
    TCase *tc = tcase_new("ex5.2", "ch5 exercises");
    tcase_add_test(tc, ex5_2_known_values);
    tcase_add_test(tc, ex5_2_matches_definition);
    tcase_add_test(tc, ex5_2_matches_pytorch);
    return tc;
}

// ---- 5.3 top-k ------------------------------------------------------------

static const double NEG_INF = -INFINITY;

static void top_k_case(const char *what, const float *in, int V, int k,
                       const double *want) {
    float x[16];
    ck_assert_int_le(V, 16);
    memcpy(x, in, (size_t)V * sizeof *x);
    ex_top_k(x, V, k);
    ck_assert_close(what, x, want, (size_t)V, 0, 0);
}

START_TEST(ex5_3_known_values) {
    const double I = NEG_INF;
    const float a[5] = {1, 3, 2, 5, 4};
    const double k2[5] = {I, I, I, 5, 4}, k3[5] = {I, 3, I, 5, 4};
    const double k1[5] = {I, I, I, 5, I};
    top_k_case("top-2 of {1, 3, 2, 5, 4}", a, 5, 2, k2);
    top_k_case("top-3 of {1, 3, 2, 5, 4}", a, 5, 3, k3);
    top_k_case("top-1 of {1, 3, 2, 5, 4}", a, 5, 1, k1);
    const float neg[4] = {-2.5f, -0.5f, -7, -1};
    const double kn[4] = {I, -0.5, I, -1};
    top_k_case("top-2 of negative logits", neg, 4, 2, kn);
}
END_TEST

START_TEST(ex5_3_ties) {
    // equal to the k-th largest: kept, even if that keeps more than k
    const double I = NEG_INF;
    const float a[4] = {1, 3, 3, 2};
    const double k2[4] = {I, 3, 3, I}, k1[4] = {I, 3, 3, I};
    top_k_case("top-2 of {1, 3, 3, 2}", a, 4, 2, k2);
    top_k_case("top-1 of {1, 3, 3, 2}", a, 4, 1, k1);
    const float b[5] = {5, 2, 2, 2, 1};
    const double b2[5] = {5, 2, 2, 2, I};
    top_k_case("top-2 of {5, 2, 2, 2, 1}", b, 5, 2, b2);
    top_k_case("top-3 of {5, 2, 2, 2, 1}", b, 5, 3, b2);
    const float c[3] = {7, 7, 7};
    const double c1[3] = {7, 7, 7};
    top_k_case("top-1 of {7, 7, 7}", c, 3, 1, c1);
}
END_TEST

START_TEST(ex5_3_nothing_to_do) {
    // k <= 0 or k >= V: the row is left exactly as it was
    const float a[5] = {1, 3, 2, 5, 4};
    const double same[5] = {1, 3, 2, 5, 4};
    const int ks[4] = {0, -3, 5, 9};
    for (int i = 0; i < 4; i++) {
        char what[48];
        snprintf(what, sizeof what, "top-k with k %d of V 5", ks[i]);
        top_k_case(what, a, 5, ks[i], same);
    }
    // negative logits too: k 0 has no k-th largest to compare with (a
    // threshold read from before the sorted copy would hide some of them)
    const float neg[4] = {-2.5f, -0.5f, -7, -1};
    const double nsame[4] = {-2.5, -0.5, -7, -1};
    for (int k = 0; k >= -1; k--) {
        char what[48];
        snprintf(what, sizeof what, "top-k with k %d of negative logits", k);
        top_k_case(what, neg, 4, k, nsame);
    }
}
END_TEST

static int cmp_double_desc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

START_TEST(ex5_3_random_rows) {
    // 50 logits, some repeated on purpose; the k-th largest from a sort
    enum { V = 50 };
    float *base = randn_floats(V, 2.0f, 530);
    for (int i = 0; i < 10; i++) base[40 + i] = base[i];   // duplicates
    const int ks[6] = {1, 2, 7, 11, 25, 49};
    for (int n = 0; n < 6; n++) {
        int k = ks[n];
        float x[V];
        double sorted[V], want[V];
        memcpy(x, base, sizeof x);
        for (int i = 0; i < V; i++) sorted[i] = base[i];
        qsort(sorted, V, sizeof *sorted, cmp_double_desc);
        for (int i = 0; i < V; i++)
            want[i] = base[i] < sorted[k - 1] ? NEG_INF : base[i];
        ex_top_k(x, V, k);
        char what[48];
        snprintf(what, sizeof what, "top-%d of 50 random logits", k);
        ck_assert_close(what, x, want, V, 0, 0);
    }
    free(base);
}
END_TEST

TCase *ex5_3_tcase(void) {
    TCase *tc = tcase_new("ex5.3", "ch5 exercises");
    tcase_add_test(tc, ex5_3_known_values);
    tcase_add_test(tc, ex5_3_ties);
    tcase_add_test(tc, ex5_3_nothing_to_do);
    tcase_add_test(tc, ex5_3_random_rows);
    return tc;
}

// ---- 5.4 top-p ------------------------------------------------------------

static void top_p_case(const char *what, const float *in, int V, float p,
                       const double *want) {
    float x[16];
    ck_assert_int_le(V, 16);
    memcpy(x, in, (size_t)V * sizeof *x);
    ex_top_p(x, V, p);
    char msg[96];
    snprintf(msg, sizeof msg, "%s, p = %.9g", what, p);
    ck_assert_close(msg, x, want, (size_t)V, 1e-7, 1e-6);
}

START_TEST(ex5_4_boundary) {
    // Powers of two: every sum is exact, so the boundary is sharp.
    // Sorted: token 1 (0.5), 3 (0.25), 0 (0.125), 2 (0.125).
    const float pr[4] = {0.125f, 0.5f, 0.125f, 0.25f};
    const double one[4] = {0, 1, 0, 0};
    const double two[4] = {0, 2.0 / 3, 0, 1.0 / 3};
    const double three[4] = {1.0 / 7, 4.0 / 7, 0, 2.0 / 7};
    const char *w = "{0.125, 0.5, 0.125, 0.25}";
    top_p_case(w, pr, 4, 0.4f, one);
    top_p_case(w, pr, 4, 0.5f, one);             // 0.5 reaches 0.5
    top_p_case(w, pr, 4, nextafterf(0.5f, 1), two);
    top_p_case(w, pr, 4, nextafterf(0.75f, 0), two);
    top_p_case(w, pr, 4, 0.75f, two);            // 0.75 reaches 0.75
    top_p_case(w, pr, 4, nextafterf(0.75f, 1), three);
    top_p_case(w, pr, 4, 0.875f, three);
    top_p_case(w, pr, 4, 0.9f, (const double[4]){0.125, 0.5, 0.125,
                                                 0.25});
}
END_TEST

START_TEST(ex5_4_ties) {
    // equal probabilities: the lower index comes first
    const float u[4] = {0.25f, 0.25f, 0.25f, 0.25f};
    top_p_case("uniform over 4", u, 4, 0.5f,
               (const double[4]){0.5, 0.5, 0, 0});
    top_p_case("uniform over 4", u, 4, 0.6f,
               (const double[4]){1.0 / 3, 1.0 / 3, 1.0 / 3, 0});
    top_p_case("uniform over 4", u, 4, 0.1f,
               (const double[4]){1, 0, 0, 0});
    const float t[4] = {0.125f, 0.375f, 0.125f, 0.375f};
    top_p_case("{0.125, 0.375, 0.125, 0.375}", t, 4, 0.3f,
               (const double[4]){0, 1, 0, 0});
    top_p_case("{0.125, 0.375, 0.125, 0.375}", t, 4, 0.8f,
               (const double[4]){1.0 / 7, 3.0 / 7, 0, 3.0 / 7});
}
END_TEST

START_TEST(ex5_4_extremes) {
    // p >= 1 keeps everything; p <= 0 (or tiny) keeps the most likely
    const float pr[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
    const double all[5] = {0.1, 0.2, 0.4, 0.2, 0.1};
    const double top[5] = {0, 0, 1, 0, 0};
    const char *w = "{0.1, 0.2, 0.4, 0.2, 0.1}";
    top_p_case(w, pr, 5, 1.0f, all);
    top_p_case(w, pr, 5, 1.5f, all);
    top_p_case(w, pr, 5, 1e-9f, top);
    top_p_case(w, pr, 5, 0.0f, top);
    top_p_case(w, pr, 5, -1.0f, top);
    // a tie at the top, p 0: only the lower index
    const float tie[3] = {0.4f, 0.4f, 0.2f};
    top_p_case("{0.4, 0.4, 0.2}", tie, 3, 0.0f, (const double[3]){1, 0, 0});
    // zeros stay zero when everything is kept
    const float z[4] = {0.5f, 0, 0.5f, 0};
    top_p_case("{0.5, 0, 0.5, 0}", z, 4, 1.0f,
               (const double[4]){0.5, 0, 0.5, 0});
    const float single = 1.0f;
    top_p_case("{1}", &single, 1, 0.3f, (const double[1]){1});
}
END_TEST

static int cmp_prob_desc(const void *a, const void *b) {
    const double *x = a, *y = b;      // {probability, index}
    if (x[0] != y[0]) return x[0] < y[0] ? 1 : -1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

START_TEST(ex5_4_random_rows) {
    // softmax of random logits; p halfway between two running totals, so
    // that the answer does not hang on rounding. Kept set from a sort.
    enum { V = 16 };
    float *logits = randn_floats(V, 1.5f, 540);
    float probs[V];
    double z = 0, order[V][2];
    for (int i = 0; i < V; i++) z += exp(logits[i]);
    for (int i = 0; i < V; i++) probs[i] = (float)(exp(logits[i]) / z);
    for (int i = 0; i < V; i++) order[i][0] = probs[i], order[i][1] = i;
    qsort(order, V, sizeof *order, cmp_prob_desc);
    double total = 0;
    for (int m = 1; m < V; m++) {            // keep the first m tokens
        double before = total;
        total += order[m - 1][0];
        float p = (float)((before + total) / 2);
        double kept = total, want[V] = {0};
        for (int n = 0; n < m; n++)
            want[(int)order[n][1]] = order[n][0] / kept;
        float x[V];
        memcpy(x, probs, sizeof x);
        ex_top_p(x, V, p);
        char what[80];
        snprintf(what, sizeof what, "random row, p = %.6f (keeps %d)", p, m);
        ck_assert_close(what, x, want, V, 1e-7, 1e-6);
    }
    free(logits);
}
END_TEST

TCase *ex5_4_tcase(void) {
    TCase *tc = tcase_new("ex5.4", "ch5 exercises");
    tcase_add_test(tc, ex5_4_boundary);
    tcase_add_test(tc, ex5_4_ties);
    tcase_add_test(tc, ex5_4_extremes);
    tcase_add_test(tc, ex5_4_random_rows);
    return tc;
}

// ---- 5.5 embedding backward with a tied head ------------------------------

START_TEST(ex5_5_lookup_by_hand) {
    // V 3, C 2, one sequence of T 3: ids {2, 0, 2}; no head gradient.
    // Token 2 appears twice: its row gathers both. wpe has 4 rows (block
    // 4): the last is past T and stays. Everything starts at 1 (+=).
    const int idx[3] = {2, 0, 2};
    const float dx[3 * 2] = {1, 2, 3, 4, 5, 6};
    const float zeros_v[4 * 3] = {0}, zeros_c[4 * 2] = {0};   // N <= 4
    float dwte[3 * 2], dwpe[4 * 2];
    for (int i = 0; i < 6; i++) dwte[i] = 1;
    for (int i = 0; i < 8; i++) dwpe[i] = 1;
    ex_embedding_backward(dwte, dwpe, dx, idx, zeros_v, zeros_c, 1, 3, 2, 3);
    const double wte_want[6] = {1 + 3, 1 + 4, 1, 1, 1 + 1 + 5, 1 + 2 + 6};
    const double wpe_want[8] = {2, 3, 4, 5, 6, 7, 1, 1};
    ck_assert_close("dwte, ids {2, 0, 2}", dwte, wte_want, 6, 0, 1e-7);
    ck_assert_close("dwpe", dwpe, wpe_want, 8, 0, 1e-7);
    // two sequences: dwpe[t] sums over the batch; dwpe NULL is skipped
    const int idx2[2 * 2] = {1, 1, 1, 0};
    const float dx2[2 * 2 * 2] = {1, 2, 3, 4, 10, 20, 30, 40};
    float w2[3 * 2] = {0}, p2[2 * 2] = {0};
    ex_embedding_backward(w2, p2, dx2, idx2, zeros_v, zeros_c, 2, 2, 2, 3);
    const double w2_want[6] = {30, 40, 14, 26, 0, 0};
    const double p2_want[4] = {11, 22, 33, 44};
    ck_assert_close("dwte, B 2", w2, w2_want, 6, 0, 1e-7);
    ck_assert_close("dwpe, B 2 (a sum over the batch)", p2, p2_want, 4, 0,
                    1e-7);
    memset(w2, 0, sizeof w2);
    ex_embedding_backward(w2, NULL, dx2, idx2, zeros_v, zeros_c, 2, 2, 2, 3);
    ck_assert_close("dwte with dwpe NULL", w2, w2_want, 6, 0, 1e-7);
}
END_TEST

START_TEST(ex5_5_head_by_hand) {
    // No lookup gradient; N = 2 rows, V 2, C 2:
    //   dwte[v][c] += sum_n dlogits[n][v] * h[n][c]
    //   dlogits = [[1, 2], [3, 4]], h = [[5, 6], [7, 8]]
    //   dwte[0] = 1*(5,6) + 3*(7,8) = (26, 30)
    //   dwte[1] = 2*(5,6) + 4*(7,8) = (38, 44)
    const int idx[2] = {0, 1};
    const float dx[4] = {0}, dlogits[4] = {1, 2, 3, 4}, h[4] = {5, 6, 7, 8};
    float dwte[4] = {-1, -1, -1, -1}, dwpe[4] = {0};
    ex_embedding_backward(dwte, dwpe, dx, idx, dlogits, h, 1, 2, 2, 2);
    const double want[4] = {25, 29, 37, 43}, pwant[4] = {0};
    ck_assert_close("dwte of the head (starting at -1)", dwte, want, 4, 0,
                    1e-7);
    ck_assert_close("dwpe (dx is 0)", dwpe, pwant, 4, 0, 0);
}
END_TEST

// L(wte, wpe) = sum(lw1 * (wte[idx] + wpe[t])) + sum(lw2 * (h @ wte^T)),
// in double: its gradient is what the exercise adds with dx = lw1 and
// dlogits = lw2.
typedef struct {
    const int *idx;
    const float *lw1, *lw2, *h;
    int B, T, C, V;
} EmbLoss;

static double emb_loss(const EmbLoss *e, const double *wte,
                       const double *wpe) {
    int B = e->B, T = e->T, C = e->C, V = e->V;
    double L = 0;
    for (int n = 0; n < B * T; n++)
        for (int c = 0; c < C; c++)
            L += e->lw1[n * C + c] * (wte[e->idx[n] * C + c]
                                      + wpe[(n % T) * C + c]);
    for (int n = 0; n < B * T; n++)
        for (int v = 0; v < V; v++) {
            double logit = 0;
            for (int c = 0; c < C; c++)
                logit += e->h[n * C + c] * wte[v * C + c];
            L += e->lw2[n * V + v] * logit;
        }
    return L;
}

// central differences over every element of p (wte or wpe)
static void emb_fd(double *grad, double *p, size_t n, const EmbLoss *e,
                   double *wte, double *wpe) {
    const double h = 1e-5;
    for (size_t i = 0; i < n; i++) {
        double keep = p[i];
        p[i] = keep + h;
        double up = emb_loss(e, wte, wpe);
        p[i] = keep - h;
        double down = emb_loss(e, wte, wpe);
        p[i] = keep;
        grad[i] = (up - down) / (2 * h);
    }
}

START_TEST(ex5_5_finite_differences) {
    enum { B = 2, T = 3, C = 4, V = 5, BLOCK = 4 };
    const int idx[B * T] = {3, 3, 0, 4, 3, 0};        // 3 three times
    float *lw1 = randn_floats(B * T * C, 1.0f, 550);
    float *lw2 = randn_floats(B * T * V, 1.0f, 551);
    float *h = randn_floats(B * T * C, 1.0f, 552);
    float *wtef = randn_floats(V * C, 1.0f, 553), *wpef = randn_floats(BLOCK * C, 1.0f,
                                                          554);
    double wte[V * C], wpe[BLOCK * C], gwte[V * C], gwpe[BLOCK * C];
    for (int i = 0; i < V * C; i++) wte[i] = wtef[i];
    for (int i = 0; i < BLOCK * C; i++) wpe[i] = wpef[i];
    EmbLoss e = {idx, lw1, lw2, h, B, T, C, V};
    float dwte[V * C] = {0}, dwpe[BLOCK * C] = {0};
    ex_embedding_backward(dwte, dwpe, lw1, idx, lw2, h, B, T, C, V);
    emb_fd(gwte, wte, V * C, &e, wte, wpe);
    emb_fd(gwpe, wpe, BLOCK * C, &e, wte, wpe);
    ck_assert_close("dwte vs finite differences", dwte, gwte, V * C, 1e-5,
                    1e-5);
    ck_assert_close("dwpe vs finite differences (row 3 is past T: 0)",
                    dwpe, gwpe, BLOCK * C, 1e-5, 1e-5);
    free(lw1), free(lw2), free(h), free(wtef), free(wpef);
}
END_TEST

START_TEST(ex5_5_matches_pytorch) {
    // autograd's gradient of a cross-entropy loss through a tied head:
    // x = wte[idx] + wpe[:T], h = layer_norm(x), logits = h @ wte^T
    enum { B = 2, T = 3, C = 4, V = 6, BLOCK = 5 };
    Fixture *f = fixture_open("ch5_ex.txt");
    const int s_idx[2] = {B, T}, s_dx[3] = {B, T, C};
    const int s_dl[2] = {B * T, V}, s_h[2] = {B * T, C};
    const int s_wte[2] = {V, C}, s_wpe[2] = {BLOCK, C};
    const float *fidx = fixture_get(f, "emb.idx", s_idx, 2);
    int idx[B * T];
    for (int i = 0; i < B * T; i++) idx[i] = (int)fidx[i];
    // starting gradients of 0.25: the answer is added to them
    float dwte[V * C], dwpe[BLOCK * C];
    for (int i = 0; i < V * C; i++) dwte[i] = 0.25f;
    for (int i = 0; i < BLOCK * C; i++) dwpe[i] = 0.25f;
    ex_embedding_backward(dwte, dwpe, fixture_get(f, "emb.dx", s_dx, 3),
                          idx, fixture_get(f, "emb.dlogits", s_dl, 2),
                          fixture_get(f, "emb.h", s_h, 2), B, T, C, V);
    for (int i = 0; i < V * C; i++) dwte[i] -= 0.25f;
    for (int i = 0; i < BLOCK * C; i++) dwpe[i] -= 0.25f;
    ck_assert_close_f("dwte vs autograd (tied head + lookup)", dwte,
                      fixture_get(f, "emb.dwte", s_wte, 2), V * C, 1e-6,
                      1e-5);
    ck_assert_close_f("dwpe vs autograd", dwpe,
                      fixture_get(f, "emb.dwpe", s_wpe, 2), BLOCK * C,
                      1e-6, 1e-5);
    fixture_free(f);
}
END_TEST

TCase *ex5_5_tcase(void) {
    TCase *tc = tcase_new("ex5.5", "ch5 exercises");
    tcase_add_test(tc, ex5_5_lookup_by_hand);
    tcase_add_test(tc, ex5_5_head_by_hand);
    tcase_add_test(tc, ex5_5_finite_differences);
    tcase_add_test(tc, ex5_5_matches_pytorch);
    return tc;
}

// ---- 5.6 RoPE -------------------------------------------------------------

static double dot_d(const float *a, const float *b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

START_TEST(ex5_6_known_values) {
    // HS 4: pair 0 turns 1 radian per position, pair 1 10000^(-1/2) =
    // 0.01. (1, 2, 3, 4) at position 1 (pos0 1, T 1):
    //   (1 cos 1 - 2 sin 1, 1 sin 1 + 2 cos 1,
    //    3 cos .01 - 4 sin .01, 3 sin .01 + 4 cos .01)
    // Interleaved pairs: channels (0, 1) and (2, 3), not (0, 2), (1, 3).
    float x[4] = {1, 2, 3, 4};
    ex_rope(x, 1, 1, 1, 4, 1);
    const double want[4] = {cos(1.0) - 2 * sin(1.0), sin(1.0) + 2 * cos(1.0),
                            3 * cos(0.01) - 4 * sin(0.01),
                            3 * sin(0.01) + 4 * cos(0.01)};
    ck_assert_close("rope((1, 2, 3, 4), position 1)", x, want, 4, 1e-6,
                    1e-6);
    // (1, 0, 1, 0) at positions 0, 1, 2: unit vectors turning
    float y[3 * 4] = {1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0};
    ex_rope(y, 1, 1, 3, 4, 0);
    const double wy[12] = {1, 0, 1, 0,
                           cos(1.0), sin(1.0), cos(0.01), sin(0.01),
                           cos(2.0), sin(2.0), cos(0.02), sin(0.02)};
    ck_assert_close("rope((1, 0, 1, 0)) at positions 0, 1, 2", y, wy, 12,
                    1e-7, 1e-6);
}
END_TEST

START_TEST(ex5_6_matches_pytorch) {
    // the course notes' apply_rope (view_as_complex), positions 3 .. 7
    Fixture *f = fixture_open("ch5_ex.txt");
    const int shape[4] = {1, 2, 5, 8};
    float x[1 * 2 * 5 * 8];
    memcpy(x, fixture_get(f, "rope.x", shape, 4), sizeof x);
    ex_rope(x, 1, 2, 5, 8, 3);
    ck_assert_close_f("rope vs the course notes' apply_rope", x,
                      fixture_get(f, "rope.out", shape, 4), 80, 1e-6, 1e-5);
    fixture_free(f);
}
END_TEST

START_TEST(ex5_6_identity_and_norms) {
    // Position 0 turns nothing; every other position keeps each pair's
    // length (and so each row's): a rotation of the pairs (2i, 2i+1).
    enum { B = 2, NH = 3, T = 5, HS = 16, N = B * NH * T * HS };
    float *x = randn_floats(N, 1.0f, 560), y[N];
    memcpy(y, x, sizeof y);
    ex_rope(y, B * NH * T, 1, 1, HS, 0);          // every row at position 0
    for (int i = 0; i < N; i++)
        ck_assert_msg(y[i] == x[i], "position 0 changed element %d: %g -> "
                      "%g", i, x[i], y[i]);
    memcpy(y, x, sizeof y);
    ex_rope(y, B, NH, T, HS, 11);
    for (int r = 0; r < B * NH * T; r++)
        for (int i = 0; i < HS / 2; i++) {
            const float *a = x + r * HS + 2 * i, *b = y + r * HS + 2 * i;
            double before = hypot(a[0], a[1]), after = hypot(b[0], b[1]);
            ck_assert_msg(fabs(after - before) <= 1e-5 * (1 + before),
                          "row %d, pair (%d, %d): length %g became %g", r,
                          2 * i, 2 * i + 1, before, after);
        }
    free(x);
}
END_TEST

START_TEST(ex5_6_relative_positions) {
    // The same q in every row of one tensor, the same k in every row of
    // another: row m is rope(q, m). <rope(q, m), rope(k, n)> depends on
    // m - n only, and differs for a different m - n.
    enum { T = 13, HS = 8 };
    float *q1 = randn_floats(HS, 1.0f, 561), *k1 = randn_floats(HS, 1.0f, 562);
    float q[T * HS], k[T * HS];
    for (int t = 0; t < T; t++) {
        memcpy(q + t * HS, q1, HS * sizeof *q);
        memcpy(k + t * HS, k1, HS * sizeof *k);
    }
    ex_rope(q, 1, 1, T, HS, 0);
    ex_rope(k, 1, 1, T, HS, 0);
    const int pairs[3][2] = {{3, 1}, {7, 5}, {12, 10}};
    double s0 = dot_d(q + 3 * HS, k + 1 * HS, HS);
    for (int i = 1; i < 3; i++) {
        double s = dot_d(q + pairs[i][0] * HS, k + pairs[i][1] * HS, HS);
        ck_assert_msg(fabs(s - s0) <= 1e-5 * (1 + fabs(s0)), "score(%d, %d)"
                      " = %.7g but score(3, 1) = %.7g: both are 2 apart",
                      pairs[i][0], pairs[i][1], s, s0);
    }
    double s2 = dot_d(q + 4 * HS, k + 1 * HS, HS);   // 3 apart
    double s3 = dot_d(q + 1 * HS, k + 3 * HS, HS);   // -2 apart
    ck_assert_msg(fabs(s2 - s0) > 1e-2 && fabs(s3 - s0) > 1e-2,
                  "offsets 2, 3 and -2 give scores %.7g, %.7g, %.7g: they "
                  "should differ", s0, s2, s3);
    free(q1), free(k1);
}
END_TEST

START_TEST(ex5_6_offset_and_layout) {
    // pos0 shifts every row: T 3 rows at pos0 5 are rows 5..7 of the same
    // content at pos0 0. Position comes from t alone, not from b or head.
    enum { HS = 6, TL = 8, TS = 3, B = 2, NH = 2 };
    float *rows = randn_floats(TS * HS, 1.0f, 563);
    float longer[TL * HS] = {0}, shifted[B * NH * TS * HS];
    memcpy(longer + 5 * HS, rows, TS * HS * sizeof *rows);
    ex_rope(longer, 1, 1, TL, HS, 0);
    for (int bh = 0; bh < B * NH; bh++)
        memcpy(shifted + bh * TS * HS, rows, TS * HS * sizeof *rows);
    ex_rope(shifted, B, NH, TS, HS, 5);
    for (int bh = 0; bh < B * NH; bh++) {
        char what[64];
        snprintf(what, sizeof what, "pos0 5 vs rows 5..7, (b, head) %d", bh);
        ck_assert_close_f(what, shifted + bh * TS * HS, longer + 5 * HS,
                          TS * HS, 1e-6, 1e-6);
    }
    free(rows);
}
END_TEST

START_TEST(ex5_6_far_positions) {
    // Positions 1000 .. 1023 against the definition in double: a float
    // angle (pos * w_i rounded to float) is off by up to ~6e-5 radians
    // there, and the output with it; a double angle stays within 1e-6.
    enum { NH = 2, T = 24, HS = 32, N = NH * T * HS };
    float *x = randn_floats(N, 1.0f, 564), y[N];
    double want[N];
    memcpy(y, x, sizeof y);
    ex_rope(y, 1, NH, T, HS, 1000);
    for (int r = 0; r < NH * T; r++)
        for (int i = 0; i < HS / 2; i++) {
            double a = (1000 + r % T) * pow(10000.0, -2.0 * i / HS);
            double x0 = x[r * HS + 2 * i], x1 = x[r * HS + 2 * i + 1];
            want[r * HS + 2 * i] = x0 * cos(a) - x1 * sin(a);
            want[r * HS + 2 * i + 1] = x0 * sin(a) + x1 * cos(a);
        }
    ck_assert_close("rope at positions 1000 .. 1023 (the angle in double)",
                    y, want, N, 1e-6, 1e-6);
    free(x);
}
END_TEST

TCase *ex5_6_tcase(void) {
    TCase *tc = tcase_new("ex5.6", "ch5 exercises");
    tcase_add_test(tc, ex5_6_known_values);
    tcase_add_test(tc, ex5_6_matches_pytorch);
    tcase_add_test(tc, ex5_6_identity_and_norms);
    tcase_add_test(tc, ex5_6_relative_positions);
    tcase_add_test(tc, ex5_6_offset_and_layout);
    tcase_add_test(tc, ex5_6_far_positions);
    return tc;
}
