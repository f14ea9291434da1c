// crossentropy_forward.cu - two versions of the language model's loss on
// the GPU, each checked against chapter 5's crossentropy_forward and
// timed over block sizes:
//
//   v1  one thread per row of logits: the thread finds the row's maximum,
//       then sums exp(x - max), and writes the row's loss
//       (max - x_target) + log(sum).
//   v2  one block per row: the block's threads share the row, each keeps
//       an online maximum and sum of its part, and the parts meet through
//       warp shuffles and shared memory. The chapter's
//       crossentropy_forward_cuda (chapters/ch8_cuda/crossentropy.cu),
//       whose block size follows V (up to 256 threads).
//
// Both end the same way: the rows' losses are added up by one block, in
// double and in a fixed order, and the mean is copied to the host (the
// chapter's function does this itself; v1 uses the kernel below, written
// the same way, so that the two differ only in how a row is computed).
// v1 is checked row by row (against the CPU function given that row
// alone) and on the mean; the chapter's hands back only the mean.
//
// What we expect on a GPU, before measuring. The loss reads every logit
// once and does one exp per logit: bound by memory bandwidth. With the 65
// characters of Tiny Shakespeare a row is short and B*T rows give many
// threads, so v1 may be within a few times of v2 even though its loads
// are not coalesced (a warp reads 32 rows 65 floats apart). With GPT-2's
// 50257 tokens the picture changes: each of a few thousand threads walks
// 200 KB on its own, twice, far too few threads to keep the memory busy,
// while v2 puts a block on each row with every load coalesced; we expect
// v2 to be one to two orders of magnitude faster there.
//
//   crossentropy_forward [--small] [--validate-only] [--repeats N]
#include "bench_common.cuh"

extern "C" {
#include "crossentropy.cuh"
}

#define SUM_THREADS 256   // the one block that adds up the rows' losses

// v1: thread n of the grid writes the loss of row n (nothing when its
// target is -1).
__global__ void xent_forward_v1(float *row_loss, const float *logits,
                                const int *targets, int N, int V) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n >= N || targets[n] < 0) return;
    const float *x = logits + (size_t)n * V;
    float m = -INFINITY;
    for (int v = 0; v < V; v++) m = fmaxf(m, x[v]);
    float s = 0.0f;
    for (int v = 0; v < V; v++) s += expf(x[v] - m);
    row_loss[n] = (m - x[targets[n]]) + logf(s);
}

// The mean's two parts, handed back to the host in one copy.
struct LossSum {
    double total;   // the losses of the rows with a target
    int count;      // how many rows have one
};

// One block of SUM_THREADS: thread i adds rows i, i + SUM_THREADS, ... in
// double, and a tree in shared memory adds the threads' sums.
__global__ void loss_sum(LossSum *out, const float *row_loss,
                         const int *targets, int N) {
    __shared__ double total[SUM_THREADS];
    __shared__ int count[SUM_THREADS];
    int tid = threadIdx.x;
    double t = 0;
    int c = 0;
    for (int n = tid; n < N; n += SUM_THREADS)
        if (targets[n] >= 0) t += row_loss[n], c++;
    total[tid] = t, count[tid] = c;
    __syncthreads();
    for (int half = SUM_THREADS / 2; half > 0; half /= 2) {
        if (tid < half) {
            total[tid] += total[tid + half];
            count[tid] += count[tid + half];
        }
        __syncthreads();
    }
    if (tid == 0) out->total = total[0], out->count = count[0];
}

