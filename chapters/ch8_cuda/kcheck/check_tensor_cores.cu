// check_tensor_cores.cu - the checks of the tensor cores: the warp matrix
// API (nvcuda::wmma, emulated by emu/emu.h) used every legal way, a
// kernel that guesses the fragments' layout caught, and the fused
// attention on the tensor cores (flash_tc.cu).
#include "kcheck_util.cuh"

#include <type_traits>

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#endif

namespace kc {

// ---- the warp matrix API --------------------------------------------------

// A (16, K) times B (K, 32), plus C, by two warps (one per 16 columns)
// through wmma, then halved element by element (legal whatever the
// fragment's layout). A is row- or column-major as LA says, B as LB,
// each with a leading dimension larger than its tile; C is loaded in
// either layout (or the accumulator filled with 0.25 instead) and the
// result stored in either.
template <class T, class LA, class LB>
__global__ void wmma_check_kernel(float *out, int ldo, int out_col,
                                  const T *a, int lda, const T *b, int ldb,
                                  const float *c, int ldc, int c_col,
                                  bool fill, int K) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();
#else
    using namespace nvcuda;
    bool a_row = std::is_same<LA, wmma::row_major>::value;
    bool b_row = std::is_same<LB, wmma::row_major>::value;
    int n0 = threadIdx.x / 32 * 16;   // this warp's columns
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    if (fill) wmma::fill_fragment(acc, 0.25f);
    else
        wmma::load_matrix_sync(acc, c + (c_col ? n0 * ldc : n0), ldc,
                               c_col ? wmma::mem_col_major
                                     : wmma::mem_row_major);
    for (int k0 = 0; k0 < K; k0 += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, LA> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, LB> fb;
        wmma::load_matrix_sync(fa, a + (a_row ? k0 : k0 * lda), lda);
        wmma::load_matrix_sync(fb, b + (b_row ? k0 * ldb + n0 : n0 * ldb + k0),
                               ldb);
        wmma::mma_sync(acc, fa, fb, acc);
    }
    for (int i = 0; i < acc.num_elements; i++) acc.x[i] *= 0.5f;
    wmma::store_matrix_sync(out + (out_col ? n0 * ldo : n0), acc, ldo,
                            out_col ? wmma::mem_col_major
                                    : wmma::mem_row_major);
#endif
}

//> wmma-guess
// Wrong on purpose: it takes x[i] of lane l to be element 8 l + i of the
// tile in row-major order (a guess at the layout), to keep the product's
// lower triangle only. The emulation's layout is another, so the check
// must find wrong elements (and so would a GPU, whose layout is another
// again).
__global__ void wmma_positions_kernel(float *out, const __nv_bfloat16 *a,
                                      const __nv_bfloat16 *b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    __trap();
#else
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16,
                   wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16,
                   wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(acc, fa, fb, acc);
    int lane = threadIdx.x % 32;
    for (int i = 0; i < acc.num_elements; i++) {
        int p = lane * acc.num_elements + i;   // the guess
        if (p % 16 > p / 16) acc.x[i] = 0.0f;
    }
    wmma::store_matrix_sync(out, acc, 16, wmma::mem_row_major);
#endif
}
//< wmma-guess

// x rounded to bf16 or (half) fp16, its value and its bits.
static float round16(float x, bool half) {
    return half ? __half2float(__float2half(x))
                : __bfloat162float(__float2bfloat16(x));
}
static uint16_t bits16(float x, bool half) {
    uint16_t u;
    if (half) {
        __half h = __float2half(x);
        memcpy(&u, &h, sizeof u);
    } else {
        __nv_bfloat16 h = __float2bfloat16(x);
        memcpy(&u, &h, sizeof u);
    }
    return u;
}

// A device copy of n host floats rounded to 16 bits (cuda_free()).
static void *to_device16(const float *h, size_t n, bool half) {
    uint16_t *host = (uint16_t *)xmalloc((n ? n : 1) * sizeof *host);
    for (size_t i = 0; i < n; i++) host[i] = bits16(h[i], half);
    void *d = cuda_alloc_floats((n + 1) / 2);
    CUDA_CHECK(cudaMemcpy(d, host, n * 2, cudaMemcpyHostToDevice));
    free(host);
    return d;
}

