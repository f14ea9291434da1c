// kcheck.cu - the table of kcheck.cuh: every check at each of its sizes,
// and the run of them all that ./ch8 --check prints.
#include "kcheck_util.cuh"

#include <array>
#include <vector>

namespace kc {

// A check with the sizes it runs at, each a row of the table. Numbers
// past those that dims names are 0. A size is odd on purpose: not a
// multiple of a block or a warp, so that every last block is partial.
struct Sizes {
    const char *name;     // the CPU function's file: "activation"
    KCheckFn run;
    const char *dims;     // what each size's numbers mean
    bool model_variant;   // (kcheck.cuh)
    std::vector<std::array<int, 4>> sizes;
};

#define GPT_DIMS \
    "B, T, bias, mode (1 flash, 2 bf16, 4 blocks of 8, 8 HS 16, 16 tanh)"

// In the order of the rows. A row's place gives the seed of its inputs
// (1000 + i in kcheck_all, others in the tests), so a row put anywhere
// but at the end draws new inputs for every row after it.
static const Sizes TABLE[] = {
    // check_elementwise.cu, check_norms.cu
    {"activation", check_gelu, "n, kind (0 exact, 1 tanh)", false,
     {{1000, 0}, {777, 1}}},
    {"activation", check_gelu_copy, "n, kind (0 exact, 1 tanh)", false,
     {{1001, 0}}},
    {"layernorm", check_layernorm, "B, T, C, bias", false,
     {{3, 17, 45, 1}, {2, 5, 2, 0}, {5, 103, 97, 1}, {1, 7, 301, 0}}},
    {"layernorm", check_layernorm_copy, "B, T, C", false, {{3, 19, 45}}},
    {"residual", check_residual, "n", false, {{1000}, {1}}},
    {"residual", check_sublayer_add, "n, p (percent)", false,
     {{1000, 10}, {513, 0}}},
    {"dropout", check_dropout, "n, p (percent)", false,
     {{10007, 30}, {4099, 90}, {777, 0}}},
    {"embedding", check_embedding, "B, T, C, kind", false,
     {{3, 17, 45, 0}, {2, 9, 97, 1}, {1, 2, 1, 0}, {4, 150, 37, 0},
      {2, 131, 33, 2}}},

    // check_products.cu (and the heads' copies of check_elementwise.cu)
    {"linear", check_linear, "N, C_in, C_out, bias", false,
     {{37, 45, 29, 1}, {131, 64, 192, 0}, {1, 7, 3, 1}, {601, 33, 70, 1}}},
    {"mha", check_heads, "B, T, C, NH", false, {{3, 17, 24, 4}}},
    {"gemm", check_bf16_round, "n", false, {{4099}}},
    {"gemm", check_gemm_bf16, "M, N, K, mode (1 A^T, 2 B^T, 4 batched)",
     false,
     {{37, 29, 131, 0}, {33, 70, 45, 1}, {19, 23, 97, 2}, {17, 13, 64, 6}}},
    {"gemm", check_gemm_grid, "M, N, K, mode (1 bf16, 2 odd widths)", false,
     {{19, 13, 21, 0}, {19, 13, 21, 2}, {7, 24, 37, 1}, {7, 24, 37, 3}}},
    {"gemm", check_gemm_bf16_reuse, "n", false, {{37}}},
    {"gemm", check_gemm_bf16_views, "n", false, {{29}}},

    // check_attention.cu
    {"attention", check_softmax, "N, D", false, {{37, 45}, {5, 101}}},
    {"attention", check_attention,
     "Tq, Tk, HS, flags (1 causal, 2 key mask)", false,
     {{19, 19, 8, 0}, {19, 19, 8, 1}, {19, 19, 8, 3}, {19, 31, 5, 2},
      {13, 23, 8, 3}, {23, 13, 5, 1}, {1, 41, 8, 3}}},
    {"attention", check_attention_rows,
     "B, T, HS, mode (1 bf16, 3 bf16 qkv whole, +4 set, +8 blocks of 8)",
     false,
     {{2, 19, 8, 0}, {3, 37, 5, 0}, {2, 19, 8, 1}, {2, 23, 16, 3},
      {2, 19, 8, 4}, {2, 19, 8, 8}, {3, 37, 5, 12}, {2, 23, 16, 11},
      {2, 16, 8, 9}}},
    {"flash", check_flash, "B, NH, T, HS", false,
     {{2, 3, 37, 8}, {2, 2, 1, 5}, {1, 2, 70, 24}, {1, 1, 45, 72}}},

    // check_tensor_cores.cu
    {"wmma", check_wmma,
     "K, half, layouts (1 A, 2 B, 4 C, 8 out col-major), fill", false,
     {{16, 0, 0, 0}, {48, 0, 3, 0}, {32, 0, 12, 1}, {32, 1, 5, 0},
      {16, 1, 10, 1}}},
    {"wmma", check_wmma_positions, "", false, {{}}},
    {"flash", check_flash_tc, "B, NH, T, HS", false,
     {{2, 3, 37, 16}, {1, 2, 70, 32}, {1, 1, 131, 64}, {2, 1, 1, 48}}},
    {"gpt", check_gpt_step, GPT_DIMS, true, {{3, 37, 1, 11}}},

    // check_loss_optim.cu
    {"crossentropy", check_xent, "N, V, -1 targets, large", false,
     {{37, 65, 1, 0}, {21, 1000, 1, 0}, {13, 1, 1, 0}, {9, 65, 2, 0},
      {17, 1000, 1, 1}, {3, 50257, 0, 0}}},
    {"optim", check_adamw, "n, first t, wd (1/100)", false,
     {{1001, 1, 10}, {777, 10, 0}, {1001, 1000, 10}}},
    {"optim", check_adamw_many, "tensors, largest, first t, wd (1/100)",
     false, {{7, 20011, 3, 10}}},
    {"optim", check_norm, "n, clip (0 off, 1 on, 2 unneeded)", false,
     {{1, 1}, {1000, 0}, {100003, 1}, {777, 2}}},

    // check_fused.cu, check_graph.cu
    {"fused", check_bias_gelu, "N, F, kind, bias", false,
     {{37, 45, 0, 1}, {301, 45, 1, 1}, {5, 3, 0, 0}}},
    {"fused", check_residual_layernorm, "N, C, p (percent), bias", false,
     {{37, 45, 0, 1}, {29, 97, 30, 1}, {131, 70, 10, 0}}},
    {"fused", check_layernorm_skip, "B, T, C, bias", false,
     {{3, 17, 45, 1}, {2, 9, 97, 0}}},
    {"fused", check_fused_vs_plain, "B, T, bias, flash | 2 no dropout", true,
     {{2, 19, 1, 0}, {3, 13, 0, 1}, {2, 11, 1, 2}}},
    {"fused", check_gpt_graph, "B, T, bf16, flash", true,
     {{2, 13, 0, 0}, {3, 9, 1, 0}, {2, 11, 0, 1}}},
    {"fused", check_gpt_step_plain, GPT_DIMS, true,
     {{2, 19, 0, 0}, {3, 33, 1, 2}, {2, 19, 1, 16}}},

    // check_model.cu
    {"gpt", check_gpt_step, GPT_DIMS, false, {{2, 19, 0, 0}}},
    {"gpt", check_gpt_step, GPT_DIMS, true,
     {{3, 33, 1, 1}, {3, 33, 1, 2}, {2, 19, 0, 4}, {3, 33, 1, 6},
      {2, 19, 1, 17}}},
    {"gpt", check_gpt_bf16_kept, "B, T, flash", true,
     {{2, 21, 0}, {2, 37, 1}}},
};

// The rows: every check at each of its sizes, in the table's order.
static const std::vector<KCheck> &rows() {
    static const std::vector<KCheck> all = [] {
        std::vector<KCheck> r;
        for (const Sizes &c : TABLE)
            for (const std::array<int, 4> &s : c.sizes)
                r.push_back({c.name, c.run, {s[0], s[1], s[2], s[3]}, c.dims,
                             c.model_variant});
        return r;
    }();
    return all;
}

}   // namespace kc

