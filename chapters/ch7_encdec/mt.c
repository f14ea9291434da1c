#include "mt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bleu.h"
#include "bpe.h"
#include "decode.h"
#include "error.h"
#include "flags.h"
#include "mem.h"
#include "pairs.h"
#include "progress.h"
#include "seq2seq.h"
#include "seq2seq_checkpoint.h"
#include "seq2seq_train.h"
#include "task.h"
#include "threads.h"
#include "timer.h"
#include "train.h"
#include "translate.h"
#include "utf8.h"

typedef struct {
    const char *task, *data, *src_lang, *tgt_lang, *tokenizer;
    int merges, max_len;
    int embd, layers, heads, ffn;
    float dropout, smoothing;
    int batch_tokens, epochs, eval_every, show, beam, threads, print_every;
    float alpha;
    const char *save, *checkpoint, *translate, *translate_file;
    bool quiet;
} Options;

static void parse_flags(int argc, char **argv, Options *o, TrainConfig *t) {
    Flag flags[] = {
        {"task", FLAG_STRING, &o->task, "translate (copy, reverse and sort "
         "are the synthetic tasks: ./ch7 --help)"},
        {"data", FLAG_STRING, &o->data, "the folder of the corpus: "
         "train, val and test_2016_flickr, .de and .en"},
        {"src", FLAG_STRING, &o->src_lang, "the source language: the "
         "files' suffix"},
        {"tgt", FLAG_STRING, &o->tgt_lang, "the target language"},
        {"tokenizer", FLAG_STRING, &o->tokenizer, "bpe (subwords learnt on "
         "the training text) or char"},
        {"merges", FLAG_INT, &o->merges, "BPE merges: the vocabulary is the "
         "characters plus this many subwords"},
        {"max-len", FLAG_INT, &o->max_len, "the longest sentence in tokens; "
         "longer training pairs are left out"},
        {"embd", FLAG_INT, &o->embd, "d_model: channels"},
        {"layers", FLAG_INT, &o->layers, "encoder layers, and as many "
         "decoder layers"},
        {"heads", FLAG_INT, &o->heads, "attention heads"},
        {"ffn", FLAG_INT, &o->ffn, "hidden units of each FFN"},
        {"dropout", FLAG_FLOAT, &o->dropout, "dropout in training"},
        {"smoothing", FLAG_FLOAT, &o->smoothing, "label smoothing eps"},
        {"batch-tokens", FLAG_INT, &o->batch_tokens, "source + target "
         "tokens of a batch, padding included"},
        {"epochs", FLAG_INT, &o->epochs, "passes over the training pairs"},
        {"steps", FLAG_INT, &t->steps, "steps of the run (0: --epochs' "
         "worth)"},
        {"lr", FLAG_FLOAT, &t->lr, "peak learning rate"},
        {"warmup", FLAG_INT, &t->warmup, "steps of linear warmup"},
        {"eval-every", FLAG_INT, &o->eval_every, "steps between evaluations "
         "(val loss and greedy val BLEU; 0: only at the end)"},
        {"show", FLAG_INT, &o->show, "test sentences printed with their "
         "translations"},
        {"beam", FLAG_INT, &o->beam, "beam width (1: greedy)"},
        {"alpha", FLAG_FLOAT, &o->alpha, "beam search's length "
         "normalisation: score = log P / length^alpha"},
        {"seed", FLAG_U64, &t->seed, "initialisation, batches, dropout"},
        {"threads", FLAG_INT, &o->threads, "threads (0: one per core)"},
        {"print-every", FLAG_INT, &o->print_every, "steps between progress "
         "lines when the output is not a terminal"},
        {"quiet", FLAG_BOOL, &o->quiet, "no progress lines"},
        {"save", FLAG_STRING, &o->save, "write the trained model (with its "
         "tokenizer) to this safetensors file"},
        {"checkpoint", FLAG_STRING, &o->checkpoint, "translate with this "
         "saved model instead of training one"},
        {"translate", FLAG_STRING, &o->translate, "a sentence to translate "
         "(with --checkpoint)"},
        {"translate-file", FLAG_STRING, &o->translate_file, "translate every "
         "line of this file to standard output (with --checkpoint)"},
    };
    flags_parse(argc, argv, flags, sizeof flags / sizeof flags[0],
                "Chapter 7, translation: an encoder-decoder Transformer "
                "learns German to\nEnglish on Multi30k, with a BPE "
                "tokenizer, and is measured with BLEU.");
    if (strcmp(o->task, "translate") != 0)
        flags_fail("--task must be translate here, got '%s'", o->task);
    if (strcmp(o->tokenizer, "bpe") != 0 && strcmp(o->tokenizer, "char"))
        flags_fail("--tokenizer must be bpe or char, got '%s'",
                   o->tokenizer);
    const FlagRange range[] = {
        {"merges", o->merges, 0, 100000}, {"max-len", o->max_len, 2, 1024},
        {"embd", o->embd, 1, 4096}, {"layers", o->layers, 1, 64},
        {"heads", o->heads, 1, o->embd}, {"ffn", o->ffn, 1, 65536},
        {"dropout", o->dropout, 0, 0.99},
        {"smoothing", o->smoothing, 0, 0.99},
        {"batch-tokens", o->batch_tokens, 16, 1e7},
        {"epochs", o->epochs, 1, 10000}, {"steps", t->steps, 0, 1e8},
        {"lr", t->lr, 1e-30, 1}, {"warmup", t->warmup, 0, 1e7},
        {"eval-every", o->eval_every, 0, 1e8}, {"show", o->show, 0, 1000},
        {"beam", o->beam, 1, 64}, {"alpha", o->alpha, 0, 2},
        {"threads", o->threads, 0, 1024},
        {"print-every", o->print_every, 1, 1e7},
    };
    flags_check_ranges(range, sizeof range / sizeof range[0]);
    const char *texts[][2] = {
        {"data", o->data}, {"src", o->src_lang}, {"tgt", o->tgt_lang},
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (*texts[i][1] == 0) flags_fail("--%s is empty", texts[i][0]);
    const char *maybe[][2] = {
        {"save", o->save}, {"checkpoint", o->checkpoint},
        {"translate", o->translate}, {"translate-file", o->translate_file},
    };
    for (size_t i = 0; i < sizeof maybe / sizeof maybe[0]; i++)
        if (flags_given(maybe[i][1]) && *maybe[i][1] == 0)
            flags_fail("--%s is empty", maybe[i][0]);
    if ((*o->translate || *o->translate_file) && !*o->checkpoint)
        flags_fail("--translate and --translate-file need --checkpoint "
                   "FILE, a model saved with --save");
    if (*o->translate && *o->translate_file)
        flags_fail("give --translate or --translate-file, not both");
    if (o->embd % o->heads != 0)
        flags_fail("--embd %d does not split into --heads %d", o->embd,
                   o->heads);
    if (strcmp(o->tokenizer, "char") == 0) o->merges = 0;
}

// ---- the tokenizer -------------------------------------------------------

// pairs.h's EncodeFn for a Bpe: its output needs room for a token a byte.
static int encode_bpe(const void *tok, const char *text, size_t len,
                      int *out, int cap, Error *err) {
    static int *room;
    static size_t room_n;
    if (len + 1 > room_n) {
        room_n = len + 1;
        room = xrealloc(room, room_n * sizeof *room);
    }
    int n = bpe_encode((Bpe *)tok, text, len, room, err);   // its cache
    if (n < 0) return -1;
    if (n > cap) return cap + 1;
    memcpy(out, room, (size_t)n * sizeof *out);
    return n;
}

static void path_of(char *buf, size_t size, const Options *o,
                    const char *split, const char *lang) {
    snprintf(buf, size, "%s/%s.%s", o->data, split, lang);
}

static void learn_tokenizer(Bpe *bpe, const Options *o) {
    char paths[2][4096];
    path_of(paths[0], sizeof paths[0], o, "train", o->src_lang);
    path_of(paths[1], sizeof paths[1], o, "train", o->tgt_lang);
    char *texts[2];
    size_t lens[2];
    Error err;
    for (int k = 0; k < 2; k++) {
        texts[k] = read_file(paths[k], &lens[k], &err);
        if (!texts[k])
            die("%s (the corpus comes with 'make data', run from the "
                "repository root)", err.msg);
    }
    double t0 = time_now();
    if (bpe_learn(bpe, (const char *const *)texts, lens, 2, o->merges,
                  &err) != 0)
        die("%s", err.msg);
    printf("tokenizer   %s: %d characters + %d merges = %d tokens "
           "(learnt in %.2f s on both languages' training text)\n",
           o->merges ? "BPE" : "characters", bpe->n_chars, bpe->n_merges,
           bpe->vocab_size, time_now() - t0);
    free(texts[0]);
    free(texts[1]);
}

static void load_split(PairCorpus *c, const Options *o, Bpe *bpe,
                       const char *split, bool drop_long) {
    char s[4096], t[4096];
    path_of(s, sizeof s, o, split, o->src_lang);
    path_of(t, sizeof t, o, split, o->tgt_lang);
    int dropped;
    Error err;
    if (pairs_load(c, s, t, encode_bpe, bpe, o->max_len, drop_long,
                   &dropped, &err) != 0)
        die("%s", err.msg);
    long ns = c->src_off[c->n], nt = c->tgt_off[c->n];
    printf("  %-16s %6d pairs, %7ld + %7ld tokens (%.1f + %.1f a "
           "sentence)\n", split, c->n, ns, nt, (double)ns / c->n,
           (double)nt / c->n);
    if (dropped)
        printf("  (%d training pairs longer than %d tokens left out)\n",
               dropped, o->max_len);
}

// ---- evaluation --------------------------------------------------------------

// The mean label-free loss (nll) per target token over every batch of b.
static double val_nll(Seq2SeqTrain *g, PairBatcher *b, Error *err,
                      int *fail) {
    double sum = 0;
    long n = 0;
    for (int k = 0; k < b->n_batches; k++) {
        const PairBatch *pb = &b->b[k];
        batcher_fill(b, pb, g->src, g->tgt_in, g->tgt_out);
        SmoothedLoss l;
        if (seq2seq_forward(&g->model, &g->acts, g->src, g->tgt_in,
                            g->tgt_out, pb->rows, pb->S, pb->T, 0, false,
                            NULL, &l, err) != 0) {
            *fail = 1;
            return NAN;
        }
        sum += (double)l.nll * l.n_valid;
        n += l.n_valid;
    }
    return n ? sum / n : NAN;
}

// The references of a corpus's target side, as text.
static char **decode_all(const Bpe *bpe, const int *ids, const int *off,
                         int n) {
    char **s = xmalloc((size_t)(n ? n : 1) * sizeof *s);
    Error err;
    for (int i = 0; i < n; i++) {
        s[i] = bpe_decode(bpe, ids + off[i], off[i + 1] - off[i], NULL,
                          &err);
        if (!s[i]) die("%s", err.msg);
    }
    return s;
}

static void free_all(char **s, int n) {
    for (int i = 0; i < n; i++) free(s[i]);
    free(s);
}

// Translates the source side of c (at most n sentences) and scores it
// against the references refs. Returns the hypotheses (to free).
static char **translate_corpus(const Seq2Seq *m, const Bpe *bpe,
                               const PairCorpus *c, const DecodeConfig *dc,
                               BleuResult *bleu, ChrfResult *chrf,
                               char **refs, double *seconds) {
    Error err;
    int *out, *off = xmalloc(((size_t)c->n + 1) * sizeof *off);
    double t0 = time_now();
    if (translate_batch(m, c->src, c->src_off, c->n, dc, 100, &out, off,
                        &err) != 0)
        die("%s", err.msg);
    *seconds = time_now() - t0;
    char **hyps = decode_all(bpe, out, off, c->n);
    free(out);
    free(off);
    if (bleu_corpus(bleu, (const char *const *)hyps,
                    (const char *const *)refs, c->n, false, &err) != 0
        || (chrf && chrf_corpus(chrf, (const char *const *)hyps,
                                (const char *const *)refs, c->n, false,
                                &err) != 0))
        die("%s", err.msg);
    return hyps;
}

// ---- translating with a saved model ---------------------------------------

static int translate_saved(const Options *o) {
    Error err;
    Seq2Seq m;
    char *vocab = NULL;
    if (seq2seq_load(o->checkpoint, &m, NULL, &vocab, &err) != 0)
        die("%s", err.msg);
    Bpe bpe;
    if (!vocab || bpe_from_string(&bpe, vocab, &err) != 0)
        die("%s: not a translation model (its tokenizer: %s)", o->checkpoint,
            vocab ? err.msg : "none");
    free(vocab);
    // the sentences: one, or every line of a file
    char *text;
    size_t bytes;
    if (*o->translate) {
        text = xmalloc(strlen(o->translate) + 1);
        strcpy(text, o->translate);
        bytes = strlen(text);
    } else if (!(text = read_file(o->translate_file, &bytes, &err))) {
        die("%s", err.msg);
    }
    int n = 0;
    for (size_t i = 0; i < bytes; i++) n += text[i] == '\n';
    if (bytes > 0 && text[bytes - 1] != '\n') n++;
    int *off = xmalloc(((size_t)n + 1) * sizeof *off);
    int *ids = xmalloc((bytes + 1) * sizeof *ids);
    off[0] = 0;
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        size_t end = at;
        while (end < bytes && text[end] != '\n') end++;
        int len = bpe_encode(&bpe, text + at, end - at, ids + off[k], &err);
        if (len < 0) die("line %d: %s", k + 1, err.msg);
        if (len > m.cfg.max_len)
            die("line %d: %d tokens, more than the model's %d", k + 1, len,
                m.cfg.max_len);
        off[k + 1] = off[k] + len;
        at = end + 1;
    }
    DecodeConfig dc = decode_config_default();
    dc.beam = o->beam, dc.alpha = o->alpha;
    int *out, *out_off = xmalloc(((size_t)n + 1) * sizeof *out_off);
    if (translate_batch(&m, ids, off, n, &dc, 64, &out, out_off, &err) != 0)
        die("%s", err.msg);
    for (int k = 0; k < n; k++) {
        char *s = bpe_decode(&bpe, out + out_off[k],
                             out_off[k + 1] - out_off[k], NULL, &err);
        if (!s) die("%s", err.msg);
        printf("%s\n", s);
        free(s);
    }
    free(out);
    free(out_off);
    free(ids);
    free(off);
    free(text);
    bpe_free(&bpe);
    seq2seq_free(&m);
    return 0;
}

