#include "checkpoint.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mem.h"
#include "param_file.h"
#include "safetensors.h"
#include "utf8.h"

// ---- saving ----------------------------------------------------------------

// The config as the JSON object of the "config" metadata key.
static void config_json(StrBuf *b, const GptConfig *c) {
    char drop[32];
    float_shortest(drop, c->dropout);
    sb_printf(b, "{\"vocab_size\": %d, \"block_size\": %d, \"n_layer\": %d, "
              "\"n_head\": %d, \"n_embd\": %d, \"n_ffn\": %d, \"bias\": %s, "
              "\"dropout\": %s, \"positional\": \"%s\", \"gelu\": \"%s\"}",
              c->vocab_size, c->block_size, c->n_layer, c->n_head, c->n_embd,
              c->n_ffn, c->bias ? "true" : "false", drop,
              pos_kind_name(c->positional), activation_name(c->act));
}

//> checkpoint-save
// The head: a copy of wte under nanoGPT's name (optional on load).
static const ParamAlias HEAD = {"lm_head.weight", "transformer.wte.weight",
                                false};

// The file of m with the metadata key (what the ids are: "vocab" or
// "tokenizer") and its value, and step unless it is -1.
static int save_with(const char *path, const Gpt *m, const char *key,
                     const char *value, int step, Error *err) {
    StrBuf config = {0};
    config_json(&config, &m->cfg);
    char steps[16];
    snprintf(steps, sizeof steps, "%d", step);
    const char *keys[] = {"config", key, "format", "step"};
    const char *values[] = {config.s, value, "pt", steps};
    int rc = param_file_save(path, m->params, m->tensors, m->n_tensors,
                             &HEAD, 1, keys, values, step >= 0 ? 4 : 3,
                             err);
    sb_free(&config);
    return rc;
}

int checkpoint_save_step(const char *path, const Gpt *m, const Vocab *vocab,
                         int step, Error *err) {
    if (vocab->size != m->cfg.vocab_size)
        return error_set(err, "%s: the vocabulary has %d characters, the "
                         "model %d", path, vocab->size, m->cfg.vocab_size);
    // Metadata values are C strings: a NUL would cut the vocabulary short
    // and the file would not load. (Being ascending, it can only be first.)
    if (vocab->size > 0 && vocab->chars[0] == 0)
        return error_set(err, "cannot save %s: its vocabulary holds U+0000 "
                         "(NUL), which cannot be stored", path);
    StrBuf chars = {0};
    for (int i = 0; i < vocab->size; i++) {
        char buf[4];
        sb_append(&chars, buf, (size_t)utf8_encode(vocab->chars[i], buf));
    }
    int rc = save_with(path, m, "vocab", chars.s ? chars.s : "", step, err);
    sb_free(&chars);
    return rc;
}
//< checkpoint-save

// A tokenizer's name: 1 to CHECKPOINT_TOKENIZER_MAX - 1 printable ASCII
// characters.
static bool tokenizer_name_ok(const char *name) {
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (name[i] < '!' || name[i] > '~') return false;
    return n >= 1 && n < CHECKPOINT_TOKENIZER_MAX;
}

int checkpoint_save_tokenizer(const char *path, const Gpt *m,
                              const char *tokenizer, int step, Error *err) {
    if (!tokenizer_name_ok(tokenizer))
        return error_set(err, "cannot save %s: '%s' is no tokenizer name "
                         "(1 to %d printable ASCII characters)", path,
                         tokenizer, CHECKPOINT_TOKENIZER_MAX - 1);
    return save_with(path, m, "tokenizer", tokenizer, step, err);
}

int checkpoint_save(const char *path, const Gpt *m, const Vocab *vocab,
                    Error *err) {
    return checkpoint_save_step(path, m, vocab, -1, err);
}

// ---- loading: first every check, then the model ----------------------------

