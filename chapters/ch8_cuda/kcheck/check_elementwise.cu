// check_elementwise.cu - the checks of the element-wise kernels and the
// copies: GELU (activation.cu), the residual add and the sublayer's
// dropout and add (residual.cu), dropout (dropout.cu), the embedding's
// gather and scatter (embedding.cu), the heads' split and merge (mha.cu).
#include "kcheck_util.cuh"

extern "C" {
#include "activation.cuh"
#include "dropout.cuh"
#include "embedding.cuh"
#include "mha.cuh"
#include "residual.cuh"
}

namespace kc {

// sz: n, kind (0 exact, 1 tanh)
void check_gelu(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    Activation kind = sz[1] ? GELU_TANH : GELU_EXACT;
    report_sizes(rep, "n=%zu %s", n, activation_name(kind));
    Rng rng;
    rng_seed(&rng, seed);
    float *x = host_randn(&rng, n, 2.0f), *dy = host_randn(&rng, n, 1.0f);
    float *dx = host_randn(&rng, n, 1.0f);   // the += is checked too
    float *y = (float *)xmalloc(n * sizeof *y);
    float *dx_cpu = (float *)xmalloc(n * sizeof *dx_cpu);
    memcpy(dx_cpu, dx, n * sizeof *dx);
    gelu_forward(y, x, kind, n);
    gelu_backward(dx_cpu, dy, x, kind, n);
    float *d_x = to_device(x, n), *d_dy = to_device(dy, n);
    float *d_dx = to_device(dx, n), *d_y = cuda_alloc_floats(n);
    gelu_forward_cuda(d_y, d_x, kind, n);
    gelu_backward_cuda(d_dx, d_dy, d_x, kind, n);
    compare(rep, "gelu_forward_cuda: out", d_y, y, n, FP32_TOL);
    compare(rep, "gelu_backward_cuda: dinp", d_dx, dx_cpu, n, FP32_TOL);
    cuda_free_all({d_x, d_dy, d_dx, d_y});
    free_all({x, dy, dx, y, dx_cpu});
}

// sz: n, kind. The feed-forward layer's forms of the GELU kernels: the
// forward with its bf16 copy, and the backward that sets dinp (started
// from random values, which must not show) with its copy; each against
// chapter 3, and each copy bit for bit against the rounding of the fp32
// result beside it.
void check_gelu_copy(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    Activation kind = sz[1] ? GELU_TANH : GELU_EXACT;
    report_sizes(rep, "n=%zu %s", n, activation_name(kind));
    Rng rng;
    rng_seed(&rng, seed);
    float *x = host_randn(&rng, n, 2.0f), *dy = host_randn(&rng, n, 1.0f);
    float *dx = host_randn(&rng, n, 1.0f);   // overwritten, not added to
    float *y = (float *)xmalloc(n * sizeof *y);
    float *dx_cpu = (float *)xcalloc(n, sizeof *dx_cpu);
    gelu_forward(y, x, kind, n);
    gelu_backward(dx_cpu, dy, x, kind, n);
    float *d_x = to_device(x, n), *d_dy = to_device(dy, n);
    float *d_dx = to_device(dx, n), *d_y = cuda_alloc_floats(n);
    uint16_t *d_y16, *d_dx16;
    CUDA_CHECK(cudaMalloc((void **)&d_y16, n * sizeof *d_y16));
    CUDA_CHECK(cudaMalloc((void **)&d_dx16, n * sizeof *d_dx16));
    gelu_forward_copy_cuda(d_y, d_y16, d_x, kind, n);
    gelu_backward_set_cuda(d_dx, d_dx16, d_dy, d_x, kind, n);
    compare(rep, "gelu_forward_copy_cuda: out", d_y, y, n, FP32_TOL);
    report_value(rep, "gelu_forward_copy_cuda: out16 wrong",
                 (double)copy_mismatches(d_y16, d_y, n), 0);
    compare(rep, "gelu_backward_set_cuda: dinp", d_dx, dx_cpu, n, FP32_TOL);
    report_value(rep, "gelu_backward_set_cuda: dinp16 wrong",
                 (double)copy_mismatches(d_dx16, d_dx, n), 0);
    cuda_free_all({d_x, d_dy, d_dx, d_y, d_y16, d_dx16});
    free_all({x, dy, dx, y, dx_cpu});
}

// sz: n. The residual add and its backward pass (+=): one add each, so
// the GPU must give the CPU's floats exactly.
void check_residual(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    report_sizes(rep, "n=%zu", n);
    Rng rng;
    rng_seed(&rng, seed);
    float *a = host_randn(&rng, n, 1.0f), *b = host_randn(&rng, n, 1.0f);
    float *dy = host_randn(&rng, n, 1.0f);
    float *da = host_randn(&rng, n, 1.0f), *db = host_randn(&rng, n, 1.0f);
    float *y = (float *)xmalloc(n * sizeof *y);
    float *d_a = to_device(a, n), *d_b = to_device(b, n);
    float *d_dy = to_device(dy, n), *d_y = to_device_guarded(NULL, n);
    float *d_da = to_device_guarded(da, n), *d_db = to_device_guarded(db, n);
    residual_forward(y, a, b, n);
    residual_backward(da, db, dy, n);
    residual_forward_cuda(d_y, d_a, d_b, n);
    residual_backward_cuda(d_da, d_db, d_dy, n);
    compare(rep, "residual_forward_cuda: out", d_y, y, n, 0.0);
    compare(rep, "residual_backward_cuda: da", d_da, da, n, 0.0);
    compare(rep, "residual_backward_cuda: db", d_db, db, n, 0.0);
    report_value(rep, "residual_*_cuda: writes past the end",
                 guard_damage(d_y, n) + guard_damage(d_da, n)
                     + guard_damage(d_db, n), 0);
    cuda_free_all({d_a, d_b, d_dy, d_y, d_da, d_db});
    free_all({a, b, dy, da, db, y});
}

// How many standard deviations k is from a binomial(n, q)'s mean.
static double binomial_sigmas(size_t k, size_t n, double q) {
    double sd = sqrt((double)n * q * (1.0 - q));
    return ((double)k - (double)n * q) / (sd > 0 ? sd : 1.0);
}

// sz: n, p in percent. dropout_forward_cuda against the mask of
// dropout_uniform on the host, exactly (one multiply: no rounding to
// differ), out of place and in place; dropout_backward_cuda against the
// CPU's dropout_backward with that mask (+=). Then the law of the draws:
// the dropped fraction is within 4 standard deviations of p, and another
// offset or another seed draws another mask (two independent masks
// differ at a fraction 2p(1 - p) of the elements, also within 4 sigma).
// p = 0 must be the identity with a mask of ones, as on the CPU.
void check_dropout(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    float p = (float)sz[1] / 100.0f;
    report_sizes(rep, "n=%zu p=%.2f", n, (double)p);
    Rng rng;
    rng_seed(&rng, seed);
    float *x = host_randn(&rng, n, 1.0f), *dy = host_randn(&rng, n, 1.0f);
    float *dx = host_randn(&rng, n, 1.0f);
    float *mask = expected_mask(p, seed, DROPOUT_OFFSET, n);
    float *y = (float *)xmalloc((n ? n : 1) * sizeof *y);
    for (size_t i = 0; i < n; i++) y[i] = x[i] * mask[i];

    float *d_x = to_device(x, n), *d_dy = to_device(dy, n);
    float *d_y = to_device_guarded(NULL, n);
    float *d_mask = to_device_guarded(NULL, n);
    float *d_dx = to_device_guarded(dx, n);   // before the CPU's +=
    dropout_backward(dx, dy, mask, n);
    dropout_forward_cuda(d_y, d_mask, d_x, p, seed, DROPOUT_OFFSET, n);
    compare(rep, "dropout_forward_cuda: out", d_y, y, n, 0.0);
    compare(rep, "dropout_forward_cuda: mask", d_mask, mask, n, 0.0);
    // In place: out is inp.
    float *d_xy = to_device_guarded(x, n);
    dropout_forward_cuda(d_xy, d_mask, d_xy, p, seed, DROPOUT_OFFSET, n);
    compare(rep, "dropout_forward_cuda: out in place", d_xy, y, n, 0.0);
    // dinp += dout * mask: a multiply and an add, which the GPU may fuse
    // into one rounding, so within FP32_TOL rather than exact.
    dropout_backward_cuda(d_dx, d_dy, d_mask, n);
    compare(rep, "dropout_backward_cuda: dinp", d_dx, dx, n, FP32_TOL);
    // The set form, dinp = dout * mask (one multiply: exact), into a
    // buffer of NaN and in place.
    float *set = (float *)xmalloc((n ? n : 1) * sizeof *set);
    for (size_t i = 0; i < n; i++) set[i] = NAN;
    float *d_set = to_device_guarded(set, n);
    for (size_t i = 0; i < n; i++) set[i] = dy[i] * mask[i];
    dropout_backward_set_cuda(d_set, d_dy, d_mask, n);
    compare(rep, "dropout_backward_set_cuda: dinp", d_set, set, n, 0.0);
    dropout_backward_set_cuda(d_dy, d_dy, d_mask, n);
    compare(rep, "dropout_backward_set_cuda: in place", d_dy, set, n, 0.0);
    report_value(rep, "dropout_*_cuda: writes past the end",
                 guard_damage(d_y, n) + guard_damage(d_mask, n)
                     + guard_damage(d_xy, n) + guard_damage(d_dx, n)
                     + guard_damage(d_set, n), 0);
    cuda_free(d_set);
    free(set);

    if (p > 0.0f) {
        float *got = (float *)xmalloc(n * sizeof *got);
        cuda_download(got, d_mask, n);
        size_t dropped = 0;
        for (size_t i = 0; i < n; i++) dropped += got[i] == 0.0f;
        report_value(rep, "dropout: sigmas of dropped fraction",
                     binomial_sigmas(dropped, n, p), 4.0);
        // Another offset (past the first call's counters), another seed.
        const uint64_t other[2][2] = {{seed, DROPOUT_OFFSET + n},
                                      {seed + 1, DROPOUT_OFFSET}};
        const char *what[2] = {"dropout: another offset, sigmas",
                               "dropout: another seed, sigmas"};
        float *m2 = (float *)xmalloc(n * sizeof *m2);
        for (int k = 0; k < 2; k++) {
            dropout_forward_cuda(d_y, d_mask, d_x, p, other[k][0],
                                 other[k][1], n);
            cuda_download(m2, d_mask, n);
            size_t differ = 0;
            for (size_t i = 0; i < n; i++) differ += (m2[i] == 0.0f)
                                                     != (got[i] == 0.0f);
            report_value(rep, what[k],
                         binomial_sigmas(differ, n, 2.0 * p * (1.0 - p)), 4.0);
        }
        free(got), free(m2);
    }
    cuda_free_all({d_x, d_dy, d_y, d_mask, d_dx, d_xy});
    free_all({x, dy, dx, mask, y});
}

// sz: n, p in percent. sublayer_add_cuda (out = x + dropout(out)) against
// chapter 4's residual add of the CPU's dropout with the mask of
// dropout_uniform, and sublayer_add_backward_cuda against its definition
// (dx += dout, dy += dout * mask). With p = 0 the mask given must be left as
// it was, and the backward pass takes a NULL mask.
void check_sublayer_add(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    float p = (float)sz[1] / 100.0f;
    report_sizes(rep, "n=%zu p=%.2f", n, (double)p);
    Rng rng;
    rng_seed(&rng, seed);
    float *f = host_randn(&rng, n, 1.0f), *x = host_randn(&rng, n, 1.0f);
    float *dout = host_randn(&rng, n, 1.0f);
    float *dx = host_randn(&rng, n, 1.0f), *dy = host_randn(&rng, n, 1.0f);
    float *mask = expected_mask(p, seed, DROPOUT_OFFSET, n);
    float *sentinel = (float *)xmalloc(n * sizeof *sentinel);
    for (size_t i = 0; i < n; i++) sentinel[i] = 7.0f;
    float *d_out = to_device_guarded(f, n), *d_x = to_device(x, n);
    float *d_dout = to_device(dout, n);
    float *d_dx = to_device_guarded(dx, n), *d_dy = to_device_guarded(dy, n);
    float *d_mask = to_device_guarded(sentinel, n);

    float *dropped = (float *)xmalloc(n * sizeof *dropped);
    float *out = (float *)xmalloc(n * sizeof *out);
    for (size_t i = 0; i < n; i++) dropped[i] = f[i] * mask[i];
    residual_forward(out, x, dropped, n);
    for (size_t i = 0; i < n; i++) {   // the backward pass, adding
        dx[i] += dout[i];
        dy[i] += dout[i] * mask[i];      // all ones for p = 0
    }

    sublayer_add_cuda(d_out, d_mask, d_x, p, seed, DROPOUT_OFFSET, n);
    sublayer_add_backward_cuda(d_dx, d_dy, d_dout, p > 0 ? d_mask : NULL,
                               n);
    compare(rep, "sublayer_add_cuda: out", d_out, out, n, FP32_TOL);
    compare(rep, p > 0 ? "sublayer_add_cuda: mask"
                       : "sublayer_add_cuda: mask untouched",
            d_mask, p > 0 ? mask : sentinel, n, 0.0);
    compare(rep, "sublayer_add_backward_cuda: dx", d_dx, dx, n, 0.0);
    compare(rep, "sublayer_add_backward_cuda: dy", d_dy, dy, n, FP32_TOL);
    // The set form, from random values that must not show: dy = dout *
    // mask and dx = dout, then dx += dout (add_dx) and dy = dout * mask.
    float *r1 = host_randn(&rng, n, 1.0f), *r2 = host_randn(&rng, n, 1.0f);
    cuda_upload(d_dx, r1, n);
    cuda_upload(d_dy, r2, n);
    const float *dm = p > 0 ? d_mask : NULL;
    sublayer_add_backward_set_cuda(d_dx, false, d_dy, d_dout, dm, n);
    for (size_t i = 0; i < n; i++) dx[i] = dout[i], dy[i] = dout[i] * mask[i];
    compare(rep, "sublayer_add_backward_set_cuda: dx", d_dx, dx, n, 0.0);
    compare(rep, "sublayer_add_backward_set_cuda: dy", d_dy, dy, n, FP32_TOL);
    cuda_upload(d_dx, r1, n);
    cuda_upload(d_dy, r2, n);
    sublayer_add_backward_set_cuda(d_dx, true, d_dy, d_dout, dm, n);
    for (size_t i = 0; i < n; i++) dx[i] = r1[i] + dout[i];
    compare(rep, "sublayer_add_backward_set_cuda: dx +=", d_dx, dx, n, 0.0);
    compare(rep, "sublayer_add_backward_set_cuda: dy =", d_dy, dy, n, FP32_TOL);
    free(r1), free(r2);
    report_value(rep, "sublayer_add_*_cuda: writes past the end",
                 guard_damage(d_out, n) + guard_damage(d_dx, n)
                     + guard_damage(d_dy, n) + guard_damage(d_mask, n), 0);
    cuda_free_all({d_out, d_x, d_dout, d_dx, d_dy, d_mask});
    free_all({f, x, dout, dx, dy, mask, sentinel, dropped, out});
}

// sz: B, T, C, kind: 0 a GPT's (scale 1, learned positions), 1 chapter
// 7's (scale sqrt(C), the fixed table: dwpos NULL), 2 a GPT's with a
// vocabulary of 300 ids (past EMB_FAST_VOCAB: the other kernel). Else
// the vocabulary is small (23 ids for up to B*T positions), so ids
// repeat and the scatter into dwte must add every repeat; the position
// table has 2 rows more than T, which must stay untouched. Gradients
// start random (+=).
void check_embedding(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1], C = sz[2], V = sz[3] == 2 ? 300 : 23;
    bool fixed = sz[3] == 1;
    float scale = fixed ? sqrtf((float)C) : 1.0f;
    report_sizes(rep, "B=%d T=%d C=%d V=%d%s", B, T, C, V,
                 fixed ? " dwpos=NULL" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t N = (size_t)B * T, n = N * C, nw = (size_t)V * C;
    size_t np = (size_t)(T + 2) * C;
    int *idx = (int *)xmalloc(N * sizeof *idx);
    for (size_t r = 0; r < N; r++) idx[r] = (int)rng_below(&rng, V);
    idx[N - 1] = idx[0];   // at least one repeat, even for B*T = 2
    float *wte = host_randn(&rng, nw, 1.0f);
    float *pos = host_randn(&rng, np, 1.0f);
    float *dout = host_randn(&rng, n, 1.0f);
    float *dwte = host_randn(&rng, nw, 1.0f);
    float *dwpos = host_randn(&rng, np, 1.0f);
    float *out = (float *)xmalloc(n * sizeof *out);
    int *d_idx = cuda_alloc_ints(N);
    cuda_upload_ints(d_idx, idx, N);
    float *d_wte = to_device(wte, nw), *d_pos = to_device(pos, np);
    float *d_dout = to_device(dout, n), *d_out = to_device_guarded(NULL, n);
    float *d_dwte = to_device_guarded(dwte, nw);
    float *d_dwpos = to_device_guarded(dwpos, np);

    embedding_forward(out, idx, wte, scale, pos, B, T, C);
    embedding_backward(dwte, fixed ? NULL : dwpos, dout, idx, scale, B, T,
                       C);
    embedding_forward_cuda(d_out, d_idx, d_wte, scale, d_pos, B, T, C);
    embedding_backward_cuda(d_dwte, fixed ? NULL : d_dwpos, d_dout, d_idx,
                            scale, B, T, C, V);
    compare(rep, "embedding_forward_cuda: out", d_out, out, n, FP32_TOL);
    compare(rep, "embedding_backward_cuda: dwte", d_dwte, dwte, nw, FP32_TOL);
    if (!fixed)
        compare(rep, "embedding_backward_cuda: dwpos", d_dwpos, dwpos, np,
                FP32_TOL);
    report_value(rep, "embedding_*_cuda: writes past the end",
                 guard_damage(d_out, n) + guard_damage(d_dwte, nw)
                     + guard_damage(d_dwpos, np), 0);
    cuda_free_all({d_idx, d_wte, d_pos, d_dout, d_out, d_dwte, d_dwpos});
    free_all({wte, pos, dout, dwte, dwpos, out, idx});
}

// sz: B, T, C, NH. Split the three thirds of a (B, T, 3C) qkv, merge
// back into (B, T, C): pure copies, so they must be exact.
void check_heads(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1], C = sz[2], NH = sz[3];
    report_sizes(rep, "B=%d T=%d C=%d NH=%d", B, T, C, NH);
    Rng rng;
    rng_seed(&rng, seed);
    size_t btc = (size_t)B * T * C;
    float *qkv = host_randn(&rng, 3 * btc, 1.0f);
    float *k = (float *)xmalloc(btc * sizeof *k);
    float *y = host_randn(&rng, btc, 1.0f);
    float *d_qkv = to_device(qkv, 3 * btc), *d_k = cuda_alloc_floats(btc);
    float *d_y = to_device(y, btc);
    heads_split(k, qkv + C, 3 * C, B, T, C, NH);
    heads_split_cuda(d_k, d_qkv + C, 3 * C, B, T, C, NH);
    compare(rep, "heads_split_cuda: out", d_k, k, btc, 0.0);
    heads_merge(y, k, C, B, T, C, NH);
    heads_merge_cuda(d_y, d_k, C, B, T, C, NH);
    compare(rep, "heads_merge_cuda: out", d_y, y, btc, 0.0);
    cuda_free_all({d_qkv, d_k, d_y});
    free_all({qkv, k, y});
}

}   // namespace kc
