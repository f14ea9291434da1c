// runtime.cu - the chapter's GPU runtime (runtime.cuh, cuda_rt.h).
#include "cuda_rt.h"

#include <stdio.h>
#include <string.h>
#ifdef __CUDACC__
#include <dlfcn.h>   // dlopen: is the driver here at all?
#endif

extern "C" {
#include "error.h"
}

void cuda_fail(const char *call, const char *msg, const char *file,
               int line) {
    die("%s:%d: %s: %s", file, line, call, msg);
}

static cublasHandle_t blas;

cublasHandle_t cuda_blas(void) {
    if (!blas) CUBLAS_CHECK(cublasCreate(&blas));
    return blas;
}

void cuda_set_tf32(bool on) {
    CUBLAS_CHECK(cublasSetMathMode(cuda_blas(), on
                                   ? CUBLAS_TF32_TENSOR_OP_MATH
                                   : CUBLAS_DEFAULT_MATH));
}

size_t cuda_memory_used(void) {
    size_t free_b = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total));
    return total - free_b;
}

bool cuda_device_present(char *msg, size_t size) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < 1) {
        snprintf(msg, size, "%s", e != cudaSuccess ? cudaGetErrorString(e)
                                                   : "no device found");
#ifdef __CUDACC__
        // The runtime says "CUDA driver version is insufficient" also
        // when there is no driver at all: it looks for the driver's
        // library, libcuda.so.1, and takes its absence for an old one.
        void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
        if (e == cudaErrorInsufficientDriver && !driver)
            snprintf(msg, size, "no NVIDIA driver or GPU found");
        if (driver) dlclose(driver);
#endif
        cudaGetLastError();   // clear it
        return false;
    }
    snprintf(msg, size, "%d device%s", n, n == 1 ? "" : "s");
    return true;
}

int cuda_compute_capability(void) {
#ifdef __CUDACC__
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    return 10 * p.major + p.minor;
#else
    return 90;
#endif
}

void cuda_device_describe(char *buf, size_t size) {
#ifdef __CUDACC__
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
    snprintf(buf, size, "%s, %d SMs, %.1f GiB, compute %d.%d",
             p.name, p.multiProcessorCount,
             p.totalGlobalMem / 1073741824.0, p.major, p.minor);
#else
    snprintf(buf, size, "the host emulation (emu.h), threads as %s",
             emu_host_threads() ? "host threads" : "fibers");
#endif
}

static unsigned long writes;

void cuda_count_write(void) { writes++; }
unsigned long cuda_writes(void) { return writes; }

float *cuda_alloc_floats(size_t n) {
    writes++;
    float *p = NULL;
    if (n) CUDA_CHECK(cudaMalloc((void **)&p, n * sizeof(float)));
    return p;
}

int *cuda_alloc_ints(size_t n) {
    writes++;
    int *p = NULL;
    if (n) CUDA_CHECK(cudaMalloc((void **)&p, n * sizeof(int)));
    return p;
}

void cuda_free(void *p) {
    writes++;
    if (p) CUDA_CHECK(cudaFree(p));
}

void cuda_zero(float *dev, size_t n) {
    writes++;
    if (n) CUDA_CHECK(cudaMemset(dev, 0, n * sizeof(float)));
}

void cuda_upload(float *dev, const float *host, size_t n) {
    writes++;
    if (n) CUDA_CHECK(cudaMemcpy(dev, host, n * sizeof(float),
                                 cudaMemcpyHostToDevice));
}

void cuda_upload_ints(int *dev, const int *host, size_t n) {
    writes++;
    if (n) CUDA_CHECK(cudaMemcpy(dev, host, n * sizeof(int),
                                 cudaMemcpyHostToDevice));
}

void cuda_download(float *host, const float *dev, size_t n) {
    if (n) CUDA_CHECK(cudaMemcpy(host, dev, n * sizeof(float),
                                 cudaMemcpyDeviceToHost));
}

void cuda_sync(void) { CUDA_CHECK(cudaDeviceSynchronize()); }
