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
//    owns 16 of them, one fragment's height, and keeps them in operand
//    fragments for the whole kernel.
//  - The other side streams through shared memory TC_STEP = 16 rows at
//    a time: each step, each warp computes a 16x16 tile of scores with
//    HS / 16 products, turns it into weights, and multiplies those by the
//    step's 16 rows of values with HS / 16 more.
//  - Which lane holds which element of a fragment is not specified by
//    CUDA (the emulation scrambles it on purpose: emu/emu.h). So the
//    masks and the softmax happen on tiles stored to shared memory
//    (store_matrix_sync), where a lane knows the row and column of what
//    it reads, and the weights go back into a fragment by
//    load_matrix_sync. The output of the forward pass, which the online
//    softmax rescales row by row, stays in accumulator fragments: each
//    warp asks the layout once which row each of its elements is in, by
//    loading a tile that holds row numbers (row_numbers).
//  - q, k, v and dout come in fp32 and are rounded to bf16 as they enter
//    shared memory; so are the weights P and their gradients dS before
//    their products. Every sum is fp32, as are lse, D and the outputs.
//
// The head size HS is a template parameter: a warp's fragments across a
// row (HS / 16 of them) are then arrays of a size known to the compiler,
// which unrolls every loop over them and keeps them in registers. With HS
// known only at run time they went to local memory (the stack, in DRAM
// behind the caches), a load and a store around every product.
// make check-ptxas (tests/ptxas_check.sh, in CI) fails if any comes back.
//
// Shared memory is laid out so that a warp's accesses fall in distinct
// banks: tiles of HS bf16 a row get TC_PAD more (rows of 128 bytes would
// all start in the same bank), the 16x16 tiles of a warp have rows of
// TC_SLD = 24, and the softmax's lanes take their columns in the order
// of pair_col. The arithmetic is in chapter 8's text.
//
// Deterministic, as flash.cu: one block adds into each gradient row, the
// dK, dV kernel looping over query tiles and the dQ kernel over key tiles.
// No dropout on the weights: the chapter's model has none in attention
// (dropout.cu acts on the residual branches).
//
// Head sizes 16, 32, 48 and 64 (a multiple of the fragments' 16; 64 is
// GPT-2's and nanoGPT's): the others are refused. Only a GPU of compute
// capability 8.0 or more has bf16 tensor cores: nvcc's passes for older
// ones build empty kernels (TC_BUILT), which the host never launches. No
// timings on a GPU exist yet for these kernels.
#include "cuda_rt.h"

#include <math.h>
#include <type_traits>

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
#define TC_PAD 8        // bf16 after the HS of each row of a (rows, HS) tile
#define TC_SLD 24       // row stride of a warp's 16x16 tiles (S, P, dP, dS)
#define TC_SQ (16 * TC_SLD)             // elements of one such tile

// The fragment types: a 16x16 tile of bf16 operands, A row-major, B in
// either layout, and an fp32 accumulator.
typedef wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major>
    FragA;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major>
    FragB;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major>
    FragBt;
typedef wmma::fragment<wmma::accumulator, 16, 16, 16, float> FragC;

// Two floats, or two bf16, in one access (8 or 4 bytes, aligned).
struct alignas(8) Float2 {
    float x, y;
};
struct alignas(4) Bf16x2 {
    bf16 v[2];
};

// Whether this pass of the compiler builds the kernels: the host's pass
// (and the emulation) always, a device pass only for compute capability
// 8.0 or more, the first with bf16 tensor cores (mma.h defines no bf16
// fragment below it).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define TC_BUILT 1
#else
#define TC_BUILT 0
#endif

#if TC_BUILT
// Rows r0 .. r0 + n - 1 of a (T, HS) fp32 matrix into a bf16 tile of
// row stride HS + TC_PAD in shared memory, rows at or past T as zeros.
template <int HS>
__device__ static void load_tile_bf16(bf16 *dst, const float *src, int r0,
                                      int n, int T) {
    for (int i = threadIdx.x; i < n * HS; i += blockDim.x)
        dst[i / HS * (HS + TC_PAD) + i % HS] = __float2bfloat16(
            r0 + i / HS < T ? src[(size_t)r0 * HS + i] : 0.0f);
}

