// gemm_tiles.c - the matrix products of a training step, written for this
// CPU's vector unit (AVX-512, or AVX2 with FMA). gemm() in gemm.c sends
// the products here when the build has one of the two; gemm_naive's triple
// loop is still the definition, and the tests hold this file to it.
//
// Why not only OpenBLAS. The products of chapter 6's default model are
// tall and thin: 2,048 rows (a batch's tokens) times a few hundred
// columns, summed over 128 or 512. OpenBLAS's inner kernel runs them near
// the core's peak, but around it every call copies ("packs") both operands
// into its own layout, splits the work in a way that depends on the
// thread count, and clears C before it adds to it: about a third of the
// products' time in a profile of a default step. Here only what must be
// rearranged is:
//
//   - C is cut into tiles of MR rows by NR columns (12 x 32 with AVX-512:
//     24 of its 32 vector registers hold a tile's sums; 6 x 16 with AVX2:
//     12 of 16). A tile's sums stay in registers for the whole of K, then
//     are written once: C = alpha * sum + beta * C, C never read when
//     beta is 0.
//   - Step k of a tile multiplies MR numbers of A (one per row) by NR of
//     B (one row of op(B)): MR broadcasts, two vector loads and 2 MR fused
//     multiply-adds. The MR numbers are read where they lie, from MR rows
//     of A; only a transposed A, or a last row of tiles with fewer than
//     MR rows, is first gathered k-major into a small buffer. B's row is
//     read where it lies when op(B) is B itself, and from a copy made
//     once per call when it is B^T (the weights of the forward pass:
//     small).
//   - Each element of C is summed by one thread, in the order k = 0, 1,
//     ..., K-1, whatever the number of threads: the results are the same
//     bits on 1 thread and on 64. Threads share the rows of tiles.
#include "gemm.h"

#include <stdlib.h>
#include <string.h>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#ifdef _OPENMP
#include <omp.h>
#endif

//> gemm-tile-kernel
#ifdef __AVX512F__
#define VW 16                                  // floats in a vector
#define MR 12                                  // a tile's rows
typedef __m512 Vec;
typedef __mmask16 Mask;
#define vzero() _mm512_setzero_ps()
#define vset1(x) _mm512_set1_ps(x)
#define vfma(a, b, c) _mm512_fmadd_ps(a, b, c)
#define vmul(a, b) _mm512_mul_ps(a, b)
#define vadd(a, b) _mm512_add_ps(a, b)
#define vload(p) _mm512_loadu_ps(p)
#define vstore(p, v) _mm512_storeu_ps(p, v)
#define vmask(n) ((Mask)((n) >= VW ? 0xFFFF : (1u << ((n) > 0 ? (n) : 0)) - 1))
#define vload_m(p, m) _mm512_maskz_loadu_ps(m, p)
#define vstore_m(p, v, m) _mm512_mask_storeu_ps(p, m, v)
#else
#define VW 8
#define MR 6
typedef __m256 Vec;
typedef __m256i Mask;
#define vzero() _mm256_setzero_ps()
#define vset1(x) _mm256_set1_ps(x)
#define vfma(a, b, c) _mm256_fmadd_ps(a, b, c)
#define vmul(a, b) _mm256_mul_ps(a, b)
#define vadd(a, b) _mm256_add_ps(a, b)
#define vload(p) _mm256_loadu_ps(p)
#define vstore(p, v) _mm256_storeu_ps(p, v)
static inline Mask vmask(int n) {      // lanes 0..n-1 on (sign bit set)
    __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane);
}
#define vload_m(p, m) _mm256_maskload_ps(p, m)
#define vstore_m(p, v, m) _mm256_maskstore_ps(p, m, v)
#endif
#define NR (2 * VW)                            // a tile's columns
#define KC 256                                 // steps of K at a time
#define TILES_MAX_COPY ((size_t)1 << 20)       // floats of B^T: 4 MiB

