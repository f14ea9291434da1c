#include "checkpoint_state.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist.h"
#include "json.h"

static void rng_json(StrBuf *b, const char *name, const Rng *r) {
    sb_printf(b, "\"%s_next\": %d, \"%s_state\": \"", name, r->next, name);
    for (int i = 0; i < RNG_N; i++) sb_printf(b, "%08" PRIx32, r->state[i]);
    sb_append(b, "\"", 1);
}

static void config_json(StrBuf *b, const TrainConfig *c) {
    sb_printf(b, "\"batch\": %d, \"steps\": %d, \"lr\": %.9g, "
              "\"min_lr\": %.9g, \"warmup\": %d, \"decay_steps\": %d, "
              "\"beta1\": %.9g, \"beta2\": %.9g, \"eps\": %.9g, "
              "\"weight_decay\": %.9g, \"grad_clip\": %.9g, "
              "\"eval_every\": %d, \"eval_iters\": %d, \"seed\": \"%" PRIu64
              "\"", c->batch, c->steps, c->lr, c->min_lr, c->warmup,
              c->decay_steps, c->adamw.beta1, c->adamw.beta2, c->adamw.eps,
              c->adamw.weight_decay, c->grad_clip, c->eval_every,
              c->eval_iters, c->seed);
    // (0, a whole block, is left out: chapter 6's files stay as they were)
    if (c->window > 0) sb_printf(b, ", \"window\": %d", c->window);
}

static void state_path(char *buf, size_t size, const char *dir, int step) {
    snprintf(buf, size, "%s/state-%d.safetensors", dir, step);
}

// Counts dir/state-*.safetensors except the one for step keep (-1: no
// step is kept), and removes them when remove is true.
static int other_states(const char *dir, int keep, bool remove) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL) {
        int s;
        char tail[32];
        if (sscanf(e->d_name, "state-%d.safetensor%31s", &s, tail) == 2
            && strcmp(tail, "s") == 0 && s != keep) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (remove) unlink(p);
            n++;
        }
    }
    closedir(d);
    return n;
}

// Removes dir/state-*.safetensors except the one for step keep.
static void remove_old_states(const char *dir, int keep) {
    other_states(dir, keep, true);
}

//> trainer-save
int trainer_save(const Trainer *t, const char *dir, Error *err) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return error_set(err, "cannot create %s: %s", dir, strerror(errno));
    // 0. weights elsewhere (a GPU) come home first: params, m and v
    if (t->model.sync) t->model.sync(t->model.self, t->m, t->v);
    // 1. the optimiser state of this step, under its own name
    StrBuf state = {0};
    sb_printf(&state, "{\"step\": %d, ", t->step);
    rng_json(&state, "data_rng", &t->data_rng);
    sb_append(&state, ", ", 2);
    rng_json(&state, "drop_rng", &t->drop_rng);
    sb_append(&state, ", ", 2);
    config_json(&state, &t->cfg);
    sb_append(&state, "}", 1);
    int64_t n = (int64_t)t->model.num_params;
    StWriteTensor ts[2] = {{"adamw.m", t->m, 1, {n}},
                           {"adamw.v", t->v, 1, {n}}};
    const char *keys[1] = {"train_state"}, *values[1] = {state.s};
    char path[4096];
    state_path(path, sizeof path, dir, t->step);
    int rc = st_save(path, ts, 2, keys, values, 1, err);
    sb_free(&state);
    if (rc != 0) return -1;
    // 2. the model, naming that step; only then 3. the old states go
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (t->model.save(t->model.self, path, t->step, err) != 0) return -1;
    remove_old_states(dir, t->step);
    return 0;
}
//< trainer-save

