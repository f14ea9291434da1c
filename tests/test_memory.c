// Tests of the memory plans (common/mem.h): every size function that a
// program's plan adds up counts what the code it stands for allocates.
// Each function is held against the most that our code held at once
// while the code ran, over what it held before (the runner is linked
// with --wrap for malloc, calloc, realloc, aligned_alloc and free:
// tests/alloc_count.h), within 64 bytes a call (alloc_floats rounds each
// allocation up to a cache line, malloc's blocks are a little larger than
// asked, and a plan counts bytes in floats). tests/memory.sh then holds
// the programs' estimates against the peaks they reach.
//
// gpt_sizes_count_the_allocations: gpt_model_floats (gpt_create),
//   gpt_acts_floats (gpt_acts_alloc), gpt_score_floats (gpt_score),
//   generate_floats_for (generate, with and without the cache, the
//   window it passes whole sized for its prompt), generate_floats (the
//   most: a whole block's prompt, the exact window) and
//   gpt_train_floats (the model, gpt_train_init, gpt_train_split,
//   trainer_init), for models with and without biases, dropout and
//   learned positions. A table left out of a count (the caches' array,
//   the tensor list, the sampler, the batch) fails it.
// seq2seq_sizes_count_the_allocations: seq2seq_model_floats,
//   seq2seq_train_floats (with trainer_init), seq2seq_state_floats,
//   greedy_decode_floats and beam_decode_floats (the decodings' work
//   space), and translate_batch_floats, which counts every output as
//   long as the state allows (the most: so at least what is allocated).
// plan_refuses_what_does_not_fit: a plan of 2^40 floats is refused with
//   one line that names the size in MiB and the hint; a plan of none
//   passes; phases add their largest only; under an address-space limit
//   (setrlimit, in the test's own process) 256 MiB over what is in use,
//   a plan of 512 MiB is refused by a line that names the limit; the
//   estimate counts the process's resident memory and is never under
//   its peak so far.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "alloc_count.h"
#include "check_util.h"
#include "decode.h"
#include "generate.h"
#include "gpt.h"
#include "gpt_train.h"
#include "mem.h"
#include "seq2seq.h"
#include "seq2seq_train.h"
#include "train.h"
#include "translate.h"

// The most a stretch of code held at once, over what was held before
// it, and its calls. (No ck_assert inside one: Check allocates to record
// each.)
typedef struct {
    unsigned long bytes, calls;
} Took;

#define TAKE(took, code)                                                   \
    do {                                                                   \
        long l_ = alloc_live();                                            \
        unsigned long c_ = alloc_count();                                  \
        alloc_peak_reset();                                                \
        code;                                                              \
        (took).bytes = (unsigned long)(alloc_peak() - l_);                 \
        (took).calls = alloc_count() - c_;                                 \
    } while (0)

// floats, as a size function counts them, agrees with t: never less
// (but for the rounding of each call), and at most 1% more (a tensor
// list counted at its longest).
static void agrees(const char *what, Took t, size_t floats) {
    double want = 4.0 * (double)floats, got = (double)t.bytes;
    ck_assert_msg(got <= want + 64.0 * t.calls
                  && want <= 1.01 * got + 64.0 * t.calls,
                  "%s: counted %.0f bytes, allocated %.0f in %lu calls",
                  what, want, got, t.calls);
}

static const GptConfig GPTS[4] = {
    {.vocab_size = 11, .block_size = 8, .n_layer = 3, .n_head = 2,
     .n_embd = 16, .n_ffn = 64, .dropout = 0.0f, .bias = false,
     .positional = POS_LEARNED},
    {.vocab_size = 7, .block_size = 12, .n_layer = 2, .n_head = 4,
     .n_embd = 8, .n_ffn = 24, .dropout = 0.1f, .bias = true,
     .positional = POS_SINUSOIDAL},
    {.vocab_size = 5, .block_size = 4, .n_layer = 1, .n_head = 1,
     .n_embd = 4, .n_ffn = 16, .dropout = 0.0f, .bias = true,
     .positional = POS_LEARNED},
    // deep, without dropout: the layers share what a layer needs only
    // while it runs forward
    {.vocab_size = 5, .block_size = 8, .n_layer = 16, .n_head = 2,
     .n_embd = 8, .n_ffn = 32, .dropout = 0.0f, .bias = false,
     .positional = POS_LEARNED},
};

