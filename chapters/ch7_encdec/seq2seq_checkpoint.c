#include "seq2seq_checkpoint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "mem.h"
#include "param_file.h"
#include "safetensors.h"

// A tied model's matrix under the two other names PyTorch gives it.
static const ParamAlias TIED[2] = {
    {"tgt_embed.weight", "src_embed.weight", true},
    {"generator.weight", "src_embed.weight", true}};

const char *seq2seq_act_name(Activation act) {
    return act == RELU ? "relu" : act == GELU_TANH ? "gelu_tanh" : "gelu";
}

int seq2seq_act_parse(const char *s, Activation *out) {
    const Activation all[3] = {RELU, GELU_EXACT, GELU_TANH};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, seq2seq_act_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    return -1;
}

// ---- saving ----------------------------------------------------------------

static void config_json(StrBuf *b, const Seq2SeqConfig *c) {
    char drop[32];
    float_shortest(drop, c->dropout);
    sb_printf(b, "{\"src_vocab\": %d, \"tgt_vocab\": %d, \"max_len\": %d, "
              "\"n_enc\": %d, \"n_dec\": %d, \"n_head\": %d, \"n_embd\": "
              "%d, \"n_ffn\": %d, \"dropout\": %s, \"bias\": %s, \"tie\": "
              "%s, \"act\": \"%s\", \"pad\": %d}", c->src_vocab,
              c->tgt_vocab, c->max_len, c->n_enc, c->n_dec, c->n_head,
              c->n_embd, c->n_ffn, drop, c->bias ? "true" : "false",
              c->tie ? "true" : "false", seq2seq_act_name(c->act), c->pad);
}

int seq2seq_save(const char *path, const Seq2Seq *m, int step,
                 const char *vocab, Error *err) {
    StrBuf config = {0};
    config_json(&config, &m->cfg);
    char steps[16];
    snprintf(steps, sizeof steps, "%d", step);
    const char *keys[4] = {"config", "format"}, *values[4] = {config.s,
                                                              "pt"};
    int n = 2;
    if (vocab) keys[n] = "vocab", values[n++] = vocab;
    if (step >= 0) keys[n] = "step", values[n++] = steps;
    int rc = param_file_save(path, m->params, m->tensors, m->n_tensors,
                             TIED, m->cfg.tie ? 2 : 0, keys, values, n,
                             err);
    sb_free(&config);
    return rc;
}

// ---- loading ---------------------------------------------------------------

static int config_bool(const Json *cfg, const char *key, bool *out,
                       const char *path, Error *err) {
    const Json *v = json_get(cfg, key);
    if (!v || v->type != JSON_BOOL)
        return error_set(err, "%s: config \"%s\" must be true or false",
                         path, key);
    *out = v->b;
    return 0;
}

static int parse_config(const StFile *f, Seq2SeqConfig *c, Error *err) {
    const char *path = f->path, *text = st_meta(f, "config");
    if (!text)
        return error_set(err, "%s: no \"config\" in the metadata; is this a "
                         "chapter 7 checkpoint?", path);
    Error jerr;
    Json *cfg = json_parse(text, strlen(text), &jerr);
    if (!cfg)
        return error_set(err, "%s: config metadata: %s", path, jerr.msg);
    int rc = -1;
    const Json *drop = json_get(cfg, "dropout"), *act = json_get(cfg, "act");
    memset(c, 0, sizeof *c);
    if (cfg->type != JSON_OBJECT)
        error_set(err, "%s: config metadata is %s, expected an object", path,
                  json_type_name(cfg->type));
    else if (json_get(cfg, "vocab_size") && !json_get(cfg, "src_vocab"))
        error_set(err, "%s is a GPT for ./ch5 and ./ch6, not an "
                  "encoder-decoder", path);
    else if (config_int(cfg, "src_vocab", 1, &c->src_vocab, path, err)
             || config_int(cfg, "tgt_vocab", 1, &c->tgt_vocab, path, err)
             || config_int(cfg, "max_len", 1, &c->max_len, path, err)
             || config_int(cfg, "n_enc", 1, &c->n_enc, path, err)
             || config_int(cfg, "n_dec", 1, &c->n_dec, path, err)
             || config_int(cfg, "n_head", 1, &c->n_head, path, err)
             || config_int(cfg, "n_embd", 1, &c->n_embd, path, err)
             || config_int(cfg, "n_ffn", 1, &c->n_ffn, path, err)
             || config_int(cfg, "pad", 0, &c->pad, path, err)
             || config_bool(cfg, "bias", &c->bias, path, err)
             || config_bool(cfg, "tie", &c->tie, path, err))
        ;
    else if (!drop || drop->type != JSON_NUMBER)
        error_set(err, "%s: config \"dropout\" must be a number", path);
    else if (!act || act->type != JSON_STRING
             || seq2seq_act_parse(act->str, &c->act) != 0)
        error_set(err, "%s: config \"act\" must be \"relu\", \"gelu\" or "
                  "\"gelu_tanh\"", path);
    else {
        c->dropout = (float)drop->num;
        Error cerr;
        if (seq2seq_config_check(c, &cerr) != 0)
            error_set(err, "%s: %s", path, cerr.msg);
        else
            rc = 0;
    }
    json_free(cfg);
    return rc;
}

int seq2seq_load(const char *path, Seq2Seq *m, int *step, char **vocab,
                 Error *err) {
    StFile f;
    // the header alone, with the file's own checks; the tensors are read
    // from the file one at a time (param_file_copy)
    if (st_load_header(&f, path, err) != 0) return -1;
    Seq2SeqConfig cfg;
    Seq2Seq shape = {0};   // a model of that config: its list of tensors
    int rc = -1, s = 0;
    // The sinusoids (max_len x C floats) are in no tensor, and the list
    // of tensors does not depend on max_len: the file is checked against
    // a model of max_len 1, and the table is made only for a file that
    // passes.
    Seq2SeqConfig checked;
    if (parse_config(&f, &cfg, err) != 0
        || param_file_fits(&f, seq2seq_param_count(&cfg), err) != 0)
        goto done;
    checked = cfg;
    checked.max_len = 1;
    if (seq2seq_create(&shape, &checked, err) != 0) goto done;
    char model[48];
    snprintf(model, sizeof model, "bias %s, tie %s",
             cfg.bias ? "true" : "false", cfg.tie ? "true" : "false");
    if (param_file_check(&f, shape.tensors, shape.n_tensors, TIED,
                         cfg.tie ? 2 : 0, model, err) != 0
        || param_file_step(&f, &s, err) != 0)
        goto done;
    // the header checked: now the model of the whole config, and the
    // copy, which checks the values as they arrive
    seq2seq_free(&shape);
    if (seq2seq_create(&shape, &cfg, err) != 0
        || param_file_copy(&f, shape.params, shape.tensors, shape.n_tensors,
                           TIED, cfg.tie ? 2 : 0, err) != 0)
        goto done;
    // all checked: only now the caller's variables change
    const char *text = st_meta(&f, "vocab");
    if (vocab) *vocab = NULL;
    if (vocab && text) {
        size_t len = strlen(text) + 1;
        *vocab = memcpy(xmalloc(len), text, len);
    }
    if (step) *step = s;
    *m = shape;
    shape = (Seq2Seq){0};
    rc = 0;
done:
    seq2seq_free(&shape);
    st_free(&f);
    return rc;
}
