// check_norms.cu - the checks of LayerNorm's kernels (layernorm.cu):
// forward and backward, the set form, the forward with its bf16 copy.
#include "kcheck_util.cuh"

extern "C" {
#include "layernorm.cuh"
}

namespace kc {

// sz: B, T, C, bias (0/1). Forward and backward against chapter 4, the
// gradients starting from random values (the += is checked). The CPU sums
// in double and the GPU in float: for rows of up to a few hundred floats
// and columns of a few hundred rows that differs by about 1e-6 relative.
// The smallest row has C = 2 (30 lanes of the warp idle), not C = 1: one
// channel has variance 0, so rstd = 1/sqrt(eps) ~ 316 multiplies the
// rounding of weight*dout - mean(weight*dout), which is exactly 0 on the
// CPU but not where the compiler fuses the product into an FMA (nvcc
// does, and g++ on the emulation may): a degenerate row, not a bug.
void check_layernorm(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1], C = sz[2];
    bool bias = sz[3] != 0;
    report_sizes(rep, "B=%d T=%d C=%d%s", B, T, C, bias ? " bias" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t N = (size_t)B * T, n = N * C;
    float *x = layernorm_input(&rng, n);
    float *w = host_randn(&rng, (size_t)C, 1.0f);
    float *b = host_randn(&rng, (size_t)C, 1.0f);
    float *dy = host_randn(&rng, n, 1.0f), *dx = host_randn(&rng, n, 1.0f);
    float *dw = host_randn(&rng, (size_t)C, 1.0f);
    float *db = host_randn(&rng, (size_t)C, 1.0f);
    float *d_x = to_device(x, n), *d_w = to_device(w, (size_t)C);
    float *d_b = to_device(b, (size_t)C), *d_dy = to_device(dy, n);
    float *d_y = to_device_guarded(NULL, n);
    float *d_mean = to_device_guarded(NULL, N);
    float *d_rstd = to_device_guarded(NULL, N);
    float *d_dx = to_device_guarded(dx, n);
    float *d_dw = to_device_guarded(dw, (size_t)C);
    float *d_db = to_device_guarded(db, (size_t)C);
    float *y = (float *)xmalloc(n * sizeof *y);
    float *mean = (float *)xmalloc(N * sizeof *mean);
    float *rstd = (float *)xmalloc(N * sizeof *rstd);
    float *db0 = host_copy(db, (size_t)C);

    layernorm_forward(y, mean, rstd, x, w, bias ? b : NULL, B, T, C);
    layernorm_backward(dx, dw, bias ? db : NULL, dy, x, w, mean, rstd, B, T,
                       C);
    layernorm_forward_cuda(d_y, d_mean, d_rstd, d_x, d_w, bias ? d_b : NULL,
                           B, T, C);
    layernorm_backward_cuda(d_dx, d_dw, bias ? d_db : NULL, d_dy, d_x, d_w,
                            d_mean, d_rstd, B, T, C);
    compare(rep, "layernorm_forward_cuda: out", d_y, y, n, FP32_TOL);
    compare(rep, "layernorm_forward_cuda: mean", d_mean, mean, N, FP32_TOL);
    compare(rep, "layernorm_forward_cuda: rstd", d_rstd, rstd, N, FP32_TOL);
    compare(rep, "layernorm_backward_cuda: dinp", d_dx, dx, n, FP32_TOL);
    compare(rep, "layernorm_backward_cuda: dweight", d_dw, dw, (size_t)C,
            FP32_TOL);
    // Without a bias, dbias must stay as it was (the CPU's db too).
    compare(rep, bias ? "layernorm_backward_cuda: dbias"
                      : "layernorm_backward_cuda: dbias untouched",
            d_db, bias ? db : db0, (size_t)C, bias ? FP32_TOL : 0.0);
    // The set form: dinp = its gradient alone (the CPU's into zeros),
    // into a buffer of NaN, which must not show; dweight adds up again.
    float *dx0 = (float *)xcalloc(n, sizeof *dx0);
    float *dw0 = (float *)xcalloc((size_t)C, sizeof *dw0);
    layernorm_backward(dx0, dw0, NULL, dy, x, w, mean, rstd, B, T, C);
    float *d_dx_set = nan_guarded(n);
    layernorm_backward_set_cuda(d_dx_set, d_dw, NULL, d_dy, d_x, d_w,
                                d_mean, d_rstd, B, T, C);
    // (With C = 2, x-hat is +-1 whatever the input, and the gradient
    // alone is rounding noise, relative to itself: no test there.)
    if (C > 2)
        compare(rep, "layernorm_backward_set_cuda: dinp", d_dx_set, dx0, n,
                FP32_TOL);
    free(dw0);
    int damage = guard_damage(d_y, n) + guard_damage(d_mean, N)
                 + guard_damage(d_rstd, N) + guard_damage(d_dx, n)
                 + guard_damage(d_dw, (size_t)C) + guard_damage(d_db, (size_t)C)
                 + guard_damage(d_dx_set, n);
    report_value(rep, "layernorm_*_cuda: writes past the end", damage, 0);
    cuda_free_all({d_x, d_w, d_b, d_dy, d_y, d_mean, d_rstd, d_dx, d_dw, d_db,
                   d_dx_set});
    free_all({x, w, b, dy, dx, dw, db, y, mean, rstd, db0, dx0});
}

// sz: B, T, C. layernorm_forward_copy_cuda against chapter 4, with its
// bf16 copy bit for bit the rounding of the fp32 output beside it (and
// nothing written past the copy's end).
void check_layernorm_copy(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1], C = sz[2];
    report_sizes(rep, "B=%d T=%d C=%d", B, T, C);
    Rng rng;
    rng_seed(&rng, seed);
    size_t N = (size_t)B * T, n = N * C;
    float *x = host_randn(&rng, n, 3.0f), *w = host_randn(&rng, C, 1.0f);
    float *b = host_randn(&rng, (size_t)C, 1.0f);
    float *y = (float *)xmalloc(n * sizeof *y);
    float *mean = (float *)xmalloc(N * sizeof *mean);
    float *rstd = (float *)xmalloc(N * sizeof *rstd);
    layernorm_forward(y, mean, rstd, x, w, b, B, T, C);
    float *d_x = to_device(x, n), *d_w = to_device(w, (size_t)C);
    float *d_b = to_device(b, (size_t)C), *d_y = cuda_alloc_floats(n);
    float *d_mean = cuda_alloc_floats(N), *d_rstd = cuda_alloc_floats(N);
    // the copy, and a guard of 64 values after it
    uint16_t *d_y16, guard[64], back[64];
    for (int i = 0; i < 64; i++) guard[i] = 0x7fc1;
    CUDA_CHECK(cudaMalloc((void **)&d_y16, (n + 64) * sizeof *d_y16));
    CUDA_CHECK(cudaMemcpy(d_y16 + n, guard, sizeof guard,
                          cudaMemcpyHostToDevice));
    layernorm_forward_copy_cuda(d_y, d_y16, d_mean, d_rstd, d_x, d_w, d_b, B,
                                T, C);
    compare(rep, "layernorm_forward_copy_cuda: out", d_y, y, n, FP32_TOL);
    CUDA_CHECK(cudaMemcpy(back, d_y16 + n, sizeof back,
                          cudaMemcpyDeviceToHost));
    report_value(rep, "layernorm_forward_copy_cuda: out16 wrong",
                 (double)copy_mismatches(d_y16, d_y, n)
                     + (memcmp(back, guard, sizeof guard) != 0), 0);
    cuda_free_all({d_x, d_w, d_b, d_y, d_mean, d_rstd, d_y16});
    free_all({x, w, b, y, mean, rstd});
}

}   // namespace kc
