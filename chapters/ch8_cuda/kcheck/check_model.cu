// check_model.cu - the checks of the whole model (gpt_cuda.cu): a
// training step's forward and backward passes against chapter 5's on
// the CPU, in each of its forms; and the bf16 copies that the step keeps.
#include "kcheck_util.cuh"

extern "C" {
#include "gemm.cuh"
#include "gpt_cuda.cuh"
#include "mha.cuh"
}

namespace kc {

// sz: B, T, bias (0/1), mode (GPT_DIMS' bits: flash, bf16, blocks of 8,
// heads of 16, GPT-2's tanh GELU). One training step's forward and
// backward passes of a small GPT (2 layers, 4 heads, 48 wide, the
// characters' 65 ids, no dropout: the GPU's masks are not the CPU's) on
// the GPU against chapter 5's gpt_forward and gpt_backward: the loss, the
// logits, and every gradient. Each tensor's gradient is compared as a
// whole (error as compare()'s), and the worst tensor is reported. The
// step chains some 60 kernels and cuBLAS products whose sums run in
// another order than the CPU's, so the gradients get 1e-4 rather than
// 1e-5: what a chain of that many fp32 roundings needs, and still a
// thousand times below what one wrong index gives.
void check_gpt_step(KReport *rep, const int sz[4], uint64_t seed) {
    if (skip_without_bf16(rep, (sz[3] & 2) != 0)) return;
    int B = sz[0], T = sz[1];
    GptConfig cfg = small_gpt(T + 3, 48);
    cfg.bias = sz[2] != 0;
    if (sz[3] & 8) cfg.n_head = 3;   // heads of 16: bf16 flash_tc.cu's
    if (sz[3] & 16) cfg.act = GELU_TANH;   // GPT-2's (chapter 9)
    bool flash = (sz[3] & 1) != 0, bf16 = (sz[3] & 2) != 0;
    int block = (sz[3] & 4) ? ROWS_BLOCK : mha_causal_block();
    report_sizes(rep, "B=%d T=%d%s%s%s%s%s", B, T, cfg.bias ? " bias" : "",
                 flash ? " flash" : "", bf16 ? " bf16" : "",
                 block < T ? " blocks" : "",
                 cfg.act == GELU_TANH ? " tanh" : "");
    // bf16 products: each rounds its operands to 8 bits of mantissa
    // (2^-9 relative), so the step is good to about 1e-2 only (the worst
    // gradient, relative to its tensor's largest, measured 3e-3 to 7.3e-3
    // on an H100 at this size, and 4.7e-3 to 1.2e-2 under the emulation
    // at B = 3 and T = 20 .. 35): STEP_BF16_TOL is above all of those,
    // and a wrong index or a product in the wrong order still gives
    // errors of order 1.
    double tol_fwd = bf16 ? STEP_BF16_TOL : FP32_TOL;
    double tol_bwd = bf16 ? STEP_BF16_TOL : 1e-4;
    Error err;
    Gpt m;
    GptActs a;
    if (gpt_create(&m, &cfg, &err) != 0 || gpt_alloc_grads(&m, &err) != 0
        || gpt_acts_alloc(&a, &cfg, B, T, &err) != 0)
        die("check_gpt_step: %s", err.msg);
    Rng rng;
    rng_seed(&rng, seed);
    gpt_init(&m, &rng);
    spread_1d_weights(&m, &rng);
    size_t bt = (size_t)B * T;
    int *idx = (int *)xmalloc(bt * sizeof *idx);
    int *tgt = (int *)xmalloc(bt * sizeof *tgt);
    for (size_t i = 0; i < bt; i++) {   // some targets ignored (-1)
        idx[i] = (int)rng_below(&rng, GPT_VOCAB);
        tgt[i] = i % 7 == 3 ? -1 : (int)rng_below(&rng, GPT_VOCAB);
    }
    float loss_cpu = 0, loss_gpu = 0;
    if (gpt_forward(&m, &a, idx, tgt, B, T, false, NULL, &loss_cpu, &err))
        die("check_gpt_step: %s", err.msg);
    gpt_zero_grads(&m);
    gpt_backward(&m, &a, idx, tgt);
    GptCuda d;
    GptCudaActs da;
    bool was = gemm_bf16();
    int was_block = mha_causal_block();
    gemm_set_bf16(bf16);
    mha_set_causal_block(block);
    if (gpt_cuda_create(&d, &m, &err) != 0
        || gpt_cuda_acts_alloc(&da, &cfg, B, T, flash, false, &err) != 0)
        die("check_gpt_step: %s", err.msg);
    // Every activation and scratch float starts as NaN: a gradient added
    // into a buffer nobody cleared, or read before it is written, shows.
    size_t nacts = gpt_cuda_acts_floats(&cfg, B, T, flash, false);
    float *nan = (float *)xmalloc(nacts * sizeof *nan);
    for (size_t i = 0; i < nacts; i++) nan[i] = NAN;
    cuda_upload(da.mem, nan, nacts);
    free(nan);
    if (gpt_forward_cuda(&d, &da, idx, tgt, B, T, false, NULL, &loss_gpu,
                         &err) != 0)
        die("check_gpt_step: %s", err.msg);
    compare(rep, "gpt_forward_cuda: logits", da.logits, a.logits,
            bt * GPT_VOCAB, tol_fwd);
    compare_value(rep, "gpt_forward_cuda: loss", loss_gpu, loss_cpu, tol_fwd);
    gpt_backward_cuda(&d, &da);
    gemm_set_bf16(was);
    mha_set_causal_block(was_block);
    // every tensor's gradient; the worst one is the result
    float *g = (float *)xmalloc(m.num_params * sizeof *g);
    cuda_download(g, d.grads, m.num_params);
    double worst = 0;
    const char *worst_name = "";
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *t = &m.tensors[i];
        size_t n = (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
        double e = relative_error(g + t->offset, m.grads + t->offset, n);
        if (worst == worst && !(e <= worst)) worst = e, worst_name = t->name;
    }
    report_value(rep, "gpt_backward_cuda: every grad", worst, tol_bwd);
    if (!(worst <= tol_bwd))
        fprintf(stderr, "  (worst gradient: %s)\n", worst_name);
    free_all({g, idx, tgt});
    gpt_cuda_acts_free(&da);
    gpt_cuda_free(&d);
    gpt_acts_free(&a, &cfg);
    gpt_free(&m);
}

// sz: B, T, flash. In bf16 mode the model keeps the bf16 copies of the
// activations its backward pass multiplies again (gemm_bf16_pin). Two
// runs of the same step: one with activations allocated in fp32 mode,
// so with no room for the copies (the backward pass rounds every
// activation again), one with them, after a forward pass on other tokens
// (whose copies would be stale). The gradients must be the same bits,
// and the backward pass with the copies must round exactly the floats of
// the kept activations fewer: per layer ln_1's and ln_2's outputs, y,
// the GELU's output, and on the (T, T) path qkv (3C a token) and the
// weights; and ln_f's output. A copy not found again shows there, and
// one found stale in the gradients. On the (T, T) path a third run, with
// the copies and causal blocks of 8 rows, must round exactly as many
// floats, forward and backward, as the second: a block's product finds
// its part of every operand in the whole operand's copy.
void check_gpt_bf16_kept(KReport *rep, const int sz[4], uint64_t seed) {
    if (skip_without_bf16(rep, true)) return;
    int B = sz[0], T = sz[1];
    bool flash = sz[2] != 0;
    GptConfig cfg = small_gpt(T, 32);
    report_sizes(rep, "B=%d T=%d bf16%s", B, T, flash ? " flash" : "");
    Error err;
    Gpt m;
    if (gpt_create(&m, &cfg, &err) != 0) die("check_gpt_bf16_kept: %s",
                                              err.msg);
    Rng rng;
    rng_seed(&rng, seed);
    gpt_init(&m, &rng);
    size_t bt = (size_t)B * T;
    int *idx = (int *)xmalloc(bt * sizeof *idx);
    int *other = (int *)xmalloc(bt * sizeof *other);
    int *tgt = (int *)xmalloc(bt * sizeof *tgt);
    for (size_t i = 0; i < bt; i++) {
        idx[i] = (int)rng_below(&rng, GPT_VOCAB);
        other[i] = (int)rng_below(&rng, GPT_VOCAB);
        tgt[i] = (int)rng_below(&rng, GPT_VOCAB);
    }
    GptCuda d;
    if (gpt_cuda_create(&d, &m, &err) != 0)
        die("check_gpt_bf16_kept: %s", err.msg);
    bool was = gemm_bf16();
    int was_block = mha_causal_block();
    float *g[3] = {NULL, NULL, NULL};
    unsigned long long cast[3], cast_step[3];
    for (int run = 0; run < (flash ? 2 : 3); run++) {
        GptCudaActs da;
        int kept = run > 0;
        mha_set_causal_block(run == 2 ? ROWS_BLOCK : was_block);
        gemm_set_bf16(kept == 1);   // on at allocation: room for copies
        if (gpt_cuda_acts_alloc(&da, &cfg, B, T, flash, false, &err) != 0)
            die("check_gpt_bf16_kept: %s", err.msg);
        gemm_set_bf16(true);
        gpt_cuda_zero_grads(&d);
        if (kept && gpt_forward_cuda(&d, &da, other, tgt, B, T, false, NULL,
                                     NULL, &err) != 0)
            die("check_gpt_bf16_kept: %s", err.msg);
        unsigned long long start = gemm_bf16_cast_floats();
        if (gpt_forward_cuda(&d, &da, idx, tgt, B, T, false, NULL, NULL,
                             &err) != 0)
            die("check_gpt_bf16_kept: %s", err.msg);
        unsigned long long before = gemm_bf16_cast_floats();
        gpt_backward_cuda(&d, &da);
        cast[run] = gemm_bf16_cast_floats() - before;
        cast_step[run] = gemm_bf16_cast_floats() - start;
        g[run] = (float *)xmalloc(d.num_params * sizeof(float));
        cuda_download(g[run], d.grads, d.num_params);
        gpt_cuda_acts_free(&da);
    }
    gemm_set_bf16(was);
    mha_set_causal_block(was_block);
    report_value(rep, "bf16 copies kept: gradients differ",
                 (double)bits_differ(g[0], g[1], d.num_params), 0);
    size_t btc = bt * cfg.n_embd, per_layer = 3 * btc + bt * cfg.n_ffn;
    if (!flash) per_layer += 3 * btc + (size_t)B * cfg.n_head * T * T;
    double expect = (double)cfg.n_layer * per_layer + btc;
    report_value(rep, "bf16 copies kept: floats not saved",
                 expect - ((double)cast[0] - (double)cast[1]), 0);
    if (!flash)
        report_value(rep, "bf16 copies kept: more rounded in blocks",
                     (double)cast_step[2] - (double)cast_step[1], 0);
    free_all({g[0], g[1], g[2], idx, other, tgt});
    gpt_cuda_free(&d);
    gpt_free(&m);
}

}   // namespace kc