static int parse_config(const StFile *f, GptConfig *c, Error *err) {
    const char *path = f->path, *text = st_meta(f, "config");
    if (!text)
        return error_set(err, "%s: no \"config\" in the metadata; is this a "
                         "chapter 5 checkpoint?", path);
    Error jerr;
    Json *cfg = json_parse(text, strlen(text), &jerr);
    if (!cfg)
        return error_set(err, "%s: config metadata: %s", path, jerr.msg);
    int rc = -1;
    const Json *bias = json_get(cfg, "bias");
    const Json *drop = json_get(cfg, "dropout");
    const Json *pos = json_get(cfg, "positional");
    const Json *gelu = json_get(cfg, "gelu");   // absent: exact (older files)
    c->act = GELU_EXACT;
    if (cfg->type != JSON_OBJECT)
        error_set(err, "%s: config metadata is %s, expected an object", path,
                  json_type_name(cfg->type));
    else if (json_get(cfg, "src_vocab") && !json_get(cfg, "vocab_size"))
        error_set(err, "%s is chapter 7's encoder-decoder, not a GPT "
                  "(./ch7 reads it)", path);
    else if (config_int(cfg, "vocab_size", 1, &c->vocab_size, path, err) != 0
             || config_int(cfg, "block_size", 1, &c->block_size, path, err)
             || config_int(cfg, "n_layer", 1, &c->n_layer, path, err)
             || config_int(cfg, "n_head", 1, &c->n_head, path, err)
             || config_int(cfg, "n_embd", 1, &c->n_embd, path, err)
             || (json_get(cfg, "n_ffn")
                 && config_int(cfg, "n_ffn", 1, &c->n_ffn, path, err)))
        ;
    else if (!bias || bias->type != JSON_BOOL)
        error_set(err, "%s: config \"bias\" must be true or false", path);
    else if (!drop || drop->type != JSON_NUMBER)
        error_set(err, "%s: config \"dropout\" must be a number", path);
    else if (!pos || pos->type != JSON_STRING
             || pos_kind_parse(pos->str, &c->positional) != 0)
        error_set(err, "%s: config \"positional\" must be \"learned\" or "
                  "\"sinusoidal\"", path);
    else if (gelu && (gelu->type != JSON_STRING
                      || gelu_kind_parse(gelu->str, &c->act) != 0))
        error_set(err, "%s: config \"gelu\" must be \"exact\" or \"tanh\"",
                  path);
    else {
        if (!json_get(cfg, "n_ffn"))    // nanoGPT's files: GPT-2's 4C
            c->n_ffn = gpt_ffn_width(c->n_embd);
        c->bias = bias->b;
        c->dropout = (float)drop->num;
        Error cerr;
        if (gpt_config_check(c, &cerr) != 0)
            error_set(err, "%s: %s", path, cerr.msg);
        else
            rc = 0;
    }
    json_free(cfg);
    return rc;
}

// The "vocab" metadata: exactly V distinct characters in ascending order,
// the order chapter 1's vocabulary numbers them in.
static int parse_vocab(const StFile *f, int V, Vocab *vocab, Error *err) {
    const char *text = st_meta(f, "vocab");
    if (!text)
        return error_set(err, "%s: no \"vocab\" in the metadata", f->path);
    size_t len = strlen(text);
    uint32_t *cps = xmalloc((len + 1) * sizeof *cps);
    Error uerr;
    long n = utf8_decode(text, len, cps, &uerr);
    int rc = -1;
    if (n < 0)
        error_set(err, "%s: vocab metadata: %s", f->path, uerr.msg);
    else if (n != V)
        error_set(err, "%s: vocab metadata has %ld characters, the config "
                  "says vocab_size %d", f->path, n, V);
    else {
        rc = 0;
        for (long i = 1; i < n && rc == 0; i++)
            if (cps[i] <= cps[i - 1])
                // (ids follow ascending code points)
                rc = error_set(err, "%s: vocab metadata: character %ld "
                               "(U+%04X) is out of order", f->path, i,
                               cps[i]);
    }
    if (rc != 0) {
        free(cps);
        return -1;
    }
    vocab->chars = cps;
    vocab->size = V;
    return 0;
}

// The "tokenizer" metadata into tokenizer: 1 when the file has it, 0
// when it has none (its ids are characters), -1 with a message.
static int tokenizer_meta(const StFile *f, char *tokenizer, Error *err) {
    const char *name = st_meta(f, "tokenizer");
    tokenizer[0] = 0;
    if (!name) return 0;
    if (!tokenizer_name_ok(name))
        return error_set(err, "%s: \"tokenizer\" metadata must be 1 to %d "
                         "printable ASCII characters", f->path,
                         CHECKPOINT_TOKENIZER_MAX - 1);
    memcpy(tokenizer, name, strlen(name) + 1);
    return 1;
}

