// flash_tc.cu - flash.cu's fused causal attention with its matrix
// products on the tensor cores: bf16 operands, fp32 sums, through CUDA's
// warp matrix API (nvcuda::wmma). The same algorithm as flash.cu
// (FlashAttention-2: tiles of queries against tiles of keys, the online
// softmax, the (T, T) weights never stored, the backward pass recomputing
// them from each row's log-sum-exp), the same API and the same outputs,
// within bf16's rounding.
//
// A tensor core multiplies 16x16 tiles: a warp's mma_sync computes
// D = A B + C for A (16 x 16) and B (16 x 16) held in "fragments" spread
// over its 32 lanes. Everything here is built from such tiles:
//  - A block is TC_WARPS = 4 warps and owns TC_TILE = 64 rows (queries in
//    the forward and dQ kernels, keys in the dK, dV kernel); each warp
//    owns 16 of them, one fragment's height.
//  - The other side streams through shared memory TC_STEP = 16 rows at
//    a time: each step, each warp computes a 16x16 tile of scores with
//    HS / 16 products, turns it into weights, and multiplies those by the
//    step's 16 rows of values with HS / 16 more.
//  - Which lane holds which element of a fragment is not specified by
//    CUDA (the emulation scrambles it on purpose: emu.h). So nothing here
//    looks at a fragment's elements one by one, except to multiply all of
//    them by the same number: the masks, the softmax and the per-row
//    rescaling happen on tiles stored to shared memory
//    (store_matrix_sync), where a lane knows the row and column of what it
//    reads, and the weights go back into a fragment by load_matrix_sync.
//    The output of the forward pass, which the online softmax rescales
//    row by row, lives in shared memory for the same reason, and passes
//    through a fragment for each product.
//  - q, k, v and dout come in fp32 and are rounded to bf16 as they enter
//    shared memory; so are the weights P and their gradients dS before
//    their products. Every sum is fp32, as are lse, D and the outputs.
//
// Deterministic, as flash.cu: one block adds into each gradient row, the
// dK, dV kernel looping over query tiles and the dQ kernel over key tiles.
// No dropout on the weights: the chapter's model has none in attention
// (dropout.cu acts on the residual branches).
//
// Head sizes 16, 32, 48 and 64 (a multiple of the fragments' 16; 64 is
// GPT-2's and nanoGPT's): the others are refused. No timings on a GPU
// exist yet for these kernels.
#include "cuda_rt.h"

#include <math.h>

#ifdef __CUDACC__
#include <cuda_bf16.h>
#include <mma.h>
#endif

extern "C" {
#include "flash.cuh"
}

typedef __nv_bfloat16 bf16;
using namespace nvcuda;

#define TC_WARPS 4
#define TC_THREADS (32 * TC_WARPS)
#define TC_ROWS 16                      // a warp's rows: a fragment's
#define TC_TILE (TC_ROWS * TC_WARPS)    // a block's rows: 64
#define TC_STEP 16                      // rows of the streamed side a step
#define TC_MAX_HS 64
#define TC_CHUNKS (TC_MAX_HS / 16)      // fragments across a row of HS

// The fragment types: a 16x16 tile of bf16 operands, A row-major, B in
// either layout, and an fp32 accumulator.
typedef wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>
    FragA;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major>
    FragB;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major>
    FragBt;
typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> FragC;

// Rows r0 .. r0 + n - 1 of a (T, HS) fp32 matrix into a bf16 tile of
// row stride HS in shared memory, rows at or past T as zeros.
__device__ static void load_tile_bf16(bf16 *dst, const float *src, int r0,
                                      int n, int T, int HS) {
    for (int i = threadIdx.x; i < n * HS; i += blockDim.x)
        dst[i] = __float2bfloat16(r0 + i / HS < T ? src[(size_t)r0 * HS + i]
                                                  : 0.0f);
}

