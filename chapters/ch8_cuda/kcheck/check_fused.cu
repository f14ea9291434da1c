// check_fused.cu - the checks of the fused forms (activation.cu,
// residual.cu, layernorm.cu, block.cu): each fused kernel against the CPU
// functions it stands for, composed on the host, and a whole step in the
// fused forms against the same step in the plain ones.
#include "kcheck_util.cuh"

extern "C" {
#include "activation.cuh"
#include "block.cuh"
#include "gpt_cuda.cuh"
#include "layernorm.cuh"
#include "linear.cuh"
#include "residual.cuh"
}

namespace kc {

// Each fused kernel against the CPU functions it stands for, composed on
// the host: a plausible slip in it (a bias added twice or not at all,
// GELU's gradient taken at its output, the stream not added, the skip's
// gradient dropped, a mask drawn from the wrong counters) fails one of
// these. Outputs that a kernel sets start as NaN, which must not show,
// and every output is followed by a guard.

// sz: N, F, kind (0 exact, 1 tanh), bias. a = GELU(h + bias) against
// chapter 3's gelu_forward of h + bias, h untouched; dh = da * GELU'(h +
// bias) against gelu_backward (into zeros), and dbias += the column sums
// of dh, in double on the host, and bit for bit what column_sums_cuda
// gives from the kernel's own dh (the fused sums keep its order); the
// bf16 copies bit for bit the rounding of the fp32 results.
void check_bias_gelu(KReport *rep, const int sz[4], uint64_t seed) {
    int N = sz[0], F = sz[1];
    Activation kind = sz[2] ? GELU_TANH : GELU_EXACT;
    bool bias = sz[3] != 0;
    report_sizes(rep, "N=%d F=%d %s%s", N, F, activation_name(kind),
                 bias ? " bias" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t n = (size_t)N * F;
    float *h = host_randn(&rng, n, 2.0f), *da = host_randn(&rng, n, 1.0f);
    float *b = host_randn(&rng, (size_t)F, 1.0f);
    float *db = host_randn(&rng, (size_t)F, 1.0f), *db0 = host_copy(db, F);
    float *hb = (float *)xmalloc(n * sizeof *hb);
    for (size_t i = 0; i < n; i++) hb[i] = h[i] + (bias ? b[i % F] : 0.0f);
    float *a = (float *)xmalloc(n * sizeof *a);
    float *dh = (float *)xcalloc(n, sizeof *dh);
    gelu_forward(a, hb, kind, n);
    gelu_backward(dh, da, hb, kind, n);
    for (int c = 0; c < F && bias; c++) {
        double s = 0;
        for (int r = 0; r < N; r++) s += dh[(size_t)r * F + c];
        db[c] = (float)(db[c] + s);
    }
    float *d_h = to_device_guarded(h, n), *d_da = to_device(da, n);
    float *d_b = to_device(b, (size_t)F);
    float *d_db = to_device_guarded(db0, (size_t)F);
    float *d_db2 = to_device(db0, (size_t)F);
    float *d_a = nan_guarded(n), *d_dh = nan_guarded(n);
    uint16_t *d_a16, *d_dh16;
    CUDA_CHECK(cudaMalloc((void **)&d_a16, (n + 1) * sizeof *d_a16));
    CUDA_CHECK(cudaMalloc((void **)&d_dh16, (n + 1) * sizeof *d_dh16));
    bias_gelu_forward_cuda(d_a, d_a16, d_h, bias ? d_b : NULL, kind, N, F);
    gelu_backward_bias_cuda(d_dh, d_dh16, bias ? d_db : NULL, d_da, d_h,
                            bias ? d_b : NULL, kind, N, F);
    compare(rep, "bias_gelu_forward_cuda: a", d_a, a, n, FP32_TOL);
    compare(rep, "bias_gelu_forward_cuda: h untouched", d_h, h, n, 0.0);
    report_value(rep, "bias_gelu_forward_cuda: a16 wrong",
                 (double)copy_mismatches(d_a16, d_a, n), 0);
    compare(rep, "gelu_backward_bias_cuda: dh", d_dh, dh, n, FP32_TOL);
    report_value(rep, "gelu_backward_bias_cuda: dh16 wrong",
                 (double)copy_mismatches(d_dh16, d_dh, n), 0);
    // (without a bias, dbias is NULL and must stay as it was)
    double tol = FP32_TOL * (N > 100 ? sqrt(N / 100.0) : 1.0);
    compare(rep, bias ? "gelu_backward_bias_cuda: dbias"
                      : "gelu_backward_bias_cuda: dbias untouched",
            d_db, bias ? db : db0, (size_t)F, bias ? tol : 0.0);
    if (bias) {
        column_sums_cuda(d_db2, d_dh, N, F);
        float *sums = (float *)xmalloc((size_t)F * sizeof *sums);
        cuda_download(sums, d_db2, (size_t)F);
        compare(rep, "gelu_backward_bias_cuda: dbias bits", d_db, sums,
                (size_t)F, 0.0);
        free(sums);
    }
    report_value(rep, "bias_gelu_*_cuda: writes past the end",
                 guard_damage(d_a, n) + guard_damage(d_dh, n)
                     + guard_damage(d_h, n) + guard_damage(d_db, F), 0);
    cuda_free_all({d_h, d_da, d_b, d_db, d_db2, d_a, d_dh, d_a16, d_dh16});
    free_all({h, da, b, db, db0, hb, a, dh});
}

// sz: N, C, p (percent), bias. The stream res = x + dropout(y + bias)
// computed in place over y, then LayerNorm(res), against chapter 4's
// residual_forward and layernorm_forward of the same sums and masks
// (dropout's masks drawn on the host from the same counters); and
// sublayer_bias_add_cuda, the same sum without the LayerNorm. A mask
// written with p = 0 shows against its sentinel.
void check_residual_layernorm(KReport *rep, const int sz[4], uint64_t seed) {
    int N = sz[0], C = sz[1];
    float p = (float)sz[2] / 100.0f;
    bool bias = sz[3] != 0;
    report_sizes(rep, "N=%d C=%d p=%.2f%s", N, C, (double)p,
                 bias ? " bias" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t n = (size_t)N * C;
    float *x = host_randn(&rng, n, 1.0f), *y = host_randn(&rng, n, 3.0f);
    for (size_t i = 0; i < n; i++) x[i] += 1.5f;   // a mean to take out
    float *b = host_randn(&rng, (size_t)C, 1.0f);
    float *w = host_randn(&rng, (size_t)C, 1.0f);
    float *lb = host_randn(&rng, (size_t)C, 1.0f);
    float *mask = expected_mask(p, seed, DROPOUT_OFFSET, n);
    float *sentinel = (float *)xmalloc(n * sizeof *sentinel);
    for (size_t i = 0; i < n; i++) sentinel[i] = 7.0f;
    float *dropped = (float *)xmalloc(n * sizeof *dropped);
    float *res = (float *)xmalloc(n * sizeof *res);
    float *norm = (float *)xmalloc(n * sizeof *norm);
    float *mean = (float *)xmalloc((size_t)N * sizeof *mean);
    float *rstd = (float *)xmalloc((size_t)N * sizeof *rstd);
    for (size_t i = 0; i < n; i++)
        dropped[i] = (y[i] + (bias ? b[i % C] : 0.0f)) * mask[i];
    residual_forward(res, x, dropped, n);
    layernorm_forward(norm, mean, rstd, res, w, bias ? lb : NULL, 1, N, C);
    float *d_x = to_device(x, n), *d_b = to_device(b, (size_t)C);
    float *d_w = to_device(w, (size_t)C), *d_lb = to_device(lb, (size_t)C);
    float *d_res = to_device_guarded(y, n), *d_out = to_device_guarded(y, n);
    float *d_norm = nan_guarded(n), *d_mean = nan_guarded((size_t)N);
    float *d_rstd = nan_guarded((size_t)N);
    float *d_mask = to_device_guarded(sentinel, n);
    float *d_mask2 = to_device_guarded(sentinel, n);
    uint16_t *d_norm16;
    CUDA_CHECK(cudaMalloc((void **)&d_norm16, (n + 1) * sizeof *d_norm16));
    residual_layernorm_forward_cuda(d_res, d_norm, d_norm16, d_mean, d_rstd,
                                    d_mask, d_x, d_res, bias ? d_b : NULL, p,
                                    seed, DROPOUT_OFFSET, d_w,
                                    bias ? d_lb : NULL, N, C);
    sublayer_bias_add_cuda(d_out, d_mask2, d_x, bias ? d_b : NULL, p, seed,
                           DROPOUT_OFFSET, N, C);
    compare(rep, "residual_layernorm_forward_cuda: res", d_res, res, n,
            FP32_TOL);
    compare(rep, "residual_layernorm_forward_cuda: norm", d_norm, norm, n,
            FP32_TOL);
    compare(rep, "residual_layernorm_forward_cuda: mean", d_mean, mean,
            (size_t)N, FP32_TOL);
    compare(rep, "residual_layernorm_forward_cuda: rstd", d_rstd, rstd,
            (size_t)N, FP32_TOL);
    compare(rep, p > 0 ? "residual_layernorm_forward_cuda: mask"
                       : "residual_layernorm_forward_cuda: no mask",
            d_mask, p > 0 ? mask : sentinel, n, 0.0);
    report_value(rep, "residual_layernorm_forward_cuda: norm16",
                 (double)copy_mismatches(d_norm16, d_norm, n), 0);
    compare(rep, "sublayer_bias_add_cuda: out", d_out, res, n, FP32_TOL);
    compare(rep, p > 0 ? "sublayer_bias_add_cuda: mask"
                       : "sublayer_bias_add_cuda: no mask",
            d_mask2, p > 0 ? mask : sentinel, n, 0.0);
    report_value(rep, "residual_layernorm, bias_add: past the end",
                 guard_damage(d_res, n) + guard_damage(d_out, n)
                     + guard_damage(d_norm, n) + guard_damage(d_mean, N)
                     + guard_damage(d_rstd, N) + guard_damage(d_mask, n)
                     + guard_damage(d_mask2, n), 0);
    cuda_free_all({d_x, d_b, d_w, d_lb, d_res, d_out, d_norm, d_mean, d_rstd,
                   d_mask, d_mask2, d_norm16});
    free_all({x, y, b, w, lb, mask, sentinel, dropped, res, norm, mean, rstd});
}

// sz: B, T, C, bias. dinp = skip + LayerNorm's gradient, into a dinp of
// NaN, against chapter 4's layernorm_backward adding into a copy of
// skip; then with skip = dinp (adds, in place); dweight and dbias add up.
void check_layernorm_skip(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1], C = sz[2];
    bool bias = sz[3] != 0;
    report_sizes(rep, "B=%d T=%d C=%d%s", B, T, C, bias ? " bias" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t N = (size_t)B * T, n = N * C;
    float *x = layernorm_input(&rng, n);
    float *w = host_randn(&rng, (size_t)C, 1.0f);
    float *dy = host_randn(&rng, n, 1.0f), *skip = host_randn(&rng, n, 1.0f);
    float *dw = host_randn(&rng, (size_t)C, 1.0f);
    float *db = host_randn(&rng, (size_t)C, 1.0f);
    float *y = (float *)xmalloc(n * sizeof *y);
    float *mean = (float *)xmalloc(N * sizeof *mean);
    float *rstd = (float *)xmalloc(N * sizeof *rstd);
    layernorm_forward(y, mean, rstd, x, w, NULL, B, T, C);
    float *d_x = to_device(x, n), *d_w = to_device(w, (size_t)C);
    float *d_dy = to_device(dy, n), *d_skip = to_device(skip, n);
    float *d_mean = to_device(mean, N), *d_rstd = to_device(rstd, N);
    float *d_dw = to_device_guarded(dw, (size_t)C);
    float *d_db = to_device_guarded(db, (size_t)C);
    float *d_dx = nan_guarded(n), *d_dx2 = to_device_guarded(skip, n);
    float *dx = host_copy(skip, n);
    layernorm_backward(dx, dw, bias ? db : NULL, dy, x, w, mean, rstd, B, T,
                       C);
    layernorm_backward_skip_cuda(d_dx, d_skip, d_dw, bias ? d_db : NULL,
                                 d_dy, d_x, d_w, d_mean, d_rstd, B, T, C);
    compare(rep, "layernorm_backward_skip_cuda: dinp", d_dx, dx, n, FP32_TOL);
    compare(rep, "layernorm_backward_skip_cuda: dweight", d_dw, dw, (size_t)C,
            FP32_TOL);
    if (bias)
        compare(rep, "layernorm_backward_skip_cuda: dbias", d_db, db, (size_t)C,
                FP32_TOL);
    layernorm_backward_skip_cuda(d_dx2, d_dx2, d_dw, NULL, d_dy, d_x, d_w,
                                 d_mean, d_rstd, B, T, C);
    compare(rep, "layernorm_backward_skip_cuda: in place", d_dx2, dx, n,
            FP32_TOL);
    report_value(rep, "layernorm_backward_skip_cuda: past the end",
                 guard_damage(d_dx, n) + guard_damage(d_dx2, n)
                     + guard_damage(d_dw, C) + guard_damage(d_db, C), 0);
    cuda_free_all({d_x, d_w, d_dy, d_skip, d_mean, d_rstd, d_dw, d_db, d_dx,
                   d_dx2});
    free_all({x, w, dy, skip, dw, db, y, mean, rstd, dx});
}

// sz: B, T, bias, flash | 2 no dropout. A training step with dropout
// (p = 0.2, which check_gpt_step, against the CPU, cannot use: the GPU's
// masks are not the CPU's), run in the fused forms and in the plain ones
// from the same weights, batch and seed: the same masks, so the same
// loss, logits and gradients to rounding. A fused kernel that drew from
// the wrong counters, or left a mask out going forward or back, differs
// by far more. Without dropout, also the count of what each pass
// launched (cuda_writes: every kernel, memset and upload; the cuBLAS
// products are the same calls in both): the fused forms must save
// exactly what the chapter counts, 4 launches a layer forward and 3
// backward.
void check_fused_vs_plain(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1];
    GptConfig cfg = small_gpt(T + 1, 48);
    cfg.dropout = (sz[3] & 2) ? 0.0f : 0.2f;
    cfg.bias = sz[2] != 0;
    bool flash = (sz[3] & 1) != 0;
    report_sizes(rep, "B=%d T=%d p=%.1f%s%s, fused vs plain", B, T,
                 (double)cfg.dropout, cfg.bias ? " bias" : "",
                 flash ? " flash" : "");
    Error err;
    Gpt m;
    if (gpt_create(&m, &cfg, &err) != 0) die("check_fused_vs_plain: %s",
                                             err.msg);
    Rng rng;
    rng_seed(&rng, seed);
    gpt_init(&m, &rng);
    spread_1d_weights(&m, &rng);   // biases away from 0
    size_t bt = (size_t)B * T;
    int *idx = (int *)xmalloc(bt * sizeof *idx);
    int *tgt = (int *)xmalloc(bt * sizeof *tgt);
    for (size_t i = 0; i < bt; i++) {
        idx[i] = (int)rng_below(&rng, GPT_VOCAB);
        tgt[i] = (int)rng_below(&rng, GPT_VOCAB);
    }
    bool was = block_fused();
    float loss[2], *logits[2], *grads[2];
    long launched[2][2];   // [fused, plain][forward, backward]
    // k = 0 fused, 1 plain, after a step (k = -1, fused) that only warms
    // up: a first step's lazy set-up (a workspace, a buffer grown) must not
    // count as one form's launches
    for (int k = -1; k < 2; k++) {
        GptCuda d;
        GptCudaActs da;
        if (gpt_cuda_create(&d, &m, &err) != 0
            || gpt_cuda_acts_alloc(&da, &cfg, B, T, flash, true, &err) != 0)
            die("check_fused_vs_plain: %s", err.msg);
        block_set_fused(k <= 0);
        Rng r;
        rng_seed(&r, seed + 1);   // the same dropout seed both times
        unsigned long w0 = cuda_writes();
        float warm_loss;   // (the warm-up's, not kept)
        if (gpt_forward_cuda(&d, &da, idx, tgt, B, T, true, &r,
                             k < 0 ? &warm_loss : &loss[k], &err) != 0)
            die("check_fused_vs_plain: %s", err.msg);
        unsigned long w1 = cuda_writes();
        gpt_backward_cuda(&d, &da);
        if (k < 0) {
            gpt_cuda_acts_free(&da);
            gpt_cuda_free(&d);
            continue;
        }
        launched[k][0] = (long)(w1 - w0);
        launched[k][1] = (long)(cuda_writes() - w1);
        logits[k] = (float *)xmalloc(bt * GPT_VOCAB * sizeof(float));
        cuda_download(logits[k], da.logits, bt * GPT_VOCAB);   // dlogits now
        grads[k] = (float *)xmalloc(m.num_params * sizeof(float));
        cuda_download(grads[k], d.grads, m.num_params);
        gpt_cuda_acts_free(&da);
        gpt_cuda_free(&d);
    }
    block_set_fused(was);
    compare_value(rep, "fused vs plain: loss", loss[0], loss[1], FP32_TOL);
    compare_host(rep, "fused vs plain: dlogits", logits[0], logits[1],
                 bt * GPT_VOCAB, FP32_TOL);
    compare_host(rep, "fused vs plain: every grad", grads[0], grads[1],
                 m.num_params, 1e-4);
    if (cfg.dropout == 0) {
        int L = cfg.n_layer;
        report_value(rep, "forward: launches saved - 4 per layer",
                     (double)(launched[1][0] - launched[0][0] - 4 * L), 0);
        report_value(rep, "backward: launches saved - 3 per layer",
                     (double)(launched[1][1] - launched[0][1] - 3 * L), 0);
    }
    free_all({logits[0], logits[1], grads[0], grads[1], idx, tgt});
    gpt_free(&m);
}

// check_gpt_step with the plain forms: the readable ones stay checked
// against the CPU too.
void check_gpt_step_plain(KReport *rep, const int sz[4], uint64_t seed) {
    bool was = block_fused();
    block_set_fused(false);
    check_gpt_step(rep, sz, seed);
    block_set_fused(was);
}

}   // namespace kc