// One tile: C[r][0..nr) for r < mr, from K steps. Row r of op(A) has its
// k-th number at a[r * ar + k * ak]: ar = 1, ak = MR for rows gathered
// k-major into a buffer, ar = lda, ak = 1 for rows of A read where they
// lie. Step k's row of op(B) starts at b + k * bs and has NR readable
// floats (tail 0) or nr, read under a mask (tail 1). Inlined with ar, ak
// (for a buffer) and tail constants, so that the full tiles' loop has no
// test in it and the compiler keeps all 2 MR sums in registers (the loops
// over r are unrolled: every index is a constant).
static inline __attribute__((always_inline))
void tile_body(int K, const float *a, size_t ar, size_t ak, const float *b,
               size_t bs, float *c, int ldc, int mr, int nr, float alpha,
               float beta, const int tail) {
    Vec s[MR][2];
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) s[r][0] = s[r][1] = vzero();
    Mask m0 = vmask(nr), m1 = vmask(nr - VW);
    for (int k = 0; k < K; k++, b += bs, a += ak) {
        Vec b0 = tail ? vload_m(b, m0) : vload(b);
        Vec b1 = tail ? vload_m(b + VW, m1) : vload(b + VW);
#pragma GCC unroll 16
        for (int r = 0; r < MR; r++) {
            Vec x = vset1(a[r * ar]);
            s[r][0] = vfma(x, b0, s[r][0]);
            s[r][1] = vfma(x, b1, s[r][1]);
        }
    }
    Vec va = vset1(alpha), vb = vset1(beta);
#pragma GCC unroll 16
    for (int r = 0; r < MR; r++) {
        if (r >= mr) break;
        float *cr = c + (size_t)r * ldc;
        Vec c0 = vmul(va, s[r][0]), c1 = vmul(va, s[r][1]);
        if (beta != 0.0f) {
            c0 = vadd(c0, vmul(vb, tail ? vload_m(cr, m0) : vload(cr)));
            c1 = vadd(c1, vmul(vb, tail ? vload_m(cr + VW, m1)
                                        : vload(cr + VW)));
        }
        if (tail) {
            vstore_m(cr, c0, m0);
            vstore_m(cr + VW, c1, m1);
        } else {
            vstore(cr, c0);
            vstore(cr + VW, c1);
        }
    }
}

// rows from the k-major buffer: a full tile, and one of nr < NR columns
static void tile_full(int K, const float *a, const float *b, size_t bs,
                      float *c, int ldc, int mr, float alpha, float beta) {
    tile_body(K, a, 1, MR, b, bs, c, ldc, mr, NR, alpha, beta, 0);
}

static void tile_tail(int K, const float *a, const float *b, size_t bs,
                      float *c, int ldc, int mr, int nr, float alpha,
                      float beta) {
    tile_body(K, a, 1, MR, b, bs, c, ldc, mr, nr, alpha, beta, 1);
}

// MR whole rows of A (not transposed) read in place, lda apart: a full
// tile, and one of nr < NR columns
static void tile_rows(int K, const float *a, int lda, const float *b,
                      size_t bs, float *c, int ldc, float alpha, float beta) {
    tile_body(K, a, (size_t)lda, 1, b, bs, c, ldc, MR, NR, alpha, beta, 0);
}

static void tile_rows_tail(int K, const float *a, int lda, const float *b,
                           size_t bs, float *c, int ldc, int nr, float alpha,
                           float beta) {
    tile_body(K, a, (size_t)lda, 1, b, bs, c, ldc, MR, nr, alpha, beta, 1);
}
//< gemm-tile-kernel

// Rows i0 .. i0+mr of op(A), k-major into a (K x MR), zeros past mr.
static void pack_a(bool trans_a, int K, const float *A, int lda, int i0,
                   int mr, float *a) {
    if (trans_a) {                 // op(A)[i][k] = A[k][i]: rows of A
        for (int k = 0; k < K; k++) {
            const float *src = A + (size_t)k * lda + i0;
            for (int r = 0; r < MR; r++) a[k * MR + r] = r < mr ? src[r] : 0;
        }
    } else {
        for (int r = 0; r < MR; r++) {
            if (r >= mr) {               // (no pointer past A's rows)
                for (int k = 0; k < K; k++) a[k * MR + r] = 0;
                continue;
            }
            const float *src = A + (size_t)(i0 + r) * lda;
            for (int k = 0; k < K; k++) a[k * MR + r] = src[k];
        }
    }
}

// The calling thread's buffer for a call's copies, kept from one call to
// the next and grown to the largest need: after a training step's first
// products, the steps allocate nothing (a promise of chapter 6's trainer,
// which its tests hold).
static _Thread_local float *scratch;
static _Thread_local size_t scratch_floats;