extern "C" {

const KCheck *kcheck_row(int i) { return &kc::rows().at((size_t)i); }

int kcheck_rows(void) { return (int)kc::rows().size(); }

// One line per compared array, under a line with the sizes whenever
// they change: 80 columns hold it.
int kcheck_all(bool verbose) {
    int failed = 0;
    char shown[sizeof ((KResult *)0)->sizes] = "";
    for (int i = 0; i < kcheck_rows(); i++) {
        const KCheck *c = kcheck_row(i);
        KReport rep = {};
        c->run(&rep, c->sz, 1000 + (uint64_t)i);
        for (int j = 0; j < rep.n; j++) {
            const KResult *r = &rep.r[j];
            failed += !r->ok;
            if (!verbose && r->ok) continue;
            if (strcmp(shown, r->sizes) != 0) {
                printf("  %s\n", r->sizes);
                snprintf(shown, sizeof shown, "%s", r->sizes);
            }
            if (r->skipped)
                printf("    %-40s skipped (needs compute capability 8.0)\n",
                       r->name);
            else if (r->tol == 0)   // exact: a count, or an error, that is 0
                printf("    %-40s %7.2g (must be 0) %s\n", r->name, r->err,
                       r->ok ? "ok" : "FAILED");
            else
                printf("    %-40s %.1e (tol %.0e) %s\n", r->name, r->err,
                       r->tol, r->ok ? "ok" : "FAILED");
        }
    }
    return failed;
}

}
