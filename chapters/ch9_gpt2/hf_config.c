#include "hf_config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layernorm.h"
#include "param_file.h"
#include "utf8.h"

// ---- reading ---------------------------------------------------------------

// A size the model needs: a whole number >= 1.
static int need_size(const Json *j, const char *key, int *out,
                     const char *path, Error *err) {
    const Json *v = json_get(j, key);
    int64_t x;
    if (!v) return error_set(err, "%s: no \"%s\"", path, key);
    if (json_int64(v, &x) != 0 || x < 1 || x > INT32_MAX)
        return error_set(err, "%s: \"%s\" must be a whole number >= 1",
                         path, key);
    *out = (int)x;
    return 0;
}

// A boolean key, or dflt when it is absent.
static int get_bool(const Json *j, const char *key, bool dflt, bool *out,
                    const char *path, Error *err) {
    const Json *v = json_get(j, key);
    if (v && v->type != JSON_BOOL)
        return error_set(err, "%s: \"%s\" must be true or false", path,
                         key);
    *out = v ? v->b : dflt;
    return 0;
}

// A number key, or dflt when it is absent.
static int get_number(const Json *j, const char *key, double dflt,
                      double *out, const char *path, Error *err) {
    const Json *v = json_get(j, key);
    if (v && v->type != JSON_NUMBER)
        return error_set(err, "%s: \"%s\" must be a number", path, key);
    *out = v ? v->num : dflt;
    return 0;
}

//> hf-activation
// transformers' names (ACT2FN) of the two GELUs chapter 3 computes.
static const struct { const char *name; Activation act; } ACTS[] = {
    {"gelu_new", GELU_TANH},            // GPT-2's, OpenAI's formula
    {"gelu_pytorch_tanh", GELU_TANH},   // the same, F.gelu(x, 'tanh')
    {"gelu", GELU_EXACT},               // F.gelu(x): the erf form
};

static int parse_activation(const Json *j, Activation *act,
                            const char *path, Error *err) {
    const Json *v = json_get(j, "activation_function");
    const char *name = v && v->type == JSON_STRING ? v->str : "gelu_new";
    if (v && v->type != JSON_STRING)
        return error_set(err, "%s: \"activation_function\" must be a "
                         "string", path);
    for (size_t i = 0; i < sizeof ACTS / sizeof ACTS[0]; i++)
        if (strcmp(name, ACTS[i].name) == 0) {
            *act = ACTS[i].act;
            return 0;
        }
    char q[6 * 40 + 3];
    return error_set(err, "%s: \"activation_function\" is %s; chapter 3 "
                     "has gelu_new (GPT-2's tanh GELU), gelu_pytorch_tanh "
                     "and gelu", path, json_quote(q, sizeof q, name, 40));
}
//< hf-activation

// Switches of GPT2Config that change the model into one chapter 5's is
// not, with the value that does so.
static const struct { const char *key; bool bad; const char *why; }
SWITCHES[] = {
    {"tie_word_embeddings", false, "an LM head of its own; this model's "
     "is wte"},
    {"scale_attn_weights", false, "attention scores without the "
     "1/sqrt(head size)"},
    {"scale_attn_by_inverse_layer_idx", true, "attention scores divided "
     "by the layer's number"},
    {"add_cross_attention", true, "cross-attention in every block"},
};

static int check_switches(const Json *j, const char *path, Error *err) {
    for (size_t i = 0; i < sizeof SWITCHES / sizeof SWITCHES[0]; i++) {
        bool on = false;
        if (get_bool(j, SWITCHES[i].key, !SWITCHES[i].bad, &on, path, err))
            return -1;
        if (on == SWITCHES[i].bad)
            return error_set(err, "%s: \"%s\" is %s: %s, which chapter 5's "
                             "GPT does not have", path, SWITCHES[i].key,
                             on ? "true" : "false", SWITCHES[i].why);
    }
    const Json *type = json_get(j, "model_type");
    char q[6 * 40 + 3];
    if (type && (type->type != JSON_STRING || strcmp(type->str, "gpt2")))
        return error_set(err, "%s: \"model_type\" is %s, not \"gpt2\"",
                         path, type->type == JSON_STRING
                               ? json_quote(q, sizeof q, type->str, 40)
                               : json_type_name(type->type));
    return 0;
}