static float *scratch_for(size_t n) {
    if (n > scratch_floats) {
        free(scratch);
        scratch = malloc(n * sizeof *scratch);
        scratch_floats = scratch ? n : 0;
    }
    return scratch;
}

bool gemm_tiles(bool trans_a, bool trans_b, int M, int N, int K,
                float alpha, const float *A, int lda, const float *B,
                int ldb, float beta, float *C, int ldc) {
    int panels = (N + NR - 1) / NR, row_tiles = (M + MR - 1) / MR;
    // Threads when there is enough work for them, and not already inside
    // a parallel loop (the attention core calls gemm per head from its
    // own threads): a fork and join costs a few microseconds.
    int threads = 1;
#ifdef _OPENMP
    if (!omp_in_parallel())
        threads = omp_get_max_threads();
#endif
    // op(B)'s rows: B's own rows when B is not transposed (a last, narrower
    // panel read under a mask); when it is, a copy made panel by panel
    // (K x NR each, zero-padded), shared by the threads. The buffer holds
    // that copy, then each thread's gathered rows of A (MR x K, or x KC),
    // and is found before C is touched: a failure leaves C as it was.
    size_t bt_size = trans_b ? (size_t)panels * NR * K : 0;
    // A B^T of more than 4 MiB (a weight matrix far larger than this
    // course's models have: 1024 x 16384 would be 64 MiB) is left to
    // OpenBLAS, which copies it a piece at a time: the programs' memory
    // estimates count no such copy.
    if (bt_size > TILES_MAX_COPY) return false;
    size_t a_size = (size_t)MR * (size_t)(K > 2 * KC ? KC : K > 0 ? K : 1);
    float *bt = scratch_for(bt_size + a_size * (size_t)threads);
    if (!bt) return false;
    float *a_all = bt + bt_size;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads) if (threads > 1)
#endif
    {
        float *a = a_all;
#ifdef _OPENMP
        a += a_size * (size_t)omp_get_thread_num();
#endif
        if (trans_b) {
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
            for (int p = 0; p < panels; p++) {
                float *dst = bt + (size_t)p * NR * K;
                int j0 = p * NR, nr = N - j0 < NR ? N - j0 : NR;
                for (int k = 0; k < K; k++)
                    for (int j = 0; j < NR; j++)
                        dst[(size_t)k * NR + j] =
                            j < nr ? B[(size_t)(j0 + j) * ldb + k] : 0.0f;
            }
        }
        // A long K (more than 2 KC: a weight gradient sums over the
        // batch's 2,048 tokens) goes in pieces of KC steps, so that the
        // rows of B that a piece reads, KC x N, stay in the core's cache
        // while every row of tiles reuses them; each piece adds its sums
        // to C. The grouping of the sums depends on K alone, not on the
        // threads.
        int kstep = K > 2 * KC ? KC : K;
        for (int k0 = 0; k0 < K || k0 == 0; k0 += kstep) {
            int kc = K - k0 < kstep ? K - k0 : kstep;
            float beta_k = k0 == 0 ? beta : 1.0f;
            // the tiles in row-major order, a contiguous run of them to
            // each thread (so that a thread gathers a row of A once for
            // the tiles of that row that it has)
            int packed = -1;                  // the row of tiles in a
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
            for (int at = 0; at < row_tiles * panels; at++) {
                int t = at / panels, p = at % panels;
                int i0 = t * MR, mr = M - i0 < MR ? M - i0 : MR;
                // whole rows of A are read in place; a transposed A, or a
                // last partial row of tiles, is gathered first
                bool in_place = !trans_a && mr == MR;
                if (!in_place && packed != t) {
                    pack_a(trans_a, kc, trans_a ? A + (size_t)k0 * lda
                                                : A + k0, lda, i0, mr, a);
                    packed = t;
                }
                int j0 = p * NR, nr = N - j0 < NR ? N - j0 : NR;
                float *c = C + (size_t)i0 * ldc + j0;
                const float *b = trans_b
                    ? bt + (size_t)p * NR * K + (size_t)k0 * NR
                    : B + (size_t)k0 * ldb + j0;
                size_t bs = trans_b ? NR : (size_t)ldb;
                const float *ar = in_place ? A + (size_t)i0 * lda + k0 : a;
                if (in_place && nr == NR)
                    tile_rows(kc, ar, lda, b, bs, c, ldc, alpha, beta_k);
                else if (in_place)
                    tile_rows_tail(kc, ar, lda, b, bs, c, ldc, nr, alpha,
                                   beta_k);
                else if (nr == NR)
                    tile_full(kc, a, b, bs, c, ldc, mr, alpha, beta_k);
                else
                    tile_tail(kc, a, b, bs, c, ldc, mr, nr, alpha, beta_k);
            }
            if (K == 0) break;
        }
    }
    return true;
}

