// Exercise 5.1 - reference answer: the tensors of the model, summed.
#include "ch5_exercises.h"

size_t ex_gpt_param_count(const GptConfig *cfg) {
    size_t V = (size_t)cfg->vocab_size, C = (size_t)cfg->n_embd;
    size_t L = (size_t)cfg->n_layer, F = (size_t)cfg->n_ffn;
    size_t n = V * C;                                   // wte = the head
    if (cfg->positional == POS_LEARNED)
        n += (size_t)cfg->block_size * C;               // wpe
    // one block: two LayerNorm weights, then the four Linear weights
    size_t block = 2 * C + 3 * C * C + C * C + F * C + C * F;
    if (cfg->bias)                                      // ln_1, ln_2, then
        block += 2 * C + 3 * C + C + F + C;             // the Linears'
    n += L * block;
    n += cfg->bias ? 2 * C : C;                         // ln_f
    return n;
}