// ---- training -----------------------------------------------------------------

int mt_main(int argc, char **argv) {
    Options o = {.task = "translate", .data = "data/multi30k",
                 .src_lang = "de", .tgt_lang = "en", .tokenizer = "bpe",
                 .merges = 4000, .max_len = 100, .embd = 128, .layers = 3,
                 .heads = 4, .ffn = 512, .dropout = 0.1f, .smoothing = 0.1f,
                 .batch_tokens = 4000, .epochs = 6, .eval_every = 0,
                 .show = 5, .beam = 4, .alpha = 1.0f, .threads = 0,
                 .print_every = 50, .save = "", .checkpoint = "",
                 .translate = "", .translate_file = ""};
    TrainConfig tc = {.batch = 1, .steps = 0, .lr = 1e-3f, .warmup = 400,
                      .adamw = {0.9f, 0.98f, 1e-9f, 0.01f},
                      .grad_clip = 1.0f, .eval_every = 0, .eval_iters = 1,
                      .seed = 1337};
    parse_flags(argc, argv, &o, &tc);
    if (o.threads > 0) threads_set(o.threads);
    if (*o.checkpoint) return translate_saved(&o);

    printf("== Chapter 7: German to English ==\n\n");
    Bpe bpe;
    learn_tokenizer(&bpe, &o);
    PairCorpus train, val, test;
    load_split(&train, &o, &bpe, "train", true);
    load_split(&val, &o, &bpe, "val", false);
    load_split(&test, &o, &bpe, "test_2016_flickr", false);

    Error err;
    PairBatcher tb, vb;
    if (batcher_init(&tb, &train, o.batch_tokens, tc.seed, &err) != 0
        || batcher_init(&vb, &val, o.batch_tokens, tc.seed, &err) != 0)
        die("%s", err.msg);
    printf("batches     %d of at most %d tokens an epoch, %.1f%% of them "
           "padding\n", tb.n_batches, o.batch_tokens,
           100 * batcher_padding(&tb));
    if (tc.steps == 0) tc.steps = o.epochs * tb.n_batches;
    tc.decay_steps = tc.steps;
    tc.min_lr = tc.lr / 10;

    // activations for the largest batch of either corpus, in tokens
    int S = tb.max_S > vb.max_S ? tb.max_S : vb.max_S;
    int T = tb.max_T > vb.max_T ? tb.max_T : vb.max_T;
    int B = 1;
    const PairBatcher *both[2] = {&tb, &vb};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < both[k]->n_batches; i++) {
            const PairBatch *pb = &both[k]->b[i];
            int need = (int)(((long)pb->rows * pb->S + S - 1) / S);
            int need_t = (int)(((long)pb->rows * pb->T + T - 1) / T);
            if (need < need_t) need = need_t;
            if (need > B) B = need;
        }

    Seq2SeqConfig cfg = seq2seq_config_default(bpe.vocab_size,
                                               o.max_len + 1);
    cfg.n_embd = o.embd, cfg.n_enc = cfg.n_dec = o.layers;
    cfg.n_head = o.heads, cfg.n_ffn = o.ffn, cfg.dropout = o.dropout;
    if (seq2seq_config_check(&cfg, &err) != 0) flags_fail("%s", err.msg);
    size_t floats = seq2seq_train_floats(&cfg, B, S, T);
    if (mem_check(floats, "training", "lower --batch-tokens, --embd, --ffn "
                  "or --layers", &err) != 0)
        flags_fail("%s", err.msg);
    Seq2Seq m;
    Rng r;
    rng_seed(&r, tc.seed);
    if (seq2seq_create(&m, &cfg, &err) != 0) die("%s", err.msg);
    seq2seq_init(&m, &r);
    printf("model       d_model %d, %d + %d layers, %d heads, FFN %d, "
           "tied embeddings: %zu parameters, %.0f MiB for training\n",
           cfg.n_embd, cfg.n_enc, cfg.n_dec, cfg.n_head, cfg.n_ffn,
           m.num_params, floats * 4.0 / (1 << 20));
    printf("training    %d steps (%.1f epochs), lr %g -> %g (warmup %d, "
           "cosine), label smoothing %g, dropout %g\n\n", tc.steps,
           (double)tc.steps / tb.n_batches, tc.lr, tc.min_lr, tc.warmup,
           o.smoothing, o.dropout);

    Seq2SeqTrain g;
    Trainer tr;
    if (seq2seq_train_init(&g, &m, B, S, T, o.smoothing, &err) != 0)
        die("%s", err.msg);
    char *vocab = bpe_to_string(&bpe, NULL);
    g.vocab = vocab;
    TrainModel tm = seq2seq_train_model(&g);
    if (trainer_init(&tr, &tm, &tc, &err) != 0) die("%s", err.msg);
    PairSource source = batcher_source(&tb);
    char **val_refs = decode_all(&bpe, val.tgt, val.tgt_off, val.n);
    char **test_refs = decode_all(&bpe, test.tgt, test.tgt_off, test.n);
    DecodeConfig greedy = decode_config_default();
    greedy.beam = 1;

    Progress p;
    progress_start(&p, stdout, tc.steps, o.print_every);
    double t0 = time_now(), train_time = 0;
    long tokens_done = 0;
    while (tr.step < tc.steps) {
        StepResult res;
        double ts = time_now();
        if (train_step(&tr, &source, &res, &err) != 0) die("%s", err.msg);
        double dt = time_now() - ts;
        train_time += dt;
        long tokens = 0;
        for (int i = 0; i < g.acts.cur_B; i++)
            for (int j = 0; j < g.acts.cur_S; j++)
                tokens += g.src[(size_t)i * g.acts.cur_S + j] != TOK_PAD;
        tokens += g.last.n_valid;
        tokens_done += tokens;
        if (!o.quiet) {
            char extra[80];
            snprintf(extra, sizeof extra, "loss %.4f  nll %.4f  lr %.1e",
                     res.loss, g.last.nll, res.lr);
            progress_update(&p, tr.step, (double)tokens, dt, extra);
        }
        bool last = tr.step == tc.steps;
        if ((o.eval_every > 0 && tr.step % o.eval_every == 0) || last) {
            progress_end(&p);
            int fail = 0;
            double vl = val_nll(&g, &vb, &err, &fail);
            if (fail) die("%s", err.msg);
            BleuResult bl;
            double secs;
            char **hyps = translate_corpus(&g.model, &bpe, &val, &greedy,
                                           &bl, NULL, val_refs, &secs);
            free_all(hyps, val.n);
            printf("eval step %d (epoch %.2f): val nll %.4f, val BLEU %.2f "
                   "(greedy)  [%.0f s]\n", tr.step,
                   (double)tr.step / tb.n_batches, vl, bl.score,
                   time_now() - t0);
            fflush(stdout);
        }
    }
    progress_end(&p);
    printf("\ntrained     %d steps in %.1f s: %.0f tokens/s (source + "
           "target)\n", tr.step, train_time, tokens_done / train_time);
    if (*o.save) {
        if (seq2seq_save(o.save, &g.model, tr.step, vocab, &err) != 0)
            die("%s", err.msg);
        printf("saved       %s (./ch7 --checkpoint %s --translate TEXT)\n",
               o.save, o.save);
    }

    // the test set, greedy and with beam search
    printf("\ntest set (%d sentences):\n", test.n);
    DecodeConfig beam = decode_config_default();
    beam.beam = o.beam, beam.alpha = o.alpha;
    char **shown = NULL;
    for (int k = 0; k < 2; k++) {
        const DecodeConfig *dc = k ? &beam : &greedy;
        if (k && o.beam == 1) break;
        BleuResult bl;
        ChrfResult cf;
        double secs;
        char **hyps = translate_corpus(&g.model, &bpe, &test, dc, &bl, &cf,
                                       test_refs, &secs);
        char line[256];
        bleu_format(line, sizeof line, &bl, true);
        printf("  %-8s %s\n", k ? "beam" : "greedy", line);
        chrf_format(line, sizeof line, &cf, true);
        printf("  %-8s %s\n", "", line);
        printf("  %-8s %.1f sentences/s\n", "", test.n / secs);
        if (!shown) shown = hyps;
        else free_all(hyps, test.n);
    }
    char **srcs = decode_all(&bpe, test.src, test.src_off, test.n);
    for (int i = 0; i < o.show && i < test.n; i++)
        printf("\n  source     %s\n  reference  %s\n  greedy     %s\n",
               srcs[i], test_refs[i], shown[i]);
    free_all(srcs, test.n);
    free_all(shown, test.n);
    free_all(val_refs, val.n);
    free_all(test_refs, test.n);
    free(vocab);
    trainer_free(&tr);
    seq2seq_train_free(&g);
    batcher_free(&tb);
    batcher_free(&vb);
    pairs_free(&train);
    pairs_free(&val);
    pairs_free(&test);
    bpe_free(&bpe);
    return 0;
}
