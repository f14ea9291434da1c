// emu.h - CUDA's programming model on the host, so that every kernel of
// this chapter runs, slowly and exactly, on a machine without a GPU.
//
// This is a test harness of this project's own, not a product: it lets
// `make check` run each kernel against the CPU function it replaces, and
// ThreadSanitizer look for the data races a missing barrier leaves.
// It emulates exactly what the chapter's kernels use, and no more:
//
//   a launch       the grid's blocks run one after another; the threads
//                  of a block are fibers (each its own stack) that the
//                  launching host thread runs one at a time, each until
//                  its next __syncthreads, shuffle or return, in an order
//                  of emu_schedule.h (a shuffled one by default).
//                  Under ThreadSanitizer (make check-tsan), or with
//                  CUDA_EMU_THREADS=1, they are host threads instead, all
//                  started together (or taking turns in that order): the
//                  only way the sanitizer sees the races of a missing
//                  barrier. Fibers are many times faster: a switch costs
//                  a fraction of a microsecond, a host thread's start and
//                  each wake-up at a barrier several microseconds
//   __syncthreads  a barrier of the block's threads (a thread that has
//                  returned counts as arrived, as on the GPU since Volta)
//   __shared__     one static copy, which each block in turn uses; the
//                  dynamic shared memory of a launch starts as NaN bytes,
//                  so a read of a value nobody wrote shows
//   warp shuffles  the 32 lanes of a warp meet at a barrier of their own;
//                  a block must be whole warps to use them
//   atomicAdd      a compare-and-swap loop on the float's bits
//   memory         cudaMalloc is host memory (also filled with NaN bytes),
//                  cudaMemcpy is memcpy
//   cuBLAS         cublasSgemm and its strided- and pointer-batched
//                  forms, through the CPU's gemm() (OpenBLAS, or the
//                  naive loop); and cublasGemmEx and the same two forms
//                  for bf16 operands (fp32 results and sums), each
//                  operand widened to fp32 first, which is exact; a
//                  pointer batch whose matrices are not all 16-byte
//                  aligned is refused, as the GPU's fast kernels need
//   bf16           __nv_bfloat16 as a storage type: the two conversions
//                  of cuda_bf16.h, rounding to the nearest even as the GPU;
//                  __half (fp16) likewise, with cuda_fp16.h's two
//   tensor cores   nvcuda::wmma's fragments, loads, stores and mma_sync
//                  (16x16x16, bf16 or half operands, fp32 accumulators),
//                  with a fragment layout that is deliberately no natural
//                  one, and __syncwarp (a section near the end of this file)
//   graphs         stream capture: launches, cuBLAS calls and memsets
//                  recorded, then replayed in order (the last section)
//
// Not emulated: streams' concurrency (everything runs in order, at once
// or at a graph's replay), other tensor-core shapes and types, bf16
// arithmetic in kernels, the warp's lockstep (lanes run freely between
// two meetings, which is what CUDA promises since Volta anyway).
// A barrier that some threads never reach stops the program with the
// kernel's name, where the GPU would hang or misbehave: at once when the
// threads take turns (no thread is left to run), after 20 seconds when
// they are host threads all at once.
#ifndef CH8_EMU_H
#define CH8_EMU_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>

#include "emu_schedule.h"

// Whether a block's threads are host threads (true) or fibers, as above.
bool emu_host_threads(void);

// ---- the kernel language ----------------------------------------------------

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static

struct uint3 {
    unsigned x, y, z;
};

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1)
        : x(x_), y(y_), z(z_) {}
};

// Which thread of which block runs now: each host thread has its own,
// which the fiber scheduler sets before it switches to a fiber.
extern thread_local uint3 threadIdx, blockIdx;
extern thread_local dim3 blockDim, gridDim;
static const int warpSize = 32;

void __syncthreads(void);
float __shfl_down_sync(unsigned mask, float v, unsigned delta);
float __shfl_xor_sync(unsigned mask, float v, int lane_mask);
float __shfl_sync(unsigned mask, float v, int src_lane);
float atomicAdd(float *addr, float v);

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
// (__expf, the fast exp, is glibc's own expf on the host.)
static inline float __fdividef(float a, float b) { return a / b; }

// The dynamic shared memory of the running launch (SHARED_ARRAY).
void *emu_dynamic_shared(void);