static int rng_parse(const Json *j, const char *name, Rng *r,
                     const char *path, Error *err) {
    char key[32];
    snprintf(key, sizeof key, "%s_next", name);
    const Json *next = json_get(j, key);
    snprintf(key, sizeof key, "%s_state", name);
    const Json *st = json_get(j, key);
    int64_t k;
    if (!next || json_int64(next, &k) != 0 || k < 0 || k > RNG_N || !st
        || st->type != JSON_STRING || st->str_len != 8 * RNG_N)
        return error_set(err, "%s: train_state has no valid %s", path, name);
    for (int i = 0; i < RNG_N; i++) {
        char hex[9];
        memcpy(hex, st->str + 8 * i, 8);
        hex[8] = 0;
        char *end;
        unsigned long w = strtoul(hex, &end, 16);
        if (*end != 0)
            return error_set(err, "%s: %s state is not hexadecimal", path,
                             name);
        r->state[i] = (uint32_t)w;
    }
    r->next = (int)k;
    return 0;
}

static int get_num(const Json *j, const char *key, double *out,
                   const char *path, Error *err) {
    const Json *v = json_get(j, key);
    if (!v || v->type != JSON_NUMBER)
        return error_set(err, "%s: train_state has no number \"%s\"", path,
                         key);
    *out = v->num;
    return 0;
}

// A whole number that fits an int, as trainer_save writes them: a value
// such as 7.5 or 1e300 is refused, not rounded or converted out of range.
static int get_int(const Json *j, const char *key, int *out,
                   const char *path, Error *err) {
    const Json *v = json_get(j, key);
    int64_t x;
    if (!v || json_int64(v, &x) != 0 || x < INT_MIN || x > INT_MAX)
        return error_set(err, "%s: train_state has no whole number \"%s\"",
                         path, key);
    *out = (int)x;
    return 0;
}

static int parse_state(TrainState *t, const Json *j, const char *path,
                       Error *err) {
    TrainConfig *c = &t->cfg;
    // Each within the range its flag allows: a damaged or edited file
    // must not train with beta2 1.5 or a negative warmup.
    int *ints[7] = {&t->step, &c->batch, &c->steps, &c->warmup,
                    &c->decay_steps, &c->eval_every, &c->eval_iters};
    const char *int_keys[7] = {"step", "batch", "steps", "warmup",
                               "decay_steps", "eval_every", "eval_iters"};
    const int int_lo[7] = {0, 1, 0, 0, 0, 0, 1};
    for (int i = 0; i < 7; i++) {
        if (get_int(j, int_keys[i], ints[i], path, err) != 0) return -1;
        if (*ints[i] < int_lo[i] || *ints[i] > 1000000000)
            return error_set(err, "%s: train_state \"%s\" must be in [%d, "
                             "1000000000], got %d", path, int_keys[i],
                             int_lo[i], *ints[i]);
    }
    double v[7] = {0};
    const char *keys[7] = {"lr", "min_lr", "beta1", "beta2", "eps",
                           "weight_decay", "grad_clip"};
    const double lo[7] = {1e-30, 0, 0, 0, 1e-30, 0, 0};
    const double hi[7] = {1e30, 1e30, 0.999999, 0.999999, 1, 1e30, 1e30};
    for (int i = 0; i < 7; i++) {
        if (get_num(j, keys[i], &v[i], path, err) != 0) return -1;
        if (!(v[i] >= lo[i] && v[i] <= hi[i]))
            return error_set(err, "%s: train_state \"%s\" must be in [%g, "
                             "%g], got %g", path, keys[i], lo[i], hi[i],
                             v[i]);
    }
    // the window, a GPT's tokens a sequence: absent means the block (0)
    c->window = 0;
    if (json_get(j, "window")
        && (get_int(j, "window", &c->window, path, err) != 0
            || c->window < 1 || c->window > 100000))
        return error_set(err, "%s: train_state \"window\" must be a whole "
                         "number in [1, 100000]", path);
    const Json *seed = json_get(j, "seed");
    if (!seed || seed->type != JSON_STRING)
        return error_set(err, "%s: train_state has no seed", path);
    c->lr = (float)v[0], c->min_lr = (float)v[1];
    c->adamw = (AdamWConfig){(float)v[2], (float)v[3], (float)v[4],
                             (float)v[5]};
    c->grad_clip = (float)v[6];
    c->seed = strtoull(seed->str, NULL, 10);
    if (rng_parse(j, "data_rng", &t->data_rng, path, err) != 0
        || rng_parse(j, "drop_rng", &t->drop_rng, path, err) != 0)
        return -1;
    return 0;
}


