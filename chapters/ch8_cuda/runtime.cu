// runtime.cu - the chapter's GPU runtime (runtime.cuh, cuda_rt.h).
#include "cuda_rt.h"

#include <stdio.h>
#include <stdlib.h>
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

static cudaStream_t stream;

cudaStream_t cuda_stream(void) {
    if (!stream) CUDA_CHECK(cudaStreamCreate(&stream));
    return stream;
}

// cuBLAS's workspace, set by the program: a product that had to allocate
// its own while a graph is captured would be refused. 32 MiB
// (CUDA_BLAS_WORKSPACE_BYTES) is what cuBLAS takes on Hopper by default.

cublasHandle_t cuda_blas(void) {
    if (!blas) {
        CUBLAS_CHECK(cublasCreate(&blas));
        CUBLAS_CHECK(cublasSetStream(blas, cuda_stream()));
#ifdef __CUDACC__
        void *ws;
        CUDA_CHECK(cudaMalloc(&ws, CUDA_BLAS_WORKSPACE_BYTES));
        CUBLAS_CHECK(cublasSetWorkspace(blas, ws, CUDA_BLAS_WORKSPACE_BYTES));
#endif
    }
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

size_t cuda_memory_free(void) {
    size_t free_b = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total));
    return free_b;
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
    static int cc;   // (asked once: the properties take a while)
    if (!cc) {
        cudaDeviceProp p;
        CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
        cc = 10 * p.major + p.minor;
    }
    return cc;
#else
    return 90;
#endif
}

// A kernel that does nothing, to ask the runtime about ./ch8's code.
__global__ void probe_kernel(void) {}

bool cuda_code_present(char *msg, size_t size) {
#ifdef __CUDACC__
    cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, probe_kernel);
    if (e != cudaSuccess) {
        int cc = cuda_compute_capability();
        snprintf(msg, size, "this program holds no code for this GPU "
                 "(compute capability %d.%d: %s); rebuild it here with "
                 "make ch8, which builds for the GPU it finds", cc / 10,
                 cc % 10, cudaGetErrorString(e));
        cudaGetLastError();   // clear it
        return false;
    }
#endif
    snprintf(msg, size, "ok");
    return true;
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

static unsigned long frees;
static bool capturing;   // between cuda_capture_begin and _end

void cuda_free(void *p) {
    writes++;
    if (p && capturing)   // a recorded launch may point into it
        die("cuda_free during a graph's capture: grow the buffers "
            "before it");
    if (p) {
        frees++;
        CUDA_CHECK(cudaFree(p));
    }
}

unsigned long cuda_frees(void) { return frees; }

void cuda_zero(float *dev, size_t n) {
    writes++;
    if (n) CUDA_CHECK(cudaMemsetAsync(dev, 0, n * sizeof(float),
                                      cuda_stream()));
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

// ---- graphs ----------------------------------------------------------------

struct CudaGraph {
    cudaGraphExec_t exec;
};

void cuda_capture_begin(void) {
    cuda_blas();   // (its workspace, before the capture)
    // Relaxed: the capture leaves alone what other code of the program
    // may do meanwhile (there is none); what the stream is given is
    // recorded all the same.
    CUDA_CHECK(cudaStreamBeginCapture(cuda_stream(),
                                      cudaStreamCaptureModeRelaxed));
    capturing = true;
}

CudaGraph *cuda_capture_end(void) {
    cudaGraph_t graph;
    CUDA_CHECK(cudaStreamEndCapture(cuda_stream(), &graph));
    capturing = false;
    CudaGraph *g = (CudaGraph *)malloc(sizeof *g);
    if (!g) die("out of memory");
    CUDA_CHECK(cudaGraphInstantiate(&g->exec, graph, 0));
    CUDA_CHECK(cudaGraphDestroy(graph));   // the instance is a copy
    return g;
}

void cuda_graph_launch(CudaGraph *g) {
    writes++;   // it changes device memory, as its launches would
    CUDA_CHECK(cudaGraphLaunch(g->exec, cuda_stream()));
}

void cuda_graph_free(CudaGraph *g) {
    if (!g) return;
    CUDA_CHECK(cudaGraphExecDestroy(g->exec));
    free(g);
}