//> flash-tc-scores
// The 16x16 tile of scores A B^T of a warp: A's 16 rows (row stride HS,
// bf16) against B's 16 rows (the same), a sum over HS in chunks of 16.
// B^T's element (d, j) is B[j * HS + d]: B read column-major.
__device__ static void tile_dots(float *out, const bf16 *A, const bf16 *B,
                                 int HS) {
    FragC s;
    wmma::fill_fragment(s, 0.0f);
    for (int d0 = 0; d0 < HS; d0 += 16) {
        FragA a;
        FragBt b;
        wmma::load_matrix_sync(a, A + d0, HS);
        wmma::load_matrix_sync(b, B + d0, HS);
        wmma::mma_sync(s, a, b, s);
    }
    wmma::store_matrix_sync(out, s, 16, wmma::mem_row_major);
}
//< flash-tc-scores

// In the softmax steps, lanes 2r and 2r + 1 of a warp share row r of its
// 16x16 tile: eight columns each, from HALF_COL(lane).
#define ROW_OF(lane) ((lane) / 2)
#define HALF_COL(lane) ((lane) % 2 * 8)

//> flash-tc-forward
// Forward: block (x, z) computes the TC_TILE query rows from
// q0 = x * TC_TILE of head z; warp w those from q0 + 16 w. Shared memory:
// the query tile Q and a step's keys K and values V (bf16); per warp its
// 16 rows of the output O (fp32, row stride HS), a tile of scores S
// (fp32) and of weights P (bf16).
__global__ void flash_tc_forward_kernel(float *out, float *lse,
                                        const float *q, const float *k,
                                        const float *v, int T, int HS,
                                        float scale) {
    SHARED_ARRAY(float, smem);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *O = smem + warp * TC_ROWS * HS;              // [16][HS]
    float *S = smem + TC_WARPS * TC_ROWS * HS + warp * 256;   // [16][16]
    bf16 *Qs = (bf16 *)(smem + TC_WARPS * (TC_ROWS * HS + 256));
    bf16 *Ks = Qs + TC_TILE * HS, *Vs = Ks + TC_STEP * HS;    // [16][HS]
    bf16 *P = Vs + TC_STEP * HS + warp * 256;           // [16][16]
    int q0 = blockIdx.x * TC_TILE, w0 = q0 + warp * TC_ROWS;
    size_t head = (size_t)blockIdx.y * T * HS;
    load_tile_bf16(Qs, q + head, q0, TC_TILE, T, HS);
    for (int i = lane; i < TC_ROWS * HS; i += 32) O[i] = 0.0f;
    // Lanes 2r, 2r + 1 keep row r's running maximum and sum (the same),
    // and look after half of row r of O each, from column dh.
    int r = ROW_OF(lane), c0 = HALF_COL(lane), i = w0 + r;
    int dh = lane % 2 * (HS / 2);
    float m_run = -INFINITY, l_run = 0.0f;

    int nkeys = T < q0 + TC_TILE ? T : q0 + TC_TILE;
    for (int k0 = 0; k0 < nkeys; k0 += TC_STEP) {
        load_tile_bf16(Ks, k + head, k0, TC_STEP, T, HS);
        load_tile_bf16(Vs, v + head, k0, TC_STEP, T, HS);
        __syncthreads();
        // A step wholly after the warp's last query: all hidden, skipped.
        if (k0 < w0 + TC_ROWS) {
            tile_dots(S, Qs + warp * TC_ROWS * HS, Ks, HS);
            __syncwarp();
            // The online softmax of row r over the step's 16 keys (key 0
            // is in every row's first step, so m_new is finite).
            float x[8], mx = -INFINITY;
            for (int e = 0; e < 8; e++) {
                int j = k0 + c0 + e;
                x[e] = j <= i ? S[r * 16 + c0 + e] * scale : -INFINITY;
                mx = fmaxf(mx, x[e]);
            }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            float m_new = fmaxf(m_run, mx), sum = 0.0f;
            for (int e = 0; e < 8; e++) {
                bf16 p = __float2bfloat16(expf(x[e] - m_new));
                P[r * 16 + c0 + e] = p;
                sum += __bfloat162float(p);   // the weights P V multiplies
            }
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            float alpha = expf(m_run - m_new);   // 0 on the first step
            l_run = l_run * alpha + sum;
            m_run = m_new;
            for (int d = dh; d < dh + HS / 2; d++)
                O[r * HS + d] *= alpha;   // this lane's half of row r
            __syncwarp();
            // O += P V, a 16-column chunk of O at a time.
            FragA p;
            wmma::load_matrix_sync(p, P, 16);
            for (int d0 = 0; d0 < HS; d0 += 16) {
                FragC o;
                FragB vb;
                wmma::load_matrix_sync(o, O + d0, HS, wmma::mem_row_major);
                wmma::load_matrix_sync(vb, Vs + d0, HS);
                wmma::mma_sync(o, p, vb, o);
                wmma::store_matrix_sync(O + d0, o, HS, wmma::mem_row_major);
            }
            __syncwarp();
        }
        __syncthreads();   // before the next step overwrites K and V
    }
    if (i < T) {
        for (int d = dh; d < dh + HS / 2; d++)
            out[head + (size_t)i * HS + d] = O[r * HS + d] / l_run;
        if (c0 == 0) lse[(size_t)blockIdx.y * T + i] = m_run + logf(l_run);
    }
}
//< flash-tc-forward