// The state file whole, or its header alone (train_state_peek).
static int state_read(TrainState *s, const char *dir, int step,
                      bool header_only, Error *err) {
    memset(s, 0, sizeof *s);
    char path[4096];
    state_path(path, sizeof path, dir, step);
    if ((header_only ? st_load_header(&s->file, path, err)
                     : st_load(&s->file, path, err)) != 0)
        return -1;
    const char *text = st_meta(&s->file, "train_state");
    Error jerr;
    Json *j = text ? json_parse(text, strlen(text), &jerr) : NULL;
    int rc = -1;
    if (!text)
        error_set(err, "%s: no train_state metadata", path);
    else if (!j)
        error_set(err, "%s: train_state metadata: %s", path, jerr.msg);
    else if (parse_state(s, j, path, err) == 0) {
        if (s->step != step)
            error_set(err, "%s: holds step %d, the model step %d", path,
                      s->step, step);
        else
            rc = 0;
    }
    json_free(j);
    if (rc != 0) train_state_free(s);
    return rc;
}

int train_state_load(TrainState *s, const char *dir, int step, Error *err) {
    return state_read(s, dir, step, false, err);
}

int train_state_peek(TrainState *s, const char *dir, int step, Error *err) {
    return state_read(s, dir, step, true, err);
}

//> trainer-restore
int trainer_restore(Trainer *t, const TrainState *s, Error *err) {
    size_t n = t->model.num_params;
    if (st_copy_f32(&s->file, "adamw.m", t->m, n, err) != 0
        || st_copy_f32(&s->file, "adamw.v", t->v, n, err) != 0)
        return -1;
    t->step = s->step;
    t->data_rng = s->data_rng;
    t->drop_rng = s->drop_rng;
    // weights elsewhere take the loaded parameters and these moments
    if (t->model.load) t->model.load(t->model.self, t->m, t->v);
    return 0;
}
//< trainer-restore

void train_state_free(TrainState *s) {
    st_free(&s->file);
    memset(s, 0, sizeof *s);
}

// Every file of a run is written as NAME.tmp.XXXXXX and then renamed to
// NAME (st_save does so; so does ./ch7 for its translate.json). A run
// killed while writing (kill -9, a power cut) leaves that temporary file
// behind; nothing reads it, and the next run in the folder removes it.
static bool ends_with(const char *s, size_t n, const char *tail) {
    size_t k = strlen(tail);
    return n >= k && memcmp(s + n - k, tail, k) == 0;
}

static bool is_stale_temp(const char *name) {
    const char *t = strstr(name, ".tmp.");
    if (!t || strlen(t) != strlen(".tmp.XXXXXX") || strchr(t + 5, '.'))
        return false;
    size_t n = (size_t)(t - name);
    return ends_with(name, n, ".safetensors") || ends_with(name, n, ".json");
}

static void remove_stale_temps(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!is_stale_temp(e->d_name)) continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

int checkpoint_dir_check(const char *dir, Error *err) {
    struct stat st;
    if ((mkdir(dir, 0777) != 0 && errno != EEXIST) || access(dir, W_OK) != 0)
        return error_set(err, "cannot save checkpoints in %s: %s", dir,
                         strerror(errno));
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return error_set(err, "cannot save checkpoints in %s: not a folder",
                         dir);
    remove_stale_temps(dir);
    return 0;
}

