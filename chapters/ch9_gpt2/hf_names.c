#include "hf_names.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char PREFIX[] = "transformer.";
#define PREFIX_LEN (sizeof PREFIX - 1)

int hf_layer_of(const char *name) {
    if (strncmp(name, PREFIX, PREFIX_LEN) == 0) name += PREFIX_LEN;
    const char *d = name + 2;
    // "h.", then a number written as Python writes it (no "h.01.")
    if (strncmp(name, "h.", 2) != 0 || *d < '0' || *d > '9'
        || (d[0] == '0' && d[1] != '.'))
        return -1;
    char *end;
    long l = strtol(d, &end, 10);
    return *end == '.' && l <= INT_MAX ? (int)l : -1;
}

//> hf-name-map
// The four projections that OpenAI's code (and transformers' Conv1D)
// stores as (in, out).
static const char *const CONV1D[4] = {
    "attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight",
    "mlp.c_proj.weight"};

int hf_name_map(char *ours, size_t size, const char *hf) {
    if (size == 0) return -1;
    if (strcmp(hf, "lm_head.weight") == 0) {   // the head: tied to wte
        int n = snprintf(ours, size, "%swte.weight", PREFIX);
        return n >= 0 && (size_t)n < size ? HF_TIED : -1;
    }
    const char *rest = hf;                     // without the prefix
    if (strncmp(hf, PREFIX, PREFIX_LEN) == 0) rest += PREFIX_LEN;
    // a layer's tail: "h.11.attn.c_attn.weight" -> "attn.c_attn.weight"
    const char *tail = hf_layer_of(rest) >= 0 ? strchr(rest + 2, '.') + 1
                                              : NULL;
    if (tail && (strcmp(tail, "attn.bias") == 0
                 || strcmp(tail, "attn.masked_bias") == 0)) {
        ours[0] = 0;                           // a mask buffer
        return HF_SKIP;
    }
    int n = snprintf(ours, size, "%s%s", PREFIX, rest);
    if (n < 0 || (size_t)n >= size) return -1;
    for (int i = 0; tail && i < 4; i++)
        if (strcmp(tail, CONV1D[i]) == 0) return HF_TRANSPOSE;
    return HF_COPY;
}
//< hf-name-map

//> conv1d-transpose
void conv1d_transpose(float *out, const float *inp, int rows, int cols) {
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            out[(size_t)c * rows + r] = inp[(size_t)r * cols + c];
}
//< conv1d-transpose