// The warp's 16 rows of the block's TC_TILE rows from r0 of a (T, HS)
// matrix, as HS / 16 operand fragments, through the block's tile X
// (bf16, TC_TILE rows). Every thread of the block calls it.
template <int HS>
__device__ static void rows_to_frags(FragA (&f)[HS / 16], bf16 *X,
                                     const float *src, int r0, int T) {
    constexpr int LD = HS + TC_PAD;
    __syncthreads();   // every warp is done with what X held before
    load_tile_bf16<HS>(X, src, r0, TC_TILE, T);
    __syncthreads();
    const bf16 *mine = X + threadIdx.x / 32 * TC_ROWS * LD;
    for (int c = 0; c < HS / 16; c++)
        wmma::load_matrix_sync(f[c], mine + 16 * c, LD);
}

//> flash-tc-scores
// The 16x16 tile of scores A B^T of a warp: its 16 rows A (HS / 16 = NC
// operand fragments, held all along) against the 16 rows of B in shared
// memory (row stride ld, bf16), a sum over HS in chunks of 16. B^T's
// element (d, j) is B[j * ld + d]: B read column-major. out: a
// [16][TC_SLD] fp32 tile.
template <int NC>
__device__ static void tile_scores(float *out, const FragA (&a)[NC],
                                   const bf16 *B, int ld) {
    FragC s;
    wmma::fill_fragment(s, 0.0f);
    for (int c = 0; c < NC; c++) {
        FragBt b;
        wmma::load_matrix_sync(b, B + 16 * c, ld);
        wmma::mma_sync(s, a[c], b, s);
    }
    wmma::store_matrix_sync(out, s, TC_SLD, wmma::mem_row_major);
}
//< flash-tc-scores

//> flash-tc-banks
// In the softmax steps, lanes 2r and 2r + 1 of a warp share row r of its
// 16x16 tile, eight columns each from 8h (h = lane % 2), as four pairs:
// pair m of a lane is the column pair_col(lane, m). The order differs
// from lane to lane so that the warp's 32 reads of S (8 bytes each, a
// half warp at a time) and its 32 writes of P (4 bytes) each fall in
// distinct banks of shared memory: in rows of TC_SLD = 24, a row starts
// 3 * 8 banks after the last one (floats) or 3 * 4 (bf16), so lanes
// whose 3r + h agree modulo 8 (P) or modulo 4 in a half warp (S) must
// take different pairs, which `first` gives them.
__device__ static inline int pair_col(int lane, int m) {
    int r = lane / 2, h = lane % 2;
    int first = 2 * (((3 * r + h) / 4 % 2) ^ (r / 8)) + h;
    return 8 * h + 2 * ((m + first) % 4);
}

// Whole-tile copies in and out of a warp's 16x16 tile: lane l takes
// column l % 16 of rows stage_row(e, l), e = 0 .. 7: lanes 0-15 one row,
// lanes 16-31 the row two below, 48 floats on: 16 banks away.
__device__ static inline int stage_row(int e, int lane) {
    return e / 2 * 4 + e % 2 + 2 * (lane / 16);
}
//< flash-tc-banks

//> flash-tc-rows
// at.x[e] = the row (0 to 15) of the element that slot e of this lane's
// accumulator fragments holds: loaded from a tile whose every element is
// its own row number, through the warp's tile `stage`. The layout is
// never guessed, only asked; it is the same for every accumulator
// fragment of the warp (CUDA's element-wise operations on two of them
// rely on that too).
__device__ static void row_numbers(FragC &at, float *stage) {
    int lane = threadIdx.x % 32;
    for (int e = 0; e < 8; e++)
        stage[stage_row(e, lane) * TC_SLD + lane % 16] =
            (float)stage_row(e, lane);
    __syncwarp();
    wmma::load_matrix_sync(at, stage, TC_SLD, wmma::mem_row_major);
    __syncwarp();   // before the tile is overwritten
}

// f[c] *= the factor of each element's row: rowv[row] (rowv: 16 floats
// in shared memory, at: the rows, from row_numbers).
template <int NC>
__device__ static void scale_rows(FragC (&f)[NC], const FragC &at,
                                  const float *rowv) {
    for (int e = 0; e < at.num_elements; e++) {
        float s = rowv[(int)at.x[e]];
        for (int c = 0; c < NC; c++) f[c].x[e] *= s;
    }
}
//< flash-tc-rows

