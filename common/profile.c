#include "profile.h"

#include <string.h>

bool prof_on = false;
bool prof_backward = false;
double prof_seconds[PROF_KINDS][2];

const char *prof_name(ProfKind k) {
    static const char *names[PROF_KINDS] = {
        "data (batches)", "embedding", "matmul attn.c_attn",
        "attention (scores, softmax, sum)", "matmul attn.c_proj",
        "matmul mlp.c_fc", "GELU", "matmul mlp.c_proj", "LayerNorm",
        "residual + dropout", "matmul LM head", "softmax + cross-entropy",
        "AdamW, clipping, zeroing"};
    return k < PROF_KINDS ? names[k] : "?";
}

void prof_reset(void) { memset(prof_seconds, 0, sizeof prof_seconds); }
