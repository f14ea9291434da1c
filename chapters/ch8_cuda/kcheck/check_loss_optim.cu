// check_loss_optim.cu - the checks of the loss and the optimizer:
// cross-entropy (crossentropy.cu), AdamW tensor by tensor and in one
// launch, the gradient's norm and its clipping (optim.cu).
#include "kcheck_util.cuh"

extern "C" {
#include "crossentropy.cuh"
#include "optim.cuh"
}

namespace kc {

// sz: N, V, which targets are -1 (0 none, 1 about a third, 2 all),
// logits (0 normal(0, 2), 1 the same plus 1000: an exp of an unshifted
// logit overflows). The backward pass runs twice: into its own buffer
// (started from random values, since it overwrites) and in place.
//
// The tolerance of the gradient with logits near 1000: the CPU rounds the
// row's logsumexp (about 1000) to a float before its exps, an error of up
// to half a float ulp of it, 2^-24 * |lse|, which every probability it
// computes carries as a relative error; the kernel never forms that
// float (it takes exp(x - max) / s). So that case allows 1e-5 plus
// 2^-24 * max |lse| (about 6e-5); an overflowing exp still gives NaN.
void check_xent(KReport *rep, const int sz[4], uint64_t seed) {
    int N = sz[0], V = sz[1], ignore = sz[2];
    bool large = sz[3] != 0;
    report_sizes(rep, "N=%d V=%d%s%s", N, V,
                 ignore == 2 ? " all -1" : ignore ? " some -1" : "",
                 large ? " x~1e3" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t nv = (size_t)N * V;
    float *x = host_randn(&rng, nv, 2.0f);
    if (large)
        for (size_t i = 0; i < nv; i++) x[i] += 1000.0f;
    int *tg = (int *)xmalloc((size_t)N * sizeof *tg);
    for (int n = 0; n < N; n++) {
        bool skip = ignore == 2 || (ignore == 1 && rng_below(&rng, 3) == 0);
        tg[n] = skip ? -1 : (int)rng_below(&rng, (uint32_t)V);
    }
    if (ignore == 1) tg[0] = -1, tg[N - 1] = 0;   // both kinds, surely
    double max_lse = 0;
    for (int n = 0; n < N; n++) {
        const float *row = x + (size_t)n * V;
        float mx = row[0];
        for (int v = 1; v < V; v++) mx = row[v] > mx ? row[v] : mx;
        double s = 0;
        for (int v = 0; v < V; v++) s += exp((double)row[v] - mx);
        max_lse = fmax(max_lse, fabs(mx + log(s)));
    }
    int *d_tg = cuda_alloc_ints((size_t)N);
    cuda_upload_ints(d_tg, tg, (size_t)N);
    float *d_x = to_device(x, nv);

    int valid = -1, valid_gpu = -1;
    float loss = crossentropy_forward(x, tg, N, V, &valid);
    float loss_gpu = crossentropy_forward_cuda(d_x, d_tg, N, V, &valid_gpu);
    compare_value(rep, "crossentropy_forward_cuda: loss", loss_gpu, loss,
                  FP32_TOL);
    compare_value(rep, "crossentropy_forward_cuda: n_valid", valid_gpu, valid,
                  0.0);

    float scale = valid ? 1.0f / (float)valid : 0.37f;
    float *dx = host_randn(&rng, nv, 1.0f);
    float *d_dx = to_device(dx, nv);
    crossentropy_backward(dx, x, tg, N, V, scale);
    crossentropy_backward_cuda(d_dx, d_x, d_tg, N, V, scale);
    double tol = large ? FP32_TOL + ldexp(max_lse, -24) : FP32_TOL;
    compare(rep, "crossentropy_backward_cuda: dlogits", d_dx, dx, nv, tol);
    crossentropy_backward_cuda(d_x, d_x, d_tg, N, V, scale);   // in place
    compare(rep, "crossentropy_backward_cuda: in place", d_x, dx, nv, tol);
    cuda_free_all({d_tg, d_x, d_dx});
    free_all({x, tg, dx});
}

// The AdamW of the checks: GPT's betas, weight decay wd, and a learning
// rate large enough that each step is a good part of a weight.
static const float ADAMW_LR = 1e-2f;
static AdamWConfig adamw_config(float wd) {
    AdamWConfig c = {.beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f,
                     .weight_decay = wd};
    return c;
}

// sz: n, the first step t, weight decay in hundredths. Three AdamW steps,
// t, t + 1, t + 2, each with new gradients; m and v start at zero for
// t = 1 and as after earlier steps otherwise. The learning rate, 1e-2,
// and weights of std 0.02 make each step a good part of a weight, so
// that a slip in the order (the decay applied after the step moves a
// weight by lr * wd * step, 1e-5 here) shows beyond the 1e-5 of max |p|.
void check_adamw(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    int t0 = sz[1];
    float wd = (float)sz[2] / 100.0f;
    AdamWConfig c = adamw_config(wd);
    report_sizes(rep, "n=%zu t=%d..%d wd=%g", n, t0, t0 + 2, (double)wd);
    Rng rng;
    rng_seed(&rng, seed);
    float *p = host_randn(&rng, n, 0.02f), *m = host_randn(&rng, n, 0.05f);
    float *v = host_randn(&rng, n, 0.1f);
    for (size_t i = 0; i < n; i++) {
        v[i] = t0 == 1 ? 0.0f : v[i] * v[i];   // v >= 0: squares
        if (t0 == 1) m[i] = 0.0f;
    }
    float *d_p = to_device(p, n), *d_m = to_device(m, n);
    float *d_v = to_device(v, n), *d_g = cuda_alloc_floats(n);
    for (int t = t0; t < t0 + 3; t++) {
        float *g = host_randn(&rng, n, 0.1f);
        cuda_upload(d_g, g, n);
        adamw_update(p, g, m, v, n, t, ADAMW_LR, wd, &c);
        adamw_update_cuda(d_p, d_g, d_m, d_v, n, t, ADAMW_LR, wd, &c);
        free(g);
    }
    compare(rep, "adamw_update_cuda: p", d_p, p, n, FP32_TOL);
    compare(rep, "adamw_update_cuda: m", d_m, m, n, FP32_TOL);
    compare(rep, "adamw_update_cuda: v", d_v, v, n, FP32_TOL);
    cuda_free_all({d_p, d_m, d_v, d_g});
    free_all({p, m, v});
}

// sz: n, clipping (0 off: max_norm 0; 1 on: max_norm half the norm; 2 on
// but not needed: max_norm twice the norm). The norm is compared at
// n * 2^-53: both sides add the same exact squares in double, in
// different orders, and n roundings of the sum bound the difference; a
// float sum anywhere would miss it by far.
void check_norm(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    int mode = sz[1];
    report_sizes(rep, "n=%zu clip %s", n,
                 mode == 0 ? "off" : mode == 1 ? "on" : "unneeded");
    Rng rng;
    rng_seed(&rng, seed);
    float *g = host_randn(&rng, n, 1.0f);
    float *d_g = to_device(g, n), *d_g2 = to_device(g, n);
    double norm = grad_norm(g, n), norm_gpu = grad_norm_cuda(d_g, n);
    double tol = ldexp((double)n, -53);
    compare_value(rep, "grad_norm_cuda", norm_gpu, norm, tol);
    float max_norm = mode == 0 ? 0.0f : (float)norm * (mode == 1 ? 0.5f
                                                                  : 2.0f);
    double before = clip_grad_norm(g, n, max_norm);
    double before_gpu = clip_grad_norm_cuda(d_g, n, max_norm);
    compare_value(rep, "clip_grad_norm_cuda: norm", before_gpu, before, tol);
    compare(rep, "clip_grad_norm_cuda: g", d_g, g, n, FP32_TOL);
    // the same in a graph's two halves (the clipping decided on the
    // device): the same norm and the same g, bit for bit
    clip_grad_norm_launch_cuda(d_g2, n, max_norm);
    report_value(rep, "clip launch + read: norm, vs direct",
                 grad_norm_read_cuda() - before_gpu, 0);
    float *g1 = (float *)xmalloc(n * sizeof *g1);
    float *g2 = (float *)xmalloc(n * sizeof *g2);
    cuda_download(g1, d_g, n);
    cuda_download(g2, d_g2, n);
    report_value(rep, "clip launch + read: g bits, vs direct",
                 (double)bits_differ(g1, g2, n), 0);
    cuda_free_all({d_g, d_g2});
    free_all({g, g1, g2});
}

// sz: tensors, the largest's floats, first t, wd (1/100). The one-launch
// AdamW over a buffer of that many tensors (sizes drawn below the
// largest, every other one decayed; the largest is past what the grid's
// 64 blocks of 256 threads cover in one pass, so their stride is
// checked) against adamw_update on the host, tensor by tensor, for three
// steps.
void check_adamw_many(KReport *rep, const int sz[4], uint64_t seed) {
    int k = sz[0], t0 = sz[2];
    size_t largest = (size_t)sz[1];
    float wd = (float)sz[3] / 100.0f;
    AdamWConfig c = adamw_config(wd);
    report_sizes(rep, "%d tensors t=%d..%d wd=%g", k, t0, t0 + 2, (double)wd);
    Rng rng;
    rng_seed(&rng, seed);
    AdamWRange *r = (AdamWRange *)xcalloc((size_t)k, sizeof *r);
    size_t n = 0;
    for (int i = 0; i < k; i++) {
        r[i].offset = n;
        r[i].n = i == k / 2 ? largest : 1 + rng_below(&rng, 700);
        r[i].decay = i % 2 == 0;
        n += r[i].n;
    }
    float *p = host_randn(&rng, n, 0.02f), *m = host_randn(&rng, n, 0.05f);
    float *v = host_randn(&rng, n, 0.1f);
    for (size_t i = 0; i < n; i++) v[i] *= v[i];
    float *d_p = to_device(p, n), *d_m = to_device(m, n);
    float *d_v = to_device(v, n), *d_g = cuda_alloc_floats(n);
    AdamWRange *d_r;
    CUDA_CHECK(cudaMalloc((void **)&d_r, (size_t)k * sizeof *d_r));
    CUDA_CHECK(cudaMemcpy(d_r, r, (size_t)k * sizeof *r,
                          cudaMemcpyHostToDevice));
    for (int t = t0; t < t0 + 3; t++) {
        float *g = host_randn(&rng, n, 0.1f);
        cuda_upload(d_g, g, n);
        for (int i = 0; i < k; i++) {
            size_t o = r[i].offset;
            adamw_update(p + o, g + o, m + o, v + o, r[i].n, t, ADAMW_LR,
                         r[i].decay ? wd : 0.0f, &c);
        }
        adamw_update_many_cuda(d_p, d_g, d_m, d_v, d_r, k, largest, t,
                               ADAMW_LR, wd, &c);
        free(g);
    }
    compare(rep, "adamw_update_many_cuda: p", d_p, p, n, FP32_TOL);
    compare(rep, "adamw_update_many_cuda: m", d_m, m, n, FP32_TOL);
    compare(rep, "adamw_update_many_cuda: v", d_v, v, n, FP32_TOL);
    cuda_free_all({d_p, d_m, d_v, d_g, d_r});
    free_all({p, m, v, r});
}

}   // namespace kc
