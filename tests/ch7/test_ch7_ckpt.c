// Tests of chapter 7's checkpoints (seq2seq_checkpoint.c). What each
// catches:
//
// ckpt_round_trip (tied and untied, with biases or not, each activation,
//   a pad other than 0, dropout 0.1): every parameter bit for bit, every
//   config field, the step and the vocab string come back; the file holds
//   PyTorch's names, the tied matrix three times. Without step and vocab
//   the load gives 0 and NULL. A config key written under another name,
//   an activation or flag dropped, a tied copy left out fail it.
// ckpt_train_model_saves: chapter 6's TrainModel.save of the trainer
//   writes the model and the step, which seq2seq_load reads back.
// ckpt_refusals: a file with one thing wrong (a tensor missing, one of
//   the tied copies missing or different, a transposed matrix, a NaN, an
//   unknown tensor, config JSON that does not parse, a key missing, an
//   unknown activation, a config the model refuses, a bad step) is
//   refused with a message naming what, and the caller's model, step and
//   vocab are untouched: a loader that fills *m as it goes fails it.
// ckpt_c_file_is_stable: the fixture's two models (ch7_model.txt) saved
//   now are byte for byte tests/reference/ch7_ckpt_c_*.safetensors, the
//   files tests/reference/check_ch7_checkpoint.py loads into PyTorch (so
//   that check stays true of today's writer). CH7_CKPT_WRITE=DIR writes
//   them to DIR instead, which is how they were made.
// ckpt_reads_pytorch_file: tests/reference/ch7_ckpt_torch_*.safetensors,
//   written by that script with safetensors' own layout after PyTorch
//   loaded the C files (load_state_dict, strict) and trained ten AdamW
//   steps, load here with the fixture's trained parameters, its config,
//   step 10 and the vocab string.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_util.h"
#include "fixture.h"
#include "mem.h"
#include "rng.h"
#include "safetensors.h"
#include "seq2seq.h"
#include "seq2seq_checkpoint.h"
#include "seq2seq_train.h"

static size_t numel(const GptTensor *t) {
    return (size_t)t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
}

static char tmpdir[64];

