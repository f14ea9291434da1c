// column_sums.cu - three versions of a bias's gradient on the GPU: the
// sums down the columns of dout (N, C), over all N rows, each checked
// against chapter 2's linear_backward (its dbias alone) and timed over
// block sizes:
//
//   v1  one thread per column, adding the N rows in order: the CPU's
//       loop, and this chapter's first bias_grad_kernel.
//   v2  one block per 32 columns: 32 x (block / 32) threads, every lane
//       of rows adding every (block / 32)-th row of its column, the
//       lanes' sums then met in shared memory in a fixed order.
//   v3  the rows cut into chunks of 256 as well, a block per chunk and
//       32 columns, the chunks' sums added by a second kernel in chunk
//       order (linear.cu's column_sums_cuda, 8 lanes of rows).
//
// All three add in an order fixed by N and C: the same bits every run.
//
// What we expect on a GPU, before measuring. A column sum reads every
// float once and adds it: bound by memory bandwidth, if enough loads are
// in flight. v1 has C threads in all: for a bias of 384, twelve warps on
// a GPU of 132 SMs, each thread adding 16,384 floats one after another;
// the loads of a warp are coalesced (32 neighbouring floats of a row),
// but there are far too few of them in flight, so we expect it below a
// tenth of the bandwidth, and about as slow for 384 columns as for 1,536
// (more columns are more threads, not more time). v2 multiplies the
// threads by the lanes of rows but still has C / 32 blocks: 12 SMs of 132
// busy for a bias of 384, so we expect several times v1 and still far
// from the bandwidth, better with larger blocks. v3 has C / 32 x N / 256
// blocks (768 for 16,384 rows of 384): enough to fill the GPU, so we
// expect it near the bandwidth, the second kernel's few microseconds
// aside, and the block size to matter little.
//
//   column_sums [--small] [--validate-only] [--repeats N]
#include "bench_common.cuh"

extern "C" {
#include "linear.cuh"
}

// v1: thread c adds column c of the N rows, in order.
__global__ void colsum_thread_kernel(float *dst, const float *m, int N,
                                     int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float sum = 0.0f;
    for (int r = 0; r < N; r++) sum += m[(size_t)r * C + c];
    dst[c] += sum;
}

// v2: block b owns columns 32b .. 32b + 31; thread (x, y) adds rows y, y
// + lanes, ... of column 32b + x; the lanes' sums meet in shared memory
// (blockDim.y floats per column, the launch's dynamic shared memory).
__global__ void colsum_block_kernel(float *dst, const float *m, int N,
                                    int C) {
    SHARED_ARRAY(float, s);   // [lanes][32]
    int x = threadIdx.x, y = threadIdx.y, lanes = blockDim.y;
    int c = blockIdx.x * 32 + x;
    float sum = 0.0f;
    if (c < C)
        for (int r = y; r < N; r += lanes) sum += m[(size_t)r * C + c];
    s[y * 32 + x] = sum;
    __syncthreads();   // every lane's sum is in shared memory
    if (y == 0 && c < C) {
        for (int k = 1; k < lanes; k++) sum += s[k * 32 + x];
        dst[c] += sum;
    }
}

static void bench_size(BenchOpts &o, int N, int C) {
    printf("\n-- N = %d rows, C = %d columns\n", N, C);
    Rng rng;
    rng_seed(&rng, 7);
    size_t n = (size_t)N * C;
    float *dout = bench_randn(&rng, n, 0.0f, 1.0f);
    float *want = (float *)xcalloc((size_t)C, sizeof *want);
    // chapter 2's bias gradient alone: no input, so no products
    linear_backward(NULL, NULL, want, dout, NULL, NULL, N, 0, C);
    float *d_dout = bench_to_device(dout, n);
    float *d_dst = cuda_alloc_floats((size_t)C);
    double bytes = 4.0 * ((double)n + C);
    auto prepare = [&] { cuda_zero(d_dst, (size_t)C); };
    auto check = [&] { return bench_rel_err(d_dst, want, (size_t)C); };
    // Timed runs add into dst again and again; only the first is checked.
    bench_version(o, "v1: one thread per column, all rows in order",
                  BENCH_BLOCKS, BENCH_NBLOCKS, bytes, prepare,
                  [&](int block) {
                      LAUNCH(colsum_thread_kernel,
                             ceil_div((size_t)C, (unsigned)block), block, 0,
                             d_dst, d_dout, N, C);
                  },
                  check);
    bench_version(o, "v2: a block per 32 columns, lanes of rows, shared "
                  "memory", BENCH_BLOCKS, BENCH_NBLOCKS, bytes, prepare,
                  [&](int block) {
                      int lanes = block / 32;
                      LAUNCH(colsum_block_kernel,
                             ceil_div((size_t)C, 32), dim3(32, lanes),
                             (size_t)block * sizeof(float), d_dst, d_dout,
                             N, C);
                  },
                  check);
    bench_version(o, "v3: chunks of rows, then the chunks' sums "
                  "(column_sums_cuda, 256 threads)", NULL, 0, bytes,
                  prepare,
                  [&](int) { column_sums_cuda(d_dst, d_dout, N, C); },
                  check);
    cuda_free(d_dout), cuda_free(d_dst);
    free(dout), free(want);
}

int main(int argc, char **argv) {
    BenchOpts o = bench_parse(argc, argv, "the bias gradient's column "
                              "sums in three versions, checked against "
                              "chapter 2's and timed");
    bench_begin("column sums (a bias's gradient): v1 thread per column, "
                "v2 block per 32 columns, v3 chunks of rows (the "
                "chapter's)");
    if (o.small) {
        bench_size(o, 601, 70);   // three chunks, a short last one
        bench_size(o, 37, 45);
    } else {
        bench_size(o, 64 * 256, 384);    // nanogpt's c_proj bias
        bench_size(o, 64 * 256, 1536);   // and its c_fc bias
    }
    return bench_end(o);
}
