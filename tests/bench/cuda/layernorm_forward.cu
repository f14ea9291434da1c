// layernorm_forward.cu - three versions of LayerNorm's forward pass on
// the GPU, each checked against chapter 4's layernorm_forward and timed
// over block sizes:
//
//   v1  one thread per row: the thread walks its row twice (the mean,
//       then the variance) and once more to write it, as the CPU does.
//   v2  one block per row: the block's threads share the row, and its
//       sums meet in shared memory (a tree of __syncthreads steps).
//   v3  one warp per row, the sums meeting through warp shuffles: the
//       chapter's layernorm_forward_cuda (chapters/ch8_cuda/layernorm.cu),
//       at its own block size of 4 warps.
//
// What we expect on a GPU, before measuring. LayerNorm does a few flops
// per float it reads, so it is bound by memory bandwidth, and the GB/s
// column says how close each version gets to the card's peak. v1 should
// be far behind: neighbouring threads of a warp read floats C apart, so
// each of the warp's loads touches 32 separate cache lines (uncoalesced),
// and B*T rows give only B*T threads, too few to hide memory latency on a
// GPU that wants tens of thousands in flight. v2 reads 32 neighbouring
// floats per warp load (coalesced) and puts hundreds of threads on every
// row; it pays for a log2(block) chain of barriers per sum, and blocks
// larger than C leave threads idle. v3 keeps the coalescing, needs no
// shared memory and no barrier (the 32 lanes of a warp meet through
// shuffles), and a block of 4 warps works on 4 rows at once: we expect it
// at, or near, the best of v2, with no block size to tune.
//
//   layernorm_forward [--small] [--validate-only] [--repeats N]
#include "bench_common.cuh"

extern "C" {
#include "layernorm.cuh"
}

// v1: thread r of the grid normalises row r on its own.
__global__ void layernorm_forward_v1(float *out, float *mean, float *rstd,
                                     const float *inp, const float *weight,
                                     const float *bias, int N, int C) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    const float *x = inp + (size_t)r * C;
    float sum = 0.0f;
    for (int i = 0; i < C; i++) sum += x[i];
    float m = sum / C;
    float sq = 0.0f;
    for (int i = 0; i < C; i++) sq += (x[i] - m) * (x[i] - m);
    float s = rsqrtf(sq / C + LAYERNORM_EPS);
    float *y = out + (size_t)r * C;
    for (int i = 0; i < C; i++)
        y[i] = (x[i] - m) * s * weight[i] + (bias ? bias[i] : 0.0f);
    mean[r] = m;
    rstd[r] = s;
}

// The sum of v over the block, in every thread, through buf (blockDim.x
// floats of shared memory): each step adds the upper half onto the lower
// half, so blockDim.x must be a power of two.
__device__ static float block_sum(float v, float *buf) {
    int tid = threadIdx.x;
    buf[tid] = v;
    __syncthreads();   // every thread's value is in buf
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (tid < half) buf[tid] += buf[tid + half];
        __syncthreads();   // this step is done before the next reads it
    }
    float total = buf[0];
    __syncthreads();   // every thread has read buf[0] before buf is reused
    return total;
}

// v2: block r normalises row r; its threads take the floats tid,
// tid + blockDim.x, ... of the row. Dynamic shared memory: blockDim.x floats.
__global__ void layernorm_forward_v2(float *out, float *mean, float *rstd,
                                     const float *inp, const float *weight,
                                     const float *bias, int N, int C) {
    SHARED_ARRAY(float, buf);
    int r = blockIdx.x, tid = threadIdx.x;
    (void)N;   // one block per row: the grid is exactly N blocks
    const float *x = inp + (size_t)r * C;
    float sum = 0.0f;
    for (int i = tid; i < C; i += blockDim.x) sum += x[i];
    float m = block_sum(sum, buf) / C;
    float sq = 0.0f;
    for (int i = tid; i < C; i += blockDim.x) sq += (x[i] - m) * (x[i] - m);
    float s = rsqrtf(block_sum(sq, buf) / C + LAYERNORM_EPS);
    float *y = out + (size_t)r * C;
    for (int i = tid; i < C; i += blockDim.x)
        y[i] = (x[i] - m) * s * weight[i] + (bias ? bias[i] : 0.0f);
    if (tid == 0) {
        mean[r] = m;
        rstd[r] = s;
    }
}