// Runs body as the kernel name on grid x block threads; returns when
// every block is done. shmem: bytes of dynamic shared memory.
void emu_launch(const char *name, dim3 grid, dim3 block, size_t shmem,
                const std::function<void()> &body, const char *file,
                int line);

// ---- the runtime --------------------------------------------------------------

typedef int cudaError_t;
enum {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorNoDevice = 100
};
enum cudaMemcpyKind {
    cudaMemcpyHostToHost,
    cudaMemcpyHostToDevice,
    cudaMemcpyDeviceToHost,
    cudaMemcpyDeviceToDevice,
    cudaMemcpyDefault
};

cudaError_t cudaMalloc(void **p, size_t bytes);
template <class T> cudaError_t cudaMalloc(T **p, size_t bytes) {
    return cudaMalloc(reinterpret_cast<void **>(p), bytes);
}
cudaError_t cudaFree(void *p);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind);
cudaError_t cudaMemset(void *p, int value, size_t bytes);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetLastError(void);
cudaError_t cudaGetDeviceCount(int *n);
// The host's memory: its physical total, and what is available.
cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes);
const char *cudaGetErrorString(cudaError_t e);

// Events, for the kernel benchmarks' timing (tests/bench/cuda/): an event
// records the host clock when cudaEventRecord is called, and
// cudaEventElapsedTime gives the milliseconds between two. Every launch
// here has finished when it returns, so this times the emulation, which
// is thousands of times slower than a GPU and in other proportions: these
// numbers say nothing about a kernel's speed on a GPU. No streams: the
// record takes the event alone (the real one's stream defaults to 0).
typedef struct EmuEvent *cudaEvent_t;
cudaError_t cudaEventCreate(cudaEvent_t *e);
cudaError_t cudaEventRecord(cudaEvent_t e);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
// cudaErrorInvalidValue when either event was never recorded, as CUDA.
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
                                 cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t e);

// CUDA's vector type of four floats, which a thread loads in one 16-byte
// access (its address must be 16-byte aligned, as on the GPU).
struct alignas(16) float4 {
    float x, y, z, w;
};

// ---- bf16 (cuda_bf16.h) ---------------------------------------------------------

// bfloat16: the top 16 bits of a float (its sign, its 8 exponent bits and
// 7 of its 23 mantissa bits): fp32's range with about 3 decimal digits.
struct __nv_bfloat16 {
    uint16_t x;
};
// The nearest bf16, ties to the even one (a NaN stays a NaN).
__nv_bfloat16 __float2bfloat16(float f);
float __bfloat162float(__nv_bfloat16 h);   // exact

// ---- cuBLAS (column-major, as the real one) ------------------------------------

typedef struct EmuBlas *cublasHandle_t;
typedef int cublasStatus_t;
enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7 };
typedef enum { CUBLAS_OP_N, CUBLAS_OP_T } cublasOperation_t;
typedef enum { CUBLAS_DEFAULT_MATH, CUBLAS_TF32_TENSOR_OP_MATH } cublasMath_t;

cublasStatus_t cublasCreate(cublasHandle_t *h);
cublasStatus_t cublasDestroy(cublasHandle_t h);
cublasStatus_t cublasSetMathMode(cublasHandle_t h, cublasMath_t mode);
const char *cublasGetStatusString(cublasStatus_t s);
cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta,
                           cublasOperation_t tb, int m, int n, int k,
                           const float *alpha, const float *A, int lda,
                           const float *B, int ldb, const float *beta,
                           float *C, int ldc);
cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
    int n, int k, const float *alpha, const float *A, int lda,
    long long strideA, const float *B, int ldb, long long strideB,
    const float *beta, float *C, int ldc, long long strideC, int batch);
// The pointer batch: product i reads Aarray[i], Barray[i] and writes
// Carray[i], the tables in device memory.
cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta,
                                  cublasOperation_t tb, int m, int n, int k,
                                  const float *alpha,
                                  const float *const Aarray[], int lda,
                                  const float *const Barray[], int ldb,
                                  const float *beta, float *const Carray[],
                                  int ldc, int batch);