// Adds a warp's accumulators acc[0 .. HS/16 - 1] (its 16 rows from row
// w0, HS columns) into rows below T of g (or sets them, add = false),
// through the warp's 16x16 tile `stage`: the rows of a fragment's
// elements are not known, a stored tile's are.
template <int HS>
__device__ static void write_rows(float *g, const FragC (&acc)[HS / 16],
                                  float *stage, int w0, int T, bool add) {
    int lane = threadIdx.x % 32, col = lane % 16;
    for (int c = 0; c < HS / 16; c++) {
        wmma::store_matrix_sync(stage, acc[c], TC_SLD, wmma::mem_row_major);
        __syncwarp();
        for (int e = 0; e < 8; e++) {
            int row = stage_row(e, lane);
            if (w0 + row < T) {
                float *p = g + (size_t)(w0 + row) * HS + 16 * c + col;
                float x = stage[row * TC_SLD + col];
                *p = add ? *p + x : x;
            }
        }
        __syncwarp();   // before the next chunk overwrites the tile
    }
}

//> flash-tc-forward
// Forward: block (x, z) computes the TC_TILE query rows from
// q0 = x * TC_TILE of head z; warp w those from q0 + 16 w, and keeps
// them (qa) and its 16 rows of the output (o) in fragments. Shared
// memory: the block's query tile Q (only to fill qa) and a step's keys K
// and values V (bf16, rows of LD); per warp a tile of scores S (fp32), a
// factor per row (rowv) and a tile of weights P (bf16).
template <int HS>
__global__ void flash_tc_forward_kernel(float *out, float *lse,
                                        const float *q, const float *k,
                                        const float *v, int T, float scale) {
    constexpr int LD = HS + TC_PAD, NC = HS / 16;
    SHARED_ARRAY(float, smem);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *S = smem + warp * TC_SQ;                       // [16][TC_SLD]
    float *rowv = smem + TC_WARPS * TC_SQ + warp * 16;    // [16]
    bf16 *Qs = (bf16 *)(smem + TC_WARPS * (TC_SQ + 16));  // [64][LD]
    bf16 *Ks = Qs + TC_TILE * LD, *Vs = Ks + TC_STEP * LD;  // [16][LD]
    bf16 *P = Vs + TC_STEP * LD + warp * TC_SQ;           // [16][TC_SLD]
    int q0 = blockIdx.x * TC_TILE, w0 = q0 + warp * TC_ROWS;
    size_t head = (size_t)blockIdx.y * T * HS;
    FragA qa[NC];
    rows_to_frags<HS>(qa, Qs, q + head, q0, T);
    FragC o[NC], at;   // O, 16 columns a fragment; at: its elements' rows
    for (int c = 0; c < NC; c++) wmma::fill_fragment(o[c], 0.0f);
    row_numbers(at, S);
    // Lanes 2r, 2r + 1 keep row r's running maximum and sum (the same).
    int r = lane / 2, i = w0 + r;
    float m_run = -INFINITY, l_run = 0.0f;

    int nkeys = T < q0 + TC_TILE ? T : q0 + TC_TILE;
    for (int k0 = 0; k0 < nkeys; k0 += TC_STEP) {
        load_tile_bf16<HS>(Ks, k + head, k0, TC_STEP, T);
        load_tile_bf16<HS>(Vs, v + head, k0, TC_STEP, T);
        __syncthreads();
        // A step wholly after the warp's last query: all hidden, skipped.
        if (k0 < w0 + TC_ROWS) {
            tile_scores<NC>(S, qa, Ks, LD);
            __syncwarp();
            // The online softmax of row r over the step's 16 keys (key 0
            // is in every row's first step, so m_new is finite).
            float x[8], mx = -INFINITY;
            for (int m = 0; m < 4; m++) {
                int c = pair_col(lane, m);
                Float2 s = *(const Float2 *)(S + r * TC_SLD + c);
                x[2 * m] = k0 + c <= i ? s.x * scale : -INFINITY;
                x[2 * m + 1] = k0 + c + 1 <= i ? s.y * scale : -INFINITY;
                mx = fmaxf(mx, fmaxf(x[2 * m], x[2 * m + 1]));
            }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            float m_new = fmaxf(m_run, mx), sum = 0.0f;
            for (int m = 0; m < 4; m++) {
                Bf16x2 p = {{__float2bfloat16(expf(x[2 * m] - m_new)),
                             __float2bfloat16(expf(x[2 * m + 1] - m_new))}};
                *(Bf16x2 *)(P + r * TC_SLD + pair_col(lane, m)) = p;
                // the weights P V multiplies
                sum += __bfloat162float(p.v[0]) + __bfloat162float(p.v[1]);
            }
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            float alpha = expf(m_run - m_new);   // 0 on the first step
            l_run = l_run * alpha + sum;
            m_run = m_new;
            if (lane % 2 == 0) rowv[r] = alpha;
            __syncwarp();
            // O = diag(alpha) O + P V, a 16-column chunk of O at a time.
            scale_rows<NC>(o, at, rowv);
            FragA p;
            wmma::load_matrix_sync(p, P, TC_SLD);
            for (int c = 0; c < NC; c++) {
                FragB vb;
                wmma::load_matrix_sync(vb, Vs + 16 * c, LD);
                wmma::mma_sync(o[c], p, vb, o[c]);
            }
        }
        __syncthreads();   // before the next step overwrites K, V, S, P
    }
    if (lane % 2 == 0) {
        rowv[r] = 1.0f / l_run;
        if (i < T) lse[(size_t)blockIdx.y * T + i] = m_run + logf(l_run);
    }
    __syncwarp();
    scale_rows<NC>(o, at, rowv);
    write_rows<HS>(out + head, o, S, w0, T, false);
}
//< flash-tc-forward