//> gemv-rows
// One row times a weight matrix stored (N, K), the products of a KV-cache
// decoding step: y[n] = alpha * (x . W[n]) + beta * y[n]. Each weight is
// read once and used once, so the product runs as fast as memory delivers
// W, and one core is delivered more when it reads many rows side by side:
// GV rows, each its own stream for the core's prefetchers, with GV sums in
// registers (more rows than the registers hold would spill the sums;
// OpenBLAS's sgemv reads 4). tests/bench/gemv.c times it against sgemv
// and against a plain read of the same bytes. Each y[n] is summed by one
// thread in the same order whatever the thread count.
#ifdef __AVX512F__
#define GV 16
static inline float vsum(Vec v) { return _mm512_reduce_add_ps(v); }
#else
#define GV 12                                  // of AVX2's 16 registers
static inline float vsum(Vec v) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v),
                          _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}
#endif

// rows (GV, or 1) rows of W from w, ldw apart, into y[0 .. rows)
static inline __attribute__((always_inline))
void rows_body(int K, const float *w, size_t ldw, const float *x, float *y,
               float alpha, float beta, const int rows) {
    Vec s[GV];
#pragma GCC unroll 16
    for (int r = 0; r < rows; r++) s[r] = vzero();
    int k = 0;
    for (; k + VW <= K; k += VW) {
        Vec xv = vload(x + k);
#pragma GCC unroll 16
        for (int r = 0; r < rows; r++)
            s[r] = vfma(vload(w + r * ldw + k), xv, s[r]);
    }
    if (k < K) {                     // the last K % VW, under a mask
        Mask m = vmask(K - k);
        Vec xv = vload_m(x + k, m);
#pragma GCC unroll 16
        for (int r = 0; r < rows; r++)
            s[r] = vfma(vload_m(w + r * ldw + k, m), xv, s[r]);
    }
#pragma GCC unroll 16
    for (int r = 0; r < rows; r++) {
        float d = alpha * vsum(s[r]);
        y[r] = beta == 0.0f ? d : d + beta * y[r];
    }
}

static void rows_block(int K, const float *w, size_t ldw, const float *x,
                       float *y, float alpha, float beta) {
    rows_body(K, w, ldw, x, y, alpha, beta, GV);
}

static void rows_one(int K, const float *w, const float *x, float *y,
                     float alpha, float beta) {
    rows_body(K, w, 0, x, y, alpha, beta, 1);
}

bool gemv_rows(int N, int K, float alpha, const float *W, int ldw,
               const float *x, float beta, float *y) {
    int blocks = N / GV;
    // threads for a matrix of 1 MiB and more (a fork and join costs a
    // few microseconds), never inside another parallel loop
#ifdef _OPENMP
    int threads = 1;
    if (!omp_in_parallel() && (size_t)N * K >= ((size_t)1 << 18))
        threads = omp_get_max_threads();
    if (threads > blocks) threads = blocks > 0 ? blocks : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
#endif
    for (int b = 0; b < blocks; b++)
        rows_block(K, W + (size_t)b * GV * ldw, (size_t)ldw, x, y + b * GV,
                   alpha, beta);
    for (int n = blocks * GV; n < N; n++)
        rows_one(K, W + (size_t)n * ldw, x, y + n, alpha, beta);
    return true;
}
//< gemv-rows

#else

bool gemv_rows(int N, int K, float alpha, const float *W, int ldw,
               const float *x, float beta, float *y) {
    (void)N; (void)K; (void)alpha; (void)W; (void)ldw; (void)x; (void)beta;
    (void)y;
    return false;
}

bool gemm_tiles(bool trans_a, bool trans_b, int M, int N, int K,
                float alpha, const float *A, int lda, const float *B,
                int ldb, float beta, float *C, int ldc) {
    (void)trans_a; (void)trans_b; (void)M; (void)N; (void)K; (void)alpha;
    (void)A; (void)lda; (void)B; (void)ldb; (void)beta; (void)C; (void)ldc;
    return false;
}

#endif
