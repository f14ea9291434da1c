#include "seq2seq_train.h"

#include <stdlib.h>
#include <string.h>

#include "gpt_train.h"
#include "mem.h"
#include "profile.h"
#include "seq2seq_checkpoint.h"

int seq2seq_train_init(Seq2SeqTrain *g, Seq2Seq *m, int B, int S, int T,
                       float eps, Error *err) {
    memset(g, 0, sizeof *g);
    if (!(eps >= 0 && eps < 1))
        return error_set(err, "label smoothing must be in [0, 1), got %g",
                         eps);
    if (seq2seq_acts_alloc(&g->acts, &m->cfg, B, S, T, err) != 0
        || seq2seq_alloc_grads(m, err) != 0) {
        seq2seq_acts_free(&g->acts, &m->cfg);
        return -1;
    }
    g->model = *m;
    memset(m, 0, sizeof *m);   // g owns it now
    g->B = B, g->S = S, g->T = T, g->eps = eps;
    g->cur_B = B, g->cur_S = S, g->cur_T = T;
    g->src = xmalloc((size_t)B * S * sizeof *g->src);
    g->tgt_in = xmalloc((size_t)B * T * sizeof *g->tgt_in);
    g->tgt_out = xmalloc((size_t)B * T * sizeof *g->tgt_out);
    g->tensors = train_tensors(g->model.tensors, g->model.n_tensors);
    return 0;
}

void seq2seq_train_free(Seq2SeqTrain *g) {
    seq2seq_acts_free(&g->acts, &g->model.cfg);
    seq2seq_free(&g->model);
    free(g->src);
    free(g->tgt_in);
    free(g->tgt_out);
    free(g->tensors);
    memset(g, 0, sizeof *g);
}

// ---- the TrainModel functions ----------------------------------------------

static int batch(void *self, const void *data, Rng *rng, Error *err) {
    Seq2SeqTrain *g = self;
    const PairSource *p = data;
    int B = g->B, S = g->S, T = g->T, rc;
    PROFILE(PROF_DATA, rc = p->fill(p->self, rng, g->src, g->tgt_in,
                                    g->tgt_out, &B, &S, &T, err));
    if (rc != 0) return -1;
    // the contract of pair-source (seq2seq_train.h)
    if (B < 1 || S < 1 || T < 1 || S > g->S || T > g->T
        || (long long)B * S > (long long)g->B * g->S
        || (long long)B * T > (long long)g->B * g->T)
        return error_set(err, "pair source: a batch of B=%d S=%d T=%d does "
                         "not fit the capacity B=%d S=%d T=%d (at most "
                         "B*S=%lld and B*T=%lld tokens)", B, S, T, g->B,
                         g->S, g->T, (long long)g->B * g->S,
                         (long long)g->B * g->T);
    g->cur_B = B, g->cur_S = S, g->cur_T = T;
    return 0;
}

static int forward(void *self, bool train, Rng *rng, float *loss,
                   Error *err) {
    Seq2SeqTrain *g = self;
    if (seq2seq_forward(&g->model, &g->acts, g->src, g->tgt_in, g->tgt_out,
                        g->cur_B, g->cur_S, g->cur_T, g->eps, train, rng,
                        &g->last,
                        err) != 0)
        return -1;
    *loss = g->last.loss;
    return 0;
}

static void backward(void *self) {
    Seq2SeqTrain *g = self;
    PROFILE_BW(PROF_OPTIM, seq2seq_zero_grads(&g->model));
    seq2seq_backward(&g->model, &g->acts);
}

// The checkpoint holds the model, the step and what the ids mean.
static int save(const void *self, const char *path, int step, Error *err) {
    const Seq2SeqTrain *g = self;
    return seq2seq_save(path, &g->model, step, g->vocab, err);
}

TrainModel seq2seq_train_model(Seq2SeqTrain *g) {
    return (TrainModel){.self = g, .params = g->model.params,
                        .grads = g->model.grads,
                        .num_params = g->model.num_params,
                        .tensors = g->tensors,
                        .n_tensors = g->model.n_tensors, .batch = batch,
                        .forward = forward, .backward = backward,
                        .save = save};
}

size_t seq2seq_train_floats(const Seq2SeqConfig *cfg, int B, int S, int T) {
    Seq2SeqTrain g;
    size_t batch = (size_t)B * (S + 2 * (size_t)T) * sizeof *g.src;
    return seq2seq_model_floats(cfg) + 3 * seq2seq_param_count(cfg)
           + seq2seq_acts_floats(cfg, B, S, T)
           + mem_floats(batch + seq2seq_max_tensors(cfg) * sizeof *g.tensors);
}