START_TEST(gpt_sizes_count_the_allocations) {
    for (int k = 0; k < 4; k++) {
        const GptConfig *c = &GPTS[k];
        Error err;
        Gpt m;
        int rc;
        Took t;
        TAKE(t, rc = gpt_create(&m, c, &err));
        ck_assert_int_eq(rc, 0);
        agrees("gpt_model_floats", t, gpt_model_floats(c));
        Rng rng;
        rng_seed(&rng, 7);
        gpt_init(&m, &rng);
        GptActs a;
        TAKE(t, rc = gpt_acts_alloc(&a, c, 3, c->block_size, &err));
        ck_assert_int_eq(rc, 0);
        agrees("gpt_acts_floats", t, gpt_acts_floats(c, 3, c->block_size));
        gpt_acts_free(&a, c);
        // a text of 40 windows: the batch of 16 and the targets
        size_t n = 40 * (size_t)c->block_size + 1;
        int *ids = xmalloc(n * sizeof *ids);
        for (size_t i = 0; i < n; i++) ids[i] = (int)(i * 7 % 5);
        double loss;
        TAKE(t, rc = gpt_score(&m, ids, n, &loss, &err));
        ck_assert_int_eq(rc, 0);
        agrees("gpt_score_floats", t, gpt_score_floats(c, n));
        // generation, past the window, with the cache and without
        int *out = xmalloc(64 * sizeof *out);
        for (int cache = 0; cache < 2; cache++) {
            GenOptions o = {.max_new_tokens = 30, .seed = 3,
                            .use_cache = cache, .window = WINDOW_SLIDE,
                            .sample = {1.0f, 0, 1.0f}};
            TAKE(t, rc = generate(&m, ids, 2, out, &o, NULL, NULL, NULL,
                                  &err));
            ck_assert_int_eq(rc, 0);
            agrees("generate_floats_for", t,
                   generate_floats_for(c, 2, &o));
        }
        // and the most any generation takes: a prompt of a whole block,
        // past it, with the exact window
        GenOptions worst = {.max_new_tokens = 3, .seed = 3,
                            .use_cache = true, .window = WINDOW_EXACT,
                            .sample = {1.0f, 0, 1.0f}};
        int *full = xmalloc(((size_t)c->block_size + 3) * sizeof *full);
        TAKE(t, rc = generate(&m, ids, c->block_size, full, &worst, NULL,
                              NULL, NULL, &err));
        ck_assert_int_eq(rc, 0);
        agrees("generate_floats", t, generate_floats(c));
        free(full);
        free(out);
        free(ids);
        gpt_free(&m);
        // a training run of batch 4, alone on whole blocks and as part 1
        // of 2 on windows of half a block (chapter 9's shorter windows)
        for (int parts = 1; parts <= 2; parts++) {
            int T = c->block_size / parts;
            TrainConfig tc = {.batch = 4, .steps = 1, .lr = 1e-3f,
                              .eval_iters = 1};
            Vocab v = {.size = c->vocab_size};
            v.chars = xmalloc((size_t)v.size * sizeof *v.chars);
            for (int i = 0; i < v.size; i++) v.chars[i] = 'a' + i;
            GptTrain g;
            Trainer tr;
            TAKE(t, rc = gpt_create(&m, c, &err);
                 rc |= gpt_train_init(&g, &m, &v, tc.batch, T, &err);
                 rc |= gpt_train_split(&g, parts - 1, parts, &err);
                 TrainModel tm = gpt_train_model(&g);
                 rc |= trainer_init(&tr, &tm, &tc, &err));
            ck_assert_int_eq(rc, 0);
            agrees("gpt_train_floats", t,
                   gpt_train_floats(c, 4, T, parts));
            trainer_free(&tr);
            gpt_train_free(&g);
        }
    }
}
END_TEST

