// Tests of chapter 9's model side: GPT-2 from Hugging Face's files.
//
// tests/reference/gen_ch9.py made a tiny GPT2LMHeadModel (random weights,
// tanh GELU) and wrote it in both file layouts, with what transformers
// computes from it in float64. Here: each layout loads into chapter 5's
// model and gives transformers' logits, loss and every gradient; chapter
// 6's trainer takes transformers' ten AdamW steps; the model written back
// in Hugging Face's format holds exactly the tensors and config keys that
// save_pretrained wrote; every damaged file or config is one clear
// refusal, with nothing left allocated; the load's memory is the model,
// one tensor and the header, never the whole file.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc_count.h"
#include "check_util.h"
#include "fixture.h"
#include "gpt2_model.h"
#include "gpt_train.h"
#include "hf_config.h"
#include "hf_names.h"
#include "json.h"
#include "mem.h"
#include "safetensors.h"
#include "utf8.h"

#define REF "tests/reference/ch9_model/"

static const char *LAYOUTS[2] = {REF "pretrained", REF "hub"};

static Fixture *reference(void) {
    return fixture_open("ch9_model/reference.txt");
}

static int *ids_of(const Fixture *f, const char *key, size_t n) {
    const float *p = fixture_get(f, key, NULL, 0);
    int *ids = xmalloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++) ids[i] = (int)p[i];
    return ids;
}

static size_t numel(const GptTensor *t) {
    return (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
}

static void load(const char *dir, Gpt *m) {
    Error err;
    ck_assert_msg(gpt2_load(dir, m, &err) == 0, "%s", err.msg);
}

// Every value of want (n of them) as double, and the largest |value|.
static double *widen(const float *want, size_t n, double *big) {
    double *w = xmalloc(n * sizeof *w);
    *big = 0;
    for (size_t i = 0; i < n; i++) w[i] = want[i], *big = fmax(*big,
                                                             fabs(w[i]));
    return w;
}

// ---- parity with transformers ----------------------------------------------

// Logits within 1e-5 relative (plus 1e-5 of the largest logit where one
// is near 0), the loss within 1e-5, each gradient within 1e-5 relative
// plus 1e-5 of its tensor's largest (llm.c's GPT-2 test allows 1e-2).
START_TEST(both_layouts_match_transformers) {
    Fixture *f = reference();
    Gpt m;
    load(LAYOUTS[_i], &m);
    const GptConfig *c = &m.cfg;
    ck_assert(c->vocab_size == 61 && c->block_size == 16 && c->n_embd == 16
              && c->n_layer == 2 && c->n_head == 2 && c->n_ffn == 64
              && c->bias && c->positional == POS_LEARNED
              && c->act == GELU_TANH && c->dropout == 0.0f);
    int dims[FIXTURE_MAX_DIMS];
    ck_assert_int_eq(fixture_dims(f, "idx", dims), 2);
    int B = dims[0], T = dims[1], V = c->vocab_size;
    int *idx = ids_of(f, "idx", (size_t)B * T);
    int *tg = ids_of(f, "targets", (size_t)B * T);
    GptActs a;
    Error err;
    ck_assert_int_eq(gpt_acts_alloc(&a, c, B, T, &err), 0);
    float loss;
    ck_assert_msg(gpt_forward(&m, &a, idx, tg, B, T, false, NULL, &loss,
                              &err) == 0, "%s", err.msg);
    double big;
    int lshape[3] = {B, T, V};
    size_t n = (size_t)B * T * V;
    double *w = widen(fixture_get(f, "logits", lshape, 3), n, &big);
    ck_assert_close("logits", a.logits, w, n, 1e-5 * big, 1e-5);
    free(w);
    double wl = fixture_get(f, "loss", NULL, 0)[0];
    ck_assert_msg(fabs(loss - wl) <= 1e-5 * wl, "loss %.9g, transformers "
                  "%.9g", loss, wl);
    ck_assert_int_eq(gpt_alloc_grads(&m, &err), 0);
    gpt_zero_grads(&m);
    gpt_backward(&m, &a, idx, tg);
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *t = &m.tensors[i];
        char key[128];
        snprintf(key, sizeof key, "grad.%s", t->name);
        w = widen(fixture_get(f, key, t->shape, t->ndim), numel(t), &big);
        ck_assert_close(key, m.grads + t->offset, w, numel(t), 1e-5 * big,
                        1e-5);
        free(w);
    }
    free(idx), free(tg);
    gpt_acts_free(&a, c);
    gpt_free(&m);
    fixture_free(f);
}
END_TEST

