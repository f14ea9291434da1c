// gpt2_random - a GPT-2 of random weights, of any shape, in Hugging
// Face's layout: tests/memory.sh measures ./ch9 on models far larger
// than the fixtures (up to GPT-2 small's own shape) without OpenAI's
// weights, which no test may need.
//
//   gpt2_random DIR TOKDIR V BLOCK LAYERS HEADS EMBD
//
// Writes DIR/config.json and DIR/model.safetensors (gpt2_save) of a
// GPT-2 (biases, learned positions, tanh GELU, FFN 4C) with V tokens,
// BLOCK positions, LAYERS blocks of HEADS heads, EMBD wide, initialised
// as chapter 5 initialises a GPT (seed 1), and copies TOKDIR's
// vocab.json and merges.txt beside them (a tokenizer of at most V ids).
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "finetune.h"
#include "gpt.h"
#include "gpt2_model.h"
#include "rng.h"

int main(int argc, char **argv) {
    error_set_progname(argv[0]);
    if (argc != 8) {
        fprintf(stderr, "usage: gpt2_random DIR TOKDIR V BLOCK LAYERS HEADS "
                "EMBD\n");
        return 2;
    }
    int embd = atoi(argv[7]);
    GptConfig c = {.vocab_size = atoi(argv[3]), .block_size = atoi(argv[4]),
                   .n_layer = atoi(argv[5]), .n_head = atoi(argv[6]),
                   .n_embd = embd, .n_ffn = gpt_ffn_width(embd),
                   .bias = true, .positional = POS_LEARNED,
                   .act = GELU_TANH};
    Gpt m;
    Error err;
    if (gpt_create(&m, &c, &err) != 0) die("%s", err.msg);
    Rng rng;
    rng_seed(&rng, 1);
    gpt_init(&m, &rng);
    if (gpt2_save(argv[1], &m, &err) != 0
        || gpt2_copy_tokenizer(argv[2], argv[1], &err) != 0)
        die("%s", err.msg);
    gpt_free(&m);
    return 0;
}