// The step of the run saved in dir, which its model file names: -1 when
// dir holds no file of a run, -2 when it holds some but no step can be
// read (a model file without one, or a state file alone).
static int saved_step(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    struct stat st;
    if (stat(path, &st) != 0) return other_states(dir, -1, false) ? -2 : -1;
    StFile f;
    Error ignored;
    int step = -2;
    if (st_load(&f, path, &ignored) == 0) {
        const char *s = st_meta(&f, "step");
        char *end;
        long k = s ? strtol(s, &end, 10) : -1;
        if (s && *s && !*end && k >= 0 && k <= INT_MAX) step = (int)k;
    }
    st_free(&f);
    return step;
}

static bool same_folder(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev
           && sa.st_ino == sb.st_ino;
}

//> dir-claim
int checkpoint_dir_claim(const char *dir, const char *resumed,
                         bool overwrite, Error *err) {
    if (*resumed && same_folder(dir, resumed)) return 0;   // its own run
    int step = saved_step(dir);
    if (step == -1) return 0;   // nothing to lose
    if (overwrite) {   // asked for: the earlier run goes, all of it
        char path[4096];
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        unlink(path);
        other_states(dir, -1, true);
        return 0;
    }
    if (step == -2)
        return error_set(err, "%s holds an earlier run's files: give "
                         "another --out, or --overwrite", dir);
    return error_set(err, "%s holds a run (step %d): --resume %s, another "
                     "--out, or --overwrite", dir, step, dir);
}
//< dir-claim

volatile sig_atomic_t interrupted;

// write(2) because only async-signal-safe calls may run in a handler.
static void say(const char *msg) {
    ssize_t rc = write(STDERR_FILENO, msg, strlen(msg));
    (void)rc;
}

// The first Ctrl-C asks the loop to stop after its step (and to save);
// a step or an evaluation of a big model can take a while, so a second
// one quits at once. That loses nothing saved: every file is renamed into
// place whole, so the folder still holds the last complete checkpoint.
// Under mpirun the ranks say nothing here: mpirun also sends SIGTERM
// when it ends the job after an error, and only when every rank has
// agreed to stop (the loop, after its step) is it a Ctrl-C to report.
static void on_sigint(int sig) {
    (void)sig;
    bool speak = dist_size() == 1;
    if (interrupted) {
        if (speak)
            say("\nCtrl-C again: quitting now; the last checkpoint saved "
                "is kept as it was\n");
        _exit(130);
    }
    interrupted = 1;
    if (speak)
        say("\nCtrl-C: stopping after this step (Ctrl-C again quits at "
            "once)\n");
}

// SIGUSR1 asks for the same stop without a terminal: `kill -USR1 PID`,
// or a batch scheduler that warns a job before its time is up. It never
// quits at once, however often it comes. mpirun passes SIGUSR1 on to
// every rank as it is, which makes it the way to stop a run of several
// processes and save (see below).
static void on_sigusr1(int sig) {
    (void)sig;
    if (!interrupted && dist_size() == 1)
        say("\nSIGUSR1: stopping after this step\n");
    interrupted = 1;
}

// mpirun answers a Ctrl-C by sending the ranks SIGCONT, then SIGTERM a
// second later, then SIGKILL a second after that (Open MPI's
// odls_base_sigkill_timeout): several ranks take the SIGTERM as a Ctrl-C
// and save if their step ends within that second; one process keeps
// SIGTERM's usual meaning.
void catch_sigint(void) {
    interrupted = 0;
    struct sigaction sa = {.sa_handler = on_sigint};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    if (dist_size() > 1) sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_sigusr1;
    sigaction(SIGUSR1, &sa, NULL);
}

void release_sigint(void) {
    signal(SIGINT, SIG_DFL);
    if (dist_size() > 1) signal(SIGTERM, SIG_DFL);
    signal(SIGUSR1, SIG_DFL);
}
