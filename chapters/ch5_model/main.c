// ch5 - the whole GPT: its configuration, where its parameters are, what
// an untrained one writes, and how fast it writes with a KV cache.
//
//   ./ch5                                the course notes' model, untrained
//   ./ch5 --checkpoint model.safetensors --prompt "ROMEO:" --tokens 500
//   ./ch5 --checkpoint model.safetensors --score "some text to score"
//   ./ch5 --save model.safetensors       write the untrained model
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "dataset.h"
#include "error.h"
#include "flags.h"
#include "generate.h"
#include "gpt.h"
#include "mem.h"
#include "rng.h"
#include "threads.h"
#include "utf8.h"

// ---- what the model is -----------------------------------------------------

static void show_config(const GptConfig *c, const char *source) {
    printf("model       %s\n", source);
    printf("  vocab_size %d, block_size %d, n_layer %d, n_head %d, n_embd "
           "%d (head size %d, FFN %d)\n", c->vocab_size, c->block_size,
           c->n_layer, c->n_head, c->n_embd, c->n_embd / c->n_head,
           c->n_ffn);
    printf("  dropout %g, bias %s, positions %s, LM head tied to wte\n",
           c->dropout, c->bias ? "true" : "false",
           pos_kind_name(c->positional));
}

// The parameters by tensor, one block's worth shown (all blocks are
// alike), with each line's share of the total.
static void show_params(const Gpt *m) {
    const GptConfig *c = &m->cfg;
    double total = (double)m->num_params;
    printf("parameters  %zu in total (%.2fM)\n", m->num_params, total / 1e6);
    for (int i = 0; i < m->n_tensors; i++) {
        const GptTensor *t = &m->tensors[i];
        const char *name = t->name;
        bool in_block = strncmp(name, "transformer.h.", 14) == 0;
        if (in_block && strncmp(name, "transformer.h.0.", 16) != 0)
            continue;
        size_t n = (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
        char shape[32];
        if (t->ndim == 2) snprintf(shape, sizeof shape, "(%d, %d)",
                                   t->shape[0], t->shape[1]);
        else snprintf(shape, sizeof shape, "(%d,)", t->shape[0]);
        if (in_block)
            printf("  %-34s %-11s %9zu x %d = %9zu  %5.1f%%\n", name, shape,
                   n, c->n_layer, n * c->n_layer,
                   100.0 * n * c->n_layer / total);
        else
            printf("  %-34s %-11s %23zu  %5.1f%%\n", name, shape, n,
                   100.0 * n / total);
    }
    printf("  %-34s %-11s %23s\n", "lm_head.weight", "= wte", "0 (tied)");
    if (c->n_layer == 4 && c->n_embd == 128 && c->block_size == 128)
        printf("  (the course notes call this model ~1.6M and ~200K parameters; "
               "both are off)\n");
}

// ---- printing generated text -----------------------------------------------

typedef struct {
    const Vocab *vocab;
    bool echo;
} Printer;

static void print_id(int id, void *ctx) {
    const Printer *p = ctx;
    if (!p->echo) return;
    char buf[4];
    int n = utf8_encode(p->vocab->chars[id], buf);
    fwrite(buf, 1, (size_t)n, stdout);
    fflush(stdout);
}

// ---- main ------------------------------------------------------------------

int main(int argc, char **argv) {
    const char *data = "data/tinyshakespeare.txt", *checkpoint = "";
    const char *save = "", *prompt = "\n", *score = "", *window = "slide";
    const char *positional = "learned";
    int tokens = 200, top_k = 0, layers = 4, heads = 4, embd = 128;
    int block = 128, threads = 1;
    float temperature = 1.0f, top_p = 1.0f, dropout = 0.1f;
    bool no_cache = false, bias = false;
    uint64_t seed = 1337;
    Flag flags[] = {
        {"checkpoint", FLAG_STRING, &checkpoint,
         "safetensors model to load; none: a new, untrained one"},
        {"data", FLAG_STRING, &data,
         "text whose characters make the untrained model's vocabulary"},
        {"prompt", FLAG_STRING, &prompt, "text to continue"},
        {"tokens", FLAG_INT, &tokens, "characters to generate"},
        {"temperature", FLAG_FLOAT, &temperature,
         "sampling temperature; 0 = greedy"},
        {"top-k", FLAG_INT, &top_k, "sample from the k most likely; 0 = all"},
        {"top-p", FLAG_FLOAT, &top_p,
         "sample from the smallest set of mass p; 1 = all"},
        {"seed", FLAG_U64, &seed, "seed of the initialisation and sampling"},
        {"no-cache", FLAG_BOOL, &no_cache,
         "generate without the KV cache (nanoGPT's way)"},
        {"window", FLAG_STRING, &window,
         "past block_size: slide (halve the context) or exact (nanoGPT)"},
        {"score", FLAG_STRING, &score,
         "print 'loss <value>': mean cross-entropy of this text"},
        {"save", FLAG_STRING, &save, "write the model to this safetensors file"},
        {"threads", FLAG_INT, &threads, "threads for OpenMP and OpenBLAS"},
        {"layers", FLAG_INT, &layers, "untrained model: n_layer"},
        {"heads", FLAG_INT, &heads, "untrained model: n_head"},
        {"embd", FLAG_INT, &embd, "untrained model: n_embd"},
        {"block", FLAG_INT, &block, "untrained model: block_size"},
        {"dropout", FLAG_FLOAT, &dropout, "untrained model: dropout"},
        {"bias", FLAG_BOOL, &bias, "untrained model: biases (GPT-2)"},
        {"positional", FLAG_STRING, &positional,
         "untrained model: learned or sinusoidal"},
    };
    flags_parse(argc, argv, flags, sizeof flags / sizeof flags[0],
                "Chapter 5: the whole GPT - parameters, checkpoints, "
                "generation with a KV cache.");
    if (tokens < 0) flags_fail("--tokens must be >= 0, got %d", tokens);
    if (threads < 1) flags_fail("--threads must be >= 1, got %d", threads);
    WindowPolicy policy = WINDOW_SLIDE;
    if (strcmp(window, "exact") == 0) policy = WINDOW_EXACT;
    else if (strcmp(window, "slide") != 0)
        flags_fail("--window must be slide or exact, got '%s'", window);
    GenOptions opt = {.max_new_tokens = tokens, .seed = seed,
                      .use_cache = !no_cache, .window = policy,
                      .sample = {temperature, top_k, top_p}};
    Error err;
    if (sample_options_check(&opt.sample, &err) != 0)
        flags_fail("%s", err.msg);
    threads_set(threads);

    // the model: loaded, or new with the vocabulary of the data
    Gpt m;
    Vocab vocab;
    const char *source;
    char label[512];
    double untrained_loss = -1;
    if (*checkpoint) {
        if (checkpoint_load(checkpoint, &m, &vocab, &err) != 0)
            die("%s", err.msg);
        snprintf(label, sizeof label, "loaded from %s", checkpoint);
        source = label;
    } else {
        Corpus corpus;
        if (corpus_load(&corpus, data, &err) != 0) die("%s", err.msg);
        vocab.size = corpus.vocab.size;
        vocab.chars = xmalloc((size_t)vocab.size * sizeof *vocab.chars);
        memcpy(vocab.chars, corpus.vocab.chars,
               (size_t)vocab.size * sizeof *vocab.chars);
        GptConfig cfg = {.vocab_size = vocab.size, .block_size = block,
                         .n_layer = layers, .n_head = heads, .n_embd = embd,
                         .n_ffn = gpt_ffn_width(embd), .dropout = dropout,
                         .bias = bias, .positional = POS_LEARNED};
        if (pos_kind_parse(positional, &cfg.positional) != 0)
            flags_fail("--positional must be learned or sinusoidal, got "
                       "'%s'", positional);
        if (gpt_create(&m, &cfg, &err) != 0) flags_fail("%s", err.msg);
        Rng rng;
        rng_seed(&rng, seed);
        gpt_init(&m, &rng);
        // the untrained model's loss on the start of the corpus
        size_t n = 16 * (size_t)block + 1;
        if (!*score && corpus.n >= n
            && gpt_score(&m, corpus.ids, n, &untrained_loss, &err) != 0)
            die("%s", err.msg);
        corpus_free(&corpus);
        snprintf(label, sizeof label, "new, GPT-2 initialisation with seed "
                 "%llu, untrained (vocabulary of %s)",
                 (unsigned long long)seed, data);
        source = label;
    }

    if (*score) {
        size_t n;
        int *ids = vocab_encode_utf8(&vocab, score, strlen(score), &n, &err);
        double loss = 0;
        if (!ids || gpt_score(&m, ids, n, &loss, &err) != 0)
            die("--score: %s", err.msg);
        printf("loss %.6f\n", loss);
        free(ids);
    } else {
        size_t n_prompt;
        int *ids = vocab_encode_utf8(&vocab, prompt, strlen(prompt),
                                     &n_prompt, &err);
        if (!ids) die("--prompt: %s", err.msg);
        if (n_prompt == 0) die("--prompt: give at least one character");
        show_config(&m.cfg, source);
        show_params(&m);
        if (untrained_loss >= 0)
            printf("loss        %.4f on the first %d characters of %s; a "
                   "uniform guess scores ln %d = %.4f: the small init makes "
                   "every logit near 0\n", untrained_loss,
                   16 * m.cfg.block_size + 1, data, m.cfg.vocab_size,
                   log((double)m.cfg.vocab_size));
        size_t room = n_prompt + (size_t)tokens;
        ids = xrealloc(ids, room * sizeof *ids);
        printf("sample      %d characters, temperature %g, top-k %d, top-p "
               "%g, seed %llu, %s\n", tokens, temperature, top_k, top_p,
               (unsigned long long)seed,
               no_cache ? "no KV cache" : "KV cache");
        printf("----\n%s", prompt);
        Printer pr = {&vocab, true};
        GenStats st;
        if (generate(&m, ids, (int)n_prompt, ids, &opt, print_id, &pr, &st,
                     &err) != 0)
            die("%s", err.msg);
        printf("\n----\n");
        printf("speed       %d tokens in %.3f s: %.0f tokens/s (%d full "
               "passes over the context, %s window)\n", st.tokens,
               st.seconds, st.tokens / (st.seconds > 0 ? st.seconds : 1e-9),
               st.prefills, window);
        if (!no_cache && tokens > 0 && tokens <= 1000) {
            // the same generation the naive way, for the comparison
            opt.use_cache = false;
            int *again = xmalloc(room * sizeof *again);
            GenStats slow;
            if (generate(&m, ids, (int)n_prompt, again, &opt, NULL, NULL,
                         &slow, &err) != 0)
                die("%s", err.msg);
            bool same = memcmp(ids, again, room * sizeof *ids) == 0;
            printf("            without the cache: %.0f tokens/s (%d full "
                   "passes), %.1fx slower; same text: %s\n",
                   slow.tokens / (slow.seconds > 0 ? slow.seconds : 1e-9),
                   slow.prefills, slow.seconds / (st.seconds > 0 ? st.seconds
                                                               : 1e-9),
                   same ? "yes" : "NO");
            free(again);
        }
        free(ids);
    }
    if (*save) {
        if (checkpoint_save(save, &m, &vocab, &err) != 0) die("%s", err.msg);
        printf("saved       %s\n", save);
    }
    vocab_free(&vocab);
    gpt_free(&m);
    return 0;
}