// Launches wmma_check_kernel with A's and B's layouts chosen at run time.
template <class T>
static void launch_wmma_check(float *out, int ldo, int out_col, const void *a,
                              int lda, int a_col, const void *b, int ldb,
                              int b_col, const float *c, int ldc, int c_col,
                              bool fill, int K) {
    using nvcuda::wmma::col_major;
    using nvcuda::wmma::row_major;
    const T *ta = (const T *)a, *tb = (const T *)b;
    if (!a_col && !b_col)
        LAUNCH((wmma_check_kernel<T, row_major, row_major>), 1, 64, 0, out,
               ldo, out_col, ta, lda, tb, ldb, c, ldc, c_col, fill, K);
    else if (!a_col)
        LAUNCH((wmma_check_kernel<T, row_major, col_major>), 1, 64, 0, out,
               ldo, out_col, ta, lda, tb, ldb, c, ldc, c_col, fill, K);
    else if (!b_col)
        LAUNCH((wmma_check_kernel<T, col_major, row_major>), 1, 64, 0, out,
               ldo, out_col, ta, lda, tb, ldb, c, ldc, c_col, fill, K);
    else
        LAUNCH((wmma_check_kernel<T, col_major, col_major>), 1, 64, 0, out,
               ldo, out_col, ta, lda, tb, ldb, c, ldc, c_col, fill, K);
}

// The nearest half to x by search: every finite half, in order, as a
// double; ties to the even bits; past the largest half by half an ulp
// (65520), infinity. The reference of __float2half.
static uint16_t half_nearest(float x) {
    static double value[0x7c00];
    static bool ready;
    if (!ready) {
        for (int h = 0; h < 0x7c00; h++) {
            int e = h >> 10, m = h & 0x3ff;
            value[h] = e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
        }
        ready = true;
    }
    double a = fabs((double)x);
    uint16_t sign = x < 0 ? 0x8000 : 0;
    if (a >= 65520.0) return sign | 0x7c00;
    int lo = 0, hi = 0x7bff;   // the last value <= a
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (value[mid] <= a) lo = mid;
        else hi = mid - 1;
    }
    int h = lo;
    if (lo < 0x7bff) {
        double below = a - value[lo], above = value[lo + 1] - a;
        if (above < below || (above == below && (lo & 1))) h = lo + 1;
    }
    return sign | (uint16_t)h;
}

