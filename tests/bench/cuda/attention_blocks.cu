// attention_blocks.cu - three versions of the (T, T) way of causal
// self-attention on the GPU, and the fused way, forward and backward
// together, each checked against chapter 2's heads_split,
// attention_forward, attention_backward and heads_merge (on the first
// sequence of the batch: the CPU's side of a full-size check would take
// minutes) and timed:
//
//   v1  the heads copied out of qkv into (B, NH, T, HS) arrays and the
//       output merged back (chapter 2's split and merge), the products
//       strided-batched over the packed heads, the whole T x T square:
//       what the H100 figures of the chapter measured.
//   v2  the heads read where the linear layer puts them, in qkv's rows,
//       one pointer-batched call per product (gemm_grid_cuda), still the
//       whole square: attention.cu with block 0.
//   v3  v2 in causal blocks of `block` query rows (the "block" column
//       here is that, not threads): each product a call per block, over
//       the keys the block's last row sees (the chapter's, block 128).
//
//   v4  fused, never storing the (T, T) weights: in fp32 flash.cu, in
//       bf16 flash_tc.cu on the tensor cores (what ./ch8 --flash and
//       ./ch8 --bf16 --flash run), with the heads split and merged as
//       mha.cu does for them.
//
// In fp32 and in bf16 (the products' operands rounded, as ./ch8 --bf16;
// checked against the fp32 CPU within 2e-2, as the kernel checks' bf16
// ones in chapters/ch8_cuda/kcheck/).
//
// What we expect of v4 in bf16 (not measured yet): its products run on
// the tensor cores as cuBLAS's do, and it moves no (T, T) matrix through
// memory, so it should beat v3 most at T = 1,024, where those passes are
// the largest; its 16-row steps and the softmax through shared memory
// keep it well below cuBLAS's speed per product.
//
// What we expect on a GPU, before measuring. v1 moves the heads twice
// more than v2 (a split of q, k and v, a merge of y, and the same back):
// for nanoGPT's sizes 12 copies of 6.3 million floats, about 0.3 GB a
// step and layer, some 0.1 ms of an H100. v3 at T = 256 and blocks of 128
// computes 3/4 of the square; at T = 1,024, 9/16 at blocks of 128 and
// 17/32 at 64; the softmax passes shrink alike. In bf16, where the
// products are fast and the passes over the weights are most of the time,
// we expect v3 near those fractions of v2's time, blocks of 64 no better
// than 128 (twice the calls, each half the rows), and 256 between 128
// and the whole square. In fp32, the products dominate and the saving
// should follow their share of the square more closely.
//
//   attention_blocks [--small] [--validate-only] [--repeats N]
#include "bench_common.cuh"

extern "C" {
#include "attention.cuh"
#include "flash.cuh"
#include "gemm.cuh"
#include "mha.cuh"
}

// The kernel checks' tolerance for bf16 products against the fp32 CPU
// (STEP_BF16_TOL of chapters/ch8_cuda/kcheck/kcheck_util.cuh).
static const double BF16_TOL = 2e-2;

// The CPU's y (T, C) and dqkv (T, 3C) of one sequence: chapter 2's
// split, attention, merge and back (as check_attention_rows in
// chapters/ch8_cuda/kcheck/check_attention.cu).
static void cpu_attention(float *y, float *dqkv, const float *qkv,
                          const float *dy, int T, int C, int NH) {
    int HS = C / NH;
    size_t tc = (size_t)T * C, na = (size_t)NH * T * T;
    float *h[3], *dh[3];
    for (int j = 0; j < 3; j++) {
        h[j] = (float *)xmalloc(tc * sizeof(float));
        dh[j] = (float *)xcalloc(tc, sizeof(float));
        heads_split(h[j], qkv + j * C, 3 * C, 1, T, C, NH);
    }
    float *yh = (float *)xmalloc(tc * sizeof *yh);
    float *dyh = (float *)xmalloc(tc * sizeof *dyh);
    float *att = (float *)xmalloc(na * sizeof *att);
    float *datt = (float *)xmalloc(na * sizeof *datt);
    if (attention_forward(yh, att, h[0], h[1], h[2], NULL, true, 1, NH, T, T,
                          HS, NULL) != 0) {
        fprintf(stderr, "attention_blocks: bad sizes\n");
        exit(2);
    }
    heads_merge(y, yh, C, 1, T, C, NH);
    heads_split(dyh, dy, C, 1, T, C, NH);
    attention_backward(dh[0], dh[1], dh[2], datt, dyh, att, h[0], h[1], h[2],
                       1, NH, T, T, HS);
    for (int j = 0; j < 3; j++) heads_merge(dqkv + j * C, dh[j], 3 * C, 1, T,
                                            C, NH);
    for (int j = 0; j < 3; j++) free(h[j]), free(dh[j]);
    free(yh), free(dyh), free(att), free(datt);
}

