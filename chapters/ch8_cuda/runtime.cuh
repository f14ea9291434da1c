// runtime.cuh - the small GPU runtime that C code calls: device memory,
// copies, and what the device is. Every function stops the program with
// one line naming the failed call and its file line when CUDA reports an
// error, so callers never check.
#ifndef CH8_RUNTIME_CUH
#define CH8_RUNTIME_CUH

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Whether a usable device is here; when not, why, in msg. (Under the
// emulation there always is one: the host.)
bool cuda_device_present(char *msg, size_t size);
// "NVIDIA H100 80GB HBM3, 132 SMs, 79.2 GiB", or the emulator's name.
void cuda_device_describe(char *buf, size_t size);

// n floats of device memory (garbage until written); NULL for n = 0.
float *cuda_alloc_floats(size_t n);
int *cuda_alloc_ints(size_t n);
void cuda_free(void *p);
void cuda_zero(float *dev, size_t n);
void cuda_upload(float *dev, const float *host, size_t n);
void cuda_upload_ints(int *dev, const int *host, size_t n);
void cuda_download(float *host, const float *dev, size_t n);
void cuda_sync(void);

// A count of what may have changed device memory: every kernel launch
// (LAUNCH counts it), memset, upload, allocation and release. Whoever
// keeps a copy of device data (gemm.cu's bf16 operands) compares it.
void cuda_count_write(void);
unsigned long cuda_writes(void);

// The device's compute capability as 10 * major + minor (90 for an
// H100, 75 for a T4); the emulation says 90.
int cuda_compute_capability(void);
// Whether this program holds code the device can run: machine code for
// its compute capability (or its family's), or PTX of an older one that
// the driver compiles for it. When not, why, in msg.
bool cuda_code_present(char *msg, size_t size);

// Bytes of device memory in use (by this program and any other), as the
// driver counts them: total minus free; and those free.
size_t cuda_memory_used(void);
size_t cuda_memory_free(void);

// The workspace that cuBLAS is given up front (runtime.cu says why).
#define CUDA_BLAS_WORKSPACE_BYTES (32u << 20)

// TF32 tensor-core matrix products (off: exact fp32, the default).
void cuda_set_tf32(bool on);

// A recorded sequence of the program's launches, cuBLAS calls and
// memsets (a CUDA graph), replayed with one call: the GPU then starts
// each of them itself, without the host's launch costs between them.
// cuda_capture_begin starts recording on the program's stream (nothing
// runs until the graph is launched); between begin and end the code may
// not copy to or from the host, release memory, or wait for the GPU.
// A graph holds the arguments every launch had when it was recorded,
// pointers included: it stays right only while those hold what they
// held (cuda_frees says whether any memory was released since).
typedef struct CudaGraph CudaGraph;
void cuda_capture_begin(void);
CudaGraph *cuda_capture_end(void);
void cuda_graph_launch(CudaGraph *g);
void cuda_graph_free(CudaGraph *g);
// How many times device memory was released (cuda_free of a buffer).
unsigned long cuda_frees(void);

#ifdef __cplusplus
}
#endif

#endif