// n_positions, or n_ctx in older files; n_inner (null: 4C); epsilon.
static int parse_sizes(const Json *j, GptConfig *c, const char *path,
                       Error *err) {
    if (need_size(j, "vocab_size", &c->vocab_size, path, err)
        || need_size(j, "n_embd", &c->n_embd, path, err)
        || need_size(j, "n_layer", &c->n_layer, path, err)
        || need_size(j, "n_head", &c->n_head, path, err)
        || need_size(j, json_get(j, "n_positions") || !json_get(j, "n_ctx")
                        ? "n_positions" : "n_ctx",
                     &c->block_size, path, err))
        return -1;
    const Json *inner = json_get(j, "n_inner");
    c->n_ffn = gpt_ffn_width(c->n_embd);
    if (inner && inner->type != JSON_NULL
        && need_size(j, "n_inner", &c->n_ffn, path, err) != 0)
        return -1;
    double eps = 0;
    if (get_number(j, "layer_norm_epsilon", 1e-5, &eps, path, err) != 0)
        return -1;
    if ((float)eps != LAYERNORM_EPS)
        return error_set(err, "%s: \"layer_norm_epsilon\" is %g; chapter "
                         "4's LayerNorm adds 1e-5", path, eps);
    return 0;
}

int hf_config_parse(const char *text, size_t len, const char *path,
                    GptConfig *cfg, Error *err) {
    Error jerr;
    Json *j = json_parse(text, len, &jerr);
    if (!j) return error_set(err, "%s: %s", path, jerr.msg);
    GptConfig c = {.bias = true, .positional = POS_LEARNED};
    double drop = 0;
    int rc = -1;
    if (j->type != JSON_OBJECT)
        error_set(err, "%s: the config is %s, expected an object", path,
                  json_type_name(j->type));
    else if (check_switches(j, path, err) == 0
             && parse_sizes(j, &c, path, err) == 0
             && parse_activation(j, &c.act, path, err) == 0
             && get_number(j, "resid_pdrop", 0.1, &drop, path, err) == 0) {
        c.dropout = (float)drop;
        Error cerr;
        if (gpt_config_check(&c, &cerr) != 0)
            error_set(err, "%s: %s", path, cerr.msg);
        else
            rc = 0;
    }
    json_free(j);
    if (rc == 0) *cfg = c;
    return rc;
}

int hf_config_load(const char *path, GptConfig *cfg, Error *err) {
    size_t len;
    Error ferr;
    char *text = read_file(path, &len, &ferr);
    if (!text) return error_set(err, "%s", ferr.msg);
    int rc = hf_config_parse(text, len, path, cfg, err);
    free(text);
    return rc;
}

// ---- writing ---------------------------------------------------------------

//> hf-config-json
int hf_config_json(StrBuf *b, const GptConfig *c, Error *err) {
    if (!c->bias || c->positional != POS_LEARNED)
        return error_set(err, "not a GPT-2: it has %s and %s positions; "
                         "GPT-2 has biases and learned ones",
                         c->bias ? "biases" : "no biases",
                         pos_kind_name(c->positional));
    char drop[32], inner[16] = "null";
    float_shortest(drop, c->dropout);
    if (!strpbrk(drop, ".e")) strcat(drop, ".0");   // Python's 0.0, 1.0
    if (c->n_ffn != gpt_ffn_width(c->n_embd))
        snprintf(inner, sizeof inner, "%d", c->n_ffn);
    int eot = c->vocab_size - 1;   // GPT-2's <|endoftext|>: the last id
    // save_pretrained's keys, sorted; no attention dropout here (0)
    sb_printf(b, "{\n  \"activation_function\": \"%s\",\n"
              "  \"add_cross_attention\": false,\n"
              "  \"architectures\": [\n    \"GPT2LMHeadModel\"\n  ],\n"
              "  \"attn_pdrop\": 0.0,\n  \"bos_token_id\": %d,\n"
              "  \"dtype\": \"float32\",\n  \"embd_pdrop\": %s,\n"
              "  \"eos_token_id\": %d,\n  \"initializer_range\": 0.02,\n"
              "  \"layer_norm_epsilon\": 1e-05,\n"
              "  \"model_type\": \"gpt2\",\n", c->act == GELU_TANH
              ? "gelu_new" : "gelu", eot, drop, eot);
    sb_printf(b, "  \"n_embd\": %d,\n  \"n_head\": %d,\n  \"n_inner\": %s,\n"
              "  \"n_layer\": %d,\n  \"n_positions\": %d,\n"
              "  \"pad_token_id\": null,\n"
              "  \"reorder_and_upcast_attn\": false,\n"
              "  \"resid_pdrop\": %s,\n"
              "  \"scale_attn_by_inverse_layer_idx\": false,\n"
              "  \"scale_attn_weights\": true,\n", c->n_embd, c->n_head,
              inner, c->n_layer, c->block_size, drop);
    sb_printf(b, "  \"summary_activation\": null,\n"
              "  \"summary_first_dropout\": 0.1,\n"
              "  \"summary_proj_to_labels\": true,\n"
              "  \"summary_type\": \"cls_index\",\n"
              "  \"summary_use_proj\": true,\n"
              "  \"tie_word_embeddings\": true,\n  \"use_cache\": true,\n"
              "  \"vocab_size\": %d\n}\n", c->vocab_size);
    return 0;
}
//< hf-config-json
