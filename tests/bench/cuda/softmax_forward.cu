// softmax_forward.cu - versions of the row softmax of attention on the
// GPU, each checked against chapter 2's softmax_forward and timed over
// block sizes:
//
//   v1  one thread per row, three passes over it: the maximum, the sum of
//       exp(x - max), and the weights written.
//   v2  one warp per row, the same three passes, the lanes taking every
//       32nd value and meeting through warp shuffles after each pass.
//   v3  one warp per row, two passes: the first keeps an "online" maximum
//       and sum together (the sum rescaled whenever the maximum grows),
//       the second writes. The chapter's kernel was this one until an
//       H100 measured it.
//   the chapter's: the masked softmax of attention.cu, called through
//       softmax_forward_cuda (no mask), 4 warps a block: v2 with the
//       masks' tests, which v3's measurement made it.
//
// The rows are those of attention's weights: B * NH * T rows of T scores.
//
// What we expect on a GPU, before measuring. The softmax reads a row and
// writes it, with one exp per value: bound by memory bandwidth (the GB/s
// column). v1 should be the slowest by far, as LayerNorm's v1: a warp's
// 32 threads read 32 rows T floats apart (32 cache lines per load, none
// shared), and it reads each row three times. v2 makes every load
// coalesced and gives 32 threads to each row. v3 reads the row twice
// instead of three times: where a row does not stay in the cache between
// passes, a third less traffic than v2, at the cost of an exp more for
// each new maximum. A row of T = 1024 floats is only 4 KB, though, and
// may well stay in the SM's L1 cache from one pass to the next, in which
// case v2 and v3 should be close; the GB/s column will tell.
//
//   softmax_forward [--small] [--validate-only] [--repeats N]
#include "bench_common.cuh"

extern "C" {
#include "attention.cuh"
}

#define FULL_MASK 0xffffffffu

// v1: thread r of the grid computes row r on its own.
__global__ void softmax_forward_v1(float *out, const float *inp, int N,
                                   int D) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= N) return;
    const float *x = inp + (size_t)r * D;
    float *y = out + (size_t)r * D;
    float m = -INFINITY;
    for (int i = 0; i < D; i++) m = fmaxf(m, x[i]);
    float sum = 0.0f;
    for (int i = 0; i < D; i++) sum += expf(x[i] - m);
    float inv = 1.0f / sum;
    for (int i = 0; i < D; i++) y[i] = expf(x[i] - m) * inv;
}

// The maximum, and the sum, of v over the warp's 32 lanes, in every lane.
__device__ static inline float warp_max(float v) {
    for (int o = 16; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(FULL_MASK, v, o));
    return v;
}
__device__ static inline float warp_sum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(FULL_MASK, v, o);
    return v;
}

// v2: warp w of block b computes row b * (blockDim.x / 32) + w; lane j
// takes the values j, j + 32, ... of the row in each of the three passes.
__global__ void softmax_forward_v2(float *out, const float *inp, int N,
                                   int D) {
    int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (r >= N) return;   // the whole warp leaves together
    const float *x = inp + (size_t)r * D;
    float *y = out + (size_t)r * D;
    float m = -INFINITY;
    for (int i = lane; i < D; i += 32) m = fmaxf(m, x[i]);
    m = warp_max(m);
    float sum = 0.0f;
    for (int i = lane; i < D; i += 32) sum += expf(x[i] - m);
    float inv = 1.0f / warp_sum(sum);
    for (int i = lane; i < D; i += 32) y[i] = expf(x[i] - m) * inv;
}

// v3's statistics of some values: their maximum m and
// l = sum_i exp(x_i - m). Adding x rescales l when x is a new maximum.
struct Stats {
    float m, l;
};

__device__ static inline void stats_add(Stats &s, float x) {
    if (x > s.m) {
        s.l = s.l * expf(s.m - x) + 1.0f;
        s.m = x;
    } else {
        s.l += expf(x - s.m);
    }
}

// Two lanes' statistics together, both moved to the larger maximum (an
// empty side has m = -inf and adds nothing).
__device__ static inline Stats stats_merge(Stats a, Stats b) {
    float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return a;
    Stats s = {m, a.l * expf(a.m - m) + b.l * expf(b.m - m)};
    return s;
}