//> flash-tc-backward
// dK, dV: block (x, z) owns keys k0 = x * TC_TILE .. k0 + 63 of head z,
// warp w keys kw = k0 + 16 w .., and keeps their rows of K and V in
// fragments; the block visits the query steps that can see them, from
// query k0 on. Per step a warp computes, transposed (its keys as rows),
// S^T = K Q^T and dP^T = V dO^T, then P^T = exp(S^T scale - lse) and
// dS^T = P^T (dP^T - D), and adds P^T dO to dV and dS^T Q to dK (times
// the scale at the end).
template <int HS>
__global__ void flash_tc_backward_dkv_kernel(float *dk, float *dv,
                                             const float *dout,
                                             const float *lse,
                                             const float *D, const float *q,
                                             const float *k, const float *v,
                                             int T, float scale) {
    constexpr int LD = HS + TC_PAD, NC = HS / 16;
    SHARED_ARRAY(float, smem);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *S = smem + warp * 2 * TC_SQ, *dP = S + TC_SQ;  // [16][TC_SLD]
    float *lse_s = smem + TC_WARPS * 2 * TC_SQ;           // [16]
    float *D_s = lse_s + TC_STEP;                         // [16]
    bf16 *X = (bf16 *)(D_s + TC_STEP);        // [64][LD]: K, then V
    bf16 *Qs = X + TC_TILE * LD, *dOs = Qs + TC_STEP * LD;    // [16][LD]
    bf16 *P = dOs + TC_STEP * LD + warp * 2 * TC_SQ;      // [16][TC_SLD]
    bf16 *dS = P + TC_SQ;                                 // [16][TC_SLD]
    int k0 = blockIdx.x * TC_TILE, kw = k0 + warp * TC_ROWS;
    size_t head = (size_t)blockIdx.y * T * HS, hrow = (size_t)blockIdx.y * T;
    FragA ka[NC], va[NC];
    rows_to_frags<HS>(ka, X, k + head, k0, T);
    rows_to_frags<HS>(va, X, v + head, k0, T);
    FragC dk_acc[NC], dv_acc[NC];
    for (int c = 0; c < NC; c++) {
        wmma::fill_fragment(dk_acc[c], 0.0f);
        wmma::fill_fragment(dv_acc[c], 0.0f);
    }
    int r = lane / 2, j = kw + r;   // j: this lane's key

    for (int i0 = k0; i0 < T; i0 += TC_STEP) {
        load_tile_bf16<HS>(Qs, q + head, i0, TC_STEP, T);
        load_tile_bf16<HS>(dOs, dout + head, i0, TC_STEP, T);
        for (int e = threadIdx.x; e < TC_STEP; e += blockDim.x) {
            lse_s[e] = i0 + e < T ? lse[hrow + i0 + e] : 0.0f;
            D_s[e] = i0 + e < T ? D[hrow + i0 + e] : 0.0f;
        }
        __syncthreads();
        // A step wholly before the warp's first key sees none of them.
        if (i0 + TC_STEP > kw) {
            tile_scores<NC>(S, ka, Qs, LD);
            tile_scores<NC>(dP, va, dOs, LD);
            __syncwarp();
            for (int m = 0; m < 4; m++) {
                int c = pair_col(lane, m);   // queries i0 + c, i0 + c + 1
                Float2 s = *(const Float2 *)(S + r * TC_SLD + c);
                Float2 g = *(const Float2 *)(dP + r * TC_SLD + c);
                float sc[2] = {s.x, s.y}, gr[2] = {g.x, g.y};
                Bf16x2 pw, dsw;
                for (int t = 0; t < 2; t++) {
                    int i = i0 + c + t;
                    float p = i >= j && i < T
                                  ? expf(sc[t] * scale - lse_s[c + t])
                                  : 0.0f;
                    pw.v[t] = __float2bfloat16(p);
                    dsw.v[t] = __float2bfloat16(p * (gr[t] - D_s[c + t]));
                }
                *(Bf16x2 *)(P + r * TC_SLD + c) = pw;
                *(Bf16x2 *)(dS + r * TC_SLD + c) = dsw;
            }
            __syncwarp();
            FragA pa, dsa;
            wmma::load_matrix_sync(pa, P, TC_SLD);
            wmma::load_matrix_sync(dsa, dS, TC_SLD);
            for (int c = 0; c < NC; c++) {
                FragB gb, qb;
                wmma::load_matrix_sync(gb, dOs + 16 * c, LD);
                wmma::load_matrix_sync(qb, Qs + 16 * c, LD);
                wmma::mma_sync(dv_acc[c], pa, gb, dv_acc[c]);
                wmma::mma_sync(dk_acc[c], dsa, qb, dk_acc[c]);
            }
        }
        __syncthreads();   // before the next step overwrites Q, dO
    }
    for (int c = 0; c < NC; c++)
        for (int e = 0; e < dk_acc[c].num_elements; e++)
            dk_acc[c].x[e] *= scale;
    write_rows<HS>(dk + head, dk_acc, S, kw, T, true);
    write_rows<HS>(dv + head, dv_acc, S, kw, T, true);
}
//< flash-tc-backward

