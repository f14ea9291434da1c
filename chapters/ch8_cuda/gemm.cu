// gemm.cu - the row-major product of common/gemm.h through cuBLAS, which
// is column-major (Fortran's order, as BLAS always was).
//
// A row-major (M, N) matrix, read column-major, is its (N, M) transpose.
// So C = op(A) op(B) in row-major is C^T = op(B)^T op(A)^T in column-major:
// the same call with the operands swapped and M and N exchanged. No data
// moves; only the order of the arguments changes.
#include "cuda_rt.h"

#ifdef __CUDACC__
#include <cuda_bf16.h>
#endif

extern "C" {
#include "gemm.cuh"
#include "mem.h"
}

typedef __nv_bfloat16 bf16;

// ---- bf16 ---------------------------------------------------------------------

static bool use_bf16;

void gemm_set_bf16(bool on) { use_bf16 = on; }
bool gemm_bf16(void) { return use_bf16; }

#define CAST_THREADS 256

// Four bf16 values, written as one 8-byte store.
struct alignas(8) bf16x4 {
    bf16 v[4];
};

//> bf16-cuda
// out[i] = in[i] rounded to the nearest bf16. Thread j takes floats 4j ..
// 4j + 3, read as one 16-byte float4 and written as one 8-byte store
// (in must be 16-byte aligned); the last n % 4 go one by one.
__global__ void to_bf16_kernel(bf16 *out, const float *in, size_t n) {
    size_t j = (size_t)blockIdx.x * CAST_THREADS + threadIdx.x;
    if (4 * j + 3 < n) {
        float4 x = reinterpret_cast<const float4 *>(in)[j];
        bf16x4 y = {{__float2bfloat16(x.x), __float2bfloat16(x.y),
                     __float2bfloat16(x.z), __float2bfloat16(x.w)}};
        reinterpret_cast<bf16x4 *>(out)[j] = y;
    } else {
        for (size_t i = 4 * j; i < n; i++) out[i] = __float2bfloat16(in[i]);
    }
}

// The same, a float per thread, for an in that is not 16-byte aligned.
__global__ void to_bf16_unaligned_kernel(bf16 *out, const float *in,
                                         size_t n) {
    size_t i = (size_t)blockIdx.x * CAST_THREADS + threadIdx.x;
    if (i < n) out[i] = __float2bfloat16(in[i]);
}
//< bf16-cuda

static unsigned long long cast_floats;   // gemm_bf16_cast_floats

static void to_bf16(bf16 *out, const float *in, size_t n) {
    if (n == 0) return;
    cast_floats += n;
    if ((uintptr_t)in % 16 == 0 && (uintptr_t)out % 8 == 0)
        LAUNCH(to_bf16_kernel, ceil_div(ceil_div(n, 4), CAST_THREADS),
               CAST_THREADS, 0, out, in, n);
    else
        LAUNCH(to_bf16_unaligned_kernel, ceil_div(n, CAST_THREADS),
               CAST_THREADS, 0, out, in, n);
}

unsigned long long gemm_bf16_cast_floats(void) { return cast_floats; }

void bf16_round_cuda(uint16_t *out, const float *in, size_t n) {
    to_bf16((bf16 *)out, in, n);
}

//> bf16-casts
// The operands' bf16 copies, in three buffers grown on demand and never
// freed. Each remembers what it holds: the first n floats of src, as
// they were at write number `epoch` (runtime.cuh's cuda_writes: it
// counts every launch, memset and copy that can change device memory).
// A product that finds its operand there, unchanged since, uses the copy
// again instead of casting it twice: a linear layer's backward pass
// multiplies dout by the weights and by the input, back to back, and
// attention's uses its weights' gradient twice the same way. An operand
// that lies inside a copy is found too, at its offset: attention's
// products read q, k and v as column ranges of one qkv array, and one
// cast of the whole array serves them all (gemm_bf16_prepare). Only the
// products' own outputs change memory without a count, so each product
// forgets any copy its output overlaps.
#define CAST_SLOTS 3

typedef struct {
    bf16 *buf;
    size_t size;            // bf16 values buf has room for
    const float *src;       // what it holds (NULL: nothing)
    size_t n;
    unsigned long epoch;
    unsigned long used;     // when it was last asked for (as_bf16 calls)
} CastSlot;