// v3: as v2, but the maximum and the sum in one pass.
__global__ void softmax_forward_v3(float *out, const float *inp, int N,
                                   int D) {
    int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (r >= N) return;
    const float *x = inp + (size_t)r * D;
    float *y = out + (size_t)r * D;
    Stats s = {-INFINITY, 0.0f};
    for (int i = lane; i < D; i += 32) stats_add(s, x[i]);
    for (int o = 16; o > 0; o /= 2) {
        Stats other = {__shfl_xor_sync(FULL_MASK, s.m, o),
                       __shfl_xor_sync(FULL_MASK, s.l, o)};
        s = stats_merge(s, other);
    }
    float inv = 1.0f / s.l;
    for (int i = lane; i < D; i += 32) y[i] = expf(x[i] - s.m) * inv;
}

// One size: B * NH * T rows of T attention scores.
static void bench_size(BenchOpts &o, int B, int NH, int T) {
    int N = B * NH * T, D = T;
    size_t n = (size_t)N * D;
    printf("\n-- B = %d, NH = %d, T = %d: %d rows of %d\n", B, NH, T, N, D);
    Rng rng;
    rng_seed(&rng, 4321);
    // Scores of std 3, and every fifth row shifted by 100: exp(100)
    // overflows a float, so a version that forgets to subtract the
    // maximum gives inf / inf = NaN there.
    float *x = bench_randn(&rng, n, 0.0f, 3.0f);
    for (int r = 0; r < N; r += 5)
        for (int i = 0; i < D; i++) x[(size_t)r * D + i] += 100.0f;
    float *y = (float *)xmalloc(n * sizeof *y);
    softmax_forward(y, x, N, D);

    float *d_x = bench_to_device(x, n), *d_y = cuda_alloc_floats(n);
    double bytes = 4.0 * 2.0 * n;   // each score read, each weight written
    auto prepare = [&] { bench_poison(d_y, n); };
    auto check = [&] { return bench_rel_err(d_y, y, n); };

    bench_version(o, "v1: one thread per row, three passes", BENCH_BLOCKS,
                  BENCH_NBLOCKS, bytes, prepare,
                  [&](int block) {
                      LAUNCH(softmax_forward_v1, ceil_div(N, block), block,
                             0, d_y, d_x, N, D);
                  },
                  check);
    bench_version(o, "v2: one warp per row, three passes, shuffles",
                  BENCH_BLOCKS, BENCH_NBLOCKS, bytes, prepare,
                  [&](int block) {
                      LAUNCH(softmax_forward_v2, ceil_div(N, block / 32),
                             block, 0, d_y, d_x, N, D);
                  },
                  check);
    bench_version(o, "v3: one warp per row, online max and sum",
                  BENCH_BLOCKS, BENCH_NBLOCKS, bytes, prepare,
                  [&](int block) {
                      LAUNCH(softmax_forward_v3, ceil_div(N, block / 32),
                             block, 0, d_y, d_x, N, D);
                  },
                  check);
    bench_version(o, "the chapter's: v2 with masks (softmax_forward_cuda, "
                  "128 threads)",
                  NULL, 0, bytes, prepare,
                  [&](int) { softmax_forward_cuda(d_y, d_x, N, D); },
                  check);

    cuda_free(d_x), cuda_free(d_y);
    free(x), free(y);
}

int main(int argc, char **argv) {
    BenchOpts o = bench_parse(argc, argv, "versions of the row softmax, "
                              "checked against chapter 2's and timed");
    bench_begin("softmax forward (attention's rows): v1 thread per row, "
                "v2 warp per row in three passes, v3 warp per row online, "
                "the chapter's");
    if (o.small) {
        bench_size(o, 1, 3, 67);   // 201 rows of 67: odd, past two warps
    } else {
        bench_size(o, 4, 12, 1024);   // GPT-2 small's heads, T = 1024
        bench_size(o, 64, 6, 256);    // the chapter's nanogpt preset
    }
    return bench_end(o);
}