// Adds scale times a warp's accumulators acc[0 .. HS/16 - 1] (its 16 rows
// from row w0, HS columns) into rows below T of g, through the 16x16
// tile `stage` in shared memory: the rows of a fragment's elements are
// not known, a stored tile's are.
__device__ static void add_rows(float *g, FragC *acc, float *stage,
                                int w0, int T, int HS, float scale) {
    int lane = threadIdx.x % 32, r = ROW_OF(lane), c0 = HALF_COL(lane);
    for (int c = 0; c < HS / 16; c++) {
        for (int e = 0; e < acc[c].num_elements; e++) acc[c].x[e] *= scale;
        wmma::store_matrix_sync(stage, acc[c], 16, wmma::mem_row_major);
        __syncwarp();
        if (w0 + r < T)
            for (int e = 0; e < 8; e++)
                g[(size_t)(w0 + r) * HS + 16 * c + c0 + e] +=
                    stage[r * 16 + c0 + e];
        __syncwarp();   // before the next chunk overwrites the tile
    }
}

//> flash-tc-backward
// dK, dV: block (x, z) owns keys k0 = x * TC_TILE .. k0 + 63 of head z,
// warp w keys kw = k0 + 16 w ..; the block visits the query steps that
// can see them, from query k0 on. Per step a warp computes, transposed
// (its keys as rows), S^T = K Q^T and dP^T = V dO^T, then
// P^T = exp(S^T scale - lse) and dS^T = P^T (dP^T - D), and adds
// P^T dO to dV and dS^T Q to dK (times the scale at the end).
__global__ void flash_tc_backward_dkv_kernel(float *dk, float *dv,
                                             const float *dout,
                                             const float *lse,
                                             const float *D, const float *q,
                                             const float *k, const float *v,
                                             int T, int HS, float scale) {
    SHARED_ARRAY(float, smem);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *S = smem + warp * 512, *dP = S + 256;        // [16][16] each
    float *lse_s = smem + TC_WARPS * 512;               // [16]
    float *D_s = lse_s + TC_STEP;                       // [16]
    bf16 *Ks = (bf16 *)(D_s + TC_STEP);                 // [64][HS]
    bf16 *Vs = Ks + TC_TILE * HS;                       // [64][HS]
    bf16 *Qs = Vs + TC_TILE * HS, *dOs = Qs + TC_STEP * HS;   // [16][HS]
    bf16 *P = dOs + TC_STEP * HS + warp * 512, *dS = P + 256; // [16][16]
    int k0 = blockIdx.x * TC_TILE, kw = k0 + warp * TC_ROWS;
    size_t head = (size_t)blockIdx.y * T * HS, hrow = (size_t)blockIdx.y * T;
    load_tile_bf16(Ks, k + head, k0, TC_TILE, T, HS);
    load_tile_bf16(Vs, v + head, k0, TC_TILE, T, HS);
    FragC dk_acc[TC_CHUNKS], dv_acc[TC_CHUNKS];
    for (int c = 0; c < HS / 16; c++) {
        wmma::fill_fragment(dk_acc[c], 0.0f);
        wmma::fill_fragment(dv_acc[c], 0.0f);
    }
    int r = ROW_OF(lane), c0 = HALF_COL(lane), j = kw + r;   // j: a key

    for (int i0 = k0; i0 < T; i0 += TC_STEP) {
        load_tile_bf16(Qs, q + head, i0, TC_STEP, T, HS);
        load_tile_bf16(dOs, dout + head, i0, TC_STEP, T, HS);
        for (int e = threadIdx.x; e < TC_STEP; e += blockDim.x) {
            lse_s[e] = i0 + e < T ? lse[hrow + i0 + e] : 0.0f;
            D_s[e] = i0 + e < T ? D[hrow + i0 + e] : 0.0f;
        }
        __syncthreads();
        // A step wholly before the warp's first key sees none of them.
        if (i0 + TC_STEP > kw) {
            tile_dots(S, Ks + warp * TC_ROWS * HS, Qs, HS);
            tile_dots(dP, Vs + warp * TC_ROWS * HS, dOs, HS);
            __syncwarp();
            for (int e = 0; e < 8; e++) {
                int c = c0 + e, i = i0 + c;            // i: a query
                float p = i >= j && i < T
                              ? expf(S[r * 16 + c] * scale - lse_s[c])
                              : 0.0f;
                P[r * 16 + c] = __float2bfloat16(p);
                dS[r * 16 + c] = __float2bfloat16(p * (dP[r * 16 + c]
                                                       - D_s[c]));
            }
            __syncwarp();
            FragA pa, dsa;
            wmma::load_matrix_sync(pa, P, 16);
            wmma::load_matrix_sync(dsa, dS, 16);
            for (int c = 0; c < HS / 16; c++) {
                FragB gb, qb;
                wmma::load_matrix_sync(gb, dOs + 16 * c, HS);
                wmma::load_matrix_sync(qb, Qs + 16 * c, HS);
                wmma::mma_sync(dv_acc[c], pa, gb, dv_acc[c]);
                wmma::mma_sync(dk_acc[c], dsa, qb, dk_acc[c]);
            }
        }
        __syncthreads();   // before the next step overwrites Q, dO
    }
    add_rows(dk + head, dk_acc, S, kw, T, HS, scale);
    add_rows(dv + head, dv_acc, S, kw, T, HS, 1.0f);
}