static void tmp_path(char *path, size_t size, const char *file) {
    if (!tmpdir[0]) {
        snprintf(tmpdir, sizeof tmpdir, "/tmp/ch7_ckpt_XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    }
    snprintf(path, size, "%s/%s", tmpdir, file);
}

static void tmp_remove(const char *file) {
    char p[128];
    tmp_path(p, sizeof p, file);
    unlink(p);
    rmdir(tmpdir);
    tmpdir[0] = 0;
}

static Seq2Seq make_model(const Seq2SeqConfig *cfg, uint64_t seed) {
    Seq2Seq m;
    Error err;
    ck_assert_msg(seq2seq_create(&m, cfg, &err) == 0, "%s", err.msg);
    Rng rng;
    rng_seed(&rng, seed);
    seq2seq_init(&m, &rng);
    // LayerNorm weights and biases away from 1 and 0, so that a swap shows
    for (size_t i = 0; i < m.num_params; i++)
        m.params[i] += 1e-3f * (float)(i % 7);
    return m;
}

static bool same_config(const Seq2SeqConfig *x, const Seq2SeqConfig *y) {
    return x->src_vocab == y->src_vocab && x->tgt_vocab == y->tgt_vocab
           && x->max_len == y->max_len && x->n_enc == y->n_enc
           && x->n_dec == y->n_dec && x->n_head == y->n_head
           && x->n_embd == y->n_embd && x->n_ffn == y->n_ffn
           && x->dropout == y->dropout && x->bias == y->bias
           && x->tie == y->tie && x->act == y->act && x->pad == y->pad;
}

// ---- round trip -----------------------------------------------------------

static Seq2SeqConfig round_trip_config(int i) {
    Seq2SeqConfig c = {.src_vocab = 9, .tgt_vocab = 9, .max_len = 7,
                       .n_enc = 2, .n_dec = 1, .n_head = 2, .n_embd = 8,
                       .n_ffn = 12, .dropout = 0.0f, .bias = true,
                       .tie = true, .act = RELU, .pad = 0};
    if (i == 1) {   // untied, no biases, exact GELU, pad 3, Vs != Vt
        c.tie = false, c.bias = false, c.act = GELU_EXACT, c.pad = 3;
        c.tgt_vocab = 6, c.n_dec = 2;
    } else if (i == 2) {   // tied, tanh GELU, dropout 0.1
        c.act = GELU_TANH, c.dropout = 0.1f, c.n_enc = 1;
    }
    return c;
}

START_TEST(ckpt_round_trip) {
    Seq2SeqConfig cfg = round_trip_config(_i);
    Seq2Seq m = make_model(&cfg, 100 + (uint64_t)_i), back;
    char path[128];
    tmp_path(path, sizeof path, "m.safetensors");
    Error err;
    ck_assert_msg(seq2seq_save(path, &m, 42, "reverse:10", &err) == 0, "%s",
                  err.msg);
    int step = -1;
    char *vocab = NULL;
    ck_assert_msg(seq2seq_load(path, &back, &step, &vocab, &err) == 0, "%s",
                  err.msg);
    ck_assert(same_config(&m.cfg, &back.cfg));
    ck_assert_uint_eq(back.num_params, m.num_params);
    ck_assert_int_eq(memcmp(m.params, back.params,
                            m.num_params * sizeof(float)), 0);
    ck_assert_int_eq(step, 42);
    ck_assert_str_eq(vocab, "reverse:10");
    free(vocab);
    seq2seq_free(&back);

    // PyTorch's state_dict names: the tied matrix three times
    StFile f;
    ck_assert_int_eq(st_load(&f, path, &err), 0);
    ck_assert_int_eq(f.n_tensors, m.n_tensors + (cfg.tie ? 2 : 0));
    const StTensor *src = st_find(&f, "src_embed.weight");
    const StTensor *tgt = st_find(&f, "tgt_embed.weight");
    const StTensor *gen = st_find(&f, "generator.weight");
    ck_assert(src && tgt && gen);
    ck_assert_int_eq((int)tgt->shape[0], cfg.tgt_vocab);
    if (cfg.tie)
        ck_assert(memcmp(st_bytes(&f, src), st_bytes(&f, gen),
                         src->end - src->begin) == 0
                  && memcmp(st_bytes(&f, src), st_bytes(&f, tgt),
                            src->end - src->begin) == 0);
    ck_assert_ptr_nonnull(st_find(&f, "encoder.layers.0.attn.c_attn.weight"));
    ck_assert_ptr_nonnull(
        st_find(&f, "decoder.layers.0.cross_attn.kv_proj.weight"));
    ck_assert_str_eq(st_meta(&f, "format"), "pt");
    st_free(&f);

    // no step, no vocab
    ck_assert_int_eq(seq2seq_save(path, &m, -1, NULL, &err), 0);
    vocab = (char *)"unchanged";
    ck_assert_msg(seq2seq_load(path, &back, &step, &vocab, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(step, 0);
    ck_assert_ptr_null(vocab);
    ck_assert(same_config(&m.cfg, &back.cfg));
    seq2seq_free(&back);
    // and the pointers may be NULL
    ck_assert_int_eq(seq2seq_load(path, &back, NULL, NULL, &err), 0);
    seq2seq_free(&back);
    seq2seq_free(&m);
    tmp_remove("m.safetensors");
}
END_TEST

// The trainer's save (chapter 6's TrainModel, which checkpoint_state.c
// calls for dir/model.safetensors) writes a file seq2seq_load reads.
START_TEST(ckpt_train_model_saves) {
    Seq2SeqConfig cfg = round_trip_config(1);
    Seq2Seq m = make_model(&cfg, 9), back;
    float *want = xmalloc(m.num_params * sizeof(float));
    memcpy(want, m.params, m.num_params * sizeof(float));
    Seq2SeqTrain g;
    Error err;
    ck_assert_msg(seq2seq_train_init(&g, &m, 2, 4, 5, 0.1f, &err) == 0,
                  "%s", err.msg);
    TrainModel tm = seq2seq_train_model(&g);
    char path[128];
    tmp_path(path, sizeof path, "model.safetensors");
    ck_assert_msg(tm.save(tm.self, path, 12, &err) == 0, "%s", err.msg);
    int step;
    char *vocab = NULL;
    ck_assert_msg(seq2seq_load(path, &back, &step, &vocab, &err) == 0, "%s",
                  err.msg);
    ck_assert_int_eq(step, 12);
    ck_assert_ptr_null(vocab);
    ck_assert(same_config(&back.cfg, &g.model.cfg));
    ck_assert_int_eq(memcmp(back.params, want,
                            back.num_params * sizeof(float)), 0);
    free(want);
    seq2seq_free(&back);
    seq2seq_train_free(&g);
    tmp_remove("model.safetensors");
}
END_TEST

// ---- refusals -------------------------------------------------------------

// A tied model's file, written tensor by tensor so that an edit can break
// it: the list, the two copies, and the metadata.
typedef struct {
    StWriteTensor t[64];
    int n;
    const char *keys[4], *values[4];
    int n_meta;
    float *scratch;     // room for one changed tensor
} File;

typedef void (*Edit)(File *f);

static int find(const File *f, const char *name) {
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->t[i].name, name) == 0) return i;
    ck_abort_msg("no tensor %s", name);
    return -1;
}

static const char *CONFIG =
    "{\"src_vocab\": 9, \"tgt_vocab\": 9, \"max_len\": 7, \"n_enc\": 2, "
    "\"n_dec\": 1, \"n_head\": 2, \"n_embd\": 8, \"n_ffn\": 12, "
    "\"dropout\": 0, \"bias\": true, \"tie\": true, \"act\": \"relu\", "
    "\"pad\": 0}";

// Field by field: the struct's padding bytes are never written, so a
// memcmp of the whole struct would read uninitialised memory.
static bool same_model(const Seq2Seq *a, const Seq2Seq *b) {
    const Seq2SeqConfig *x = &a->cfg, *y = &b->cfg;
    return x->src_vocab == y->src_vocab && x->tgt_vocab == y->tgt_vocab
        && x->max_len == y->max_len && x->n_enc == y->n_enc
        && x->n_dec == y->n_dec && x->n_head == y->n_head
        && x->n_embd == y->n_embd && x->n_ffn == y->n_ffn
        && x->dropout == y->dropout && x->bias == y->bias
        && x->tie == y->tie && x->act == y->act && x->pad == y->pad
        && a->num_params == b->num_params && a->params == b->params
        && a->grads == b->grads && a->tensors == b->tensors
        && a->n_tensors == b->n_tensors && a->pos_table == b->pos_table
        && memcmp(&a->w, &b->w, sizeof a->w) == 0   // pointers only
        && memcmp(&a->g, &b->g, sizeof a->g) == 0;
}

static void expect_refusal(Edit edit, const char *want) {
    Seq2SeqConfig cfg = round_trip_config(0);
    Seq2Seq m = make_model(&cfg, 7);
    File f = {.n = 0, .n_meta = 3,
              .keys = {"config", "vocab", "step"},
              .values = {CONFIG, "reverse:10", "5"}};
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *g = &m.tensors[i];
        f.t[f.n++] = (StWriteTensor){g->name, m.params + g->offset, g->ndim,
                                     {g->shape[0], g->shape[1]}};
    }
    f.t[f.n] = f.t[0], f.t[f.n++].name = "tgt_embed.weight";
    f.t[f.n] = f.t[0], f.t[f.n++].name = "generator.weight";
    f.scratch = alloc_floats(m.num_params);
    edit(&f);
    char path[128];
    tmp_path(path, sizeof path, "bad.safetensors");
    Error err;
    ck_assert_msg(st_save(path, f.t, f.n, f.keys, f.values, f.n_meta, &err)
                  == 0, "%s", err.msg);

    // the caller's model: another one, which must survive the refusal
    Seq2SeqConfig other = round_trip_config(1);
    Seq2Seq mine = make_model(&other, 8), before = mine;
    float *params = xmalloc(mine.num_params * sizeof(float));
    memcpy(params, mine.params, mine.num_params * sizeof(float));
    int step = 77;
    char *vocab = (char *)"mine";
    int rc = seq2seq_load(path, &mine, &step, &vocab, &err);
    if (!want) {   // the unedited file: loads
        ck_assert_msg(rc == 0, "%s", err.msg);
        ck_assert_int_eq(step, 5);
        ck_assert_str_eq(vocab, "reverse:10");
        ck_assert_int_eq(memcmp(mine.params, m.params,
                                m.num_params * sizeof(float)), 0);
        free(vocab);
        seq2seq_free(&mine);
        seq2seq_free(&before);
    } else {
        ck_assert_int_eq(rc, -1);
        ck_assert_msg(strstr(err.msg, want) != NULL,
                      "message '%s' lacks '%s'", err.msg, want);
        ck_assert_msg(strstr(err.msg, path) != NULL,
                      "message '%s' does not name the file", err.msg);
        ck_assert(same_model(&mine, &before));
        ck_assert_int_eq(memcmp(mine.params, params,
                                mine.num_params * sizeof(float)), 0);
        ck_assert_int_eq(step, 77);
        ck_assert_str_eq(vocab, "mine");
        seq2seq_free(&mine);
    }
    free(params);
    free(f.scratch);
    seq2seq_free(&m);
    tmp_remove("bad.safetensors");
}

static void e_none(File *f) { (void)f; }
static void drop(File *f, const char *name) {
    int i = find(f, name);
    f->t[i] = f->t[--f->n];
}
static void e_missing(File *f) { drop(f, "decoder.layers.0.ln_3.bias"); }
static void e_no_copy(File *f) { drop(f, "generator.weight"); }
static void e_shape(File *f) {   // (3C, C) saved as (C, 3C)
    StWriteTensor *t = &f->t[find(f, "encoder.layers.1.attn.c_attn.weight")];
    t->shape[0] = 8, t->shape[1] = 24;
}
static void e_nan(File *f) {
    StWriteTensor *t = &f->t[find(f, "encoder.norm.weight")];
    memcpy(f->scratch, t->data, 8 * sizeof(float));
    f->scratch[3] = NAN;
    t->data = f->scratch;
}
static void e_inf(File *f) {
    StWriteTensor *t = &f->t[find(f, "decoder.layers.0.mlp.c_fc.weight")];
    memcpy(f->scratch, t->data, 12 * 8 * sizeof(float));
    f->scratch[95] = -INFINITY;
    t->data = f->scratch;
}
static void e_unknown(File *f) {
    f->t[f->n++] = (StWriteTensor){"encoder.layers.0.attn.bias",
                                   f->scratch, 1, {4}};
}
static void e_differs(File *f) {
    StWriteTensor *t = &f->t[find(f, "tgt_embed.weight")];
    memcpy(f->scratch, t->data, 9 * 8 * sizeof(float));
    f->scratch[40] = nextafterf(f->scratch[40], 1e9f);   // one ulp
    t->data = f->scratch;
}
static void e_json(File *f) {
    f->values[0] = "{\"src_vocab\": 9, \"tgt_vocab\": 9,}";
}
static void e_not_object(File *f) { f->values[0] = "[9, 9]"; }
static void e_no_key(File *f) {   // CONFIG without "n_ffn"
    f->values[0] =
        "{\"src_vocab\": 9, \"tgt_vocab\": 9, \"max_len\": 7, \"n_enc\": 2, "
        "\"n_dec\": 1, \"n_head\": 2, \"n_embd\": 8, "
        "\"dropout\": 0, \"bias\": true, \"tie\": true, \"act\": \"relu\", "
        "\"pad\": 0}";
}
static void e_act(File *f) {
    f->values[0] =
        "{\"src_vocab\": 9, \"tgt_vocab\": 9, \"max_len\": 7, \"n_enc\": 2, "
        "\"n_dec\": 1, \"n_head\": 2, \"n_embd\": 8, \"n_ffn\": 12, "
        "\"dropout\": 0, \"bias\": true, \"tie\": true, \"act\": \"swish\", "
        "\"pad\": 0}";
}
static void e_heads(File *f) {   // 8 channels do not split into 3 heads
    f->values[0] =
        "{\"src_vocab\": 9, \"tgt_vocab\": 9, \"max_len\": 7, \"n_enc\": 2, "
        "\"n_dec\": 1, \"n_head\": 3, \"n_embd\": 8, \"n_ffn\": 12, "
        "\"dropout\": 0, \"bias\": true, \"tie\": true, \"act\": \"relu\", "
        "\"pad\": 0}";
}
static void e_huge(File *f) {   // 4096 + 4096 layers: 5.6 million floats
    f->values[0] =
        "{\"src_vocab\": 9, \"tgt_vocab\": 9, \"max_len\": 7, \"n_enc\": "
        "4096, \"n_dec\": 4096, \"n_head\": 2, \"n_embd\": 8, \"n_ffn\": "
        "12, \"dropout\": 0, \"bias\": true, \"tie\": true, \"act\": "
        "\"relu\", \"pad\": 0}";
}
static void e_long_table(File *f) {   // sinusoids of 33554431 x 8 floats
    f->values[0] =
        "{\"src_vocab\": 9, \"tgt_vocab\": 9, \"max_len\": 33554431, "
        "\"n_enc\": 2, \"n_dec\": 1, \"n_head\": 2, \"n_embd\": 8, "
        "\"n_ffn\": 12, \"dropout\": 0, \"bias\": true, \"tie\": true, "
        "\"act\": \"relu\", \"pad\": 0}";
    drop(f, "decoder.layers.0.ln_3.bias");
}
static void e_no_config(File *f) { f->keys[0] = "settings"; }
static void e_step(File *f) { f->values[2] = "-3"; }

START_TEST(ckpt_refusals) {
    expect_refusal(e_none, NULL);   // so each refusal is its edit's doing
    expect_refusal(e_missing, "tensor decoder.layers.0.ln_3.bias is "
                   "missing");
    expect_refusal(e_no_copy, "tensor generator.weight is missing");
    expect_refusal(e_shape, "encoder.layers.1.attn.c_attn.weight has shape "
                   "[8, 24], the config needs [24, 8]");
    expect_refusal(e_nan, "encoder.norm.weight holds nan at element 3");
    expect_refusal(e_inf, "holds -inf at element 95");
    expect_refusal(e_unknown, "tensor \"encoder.layers.0.attn.bias\" is "
                   "not part of this model (bias true, tie true)");
    expect_refusal(e_differs, "tgt_embed.weight differs from "
                   "src_embed.weight");
    expect_refusal(e_json, "config metadata: JSON");
    expect_refusal(e_not_object, "config metadata is an array");
    expect_refusal(e_no_key, "the config metadata has no \"n_ffn\"");
    expect_refusal(e_act, "config \"act\" must be \"relu\"");
    expect_refusal(e_heads, "n_embd=8 does not split into n_head=3");
    // refused for its size, before a model of that size is allocated
    expect_refusal(e_huge, "the config describes a model of 5603432 "
                   "parameters, the file's F32 tensors hold 2148 values");
    expect_refusal(e_no_config, "no \"config\" in the metadata");
    expect_refusal(e_step, "metadata \"step\" is '-3'");
    Seq2Seq m = {0};
    Error err;
    ck_assert_int_eq(seq2seq_load("no/such/file.safetensors", &m, NULL,
                                  NULL, &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "no/such/file.safetensors"));
    ck_assert_ptr_null(m.params);
}
END_TEST

// The sinusoids are in no tensor, so their size is not bounded by the
// file's: a config whose table would take 1 GiB must be refused before
// the table is made (by the cap on max_len; and the loader checks a
// file's tensors before it builds the table of any max_len). With 512 MiB of data allowed, making the
// 1 GiB table would end the test ("out of memory"); not under ASan.
START_TEST(ckpt_refused_before_the_table) {
    if (!limit_data_memory((size_t)512 << 20)) return;
    expect_refusal(e_long_table, "too large: max_len 33554431 > 65536");
}
END_TEST

// ---- against PyTorch ------------------------------------------------------

static const char *CASES[] = {"tied", "untied"};

// The fixture's model of case c, with the parameters "<c>.<prefix><name>".
static Seq2Seq fixture_model(const Fixture *fx, const char *c,
                             const char *prefix) {
    char key[128];
    snprintf(key, sizeof key, "%s.config", c);
    const int s12[1] = {12};
    const float *v = fixture_get(fx, key, s12, 1);
    Seq2SeqConfig cfg = {.src_vocab = (int)v[0], .tgt_vocab = (int)v[1],
                         .max_len = (int)v[2], .n_enc = (int)v[3],
                         .n_dec = (int)v[4], .n_head = (int)v[5],
                         .n_embd = (int)v[6], .n_ffn = (int)v[7],
                         .dropout = 0.0f, .bias = v[8] != 0,
                         .tie = v[9] != 0,
                         .act = v[10] == 0 ? RELU : GELU_EXACT,
                         .pad = (int)v[11]};
    Seq2Seq m;
    Error err;
    ck_assert_msg(seq2seq_create(&m, &cfg, &err) == 0, "%s", err.msg);
    for (int i = 0; i < m.n_tensors; i++) {
        const GptTensor *t = &m.tensors[i];
        snprintf(key, sizeof key, "%s.%s%s", c, prefix, t->name);
        memcpy(m.params + t->offset, fixture_get(fx, key, t->shape, t->ndim),
               numel(t) * sizeof(float));
    }
    return m;
}

static unsigned char *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = xmalloc(*n + 1);
    ck_assert_uint_eq(fread(buf, 1, *n, f), *n);
    fclose(f);
    return buf;
}

