// gelu_forward.cu - GELU's forward pass on the GPU, one version: the
// chapter's one thread per element (gelu_forward_cuda_block of
// chapters/ch8_cuda/activation.cu), checked against chapter 3's
// gelu_forward and timed over block sizes, for both of its forms (the
// exact erf one and GPT-2's tanh approximation).
//
// What we expect on a GPU, before measuring. Each thread reads one float
// and writes one, neighbouring threads neighbouring floats: every access
// is coalesced, and with millions of elements there are threads enough
// at any block size. So the block size should matter little: blocks of
// 32 may lose some speed, as an SM holds only so many blocks at once
// (32 on recent GPUs, so 1024 threads of its 2048 at most); from 128 on
// we expect the same time, close to the card's memory bandwidth (the GB/s
// column), the few flops of erfc or tanh per element hidden behind the
// memory traffic.
//
//   gelu_forward [--small] [--validate-only] [--repeats N]
#include "bench_common.cuh"

extern "C" {
#include "activation.cuh"
}

// n elements of one kind of GELU.
static void bench_size(BenchOpts &o, size_t n, Activation kind) {
    printf("\n-- n = %zu, GELU %s\n", n, activation_name(kind));
    Rng rng;
    rng_seed(&rng, 99);
    float *x = bench_randn(&rng, n, 0.0f, 2.0f);
    float *y = (float *)xmalloc(n * sizeof *y);
    gelu_forward(y, x, kind, n);
    float *d_x = bench_to_device(x, n), *d_y = cuda_alloc_floats(n);
    char name[96];
    snprintf(name, sizeof name, "v1: one thread per element "
             "(gelu_forward_cuda_block, %s)", activation_name(kind));
    bench_version(o, name, BENCH_BLOCKS, BENCH_NBLOCKS, 4.0 * 2.0 * n,
                  [&] { bench_poison(d_y, n); },
                  [&](int block) {
                      gelu_forward_cuda_block(d_y, d_x, kind, n,
                                              (unsigned)block);
                  },
                  [&] { return bench_rel_err(d_y, y, n); });
    cuda_free(d_x), cuda_free(d_y);
    free(x), free(y);
}

int main(int argc, char **argv) {
    BenchOpts o = bench_parse(argc, argv, "GELU's forward pass at each "
                              "block size, checked against chapter 3's "
                              "and timed");
    bench_begin("GELU forward: one thread per element (the chapter's), "
                "over block sizes");
    // the FFN's hidden layer: B * T * 4C (GPT-2 small: 8 * 1024 * 3072)
    size_t n = o.small ? 4099 : (size_t)8 * 1024 * 3072;
    bench_size(o, n, GELU_TANH);
    bench_size(o, n, GELU_EXACT);
    return bench_end(o);
}
