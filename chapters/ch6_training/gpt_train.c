#include "gpt_train.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "checkpoint_state.h"
#include "mem.h"
#include "profile.h"

int gpt_train_init(GptTrain *g, Gpt *m, Vocab *vocab, int B, int T,
                   Error *err) {
    memset(g, 0, sizeof *g);
    if (T < 1 || T > m->cfg.block_size)
        return error_set(err, "a window of %d tokens: the model takes 1 to "
                         "%d", T, m->cfg.block_size);
    if (gpt_acts_alloc(&g->acts, &m->cfg, B, T, err) != 0) return -1;
    if (gpt_alloc_grads(m, err) != 0) {
        gpt_acts_free(&g->acts, &m->cfg);
        return -1;
    }
    g->model = *m;
    memset(m, 0, sizeof *m);   // g owns them now
    g->vocab = *vocab;
    memset(vocab, 0, sizeof *vocab);
    g->B = B;
    g->T = T;
    g->x = xmalloc((size_t)B * g->T * sizeof *g->x);
    g->y = xmalloc((size_t)B * g->T * sizeof *g->y);
    g->tensors = train_tensors(g->model.tensors, g->model.n_tensors);
    g->parts = 1;
    return 0;
}

int gpt_train_split(GptTrain *g, int part, int parts, Error *err) {
    if (parts < 1 || part < 0 || part >= parts
        || (size_t)g->B * (size_t)parts > INT_MAX)
        return error_set(err, "part %d of %d of a batch of %d: not a part",
                         part, parts, g->B);
    free(g->all_x);
    free(g->all_y);
    g->all_x = g->all_y = NULL;
    g->part = part;
    g->parts = parts;
    if (parts > 1) {
        size_t n = (size_t)g->B * parts * g->T;
        g->all_x = xmalloc(n * sizeof *g->all_x);
        g->all_y = xmalloc(n * sizeof *g->all_y);
    }
    return 0;
}

void gpt_train_free(GptTrain *g) {
    gpt_acts_free(&g->acts, &g->model.cfg);
    gpt_free(&g->model);
    vocab_free(&g->vocab);
    free(g->x);
    free(g->y);
    free(g->tensors);
    free(g->all_x);
    free(g->all_y);
    memset(g, 0, sizeof *g);
}

void gpt_train_set_batch(GptTrain *g, const int *x, const int *y) {
    size_t n = (size_t)g->B * g->T;
    memcpy(g->x, x, n * sizeof *x);
    memcpy(g->y, y, n * sizeof *y);
}

TrainTensor *train_tensors(const GptTensor *t, int n) {
    TrainTensor *r = xmalloc((size_t)n * sizeof *r);
    for (int i = 0; i < n; i++) {
        size_t len = (size_t)t[i].shape[0]
                     * (t[i].ndim == 2 ? t[i].shape[1] : 1);
        r[i] = (TrainTensor){t[i].offset, len, t[i].decay};
    }
    return r;
}

// ---- the TrainModel functions ----------------------------------------------

//> gpt-train-batch
static int batch(void *self, const void *data, Rng *rng, Error *err) {
    GptTrain *g = self;
    if (g->parts == 1)
        return get_batch(g->x, g->y, data, g->B, g->T, rng, err);
    // the whole batch, as one process would draw it; then our rows
    if (get_batch(g->all_x, g->all_y, data, g->B * g->parts, g->T, rng,
                  err) != 0)
        return -1;
    size_t n = (size_t)g->B * g->T, first = (size_t)g->part * n;
    memcpy(g->x, g->all_x + first, n * sizeof *g->x);
    memcpy(g->y, g->all_y + first, n * sizeof *g->y);
    return 0;
}
//< gpt-train-batch

static int forward(void *self, bool train, Rng *rng, float *loss,
                   Error *err) {
    GptTrain *g = self;
    return gpt_forward(&g->model, &g->acts, g->x, g->y, g->B, g->T, train,
                       rng, loss, err);
}

static void backward(void *self) {
    GptTrain *g = self;
    PROFILE_BW(PROF_OPTIM, gpt_zero_grads(&g->model));
    gpt_backward(&g->model, &g->acts, g->x, g->y);
}

static int save(const void *self, const char *path, int step, Error *err) {
    const GptTrain *g = self;
    if (g->tokenizer[0])
        return checkpoint_save_tokenizer(path, &g->model, g->tokenizer,
                                         step, err);
    return checkpoint_save_step(path, &g->model, &g->vocab, step, err);
}

