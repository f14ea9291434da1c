// flash.cu - causal self-attention on the GPU, fused: it computes what
// chapters/ch2_attention/attention.c's attention_forward and
// attention_backward compute with causal = true and no padding (Tq = Tk =
// T, what the GPT uses), but never stores the (T, T) attention weights.
// Per query row it keeps only the log-sum-exp of the row's scaled scores,
//   lse = max + log(sum_s exp(score_s - max)),
// from which the backward pass recomputes any weight as exp(score - lse).
// This is FlashAttention-2's way (Dao, 2023), in plain fp32 CUDA C.
//
// Why fusing pays. The (T, T) way (attention.cu) writes the scores to
// device memory, reads them back for the softmax, writes the weights,
// reads them again for att @ v, and keeps them for the backward pass:
// B * NH * T * T floats, 4 * 12 * 1024 * 1024 * 4 bytes = 200 MB for
// GPT-2 small's layer at T = 1024, more than its q, k, v and out together
// (4 * 12 * 1024 * 64 floats each = 12.6 MB). Those passes over memory,
// not the arithmetic, are what the unfused attention spends its time on.
// Here a block holds a tile of queries and brings tiles of keys and
// values into shared memory one after another; the scores of a tile live
// only in shared memory and registers, are turned into weights there and
// used at once. Device memory sees q, k, v read and out written: O(T HS)
// per head instead of O(T^2), and the causal mask lets a block skip every
// key tile after its last query outright.
//
// The softmax of a row needs its maximum and its sum over all the keys,
// but the keys come a tile at a time. The online softmax keeps a running
// maximum m and sum l, and when a new tile raises the maximum from m to
// m', every sum and output accumulated so far was scaled by exp(-m)
// instead of exp(-m'): multiplying them by alpha = exp(m - m') corrects
// them. After the last tile, out = acc / l and lse = m + log l.
//
// The backward pass recomputes the weights P = exp(score - lse) tile by
// tile (the arithmetic is cheaper than storing them), with
//   D_i = sum_d dout[i, d] * out[i, d]   (= sum_s P[i, s] dP[i, s])
//   dS  = P * (dP - D_i),  dP = dout v^T
// which is softmax_backward's formula with the row's dot product taken
// from out instead of from the weights. To stay deterministic without
// float atomics, two kernels share the work: one per key tile, looping
// over the query tiles that see it, sums dK and dV; one per query tile,
// looping over the key tiles it sees, sums dQ. Each gradient row then has
// exactly one block that adds into it, in a fixed order.
//
// How it differs from attention.h's API: causal only, no key mask, and
// Tq = Tk; lse (B, NH, T) replaces the weights as what the forward pass
// keeps; HS is at most FLASH_MAX_HS = 128 (the output rows live in
// registers, four floats a lane). Shared memory grows with HS; above 48
// KiB (HS above 79 for the backward pass, 116 for the forward) the
// kernels ask the GPU for more, which the emulator does not offer: its
// tests use HS up to 72.
//
// What it buys, measured on an H100 at B = 8, NH = 12, T = 1024, HS = 64:
// the forward takes 1.8 ms and the backward 5.6 ms, and the (T, T)
// weights, 400 MB here, are never stored. The unfused forward (cuBLAS's
// two products and a softmax kernel) takes 1.0 ms: these kernels do
// their fp32 arithmetic from shared memory one float at a time, while
// cuBLAS's products are tuned to the last register. Production
// FlashAttention wins on time too because it runs its two products on
// the tensor cores.
#include "cuda_rt.h"

#include <math.h>

extern "C" {
#include "flash.cuh"
}

// A block is FLASH_THREADS threads, four warps. It owns a tile of
// FLASH_TILE rows (queries in the forward and dQ kernels, keys in the dK,
// dV kernel); each warp owns FLASH_ROWS of them. The other side streams
// through shared memory in tiles of FLASH_TILE rows too, one per lane of
// a warp when scores are computed, so FLASH_TILE is the warp's size.
#define FLASH_THREADS 128
#define FLASH_TILE 32
#define FLASH_WARPS (FLASH_THREADS / 32)
#define FLASH_ROWS (FLASH_TILE / FLASH_WARPS)   // rows of a warp: 8
#define FLASH_MAX_HS 128
#define FLASH_CHUNKS (FLASH_MAX_HS / 32)        // floats of a row per lane
// The softmax of a row of scores is shared by 32 / FLASH_ROWS lanes.
#define FLASH_PARTS (32 / FLASH_ROWS)           // lanes per row: 4
#define FLASH_PART_KEYS (FLASH_TILE / FLASH_PARTS)  // keys per lane: 8
#define FLASH_LD_P (FLASH_TILE + 1)             // row stride of a scores tile
// Rows of the D kernel per block: one warp each.
#define ROWDOT_THREADS 128