// dQ: block (x, z) owns queries q0 = x * TC_TILE .. q0 + 63 of head z and
// visits the key steps they see; a warp keeps its rows of Q and dO in
// fragments. Per step a warp recomputes S = Q K^T, dP = dO V^T,
// dS = P (dP - D), and adds dS K to dQ.
template <int HS>
__global__ void flash_tc_backward_dq_kernel(float *dq, const float *dout,
                                            const float *lse, const float *D,
                                            const float *q, const float *k,
                                            const float *v, int T,
                                            float scale) {
    constexpr int LD = HS + TC_PAD, NC = HS / 16;
    SHARED_ARRAY(float, smem);
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *S = smem + warp * 2 * TC_SQ, *dP = S + TC_SQ;  // [16][TC_SLD]
    bf16 *X = (bf16 *)(smem + TC_WARPS * 2 * TC_SQ);  // [64][LD]: Q, dO
    bf16 *Ks = X + TC_TILE * LD, *Vs = Ks + TC_STEP * LD;     // [16][LD]
    bf16 *dS = Vs + TC_STEP * LD + warp * TC_SQ;          // [16][TC_SLD]
    int q0 = blockIdx.x * TC_TILE, w0 = q0 + warp * TC_ROWS;
    size_t head = (size_t)blockIdx.y * T * HS, hrow = (size_t)blockIdx.y * T;
    FragA qa[NC], ga[NC];
    rows_to_frags<HS>(qa, X, q + head, q0, T);
    rows_to_frags<HS>(ga, X, dout + head, q0, T);
    FragC dq_acc[NC];
    for (int c = 0; c < NC; c++) wmma::fill_fragment(dq_acc[c], 0.0f);
    int r = lane / 2, i = w0 + r;   // i: this lane's query
    float lse_i = i < T ? lse[hrow + i] : 0.0f;
    float D_i = i < T ? D[hrow + i] : 0.0f;

    int nkeys = T < q0 + TC_TILE ? T : q0 + TC_TILE;
    for (int k0 = 0; k0 < nkeys; k0 += TC_STEP) {
        load_tile_bf16<HS>(Ks, k + head, k0, TC_STEP, T);
        load_tile_bf16<HS>(Vs, v + head, k0, TC_STEP, T);
        __syncthreads();
        if (k0 < w0 + TC_ROWS) {
            tile_scores<NC>(S, qa, Ks, LD);
            tile_scores<NC>(dP, ga, Vs, LD);
            __syncwarp();
            for (int m = 0; m < 4; m++) {
                int c = pair_col(lane, m);   // keys k0 + c, k0 + c + 1
                Float2 s = *(const Float2 *)(S + r * TC_SLD + c);
                Float2 g = *(const Float2 *)(dP + r * TC_SLD + c);
                float sc[2] = {s.x, s.y}, gr[2] = {g.x, g.y};
                Bf16x2 dsw;
                for (int t = 0; t < 2; t++) {
                    float p = k0 + c + t <= i ? expf(sc[t] * scale - lse_i)
                                              : 0.0f;
                    dsw.v[t] = __float2bfloat16(p * (gr[t] - D_i));
                }
                *(Bf16x2 *)(dS + r * TC_SLD + c) = dsw;
            }
            __syncwarp();
            FragA dsa;
            wmma::load_matrix_sync(dsa, dS, TC_SLD);
            for (int c = 0; c < NC; c++) {
                FragB kb;
                wmma::load_matrix_sync(kb, Ks + 16 * c, LD);
                wmma::mma_sync(dq_acc[c], dsa, kb, dq_acc[c]);
            }
        }
        __syncthreads();   // before the next step overwrites K, V
    }
    for (int c = 0; c < NC; c++)
        for (int e = 0; e < dq_acc[c].num_elements; e++)
            dq_acc[c].x[e] *= scale;
    write_rows<HS>(dq + head, dq_acc, S, w0, T, true);
}