START_TEST(seq2seq_sizes_count_the_allocations) {
    Seq2SeqConfig c = seq2seq_config_default(13, 12);
    c.n_embd = 16, c.n_head = 2, c.n_ffn = 32, c.n_enc = 2, c.n_dec = 1;
    Error err;
    Seq2Seq m;
    int rc;
    Took t;
    TAKE(t, rc = seq2seq_create(&m, &c, &err));
    ck_assert_int_eq(rc, 0);
    agrees("seq2seq_model_floats", t, seq2seq_model_floats(&c));
    Rng rng;
    rng_seed(&rng, 5);
    seq2seq_init(&m, &rng);
    // sources of 1 to 9 tokens (ids 3 ..), padded to S = 9
    enum { B = 6, S = 9, T = 12 };
    int src[B * S], off[B + 1], flat[B * S];
    off[0] = 0;
    for (int b = 0; b < B; b++) {
        int len = 1 + (b * 5) % S;
        for (int s = 0; s < S; s++)
            src[b * S + s] = s < len ? 3 + (b + s) % 10 : c.pad;
        memcpy(flat + off[b], src + b * S, (size_t)len * sizeof *flat);
        off[b + 1] = off[b] + len;
    }
    DecodeConfig dc = decode_config_default();
    int out[B * T], len[B];
    for (int k = 1; k <= 3; k += 2) {   // greedy, then a beam of 3
        Seq2SeqState st;
        TAKE(t, rc = seq2seq_state_alloc(&st, &c, B, S, T, k, &err));
        ck_assert_int_eq(rc, 0);
        agrees("seq2seq_state_floats", t,
               seq2seq_state_floats(&c, B, S, T, k));
        dc.beam = k;
        if (k == 1) {
            TAKE(t, rc = greedy_decode(&m, &st, src, B, S, &dc, out, T, len,
                                       NULL, &err));
            ck_assert_int_eq(rc, 0);
            agrees("greedy_decode_floats", t, greedy_decode_floats(&c, B));
        } else {
            TAKE(t, rc = beam_decode(&m, &st, src, B, S, &dc, out, T, len,
                                     NULL, NULL, &err));
            ck_assert_int_eq(rc, 0);
            agrees("beam_decode_floats", t,
                   beam_decode_floats(&c, B, k, T));
        }
        seq2seq_state_free(&st, &c);
        // the same sources through translate_batch, 4 a batch: its count
        // takes every output as long as the state allows
        int *res, res_off[B + 1];
        TAKE(t, rc = translate_batch(&m, flat, off, B, &dc, 4, &res,
                                     res_off, &err));
        ck_assert_int_eq(rc, 0);
        size_t most = translate_batch_floats(&c, B, S, k, 4);
        ck_assert_msg(t.bytes <= 4 * most + 64 * t.calls,
                      "translate_batch_floats: counted %zu bytes, "
                      "allocated %lu", 4 * most, t.bytes);
        free(res);
    }
    seq2seq_free(&m);
    // a training run: the model, gradients, moments, activations, batch
    TrainConfig tc = {.batch = 1, .steps = 1, .lr = 1e-3f, .eval_iters = 1};
    Seq2SeqTrain g;
    Trainer tr;
    TAKE(t, rc = seq2seq_create(&m, &c, &err);
         rc |= seq2seq_train_init(&g, &m, 5, S, T, 0.1f, &err);
         TrainModel tm = seq2seq_train_model(&g);
         rc |= trainer_init(&tr, &tm, &tc, &err));
    ck_assert_int_eq(rc, 0);
    agrees("seq2seq_train_floats", t, seq2seq_train_floats(&c, 5, S, T));
    trainer_free(&tr);
    seq2seq_train_free(&g);
}
END_TEST

START_TEST(plan_refuses_what_does_not_fit) {
    MemPlan p;
    Error err;
    mem_plan_begin(&p);
    ck_assert_double_ge(mem_plan_bytes(&p), p.resident);
    ck_assert_double_ge(mem_plan_bytes(&p), p.hwm);
    ck_assert_int_eq(mem_plan_check(&p, "lower --x", &err), 0);
    mem_plan_keep(&p, (size_t)1 << 40);   // 4 TiB
    ck_assert_int_eq(mem_plan_check(&p, "lower --x", &err), -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "needs 4194"));
    ck_assert_ptr_nonnull(strstr(err.msg, " MiB ("));
    ck_assert_ptr_nonnull(strstr(err.msg, "): lower --x"));
    ck_assert_ptr_null(strchr(err.msg, '\n'));
    // a phase adds its largest only
    MemPlan q;
    mem_plan_begin(&q);
    mem_plan_phase(&q, 1000);
    mem_plan_phase(&q, 3000);
    mem_plan_phase(&q, 2000);
    ck_assert_double_eq(q.phase, 3000);
    // under ulimit -v (this test's own process: Check forks each test)
    const char *fork_env = getenv("CK_FORK");
    if (fork_env && strcmp(fork_env, "no") == 0) return;
    // 256 MiB more address space than is in use, and a plan of 512 MiB
    MemPlan v;
    mem_plan_begin(&v);
    struct rlimit lim;
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &lim), 0);
    rlim_t want = (rlim_t)v.virt + ((rlim_t)256 << 20);
    if ((lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < want)
        || (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < want))
        return;   // already under a lower limit
    lim.rlim_cur = want;
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &lim), 0);
    // qemu's user-mode emulation (make check-arm64) accepts the call and
    // ignores it, since the limit would apply to qemu itself: there the
    // limit is not in force, and there is nothing to check
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &lim), 0);
    if (lim.rlim_cur != want) return;
    mem_plan_keep(&v, (size_t)1 << 27);
    ck_assert_int_eq(mem_plan_check(&v, "lower --y", &err), -1);
    char limit[64];
    snprintf(limit, sizeof limit, "(ulimit -v %.0f): lower --y",
             (double)want / 1048576.0);
    ck_assert_msg(strstr(err.msg, limit), "%s", err.msg);
}
END_TEST

Suite *memory_suite(void) {
    Suite *s = suite_create("memory");
    TCase *tc = tcase_new("plans", "common");
    tcase_set_timeout(tc, 3 * TEST_TIMEOUT);
    tcase_add_test(tc, gpt_sizes_count_the_allocations);
    tcase_add_test(tc, seq2seq_sizes_count_the_allocations);
    tcase_add_test(tc, plan_refuses_what_does_not_fit);
    suite_add_tcase(s, tc);
    return s;
}