static void bench_size(BenchOpts &o, int B, int NH, int T, int HS,
                       bool bf16, const int *blocks, int nblocks) {
    int C = NH * HS;
    printf("\n-- B = %d, NH = %d, T = %d, HS = %d, %s\n", B, NH, T, HS,
           bf16 ? "bf16 products" : "fp32");
    Rng rng;
    rng_seed(&rng, 11);
    size_t btc = (size_t)B * T * C, na = (size_t)B * NH * T * T;
    float *qkv = bench_randn(&rng, 3 * btc, 0.0f, 1.0f);
    float *dy = bench_randn(&rng, btc, 0.0f, 1.0f);
    size_t tc = (size_t)T * C;   // the first sequence: the CPU's part
    float *want_y = (float *)xmalloc(tc * sizeof(float));
    float *want_d = (float *)xmalloc(3 * tc * sizeof(float));
    cpu_attention(want_y, want_d, qkv, dy, T, C, NH);
    float *d_qkv = bench_to_device(qkv, 3 * btc);
    float *d_dy = bench_to_device(dy, btc);
    float *d_y = cuda_alloc_floats(btc), *d_dqkv = cuda_alloc_floats(3 * btc);
    float *d_att = cuda_alloc_floats(na), *d_datt = cuda_alloc_floats(na);
    float *d_h = cuda_alloc_floats(4 * btc);    // v1: q, k, v, yh
    float *d_dh = cuda_alloc_floats(4 * btc);   // v1: dq, dk, dv, dyh
    HeadsLayout lp = heads_packed(NH, T, HS);
    HeadsLayout lqkv = heads_in_rows(T, 3 * C, HS), ly = heads_in_rows(T, C,
                                                                        HS);
    auto prepare = [&] {
        bench_poison(d_y, btc);
        bench_poison(d_dqkv, 3 * btc);
    };
    auto check = [&] {
        return bench_worse(bench_rel_err(d_y, want_y, tc),
                           bench_rel_err(d_dqkv, want_d, 3 * tc));
    };
    // The rows layout's run: attention.cu as mha.cu calls it.
    auto rows = [&](int block) {
        gemm_bf16_prepare(d_qkv, 3 * btc);
        attention_forward_strided_cuda(d_y, ly, d_att, NULL, d_qkv, lqkv,
                                       d_qkv + C, d_qkv + 2 * C, lqkv, NULL,
                                       true, block, B, NH, T, T, HS);
        gemm_bf16_prepare(d_qkv, 3 * btc);
        attention_backward_strided_cuda(d_dqkv, d_dqkv + C, d_dqkv + 2 * C,
                                        d_datt, d_dy, d_att, d_qkv,
                                        d_qkv + C, d_qkv + 2 * C, lqkv, lqkv,
                                        ly, false, block, B, NH, T, T, HS);
    };
    bool was = gemm_bf16();
    gemm_set_bf16(bf16);
    o.tol = bf16 ? BF16_TOL : BENCH_TOL;
    bench_version(o, "v1: heads split and merged, the whole square", NULL,
                  0, 0, prepare,
                  [&](int) {
                      float *q = d_h, *k = d_h + btc, *v = d_h + 2 * btc;
                      float *yh = d_h + 3 * btc;
                      float *dq = d_dh, *dk = d_dh + btc, *dv = d_dh + 2 * btc;
                      float *dyh = d_dh + 3 * btc;
                      for (int j = 0; j < 3; j++)
                          heads_split_cuda(d_h + j * btc, d_qkv + j * C,
                                           3 * C, B, T, C, NH);
                      attention_forward_strided_cuda(yh, lp, d_att, NULL, q,
                                                     lp, k, v, lp, NULL, true,
                                                     0, B, NH, T, T, HS);
                      heads_merge_cuda(d_y, yh, C, B, T, C, NH);
                      heads_split_cuda(dyh, d_dy, C, B, T, C, NH);
                      attention_backward_strided_cuda(dq, dk, dv, d_datt, dyh,
                                                      d_att, q, k, v, lp, lp,
                                                      lp, false, 0, B, NH, T,
                                                      T, HS);
                      for (int j = 0; j < 3; j++)
                          heads_merge_cuda(d_dqkv + j * C, d_dh + j * btc,
                                           3 * C, B, T, C, NH);
                  },
                  check);
    bench_version(o, "v2: heads in qkv's rows, the whole square", NULL, 0,
                  0, prepare, [&](int) { rows(0); }, check);
    bench_version(o, "v3: heads in qkv's rows, causal blocks (the "
                  "chapter's: 128)", blocks, nblocks, 0, prepare, rows,
                  check);
    float *d_lse = cuda_alloc_floats((size_t)B * NH * T);
    // v4: the heads packed (as mha.cu does for the fused path), forward
    // and backward in the fused kernels; their gradients add, so they
    // are cleared first.
    auto fused = [&](int) {
        float *q = d_h, *k = d_h + btc, *v = d_h + 2 * btc;
        float *yh = d_h + 3 * btc, *dyh = d_dh + 3 * btc;
        for (int j = 0; j < 3; j++)
            heads_split_cuda(d_h + j * btc, d_qkv + j * C, 3 * C, B, T, C,
                             NH);
        if (bf16)
            attention_forward_flash_tc_cuda(yh, d_lse, q, k, v, B, NH, T,
                                            HS);
        else
            attention_forward_flash_cuda(yh, d_lse, q, k, v, B, NH, T, HS);
        heads_merge_cuda(d_y, yh, C, B, T, C, NH);
        heads_split_cuda(dyh, d_dy, C, B, T, C, NH);
        cuda_zero(d_dh, 3 * btc);
        if (bf16)
            attention_backward_flash_tc_cuda(d_dh, d_dh + btc, d_dh + 2 * btc,
                                             dyh, yh, d_lse, q, k, v, B, NH,
                                             T, HS);
        else
            attention_backward_flash_cuda(d_dh, d_dh + btc, d_dh + 2 * btc,
                                          dyh, yh, d_lse, q, k, v, B, NH, T,
                                          HS);
        for (int j = 0; j < 3; j++)
            heads_merge_cuda(d_dqkv + j * C, d_dh + j * btc, 3 * C, B, T, C,
                             NH);
    };
    if (!bf16 || attention_flash_tc_supports(HS))
        bench_version(o, bf16 ? "v4: fused on the tensor cores (flash_tc.cu)"
                              : "v4: fused (flash.cu)",
                      NULL, 0, 0, prepare, fused, check);
    gemm_set_bf16(was);
    o.tol = BENCH_TOL;
    cuda_free(d_lse);
    float *dev[] = {d_qkv, d_dy, d_y, d_dqkv, d_att, d_datt, d_h, d_dh};
    for (float *p : dev) cuda_free(p);
    free(qkv), free(dy), free(want_y), free(want_d);
}

int main(int argc, char **argv) {
    BenchOpts o = bench_parse(argc, argv, "causal attention's (T, T) way "
                              "in three versions and the fused one, "
                              "forward and backward, "
                              "checked against chapter 2's and timed");
    bench_begin("causal attention, forward and backward: v1 split heads, "
                "v2 heads in rows,\nv3 causal blocks (its block column: "
                "query rows per block), v4 fused");
    if (o.small) {
        static const int small[] = {8, 16};   // 37 = 8+8+8+8+5, 16+16+5
        for (int bf16 = 0; bf16 < 2; bf16++)
            bench_size(o, 2, 3, 37, 8, bf16, small, 2);
        bench_size(o, 2, 3, 37, 16, true, small, 2);   // v4 on tensor cores
    } else {
        static const int full[] = {64, 128, 256};
        for (int bf16 = 0; bf16 < 2; bf16++) {
            bench_size(o, 64, 6, 256, 64, bf16, full, 3);    // nanogpt
            bench_size(o, 8, 12, 1024, 64, bf16, full, 3);   // GPT-2's
        }
    }
    return bench_end(o);
}