#else   // !TC_BUILT
// A device pass for a GPU without bf16 tensor cores (compute capability
// 7.5): the same kernels, empty but for a trap. The host's code names
// them, so every pass must define them; check_usable keeps the host from
// launching them, and the trap makes any launch that slips past an error
// rather than a silent wrong answer.
template <int HS>
__global__ void flash_tc_forward_kernel(float *, float *, const float *,
                                        const float *, const float *, int,
                                        float) {
    __trap();
}
template <int HS>
__global__ void flash_tc_backward_dkv_kernel(float *, float *, const float *,
                                             const float *, const float *,
                                             const float *, const float *,
                                             const float *, int, float) {
    __trap();
}
template <int HS>
__global__ void flash_tc_backward_dq_kernel(float *, const float *,
                                            const float *, const float *,
                                            const float *, const float *,
                                            const float *, int, float) {
    __trap();
}
#endif   // TC_BUILT

// Bytes of dynamic shared memory of each kernel at head size HS (the
// layouts at the top of each; 22.8, 31.6 and 28.5 KiB at HS = 64).
static size_t forward_shared(int HS) {
    return sizeof(float) * TC_WARPS * (TC_SQ + 16)
           + sizeof(bf16) * ((TC_TILE + 2 * TC_STEP) * (HS + TC_PAD)
                             + TC_WARPS * TC_SQ);
}
static size_t dkv_shared(int HS) {
    return sizeof(float) * (TC_WARPS * 2 * TC_SQ + 2 * TC_STEP)
           + sizeof(bf16) * ((TC_TILE + 2 * TC_STEP) * (HS + TC_PAD)
                             + TC_WARPS * 2 * TC_SQ);
}
static size_t dq_shared(int HS) {
    return sizeof(float) * TC_WARPS * 2 * TC_SQ
           + sizeof(bf16) * ((TC_TILE + 2 * TC_STEP) * (HS + TC_PAD)
                             + TC_WARPS * TC_SQ);
}

