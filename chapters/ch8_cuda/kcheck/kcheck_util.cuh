// kcheck_util.cuh - what the checks of this folder share: random inputs
// and their device copies, the comparisons that append a result to a
// report, sentinels after outputs, the bf16 rounding that copies are held
// to, dropout's masks drawn on the host; and every check, for the table of
// kcheck.cu. C++ (.cu files only), in namespace kc, so that no name of a
// check meets another in the programs that link them.
#ifndef CH8_KCHECK_UTIL_CUH
#define CH8_KCHECK_UTIL_CUH

#include "cuda_rt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <initializer_list>

extern "C" {
#include "error.h"
#include "gpt.h"
#include "kcheck.cuh"
#include "mem.h"
#include "rng.h"
}

namespace kc {

// The tolerance of fp32 kernels (kcheck.cuh says why this measure).
constexpr double FP32_TOL = 1e-5;
// A whole bf16 step, or attention in bf16: each product rounds its
// operands to 8 bits of mantissa, so within a few 1e-3 (check_model.cu
// has the measurements).
constexpr double STEP_BF16_TOL = 2e-2;
// The causal blocks of rows that the attention checks ask for.
enum { ROWS_BLOCK = 8 };

// ---- inputs and results ---------------------------------------------------

// n normal(0, std) floats on the host (free()) from rng.
float *host_randn(Rng *rng, size_t n, float std);
// n floats of a LayerNorm's input (free()): normal(1.5, 3), a mean far
// from 0 and a spread far from 1, so that a kernel that skips the
// centring or the scaling shows.
float *layernorm_input(Rng *rng, size_t n);
// A host copy of n floats (free()).
float *host_copy(const float *p, size_t n);
// A device copy of n host floats.
float *to_device(const float *h, size_t n);

// max_i |got_i - want_i| / max_i |want_i| (kcheck.cuh), or NaN where a
// got_i is NaN; both on the host.
double relative_error(const float *got, const float *want, size_t n);
// How many of the n floats of a and b are not the same bits.
size_t bits_differ(const float *a, const float *b, size_t n);
// Sets the sizes that the results appended next were computed at: a
// check's first call, as snprintf.
void report_sizes(KReport *rep, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
// Compares got with want, both on the host, and appends the result.
void compare_host(KReport *rep, const char *name, const float *got,
                  const float *want, size_t n, double tol);
// Compares the device tensor got with the host tensor want and appends
// the result.
void compare(KReport *rep, const char *name, const float *got_dev,
             const float *want, size_t n, double tol);
// Appends the comparison of one number that came back to the host:
// |got - want| / |want| (or / 1 when want is 0), as compare() does.
void compare_value(KReport *rep, const char *name, double got, double want,
                   double tol);
// Appends a result that is a number rather than a comparison: ok when
// |value| <= tol.
void report_value(KReport *rep, const char *name, double value, double tol);

// A check of bf16 products or of the tensor cores (needed true) on a GPU
// of compute capability under 8.0, which has neither: appends a result
// that says it was skipped, and returns true (the check returns then).
bool skip_without_bf16(KReport *rep, bool needed);

// Releases every buffer listed, device or host, in the order given.
void cuda_free_all(std::initializer_list<void *> dev);
void free_all(std::initializer_list<void *> host);

// ---- guards past the outputs ----------------------------------------------
// An output buffer may be followed on the device by OUT_GUARD floats of
// a sentinel: a kernel that forgot its bounds check writes there (where
// it would silently corrupt a neighbour on the GPU), and the check's
// "writes past the end" result counts the damage.
enum { OUT_GUARD = 64 };

// A device buffer of n floats (a copy of h, or garbage when h is NULL)
// followed by its guard.
float *to_device_guarded(const float *h, size_t n);
// n NaN floats on the device, followed by a guard: an output that a
// kernel sets, where a value it did not write shows.
float *nan_guarded(size_t n);
// The number of guard floats after the n floats of d that were written.
int guard_damage(const float *d, size_t n);

// ---- bf16 -----------------------------------------------------------------

// The bf16 nearest to x (ties to even, as __float2bfloat16), found the
// long way round; and the float that a bf16 stands for.
uint16_t bf16_nearest(float x);
float bf16_value(uint16_t k);
// Rounds each of the n floats at x to its nearest bf16, in place: the
// operands that a bf16 product multiplies.
void round_bf16(float *x, size_t n);
// The number of the n bf16 values at copy_dev (device) that are not
// exactly the rounding of the n floats at of_dev: a kernel's copy of its
// own output must be that, bit for bit.
size_t copy_mismatches(const uint16_t *copy_dev, const float *of_dev,
                       size_t n);

// ---- dropout --------------------------------------------------------------

// The counter of element 0 in the dropout checks: past 2^32, so that a
// kernel keeping its counter in 32 bits draws the wrong numbers.
constexpr uint64_t DROPOUT_OFFSET = (1ull << 32) + 977;
// The mask dropout_forward_cuda(p, seed, offset) must draw, computed on
// the host (free()): 0 where dropout_uniform(seed, offset + i) < p, else
// the CPU's scale 1 / (1 - p).
float *expected_mask(float p, uint64_t seed, uint64_t offset, size_t n);

// ---- the checks, by file --------------------------------------------------
// Each runs at sizes sz (described above it and in the table) with inputs
// drawn from seed; a KCheckFn of kcheck.cuh.
using Check = void(KReport *rep, const int sz[4], uint64_t seed);

// check_elementwise.cu: activation, residual, dropout, embedding, mha
Check check_gelu, check_gelu_copy, check_residual, check_sublayer_add,
    check_dropout, check_embedding, check_heads;
// check_norms.cu: layernorm
Check check_layernorm, check_layernorm_copy;
// check_products.cu: linear, gemm (fp32 and bf16)
Check check_linear, check_bf16_round, check_gemm_bf16, check_gemm_grid,
    check_gemm_bf16_reuse, check_gemm_bf16_views;
// check_attention.cu: attention, flash
Check check_softmax, check_attention, check_attention_rows, check_flash;
// check_tensor_cores.cu: the warp matrix API, flash_tc
Check check_wmma, check_wmma_positions, check_flash_tc;
// check_loss_optim.cu: crossentropy, optim
Check check_xent, check_adamw, check_adamw_many, check_norm;
// check_fused.cu: the fused forms against the plain ones and the CPU
Check check_bias_gelu, check_residual_layernorm, check_layernorm_skip,
    check_fused_vs_plain, check_gpt_step_plain;
// check_model.cu: a training step of the whole model
Check check_gpt_step, check_gpt_bf16_kept;
// check_graph.cu: the step recorded as a graph and replayed
Check check_gpt_graph;

// check_attention.cu's fused attention, on flash.cu's kernels or (tc)
// flash_tc.cu's, which check_flash_tc runs.
void check_flash_kernels(KReport *rep, const int sz[4], uint64_t seed,
                         bool tc);

// A GPT for the checks of the whole step (check_model.cu, check_fused.cu,
// check_graph.cu): chapter 5's defaults for the characters' 65 ids, with
// 2 layers of 4 heads, n_embd wide (its FFN 4 times that), no dropout.
enum { GPT_VOCAB = 65 };
GptConfig small_gpt(int block_size, int n_embd);
// Draws the 1-D weights of m (LayerNorm's weights and every bias) from
// normal(0.5, 0.3), away from 1 and 0, so that their use and their
// gradients are both tested.
void spread_1d_weights(Gpt *m, Rng *rng);

}   // namespace kc

#endif
