// make_seeds - writes the seed corpora of the harnesses that read model
// files and tokenizers (tests/fuzz/corpus/{checkpoint,seq2seq,train_state,
// safetensors,bpe}/), with the project's own writers, so the seeds are
// the files the programs write. `make fuzz-seeds` runs it; its output is
// committed. The other corpora are small hand-written files.
//
//   make_seeds CORPUS_DIR
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"
#include "checkpoint.h"
#include "json.h"
#include "safetensors.h"
#include "seq2seq_checkpoint.h"

static char root[512];

static void path_of(char *buf, size_t size, const char *target,
                    const char *name) {
    snprintf(buf, size, "%s/%s/%s", root, target, name);
}

static void check(int rc, const Error *err) {
    if (rc != 0) die("%s", err->msg);
}

static void gpt_seed(const char *name, GptConfig cfg) {
    Gpt m;
    Vocab v = {0};
    Error err;
    check(gpt_create(&m, &cfg, &err), &err);
    for (size_t i = 0; i < m.num_params; i++)
        m.params[i] = (float)(i % 7) * 0.25f - 0.5f;
    v.size = cfg.vocab_size;
    v.chars = calloc((size_t)v.size, sizeof *v.chars);
    const uint32_t chars[4] = {'\n', ' ', 'a', 0xfc};
    for (int i = 0; i < v.size; i++) v.chars[i] = chars[i];
    char path[600];
    path_of(path, sizeof path, "checkpoint", name);
    check(checkpoint_save_step(path, &m, &v, 12, &err), &err);
    gpt_free(&m);
    free(v.chars);
}

static void seq2seq_seed(const char *name, Seq2SeqConfig cfg,
                         const char *vocab) {
    Seq2Seq m;
    Error err;
    check(seq2seq_create(&m, &cfg, &err), &err);
    for (size_t i = 0; i < m.num_params; i++)
        m.params[i] = (float)(i % 5) * 0.125f;
    char path[600];
    path_of(path, sizeof path, "seq2seq", name);
    check(seq2seq_save(path, &m, 3, vocab, &err), &err);
    seq2seq_free(&m);
}

// A state file as trainer_save writes it: step 7, the moments of 3
// parameters, both generators at position next.
static void state_seed(const char *name, int next) {
    StrBuf b = {0};
    sb_printf(&b, "{\"step\": 7");
    const char *rngs[2] = {"data_rng", "drop_rng"};
    for (int r = 0; r < 2; r++) {
        sb_printf(&b, ", \"%s_next\": %d, \"%s_state\": \"", rngs[r], next,
                  rngs[r]);
        for (int i = 0; i < RNG_N; i++)
            sb_printf(&b, "%08x", (unsigned)(i * 2654435761u + r));
        sb_append(&b, "\"", 1);
    }
    sb_printf(&b, ", \"batch\": 4, \"steps\": 100, \"lr\": 0.001, "
              "\"min_lr\": 0.0001, \"warmup\": 10, \"decay_steps\": 90, "
              "\"beta1\": 0.9, \"beta2\": 0.95, \"eps\": 1e-08, "
              "\"weight_decay\": 0.1, \"grad_clip\": 1, \"eval_every\": 50, "
              "\"eval_iters\": 5, \"seed\": \"1337\"}");
    const float mv[3] = {0.5f, -1, 2};
    StWriteTensor t[2] = {{"adamw.m", mv, 1, {3}}, {"adamw.v", mv, 1, {3}}};
    const char *keys[1] = {"train_state"}, *values[1] = {b.s};
    Error err;
    char path[600];
    path_of(path, sizeof path, "train_state", name);
    check(st_save(path, t, 2, keys, values, 1, &err), &err);
    sb_free(&b);
}

static void safetensors_seeds(void) {
    const float a[6] = {1, 2, 3, 4, 5, 6};
    StWriteTensor t[3] = {{"a", a, 2, {2, 3}}, {"scalar", a, 0, {0}},
                          {"empty", a, 1, {0}}};
    const char *keys[2] = {"format", "note"}, *values[2] = {"pt", "\xc3\xbc"};
    Error err;
    char path[600];
    path_of(path, sizeof path, "safetensors", "three.safetensors");
    check(st_save(path, t, 3, keys, values, 2, &err), &err);
    path_of(path, sizeof path, "safetensors", "none.safetensors");
    check(st_save(path, t, 0, NULL, NULL, 0, &err), &err);
}

static void bpe_seed(const char *name, const char *text, int merges,
                     const char *sample) {
    Bpe t;
    Error err;
    size_t len = strlen(text);
    check(bpe_learn(&t, &text, &len, 1, merges, &err), &err);
    size_t n;
    char *s = bpe_to_string(&t, &n);
    char path[600];
    path_of(path, sizeof path, "bpe", name);
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot write %s", path);
    fwrite(s, 1, n, f);
    fputc(0, f);   // then the text to encode
    fwrite(sample, 1, strlen(sample), f);
    fclose(f);
    free(s);
    bpe_free(&t);
}

int main(int argc, char **argv) {
    if (argc != 2) die("usage: make_seeds CORPUS_DIR");
    snprintf(root, sizeof root, "%s", argv[1]);
    GptConfig g = {.vocab_size = 3, .block_size = 2, .n_layer = 1,
                   .n_head = 1, .n_embd = 2, .n_ffn = 2, .dropout = 0.1f,
                   .bias = false, .positional = POS_LEARNED};
    gpt_seed("tiny.safetensors", g);
    g.vocab_size = 4, g.bias = true, g.positional = POS_SINUSOIDAL;
    g.n_head = 2, g.n_ffn = 3;
    gpt_seed("bias-sinusoidal.safetensors", g);
    Seq2SeqConfig s = {.src_vocab = 4, .tgt_vocab = 4, .max_len = 3,
                       .n_enc = 1, .n_dec = 1, .n_head = 1, .n_embd = 2,
                       .n_ffn = 2, .dropout = 0, .bias = true, .tie = true,
                       .act = RELU, .pad = 0};
    seq2seq_seed("tied.safetensors", s, "reverse:3");
    s.tie = false, s.bias = false, s.tgt_vocab = 5, s.act = GELU_TANH;
    s.pad = 1;
    seq2seq_seed("untied.safetensors", s, NULL);
    state_seed("state-7.safetensors", 624);
    state_seed("state-7-next3.safetensors", 3);
    safetensors_seeds();
    bpe_seed("chars", "ab ba", 0, "ab c");
    bpe_seed("merges", "the dog the dog\nthe \xc3\xbc ber\n", 8,
             "the  dog \xc3\xbc\n");
    return 0;
}