// One size: B*T rows of C.
static void bench_size(BenchOpts &o, int B, int T, int C) {
    int N = B * T;
    size_t n = (size_t)N * C;
    printf("\n-- B = %d, T = %d, C = %d\n", B, T, C);
    Rng rng;
    rng_seed(&rng, 1234);
    // Every third row sits at a mean of 10: a version that takes the
    // variance as mean(x^2) - mean^2 loses digits to cancellation there
    // (3e-5 at the small size). Much further off, the fp32 sum of v1's one
    // thread would fail too (3e-6 at C = 768 as it is, 7e-6 at a mean of 20).
    float *x = bench_randn(&rng, n, 0.0f, 1.0f);
    for (int r = 0; r < N; r += 3)
        for (int i = 0; i < C; i++) x[(size_t)r * C + i] += 10.0f;
    float *w = bench_randn(&rng, (size_t)C, 1.0f, 0.3f);
    float *b = bench_randn(&rng, (size_t)C, 0.0f, 0.3f);
    float *y = (float *)xmalloc(n * sizeof *y);
    float *mean = (float *)xmalloc((size_t)N * sizeof *mean);
    float *rstd = (float *)xmalloc((size_t)N * sizeof *rstd);
    layernorm_forward(y, mean, rstd, x, w, b, B, T, C);

    float *d_x = bench_to_device(x, n), *d_w = bench_to_device(w, C);
    float *d_b = bench_to_device(b, C), *d_y = cuda_alloc_floats(n);
    float *d_mean = cuda_alloc_floats(N), *d_rstd = cuda_alloc_floats(N);
    // read x, weight, bias; write out, mean, rstd
    double bytes = 4.0 * (2.0 * n + 2.0 * C + 2.0 * N);
    auto prepare = [&] {
        bench_poison(d_y, n);
        bench_poison(d_mean, N);
        bench_poison(d_rstd, N);
    };
    auto check = [&] {
        double e = bench_rel_err(d_y, y, n);
        e = bench_worse(e, bench_rel_err(d_mean, mean, N));
        return bench_worse(e, bench_rel_err(d_rstd, rstd, N));
    };

    bench_version(o, "v1: one thread per row, two passes in the thread",
                  BENCH_BLOCKS, BENCH_NBLOCKS, bytes, prepare,
                  [&](int block) {
                      LAUNCH(layernorm_forward_v1, ceil_div(N, block),
                             block, 0, d_y, d_mean, d_rstd, d_x, d_w, d_b,
                             N, C);
                  },
                  check);
    bench_version(o, "v2: one block per row, shared-memory sums",
                  BENCH_BLOCKS, BENCH_NBLOCKS, bytes, prepare,
                  [&](int block) {
                      LAUNCH(layernorm_forward_v2, N, block,
                             block * sizeof(float), d_y, d_mean, d_rstd,
                             d_x, d_w, d_b, N, C);
                  },
                  check);
    bench_version(o, "v3: one warp per row, shuffles "
                  "(layernorm_forward_cuda, 128 threads)",
                  NULL, 0, bytes, prepare,
                  [&](int) {
                      layernorm_forward_cuda(d_y, d_mean, d_rstd, d_x, d_w,
                                             d_b, B, T, C);
                  },
                  check);

    cuda_free(d_x), cuda_free(d_w), cuda_free(d_b), cuda_free(d_y);
    cuda_free(d_mean), cuda_free(d_rstd);
    free(x), free(w), free(b), free(y), free(mean), free(rstd);
}

int main(int argc, char **argv) {
    BenchOpts o = bench_parse(argc, argv, "versions of LayerNorm's forward "
                              "pass, checked against chapter 4's and timed");
    bench_begin("layernorm forward: v1 thread per row, v2 block per row, "
                "v3 warp per row (the chapter's)");
    if (o.small) {
        bench_size(o, 2, 11, 97);    // odd sizes: no multiple of 32
    } else {
        bench_size(o, 8, 1024, 768);   // GPT-2 small's width
        bench_size(o, 64, 256, 384);   // the chapter's nanogpt preset
    }
    return bench_end(o);
}