// One size: N rows of V logits, every seventh row without a target.
static void bench_size(BenchOpts &o, int N, int V) {
    size_t n = (size_t)N * V;
    printf("\n-- N = %d rows, V = %d\n", N, V);
    Rng rng;
    rng_seed(&rng, 777);
    // Logits of std 2, and every fourth row shifted by 200: a version
    // that forgets to subtract the maximum overflows exp there.
    float *x = bench_randn(&rng, n, 0.0f, 2.0f);
    for (int r = 0; r < N; r += 4)
        for (int v = 0; v < V; v++) x[(size_t)r * V + v] += 200.0f;
    int *t = (int *)xmalloc((size_t)N * sizeof *t);
    for (int r = 0; r < N; r++)
        t[r] = r % 7 == 3 ? -1 : (int)rng_below(&rng, (uint32_t)V);
    int valid = 0;
    float mean = crossentropy_forward(x, t, N, V, &valid);
    // each row's loss alone (0 for the rows without a target)
    float *loss = (float *)xmalloc((size_t)N * sizeof *loss);
    for (int r = 0; r < N; r++) {
        int one;
        loss[r] = crossentropy_forward(x + (size_t)r * V, t + r, 1, V, &one);
    }

    float *d_x = bench_to_device(x, n);
    int *d_t = cuda_alloc_ints((size_t)N);
    cuda_upload_ints(d_t, t, (size_t)N);
    float *d_loss = cuda_alloc_floats((size_t)N);
    LossSum *d_sum;
    CUDA_CHECK(cudaMalloc((void **)&d_sum, sizeof *d_sum));
    float *got_loss = (float *)xmalloc((size_t)N * sizeof *got_loss);
    float got_mean = NAN;
    int got_valid = -1;
    // read every logit and target; write and read back each row's loss
    double bytes = 4.0 * ((double)n + 3.0 * N);
    auto prepare = [&] {
        bench_poison(d_loss, (size_t)N);
        got_mean = NAN, got_valid = -1;
    };
    // The mean's error, relative, and NaN when the count of rows is wrong.
    auto mean_err = [&] {
        if (got_valid != valid) return (double)NAN;
        return fabs((double)got_mean - mean) / (mean != 0 ? fabs(mean) : 1);
    };

    bench_version(o, "v1: one thread per row, two passes in the thread",
                  BENCH_BLOCKS, BENCH_NBLOCKS, bytes, prepare,
                  [&](int block) {
                      LAUNCH(xent_forward_v1, ceil_div(N, block), block, 0,
                             d_loss, d_x, d_t, N, V);
                      LAUNCH(loss_sum, 1, SUM_THREADS, 0, d_sum, d_loss,
                             d_t, N);
                      LossSum s;
                      CUDA_CHECK(cudaMemcpy(&s, d_sum, sizeof s,
                                            cudaMemcpyDeviceToHost));
                      got_valid = s.count;
                      got_mean = s.count ? (float)(s.total / s.count) : 0;
                  },
                  [&] {
                      // row by row, skipping the rows without a target
                      cuda_download(got_loss, d_loss, (size_t)N);
                      for (int r = 0; r < N; r++)
                          if (t[r] < 0) got_loss[r] = loss[r];
                      double e = bench_rel_err_host(got_loss, loss, N);
                      return bench_worse(e, mean_err());
                  });
    bench_version(o, "v2: one block per row, online max and sum "
                  "(crossentropy_forward_cuda)",
                  NULL, 0, bytes, prepare,
                  [&](int) {
                      got_mean = crossentropy_forward_cuda(d_x, d_t, N, V,
                                                           &got_valid);
                  },
                  mean_err);

    cuda_free(d_x), cuda_free(d_t), cuda_free(d_loss), cuda_free(d_sum);
    free(x), free(t), free(loss), free(got_loss);
}

int main(int argc, char **argv) {
    BenchOpts o = bench_parse(argc, argv, "versions of the cross-entropy "
                              "loss, checked against chapter 5's and "
                              "timed");
    bench_begin("cross-entropy forward: v1 thread per row, v2 block per "
                "row (the chapter's)");
    if (o.small) {
        bench_size(o, 37, 65);    // odd sizes: no multiple of 32
        bench_size(o, 23, 517);   // rows longer than the largest block
    } else {
        bench_size(o, 64 * 256, 65);    // nanogpt: Tiny Shakespeare's chars
        bench_size(o, 4 * 1024, 50257);   // GPT-2's tokens
    }
    return bench_end(o);
}