// The mixed-precision products: here operands of fp32 or bf16, results
// in fp32 and sums in fp32 (CUBLAS_COMPUTE_32F), as the chapter uses them.
typedef enum { CUDA_R_32F = 0, CUDA_R_16BF = 14 } cudaDataType;
typedef enum { CUBLAS_COMPUTE_32F = 68 } cublasComputeType_t;
typedef enum { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta,
                            cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A,
                            cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta,
                            void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t compute,
                            cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
    int n, int k, const void *alpha, const void *A, cudaDataType Atype,
    int lda, long long strideA, const void *B, cudaDataType Btype, int ldb,
    long long strideB, const void *beta, void *C, cudaDataType Ctype,
    int ldc, long long strideC, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo);
cublasStatus_t cublasGemmBatchedEx(
    cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
    int n, int k, const void *alpha, const void *const Aarray[],
    cudaDataType Atype, int lda, const void *const Barray[],
    cudaDataType Btype, int ldb, const void *beta, void *const Carray[],
    cudaDataType Ctype, int ldc, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo);

// ==== the warp matrix API: tensor cores (mma.h, cuda_fp16.h) ========
//
// nvcuda::wmma as the chapter's tensor-core kernels use it: 16x16x16
// products of bf16 or fp16 operands with fp32 accumulators. A fragment
// holds one 16x16 tile spread over the 32 lanes of a warp, num_elements
// (8) values a lane in x[]; CUDA leaves unspecified which lane holds which
// element, so the emulation picks an order unlike any natural one:
//
//   slot s of lane l holds the tile's element (r, c) at position
//   16 r + c = (37 (32 s + l) + 11) mod 256
//
// for every kind of fragment and either memory layout. A kernel that
// treats x[i] as a known position (a mask, a per-row scale) computes
// garbage here, as it would on some GPU; one that does the same to every
// element (a scale, a conversion) works. load_matrix_sync and
// store_matrix_sync are each lane's own reads and writes, with no barrier:
// as on the GPU, __syncwarp must separate one lane's store from another's
// load of it. mma_sync is a meeting of the warp's 32 lanes (every lane
// must call it, as a shuffle), where each computes its elements of
// D = A B + C from all the lanes' fragments: each product of two 16-bit
// operands is exact in fp32, and the sums are fp32, in the order k = 0,
// 1, ..., 15 after C. Pointers must be 32-byte aligned and the leading
// dimension a multiple of 16 bytes, as CUDA requires; the emulation stops
// the program otherwise.

// fp16: 1 sign, 5 exponent and 10 mantissa bits (range up to 65504).
// (cuda_fp16.h also names it half; not here, where kernels use that name
// for their variables.)
struct __half {
    uint16_t x;
};
// The nearest half, ties to the even one (subnormals kept, overflow to
// infinity, a NaN stays a NaN), and back (exact).
__half __float2half(float f);
float __half2float(__half h);

// The warp's lanes meet (a whole warp only): what one wrote to memory
// before it, another reads after it.
void __syncwarp(unsigned mask = 0xffffffffu);

// The emulation's side of the API (emu.cpp).
// Where slot s of this lane's fragment sits in the tile: row r, column c.
void emu_wmma_where(int s, int *r, int *c);
// Stops the program unless p is 32-byte aligned and ldm * elem is a
// multiple of 16 bytes; `what` names the call.
void emu_wmma_check(const char *what, const void *p, unsigned ldm,
                    size_t elem);
// D = A B + C over the warp; each argument is this lane's 8 values.
void emu_wmma_mma(float d[8], const float a[8], const float b[8],
                  const float c[8]);

static inline float emu_widen(float v) { return v; }
static inline float emu_widen(__nv_bfloat16 v) { return __bfloat162float(v); }
static inline float emu_widen(__half v) { return __half2float(v); }

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void>
struct fragment {
    static_assert(M == 16 && N == 16 && K == 16,
                  "the emulation has the 16x16x16 shape only");
    enum { num_elements = 8 };
    typedef T element_type;
    T x[num_elements];
};

template <class Use, class T, class Layout>
void fill_fragment(fragment<Use, 16, 16, 16, T, Layout> &f, const T &v) {
    for (int s = 0; s < 8; s++) f.x[s] = v;
}

