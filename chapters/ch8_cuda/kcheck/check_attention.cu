// check_attention.cu - the checks of attention: the softmax and the
// (T, T) way (attention.cu), with its key mask, and strided through qkv
// in fp32 and bf16, by causal blocks; and the fused way (flash.cu; the
// same check runs flash_tc.cu's kernels for check_tensor_cores.cu).
#include "kcheck_util.cuh"

extern "C" {
#include "attention.cuh"
#include "attention.h"
#include "flash.cuh"
#include "gemm.cuh"
#include "mha.cuh"
}

namespace kc {

// sz: N, D. Rows of D values through the softmax and back; the forward
// both into another array and in place (out = inp, as the CPU allows).
void check_softmax(KReport *rep, const int sz[4], uint64_t seed) {
    int N = sz[0], D = sz[1];
    report_sizes(rep, "N=%d D=%d", N, D);
    Rng rng;
    rng_seed(&rng, seed);
    size_t n = (size_t)N * D;
    float *x = host_randn(&rng, n, 3.0f), *dy = host_randn(&rng, n, 1.0f);
    float *dx = host_randn(&rng, n, 1.0f);   // the += is checked too
    float *y = (float *)xmalloc(n * sizeof *y);
    float *d_x = to_device(x, n), *d_dy = to_device(dy, n);
    float *d_dx = to_device(dx, n), *d_y = cuda_alloc_floats(n);
    softmax_forward(y, x, N, D);
    softmax_backward(dx, dy, y, N, D);
    softmax_forward_cuda(d_y, d_x, N, D);
    softmax_backward_cuda(d_dx, d_dy, d_y, N, D);
    compare(rep, "softmax_forward_cuda: out", d_y, y, n, FP32_TOL);
    compare(rep, "softmax_backward_cuda: dinp", d_dx, dx, n, FP32_TOL);
    softmax_forward_cuda(d_x, d_x, N, D);
    compare(rep, "softmax_forward_cuda: in place", d_x, y, n, FP32_TOL);
    cuda_free_all({d_x, d_dy, d_dx, d_y});
    free_all({x, dy, dx, y});
}

// sz: Tq, Tk, HS, flags (1 causal, 2 key mask), for B = 2 sequences of
// NH = 3 heads. The key mask hides key 0 and about a third of the others
// of sequence 0 (so that, with the causal mask and Tq <= Tk, query 0 sees
// no key at all), and every key of sequence 1: rows of zeros that must
// stay zeros, in att, in out and in what they pass back.
void check_attention(KReport *rep, const int sz[4], uint64_t seed) {
    const int B = 2, NH = 3;
    int Tq = sz[0], Tk = sz[1], HS = sz[2];
    bool causal = (sz[3] & 1) != 0, masked = (sz[3] & 2) != 0;
    report_sizes(rep, "Tq=%d Tk=%d HS=%d%s%s", Tq, Tk, HS,
                 causal ? " causal" : "", masked ? " mask" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t nq = (size_t)B * NH * Tq * HS, nk = (size_t)B * NH * Tk * HS;
    size_t na = (size_t)B * NH * Tq * Tk;
    float *q = host_randn(&rng, nq, 1.5f), *k = host_randn(&rng, nk, 1.0f);
    float *v = host_randn(&rng, nk, 1.0f), *dy = host_randn(&rng, nq, 1.0f);
    float *dq = host_randn(&rng, nq, 0.5f), *dk = host_randn(&rng, nk, 0.5f);
    float *dv = host_randn(&rng, nk, 0.5f);   // the += is checked too
    int mask[2 * 64];
    if (Tk > 64) die("check_attention: Tk=%d is over 64", Tk);
    for (int s = 0; s < Tk; s++) {
        mask[s] = s > 0 && rng_uniform(&rng) > 0.35f;
        mask[Tk + s] = 0;
    }
    float *d_q = to_device(q, nq), *d_k = to_device(k, nk);
    float *d_v = to_device(v, nk), *d_dy = to_device(dy, nq);
    float *d_dq = to_device(dq, nq), *d_dk = to_device(dk, nk);
    float *d_dv = to_device(dv, nk);
    float *d_out = cuda_alloc_floats(nq), *d_att = cuda_alloc_floats(na);
    float *d_datt = cuda_alloc_floats(na);
    int *d_mask = cuda_alloc_ints((size_t)B * Tk);
    cuda_upload_ints(d_mask, mask, (size_t)B * Tk);
    float *out = (float *)xmalloc(nq * sizeof *out);
    float *att = (float *)xmalloc(na * sizeof *att);
    float *datt = (float *)xmalloc(na * sizeof *datt);
    Error err;
    if (attention_forward(out, att, q, k, v, masked ? mask : NULL, causal,
                          B, NH, Tq, Tk, HS, &err) != 0)
        die("check_attention: %s", err.msg);
    attention_backward(dq, dk, dv, datt, dy, att, q, k, v, B, NH, Tq, Tk,
                       HS);
    attention_forward_cuda(d_out, d_att, d_q, d_k, d_v,
                           masked ? d_mask : NULL, causal, B, NH, Tq, Tk,
                           HS);
    attention_backward_cuda(d_dq, d_dk, d_dv, d_datt, d_dy, d_att, d_q, d_k,
                            d_v, B, NH, Tq, Tk, HS);
    compare(rep, "attention_forward_cuda: out", d_out, out, nq, FP32_TOL);
    compare(rep, "attention_forward_cuda: att", d_att, att, na, FP32_TOL);
    compare(rep, "attention_backward_cuda: dq", d_dq, dq, nq, FP32_TOL);
    compare(rep, "attention_backward_cuda: dk", d_dk, dk, nk, FP32_TOL);
    compare(rep, "attention_backward_cuda: dv", d_dv, dv, nk, FP32_TOL);
    cuda_free_all({d_q, d_k, d_v, d_dy, d_dq, d_dk, d_dv, d_out, d_att,
                   d_datt, d_mask});
    free_all({q, k, v, dy, dq, dk, dv, out, att, datt});
}

// sz: B, T, HS, mode (0 fp32, 1 bf16, 3 bf16 with qkv cast whole first;
// + 4: the backward pass sets dqkv instead of adding; + 8: causal blocks
// of ROWS_BLOCK rows).
// Causal self-attention of NH = 3 heads read where the linear layer puts
// them, inside a (B, T, 3C) qkv, and written into a (B, T, C) y, as
// mha.cu's (T, T) path calls it, against chapter 2's split, attention
// and merge; dqkv starts from random values (the += is checked, or that
// they do not show when set), and y and dqkv are followed by guards
// (nothing written past them). In bf16
// the products round their operands, which costs a few 1e-3 relative
// (as the whole step): STEP_BF16_TOL. A copy used at the wrong offset
// (k's bf16 values for q, say) or after its source changed gives errors
// of order 1.
// With blocks, the part of att and datt past them must be neither
// written nor read: att starts as NaN, and datt as 1e30 (a NaN written
// over a NaN would not show), so that a read ends in y or dqkv as a NaN
// or a huge error, and a write changes the value.
static const float DATT_POISON = 1e30f;

// The floats of the (B * NH * T, T) weights in att past the causal blocks
// of `block` rows that are no longer `poison` (something wrote there),
// after setting every one of them to want's value, so that a comparison
// looks at the blocks alone.
static int past_blocks(float *att, const float *want, size_t rows, int T,
                       int block, float poison) {
    int written = 0;
    for (size_t r = 0; r < rows; r++) {
        int t = (int)(r % T), end = (t / block + 1) * block;
        for (int j = end; j < T; j++) {
            float x = att[r * T + j];
            written += isnan(poison) ? !isnan(x) : !(x == poison);
            att[r * T + j] = want[r * T + j];
        }
    }
    return written;
}

void check_attention_rows(KReport *rep, const int sz[4], uint64_t seed) {
    const int NH = 3;
    int B = sz[0], T = sz[1], HS = sz[2], C = NH * HS;
    bool bf16 = (sz[3] & 1) != 0, whole = (sz[3] & 2) != 0;
    if (skip_without_bf16(rep, bf16)) return;
    bool set = (sz[3] & 4) != 0;
    int block = (sz[3] & 8) ? ROWS_BLOCK : 0;
    report_sizes(rep, "B=%d T=%d HS=%d%s%s%s%s", B, T, HS, bf16 ? " bf16" : "",
                 whole ? " whole" : "", set ? " set" : "",
                 block ? " blocks" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t btc = (size_t)B * T * C, na = (size_t)B * NH * T * T;
    float *qkv = host_randn(&rng, 3 * btc, 1.0f);
    float *dy = host_randn(&rng, btc, 1.0f);
    float *dqkv = host_randn(&rng, 3 * btc, 0.5f);
    // chapter 2: split, attention, merge; and back
    float *h[3], *dh[3];
    for (int j = 0; j < 3; j++) {
        h[j] = (float *)xmalloc(btc * sizeof(float));
        dh[j] = (float *)xcalloc(btc, sizeof(float));
        heads_split(h[j], qkv + j * C, 3 * C, B, T, C, NH);
    }
    float *yh = (float *)xmalloc(btc * sizeof *yh);
    float *y = (float *)xmalloc(btc * sizeof *y);
    float *dyh = (float *)xmalloc(btc * sizeof *dyh);
    float *att = (float *)xmalloc(na * sizeof *att);
    float *datt = (float *)xmalloc(na * sizeof *datt);
    float *dmerged = (float *)xcalloc(3 * btc, sizeof *dmerged);
    if (attention_forward(yh, att, h[0], h[1], h[2], NULL, true, B, NH, T,
                          T, HS, NULL) != 0)
        die("check_attention_rows: bad sizes %s", rep->sizes);
    heads_merge(y, yh, C, B, T, C, NH);
    heads_split(dyh, dy, C, B, T, C, NH);
    attention_backward(dh[0], dh[1], dh[2], datt, dyh, att, h[0], h[1], h[2],
                       B, NH, T, T, HS);
    for (int j = 0; j < 3; j++)
        heads_merge(dmerged + j * C, dh[j], 3 * C, B, T, C, NH);
    float *d_qkv = to_device(qkv, 3 * btc), *d_dy = to_device(dy, btc);
    float *d_y = to_device_guarded(NULL, btc);
    float *d_dqkv = to_device_guarded(dqkv, 3 * btc);
    for (size_t i = 0; i < 3 * btc; i++)
        dqkv[i] = set ? dmerged[i] : dqkv[i] + dmerged[i];
    float *nan = (float *)xmalloc(na * sizeof *nan);
    for (size_t i = 0; i < na; i++) nan[i] = DATT_POISON;
    float *d_datt = to_device(nan, na);
    for (size_t i = 0; i < na; i++) nan[i] = NAN;
    float *d_att = to_device(nan, na);

    bool was = gemm_bf16();
    gemm_set_bf16(bf16);
    HeadsLayout lqkv = heads_in_rows(T, 3 * C, HS), ly = heads_in_rows(T, C,
                                                                       HS);
    if (whole) gemm_bf16_prepare(d_qkv, 3 * btc);
    attention_forward_strided_cuda(d_y, ly, d_att, NULL, d_qkv, lqkv,
                                   d_qkv + C, d_qkv + 2 * C, lqkv, NULL,
                                   true, block, B, NH, T, T, HS);
    if (whole) gemm_bf16_prepare(d_qkv, 3 * btc);
    attention_backward_strided_cuda(d_dqkv, d_dqkv + C, d_dqkv + 2 * C,
                                    d_datt, d_dy, d_att, d_qkv, d_qkv + C,
                                    d_qkv + 2 * C, lqkv, lqkv, ly, !set,
                                    block, B, NH, T, T, HS);
    gemm_set_bf16(was);
    double tol = bf16 ? STEP_BF16_TOL : FP32_TOL;
    compare(rep, "attention strided: y", d_y, y, btc, tol);
    cuda_download(nan, d_att, na);   // nan: att as computed
    int written = block ? past_blocks(nan, att, (size_t)B * NH * T, T,
                                      block, NAN) : 0;
    compare_host(rep, "attention strided: att", nan, att, na, tol);
    compare(rep, "attention strided: dqkv", d_dqkv, dqkv, 3 * btc, tol);
    report_value(rep, "attention strided: past the end",
                 guard_damage(d_y, btc) + guard_damage(d_dqkv, 3 * btc), 0);
    if (block) {
        cuda_download(nan, d_datt, na);
        written += past_blocks(nan, datt, (size_t)B * NH * T, T, block,
                               DATT_POISON);
        report_value(rep, "attention strided: past the blocks", written, 0);
    }
    cuda_free_all({d_qkv, d_dy, d_y, d_dqkv, d_att, d_datt});
    free_all({qkv, dy, dqkv, yh, y, dyh, att, datt, dmerged, nan, h[0], h[1],
              h[2], dh[0], dh[1], dh[2]});
}

// sz: B, NH, T, HS. The fused causal attention against chapter 2's
// attention_forward and attention_backward (causal, no key mask): out, the
// three gradients (started from random values, so the += is checked), and
// (fp32) lse against the log-sum-exp of each row's scaled scores, computed
// here in double. T above 32 spans several tiles (a partial one last); HS
// above 32 gives a lane more than one float of a row. tc: the
// tensor-core kernels of flash_tc.cu instead of flash.cu's, held to
// FLASH_TC_TOL for bf16's rounding (their lse is not compared).
//
// The tolerance, measured: chapter 2's fp32 attention run on q, k, v and
// dout rounded to bf16 (and nothing else) differs from it on unrounded
// ones by up to 6.8e-3 (out 4.0e-3, dq 6.8e-3, dk 5.5e-3, dv 3.8e-3, the
// worst of 20 seeds at each of these sizes and at T = 256, HS = 64): the
// part of the error that any bf16 kernel has. The kernel, which also
// rounds the weights P and their gradients dS, stayed within 5.0e-3 over
// 11 seeds. 2e-2 is three times the operands' own spread; the wrong
// kernels tried (no online rescale, the causal mask by whole tiles, the
// last partial tile skipped, a __syncwarp missing) err by 7e-2 or more.
static const double FLASH_TC_TOL = 2e-2;

void check_flash_kernels(KReport *rep, const int sz[4], uint64_t seed,
                         bool tc) {
    int B = sz[0], NH = sz[1], T = sz[2], HS = sz[3];
    const char *kind = tc ? "flash_tc_cuda" : "flash_cuda";
    double tol = tc ? FLASH_TC_TOL : FP32_TOL;
    char name[96];
    report_sizes(rep, "B=%d NH=%d T=%d HS=%d%s", B, NH, T, HS,
                 tc ? " bf16" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t n = (size_t)B * NH * T * HS, rows = (size_t)B * NH * T;
    size_t na = rows * T;
    float *q = host_randn(&rng, n, 1.0f), *k = host_randn(&rng, n, 1.0f);
    float *v = host_randn(&rng, n, 1.0f), *dout = host_randn(&rng, n, 1.0f);
    float *dq = host_randn(&rng, n, 1.0f), *dk = host_randn(&rng, n, 1.0f);
    float *dv = host_randn(&rng, n, 1.0f);
    float *d_q = to_device(q, n), *d_k = to_device(k, n);
    float *d_v = to_device(v, n), *d_dout = to_device(dout, n);
    float *d_dq = to_device(dq, n), *d_dk = to_device(dk, n);
    float *d_dv = to_device(dv, n);
    float *d_out = cuda_alloc_floats(n), *d_lse = cuda_alloc_floats(rows);

    float *out = (float *)xmalloc(n * sizeof *out);
    float *att = (float *)xmalloc(na * sizeof *att);
    float *datt = (float *)xmalloc(na * sizeof *datt);
    float *lse = (float *)xmalloc(rows * sizeof *lse);
    if (attention_forward(out, att, q, k, v, NULL, true, B, NH, T, T, HS,
                          NULL) != 0)
        die("check_flash: bad sizes %s", rep->sizes);
    attention_backward(dq, dk, dv, datt, dout, att, q, k, v, B, NH, T, T,
                       HS);
    // lse of row (z, t): over keys 0..t, scores q_t . k_s / sqrt(HS)
    double scale = 1.0 / sqrt((double)HS);
    for (size_t zt = 0; zt < rows; zt++) {
        size_t z = zt / T;
        int t = (int)(zt % T);
        const float *qt = q + zt * HS, *kz = k + z * T * HS;
        double *sc = (double *)xmalloc((size_t)(t + 1) * sizeof *sc);
        double mx = -INFINITY, sum = 0;
        for (int s = 0; s <= t; s++) {
            double dot = 0;
            for (int d = 0; d < HS; d++)
                dot += (double)qt[d] * kz[(size_t)s * HS + d];
            sc[s] = dot * scale;
            mx = sc[s] > mx ? sc[s] : mx;
        }
        for (int s = 0; s <= t; s++) sum += exp(sc[s] - mx);
        lse[zt] = (float)(mx + log(sum));
        free(sc);
    }

    if (tc) {
        attention_forward_flash_tc_cuda(d_out, d_lse, d_q, d_k, d_v, B, NH,
                                        T, HS);
        attention_backward_flash_tc_cuda(d_dq, d_dk, d_dv, d_dout, d_out,
                                         d_lse, d_q, d_k, d_v, B, NH, T, HS);
    } else {
        attention_forward_flash_cuda(d_out, d_lse, d_q, d_k, d_v, B, NH, T,
                                     HS);
        attention_backward_flash_cuda(d_dq, d_dk, d_dv, d_dout, d_out, d_lse,
                                      d_q, d_k, d_v, B, NH, T, HS);
    }
    snprintf(name, sizeof name, "attention_forward_%s: out", kind);
    compare(rep, name, d_out, out, n, tol);
    if (!tc) {
        snprintf(name, sizeof name, "attention_forward_%s: lse", kind);
        compare(rep, name, d_lse, lse, rows, tol);
    }
    const char *grad[3] = {"dq", "dk", "dv"};
    float *d_got[3] = {d_dq, d_dk, d_dv}, *want[3] = {dq, dk, dv};
    for (int j = 0; j < 3; j++) {
        snprintf(name, sizeof name, "attention_backward_%s: %s", kind,
                 grad[j]);
        compare(rep, name, d_got[j], want[j], n, tol);
    }
    cuda_free_all({d_q, d_k, d_v, d_dout, d_dq, d_dk, d_dv, d_out, d_lse});
    free_all({q, k, v, dout, dq, dk, dv, out, att, datt, lse});
}

void check_flash(KReport *rep, const int sz[4], uint64_t seed) {
    check_flash_kernels(rep, sz, seed, false);
}


}   // namespace kc
