// ch4_util.h - helpers shared by the chapter 4 tests (test_ch4.c and
// test_ex4.c), on top of chapter 3's and chapter 2's (random inputs,
// fixture copies, the weighted-sum loss).
#ifndef TESTS_CH4_UTIL_H
#define TESTS_CH4_UTIL_H

#include "block.h"
#include "ch3/ch3_util.h"

// A block's parameters in one buffer (as a model keeps them), with views;
// from the fixture tensors "<prefix>.<name>" (nanoGPT's names), and the
// gradient buffer alongside, zeroed.
typedef struct {
    float *params, *grads;
    BlockWeights w, g;
    size_t n;
} BlockParams;

static inline BlockParams block_params_new(int C, int F, bool bias) {
    BlockParams p;
    p.n = block_param_count(C, F, bias);
    p.params = alloc_floats(p.n);
    p.grads = alloc_floats(p.n);
    float *end = block_weights_point(&p.w, p.params, C, F, bias);
    ck_assert_ptr_eq(end, p.params + p.n);
    block_weights_point(&p.g, p.grads, C, F, bias);
    return p;
}

static inline BlockParams block_params_fixture(const Fixture *f,
                                               const char *prefix, int C,
                                               int F, bool bias) {
    BlockParams p = block_params_new(C, F, bias);
    BlockTensor t[BLOCK_MAX_TENSORS];
    int n = block_tensors(t, &p.w, C, F);
    for (int i = 0; i < n; i++) {
        size_t len = (size_t)t[i].shape[0] * (t[i].ndim == 2 ? t[i].shape[1]
                                                             : 1);
        memcpy(t[i].data, fx_get2(f, prefix, t[i].name, t[i].shape,
                                  t[i].ndim), len * sizeof(float));
    }
    return p;
}

static inline void block_params_free(BlockParams *p) {
    free(p->params);
    free(p->grads);
}

#endif
