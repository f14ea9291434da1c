// check_products.cu - the checks of the matrix products: the linear
// layer (linear.cu) and gemm.cu's products in bf16: the rounding, single
// and batched products, the grid of heads, the bf16 copies kept and
// found again.
#include "kcheck_util.cuh"

extern "C" {
#include "gemm.cuh"
#include "gemm.h"
#include "linear.cuh"
}

namespace kc {

// sz: N, C_in, C_out, bias (0/1). The products are cuBLAS's; a sum over
// C_in or N terms in another order differs by a few ulps of the terms, so
// the tolerance grows with the length of the sum (sqrt of it, rounding
// being a random walk) but stays at 1e-5 for sums of up to 100 terms.
void check_linear(KReport *rep, const int sz[4], uint64_t seed) {
    int N = sz[0], Ci = sz[1], Co = sz[2];
    bool bias = sz[3] != 0;
    report_sizes(rep, "N=%d Cin=%d Cout=%d%s", N, Ci, Co, bias ? " bias" : "");
    Rng rng;
    rng_seed(&rng, seed);
    size_t ni = (size_t)N * Ci, nw = (size_t)Co * Ci, no = (size_t)N * Co;
    float *x = host_randn(&rng, ni, 1.0f), *w = host_randn(&rng, nw, 0.1f);
    float *b = host_randn(&rng, (size_t)Co, 0.1f);
    float *dy = host_randn(&rng, no, 1.0f), *dx = host_randn(&rng, ni, 1.0f);
    float *dw = host_randn(&rng, nw, 1.0f);
    float *db = host_randn(&rng, (size_t)Co, 1.0f);
    float *d_x = to_device(x, ni), *d_w = to_device(w, nw);
    float *d_b = to_device(b, (size_t)Co), *d_dy = to_device(dy, no);
    float *d_dx = to_device(dx, ni), *d_dw = to_device(dw, nw);
    float *d_db = to_device(db, (size_t)Co), *d_y = cuda_alloc_floats(no);
    float *y = (float *)xmalloc(no * sizeof *y);
    linear_forward(y, x, w, bias ? b : NULL, N, Ci, Co);
    linear_backward(dx, dw, bias ? db : NULL, dy, x, w, N, Ci, Co);
    linear_forward_cuda(d_y, d_x, d_w, bias ? d_b : NULL, N, Ci, Co);
    linear_backward_cuda(d_dx, d_dw, bias ? d_db : NULL, d_dy, d_x, d_w, N,
                         Ci, Co);
    int longest = N > Ci ? (N > Co ? N : Co) : (Ci > Co ? Ci : Co);
    double tol = FP32_TOL * (longest > 100 ? sqrt(longest / 100.0) : 1.0);
    compare(rep, "linear_forward_cuda: out", d_y, y, no, tol);
    compare(rep, "linear_backward_cuda: dinp", d_dx, dx, ni, tol);
    compare(rep, "linear_backward_cuda: dweight", d_dw, dw, nw, tol);
    if (bias)
        compare(rep, "linear_backward_cuda: dbias", d_db, db, (size_t)Co, tol);
    // The set form: dinp (random again, which must not show) gets the
    // gradient alone, the CPU's from a cleared dinp; dweight still adds.
    float *dx0 = host_randn(&rng, ni, 1.0f);
    cuda_upload(d_dx, dx0, ni);
    memset(dx, 0, ni * sizeof *dx);
    linear_backward(dx, dw, bias ? db : NULL, dy, x, w, N, Ci, Co);
    linear_backward_set_cuda(d_dx, d_dw, bias ? d_db : NULL, d_dy, d_x, d_w,
                             N, Ci, Co);
    compare(rep, "linear_backward_set_cuda: dinp", d_dx, dx, ni, tol);
    compare(rep, "linear_backward_set_cuda: dweight", d_dw, dw, nw, tol);
    free(dx0);
    cuda_free_all({d_x, d_w, d_b, d_dy, d_dx, d_dw, d_db, d_y});
    free_all({x, w, b, dy, dx, dw, db, y});
}

// sz: n. bf16_round_cuda against bf16_nearest on n floats: random ones
// over 60 binary orders of magnitude, exact ties (the dropped 16 bits
// 0x8000, a kept part odd half the time), and the edges (zeros,
// subnormals, the largest floats, whose ties round to infinity, the
// infinities, NaN). The result is the number of floats rounded to
// another bf16 than the nearest: it must be 0.
void check_bf16_round(KReport *rep, const int sz[4], uint64_t seed) {
    size_t n = (size_t)sz[0];
    report_sizes(rep, "n=%zu", n);
    static const uint32_t edges[] = {
        0x00000000u, 0x80000000u, 0x00000001u, 0x00008000u, 0x00018000u,
        0x007fffffu, 0x00800000u, 0x7f7fffffu, 0xff7f8000u, 0x7f7f7fffu,
        0x7f800000u, 0xff800000u, 0x7fc00000u, 0x3f808000u, 0x3f818000u};
    int n_edges = (int)(sizeof edges / sizeof edges[0]);
    Rng rng;
    rng_seed(&rng, seed);
    float *x = host_randn(&rng, n, 1.0f);
    for (size_t i = 0; i < n; i++) {
        float v = ldexpf(x[i], (int)rng_below(&rng, 61) - 30);
        uint32_t u;
        memcpy(&u, &v, sizeof u);
        if (i % 4 == 1) u = (u & 0xffff0000u) | 0x8000u;   // a tie
        if (i % 4 == 2) u = (u & 0xffff0000u) | (rng_u32(&rng) & 0xffffu);
        if (i < (size_t)n_edges) u = edges[i];
        memcpy(&x[i], &u, sizeof u);
    }
    float *d_x = to_device(x, n);
    uint16_t *d_h = (uint16_t *)cuda_alloc_floats(n / 2 + 1);
    uint16_t *h = (uint16_t *)xmalloc((n ? n : 1) * sizeof *h);
    int bad = 0;
    // from x (aligned: four floats per thread) and from x + 1 (one each)
    for (size_t skip = 0; skip < 2 && skip < n; skip++) {
        size_t m = n - skip;
        bf16_round_cuda(d_h + skip, d_x + skip, m);
        CUDA_CHECK(cudaMemcpy(h, d_h + skip, m * sizeof *h,
                              cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < m; i++) {
            float xi = x[skip + i];
            uint16_t want = bf16_nearest(xi);
            if (isnan(xi) ? !isnan(bf16_value(h[i])) : h[i] != want) bad++;
        }
    }
    report_value(rep, "bf16_round_cuda: not the nearest", bad, 0);
    cuda_free(d_x), cuda_free(d_h);
    free(x), free(h);
}

// sz: M, N, K, mode (bit 0: trans_a, bit 1: trans_b, bit 2: a batch of 3
// through gemm_batched_cuda). gemm_cuda in bf16 mode against the CPU's
// gemm() on the same operands rounded to bf16 first (bf16_nearest),
// alpha 1.25 and beta 0.5 over a random C. A product of two bf16 values
// is exact in fp32, so only the fp32 additions differ: on the tensor
// cores in their own order, and with the products aligned by truncation,
// hence 5e-5 rather than 1e-5 (for K up to a few hundred). Operands that
// were not rounded give about 1e-3, twenty times that.
void check_gemm_bf16(KReport *rep, const int sz[4], uint64_t seed) {
    if (skip_without_bf16(rep, true)) return;
    int M = sz[0], N = sz[1], K = sz[2];
    bool ta = sz[3] & 1, tb = (sz[3] & 2) != 0, batched = (sz[3] & 4) != 0;
    int batch = batched ? 3 : 1;
    report_sizes(rep, "M=%d N=%d K=%d%s%s%s", M, N, K, ta ? " A^T" : "",
                 tb ? " B^T" : "", batched ? " x3" : "");
    int lda = ta ? M : K, ldb = tb ? K : N;
    size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    Rng rng;
    rng_seed(&rng, seed);
    float *A = host_randn(&rng, na * batch, 1.0f);
    float *B = host_randn(&rng, nb * batch, 1.0f);
    float *C = host_randn(&rng, nc * batch, 1.0f);
    float *d_A = to_device(A, na * batch), *d_B = to_device(B, nb * batch);
    float *d_C = to_device(C, nc * batch);
    round_bf16(A, na * batch);
    round_bf16(B, nb * batch);
    for (int i = 0; i < batch; i++)
        gemm(ta, tb, M, N, K, 1.25f, A + i * na, lda, B + i * nb, ldb, 0.5f,
             C + i * nc, N);
    bool was = gemm_bf16();
    gemm_set_bf16(true);
    if (batched)
        gemm_batched_cuda(ta, tb, M, N, K, 1.25f, d_A, lda, (long long)na,
                          d_B, ldb, (long long)nb, 0.5f, d_C, N,
                          (long long)nc, batch);
    else
        gemm_cuda(ta, tb, M, N, K, 1.25f, d_A, lda, d_B, ldb, 0.5f, d_C, N);
    gemm_set_bf16(was);
    compare(rep, batched ? "gemm_batched_cuda, bf16: C" : "gemm_cuda, bf16: C",
            d_C, C, nc * batch, 5e-5);
    cuda_free_all({d_A, d_B, d_C});
    free_all({A, B, C});
}

// sz: M, N, K, mode (bit 0: bf16, bit 1: rows of odd width). A grid of 3
// sequences by 3 heads, each a (M, K) @ (K, N) product, the heads of A
// and B side by side in the rows of one array (as attention's q and k in
// qkv) and C's the same; alpha 1.25 and beta 0.5 over a random C; against
// the CPU's gemm() per product (on operands rounded to bf16 in bf16
// mode, within 5e-5 as check_gemm_bf16). With heads of a width that is a
// multiple of 8 floats, every matrix starts 16-byte aligned and the grid
// must be one pointer-batched call: one launch, the table's (counted on
// a second call: the first may also grow the table, and must not lose
// the operands' copies doing so, which the second would cast again);
// with odd
// widths (bit 1) no launch of a table at all, but a strided call per
// head, since cuBLAS's fast kernels assume aligned matrices (and the
// emulated cuBLAS refuses any other).
void check_gemm_grid(KReport *rep, const int sz[4], uint64_t seed) {
    int M = sz[0], N = sz[1], K = sz[2];
    bool bf16 = (sz[3] & 1) != 0, odd = (sz[3] & 2) != 0;
    if (skip_without_bf16(rep, bf16)) return;
    const int outer = 3, inner = 3;   // 9: an odd count of pointers
    // each head's columns: K (A) and N (B, C), rounded up to a multiple
    // of 8 (aligned), or that plus 1 (odd)
    int wa = (K + 7) / 8 * 8 + odd, wb = (N + 7) / 8 * 8 + odd;
    int lda = inner * wa, ldb = inner * wb, ldc = inner * wb;
    report_sizes(rep, "M=%d N=%d K=%d %s%s", M, N, K, bf16 ? "bf16" : "fp32",
                 odd ? " odd" : "");
    size_t na = (size_t)outer * M * lda, nb = (size_t)outer * K * ldb;
    size_t nc = (size_t)outer * M * ldc;
    Rng rng;
    rng_seed(&rng, seed);
    float *A = host_randn(&rng, na, 1.0f), *B = host_randn(&rng, nb, 1.0f);
    float *C = host_randn(&rng, nc, 1.0f);
    float *d_A = to_device(A, na), *d_B = to_device(B, nb);
    float *d_C = to_device(C, nc);
    if (bf16) {
        round_bf16(A, na);
        round_bf16(B, nb);
    }
    for (int i = 0; i < outer; i++)
        for (int j = 0; j < inner; j++)
            gemm(false, false, M, N, K, 1.25f,
                 A + (size_t)i * M * lda + j * wa, lda,
                 B + (size_t)i * K * ldb + j * wb, ldb, 0.5f,
                 C + (size_t)i * M * ldc + j * wb, ldc);
    bool was = gemm_bf16();
    gemm_set_bf16(bf16);
    if (bf16) {   // the operands' copies first: the launches below are the
                  // grid's own
        gemm_bf16_prepare(d_A, na);
        gemm_bf16_prepare(d_B, nb);
    }
    auto grid = [&] {
        gemm_grid_cuda(false, false, M, N, K, 1.25f, d_A, lda,
                       (long long)M * lda, wa, d_B, ldb, (long long)K * ldb,
                       wb, 0.5f, d_C, ldc, (long long)M * ldc, wb, outer,
                       inner);
    };
    grid();
    compare(rep, "gemm_grid_cuda: C", d_C, C, nc, bf16 ? 5e-5 : FP32_TOL);
    // the launches of a second call (the first may allocate the table)
    unsigned long before = cuda_writes();
    grid();
    unsigned long launches = cuda_writes() - before;
    gemm_set_bf16(was);
    report_value(rep, odd ? "gemm_grid_cuda: tables written"
                          : "gemm_grid_cuda: tables written but one",
                 fabs((double)launches - (odd ? 0 : 1)), 0);
    cuda_free_all({d_A, d_B, d_C});
    free_all({A, B, C});
}

// sz: n. gemm.cu keeps the bf16 copies of its last operands and uses
// them again while nothing can have changed them. With square (n, n)
// matrices: C = A @ B^T (both cast); then A = B @ B^T, a product whose
// operands are both in hand (so A's copy stays) and whose output is A,
// and C = A @ B^T again; then B changed by an upload and C = A @ B^T a
// third time; each against the CPU on the operands of the moment. A copy
// kept past its source's change makes the second or third product wrong
// by far more than 5e-5.
void check_gemm_bf16_reuse(KReport *rep, const int sz[4], uint64_t seed) {
    if (skip_without_bf16(rep, true)) return;
    int M = sz[0], N = M, K = M;
    report_sizes(rep, "n=%d", M);
    size_t na = (size_t)M * K, nb = (size_t)N * K, nc = (size_t)M * N;
    Rng rng;
    rng_seed(&rng, seed);
    float *A = host_randn(&rng, na, 1.0f), *B = host_randn(&rng, nb, 1.0f);
    float *B2 = host_randn(&rng, nb, 1.0f);
    float *C = (float *)xmalloc(nc * sizeof *C);
    float *d_A = to_device(A, na), *d_B = to_device(B, nb);
    float *d_C = cuda_alloc_floats(nc);
    bool was = gemm_bf16();
    gemm_set_bf16(true);
    const char *names[3] = {"gemm_cuda, bf16: C, operands cast",
                            "gemm_cuda, bf16: C after A changed",
                            "gemm_cuda, bf16: C after B changed"};
    for (int round = 0; round < 3; round++) {
        if (round == 1) {   // A = B @ B^T, a product into a cached operand
            gemm_cuda(false, true, M, K, N, 1.0f, d_B, K, d_B, K, 0.0f, d_A,
                      K);
            cuda_download(A, d_A, na);   // what the GPU computed for A
        }
        if (round == 2) {   // B replaced by an upload
            memcpy(B, B2, nb * sizeof *B);
            cuda_upload(d_B, B, nb);
        }
        gemm_cuda(false, true, M, N, K, 1.0f, d_A, K, d_B, K, 0.0f, d_C, N);
        float *Ar = host_copy(A, na), *Br = host_copy(B, nb);
        round_bf16(Ar, na);
        round_bf16(Br, nb);
        gemm(false, true, M, N, K, 1.0f, Ar, K, Br, K, 0.0f, C, N);
        compare(rep, names[round], d_C, C, nc, 5e-5);
        free(Ar), free(Br);
    }
    gemm_set_bf16(was);
    cuda_free_all({d_A, d_B, d_C});
    free_all({A, B, B2, C});
}

// sz: n. The copies found inside other copies, and made beside their
// source. X is (n, 2n); A is its left half and B its right half, each an
// (n, n) matrix with rows 2n apart, as attention's q and k lie in qkv.
// After gemm_bf16_prepare(X), C = A @ B^T must find both inside X's
// copy, at their offsets (a copy used from its start gives B = A). Then
// X changes, with its new copy made beside it (gemm_bf16_copy_begin and
// _end, as attention's softmax does): the old copy must go, and the next
// product must see the new values; then another array changes the same
// way, and X's copy may stay: the product is right either way.
void check_gemm_bf16_views(KReport *rep, const int sz[4], uint64_t seed) {
    if (skip_without_bf16(rep, true)) return;
    int n = sz[0];
    report_sizes(rep, "n=%d", n);
    size_t nx = (size_t)n * 2 * n, nc = (size_t)n * n;
    Rng rng;
    rng_seed(&rng, seed);
    float *X = host_randn(&rng, nx, 1.0f), *X2 = host_randn(&rng, nx, 1.0f);
    float *C = (float *)xmalloc(nc * sizeof *C);
    float *d_X = to_device(X, nx), *d_C = cuda_alloc_floats(nc);
    float *d_other = cuda_alloc_floats(nc);
    bool was = gemm_bf16();
    gemm_set_bf16(true);
    gemm_bf16_prepare(d_X, nx);
    const char *names[3] = {"gemm_cuda, bf16: views of one copy",
                            "gemm_cuda, bf16: copy made beside",
                            "gemm_cuda, bf16: write elsewhere"};
    for (int round = 0; round < 3; round++) {
        unsigned long before = cuda_writes();
        if (round == 1) {
            memcpy(X, X2, nx * sizeof *X);
            uint16_t *copy = gemm_bf16_copy_begin(d_X, nx, NULL);
            cuda_upload(d_X, X, nx);
            bf16_round_cuda(copy, d_X, nx);
            gemm_bf16_copy_end(before, d_X, nx);
        }
        if (round == 2) {
            uint16_t *copy = gemm_bf16_copy_begin(d_other, nc, NULL);
            cuda_upload(d_other, X2, nc);
            bf16_round_cuda(copy, d_other, nc);
            gemm_bf16_copy_end(before, d_other, nc);
        }
        gemm_cuda(false, true, n, n, n, 1.0f, d_X, 2 * n, d_X + n, 2 * n,
                  0.0f, d_C, n);
        float *Xr = host_copy(X, nx);
        round_bf16(Xr, nx);
        gemm(false, true, n, n, n, 1.0f, Xr, 2 * n, Xr + n, 2 * n, 0.0f, C,
             n);
        compare(rep, names[round], d_C, C, nc, 5e-5);
        free(Xr);
    }
    gemm_set_bf16(was);
    cuda_free_all({d_X, d_C, d_other});
    free_all({X, X2, C});
}

}   // namespace kc