// What the ids are: V characters in the "vocab" metadata (into *vocab),
// or, where tokenizer is not NULL, a tokenizer's name instead (into
// tokenizer; *vocab stays empty). A file of a tokenizer's ids is refused
// where tokenizer is NULL: the caller can only read characters.
static int parse_tokens(const StFile *f, int V, Vocab *vocab,
                        char *tokenizer, Error *err) {
    char name[CHECKPOINT_TOKENIZER_MAX];
    int has = tokenizer_meta(f, name, err);
    if (has < 0) return -1;
    if (has && !tokenizer)
        return error_set(err, "%s: its ids are %s tokens, not characters "
                         "(./ch9 reads it)", f->path, name);
    if (tokenizer) memcpy(tokenizer, name, sizeof name);
    return has ? 0 : parse_vocab(f, V, vocab, err);
}

//> checkpoint-load
// (tokenizer: see parse_tokens)
static int load_file(const char *path, Gpt *m, Vocab *vocab, char *tokenizer,
                     int *step, Error *err) {
    memset(m, 0, sizeof *m);
    memset(vocab, 0, sizeof *vocab);
    StFile f;
    // The header alone, with the file's own checks: each tensor is then
    // read from the file straight into the model, so loading holds the
    // weights once, not the file and the weights.
    if (st_load_header(&f, path, err) != 0) return -1;
    GptConfig cfg;
    Gpt shape;   // a model of that config, for the list of its tensors
    int rc = -1;
    bool have_shape = false;
    if (parse_config(&f, &cfg, err) != 0) goto done;
    // a config that claims a model far larger than the file's tensors is
    // refused here, before anything of its size is allocated
    if (param_file_fits(&f, gpt_param_count(&cfg), err) != 0) goto done;
    // The sinusoidal table (block_size x C floats) is in no tensor, and
    // the list of tensors does not depend on block_size then: the file
    // is checked against a model of block 1, and the table is made only
    // for a file that passes.
    GptConfig checked = cfg;
    if (cfg.positional == POS_SINUSOIDAL) checked.block_size = 1;
    if (gpt_create(&shape, &checked, err) != 0) goto done;
    have_shape = true;
    const char *model = cfg.bias ? "bias true" : "bias false";
    if (param_file_check(&f, shape.tensors, shape.n_tensors, &HEAD, 1,
                         model, err) != 0)
        goto done;
    int s;
    if (param_file_step(&f, &s, err) != 0) goto done;
    if (step) *step = s;
    if (parse_tokens(&f, cfg.vocab_size, vocab, tokenizer, err) != 0)
        goto done;
    // the header checked: now the model of the whole config, and the copy,
    // which checks the values as they arrive
    if (checked.block_size != cfg.block_size) {
        gpt_free(&shape);
        have_shape = false;
        if (gpt_create(&shape, &cfg, err) != 0) goto done;
        have_shape = true;
    }
    if (param_file_copy(&f, shape.params, shape.tensors, shape.n_tensors,
                        &HEAD, 1, err) != 0)
        goto done;   // a value not finite, lm_head not wte, a read error
    *m = shape;
    have_shape = false;
    rc = 0;
done:
    if (have_shape) gpt_free(&shape);
    if (rc != 0) vocab_free(vocab);
    st_free(&f);
    return rc;
}
//< checkpoint-load

int checkpoint_load_step(const char *path, Gpt *m, Vocab *vocab, int *step,
                         Error *err) {
    return load_file(path, m, vocab, NULL, step, err);
}

int checkpoint_load_any(const char *path, Gpt *m, Vocab *vocab,
                        char *tokenizer, int *step, Error *err) {
    return load_file(path, m, vocab, tokenizer, step, err);
}

int checkpoint_load(const char *path, Gpt *m, Vocab *vocab, Error *err) {
    return checkpoint_load_step(path, m, vocab, NULL, err);
}

int checkpoint_tokenizer(const char *path, char *tokenizer, Error *err) {
    StFile f;
    if (st_load_header(&f, path, err) != 0) return -1;
    int rc = tokenizer_meta(&f, tokenizer, err) < 0 ? -1 : 0;
    st_free(&f);
    return rc;
}

int checkpoint_peek(const char *path, GptConfig *cfg, int *step,
                    Error *err) {
    StFile f;
    if (st_load_header(&f, path, err) != 0) return -1;
    int s = 0;
    int rc = parse_config(&f, cfg, err) == 0
             && param_file_fits(&f, gpt_param_count(cfg), err) == 0
             && param_file_step(&f, &s, err) == 0 ? 0 : -1;
    if (rc == 0 && step) *step = s;
    st_free(&f);
    return rc;
}