//< flash-tc-backward

// dQ: block (x, z) owns queries q0 = x * TC_TILE .. q0 + 63 of head z and
// visits the key steps they see. Per step a warp recomputes S = Q K^T,
// dP = dO V^T, dS = P (dP - D), and adds dS K to dQ.
__global__ void flash_tc_backward_dq_kernel(float *dq, const float *dout,
                                            const float *lse, const float *D,
                                            const float *q, const float *k,
                                            const float *v, int T, int HS,
                                            float scale) {
    SHARED_ARRAY(float, smem);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *S = smem + warp * 512, *dP = S + 256;        // [16][16] each
    bf16 *Qs = (bf16 *)(smem + TC_WARPS * 512);         // [64][HS]
    bf16 *dOs = Qs + TC_TILE * HS;                      // [64][HS]
    bf16 *Ks = dOs + TC_TILE * HS, *Vs = Ks + TC_STEP * HS;   // [16][HS]
    bf16 *dS = Vs + TC_STEP * HS + warp * 256;          // [16][16]
    int q0 = blockIdx.x * TC_TILE, w0 = q0 + warp * TC_ROWS;
    size_t head = (size_t)blockIdx.y * T * HS, hrow = (size_t)blockIdx.y * T;
    load_tile_bf16(Qs, q + head, q0, TC_TILE, T, HS);
    load_tile_bf16(dOs, dout + head, q0, TC_TILE, T, HS);
    FragC dq_acc[TC_CHUNKS];
    for (int c = 0; c < HS / 16; c++) wmma::fill_fragment(dq_acc[c], 0.0f);
    int r = ROW_OF(lane), c0 = HALF_COL(lane), i = w0 + r;   // i: a query
    float lse_i = i < T ? lse[hrow + i] : 0.0f;
    float D_i = i < T ? D[hrow + i] : 0.0f;

    int nkeys = T < q0 + TC_TILE ? T : q0 + TC_TILE;
    for (int k0 = 0; k0 < nkeys; k0 += TC_STEP) {
        load_tile_bf16(Ks, k + head, k0, TC_STEP, T, HS);
        load_tile_bf16(Vs, v + head, k0, TC_STEP, T, HS);
        __syncthreads();
        if (k0 < w0 + TC_ROWS) {
            tile_dots(S, Qs + warp * TC_ROWS * HS, Ks, HS);
            tile_dots(dP, dOs + warp * TC_ROWS * HS, Vs, HS);
            __syncwarp();
            for (int e = 0; e < 8; e++) {
                int c = c0 + e, j = k0 + c;            // j: a key
                float p = j <= i ? expf(S[r * 16 + c] * scale - lse_i)
                                 : 0.0f;
                dS[r * 16 + c] = __float2bfloat16(p * (dP[r * 16 + c] - D_i));
            }
            __syncwarp();
            FragA dsa;
            wmma::load_matrix_sync(dsa, dS, 16);
            for (int c = 0; c < HS / 16; c++) {
                FragB kb;
                wmma::load_matrix_sync(kb, Ks + 16 * c, HS);
                wmma::mma_sync(dq_acc[c], dsa, kb, dq_acc[c]);
            }
        }
        __syncthreads();   // before the next step overwrites K, V
    }
    add_rows(dq + head, dq_acc, S, w0, T, HS, scale);
}