//> flash-tc-dispatch
// The head sizes the kernels are built for, each an instance of the
// templates above: fn(std::integral_constant<int, HS>()) for HS.
bool attention_flash_tc_supports(int HS) {
    return HS == 16 || HS == 32 || HS == 48 || HS == 64;
}

template <class Fn> static void with_head_size(int HS, Fn fn) {
    switch (HS) {
    case 16: fn(std::integral_constant<int, 16>()); break;
    case 32: fn(std::integral_constant<int, 32>()); break;
    case 48: fn(std::integral_constant<int, 48>()); break;
    case 64: fn(std::integral_constant<int, 64>()); break;
    default:
        cuda_fail("with_head_size", "no kernel for this head size",
                  __FILE__, __LINE__);
    }
}
//< flash-tc-dispatch

// Stops the program, with a line that says why, unless the kernels can
// run: a head size they are built for, and a GPU that runs the real ones.
// Those come from a pass of nvcc for compute capability 8.0 or more,
// which the kernel's attributes say (the PTX version it was compiled
// from): a T4 (7.5) runs the empty ones, and so would an A100 given
// ./ch8 built for 7.5 only (the driver compiles that PTX for it).
static void check_usable(const char *fn, int HS) {
    if (!attention_flash_tc_supports(HS))
        cuda_fail(fn, "the tensor-core attention takes head sizes 16, 32, "
                  "48 and 64 only", __FILE__, __LINE__);
#ifdef __CUDACC__
    static int real = -1;   // (the answer does not change in a run)
    if (real < 0) {
        cudaFuncAttributes a;
        cudaError_t e = cudaFuncGetAttributes(&a, flash_tc_forward_kernel<16>);
        real = e == cudaSuccess && a.ptxVersion >= 80;
        cudaGetLastError();   // (clear e)
    }
    if (!real)
        cuda_fail(fn, "the tensor-core attention needs bf16 tensor cores: "
                  "a GPU of compute capability 8.0 or more, with ./ch8 "
                  "built for it (make ch8 on that machine)", __FILE__,
                  __LINE__);
#endif
}

void attention_forward_flash_tc_cuda(float *out, float *lse, const float *q,
                                     const float *k, const float *v, int B,
                                     int NH, int T, int HS) {
    if (B * NH == 0 || T == 0) return;
    check_usable("attention_forward_flash_tc_cuda", HS);
    float scale = 1.0f / sqrtf((float)HS);
    dim3 grid(ceil_div((size_t)T, TC_TILE), (unsigned)(B * NH));
    with_head_size(HS, [&](auto hs) {
        constexpr int H = decltype(hs)::value;
        LAUNCH(flash_tc_forward_kernel<H>, grid, TC_THREADS,
               forward_shared(H), out, lse, q, k, v, T, scale);
    });
}

void attention_backward_flash_tc_cuda(float *dq, float *dk, float *dv,
                                      const float *dout, const float *out,
                                      const float *lse, const float *q,
                                      const float *k, const float *v, int B,
                                      int NH, int T, int HS) {
    if (B * NH == 0 || T == 0) return;
    check_usable("attention_backward_flash_tc_cuda", HS);
    float scale = 1.0f / sqrtf((float)HS);
    const float *D = attention_row_dots_cuda(dout, out, (size_t)B * NH * T,
                                             HS);
    dim3 grid(ceil_div((size_t)T, TC_TILE), (unsigned)(B * NH));
    with_head_size(HS, [&](auto hs) {
        constexpr int H = decltype(hs)::value;
        LAUNCH(flash_tc_backward_dkv_kernel<H>, grid, TC_THREADS,
               dkv_shared(H), dk, dv, dout, lse, D, q, k, v, T, scale);
        LAUNCH(flash_tc_backward_dq_kernel<H>, grid, TC_THREADS,
               dq_shared(H), dq, dout, lse, D, q, k, v, T, scale);
    });
}