static CastSlot slots[CAST_SLOTS];
static unsigned long asked;
static size_t largest;   // the most floats any operand needed (reserve)

// Room for n bf16 values in slot c (what it held is lost).
static void slot_grow(CastSlot *c, size_t n) {
    if (n > largest) largest = n;
    if (n <= c->size) return;
    cuda_free(c->buf);
    CUDA_CHECK(cudaMalloc((void **)&c->buf, n * sizeof(bf16)));
    c->size = n;
    c->src = NULL;
}

static const bf16 *pinned(const float *x, size_t n);   // (bf16-pins)

// The launches since write number `before` wrote only memory of
// gemm.cu's own (a copy, a table of pointers), none that a slot copied:
// the slots that were good then are good now.
static void slots_outlive(unsigned long before) {
    for (int s = 0; s < CAST_SLOTS; s++)
        if (slots[s].src && slots[s].epoch == before)
            slots[s].epoch = cuda_writes();
}

// Operand x (n floats) in bf16, for a product whose other operand is in
// slot `keep` (-1: none), which must not be overwritten.
static const bf16 *as_bf16(const float *x, size_t n, int keep, int *used) {
    unsigned long now = cuda_writes();
    uintptr_t lo = (uintptr_t)x, hi = (uintptr_t)(x + n);
    asked++;
    const bf16 *kept = pinned(x, n);
    if (kept) {
        *used = -1;   // in no slot
        return kept;
    }
    for (int s = 0; s < CAST_SLOTS; s++) {
        CastSlot *c = &slots[s];
        if (c->src && c->epoch == now && (uintptr_t)c->src <= lo
            && hi <= (uintptr_t)(c->src + c->n)) {
            c->used = asked;
            *used = s;
            return c->buf + (x - c->src);   // cast before, unchanged since
        }
    }
    // Not in hand: into the slot asked for longest ago, other than the
    // one that holds the other operand.
    int s = -1;
    for (int o = 0; o < CAST_SLOTS; o++)
        if (o != keep && (s < 0 || slots[o].used < slots[s].used)) s = o;
    CastSlot *c = &slots[s];
    slot_grow(c, n);
    c->src = NULL;
    to_bf16(c->buf, x, n);
    // The cast wrote only into c->buf, so what the other slots held is as
    // good as before: they move to the new count with this one.
    slots_outlive(now);
    c->src = x, c->n = n, c->epoch = cuda_writes(), c->used = asked;
    *used = s;
    return c->buf;
}

//> bf16-pins
// Copies the model keeps: the bf16 copy of an activation, made in the
// forward pass into storage of the model's, and found again by the
// products of the backward pass, which would otherwise round the same
// activation a second time (PyTorch's autocast keeps them the same way).
// A pinned copy has no epoch: the caller vouches that its source does
// not change until gemm_bf16_unpin_all, which gpt_forward_cuda calls
// first thing (a forward pass rewrites every activation). A product that
// writes over a pinned source still unpins it, as it forgets a slot.
typedef struct {
    const float *src;
    size_t n;
    const bf16 *buf;
} Pin;

static Pin *pins;
static int n_pins, cap_pins;

// Drops the pins whose source overlaps x[0..n).
static void unpin_overlap(const float *x, size_t n) {
    int k = 0;
    for (int i = 0; i < n_pins; i++)
        if (!(pins[i].src < x + n && x < pins[i].src + pins[i].n))
            pins[k++] = pins[i];
    n_pins = k;
}

static void pin_add(const float *x, size_t n, const bf16 *copy) {
    unpin_overlap(x, n);
    if (n_pins == cap_pins) {
        cap_pins = cap_pins ? 2 * cap_pins : 64;
        pins = (Pin *)xrealloc(pins, (size_t)cap_pins * sizeof *pins);
    }
    pins[n_pins++] = (Pin){x, n, copy};
}

// The pinned copy of x[0..n) (x inside a pinned source), or NULL.
static const bf16 *pinned(const float *x, size_t n) {
    for (int i = 0; i < n_pins; i++)
        if (pins[i].src <= x && x + n <= pins[i].src + pins[i].n)
            return pins[i].buf + (x - pins[i].src);
    return NULL;
}