START_TEST(ckpt_c_file_is_stable) {
    const char *c = CASES[_i];
    Fixture *fx = fixture_open("ch7_model.txt");
    Seq2Seq m = fixture_model(fx, c, "param.");
    char vocab[32], ref[128], path[128];
    snprintf(vocab, sizeof vocab, "fixture:%s", c);
    snprintf(ref, sizeof ref, "tests/reference/ch7_ckpt_c_%s.safetensors",
             c);
    const char *dir = getenv("CH7_CKPT_WRITE");
    if (dir)
        snprintf(path, sizeof path, "%s/ch7_ckpt_c_%s.safetensors", dir, c);
    else
        tmp_path(path, sizeof path, "c.safetensors");
    Error err;
    ck_assert_msg(seq2seq_save(path, &m, 0, vocab, &err) == 0, "%s",
                  err.msg);
    if (!dir) {
        size_t n_got, n_want;
        unsigned char *got = read_all(path, &n_got);
        unsigned char *want = read_all(ref, &n_want);
        ck_assert_msg(n_got == n_want && memcmp(got, want, n_got) == 0,
                      "the saved file differs from %s (a change of format? "
                      "then rewrite it with CH7_CKPT_WRITE=tests/reference "
                      "and run tests/reference/check_ch7_checkpoint.py)",
                      ref);
        free(got), free(want);
        tmp_remove("c.safetensors");
    }
    seq2seq_free(&m);
    fixture_free(fx);
}
END_TEST