TrainModel gpt_train_model(GptTrain *g) {
    return (TrainModel){.self = g, .params = g->model.params,
                        .grads = g->model.grads,
                        .num_params = g->model.num_params,
                        .tensors = g->tensors,
                        .n_tensors = g->model.n_tensors, .batch = batch,
                        .forward = forward, .backward = backward,
                        .save = save};
}

size_t gpt_train_floats(const GptConfig *cfg, int B, int T, int parts) {
    GptTrain g;
    size_t bt = (size_t)B * T;
    size_t batch = 2 * bt * (parts > 1 ? 1 + (size_t)parts : 1);
    size_t tensors = gpt_max_tensors(cfg->n_layer);
    return gpt_model_floats(cfg) + 3 * gpt_param_count(cfg)
           + gpt_acts_floats(cfg, B, T)
           + mem_floats(batch * sizeof *g.x + tensors * sizeof *g.tensors);
}

int gpt_train_window(const GptConfig *cfg, const TrainConfig *tc, int *T,
                     Error *err) {
    *T = tc->window > 0 ? tc->window : cfg->block_size;
    if (*T > cfg->block_size)
        return error_set(err, "the run's window of %d tokens is longer than "
                         "its model's block of %d", *T, cfg->block_size);
    return 0;
}

// ---- resuming --------------------------------------------------------------

// 0 when the saved run's batch splits into parts equal parts.
static int batch_splits(const char *dir, int batch, int parts, Error *err) {
    if (parts >= 1 && batch % parts == 0) return 0;
    return error_set(err, "%s: its batch of %d does not split into %d: "
                     "resume on processes that divide it", dir, batch,
                     parts);
}

int gpt_resume_peek(const char *dir, int parts, GptConfig *cfg,
                    TrainConfig *tc, size_t *held, Error *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    int step;
    if (checkpoint_peek(path, cfg, &step, err) != 0) return -1;
    TrainState s;
    if (train_state_peek(&s, dir, step, err) != 0) return -1;
    int T;
    int rc = train_config_check(&s.cfg, err) == 0
             && batch_splits(dir, s.cfg.batch, parts, err) == 0
             && gpt_train_window(cfg, &s.cfg, &T, err) == 0 ? 0 : -1;
    *tc = s.cfg;
    // the resume reads the moments from the file one tensor at a time
    // (st_copy_f32 on its header), straight into AdamW's: it holds only
    // the header
    *held = mem_floats(s.file.size - s.file.data_size);
    train_state_free(&s);
    return rc;
}

//> gpt-resume
int gpt_trainer_resume(Trainer *t, GptTrain *g, const char *dir, int part,
                       int parts, Error *err) {
    memset(t, 0, sizeof *t);
    memset(g, 0, sizeof *g);
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    Gpt m;
    Vocab vocab;
    char tokenizer[CHECKPOINT_TOKENIZER_MAX];
    int step, T;
    if (checkpoint_load_any(path, &m, &vocab, tokenizer, &step, err) != 0)
        return -1;
    TrainState s;
    int rc = -1;
    // the state file's header: trainer_restore then reads each moment
    // from the file into AdamW's own, so the file is never held whole
    // beside the run (for GPT-2 small, 1 GB less at the peak)
    if (train_state_peek(&s, dir, step, err) == 0) {
        if (train_config_check(&s.cfg, err) == 0
            && batch_splits(dir, s.cfg.batch, parts, err) == 0
            && gpt_train_window(&m.cfg, &s.cfg, &T, err) == 0
            && gpt_train_init(g, &m, &vocab, s.cfg.batch / parts, T,
                              err) == 0) {
            memcpy(g->tokenizer, tokenizer, sizeof tokenizer);
            TrainModel tm = gpt_train_model(g);
            if (gpt_train_split(g, part, parts, err) == 0
                && trainer_init(t, &tm, &s.cfg, err) == 0
                && trainer_restore(t, &s, err) == 0)
                rc = 0;
            else
                trainer_free(t), gpt_train_free(g);
        }
        train_state_free(&s);
    }
    if (rc != 0) {
        gpt_free(&m);   // no-ops when g took them
        vocab_free(&vocab);
    }
    return rc;
}
//< gpt-resume