void gemm_bf16_pin(const float *x, size_t n, uint16_t *copy) {
    if (!use_bf16 || !copy || n == 0) return;
    unsigned long now = cuda_writes();
    to_bf16((bf16 *)copy, x, n);
    slots_outlive(now);   // the cast wrote only the copy
    pin_add(x, n, (const bf16 *)copy);
}

void gemm_bf16_unpin_all(void) { n_pins = 0; }
//< bf16-pins

void gemm_bf16_prepare(const float *x, size_t n) {
    int s;
    if (use_bf16 && n > 0) as_bf16(x, n, -1, &s);
}

static int pending = -1;         // the slot gemm_bf16_copy_begin handed out
static uint16_t *pending_keep;   // or the caller's storage

uint16_t *gemm_bf16_copy_begin(const float *x, size_t n, uint16_t *keep) {
    (void)x;
    if (!use_bf16 || n == 0) return NULL;
    if (keep) {
        pending_keep = keep;
        return keep;
    }
    int s = 0;   // the slot asked for longest ago
    for (int o = 1; o < CAST_SLOTS; o++)
        if (slots[o].used < slots[s].used) s = o;
    CastSlot *c = &slots[s];
    slot_grow(c, n);
    c->src = NULL;   // nothing, until gemm_bf16_copy_end
    c->used = ++asked;
    pending = s;
    return (uint16_t *)c->buf;
}

void gemm_bf16_copy_end(unsigned long before, const float *x, size_t n) {
    if (!use_bf16 || n == 0 || (pending < 0 && !pending_keep)) return;
    unsigned long now = cuda_writes();
    for (int s = 0; s < CAST_SLOTS; s++) {
        CastSlot *c = &slots[s];
        if (s == pending || !c->src || c->epoch != before) continue;
        if (c->src < x + n && x < c->src + c->n)
            c->src = NULL;           // what it copied has changed
        else
            c->epoch = now;          // untouched by those writes
    }
    if (pending_keep) {
        pin_add(x, n, (const bf16 *)pending_keep);   // (unpins x's old)
    } else {
        unpin_overlap(x, n);
        CastSlot *c = &slots[pending];
        c->src = x, c->n = n, c->epoch = now;
    }
    pending = -1, pending_keep = NULL;
}

void gemm_bf16_reserve(void) {
    for (int s = 0; s < CAST_SLOTS; s++) slot_grow(&slots[s], largest);
}

// The product just wrote n floats at C: a copy of them is stale.
static void forget_overlap(const float *C, size_t n) {
    unpin_overlap(C, n);
    for (int s = 0; s < CAST_SLOTS; s++)
        if (slots[s].src && slots[s].src < C + n && C < slots[s].src +
                                                         slots[s].n)
            slots[s].src = NULL;
}
//< bf16-casts

// The floats a row-major operand spans: `rows` rows of `cols` floats,
// ld apart, and for a batch, batch - 1 strides more.
static size_t extent(bool trans, int rows, int cols, int ld,
                     long long stride, int batch) {
    if (trans) {
        int t = rows;
        rows = cols, cols = t;
    }
    if (rows == 0 || cols == 0) return 0;
    return (size_t)(batch - 1) * stride + (size_t)(rows - 1) * ld + cols;
}