static_assert(FLASH_TILE == 32, "a tile's rows are a warp's lanes");
static_assert(FLASH_ROWS * FLASH_WARPS == FLASH_TILE, "warps own the tile");

// Copies rows r0 .. r0 + FLASH_TILE - 1 of a (T, HS) matrix into a tile of
// row stride ld in shared memory, zeros for rows at or past T, so that
// the arithmetic on them stays finite (shared memory starts as garbage).
// Consecutive threads read consecutive floats: the tile's rows are one
// contiguous stretch of src.
__device__ static void load_tile(float *dst, int ld, const float *src,
                                 int r0, int T, int HS) {
    for (int i = threadIdx.x; i < FLASH_TILE * HS; i += blockDim.x) {
        int r = i / HS, d = i % HS;
        dst[r * ld + d] = r0 + r < T ? src[(size_t)r0 * HS + i] : 0.0f;
    }
}

// As load_tile for n = FLASH_TILE floats of a vector (lse, D).
__device__ static void load_row_values(float *dst, const float *src, int r0,
                                       int T) {
    for (int i = threadIdx.x; i < FLASH_TILE; i += blockDim.x)
        dst[i] = r0 + i < T ? src[r0 + i] : 0.0f;
}

//> flash-cuda
// Forward: block (x, z) computes the FLASH_TILE query rows from
// q0 = x * FLASH_TILE of head z. Shared memory: the query tile Q, a key
// tile K and value tile V, the tile's scores P, and per row the
// rescaling alpha and the running sum l of the online softmax.
// K's row stride is odd (HS | 1): lane j reads row j of it, and rows an
// odd number of floats apart fall in different banks of shared memory.
//> flash-forward
__global__ void flash_forward_kernel(float *out, float *lse, const float *q,
                                     const float *k, const float *v, int T,
                                     int HS, float scale) {
    SHARED_ARRAY(float, smem);
    int ldk = HS | 1;
    float *Qs = smem;                               // [TILE][HS]
    float *Ks = Qs + FLASH_TILE * HS;               // [TILE][ldk]
    float *Vs = Ks + FLASH_TILE * ldk;              // [TILE][HS]
    float *Ps = Vs + FLASH_TILE * HS;               // [TILE][LD_P]
    float *alpha_s = Ps + FLASH_TILE * FLASH_LD_P;  // [TILE]
    float *l_s = alpha_s + FLASH_TILE;              // [TILE]
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int q0 = blockIdx.x * FLASH_TILE, row0 = warp * FLASH_ROWS;
    size_t head = (size_t)blockIdx.y * T * HS;
    load_tile(Qs, HS, q + head, q0, T, HS);

    // Lane `lane` of the warp keeps out[row0 + r, lane + 32 c] in acc[r][c].
    float acc[FLASH_ROWS][FLASH_CHUNKS];
    for (int r = 0; r < FLASH_ROWS; r++)
        for (int c = 0; c < FLASH_CHUNKS; c++) acc[r][c] = 0.0f;
    // In the softmax step, lanes 4r' .. 4r' + 3 share row srow, and each of
    // them keeps the row's running maximum and sum (all four the same).
    int srow = row0 + lane / FLASH_PARTS, part = lane % FLASH_PARTS;
    float m_run = -INFINITY, l_run = 0.0f;

    // Key tiles up to the block's last query: the causal mask hides the
    // rest from every row of the block.
    int nkeys = T < q0 + FLASH_TILE ? T : q0 + FLASH_TILE;
    for (int k0 = 0; k0 < nkeys; k0 += FLASH_TILE) {
        load_tile(Ks, ldk, k + head, k0, T, HS);
        load_tile(Vs, HS, v + head, k0, T, HS);
        __syncthreads();
        // Scores: lane j for key k0 + j, against the warp's query rows.
        float s[FLASH_ROWS];
        for (int r = 0; r < FLASH_ROWS; r++) s[r] = 0.0f;
        const float *krow = Ks + lane * ldk;
        for (int d = 0; d < HS; d++) {
            float kd = krow[d];
            for (int r = 0; r < FLASH_ROWS; r++)
                s[r] += Qs[(row0 + r) * HS + d] * kd;
        }
        for (int r = 0; r < FLASH_ROWS; r++) {
            bool seen = k0 + lane <= q0 + row0 + r;   // the causal mask
            Ps[(row0 + r) * FLASH_LD_P + lane] = seen ? s[r] * scale
                                                      : -INFINITY;
        }
        __syncthreads();
        // Online softmax, four lanes per row, eight keys each. Every row
        // sees key 0 in the first tile, so m_new is finite from there on
        // (rows past T included: their zero queries score 0).
        {
            float *p = Ps + srow * FLASH_LD_P + part * FLASH_PART_KEYS;
            float mx = -INFINITY;
            for (int e = 0; e < FLASH_PART_KEYS; e++) mx = fmaxf(mx, p[e]);
            for (int o = 1; o < FLASH_PARTS; o *= 2)
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
            float m_new = fmaxf(m_run, mx), sum = 0.0f;
            for (int e = 0; e < FLASH_PART_KEYS; e++) {
                p[e] = expf(p[e] - m_new);            // hidden: exp(-inf) = 0
                sum += p[e];
            }
            for (int o = 1; o < FLASH_PARTS; o *= 2)
                sum += __shfl_xor_sync(0xffffffffu, sum, o);
            float alpha = expf(m_run - m_new);        // 0 on the first tile
            l_run = l_run * alpha + sum;
            m_run = m_new;
            if (part == 0) alpha_s[srow] = alpha, l_s[srow] = l_run;
        }
        __syncthreads();
        // acc = alpha acc + P V: the old sums rescaled to the new maximum.
        // A value row's floats are read once and used for all the rows.
        for (int r = 0; r < FLASH_ROWS; r++) {
            float alpha = alpha_s[row0 + r];
            for (int c = 0; c < FLASH_CHUNKS; c++) acc[r][c] *= alpha;
        }
        for (int j = 0; j < FLASH_TILE; j++) {
            float vj[FLASH_CHUNKS];
            for (int c = 0; c < FLASH_CHUNKS; c++) {
                int d = lane + 32 * c;
                vj[c] = d < HS ? Vs[j * HS + d] : 0.0f;
            }
            for (int r = 0; r < FLASH_ROWS; r++) {
                float pj = Ps[(row0 + r) * FLASH_LD_P + j];
                for (int c = 0; c < FLASH_CHUNKS; c++)
                    if (32 * c < HS) acc[r][c] += pj * vj[c];
            }
        }
        __syncthreads();   // before the next tile overwrites K, V, P
    }
    for (int r = 0; r < FLASH_ROWS; r++) {
        int i = q0 + row0 + r;
        if (i >= T) break;
        float l = l_s[row0 + r];
        for (int c = 0; c < FLASH_CHUNKS; c++) {
            int d = lane + 32 * c;
            if (d < HS) out[head + (size_t)i * HS + d] = acc[r][c] / l;
        }
    }
    if (part == 0 && q0 + srow < T)
        lse[(size_t)blockIdx.y * T + q0 + srow] = m_run + logf(l_run);
}
//< flash-forward