START_TEST(layouts_hold_the_same_weights) {
    Gpt a, b;
    load(LAYOUTS[0], &a);
    load(LAYOUTS[1], &b);
    ck_assert_uint_eq(a.num_params, b.num_params);
    ck_assert_int_eq(memcmp(a.params, b.params,
                            a.num_params * sizeof(float)), 0);
    gpt_free(&a), gpt_free(&b);
}
END_TEST

// The key part of c_attn's bias (channels C .. 2C-1) has no gradient:
// it adds the same q.b to every score of a row, which the softmax
// cancels. Its computed gradient is rounding noise, which AdamW (m over
// sqrt(v)) turns into steps of about lr whatever its size, so those
// entries need only stay within the ten steps' reach; the rest are
// compared.
static void forgive_key_bias(float *got, const double *want,
                             const GptTensor *t, int C) {
    if (!strstr(t->name, "c_attn.bias")) return;
    for (int j = C; j < 2 * C; j++) {
        ck_assert_msg(fabs(got[j] - want[j]) <= 2 * 10 * 1e-2,
                      "%s: key bias %d moved too far", t->name, j);
        got[j] = (float)want[j];
    }
}

// Ten steps of chapter 6's trainer (train_step_batch on transformers'
// batches, gen_ch9.py's settings, which are gen_ch6.py's) against
// torch.optim.AdamW on the GPT2LMHeadModel: each step's loss, gradient
// norm and learning rate, and every weight after the tenth.
START_TEST(adamw_steps_match_transformers) {
    Fixture *f = reference();
    Gpt m;
    load(LAYOUTS[1], &m);
    int dims[FIXTURE_MAX_DIMS];
    ck_assert_int_eq(fixture_dims(f, "train.x", dims), 3);
    int steps = dims[0], B = dims[1], T = dims[2];
    TrainConfig c = {.batch = B, .steps = steps, .lr = 1e-2f,
                     .min_lr = 1e-3f, .warmup = 3, .decay_steps = 8,
                     .adamw = {0.9f, 0.95f, 1e-8f, 0.1f}, .grad_clip = 3.0f,
                     .eval_every = 0, .eval_iters = 1, .seed = 1};
    ck_assert_int_eq(T, m.cfg.block_size);   // the trainer's windows
    Vocab none = {0};
    GptTrain g;
    Error err;
    ck_assert_int_eq(gpt_train_init(&g, &m, &none, B, T, &err), 0);
    TrainModel tm = gpt_train_model(&g);
    Trainer t;
    ck_assert_int_eq(trainer_init(&t, &tm, &c, &err), 0);
    size_t bt = (size_t)steps * B * T;
    int *x = ids_of(f, "train.x", bt), *y = ids_of(f, "train.y", bt);
    const float *loss = fixture_get(f, "train.loss", NULL, 0);
    const float *norm = fixture_get(f, "train.norm", NULL, 0);
    const float *lr = fixture_get(f, "train.lr", NULL, 0);
    for (int s = 0; s < steps; s++) {
        StepResult r;
        gpt_train_set_batch(&g, x + (size_t)s * B * T, y + (size_t)s * B * T);
        ck_assert_msg(train_step_batch(&t, &r, &err) == 0, "%s", err.msg);
        ck_assert_msg(fabs(r.loss - loss[s]) <= 1e-5 * loss[s] &&
                      fabs(r.grad_norm - norm[s]) <= 1e-5 * norm[s] &&
                      fabs(r.lr - lr[s]) <= 1e-7 * lr[s],
                      "step %d: loss %.9g norm %.9g lr %g, transformers "
                      "%.9g %.9g %g", s + 1, r.loss, r.grad_norm, r.lr,
                      loss[s], norm[s], lr[s]);
    }
    for (int i = 0; i < g.model.n_tensors; i++) {
        const GptTensor *gt = &g.model.tensors[i];
        char key[128];
        snprintf(key, sizeof key, "train.param.%s", gt->name);
        double big;
        double *w = widen(fixture_get(f, key, gt->shape, gt->ndim),
                          numel(gt), &big);
        float *got = xmalloc(numel(gt) * sizeof *got);
        memcpy(got, g.model.params + gt->offset, numel(gt) * sizeof *got);
        forgive_key_bias(got, w, gt, g.model.cfg.n_embd);
        ck_assert_close(key, got, w, numel(gt), 1e-5 * big, 1e-4);
        free(got), free(w);
    }
    free(x), free(y);
    trainer_free(&t);
    gpt_train_free(&g);
    fixture_free(f);
}
END_TEST

