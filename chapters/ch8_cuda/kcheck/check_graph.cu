// check_graph.cu - the check of a training step recorded as a CUDA
// graph (runtime.cu) and replayed, against the step launched directly.
#include "kcheck_util.cuh"

extern "C" {
#include "crossentropy.cuh"
#include "gemm.cuh"
#include "gpt_cuda.cuh"
#include "optim.cuh"
#include "runtime.cuh"
}

namespace kc {

// sz: B, T, bf16, flash. A training step recorded as a graph
// (runtime.cuh) against the same step launched directly: recording runs
// nothing (the gradients, NaN before it, are NaN after), a replay gives
// the direct step's loss, norm and gradients bit for bit, and after
// another batch is copied up, a replay of the same graph gives the
// direct step on that batch, bit for bit: the graph reads the batch
// where the recording found it, not what it was then. Under the
// emulation, a copy to or from the host or a release inside the step
// stops the recording with an error, as on the GPU.
void check_gpt_graph(KReport *rep, const int sz[4], uint64_t seed) {
    int B = sz[0], T = sz[1];
    bool bf16 = sz[2] != 0, flash = sz[3] != 0;
    if (skip_without_bf16(rep, bf16)) return;
    GptConfig cfg = small_gpt(T, 48);
    report_sizes(rep, "B=%d T=%d%s%s, graph", B, T, bf16 ? " bf16" : "",
                 flash ? " flash" : "");
    Error err;
    Gpt m;
    if (gpt_create(&m, &cfg, &err) != 0) die("check_gpt_graph: %s", err.msg);
    Rng rng;
    rng_seed(&rng, seed);
    gpt_init(&m, &rng);
    size_t bt = (size_t)B * T, np = m.num_params;
    int *idx = (int *)xmalloc(2 * bt * sizeof *idx);
    int *tgt = (int *)xmalloc(2 * bt * sizeof *tgt);
    // two batches, their targets -1 at the same places: the same count
    // of targets, which is the backward pass's scale
    for (size_t i = 0; i < 2 * bt; i++) {
        idx[i] = (int)rng_below(&rng, GPT_VOCAB);
        tgt[i] = i % bt % 5 == 1 ? -1 : (int)rng_below(&rng, GPT_VOCAB);
    }
    bool was = gemm_bf16();
    gemm_set_bf16(bf16);
    GptCuda d;
    GptCudaActs da;
    if (gpt_cuda_create(&d, &m, &err) != 0
        || gpt_cuda_acts_alloc(&da, &cfg, B, T, flash, false, &err) != 0)
        die("check_gpt_graph: %s", err.msg);
    const float max_norm = 0.05f;   // small: the step clips
    float *want[2], loss[2], got_loss[2];
    double norm[2], got_norm[2];
    for (int k = 0; k < 2; k++) {   // the direct steps on both batches
        if (gpt_step_prepare_cuda(&d, &da, idx + k * bt, tgt + k * bt, B, T,
                                  true, NULL, &err) != 0)
            die("check_gpt_graph: %s", err.msg);
        gpt_step_launches_cuda(&d, &da, max_norm);
        loss[k] = crossentropy_forward_read_cuda((int)bt, NULL);
        norm[k] = grad_norm_read_cuda();
        want[k] = (float *)xmalloc(np * sizeof(float));
        cuda_download(want[k], d.grads, np);
    }
    gemm_bf16_reserve();
    float *nan = (float *)xmalloc(np * sizeof *nan), *got;
    for (size_t i = 0; i < np; i++) nan[i] = NAN;
    got = (float *)xmalloc(np * sizeof *got);
    if (gpt_step_prepare_cuda(&d, &da, idx, tgt, B, T, true, NULL, &err))
        die("check_gpt_graph: %s", err.msg);
    cuda_upload(d.grads, nan, np);
    unsigned long frees = cuda_frees();
    cuda_capture_begin();
    gpt_step_launches_cuda(&d, &da, max_norm);
    CudaGraph *g = cuda_capture_end();
    cuda_download(got, d.grads, np);
    size_t ran = 0;
    for (size_t i = 0; i < np; i++) ran += !isnan(got[i]);
    report_value(rep, "recording: gradients written", (double)ran, 0);
    report_value(rep, "recording: buffers released",
                 (double)(cuda_frees() - frees), 0);
    for (int k = 0; k < 2; k++) {
        if (k == 1 && gpt_step_prepare_cuda(&d, &da, idx + bt, tgt + bt, B,
                                            T, true, NULL, &err) != 0)
            die("check_gpt_graph: %s", err.msg);
        cuda_graph_launch(g);
        got_loss[k] = crossentropy_forward_read_cuda((int)bt, NULL);
        got_norm[k] = grad_norm_read_cuda();
        cuda_download(got, d.grads, np);
        report_value(rep, k ? "replay, batch 2: grads not the same bits"
                            : "replay: grads not the same bits",
                     (double)bits_differ(got, want[k], np), 0);
    }
    report_value(rep, "replays: loss and norm not the same bits",
                 (got_loss[0] != loss[0]) + (got_loss[1] != loss[1])
                     + (got_norm[0] != norm[0]) + (got_norm[1] != norm[1]),
                 0);
    report_value(rep, "the batches' losses the same (must differ)",
                 loss[0] == loss[1], 0);
    cuda_graph_free(g);
    gemm_set_bf16(was);
    free_all({want[0], want[1], nan, got, idx, tgt});
    gpt_cuda_acts_free(&da);
    gpt_cuda_free(&d);
    gpt_free(&m);
}

}   // namespace kc
