// Tests of exercises 9.3 and 9.4 (the model's side of chapter 9). The
// expected names come from the rules of the contract, written out here
// for every tensor of a layer in both layouts; the transposes from the
// definition out[c][r] = inp[r][c]; GELU from its formula in double, its
// central differences, and PyTorch's F.gelu(x, approximate='tanh')
// (tests/reference/ch3_gelu.txt); never from the reference solutions or
// the chapter's own hf_name_map and gelu_forward.
//
// The wrong versions each exercise's tests are meant to catch (each was
// tried as a change of the reference solution, graded with `make check
// EXERCISES=<that copy>`, and scored below full marks):
//   9.3  the prefix not added to the Hub's names, or added twice to
//        save_pretrained's; biases transposed; wte or wpe transposed;
//        attn.bias or attn.masked_bias not skipped (copied, or
//        transposed); lm_head.weight copied instead of tied; a room
//        check that forgets the NUL; the transpose with rows and cols
//        swapped (out[r][c] = inp[c][r]: right for square matrices only),
//        or a copy instead of a transpose.
//   9.4  tanh' taken as 1 - tanh (not 1 - tanh^2); the 0.044715 x^3 term
//        left out; sqrt(2/pi) written sqrt(2 pi); the derivative without
//        its 0.5 (1 + tanh u) term, or without the chain rule's u';
//        dinp assigned (=) instead of added to (+=); dout left out.
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ch9_exercises.h"
#include "check_util.h"
#include "mem.h"

// ---- 9.3 names and the Conv1D transpose -------------------------------------

// Every tensor of a layer, after "h.N.", and what the loader does to it.
static const struct { const char *tail; int role; } LAYER[] = {
    {"ln_1.weight", HF_COPY},         {"ln_1.bias", HF_COPY},
    {"attn.c_attn.weight", HF_TRANSPOSE}, {"attn.c_attn.bias", HF_COPY},
    {"attn.c_proj.weight", HF_TRANSPOSE}, {"attn.c_proj.bias", HF_COPY},
    {"ln_2.weight", HF_COPY},         {"ln_2.bias", HF_COPY},
    {"mlp.c_fc.weight", HF_TRANSPOSE}, {"mlp.c_fc.bias", HF_COPY},
    {"mlp.c_proj.weight", HF_TRANSPOSE}, {"mlp.c_proj.bias", HF_COPY},
    {"attn.bias", HF_SKIP},           {"attn.masked_bias", HF_SKIP},
};

static const char *role_name(int r) {
    return r == HF_COPY ? "HF_COPY" : r == HF_TRANSPOSE ? "HF_TRANSPOSE"
           : r == HF_SKIP ? "HF_SKIP" : r == HF_TIED ? "HF_TIED" : "-1";
}

static void expect_name(const char *hf, const char *want, int role) {
    char ours[96];
    memset(ours, '#', sizeof ours);
    int got = ex_hf_name(ours, sizeof ours, hf);
    ck_assert_msg(got == role, "%s: %s, expected %s", hf, role_name(got),
                  role_name(role));
    ck_assert_msg(memchr(ours, 0, sizeof ours) && strcmp(ours, want) == 0,
                  "%s: ours \"%.96s\", expected \"%s\"", hf, ours, want);
}

START_TEST(ex9_3_layers_in_both_layouts) {
    const int layers[3] = {0, 7, 11};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < sizeof LAYER / sizeof LAYER[0]; i++) {
            char hub[48], saved[64], ours[64];
            snprintf(hub, sizeof hub, "h.%d.%s", layers[k], LAYER[i].tail);
            snprintf(saved, sizeof saved, "transformer.%s", hub);
            bool skip = LAYER[i].role == HF_SKIP;
            snprintf(ours, sizeof ours, "%s", skip ? "" : saved);
            expect_name(hub, ours, LAYER[i].role);
            expect_name(saved, ours, LAYER[i].role);
        }
}
END_TEST

START_TEST(ex9_3_embeddings_norm_and_head) {
    const char *outer[4] = {"wte.weight", "wpe.weight", "ln_f.weight",
                            "ln_f.bias"};
    for (int i = 0; i < 4; i++) {
        char saved[64];
        snprintf(saved, sizeof saved, "transformer.%s", outer[i]);
        expect_name(outer[i], saved, HF_COPY);
        expect_name(saved, saved, HF_COPY);
    }
    expect_name("lm_head.weight", "transformer.wte.weight", HF_TIED);
}
END_TEST

START_TEST(ex9_3_room_for_the_name) {
    // "transformer.h.0.ln_1.weight": 27 characters and the NUL
    char ours[28];
    ck_assert_int_eq(ex_hf_name(ours, 28, "h.0.ln_1.weight"), HF_COPY);
    ck_assert_str_eq(ours, "transformer.h.0.ln_1.weight");
    ck_assert_int_eq(ex_hf_name(ours, 27, "h.0.ln_1.weight"), -1);
    ck_assert_int_eq(ex_hf_name(ours, 23, "lm_head.weight"), HF_TIED);
    ck_assert_int_eq(ex_hf_name(ours, 22, "lm_head.weight"), -1);
    ck_assert_int_eq(ex_hf_name(ours, 1, "h.3.attn.bias"), HF_SKIP);
    ck_assert_str_eq(ours, "");
}
END_TEST