// D[i] = sum_d dout[i, d] * out[i, d] for each of the rows, one warp per
// row: lanes take every 32nd float, then halve the partial sums down to
// lane 0 by shuffles (a fixed order, so the same result every run).
__global__ void flash_rowdot_kernel(float *D, const float *dout,
                                    const float *out, size_t rows, int HS) {
    size_t i = (size_t)blockIdx.x * (ROWDOT_THREADS / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (i >= rows) return;   // a whole warp at once: its shuffles are safe
    const float *a = dout + i * HS, *b = out + i * HS;
    float sum = 0.0f;
    for (int d = lane; d < HS; d += 32) sum += a[d] * b[d];
    for (int o = 16; o > 0; o /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0) D[i] = sum;
}

// dK, dV: block (x, z) owns keys k0 = x * FLASH_TILE .. k0 + 31 of head z
// and visits the query tiles that can see them, from query k0 to the end.
// Per query tile, lane i takes query i0 + i against the warp's keys:
// P = exp(score - lse) and dS = P (dP - D), kept as tiles in shared
// memory; then lane d adds column d of P^T dout to dV and of dS^T q to dK
// (the scale of the scores is applied once, at the end).
__global__ void flash_backward_dkv_kernel(float *dk, float *dv,
                                          const float *dout,
                                          const float *lse, const float *D,
                                          const float *q, const float *k,
                                          const float *v, int T, int HS,
                                          float scale) {
    SHARED_ARRAY(float, smem);
    int ldq = HS | 1;   // odd: lane i reads row i of Q and dO
    float *Ks = smem;                                 // [TILE][HS]
    float *Vs = Ks + FLASH_TILE * HS;                 // [TILE][HS]
    float *Qs = Vs + FLASH_TILE * HS;                 // [TILE][ldq]
    float *dOs = Qs + FLASH_TILE * ldq;               // [TILE][ldq]
    float *Ps = dOs + FLASH_TILE * ldq;               // [TILE][LD_P]
    float *dSs = Ps + FLASH_TILE * FLASH_LD_P;        // [TILE][LD_P]
    float *lse_s = dSs + FLASH_TILE * FLASH_LD_P;     // [TILE]
    float *D_s = lse_s + FLASH_TILE;                  // [TILE]
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int k0 = blockIdx.x * FLASH_TILE, row0 = warp * FLASH_ROWS;
    size_t head = (size_t)blockIdx.y * T * HS, hrow = (size_t)blockIdx.y * T;
    load_tile(Ks, HS, k + head, k0, T, HS);
    load_tile(Vs, HS, v + head, k0, T, HS);

    float dk_acc[FLASH_ROWS][FLASH_CHUNKS], dv_acc[FLASH_ROWS][FLASH_CHUNKS];
    for (int r = 0; r < FLASH_ROWS; r++)
        for (int c = 0; c < FLASH_CHUNKS; c++)
            dk_acc[r][c] = 0.0f, dv_acc[r][c] = 0.0f;

    for (int i0 = k0; i0 < T; i0 += FLASH_TILE) {
        load_tile(Qs, ldq, q + head, i0, T, HS);
        load_tile(dOs, ldq, dout + head, i0, T, HS);
        load_row_values(lse_s, lse + hrow, i0, T);
        load_row_values(D_s, D + hrow, i0, T);
        __syncthreads();
        float s[FLASH_ROWS], dp[FLASH_ROWS];
        for (int r = 0; r < FLASH_ROWS; r++) s[r] = 0.0f, dp[r] = 0.0f;
        const float *qrow = Qs + lane * ldq, *grow = dOs + lane * ldq;
        for (int d = 0; d < HS; d++) {
            float qd = qrow[d], gd = grow[d];
            for (int r = 0; r < FLASH_ROWS; r++) {
                s[r] += Ks[(row0 + r) * HS + d] * qd;
                dp[r] += Vs[(row0 + r) * HS + d] * gd;
            }
        }
        int i = i0 + lane;
        for (int r = 0; r < FLASH_ROWS; r++) {
            bool seen = i >= k0 + row0 + r && i < T;
            float p = seen ? expf(s[r] * scale - lse_s[lane]) : 0.0f;
            Ps[(row0 + r) * FLASH_LD_P + lane] = p;
            dSs[(row0 + r) * FLASH_LD_P + lane] = p * (dp[r] - D_s[lane]);
        }
        __syncthreads();
        for (int j = 0; j < FLASH_TILE; j++) {   // query i0 + j
            float gj[FLASH_CHUNKS], qj[FLASH_CHUNKS];
            for (int c = 0; c < FLASH_CHUNKS; c++) {
                int d = lane + 32 * c;
                gj[c] = d < HS ? dOs[j * ldq + d] : 0.0f;
                qj[c] = d < HS ? Qs[j * ldq + d] : 0.0f;
            }
            for (int r = 0; r < FLASH_ROWS; r++) {
                float pj = Ps[(row0 + r) * FLASH_LD_P + j];
                float dsj = dSs[(row0 + r) * FLASH_LD_P + j];
                for (int c = 0; c < FLASH_CHUNKS; c++)
                    if (32 * c < HS) {   // the same for the whole warp
                        dv_acc[r][c] += pj * gj[c];
                        dk_acc[r][c] += dsj * qj[c];
                    }
            }
        }
        __syncthreads();   // before the next tile overwrites Q, dO, P, dS
    }
    for (int r = 0; r < FLASH_ROWS; r++) {
        int j = k0 + row0 + r;
        if (j >= T) break;
        for (int c = 0; c < FLASH_CHUNKS; c++) {
            int d = lane + 32 * c;
            if (d < HS) {
                dk[head + (size_t)j * HS + d] += scale * dk_acc[r][c];
                dv[head + (size_t)j * HS + d] += dv_acc[r][c];
            }
        }
    }
}

// dQ: block (x, z) owns queries q0 = x * FLASH_TILE .. q0 + 31 of head z
// and visits the key tiles they see. Lane j takes key k0 + j against the
// warp's queries to recompute dS = P (dP - D); then lane d adds column d
// of dS K to its rows. K and V are read a row per lane, so their row
// stride is odd.
__global__ void flash_backward_dq_kernel(float *dq, const float *dout,
                                         const float *lse, const float *D,
                                         const float *q, const float *k,
                                         const float *v, int T, int HS,
                                         float scale) {
    SHARED_ARRAY(float, smem);
    int ldk = HS | 1;
    float *Qs = smem;                                 // [TILE][HS]
    float *dOs = Qs + FLASH_TILE * HS;                // [TILE][HS]
    float *Ks = dOs + FLASH_TILE * HS;                // [TILE][ldk]
    float *Vs = Ks + FLASH_TILE * ldk;                // [TILE][ldk]
    float *dSs = Vs + FLASH_TILE * ldk;               // [TILE][LD_P]
    float *lse_s = dSs + FLASH_TILE * FLASH_LD_P;     // [TILE]
    float *D_s = lse_s + FLASH_TILE;                  // [TILE]
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int q0 = blockIdx.x * FLASH_TILE, row0 = warp * FLASH_ROWS;
    size_t head = (size_t)blockIdx.y * T * HS, hrow = (size_t)blockIdx.y * T;
    load_tile(Qs, HS, q + head, q0, T, HS);
    load_tile(dOs, HS, dout + head, q0, T, HS);
    load_row_values(lse_s, lse + hrow, q0, T);
    load_row_values(D_s, D + hrow, q0, T);

    float acc[FLASH_ROWS][FLASH_CHUNKS];
    for (int r = 0; r < FLASH_ROWS; r++)
        for (int c = 0; c < FLASH_CHUNKS; c++) acc[r][c] = 0.0f;

    int nkeys = T < q0 + FLASH_TILE ? T : q0 + FLASH_TILE;
    for (int k0 = 0; k0 < nkeys; k0 += FLASH_TILE) {
        load_tile(Ks, ldk, k + head, k0, T, HS);
        load_tile(Vs, ldk, v + head, k0, T, HS);
        __syncthreads();
        float s[FLASH_ROWS], dp[FLASH_ROWS];
        for (int r = 0; r < FLASH_ROWS; r++) s[r] = 0.0f, dp[r] = 0.0f;
        const float *krow = Ks + lane * ldk, *vrow = Vs + lane * ldk;
        for (int d = 0; d < HS; d++) {
            float kd = krow[d], vd = vrow[d];
            for (int r = 0; r < FLASH_ROWS; r++) {
                s[r] += Qs[(row0 + r) * HS + d] * kd;
                dp[r] += dOs[(row0 + r) * HS + d] * vd;
            }
        }
        for (int r = 0; r < FLASH_ROWS; r++) {
            bool seen = k0 + lane <= q0 + row0 + r;
            float p = seen ? expf(s[r] * scale - lse_s[row0 + r]) : 0.0f;
            dSs[(row0 + r) * FLASH_LD_P + lane] = p * (dp[r] - D_s[row0 + r]);
        }
        __syncthreads();
        for (int j = 0; j < FLASH_TILE; j++) {
            float kj[FLASH_CHUNKS];
            for (int c = 0; c < FLASH_CHUNKS; c++) {
                int d = lane + 32 * c;
                kj[c] = d < HS ? Ks[j * ldk + d] : 0.0f;
            }
            for (int r = 0; r < FLASH_ROWS; r++) {
                float dsj = dSs[(row0 + r) * FLASH_LD_P + j];
                for (int c = 0; c < FLASH_CHUNKS; c++)
                    if (32 * c < HS) acc[r][c] += dsj * kj[c];
            }
        }
        __syncthreads();   // before the next tile overwrites K, V, dS
    }
    for (int r = 0; r < FLASH_ROWS; r++) {
        int i = q0 + row0 + r;
        if (i >= T) break;
        for (int c = 0; c < FLASH_CHUNKS; c++) {
            int d = lane + 32 * c;
            if (d < HS) dq[head + (size_t)i * HS + d] += scale * acc[r][c];
        }
    }
}
//< flash-cuda

// Bytes of dynamic shared memory of each kernel at head size HS.
static size_t forward_shared(int HS) {
    size_t tile = (size_t)FLASH_TILE * HS, odd = (size_t)FLASH_TILE * (HS | 1);
    return sizeof(float) * (2 * tile + odd + FLASH_TILE * FLASH_LD_P
                            + 2 * FLASH_TILE);
}
static size_t dkv_shared(int HS) {
    size_t tile = (size_t)FLASH_TILE * HS, odd = (size_t)FLASH_TILE * (HS | 1);
    return sizeof(float) * (2 * tile + 2 * odd + 2 * FLASH_TILE * FLASH_LD_P
                            + 2 * FLASH_TILE);
}
static size_t dq_shared(int HS) {
    size_t tile = (size_t)FLASH_TILE * HS, odd = (size_t)FLASH_TILE * (HS | 1);
    return sizeof(float) * (2 * tile + 2 * odd + FLASH_TILE * FLASH_LD_P
                            + 2 * FLASH_TILE);
}

// A launch may use 48 KiB of dynamic shared memory unless the kernel has
// asked for more beforehand (up to 227 KiB on an H100, 163 on an A100).
// The emulator allows 48 KiB and has nothing to ask.
template <class Kernel>
static void allow_shared(Kernel kernel, size_t bytes) {
#ifdef __CUDACC__
    if (bytes > 48 * 1024)
        CUDA_CHECK(cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
#else
    (void)kernel, (void)bytes;
#endif
}

// Stops the program when HS is more than the kernels' registers hold.
static void check_head_size(const char *fn, int HS) {
    if (HS > FLASH_MAX_HS)
        cuda_fail(fn, "head size above FLASH_MAX_HS (128)", __FILE__,
                  __LINE__);
}

void attention_forward_flash_cuda(float *out, float *lse, const float *q,
                                  const float *k, const float *v, int B,
                                  int NH, int T, int HS) {
    if (B * NH == 0 || T == 0 || HS == 0) return;
    check_head_size("attention_forward_flash_cuda", HS);
    float scale = 1.0f / sqrtf((float)HS);
    dim3 grid(ceil_div((size_t)T, FLASH_TILE), (unsigned)(B * NH));
    size_t shmem = forward_shared(HS);
    allow_shared(flash_forward_kernel, shmem);
    LAUNCH(flash_forward_kernel, grid, FLASH_THREADS, shmem, out, lse, q, k,
           v, T, HS, scale);
}

// D, one float per query row, lives between the calls of the program:
// grown when a call needs more, never freed (the chapter runs one stream,
// so two calls never use it at once).
static float *row_dots(size_t rows) {
    static float *buf;
    static size_t cap;
    if (rows > cap) {
        cuda_free(buf);
        buf = cuda_alloc_floats(rows);
        cap = rows;
    }
    return buf;
}

const float *attention_row_dots_cuda(const float *dout, const float *out,
                                     size_t rows, int HS) {
    float *D = row_dots(rows);
    LAUNCH(flash_rowdot_kernel, ceil_div(rows, ROWDOT_THREADS / 32),
           ROWDOT_THREADS, 0, D, dout, out, rows, HS);
    return D;
}

void attention_backward_flash_cuda(float *dq, float *dk, float *dv,
                                   const float *dout, const float *out,
                                   const float *lse, const float *q,
                                   const float *k, const float *v, int B,
                                   int NH, int T, int HS) {
    if (B * NH == 0 || T == 0 || HS == 0) return;
    check_head_size("attention_backward_flash_cuda", HS);
    float scale = 1.0f / sqrtf((float)HS);
    const float *D = attention_row_dots_cuda(dout, out,
                                             (size_t)B * NH * T, HS);
    dim3 grid(ceil_div((size_t)T, FLASH_TILE), (unsigned)(B * NH));
    size_t shmem = dkv_shared(HS);
    allow_shared(flash_backward_dkv_kernel, shmem);
    LAUNCH(flash_backward_dkv_kernel, grid, FLASH_THREADS, shmem, dk, dv,
           dout, lse, D, q, k, v, T, HS, scale);
    shmem = dq_shared(HS);
    allow_shared(flash_backward_dq_kernel, shmem);
    LAUNCH(flash_backward_dq_kernel, grid, FLASH_THREADS, shmem, dq, dout,
           lse, D, q, k, v, T, HS, scale);
}