START_TEST(ckpt_reads_pytorch_file) {
    const char *c = CASES[_i];
    Fixture *fx = fixture_open("ch7_model.txt");
    Seq2Seq want = fixture_model(fx, c, "train.param."), got;
    char path[128], vocab_want[32];
    snprintf(path, sizeof path,
             "tests/reference/ch7_ckpt_torch_%s.safetensors", c);
    snprintf(vocab_want, sizeof vocab_want, "fixture:%s", c);
    int step;
    char *vocab;
    Error err;
    ck_assert_msg(seq2seq_load(path, &got, &step, &vocab, &err) == 0, "%s",
                  err.msg);
    ck_assert(same_config(&got.cfg, &want.cfg));
    ck_assert_int_eq(step, 10);
    ck_assert_str_eq(vocab, vocab_want);
    // PyTorch trained in float64 and saved float32: the fixture's values
    // rounded the same way, up to a last bit
    for (int i = 0; i < want.n_tensors; i++) {
        const GptTensor *t = &want.tensors[i];
        double *w = xmalloc(numel(t) * sizeof *w);
        for (size_t j = 0; j < numel(t); j++)
            w[j] = want.params[t->offset + j];
        ck_assert_close(t->name, got.params + t->offset, w, numel(t), 1e-7,
                        1e-6);
        free(w);
    }
    free(vocab);
    seq2seq_free(&got);
    seq2seq_free(&want);
    fixture_free(fx);
}
END_TEST

Suite *ch7_ckpt_suite(void) {
    Suite *s = suite_create("ch7_ckpt");
    TCase *tc = tcase_new("checkpoint", "ch7");
    tcase_add_loop_test(tc, ckpt_round_trip, 0, 3);
    tcase_add_test(tc, ckpt_train_model_saves);
    tcase_add_test(tc, ckpt_refusals);
    tcase_add_test(tc, ckpt_refused_before_the_table);
    tcase_add_loop_test(tc, ckpt_c_file_is_stable, 0, 2);
    tcase_add_loop_test(tc, ckpt_reads_pytorch_file, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}