START_TEST(ex9_3_transpose) {
    const int shapes[6][2] = {{3, 5}, {5, 3}, {1, 4}, {4, 1}, {16, 48},
                              {7, 7}};
    for (int s = 0; s < 6; s++) {
        int R = shapes[s][0], C = shapes[s][1];
        size_t n = (size_t)R * C;
        float *in = randn_floats(n, 1.0f, 93 + s);
        float *out = alloc_floats(n + 1);
        out[n] = 12345.0f;   // nothing written past the end
        ex_conv1d_transpose(out, in, R, C);
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C; c++)
                ck_assert_msg(out[(size_t)c * R + r] == in[(size_t)r * C + c],
                              "(%d x %d): out[%d][%d] is not inp[%d][%d]",
                              R, C, c, r, r, c);
        ck_assert(out[n] == 12345.0f);
        free(in), free(out);
    }
}
END_TEST

TCase *ex9_3_tcase(void) {
    TCase *tc = tcase_new("ex9.3", "ch9 exercises");
    tcase_add_test(tc, ex9_3_layers_in_both_layouts);
    tcase_add_test(tc, ex9_3_embeddings_norm_and_head);
    tcase_add_test(tc, ex9_3_room_for_the_name);
    tcase_add_test(tc, ex9_3_transpose);
    return tc;
}

// ---- 9.4 GELU, tanh form ---------------------------------------------------

// The contract's formula, in double.
static double gelu_tanh_def(double x) {
    double k = sqrt(2.0 / acos(-1.0));
    return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

// Its derivative by central differences (in double: exact to ~1e-10).
static double gelu_tanh_slope(double x) {
    const double h = 1e-5;
    return (gelu_tanh_def(x + h) - gelu_tanh_def(x - h)) / (2 * h);
}

// n points from -10 to 10, where the two halves of the formula change
START_TEST(ex9_4_forward_against_the_formula) {
    enum { N = 201 };
    float x[N], y[N];
    double want[N];
    for (int i = 0; i < N; i++) {
        x[i] = -10.0f + 0.1f * (float)i;
        want[i] = gelu_tanh_def(x[i]);
    }
    ex_gelu_tanh_forward(y, x, N);
    ck_assert_close("gelu_tanh(x)", y, want, N, 1e-6, 1e-5);
    const float one = 1.0f;   // 0.5 (1 + tanh(sqrt(2/pi) 1.044715))
    ex_gelu_tanh_forward(y, &one, 1);
    ck_assert_float_eq_tol(y[0], 0.8411919906f, 1e-6f);
}
END_TEST

// dinp starts at 1 and gets dout * gelu'(x) added; dout random.
START_TEST(ex9_4_backward_against_finite_differences) {
    enum { N = 201 };
    float x[N], dx[N];
    double want[N];
    float *dout = randn_floats(N, 1.0f, 94);
    for (int i = 0; i < N; i++) {
        x[i] = -10.0f + 0.1f * (float)i;
        dx[i] = 1.0f;
        want[i] = 1.0 + dout[i] * gelu_tanh_slope(x[i]);
    }
    ex_gelu_tanh_backward(dx, dout, x, N);
    ck_assert_close("1 + dout * gelu_tanh'(x)", dx, want, N, 1e-6, 1e-5);
    free(dout);
}
END_TEST

// chapter 3's fixture: x, and F.gelu(x, approximate='tanh') with its
// derivative, tanh.y and tanh.dy
START_TEST(ex9_4_matches_pytorch) {
    Fixture *f = fixture_open("ch3_gelu.txt");
    int shape[FIXTURE_MAX_DIMS];
    ck_assert_int_eq(fixture_dims(f, "x", shape), 1);
    size_t n = (size_t)shape[0];
    const float *x = fixture_get(f, "x", shape, 1);
    const float *gy = fixture_get(f, "tanh.y", shape, 1);
    const float *gdy = fixture_get(f, "tanh.dy", shape, 1);
    float *y = alloc_floats(n), *dx = alloc_floats(n);
    float *dout = randn_floats(n, 1.0f, 95);
    ex_gelu_tanh_forward(y, x, n);
    ck_assert_close_f("gelu_tanh(x) vs PyTorch", y, gy, n, 1e-6, 1e-5);
    double *want = xmalloc(n * sizeof *want);
    for (size_t i = 0; i < n; i++) dx[i] = -2.0f;   // added to
    for (size_t i = 0; i < n; i++) want[i] = -2.0 + (double)dout[i] * gdy[i];
    ex_gelu_tanh_backward(dx, dout, x, n);
    ck_assert_close("-2 + dout * gelu_tanh'(x) vs PyTorch", dx, want, n,
                    2e-6, 1e-5);
    free(want), free(y), free(dx), free(dout);
    fixture_free(f);
}
END_TEST

TCase *ex9_4_tcase(void) {
    TCase *tc = tcase_new("ex9.4", "ch9 exercises");
    tcase_add_test(tc, ex9_4_forward_against_the_formula);
    tcase_add_test(tc, ex9_4_backward_against_finite_differences);
    tcase_add_test(tc, ex9_4_matches_pytorch);
    return tc;
}
