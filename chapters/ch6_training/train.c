#include "train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "mem.h"
#include "profile.h"

int train_config_check(const TrainConfig *cfg, Error *err) {
    if (cfg->batch < 1 || cfg->steps < 0 || cfg->eval_iters < 1
        || cfg->window < 0)
        return error_set(err, "training: batch and eval_iters must be >= 1 "
                         "and steps and window >= 0 (got %d, %d, %d, %d)",
                         cfg->batch, cfg->eval_iters, cfg->steps,
                         cfg->window);
    return 0;
}

int trainer_init(Trainer *t, const TrainModel *model, const TrainConfig *cfg,
                 Error *err) {
    memset(t, 0, sizeof *t);
    if (train_config_check(cfg, err) != 0) return -1;
    t->model = *model;
    t->cfg = *cfg;
    t->m = alloc_floats(model->num_params);
    t->v = alloc_floats(model->num_params);
    rng_seed(&t->data_rng, cfg->seed);
    rng_seed(&t->drop_rng, cfg->seed + 1);
    return 0;
}

void trainer_free(Trainer *t) {
    free(t->m);
    free(t->v);
    memset(t, 0, sizeof *t);
}

int train_step(Trainer *t, const void *data, StepResult *r, Error *err) {
    int rc;
    PROFILE(PROF_DATA, rc = t->model.batch(t->model.self, data,
                                           &t->data_rng, err));
    if (rc != 0) return -1;
    return train_step_batch(t, r, err);
}

//> train-step
// The loss of the current batch, and its gradient in grads. With several
// ranks (dist.h) each has its part of the batch, and the mean of their
// gradients is the gradient of the whole batch's mean loss: one
// all-reduce of the whole gradient buffer.
static int forward_backward(Trainer *t, float *loss, Error *err) {
    TrainModel *m = &t->model;
    if (m->forward(m->self, true, &t->drop_rng, loss, err) != 0) return -1;
    m->backward(m->self);
    dist_average(m->grads, m->num_params);
    double mean = *loss;   // and the whole batch's loss
    dist_average_doubles(&mean, 1);
    *loss = (float)mean;
    return 0;
}

// Clipping, a last look for NaN, this step's learning rate, AdamW. A
// model with its own clip and update hooks (weights elsewhere) does those
// two itself; the rule is the same.
static int update(Trainer *t, float loss, StepResult *r, Error *err) {
    TrainModel *m = &t->model;
    const TrainConfig *c = &t->cfg;
    double norm = m->clip ? m->clip(m->self, c->grad_clip)
                          : clip_grad_norm(m->grads, m->num_params,
                                           c->grad_clip);
    r->loss = loss;
    r->grad_norm = norm;
    // The weights are untouched; one line that says which step and what,
    // and the way out (clipping, where it was off)
    if (!isfinite(loss) || !isfinite(norm))
        return error_set(err, "step %d: %s %s; try a lower --lr%s",
                         t->step + 1, isfinite(loss) ? "gradient norm"
                                                     : "loss",
                         isnan(isfinite(loss) ? norm : loss) ? "NaN"
                                                             : "infinite",
                         c->grad_clip > 0 ? "" : ", or --grad-clip 1");
    r->lr = lr_schedule(t->step, c->warmup, c->decay_steps, c->lr,
                        c->min_lr);
    if (m->update)   // the same AdamW, where the weights are
        m->update(m->self, t->step + 1, r->lr, &c->adamw);
    else   // AdamW range by range: weight decay where the model asks for it
        for (int i = 0; i < m->n_tensors; i++) {
            const TrainTensor *g = &m->tensors[i];
            size_t o = g->offset;
            adamw_update(m->params + o, m->grads + o, t->m + o, t->v + o,
                         g->n, t->step + 1, r->lr,
                         g->decay ? c->adamw.weight_decay : 0.0f, &c->adamw);
        }
    t->step++;
    return 0;
}
//< train-step

int train_step_batch(Trainer *t, StepResult *r, Error *err) {
    float loss;
    if (forward_backward(t, &loss, err) != 0) return -1;
    int rc;   // the profile counts the update as backward work
    PROFILE_BW(PROF_OPTIM, rc = update(t, loss, r, err));
    return rc;
}

int evaluate(Trainer *t, const void *data, int which, double *loss,
             Error *err) {
    const TrainConfig *c = &t->cfg;
    TrainModel *m = &t->model;
    Rng r;
    rng_seed(&r, c->seed * 1000003u + (uint64_t)t->step * 2 + (unsigned)which);
    double sum = 0;
    for (int i = 0; i < c->eval_iters; i++) {
        float l;
        if (m->batch(m->self, data, &r, err) != 0
            || m->forward(m->self, false, NULL, &l, err) != 0)
            return -1;
        sum += l;
    }
    dist_average_doubles(&sum, 1);   // each rank had its part of a batch
    *loss = sum / c->eval_iters;
    return 0;
}

int budget_steps(int done, int steps, double per_step, double left) {
    double more = left > 0 && per_step > 0 ? left / per_step : 0;
    if (done + more >= steps) return steps;
    int fit = done + (int)more;
    return fit >= 100 ? fit - fit % 10 : fit;
}

int budget_again(int done, int steps, double per_step, double left) {
    if ((steps - done) * per_step <= 1.1 * left) return steps;
    int fit = budget_steps(done, steps, per_step, left > 0 ? left : 0);
    return fit > done ? fit : done + 1;
}