// Bytes of dynamic shared memory of each kernel at head size HS (the
// layouts at the top of each; 34, 32 and 30 KiB at HS = 64).
static size_t forward_shared(int HS) {
    return sizeof(float) * TC_WARPS * (TC_ROWS * HS + 256)
           + sizeof(bf16) * ((TC_TILE + 2 * TC_STEP) * HS + TC_WARPS * 256);
}
static size_t dkv_shared(int HS) {
    return sizeof(float) * (TC_WARPS * 512 + 2 * TC_STEP)
           + sizeof(bf16) * ((2 * TC_TILE + 2 * TC_STEP) * HS
                             + TC_WARPS * 512);
}
static size_t dq_shared(int HS) {
    return sizeof(float) * TC_WARPS * 512
           + sizeof(bf16) * ((2 * TC_TILE + 2 * TC_STEP) * HS
                             + TC_WARPS * 256);
}

bool attention_flash_tc_supports(int HS) {
    return HS > 0 && HS % 16 == 0 && HS <= TC_MAX_HS;
}

static void check_head_size(const char *fn, int HS) {
    if (!attention_flash_tc_supports(HS))
        cuda_fail(fn, "the tensor-core attention takes head sizes 16, 32, "
                  "48 and 64 only", __FILE__, __LINE__);
}

void attention_forward_flash_tc_cuda(float *out, float *lse, const float *q,
                                     const float *k, const float *v, int B,
                                     int NH, int T, int HS) {
    if (B * NH == 0 || T == 0) return;
    check_head_size("attention_forward_flash_tc_cuda", HS);
    float scale = 1.0f / sqrtf((float)HS);
    dim3 grid(ceil_div((size_t)T, TC_TILE), (unsigned)(B * NH));
    LAUNCH(flash_tc_forward_kernel, grid, TC_THREADS, forward_shared(HS),
           out, lse, q, k, v, T, HS, scale);
}

void attention_backward_flash_tc_cuda(float *dq, float *dk, float *dv,
                                      const float *dout, const float *out,
                                      const float *lse, const float *q,
                                      const float *k, const float *v, int B,
                                      int NH, int T, int HS) {
    if (B * NH == 0 || T == 0) return;
    check_head_size("attention_backward_flash_tc_cuda", HS);
    float scale = 1.0f / sqrtf((float)HS);
    const float *D = attention_row_dots_cuda(dout, out, (size_t)B * NH * T,
                                             HS);
    dim3 grid(ceil_div((size_t)T, TC_TILE), (unsigned)(B * NH));
    LAUNCH(flash_tc_backward_dkv_kernel, grid, TC_THREADS, dkv_shared(HS),
           dk, dv, dout, lse, D, q, k, v, T, HS, scale);
    LAUNCH(flash_tc_backward_dq_kernel, grid, TC_THREADS, dq_shared(HS), dq,
           dout, lse, D, q, k, v, T, HS, scale);
}