// ---- writing Hugging Face's format ----------------------------------------

static char tmp[64];

static void make_tmp(void) {
    snprintf(tmp, sizeof tmp, "/tmp/ch9_model_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmp));
}

// Two JSON values equal (numbers by value: 0 and 0.0 are one number).
static bool json_equal(const Json *a, const Json *b) {
    if (a->type != b->type) return false;
    switch (a->type) {
    case JSON_NULL: return true;
    case JSON_BOOL: return a->b == b->b;
    case JSON_NUMBER: return a->num == b->num;
    case JSON_STRING: return strcmp(a->str, b->str) == 0;
    case JSON_ARRAY:
        if (a->n != b->n) return false;
        for (int i = 0; i < a->n; i++)
            if (!json_equal(&a->items[i], &b->items[i])) return false;
        return true;
    case JSON_OBJECT:
        if (a->n != b->n) return false;
        for (int i = 0; i < a->n; i++) {
            const Json *v = json_get(b, a->keys[i]);
            if (!v || !json_equal(&a->items[i], v)) return false;
        }
        return true;
    }
    return false;
}

static Json *read_json(const char *path) {
    size_t len;
    Error err;
    char *text = read_file(path, &len, &err);
    ck_assert_msg(text != NULL, "%s", err.msg);
    Json *j = json_parse(text, len, &err);
    ck_assert_msg(j != NULL, "%s: %s", path, err.msg);
    free(text);
    return j;
}

// config.json: every key save_pretrained wrote, with its value, and no
// other (but transformers_version: we are not transformers).
static void configs_agree(const char *ours, const char *theirs) {
    Json *a = read_json(ours), *b = read_json(theirs);
    int n = 0;
    for (int i = 0; i < b->n; i++) {
        if (strcmp(b->keys[i], "transformers_version") == 0) continue;
        const Json *v = json_get(a, b->keys[i]);
        ck_assert_msg(v && json_equal(v, &b->items[i]), "config.json: "
                      "\"%s\" %s", b->keys[i], v ? "differs" : "missing");
        n++;
    }
    ck_assert_int_eq(a->n, n);
    json_free(a), json_free(b);
}

// model.safetensors: the same tensors, shapes and bytes, and metadata.
static void weights_agree(const char *ours, const char *theirs) {
    StFile a, b;
    Error err;
    ck_assert_msg(st_load(&a, ours, &err) == 0, "%s", err.msg);
    ck_assert_msg(st_load(&b, theirs, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(a.n_tensors, b.n_tensors);
    for (int i = 0; i < b.n_tensors; i++) {
        const StTensor *t = &b.tensors[i], *u = st_find(&a, t->name);
        ck_assert_msg(u != NULL, "%s: no %s", ours, t->name);
        ck_assert_msg(u->ndim == t->ndim && !strcmp(u->dtype, t->dtype)
                      && !memcmp(u->shape, t->shape,
                                 (size_t)t->ndim * sizeof *t->shape)
                      && u->numel == t->numel
                      && !memcmp(st_bytes(&a, u), st_bytes(&b, t),
                                 t->end - t->begin), "%s differs",
                      t->name);
    }
    ck_assert_str_eq(st_meta(&a, "format"), st_meta(&b, "format"));
    st_free(&a), st_free(&b);
}

START_TEST(save_writes_what_save_pretrained_wrote) {
    Gpt m, back;
    load(LAYOUTS[1], &m);   // from the Hub's layout, to save_pretrained's
    make_tmp();
    Error err;
    ck_assert_msg(gpt2_save(tmp, &m, &err) == 0, "%s", err.msg);
    char ours[128];
    snprintf(ours, sizeof ours, "%s/%s", tmp, GPT2_WEIGHTS_FILE);
    weights_agree(ours, REF "pretrained/" GPT2_WEIGHTS_FILE);
    snprintf(ours, sizeof ours, "%s/%s", tmp, GPT2_CONFIG_FILE);
    configs_agree(ours, REF "pretrained/" GPT2_CONFIG_FILE);
    load(tmp, &back);
    ck_assert_int_eq(memcmp(m.params, back.params,
                            m.num_params * sizeof(float)), 0);
    // for tests/reference/check_ch9_hf.py, which loads it in transformers
    const char *keep = getenv("CH9_HF_WRITE");
    if (keep) ck_assert_msg(gpt2_save(keep, &m, &err) == 0, "%s", err.msg);
    ck_assert(back.cfg.act == GELU_TANH && back.cfg.n_ffn == m.cfg.n_ffn);
    // a model that is no GPT-2 is refused before anything is written
    gpt_free(&back);
    m.cfg.bias = false;
    ck_assert_int_eq(gpt2_save(tmp, &m, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no biases"));
    gpt_free(&m);
    remove_tree(tmp);
}
END_TEST

// The config's other forms: the exact GELU ("gelu"), n_inner, dropout,
// and what the Hub's config leaves out (n_inner, tie_word_embeddings,
// and n_positions in the oldest files: n_ctx).
START_TEST(config_keys_and_defaults) {
    const char *base = "{\"vocab_size\": 10, \"n_embd\": 8, \"n_layer\": 1, "
                       "\"n_head\": 2, ";
    struct { const char *rest; int block, ffn; Activation act; float p; }
    cases[] = {
        {"\"n_positions\": 4}", 4, 32, GELU_TANH, 0.1f},
        {"\"n_ctx\": 5}", 5, 32, GELU_TANH, 0.1f},
        {"\"n_positions\": 4, \"n_ctx\": 9, \"n_inner\": 12, "
         "\"activation_function\": \"gelu\", \"resid_pdrop\": 0.25}",
         4, 12, GELU_EXACT, 0.25f},
        {"\"n_positions\": 4, \"n_inner\": null, \"activation_function\": "
         "\"gelu_pytorch_tanh\", \"resid_pdrop\": 0}", 4, 32, GELU_TANH, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s%s", base, cases[i].rest);
        GptConfig c;
        Error err;
        ck_assert_msg(hf_config_parse(text, strlen(text), "config.json", &c,
                                      &err) == 0, "%s", err.msg);
        ck_assert(c.block_size == cases[i].block && c.n_ffn == cases[i].ffn
                  && c.act == cases[i].act && c.dropout == cases[i].p
                  && c.bias && c.positional == POS_LEARNED);
        // and back: what hf_config_json writes reads as the same config
        StrBuf b = {0};
        ck_assert_int_eq(hf_config_json(&b, &c, &err), 0);
        GptConfig d;
        ck_assert_msg(hf_config_parse(b.s, b.len, "ours", &d, &err) == 0,
                      "%s", err.msg);
        ck_assert(d.block_size == c.block_size && d.n_ffn == c.n_ffn
                  && d.act == c.act && d.dropout == c.dropout
                  && d.vocab_size == c.vocab_size && d.n_head == c.n_head);
        sb_free(&b);
    }
}
END_TEST

// ---- refusals --------------------------------------------------------------

// A safetensors file as a list of tensors of any dtype, written by hand,
// so that a test can damage it as a user's file might be.
typedef struct {
    const char *name;
    char dtype[8];
    int ndim;
    int64_t shape[4];
    const void *data;
    size_t bytes;
} Raw;

typedef struct {
    Raw t[64];
    int n;
    StFile src;
} RawFile;

static void raw_read(RawFile *r, const char *path) {
    Error err;
    ck_assert_msg(st_load(&r->src, path, &err) == 0, "%s", err.msg);
    ck_assert_int_le(r->src.n_tensors, 60);
    r->n = r->src.n_tensors;
    for (int i = 0; i < r->n; i++) {
        const StTensor *t = &r->src.tensors[i];
        Raw *x = &r->t[i];
        x->name = t->name;
        snprintf(x->dtype, sizeof x->dtype, "%s", t->dtype);
        x->ndim = t->ndim;
        memcpy(x->shape, t->shape, (size_t)t->ndim * sizeof *t->shape);
        x->data = st_bytes(&r->src, t);
        x->bytes = t->end - t->begin;
    }
}

static Raw *raw_find(RawFile *r, const char *name) {
    for (int i = 0; i < r->n; i++)
        if (strcmp(r->t[i].name, name) == 0) return &r->t[i];
    ck_abort_msg("no tensor %s", name);
    return NULL;
}

static void raw_write(const RawFile *r, const char *path) {
    StrBuf h = {0};
    sb_printf(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
    size_t at = 0;
    for (int i = 0; i < r->n; i++) {
        const Raw *x = &r->t[i];
        sb_printf(&h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", x->name,
                  x->dtype);
        for (int d = 0; d < x->ndim; d++)
            sb_printf(&h, "%s%lld", d ? "," : "", (long long)x->shape[d]);
        sb_printf(&h, "],\"data_offsets\":[%zu,%zu]}", at, at + x->bytes);
        at += x->bytes;
    }
    sb_append(&h, "}", 1);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    uint8_t size[8];
    for (int i = 0; i < 8; i++) size[i] = (uint8_t)((uint64_t)h.len >> 8 * i);
    fwrite(size, 1, 8, f);
    fwrite(h.s, 1, h.len, f);
    for (int i = 0; i < r->n; i++) fwrite(r->t[i].data, 1, r->t[i].bytes, f);
    ck_assert_int_eq(fclose(f), 0);
    sb_free(&h);
}

// The hub's config with one key's text replaced by what, or added.
static void write_config(const char *dir, const char *key, const char *what) {
    Json *j = read_json(REF "hub/" GPT2_CONFIG_FILE);
    StrBuf b = {0};
    sb_append(&b, "{", 1);
    bool done = false;
    for (int i = 0; i < j->n; i++) {
        const Json *v = &j->items[i];
        bool it = key && strcmp(j->keys[i], key) == 0;
        if (it && !what) continue;   // removed
        sb_printf(&b, "%s\"%s\": ", b.len > 1 ? ", " : "", j->keys[i]);
        if (it) sb_printf(&b, "%s", what), done = true;
        else if (v->type == JSON_STRING) sb_json_string(&b, v->str,
                                                        v->str_len);
        else if (v->type == JSON_NUMBER) sb_printf(&b, "%.17g", v->num);
        else if (v->type == JSON_BOOL) sb_printf(&b, "%s", v->b ? "true"
                                                                 : "false");
        else sb_printf(&b, "null");   // (arrays, objects: not needed)
    }
    if (key && what && !done) sb_printf(&b, ", \"%s\": %s", key, what);
    sb_append(&b, "}", 1);
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, GPT2_CONFIG_FILE);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(b.s, f);
    ck_assert_int_eq(fclose(f), 0);
    sb_free(&b);
    json_free(j);
}

// Loads tmp, expects a refusal naming want, nothing loaded, nothing
// left allocated.
static void expect_refusal(const char *want) {
    Gpt m;
    Error err;
    long before = alloc_live();
    int rc = gpt2_load(tmp, &m, &err);
    long after = alloc_live();
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(strstr(err.msg, want) != NULL, "message '%s' lacks '%s'",
                  err.msg, want);
    ck_assert_msg(strchr(err.msg, '\n') == NULL, "two lines: %s", err.msg);
    ck_assert_ptr_null(m.params);
    ck_assert_int_eq(after, before);
}

typedef void (*RawEdit)(RawFile *r, float *scratch);

// The Hub's file with one edit, and the Hub's config, into tmp.
static void write_edited(RawEdit edit) {
    RawFile r;
    raw_read(&r, REF "hub/" GPT2_WEIGHTS_FILE);
    float scratch[2048] = {0};   // (an added tensor's bytes: defined)
    edit(&r, scratch);
    char path[128];
    snprintf(path, sizeof path, "%s/%s", tmp, GPT2_WEIGHTS_FILE);
    raw_write(&r, path);
    st_free(&r.src);
    write_config(tmp, NULL, NULL);
}

static void expect_file_refusal(RawEdit edit, const char *want) {
    write_edited(edit);
    expect_refusal(want);
}

static void e_none(RawFile *r, float *s) { (void)r, (void)s; }
static void e_shape(RawFile *r, float *s) {
    (void)s;   // c_attn stored (out, in), as a Linear would be
    Raw *x = raw_find(r, "h.1.attn.c_attn.weight");
    x->shape[0] = 48, x->shape[1] = 16;
}
static void e_f16(RawFile *r, float *s) {
    (void)s;
    Raw *x = raw_find(r, "h.0.mlp.c_fc.bias");
    snprintf(x->dtype, sizeof x->dtype, "F16");
    x->bytes /= 2;
}
static void e_bf16(RawFile *r, float *s) {
    (void)s;
    Raw *x = raw_find(r, "wte.weight");
    snprintf(x->dtype, sizeof x->dtype, "BF16");
    x->bytes /= 2;
}
static void e_missing(RawFile *r, float *s) {
    (void)s;
    *raw_find(r, "h.1.ln_2.bias") = r->t[--r->n];
}
static void e_unknown(RawFile *r, float *s) {
    r->t[r->n++] = (Raw){"h.0.attn.rotary", "F32", 1, {4}, s, 16};
}
static void e_beyond(RawFile *r, float *s) {
    r->t[r->n++] = (Raw){"h.2.attn.bias", "F32", 1, {4}, s, 16};
}
static void e_mixed(RawFile *r, float *s) {
    (void)s;
    raw_find(r, "ln_f.weight")->name = "transformer.ln_f.weight";
}
static void e_nan(RawFile *r, float *s) {
    Raw *x = raw_find(r, "h.0.attn.c_proj.weight");
    memcpy(s, x->data, x->bytes);
    s[19] = NAN;
    x->data = s;
}
static void e_head(RawFile *r, float *s) {
    Raw *x = raw_find(r, "wte.weight");
    memcpy(s, x->data, x->bytes);
    s[100] += 1e-3f;
    r->t[r->n] = *x;
    r->t[r->n].name = "lm_head.weight";
    r->t[r->n++].data = s;
}
static void e_head_shape(RawFile *r, float *s) {
    (void)s;
    r->t[r->n] = *raw_find(r, "wte.weight");
    r->t[r->n].name = "lm_head.weight";
    r->t[r->n].shape[0] = 16, r->t[r->n].shape[1] = 61;
    r->n++;
}

START_TEST(damaged_files_are_refused) {
    make_tmp();
    // the unedited file loads, so each refusal is its edit's doing
    write_edited(e_none);
    Gpt m;
    Error err;
    ck_assert_msg(gpt2_load(tmp, &m, &err) == 0, "%s", err.msg);
    gpt_free(&m);
    expect_file_refusal(e_shape, "tensor h.1.attn.c_attn.weight has shape "
                        "[48, 16], config.json needs [16, 48] (Conv1D");
    expect_file_refusal(e_f16, "tensor h.0.mlp.c_fc.bias is F16; only F32 "
                        "files load");
    expect_file_refusal(e_bf16, "tensor wte.weight is BF16");
    expect_file_refusal(e_missing, "tensor h.1.ln_2.bias is missing");
    expect_file_refusal(e_unknown, "tensor \"h.0.attn.rotary\" is not part "
                        "of a GPT-2");
    expect_file_refusal(e_beyond, "tensor \"h.2.attn.bias\" is beyond the 2 "
                        "layers");
    expect_file_refusal(e_mixed, "tensor \"transformer.ln_f.weight\" has the "
                        "\"transformer.\" prefix that the others lack");
    expect_file_refusal(e_nan, "tensor h.0.attn.c_proj.weight holds nan at "
                        "element 19");
    expect_file_refusal(e_head, "lm_head.weight differs from wte.weight");
    expect_file_refusal(e_head_shape, "tensor lm_head.weight has shape [16, "
                        "61], config.json needs [61, 16]");
    // cut short inside the data: the header's offsets go past its end
    write_edited(e_none);
    char path[128];
    snprintf(path, sizeof path, "%s/%s", tmp, GPT2_WEIGHTS_FILE);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(truncate(path, st.st_size - 100), 0);
    expect_refusal(GPT2_WEIGHTS_FILE);
    unlink(path);
    expect_refusal("cannot open");   // no weights at all
    remove_tree(tmp);
}
END_TEST

START_TEST(bad_configs_are_refused) {
    make_tmp();
    write_edited(e_none);   // the Hub's weights, each config below
    const struct { const char *key, *value, *want; } cases[] = {
        {"n_embd", NULL, "config.json: no \"n_embd\""},
        {"n_head", "5", "n_embd=16 does not split into n_head=5"},
        {"n_layer", "0", "\"n_layer\" must be a whole number >= 1"},
        {"n_layer", "1.5", "\"n_layer\" must be a whole number >= 1"},
        {"n_positions", "8", "wpe.weight has shape [16, 16], config.json "
         "needs [8, 16]"},
        {"n_inner", "32", "h.0.mlp.c_fc.bias has shape [64], config.json "
         "needs [32]"},
        {"activation_function", "\"relu\"", "\"activation_function\" is "
         "\"relu\""},
        {"activation_function", "7", "must be a string"},
        {"layer_norm_epsilon", "1e-6", "\"layer_norm_epsilon\" is 1e-06"},
        {"tie_word_embeddings", "false", "\"tie_word_embeddings\" is false"},
        {"scale_attn_weights", "false", "\"scale_attn_weights\" is false"},
        {"scale_attn_by_inverse_layer_idx", "true", "layer's number"},
        {"add_cross_attention", "true", "cross-attention"},
        {"model_type", "\"gpt_neo\"", "\"model_type\" is \"gpt_neo\""},
        {"resid_pdrop", "1", "dropout must be in [0, 1)"},
        {"vocab_size", "\"61\"", "\"vocab_size\" must be a whole number"},
        // far beyond the file: refused before a model of it is made
        {"n_layer", "4096", "the config describes a model of"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_config(tmp, cases[i].key, cases[i].value);
        expect_refusal(cases[i].want);
    }
    char path[128];
    snprintf(path, sizeof path, "%s/%s", tmp, GPT2_CONFIG_FILE);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"n_embd\": 16,", f);
    fclose(f);
    expect_refusal("config.json: JSON:");
    unlink(path);
    expect_refusal("config.json");   // missing
    remove_tree(tmp);
}
END_TEST

// A folder without model.safetensors says what it has instead.
START_TEST(other_files_are_named) {
    make_tmp();
    write_config(tmp, NULL, NULL);
    char path[128];
    snprintf(path, sizeof path, "%s/pytorch_model.bin", tmp);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    expect_refusal("holds pytorch_model.bin, not model.safetensors");
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", tmp);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    expect_refusal("sharded");
    remove_tree(tmp);
}
END_TEST

// ---- the memory of a load --------------------------------------------------

// A model large enough that its weights dwarf its header (1.9 MB of
// weights, a header of 3 KB), written in Hugging Face's format and
// loaded with our allocations counted: the peak beyond what was held
// before is within gpt2_load_floats, and that is the model and one
// tensor (3C x C) and the header: under 1.2 times the weights. Reading
// the whole file, as chapter 5's checkpoint loader does, would take 1.9
// MB more and fail. GPT-2 small's estimate is 1.02 times its weights.
START_TEST(load_peaks_at_the_model_and_one_tensor) {
    GptConfig c = {.vocab_size = 512, .block_size = 64, .n_layer = 2,
                   .n_head = 4, .n_embd = 128, .n_ffn = 512, .bias = true,
                   .positional = POS_LEARNED, .act = GELU_TANH};
    Gpt m, back;
    Error err;
    ck_assert_int_eq(gpt_create(&m, &c, &err), 0);
    Rng rng;
    rng_seed(&rng, 9);
    rng_normal_fill(&rng, m.params, m.num_params, 0, 0.1f);
    make_tmp();
    ck_assert_msg(gpt2_save(tmp, &m, &err) == 0, "%s", err.msg);
    size_t plan;
    GptConfig peeked;
    ck_assert_msg(gpt2_peek(tmp, &peeked, &plan, &err) == 0, "%s", err.msg);
    long before = alloc_live();
    alloc_peak_reset();
    int rc = gpt2_load(tmp, &back, &err);
    long took = alloc_peak() - before;
    ck_assert_msg(rc == 0, "%s", err.msg);
    double weights = (double)m.num_params * sizeof(float);
    ck_assert_msg(took <= (long)(plan * sizeof(float)), "the load took %ld "
                  "bytes, the plan says %zu", took, plan * sizeof(float));
    ck_assert_msg(plan * sizeof(float) <= 1.2 * weights, "plan %zu bytes "
                  "for %.0f of weights", plan * sizeof(float), weights);
    ck_assert_int_eq(memcmp(m.params, back.params, (size_t)weights), 0);
    ck_assert_int_eq(peeked.n_embd, 128);
    // GPT-2 small: 124,439,808 weights, a header of about 15 KB
    GptConfig small = {.vocab_size = 50257, .block_size = 1024,
                       .n_layer = 12, .n_head = 12, .n_embd = 768,
                       .n_ffn = 3072, .bias = true,
                       .positional = POS_LEARNED, .act = GELU_TANH};
    ck_assert_uint_eq(gpt_param_count(&small), 124439808);
    double est = (double)gpt2_load_floats(&small, 15000) * sizeof(float);
    ck_assert_msg(est <= 1.03 * 124439808.0 * sizeof(float), "GPT-2 small: "
                  "%.0f bytes", est);
    gpt_free(&m), gpt_free(&back);
    remove_tree(tmp);
}
END_TEST

// ---- the name map ----------------------------------------------------------

START_TEST(names_of_both_layouts) {
    const struct { const char *hf, *ours; int role; } cases[] = {
        {"h.0.attn.c_attn.weight", "transformer.h.0.attn.c_attn.weight",
         HF_TRANSPOSE},
        {"transformer.h.11.mlp.c_proj.weight",
         "transformer.h.11.mlp.c_proj.weight", HF_TRANSPOSE},
        {"h.3.mlp.c_fc.bias", "transformer.h.3.mlp.c_fc.bias", HF_COPY},
        {"wte.weight", "transformer.wte.weight", HF_COPY},
        {"transformer.wpe.weight", "transformer.wpe.weight", HF_COPY},
        {"h.2.attn.bias", "", HF_SKIP},
        {"transformer.h.2.attn.masked_bias", "", HF_SKIP},
        {"lm_head.weight", "transformer.wte.weight", HF_TIED},
        {"h.01.attn.bias", "transformer.h.01.attn.bias", HF_COPY},
        {"attn.c_attn.weight", "transformer.attn.c_attn.weight", HF_COPY},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char ours[64];
        ck_assert_int_eq(hf_name_map(ours, sizeof ours, cases[i].hf),
                         cases[i].role);
        ck_assert_str_eq(ours, cases[i].ours);
    }
    char tiny[20];
    ck_assert_int_eq(hf_name_map(tiny, sizeof tiny, "h.0.ln_1.weight"), -1);
    ck_assert_int_eq(hf_layer_of("transformer.h.12.ln_1.bias"), 12);
    ck_assert_int_eq(hf_layer_of("ln_f.weight"), -1);
    const float a[6] = {1, 2, 3, 4, 5, 6};   // (2, 3)
    float t[6];
    conv1d_transpose(t, a, 2, 3);
    const float want[6] = {1, 4, 2, 5, 3, 6};
    ck_assert_int_eq(memcmp(t, want, sizeof t), 0);
}
END_TEST

Suite *ch9_model_suite(void) {
    Suite *s = suite_create("ch9_model");
    TCase *tc = tcase_new("gpt2 model", "ch9");
    tcase_add_loop_test(tc, both_layouts_match_transformers, 0, 2);
    tcase_add_test(tc, layouts_hold_the_same_weights);
    tcase_add_test(tc, adamw_steps_match_transformers);
    tcase_add_test(tc, save_writes_what_save_pretrained_wrote);
    tcase_add_test(tc, config_keys_and_defaults);
    tcase_add_test(tc, damaged_files_are_refused);
    tcase_add_test(tc, bad_configs_are_refused);
    tcase_add_test(tc, other_files_are_named);
    tcase_add_test(tc, load_peaks_at_the_model_and_one_tensor);
    tcase_add_test(tc, names_of_both_layouts);
    suite_add_tcase(s, tc);
    return s;
}