//> gemm-cuda
void gemm_cuda(bool trans_a, bool trans_b, int M, int N, int K, float alpha,
               const float *A, int lda, const float *B, int ldb, float beta,
               float *C, int ldc) {
    if (M == 0 || N == 0) return;
    if (use_bf16 && K > 0) {   // op(A) is (M, K), op(B) is (K, N)
        int sa, sb;
        const bf16 *a = as_bf16(A, extent(trans_a, M, K, lda, 0, 1), -1,
                                &sa);
        const bf16 *b = as_bf16(B, extent(trans_b, K, N, ldb, 0, 1), sa,
                                &sb);
        CUBLAS_CHECK(cublasGemmEx(
            cuda_blas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
            trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, b,
            CUDA_R_16BF, ldb, a, CUDA_R_16BF, lda, &beta, C, CUDA_R_32F, ldc,
            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        forget_overlap(C, extent(false, M, N, ldc, 0, 1));
        return;
    }
    CUBLAS_CHECK(cublasSgemm(cuda_blas(),
                             trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                             trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                             &alpha, B, ldb, A, lda, &beta, C, ldc));
}
//< gemm-cuda

// The same swap for a batch of independent products, matrix i of A, B
// and C starting stride_a, stride_b, stride_c floats after matrix i-1:
// one cuBLAS call runs them all, instead of a loop of small launches.
void gemm_batched_cuda(bool trans_a, bool trans_b, int M, int N, int K,
                       float alpha, const float *A, int lda,
                       long long stride_a, const float *B, int ldb,
                       long long stride_b, float beta, float *C, int ldc,
                       long long stride_c, int batch) {
    if (M == 0 || N == 0 || batch == 0) return;
    if (use_bf16 && K > 0) {
        int sa, sb;
        const bf16 *a = as_bf16(A, extent(trans_a, M, K, lda, stride_a,
                                          batch), -1, &sa);
        const bf16 *b = as_bf16(B, extent(trans_b, K, N, ldb, stride_b,
                                          batch), sa, &sb);
        CUBLAS_CHECK(cublasGemmStridedBatchedEx(
            cuda_blas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
            trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, b,
            CUDA_R_16BF, ldb, stride_b, a, CUDA_R_16BF, lda, stride_a, &beta,
            C, CUDA_R_32F, ldc, stride_c, batch, CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT));
        forget_overlap(C, extent(false, M, N, ldc, stride_c, batch));
        return;
    }
    CUBLAS_CHECK(cublasSgemmStridedBatched(
        cuda_blas(), trans_b ? CUBLAS_OP_T : CUBLAS_OP_N,
        trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha, B, ldb,
        stride_b, A, lda, stride_a, &beta, C, ldc, stride_c, batch));
}

//> gemm-grid
// A batch whose matrices sit on a grid rather than at one stride apart:
// attention's heads inside the linear layer's rows, where head h of
// sequence b starts at b * (T * 3C) + h * HS. cuBLAS's strided batch
// needs one stride; its pointer batch takes a table of where each
// matrix starts, in device memory. A kernel writes the table (a thread
// per product: where its A, B and C start), and one call then runs every
// product: one small launch more, instead of one call per head.
// cuBLAS cannot see where the table's pointers point, and its fast
// kernels assume each is 16-byte aligned; where one would not be (heads
// of an odd width), one strided call per head does instead.
#define TABLE_THREADS 128

// Where A, B and C start (bytes) and their steps (bytes) along the
// grid's outer and inner dimensions.
struct GridOperands {
    const char *base[3];
    long long outer[3], inner[3];
};

// table[a * pitch + p], for operand a (0 A, 1 B, 2 C) of product p =
// i * inner + j: base[a] + i * outer[a] + j * inner[a].
__global__ void grid_table_kernel(const void **table, GridOperands g,
                                  int inner, int count, int pitch) {
    int p = blockIdx.x * TABLE_THREADS + threadIdx.x;
    if (p >= count) return;
    long long i = p / inner, j = p % inner;
    for (int a = 0; a < 3; a++)
        table[(size_t)a * pitch + p] = g.base[a] + i * g.outer[a]
                                       + j * g.inner[a];
}
//< gemm-grid

static const void **table;   // the device's table, grown on demand
static size_t table_size;    // pointers it has room for

// The pointers of each operand's part of the table: a multiple of 2, so
// that the three parts start 16-byte aligned, as cuBLAS requires.
static int table_pitch(int count) { return (count + 1) / 2 * 2; }

// Whether every matrix of an operand at p, steps outer and inner bytes
// apart, starts 16-byte aligned.
static bool grid_aligned(const void *p, long long outer, long long inner) {
    return ((uintptr_t)p | (uintptr_t)outer | (uintptr_t)inner) % 16 == 0;
}

// The table for a grid of outer x inner products of elements of `bytes`
// (A and B: bytes_ab, C: 4), in device memory, each operand's part
// table_pitch(outer * inner) pointers after the last; the copies of the
// slots stay good (it frees and writes the table only).
static const void **grid_table(const void *A, long long a_outer,
                               long long a_inner, const void *B,
                               long long b_outer, long long b_inner,
                               float *C, long long c_outer,
                               long long c_inner, int bytes_ab, int outer,
                               int inner) {
    int count = outer * inner, pitch = table_pitch(count);
    unsigned long now = cuda_writes();
    if ((size_t)3 * pitch > table_size) {
        cuda_free((void *)table);
        CUDA_CHECK(cudaMalloc((void **)&table, 3 * pitch * sizeof *table));
        table_size = (size_t)3 * pitch;
    }
    GridOperands g = {{(const char *)A, (const char *)B, (const char *)C},
                      {a_outer * bytes_ab, b_outer * bytes_ab, c_outer * 4},
                      {a_inner * bytes_ab, b_inner * bytes_ab, c_inner * 4}};
    LAUNCH(grid_table_kernel, ceil_div((size_t)count, TABLE_THREADS),
           TABLE_THREADS, 0, table, g, inner, count, pitch);
    slots_outlive(now);
    return table;
}

void gemm_grid_cuda(bool trans_a, bool trans_b, int M, int N, int K,
                    float alpha, const float *A, int lda, long long a_outer,
                    long long a_inner, const float *B, int ldb,
                    long long b_outer, long long b_inner, float beta,
                    float *C, int ldc, long long c_outer, long long c_inner,
                    int outer, int inner) {
    if (M == 0 || N == 0 || outer == 0 || inner == 0) return;
    if (outer == 1 || (a_outer == inner * a_inner && b_outer == inner *
                       b_inner && c_outer == inner * c_inner)) {
        // one stride reaches every matrix: a strided batch
        gemm_batched_cuda(trans_a, trans_b, M, N, K, alpha, A, lda, a_inner,
                          B, ldb, b_inner, beta, C, ldc, c_inner,
                          outer * inner);
        return;
    }
    int count = outer * inner, pitch = table_pitch(count);
    cublasOperation_t opa = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opb = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    bool bf = use_bf16 && K > 0;
    // What the table points at: A and B themselves, or their bf16 copies
    // (each rounded once, whole, which also serves the per-head calls).
    const void *a = A, *b = B;
    int bytes = 4;
    if (bf) {
        int sa, sb;
        a = as_bf16(A, extent(trans_a, M, K, lda, a_inner, inner)
                           + (size_t)(outer - 1) * a_outer, -1, &sa);
        b = as_bf16(B, extent(trans_b, K, N, ldb, b_inner, inner)
                           + (size_t)(outer - 1) * b_outer, sa, &sb);
        bytes = 2;
    }
    if (!grid_aligned(a, a_outer * bytes, a_inner * bytes)
        || !grid_aligned(b, b_outer * bytes, b_inner * bytes)
        || !grid_aligned(C, c_outer * 4, c_inner * 4)) {
        // a strided call per inner index (a head), over the outer one
        for (int j = 0; j < inner; j++)
            gemm_batched_cuda(trans_a, trans_b, M, N, K, alpha,
                              A + j * a_inner, lda, a_outer,
                              B + j * b_inner, ldb, b_outer, beta,
                              C + j * c_inner, ldc, c_outer, outer);
        return;
    }
    const void **t = grid_table(a, a_outer, a_inner, b, b_outer, b_inner, C,
                                c_outer, c_inner, bytes, outer, inner);
    if (bf) {
        CUBLAS_CHECK(cublasGemmBatchedEx(
            cuda_blas(), opb, opa, N, M, K, &alpha, t + pitch, CUDA_R_16BF,
            ldb, t, CUDA_R_16BF, lda, &beta, (void *const *)(t + 2 * pitch),
            CUDA_R_32F, ldc, count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        forget_overlap(C, extent(false, M, N, ldc, c_inner, inner)
                              + (size_t)(outer - 1) * c_outer);
        return;
    }
    CUBLAS_CHECK(cublasSgemmBatched(
        cuda_blas(), opb, opa, N, M, K, &alpha,
        (const float *const *)(t + pitch), ldb, (const float *const *)t, lda,
        &beta, (float *const *)(t + 2 * pitch), ldc, count));
}