// sz: K, type (0 bf16, 1 half), layouts (+1 A column-major, +2 B, +4 C
// loaded column-major, +8 stored so), C (0 loaded, 1 filled with 0.25).
// The product of the rounded operands, in double, halved: the emulated
// sums are fp32 in another order, so within FP32_TOL. And the half
// rounding itself, against the nearest of all the finite halves.
void check_wmma(KReport *rep, const int sz[4], uint64_t seed) {
    if (skip_without_bf16(rep, true)) return;
    int K = sz[0], lay = sz[2];
    bool half = sz[1] != 0, fill = sz[3] != 0;
    int a_col = lay & 1, b_col = lay >> 1 & 1, c_col = lay >> 2 & 1;
    int out_col = lay >> 3 & 1;
    report_sizes(rep, "16x32x%d %s A%c B%c C%c%s out%c", K,
                 half ? "half" : "bf16", "RC"[a_col], "RC"[b_col],
                 "RC"[c_col], fill ? "(fill)" : "", "RC"[out_col]);
    // leading dimensions past the tiles, multiples of 16 bytes
    int lda = a_col ? 24 : K + 8, ldb = b_col ? K + 8 : 40;
    int ldc = c_col ? 20 : 36, ldo = out_col ? 28 : 44;
    Rng rng;
    rng_seed(&rng, seed);
    size_t na = (size_t)(a_col ? K : 16) * lda;
    size_t nb = (size_t)(b_col ? 32 : K) * ldb;
    size_t nc = (size_t)(c_col ? 32 : 16) * ldc;
    size_t no = (size_t)(out_col ? 32 : 16) * ldo;
    float *a = host_randn(&rng, na, 1.0f), *b = host_randn(&rng, nb, 1.0f);
    float *c = host_randn(&rng, nc, 1.0f);
    void *d_a = to_device16(a, na, half), *d_b = to_device16(b, nb, half);
    float *d_c = to_device(c, nc), *d_out = cuda_alloc_floats(no);
    if (half)
        launch_wmma_check<__half>(d_out, ldo, out_col, d_a, lda, a_col, d_b,
                                  ldb, b_col, d_c, ldc, c_col, fill, K);
    else
        launch_wmma_check<__nv_bfloat16>(d_out, ldo, out_col, d_a, lda,
                                         a_col, d_b, ldb, b_col, d_c, ldc,
                                         c_col, fill, K);
    float *got = (float *)xmalloc(no * sizeof *got);
    cuda_download(got, d_out, no);
    float *g = (float *)xmalloc(16 * 32 * sizeof *g);
    float *want = (float *)xmalloc(16 * 32 * sizeof *want);
    for (int i = 0; i < 16; i++)
        for (int n = 0; n < 32; n++) {
            double sum = fill ? 0.25 : c[c_col ? n * ldc + i : i * ldc + n];
            for (int k = 0; k < K; k++)
                sum += (double)round16(a[a_col ? k * lda + i : i * lda + k],
                                       half)
                       * round16(b[b_col ? n * ldb + k : k * ldb + n], half);
            want[i * 32 + n] = (float)(0.5 * sum);
            g[i * 32 + n] = got[out_col ? n * ldo + i : i * ldo + n];
        }
    compare_host(rep, "wmma: 0.5 (A B + C)", g, want, 16 * 32, FP32_TOL);
    if (half) {   // the rounding of __float2half, on the same floats
        size_t bad = 0;
        for (size_t i = 0; i < na; i++) {
            float x = a[i] * (i % 3 == 0 ? 1e-5f : i % 3 == 1 ? 3e4f : 1.0f);
            bad += bits16(x, true) != half_nearest(x);
        }
        report_value(rep, "__float2half: not the nearest", (double)bad, 0);
    }
    cuda_free_all({d_a, d_b, d_c, d_out});
    free_all({a, b, c, got, g, want});
}

// The product of two random 16x16 bf16 tiles through
// wmma_positions_kernel: its lower triangle must come out wrong
// somewhere, or the emulation's layout would let a kernel that guesses
// positions pass.
void check_wmma_positions(KReport *rep, const int sz[4], uint64_t seed) {
    if (skip_without_bf16(rep, true)) return;
    (void)sz;
    report_sizes(rep, "16x16x16");
    Rng rng;
    rng_seed(&rng, seed);
    float *a = host_randn(&rng, 256, 1.0f), *b = host_randn(&rng, 256, 1.0f);
    void *d_a = to_device16(a, 256, false), *d_b = to_device16(b, 256, false);
    float *d_out = cuda_alloc_floats(256), got[256];
    LAUNCH(wmma_positions_kernel, 1, 32, 0, d_out,
           (const __nv_bfloat16 *)d_a, (const __nv_bfloat16 *)d_b);
    cuda_download(got, d_out, 256);
    int wrong = 0;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            double sum = 0;
            for (int k = 0; k < 16; k++)
                sum += (double)round16(a[i * 16 + k], false)
                       * round16(b[k * 16 + j], false);
            double want = j > i ? 0.0 : sum;
            wrong += fabs(got[i * 16 + j] - want) > 1e-4 * (1 + fabs(want));
        }
    report_value(rep, "guessed layout: not caught (0: caught)",
                 wrong > 0 ? 0.0 : 1.0, 0);
    cuda_free_all({d_a, d_b, d_out});
    free(a), free(b);
}

// ---- flash_tc.cu ----------------------------------------------------------

// sz: B, NH, T, HS. check_attention.cu's check of the fused attention, on
// the tensor-core kernels in bf16, held to its tolerance for them.
void check_flash_tc(KReport *rep, const int sz[4], uint64_t seed) {
    if (skip_without_bf16(rep, true)) return;
    check_flash_kernels(rep, sz, seed, true);
}

}   // namespace kc
