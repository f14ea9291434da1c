// Exercise 9.3 - reference answer.
#include <stdio.h>
#include <string.h>

#include "ch9_exercises.h"

static const char PREFIX[] = "transformer.";

// What follows "h.N." in a layer's tensor name ("attn.c_attn.weight"),
// or NULL when name is not a layer's (N as Python writes a number: no
// "h.01.").
static const char *layer_tail(const char *name) {
    if (strncmp(name, "h.", 2) != 0) return NULL;
    const char *p = name + 2;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '.')) return NULL;
    while (*p >= '0' && *p <= '9') p++;
    return *p == '.' ? p + 1 : NULL;
}

static int is_one_of(const char *s, const char *const *set, int n) {
    for (int i = 0; s && i < n; i++)
        if (strcmp(s, set[i]) == 0) return 1;
    return 0;
}

int ex_hf_name(char *ours, size_t size, const char *hf) {
    static const char *const masks[2] = {"attn.bias", "attn.masked_bias"};
    static const char *const conv1d[4] = {
        "attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight",
        "mlp.c_proj.weight"};
    size_t k = strlen(PREFIX);
    const char *bare = strncmp(hf, PREFIX, k) == 0 ? hf + k : hf;
    const char *tail = layer_tail(bare);
    int role, n;
    if (strcmp(hf, "lm_head.weight") == 0) {
        role = HF_TIED;
        n = snprintf(ours, size, "%swte.weight", PREFIX);
    } else if (is_one_of(tail, masks, 2)) {
        role = HF_SKIP;
        n = snprintf(ours, size, "%s", "");
    } else {
        role = is_one_of(tail, conv1d, 4) ? HF_TRANSPOSE : HF_COPY;
        n = snprintf(ours, size, "%s%s", PREFIX, bare);
    }
    return n < 0 || (size_t)n >= size ? -1 : role;
}

void ex_conv1d_transpose(float *out, const float *inp, int rows, int cols) {
    for (int c = 0; c < cols; c++)
        for (int r = 0; r < rows; r++)
            out[(size_t)c * rows + r] = inp[(size_t)r * cols + c];
}