// An operand tile (matrix_a: M x K, matrix_b: K x N) from memory laid
// out as the fragment's Layout says, ldm elements between rows
// (row_major) or columns (col_major).
template <class Use, class T, class Layout>
void load_matrix_sync(fragment<Use, 16, 16, 16, T, Layout> &f, const T *p,
                      unsigned ldm) {
    static_assert(std::is_same<Use, matrix_a>::value
                      || std::is_same<Use, matrix_b>::value,
                  "an accumulator's load takes a layout_t");
    static_assert(std::is_same<T, __nv_bfloat16>::value
                      || std::is_same<T, __half>::value,
                  "the emulated operands are bf16 or half");
    static_assert(std::is_same<Layout, row_major>::value
                      || std::is_same<Layout, col_major>::value,
                  "an operand fragment is row_major or col_major");
    emu_wmma_check("load_matrix_sync", p, ldm, sizeof(T));
    bool row = std::is_same<Layout, row_major>::value;
    for (int s = 0; s < 8; s++) {
        int r, c;
        emu_wmma_where(s, &r, &c);
        f.x[s] = row ? p[(size_t)r * ldm + c] : p[(size_t)c * ldm + r];
    }
}

inline void load_matrix_sync(fragment<accumulator, 16, 16, 16, float> &f,
                             const float *p, unsigned ldm, layout_t layout) {
    emu_wmma_check("load_matrix_sync", p, ldm, sizeof(float));
    for (int s = 0; s < 8; s++) {
        int r, c;
        emu_wmma_where(s, &r, &c);
        f.x[s] = layout == mem_row_major ? p[(size_t)r * ldm + c]
                                         : p[(size_t)c * ldm + r];
    }
}

inline void store_matrix_sync(float *p,
                              const fragment<accumulator, 16, 16, 16,
                                             float> &f,
                              unsigned ldm, layout_t layout) {
    emu_wmma_check("store_matrix_sync", p, ldm, sizeof(float));
    for (int s = 0; s < 8; s++) {
        int r, c;
        emu_wmma_where(s, &r, &c);
        (layout == mem_row_major ? p[(size_t)r * ldm + c]
                                 : p[(size_t)c * ldm + r]) = f.x[s];
    }
}

template <class T, class LA, class LB>
void mma_sync(fragment<accumulator, 16, 16, 16, float> &d,
              const fragment<matrix_a, 16, 16, 16, T, LA> &a,
              const fragment<matrix_b, 16, 16, 16, T, LB> &b,
              const fragment<accumulator, 16, 16, 16, float> &c) {
    float av[8], bv[8], dv[8];
    for (int s = 0; s < 8; s++)   // widening is exact
        av[s] = emu_widen(a.x[s]), bv[s] = emu_widen(b.x[s]);
    emu_wmma_mma(dv, av, bv, c.x);   // (d and c may be one fragment)
    for (int s = 0; s < 8; s++) d.x[s] = dv[s];
}

}  // namespace wmma
}  // namespace nvcuda
// ==== end of the warp matrix API ============================================
// ---- streams and graphs (chapter 8's --graph) -------------------------
// The emulation runs each launch when it is made, so a stream is only a
// name here. A graph is what it is on the GPU, a recording: while a
// stream captures, every launch, cuBLAS call and memset is recorded
// instead of run (the launch's arguments as they were at the call, as a
// kernel node keeps them), and cudaGraphLaunch runs the recording again,
// in order. The GPU refuses what a recording cannot hold: here too, a
// synchronous copy, a memset without a stream, an allocation or a
// release while a stream captures returns
// cudaErrorStreamCaptureUnsupported (and says which call).
typedef struct EmuStream *cudaStream_t;
typedef struct EmuGraph *cudaGraph_t;
typedef struct EmuGraphExec *cudaGraphExec_t;
enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal,
    cudaStreamCaptureModeThreadLocal,
    cudaStreamCaptureModeRelaxed
};
enum { cudaErrorStreamCaptureUnsupported = 900 };

cudaError_t cudaStreamCreate(cudaStream_t *s);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes,
                            cudaStream_t s);
cudaError_t cudaStreamBeginCapture(cudaStream_t s,
                                   cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *graph);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                 unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s);

// For the rest of the emulation: whether a stream captures now; a
// launch recorded (true) instead of run; a cuBLAS call recorded (its
// status is success, as the GPU's would be when it only records); and
// a call that a capture refuses (true: it must fail, as said above).
bool emu_capturing(void);
bool emu_record_launch(const char *name, dim3 grid, dim3 block,
                       size_t shmem, const std::function<void()> &body,
                       const char *file, int line);
cublasStatus_t emu_record_blas(std::function<cublasStatus_t()> call);
bool emu_capture_refuses(const char *call);

#endif
