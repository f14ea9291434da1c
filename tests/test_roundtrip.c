// Write-then-read property tests: for every format the project both writes
// and reads, random cases are written, read back and compared in full.
//
// Each case draws everything from its own generator, seeded with the
// test's base seed plus the case number, so a failure names the case and
// its seed, and ROUNDTRIP_CASE=k replays case k of each test alone:
//   ROUNDTRIP_CASE=17 CK_FORK=no CK_RUN_SUITE=roundtrip .../run_tests
// What each test writes and checks:
//
// st_random_round_trip: safetensors files of 0 to 20 tensors with random
//   names (ASCII, multi-byte UTF-8, quotes, backslashes, control
//   characters, long names), 0 to 8 dimensions of small sizes (0 too) and
//   float data of every kind (-0.0, denormals, infinities, NaNs with
//   payloads: compared as bytes), and random metadata. Every tensor's
//   name, dtype, shape, numel, place and bytes, and every metadata pair in
//   order, must come back.
// st_random_refusals: one thing st_save must refuse (a duplicate, empty,
//   reserved or non-UTF-8 name, a non-UTF-8 or duplicate metadata key, a
//   non-UTF-8 value) planted in a random valid case: refused with one line
//   naming the file, and nothing left in the folder.
// json_random_round_trip: random JSON trees (objects and arrays a few
//   levels deep, strings of random UTF-8, integers to 64 bits, doubles as
//   %.17g) written with the StrBuf API and random whitespace, parsed back:
//   the same tree (integers through json_int64, doubles bit for bit,
//   strings byte for byte, keys in order).
// gpt_checkpoint_random_round_trip: chapter 5 checkpoints of small random
//   GPTs with random parameters (-0.0 and denormals too) and vocabularies
//   of random code points, with and without a step: the config, every
//   parameter bit for bit, the vocabulary and the step come back. A
//   vocabulary holding U+0000, which the metadata cannot carry, is
//   refused when saving.
// train_state_random_round_trip: chapter 6 runs saved twice into one
//   folder (random configs, moments, generators and steps) and resumed:
//   the trainer of the second save comes back, and only its state file
//   is left.
// bpe_random_round_trip: tokenizers learnt from random texts (words of a
//   random lexicon, up to 400 merges, so ids of 1 to 3 digits), through
//   their string form: the same alphabet and merges, the same string
//   again, and the same ids and text for random lines.
// seq2seq_checkpoint_random_round_trip: chapter 7 checkpoints of small
//   random encoder-decoders (tied or not, every activation), with and
//   without a step and a vocabulary string.
//
// Files go to a fresh folder, removed at the end of each test (and by
// the runner when a test fails): under /dev/shm when the machine has it,
// since a save ends with fsync and thousands of them on a disk would
// take seconds. Fewer cases run under valgrind (see n_cases).
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpe.h"
#include "check_util.h"
#include "checkpoint.h"
#include "checkpoint_state.h"
#include "gpt.h"
#include "gpt_train.h"
#include "json.h"
#include "mem.h"
#include "rng.h"
#include "safetensors.h"
#include "seq2seq.h"
#include "seq2seq_checkpoint.h"
#include "utf8.h"
#include "vocab.h"

// ---- cases, seeds and failures ----------------------------------------------

// valgrind runs a program with its own libraries preloaded
static bool under_valgrind(void) {
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "vgpreload");
}

// How many of a test's n cases to run: all of them (the whole suite takes
// about half a second at -O3 and three with the sanitizers), a twentieth
// under valgrind, which runs every test in one process many times slower.
static int n_cases(int n) {
    return under_valgrind() ? n / 20 : n;
}

// The cases of a test to run, [*first, end): all n, or the one that
// ROUNDTRIP_CASE names. Returns end.
static int case_range(int n, int *first) {
    const char *k = getenv("ROUNDTRIP_CASE");
    if (!k || !*k) {
        *first = 0;
        return n;
    }
    *first = atoi(k);
    return *first + 1;
}

// The case running now, which every failure names.
static struct {
    const char *test;
    int i;
    uint64_t seed;
} cur;

// Starts case i of test: its generator is seeded with base + i.
static void case_start(Rng *r, const char *test, uint64_t base, int i) {
    cur.test = test;
    cur.i = i;
    cur.seed = base + (uint64_t)i;
    rng_seed(r, cur.seed);
}

// Fails the running case with a message naming it. (An if and then
// ck_abort_msg: ck_assert records its place on every pass, which valgrind
// makes slow, and these loops make millions of checks.)
#define CHECK(cond, ...) do {                                              \
        if (!(cond)) {                                                     \
            char what_[4096];                                              \
            snprintf(what_, sizeof what_, __VA_ARGS__);                    \
            ck_abort_msg("%s: case %d (seed %" PRIu64 ") failed: %s",      \
                         cur.test, cur.i, cur.seed, what_);                \
        }                                                                  \
    } while (0)

// ---- the temporary folder ---------------------------------------------------

typedef struct {
    char path[96];
} TmpDir;

// Every test's folder is made inside one made for the suite's cases,
// which Check's unchecked fixture makes and removes in the runner's own
// process: a failing check ends the test's process before its last line
// (in fork mode), and the runner still removes what it left.
static char base_dir[64];

static void base_dir_make(void) {
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(base_dir, sizeof base_dir, "%s/roundtrip.XXXXXX", base);
    if (!mkdtemp(base_dir)) base_dir[0] = '\0';   // tmpdir_make says why
}

static void base_dir_remove(void) {
    if (base_dir[0]) remove_tree(base_dir);
    base_dir[0] = '\0';
}

static void tmpdir_make(TmpDir *d) {
    ck_assert_msg(base_dir[0], "cannot make a folder under /dev/shm or "
                  "/tmp: %s", strerror(errno));
    snprintf(d->path, sizeof d->path, "%s/t.XXXXXX", base_dir);
    ck_assert_msg(mkdtemp(d->path) != NULL, "mkdtemp %s: %s", d->path,
                  strerror(errno));
}

static void tmpdir_remove(TmpDir *d) {
    remove_tree(d->path);
}

// The names in a folder (without . and ..), sorted and joined by spaces
// into buf; returns how many there are.
static int list_dir(const char *path, char *buf, size_t size) {
    DIR *dir = opendir(path);
    ck_assert_msg(dir != NULL, "opendir %s: %s", path, strerror(errno));
    char names[16][256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n < 16) snprintf(names[n], sizeof names[n], "%s", e->d_name);
        n++;
    }
    closedir(dir);
    int shown = n < 16 ? n : 16;
    qsort(names, (size_t)shown, sizeof names[0],
          (int (*)(const void *, const void *))strcmp);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < shown && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s",
                                 i ? " " : "", names[i]);
    return n;
}

// ---- random values ----------------------------------------------------------

static uint32_t below(Rng *r, uint32_t n) { return rng_below(r, n); }
static bool coin(Rng *r, uint32_t one_in) { return below(r, one_in) == 0; }

// One random code point (never U+0000, which C strings cannot hold): the
// characters JSON must escape, quotes and backslashes, ASCII, the edges
// of each UTF-8 length, and any character of 2, 3 or 4 bytes.
static uint32_t rand_cp(Rng *r) {
    static const uint32_t EDGES[] = {0x7f, 0x80, 0x7ff, 0x800, 0xd7ff,
                                     0xe000, 0xfeff, 0xfffd, 0xffff,
                                     0x10000, 0x10ffff, 0xa0, 0x2581};
    uint32_t c;
    switch (below(r, 10)) {
    case 0: return 1 + below(r, 0x1f);                 // U+0001..U+001F
    case 1: return "\"\\/"[below(r, 3)];
    case 2: return EDGES[below(r, sizeof EDGES / sizeof EDGES[0])];
    case 3: return 0x80 + below(r, 0x780);             // 2 bytes
    case 4:                                            // 3, no surrogate
        c = 0x800 + below(r, 0xf800);
        return c >= 0xd800 && c <= 0xdfff ? c - 0x800 : c;
    case 5: return 0x10000 + below(r, 0x100000);       // 4 bytes
    default: return 0x20 + below(r, 0x5f);             // printable ASCII
    }
}

static void put_cp(StrBuf *b, uint32_t cp) {
    char u[4];
    sb_append(b, u, (size_t)utf8_encode(cp, u));
}

// A random UTF-8 string (NUL-terminated, malloc'd): mostly short, now and
// then empty, one in 16 of 100 to 400 characters.
static char *rand_utf8(Rng *r) {
    StrBuf b = {0};
    sb_append(&b, "", 0);
    int n = coin(r, 16) ? 100 + (int)below(r, 301) : (int)below(r, 13);
    for (int i = 0; i < n; i++) put_cp(&b, rand_cp(r));
    return b.s;
}

// A float of every kind: +-0, denormals, infinities, NaNs (quiet and
// signalling, with payloads), or any bit pattern. finite: no infinity
// or NaN (their exponent becomes the largest finite one).
static float rand_float(Rng *r, bool finite) {
    uint32_t bits = rng_u32(r), sign = bits & 0x80000000u;
    switch (below(r, 8)) {
    case 0: bits = sign; break;                               // +-0
    case 1: bits = sign | (rng_u32(r) & 0x7fffffu) | 1; break; // denormal
    case 2: bits = sign | 0x7f800000u; break;                 // +-inf
    case 3: bits = sign | 0x7f800000u | (rng_u32(r) & 0x7fffffu) | 1;
            break;                                            // NaN
    default: break;                                           // anything
    }
    if (finite && (bits & 0x7f800000u) == 0x7f800000u)
        bits = (bits & 0x807fffffu) | 0x7f000000u;
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

// A finite float that 8 significant digits do not pin down (about one
// in 70 is such): a writer printing fewer than the 9 digits a float
// needs loses it.
static float hard_float(Rng *r) {
    for (;;) {
        float x = rand_float(r, true);
        char s[32];
        snprintf(s, sizeof s, "%.8g", (double)x);
        if (strtof(s, NULL) != x) return x;
    }
}

// A float for a config field: of every finite kind, or hard to print.
static float rand_config_float(Rng *r) {
    return coin(r, 3) ? hard_float(r) : rand_float(r, true);
}

static void rand_floats(Rng *r, float *p, size_t n, bool finite) {
    for (size_t i = 0; i < n; i++) p[i] = rand_float(r, finite);
}

// Bit-for-bit equality (-0.0 is not 0.0, NaN equals the same NaN).
static bool same_float(float a, float b) {
    return memcmp(&a, &b, sizeof a) == 0;
}

// The first index where two float arrays differ in their bits, or -1.
static long first_diff(const float *a, const float *b, size_t n) {
    if (n == 0 || memcmp(a, b, n * sizeof *a) == 0) return -1;
    for (size_t i = 0; i < n; i++)
        if (!same_float(a[i], b[i])) return (long)i;
    return -1;
}

static uint32_t float_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

// A string for messages: at most 60 bytes, control characters as \xNN.
static const char *show(const char *s, char buf[static 256]) {
    size_t k = 0;
    for (size_t i = 0; s[i] && i < 60 && k < 250; i++) {
        unsigned char c = (unsigned char)s[i];
        k += (size_t)(c < 0x20 ? snprintf(buf + k, 256 - k, "\\x%02x", c)
                               : snprintf(buf + k, 256 - k, "%c", c));
    }
    buf[k] = '\0';
    return buf;
}

// ---- safetensors ------------------------------------------------------------

#define ST_SEED 1000000u

// A random valid case for st_save: tensors, their data and metadata.
typedef struct {
    int n;
    StWriteTensor t[20];
    char *names[20];
    float *data[20];
    size_t numel[20];
    int n_meta;
    char *keys[8], *values[8];
} StCase;

static bool name_taken(char *const *names, int n, const char *s) {
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0) return true;
    return false;
}

static void st_case_make(StCase *c, Rng *r) {
    memset(c, 0, sizeof *c);
    c->n = coin(r, 8) ? 0 : 1 + (int)below(r, 20);
    for (int i = 0; i < c->n; i++) {
        char *name;
        for (;;) {   // non-empty, unique, not the reserved key
            name = rand_utf8(r);
            if (name[0] && strcmp(name, "__metadata__") != 0
                && !name_taken(c->names, i, name))
                break;
            free(name);
        }
        c->names[i] = name;
        StWriteTensor *t = &c->t[i];
        t->name = name;
        t->ndim = (int)below(r, ST_MAX_DIMS + 1);
        size_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            t->shape[d] = coin(r, 10) ? 0 : 1 + below(r, 3);
            numel *= (size_t)t->shape[d];
        }
        c->numel[i] = numel;
        c->data[i] = alloc_floats(numel ? numel : 1);
        rand_floats(r, c->data[i], numel, false);
        t->data = c->data[i];
    }
    c->n_meta = (int)below(r, 9);
    for (int i = 0; i < c->n_meta; i++) {
        char *key;
        for (;;) {   // unique (the empty key is allowed)
            key = rand_utf8(r);
            if (!name_taken(c->keys, i, key)) break;
            free(key);
        }
        c->keys[i] = key;
        c->values[i] = rand_utf8(r);
    }
}

static void st_case_free(StCase *c) {
    for (int i = 0; i < c->n; i++) free(c->names[i]), free(c->data[i]);
    for (int i = 0; i < c->n_meta; i++) free(c->keys[i]), free(c->values[i]);
}

static void st_case_check(const StCase *c, const StFile *f) {
    char s1[256];
    CHECK(f->n_tensors == c->n, "%d tensors read, %d written", f->n_tensors,
          c->n);
    size_t offset = 0;   // written in order, packed
    for (int i = 0; i < c->n; i++) {
        const StWriteTensor *w = &c->t[i];
        const StTensor *t = st_find(f, w->name);
        CHECK(t != NULL, "tensor %d \"%s\" is missing", i, show(w->name, s1));
        CHECK(strcmp(t->dtype, "F32") == 0 && t->elem_size == 4,
              "tensor %d: dtype %s, elem_size %zu", i, t->dtype,
              t->elem_size);
        CHECK(t->ndim == w->ndim, "tensor %d: ndim %d, written %d", i,
              t->ndim, w->ndim);
        for (int d = 0; d < w->ndim; d++)
            CHECK(t->shape[d] == w->shape[d], "tensor %d: dim %d is %lld, "
                  "written %lld", i, d, (long long)t->shape[d],
                  (long long)w->shape[d]);
        CHECK(t->numel == c->numel[i], "tensor %d: numel %zu, written %zu",
              i, t->numel, c->numel[i]);
        CHECK(t->begin == offset && t->end == offset + 4 * c->numel[i],
              "tensor %d: bytes [%zu, %zu), written at [%zu, %zu)", i,
              t->begin, t->end, offset, offset + 4 * c->numel[i]);
        float *got = alloc_floats(c->numel[i] ? c->numel[i] : 1);
        if (c->numel[i]) memcpy(got, st_bytes(f, t), 4 * c->numel[i]);
        long k = first_diff(got, w->data, c->numel[i]);
        CHECK(k < 0, "tensor %d element %ld: bits %08x, written %08x", i, k,
              float_bits(got[k < 0 ? 0 : k]), float_bits(w->data[k < 0 ? 0
                                                                   : k]));
        free(got);
        offset += 4 * c->numel[i];
    }
    CHECK(f->data_size == offset, "data section of %zu bytes, written %zu",
          f->data_size, offset);
    CHECK(f->n_meta == c->n_meta, "%d metadata pairs read, %d written",
          f->n_meta, c->n_meta);
    for (int i = 0; i < c->n_meta; i++) {
        char s2[256];
        CHECK(strcmp(f->meta_keys[i], c->keys[i]) == 0, "metadata key %d is "
              "\"%s\", written \"%s\"", i, show(f->meta_keys[i], s1),
              show(c->keys[i], s2));
        CHECK(strcmp(f->meta_values[i], c->values[i]) == 0, "metadata "
              "value %d is \"%s\", written \"%s\"", i,
              show(f->meta_values[i], s1), show(c->values[i], s2));
    }
}

START_TEST(st_random_round_trip) {
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    snprintf(path, sizeof path, "%s/case.safetensors", d.path);
    int first, n = case_range(n_cases(3000), &first);
    for (int i = first; i < n; i++) {
        Rng r;
        case_start(&r, "safetensors round trip", ST_SEED, i);
        StCase c;
        st_case_make(&c, &r);
        Error err;
        CHECK(st_save(path, c.t, c.n, (const char *const *)c.keys,
                      (const char *const *)c.values, c.n_meta, &err) == 0,
              "st_save: %s", err.msg);
        char names[1024];
        CHECK(list_dir(d.path, names, sizeof names) == 1,
              "the folder holds %s", names);
        StFile f;
        CHECK(st_load(&f, path, &err) == 0, "st_load: %s", err.msg);
        st_case_check(&c, &f);
        st_free(&f);
        st_case_free(&c);
    }
    tmpdir_remove(&d);
}
END_TEST

// Byte sequences the strict decoder refuses: a lone continuation byte,
// overlong forms, an encoded surrogate, a value above U+10FFFF, bytes
// that never start a character, and sequences cut short.
static const char *const BAD_UTF8[] = {
    "\x80", "\xbf", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xed\xa0\x80",
    "\xed\xbf\xbf", "\xf0\x80\x80\xaf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
    "\xfe", "\xff", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xc3\x28"};
#define N_BAD_UTF8 (sizeof BAD_UTF8 / sizeof BAD_UTF8[0])

// s (malloc'd, valid UTF-8) with a bad sequence put between two of its
// characters (or at either end); the result replaces s.
static char *plant_bad_utf8(Rng *r, char *s) {
    size_t len = strlen(s), at = below(r, (uint32_t)len + 1);
    while (at > 0 && at < len && ((unsigned char)s[at] & 0xc0) == 0x80)
        at--;   // not inside a character
    const char *bad = BAD_UTF8[below(r, N_BAD_UTF8)];
    StrBuf b = {0};
    sb_append(&b, s, at);
    sb_append(&b, bad, strlen(bad));
    sb_append(&b, s + at, len - at);
    free(s);
    return b.s;
}

START_TEST(st_random_refusals) {
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    snprintf(path, sizeof path, "%s/case.safetensors", d.path);
    static const char *const KINDS[] = {
        "a duplicate name", "an empty name", "the reserved name",
        "a non-UTF-8 name", "a duplicate metadata key",
        "a non-UTF-8 metadata key", "a non-UTF-8 metadata value"};
    int first, n = case_range(n_cases(1000), &first);
    for (int i = first; i < n; i++) {
        Rng r;
        case_start(&r, "safetensors refusals", ST_SEED + 500000u, i);
        StCase c;
        st_case_make(&c, &r);
        // kinds 0-3 change a tensor's name, 4-6 the metadata; both need
        // two entries at least (a duplicate copies one onto another)
        int kind = (int)below(&r, 7);
        if (kind < 4 && c.n < 2) kind = 4 + (int)below(&r, 3);
        for (; kind >= 4 && c.n_meta < 2; c.n_meta++) {
            char *key;
            while (name_taken(c.keys, c.n_meta, key = rand_utf8(&r)))
                free(key);
            c.keys[c.n_meta] = key;
            c.values[c.n_meta] = rand_utf8(&r);
        }
        uint32_t count = (uint32_t)(kind < 4 ? c.n : c.n_meta);
        int a = (int)below(&r, count);                        // changed
        int b = (int)((a + 1 + below(&r, count - 1)) % count);  // a's twin
        char **slot = NULL;
        const char *want = NULL;
        switch (kind) {
        case 0: slot = &c.names[b], want = "appears twice"; break;
        case 1: slot = &c.names[a], want = "empty, missing or non-UTF-8";
            break;
        case 2: slot = &c.names[a], want = "\"__metadata__\" is reserved";
            break;
        case 3: slot = &c.names[a], want = "empty, missing or non-UTF-8";
            break;
        case 4: slot = &c.keys[b], want = "appears twice"; break;
        case 5: slot = &c.keys[a], want = "missing or not UTF-8"; break;
        default: slot = &c.values[a], want = "missing or not UTF-8"; break;
        }
        char *planted = kind == 0 ? strdup(c.names[a])
                      : kind == 1 ? strdup("")
                      : kind == 2 ? strdup("__metadata__")
                      : kind == 4 ? strdup(c.keys[a])
                      : plant_bad_utf8(&r, strdup(*slot));
        free(*slot);
        *slot = planted;
        if (kind < 4) c.t[slot - c.names].name = planted;
        Error err = {"(no message)"};
        int rc = st_save(path, c.t, c.n, (const char *const *)c.keys,
                         (const char *const *)c.values, c.n_meta, &err);
        CHECK(rc == -1, "%s was accepted", KINDS[kind]);
        CHECK(strstr(err.msg, path) && strstr(err.msg, want)
              && !strchr(err.msg, '\n'), "%s: got \"%s\", want one line "
              "naming the file and saying \"%s\"", KINDS[kind], err.msg,
              want);
        char names[1024];
        CHECK(list_dir(d.path, names, sizeof names) == 0,
              "%s left %s in the folder", KINDS[kind], names);
        st_case_free(&c);
    }
    tmpdir_remove(&d);
}
END_TEST

// ---- JSON -------------------------------------------------------------------

#define JSON_SEED 2000000u

// The value a case writes: what the parsed tree must equal.
typedef struct Val {
    JsonType type;
    bool b;
    bool is_int;          // a number written as an integer
    int64_t i;
    double d;
    char *s;              // a string, NUL-terminated
    size_t len;
    int n;                // items (and keys of an object)
    struct Val *items;
    char **keys;
} Val;

static void val_free(Val *v) {
    free(v->s);
    for (int k = 0; k < v->n; k++) {
        val_free(&v->items[k]);
        if (v->keys) free(v->keys[k]);
    }
    free(v->items);
    free(v->keys);
}

// A random 64-bit integer: small, next to +-2^53, at the ends of the
// range, or any.
static int64_t rand_int(Rng *r) {
    uint64_t u = (uint64_t)rng_u32(r) << 32 | rng_u32(r);
    switch (below(r, 6)) {
    case 0: return (int64_t)below(r, 2001) - 1000;
    case 1: return ((int64_t)1 << 53) + (int64_t)below(r, 9) - 4;
    case 2: return -((int64_t)1 << 53) - (int64_t)below(r, 9) + 4;
    case 3: return coin(r, 2) ? INT64_MAX - (int64_t)below(r, 3)
                              : INT64_MIN + (int64_t)below(r, 3);
    default: return (int64_t)u;
    }
}

// A random finite double: +-0, denormals, or any finite bit pattern.
static double rand_double(Rng *r) {
    uint64_t u = (uint64_t)rng_u32(r) << 32 | rng_u32(r);
    uint64_t sign = u & 0x8000000000000000ull;
    switch (below(r, 6)) {
    case 0: u = sign; break;
    case 1: u = sign | ((u & 0xfffffffffffffull) | 1); break;
    case 2: {   // a short decimal such as -12.5 or 0.001
        double x = (double)((int)below(r, 20001) - 10000);
        for (int k = (int)below(r, 5); k > 0; k--) x /= 10;
        return x;
    }
    default: break;
    }
    if ((u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
        u &= ~0x0010000000000000ull;   // not inf or NaN
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

static void rand_val(Rng *r, Val *v, int depth) {
    memset(v, 0, sizeof *v);
    uint32_t kinds = depth < 4 ? 8 : 6;   // containers a few levels deep
    switch (below(r, kinds)) {
    case 0: v->type = JSON_NULL; break;
    case 1: v->type = JSON_BOOL, v->b = coin(r, 2); break;
    case 2: v->type = JSON_NUMBER, v->is_int = true, v->i = rand_int(r);
        break;
    case 3: v->type = JSON_NUMBER, v->d = rand_double(r); break;
    case 4: case 5:
        v->type = JSON_STRING, v->s = rand_utf8(r), v->len = strlen(v->s);
        break;
    default:
        v->type = coin(r, 2) ? JSON_ARRAY : JSON_OBJECT;
        v->n = (int)below(r, 6);
        v->items = xcalloc((size_t)v->n + 1, sizeof *v->items);
        if (v->type == JSON_OBJECT)
            v->keys = xcalloc((size_t)v->n + 1, sizeof *v->keys);
        for (int k = 0; k < v->n; k++) {
            if (v->keys) {
                char *key;
                for (;;) {   // unique keys
                    key = rand_utf8(r);
                    if (!name_taken(v->keys, k, key)) break;
                    free(key);
                }
                v->keys[k] = key;
            }
            rand_val(r, &v->items[k], depth + 1);
        }
        break;
    }
}

// Whitespace the grammar allows between tokens: usually none.
static void rand_ws(Rng *r, StrBuf *b) {
    while (coin(r, 4)) sb_append(b, &" \t\n\r"[below(r, 4)], 1);
}

static void write_val(Rng *r, StrBuf *b, const Val *v) {
    rand_ws(r, b);
    switch (v->type) {
    case JSON_NULL: sb_printf(b, "null"); break;
    case JSON_BOOL: sb_printf(b, "%s", v->b ? "true" : "false"); break;
    case JSON_NUMBER:
        if (v->is_int) sb_printf(b, "%" PRId64, v->i);
        else sb_printf(b, "%.17g", v->d);
        break;
    case JSON_STRING: sb_json_string(b, v->s, v->len); break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        sb_append(b, v->type == JSON_ARRAY ? "[" : "{", 1);
        for (int k = 0; k < v->n; k++) {
            if (k) {
                rand_ws(r, b);
                sb_append(b, ",", 1);
            }
            if (v->keys) {
                rand_ws(r, b);
                sb_json_string(b, v->keys[k], strlen(v->keys[k]));
                rand_ws(r, b);
                sb_append(b, ":", 1);
            }
            write_val(r, b, &v->items[k]);
        }
        rand_ws(r, b);
        sb_append(b, v->type == JSON_ARRAY ? "]" : "}", 1);
        break;
    }
    rand_ws(r, b);
}

// Compares a parsed tree with the value written; where says which part
// ("$[2].{1}" is the second key of the third item).
static void json_check(const Val *want, const Json *got, char *where,
                       size_t used, size_t size) {
    char s1[256], s2[256];
    CHECK(got->type == want->type, "%s: %s, written %s", where,
          json_type_name(got->type), json_type_name(want->type));
    switch (want->type) {
    case JSON_NULL: break;
    case JSON_BOOL:
        CHECK(got->b == want->b, "%s: %d, written %d", where, got->b,
              want->b);
        break;
    case JSON_NUMBER:
        if (want->is_int) {
            int64_t x = 0;
            CHECK(json_int64(got, &x) == 0 && x == want->i, "%s: \"%s\" "
                  "reads as %" PRId64 ", written %" PRId64, where, got->str,
                  x, want->i);
            CHECK(got->num == (double)want->i, "%s: %.17g, written %"
                  PRId64, where, got->num, want->i);
        } else {
            CHECK(memcmp(&got->num, &want->d, sizeof got->num) == 0,
                  "%s: \"%s\" reads as %.17g, written %.17g", where,
                  got->str, got->num, want->d);
        }
        break;
    case JSON_STRING:
        CHECK(got->str_len == want->len
              && memcmp(got->str, want->s, want->len + 1) == 0,
              "%s: \"%s\" (%zu bytes), written \"%s\" (%zu)", where,
              show(got->str, s1), got->str_len, show(want->s, s2),
              want->len);
        break;
    case JSON_ARRAY:
    case JSON_OBJECT:
        CHECK(got->n == want->n, "%s: %d items, written %d", where, got->n,
              want->n);
        for (int k = 0; k < want->n; k++) {
            if (want->keys)
                CHECK(strcmp(got->keys[k], want->keys[k]) == 0, "%s: key %d "
                      "is \"%s\", written \"%s\"", where, k,
                      show(got->keys[k], s1), show(want->keys[k], s2));
            int len = snprintf(where + used, size - used,
                               want->keys ? ".{%d}" : "[%d]", k);
            json_check(&want->items[k], &got->items[k], where,
                       used + (size_t)len, size);
            where[used] = '\0';
        }
        break;
    }
}

START_TEST(json_random_round_trip) {
    int first, n = case_range(n_cases(3000), &first);
    for (int i = first; i < n; i++) {
        Rng r;
        case_start(&r, "JSON round trip", JSON_SEED, i);
        Val v;
        rand_val(&r, &v, 0);
        StrBuf b = {0};
        write_val(&r, &b, &v);
        Error err;
        Json *j = json_parse(b.s, b.len, &err);
        CHECK(j != NULL, "%s in %.200s", err.msg, b.s);
        char where[256] = "$";
        json_check(&v, j, where, 1, sizeof where);
        json_free(j);
        sb_free(&b);
        val_free(&v);
    }
}
END_TEST

// ---- chapter 5: the GPT's checkpoint ----------------------------------------

#define GPT_SEED 3000000u

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

// A vocabulary of 1 to 40 distinct random code points, ascending.
static void rand_vocab(Rng *r, Vocab *v) {
    int n = 1 + (int)below(r, 40);
    v->chars = xmalloc((size_t)n * sizeof *v->chars);
    for (int i = 0; i < n; i++) v->chars[i] = rand_cp(r);
    qsort(v->chars, (size_t)n, sizeof *v->chars, cmp_u32);
    int k = 1;
    for (int i = 1; i < n; i++)
        if (v->chars[i] != v->chars[k - 1]) v->chars[k++] = v->chars[i];
    v->size = k;
}

// A dropout: 0, the smallest denormal, the largest float below 1, a
// round decimal, a float hard to print, or any float in [0, 1).
static float rand_dropout(Rng *r) {
    float x;
    switch (below(r, 6)) {
    case 0: return 0.0f;
    case 1: return 1e-45f;
    case 2: return 0.99999994f;
    case 3: return (float)below(r, 10) / 10;
    case 4:
        do x = fabsf(hard_float(r));
        while (!(x < 1));
        return x;
    default: return rng_uniform(r);
    }
}

static GptConfig rand_gpt_config(Rng *r, int vocab_size) {
    GptConfig c = {0};
    c.vocab_size = vocab_size;
    c.block_size = 1 + (int)below(r, 6);
    c.n_layer = 1 + (int)below(r, 3);
    c.n_head = 1 + (int)below(r, 3);
    c.n_embd = c.n_head * (1 + (int)below(r, 4));
    c.n_ffn = 1 + (int)below(r, 16);
    c.dropout = rand_dropout(r);
    c.bias = coin(r, 2);
    c.positional = coin(r, 2) ? POS_LEARNED : POS_SINUSOIDAL;
    return c;
}

static void gpt_config_same(const GptConfig *x, const GptConfig *y) {
    CHECK(x->vocab_size == y->vocab_size && x->block_size == y->block_size
          && x->n_layer == y->n_layer && x->n_head == y->n_head
          && x->n_embd == y->n_embd && x->n_ffn == y->n_ffn
          && same_float(x->dropout, y->dropout) && x->bias == y->bias
          && x->positional == y->positional,
          "config V=%d block=%d L=%d NH=%d C=%d F=%d dropout=%a bias=%d "
          "pos=%d came back as V=%d block=%d L=%d NH=%d C=%d F=%d "
          "dropout=%a bias=%d pos=%d", x->vocab_size, x->block_size,
          x->n_layer, x->n_head, x->n_embd, x->n_ffn, (double)x->dropout,
          x->bias, x->positional, y->vocab_size, y->block_size, y->n_layer,
          y->n_head, y->n_embd, y->n_ffn, (double)y->dropout, y->bias,
          y->positional);
}

static void gpt_same(const Gpt *x, const Gpt *y) {
    gpt_config_same(&x->cfg, &y->cfg);
    CHECK(x->num_params == y->num_params, "%zu parameters, written %zu",
          y->num_params, x->num_params);
    long k = first_diff(x->params, y->params, x->num_params);
    CHECK(k < 0, "parameter %ld: bits %08x, written %08x", k,
          float_bits(y->params[k < 0 ? 0 : k]),
          float_bits(x->params[k < 0 ? 0 : k]));
}

static void vocab_same(const Vocab *x, const Vocab *y) {
    CHECK(x->size == y->size, "vocabulary of %d characters, written %d",
          y->size, x->size);
    for (int i = 0; i < x->size; i++)
        CHECK(x->chars[i] == y->chars[i], "vocabulary character %d: U+%04X, "
              "written U+%04X", i, y->chars[i], x->chars[i]);
}

// A step to save: none (-1), 0, the largest allowed, or any.
static int rand_step(Rng *r) {
    switch (below(r, 5)) {
    case 0: return -1;
    case 1: return 0;
    case 2: return INT32_MAX;
    default: return (int)(rng_u32(r) >> 1);
    }
}

START_TEST(gpt_checkpoint_random_round_trip) {
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    snprintf(path, sizeof path, "%s/model.safetensors", d.path);
    int first, n = case_range(n_cases(500), &first);
    for (int i = first; i < n; i++) {
        Rng r;
        case_start(&r, "GPT checkpoint round trip", GPT_SEED, i);
        Vocab v;
        rand_vocab(&r, &v);
        GptConfig cfg = rand_gpt_config(&r, v.size);
        Gpt m, back;
        Vocab vb;
        Error err;
        CHECK(gpt_create(&m, &cfg, &err) == 0, "gpt_create: %s", err.msg);
        rand_floats(&r, m.params, m.num_params, true);
        int step = rand_step(&r), got = -7;
        bool plain = step < 0 && coin(&r, 2);   // checkpoint_save itself
        int rc = plain ? checkpoint_save(path, &m, &v, &err)
                       : checkpoint_save_step(path, &m, &v, step, &err);
        CHECK(rc == 0, "saving: %s", err.msg);
        rc = coin(&r, 4) ? checkpoint_load(path, &back, &vb, &err)
           : checkpoint_load_step(path, &back, &vb, &got, &err);
        CHECK(rc == 0, "loading: %s", err.msg);
        gpt_same(&m, &back);
        vocab_same(&v, &vb);
        CHECK(got == -7 || got == (step < 0 ? 0 : step), "step %d, saved %d",
              got, step);
        gpt_free(&back);
        vocab_free(&vb);

        // U+0000 cannot be stored (the metadata are C strings): the save
        // must refuse it rather than write a file that does not load.
        if (i % 10 == 0) {
            v.chars[0] = 0;
            unlink(path);
            rc = checkpoint_save_step(path, &m, &v, step, &err);
            char names[1024];
            CHECK(rc == -1 && strstr(err.msg, "U+0000")
                  && !strchr(err.msg, '\n'), "a vocabulary with U+0000: "
                  "%s", rc ? err.msg : "saved");
            CHECK(list_dir(d.path, names, sizeof names) == 0,
                  "a refused save left %s", names);
        }
        gpt_free(&m);
        vocab_free(&v);
    }
    tmpdir_remove(&d);
}
END_TEST

// ---- chapter 6: the training state ------------------------------------------

#define TRAIN_SEED 4000000u

// The training state holds only what the flags allow (train_state_load
// refuses the rest): a config float in [lo, hi], and a count of any size
// in [lo, 1e9], the largest a count may be.
static float rand_config_in(Rng *r, float lo, float hi) {
    for (;;) {
        float x = fabsf(rand_config_float(r));
        if (x >= lo && x <= hi) return x;
    }
}

static int rand_count(Rng *r, int lo) {
    if (coin(r, 16)) return 1000000000;
    return lo + (int)((rng_u32(r) >> (1 + below(r, 31))) % 1000000000u);
}

static TrainConfig rand_train_config(Rng *r) {
    TrainConfig c;
    memset(&c, 0, sizeof c);   // the padding too: compared field by field
    c.batch = 1 + (int)below(r, 3);
    c.steps = rand_count(r, 0);
    c.lr = rand_config_in(r, 1e-30f, 1e30f);
    c.min_lr = rand_config_in(r, 0, 1e30f);
    c.warmup = rand_count(r, 0);
    c.decay_steps = rand_count(r, 0);
    c.adamw = (AdamWConfig){rand_config_in(r, 0, 0.999999f),
                            rand_config_in(r, 0, 0.999999f),
                            rand_config_in(r, 1e-30f, 1),
                            rand_config_in(r, 0, 1e30f)};
    c.grad_clip = rand_config_in(r, 0, 1e30f);
    c.eval_every = rand_count(r, 0);
    c.eval_iters = rand_count(r, 1);
    c.seed = coin(r, 8) ? UINT64_MAX
                        : (uint64_t)rng_u32(r) << 32 | rng_u32(r);
    return c;
}

static void train_config_same(const TrainConfig *x, const TrainConfig *y) {
    const float fx[8] = {x->lr, x->min_lr, x->adamw.beta1, x->adamw.beta2,
                         x->adamw.eps, x->adamw.weight_decay, x->grad_clip};
    const float fy[8] = {y->lr, y->min_lr, y->adamw.beta1, y->adamw.beta2,
                         y->adamw.eps, y->adamw.weight_decay, y->grad_clip};
    static const char *const names[7] = {"lr", "min_lr", "beta1", "beta2",
                                         "eps", "weight_decay", "grad_clip"};
    for (int k = 0; k < 7; k++)
        CHECK(same_float(fx[k], fy[k]), "%s %a, saved %a", names[k],
              (double)fy[k], (double)fx[k]);
    CHECK(x->batch == y->batch && x->steps == y->steps
          && x->warmup == y->warmup && x->decay_steps == y->decay_steps
          && x->eval_every == y->eval_every && x->eval_iters == y->eval_iters
          && x->seed == y->seed && x->window == y->window,
          "batch %d steps %d warmup %d decay %d eval_every %d eval_iters "
          "%d seed %" PRIu64 " window %d came back as %d %d %d %d %d %d %"
          PRIu64 " %d", x->batch, x->steps, x->warmup, x->decay_steps,
          x->eval_every, x->eval_iters, x->seed, x->window, y->batch,
          y->steps, y->warmup, y->decay_steps, y->eval_every, y->eval_iters,
          y->seed, y->window);
}

static void rand_rng_state(Rng *r, Rng *out) {
    for (int k = 0; k < RNG_N; k++) out->state[k] = rng_u32(r);
    out->next = coin(r, 4) ? (coin(r, 2) ? 0 : RNG_N)
                           : (int)below(r, RNG_N + 1);
}

static void rng_same(const Rng *x, const Rng *y, const char *name) {
    CHECK(x->next == y->next, "%s next %d, saved %d", name, y->next,
          x->next);
    for (int k = 0; k < RNG_N; k++)
        CHECK(x->state[k] == y->state[k], "%s state word %d: %08x, saved "
              "%08x", name, k, y->state[k], x->state[k]);
}

// A step for a training state: 0, the largest, or any.
static int rand_train_step(Rng *r) {
    int s = rand_step(r);
    return s < 0 ? (int)below(r, 100) : s > 1000000000 ? 1000000000 : s;
}

START_TEST(train_state_random_round_trip) {
    TmpDir d;
    tmpdir_make(&d);
    char dir[128];
    snprintf(dir, sizeof dir, "%s/run", d.path);
    int first, n = case_range(n_cases(100), &first);
    for (int i = first; i < n; i++) {
        Rng r;
        case_start(&r, "training state round trip", TRAIN_SEED, i);
        Vocab v;
        rand_vocab(&r, &v);
        GptConfig mc = rand_gpt_config(&r, v.size);
        TrainConfig tc = rand_train_config(&r);
        Gpt m;
        Error err;
        CHECK(gpt_create(&m, &mc, &err) == 0, "gpt_create: %s", err.msg);
        rand_floats(&r, m.params, m.num_params, true);
        GptTrain g;
        Trainer t;
        CHECK(gpt_train_init(&g, &m, &v, tc.batch, mc.block_size, &err) == 0,
              "gpt_train_init: %s", err.msg);
        TrainModel tm = gpt_train_model(&g);
        CHECK(trainer_init(&t, &tm, &tc, &err) == 0, "trainer_init: %s",
              err.msg);
        // Saved twice, each time with another config and state: the
        // second save must replace the first.
        for (int save = 0; save < 2; save++) {
            t.cfg = rand_train_config(&r);
            rand_floats(&r, t.m, tm.num_params, false);
            rand_floats(&r, t.v, tm.num_params, false);
            rand_floats(&r, g.model.params, tm.num_params, true);
            rand_rng_state(&r, &t.data_rng);
            rand_rng_state(&r, &t.drop_rng);
            t.step = rand_train_step(&r);
            // (a window, chapter 9's, of the block or shorter)
            t.cfg.window = coin(&r, 2) ? 0
                           : 1 + (int)below(&r, (uint32_t)mc.block_size);
            CHECK(trainer_save(&t, dir, &err) == 0, "save %d: %s", save + 1,
                  err.msg);
        }
        char names[1024], want[1024];
        snprintf(want, sizeof want, "model.safetensors state-%d.safetensors",
                 t.step);
        CHECK(list_dir(dir, names, sizeof names) == 2
              && strcmp(names, want) == 0, "the run's folder holds %s, "
              "expected %s", names, want);

        Trainer t2;
        GptTrain g2;
        CHECK(gpt_trainer_resume(&t2, &g2, dir, 0, 1, &err) == 0, "resuming: %s",
              err.msg);
        train_config_same(&t.cfg, &t2.cfg);
        CHECK(t2.step == t.step, "step %d, saved %d", t2.step, t.step);
        rng_same(&t.data_rng, &t2.data_rng, "data_rng");
        rng_same(&t.drop_rng, &t2.drop_rng, "drop_rng");
        CHECK(t2.model.num_params == tm.num_params, "%zu parameters, saved "
              "%zu", t2.model.num_params, tm.num_params);
        long k = first_diff(t.m, t2.m, tm.num_params);
        CHECK(k < 0, "first moment %ld differs", k);
        k = first_diff(t.v, t2.v, tm.num_params);
        CHECK(k < 0, "second moment %ld differs", k);
        gpt_same(&g.model, &g2.model);
        vocab_same(&g.vocab, &g2.vocab);
        CHECK(g2.B == t.cfg.batch, "batch of %d sequences, saved %d", g2.B,
              t.cfg.batch);
        int T = t.cfg.window ? t.cfg.window : mc.block_size;
        CHECK(g2.T == T, "windows of %d tokens, saved %d", g2.T, T);
        trainer_free(&t2);
        gpt_train_free(&g2);
        trainer_free(&t);
        gpt_train_free(&g);
        remove_tree(dir);
    }
    tmpdir_remove(&d);
}
END_TEST

// ---- chapter 7: the BPE tokenizer -------------------------------------------

#define BPE_SEED 5000000u

// A lexicon: 1 to 40 words of 1 to 12 characters of an alphabet.
typedef struct {
    int n;
    char *words[40];
} Lexicon;

static void put_word(Rng *r, StrBuf *b, const uint32_t *alpha, int n_alpha) {
    int len = 1 + (int)below(r, 12);
    for (int k = 0; k < len; k++)
        put_cp(b, alpha[below(r, (uint32_t)n_alpha)]);
}

static void rand_lexicon(Rng *r, Lexicon *lx, const uint32_t *alpha,
                         int n_alpha) {
    lx->n = 1 + (int)below(r, 40);
    for (int i = 0; i < lx->n; i++) {
        StrBuf b = {0};
        put_word(r, &b, alpha, n_alpha);
        lx->words[i] = b.s;
    }
}

static void lexicon_free(Lexicon *lx) {
    for (int i = 0; i < lx->n; i++) free(lx->words[i]);
}

// A random text: lines of words, mostly from the lexicon and the first
// ones most often (so that words repeat and hundreds of merges happen),
// now and then a new word of alpha; one or more spaces between words,
// now and then one at either end of a line, now and then an empty line.
static char *rand_text(Rng *r, const Lexicon *lx, const uint32_t *alpha,
                       int n_alpha, int n_lines) {
    StrBuf b = {0};
    sb_append(&b, "", 0);
    for (int l = 0; l < n_lines; l++) {
        if (coin(r, 6)) sb_append(&b, " ", 1);
        int words = (int)below(r, 8);
        for (int w = 0; w < words; w++) {
            if (w) {
                sb_append(&b, " ", 1);
                while (coin(r, 8)) sb_append(&b, " ", 1);
            }
            uint32_t i = below(r, (uint32_t)lx->n);
            uint32_t j = below(r, (uint32_t)lx->n);
            if (j < i) i = j;
            if (coin(r, 8)) put_word(r, &b, alpha, n_alpha);
            else sb_append(&b, lx->words[i], strlen(lx->words[i]));
        }
        if (coin(r, 6)) sb_append(&b, " ", 1);
        sb_append(&b, "\n", 1);
    }
    return b.s;
}

// An alphabet of 1 to 16 random characters (no space, newline or NUL).
static int rand_alphabet(Rng *r, uint32_t *alpha) {
    int n = 1 + (int)below(r, 16);
    for (int i = 0; i < n; i++) {
        uint32_t c;
        do c = rand_cp(r);
        while (c == ' ' || c == '\n');
        alpha[i] = c;
    }
    return n;
}

static void bpe_same(const Bpe *x, const Bpe *y) {
    CHECK(x->n_chars == y->n_chars && x->n_merges == y->n_merges
          && x->vocab_size == y->vocab_size, "%d characters, %d merges, V %d;"
          " learnt %d, %d, %d", y->n_chars, y->n_merges, y->vocab_size,
          x->n_chars, x->n_merges, x->vocab_size);
    for (int i = 0; i < x->n_chars; i++)
        CHECK(x->chars[i] == y->chars[i], "character %d: U+%04X, learnt "
              "U+%04X", i, y->chars[i], x->chars[i]);
    for (int i = 0; i < 2 * x->n_merges; i++)
        CHECK(x->merges[i] == y->merges[i], "merge %d: (%d, %d), learnt "
              "(%d, %d)", i / 2, y->merges[i & ~1], y->merges[i | 1],
              x->merges[i & ~1], x->merges[i | 1]);
}

START_TEST(bpe_random_round_trip) {
    int first, n = case_range(n_cases(500), &first);
    for (int i = first; i < n; i++) {
        Rng r;
        case_start(&r, "BPE round trip", BPE_SEED, i);
        uint32_t alpha[16];
        int n_alpha = rand_alphabet(&r, alpha);
        Lexicon lx;
        rand_lexicon(&r, &lx, alpha, n_alpha);
        int n_texts = 1 + (int)below(&r, 2);
        char *texts[2];
        size_t lens[2];
        for (int k = 0; k < n_texts; k++) {
            texts[k] = rand_text(&r, &lx, alpha, n_alpha,
                                 1 + (int)below(&r, 30));
            lens[k] = strlen(texts[k]);
        }
        Bpe t, back;
        Error err;
        // up to 400 merges: ids of 3 digits in the string form
        int merges = coin(&r, 8) ? 0 : (int)below(&r, 400);
        int rc = bpe_learn(&t, (const char *const *)texts, lens, n_texts,
                           merges, &err);
        if (rc != 0) {   // only a text without a character is refused
            bool empty = true;
            for (int k = 0; k < n_texts; k++)
                empty = empty && strspn(texts[k], " \n") == lens[k];
            CHECK(empty, "bpe_learn: %s", err.msg);
            for (int k = 0; k < n_texts; k++) free(texts[k]);
            lexicon_free(&lx);
            continue;
        }
        size_t len, len2;
        char *s = bpe_to_string(&t, &len);
        CHECK(len == strlen(s), "bpe_to_string: length %zu, the string %zu",
              len, strlen(s));
        CHECK(bpe_from_string(&back, s, &err) == 0, "bpe_from_string: %s",
              err.msg);
        bpe_same(&t, &back);
        char *s2 = bpe_to_string(&back, &len2);
        CHECK(len2 == len && memcmp(s, s2, len + 1) == 0, "the string "
              "read back is written differently: %.100s", s2);
        // Lines of the training alphabet, with now and then a character
        // outside it (it becomes <unk>).
        for (int k = 0; k < 8; k++) {
            uint32_t more[17];
            memcpy(more, alpha, sizeof alpha);
            more[n_alpha] = rand_cp(&r);
            char *line = rand_text(&r, &lx, more, n_alpha + coin(&r, 3), 1);
            size_t ln = strlen(line) - 1;   // without its '\n'
            int *ids = xmalloc((ln + 1) * sizeof *ids);
            int *ids2 = xmalloc((ln + 1) * sizeof *ids2);
            int a = bpe_encode(&t, line, ln, ids, &err);
            CHECK(a >= 0, "encoding: %s", err.msg);
            int b = bpe_encode(&back, line, ln, ids2, &err);
            CHECK(b == a && memcmp(ids, ids2, (size_t)a * sizeof *ids) == 0,
                  "\"%.*s\": %d ids, learnt %d (or other ids)", (int)ln,
                  line, b, a);
            size_t d1, d2;
            char *x = bpe_decode(&t, ids, a, &d1, &err);
            CHECK(x != NULL, "decoding: %s", err.msg);
            char *y = bpe_decode(&back, ids2, b, &d2, &err);
            CHECK(y != NULL, "decoding: %s", err.msg);
            CHECK(d1 == d2 && memcmp(x, y, d1) == 0, "\"%.*s\" decodes to "
                  "\"%s\", learnt \"%s\"", (int)ln, line, y, x);
            bool known = true;
            for (int c = 0; c < a; c++) known = known && ids[c] != BPE_UNK;
            CHECK(!known || (d1 == ln && memcmp(x, line, ln) == 0),
                  "\"%.*s\" decodes to \"%s\"", (int)ln, line, x);
            free(x), free(y), free(ids), free(ids2), free(line);
        }
        free(s), free(s2);
        bpe_free(&t), bpe_free(&back);
        for (int k = 0; k < n_texts; k++) free(texts[k]);
        lexicon_free(&lx);
    }
}
END_TEST

// ---- chapter 7: the translation checkpoint ----------------------------------

#define S2S_SEED 6000000u

static Seq2SeqConfig rand_s2s_config(Rng *r) {
    Seq2SeqConfig c;
    memset(&c, 0, sizeof c);
    c.src_vocab = 1 + (int)below(r, 30);
    c.tie = coin(r, 2);
    c.tgt_vocab = c.tie ? c.src_vocab : 1 + (int)below(r, 30);
    int small = c.src_vocab < c.tgt_vocab ? c.src_vocab : c.tgt_vocab;
    c.pad = (int)below(r, (uint32_t)small);
    c.max_len = 1 + (int)below(r, 8);
    c.n_enc = 1 + (int)below(r, 2);
    c.n_dec = 1 + (int)below(r, 2);
    c.n_head = 1 + (int)below(r, 3);
    c.n_embd = c.n_head * (1 + (int)below(r, 3));
    c.n_ffn = 1 + (int)below(r, 12);
    c.dropout = rand_dropout(r);
    c.bias = coin(r, 2);
    const Activation acts[3] = {RELU, GELU_EXACT, GELU_TANH};
    c.act = acts[below(r, 3)];
    return c;
}

static void s2s_config_same(const Seq2SeqConfig *x, const Seq2SeqConfig *y) {
    CHECK(x->src_vocab == y->src_vocab && x->tgt_vocab == y->tgt_vocab
          && x->max_len == y->max_len && x->n_enc == y->n_enc
          && x->n_dec == y->n_dec && x->n_head == y->n_head
          && x->n_embd == y->n_embd && x->n_ffn == y->n_ffn
          && same_float(x->dropout, y->dropout) && x->bias == y->bias
          && x->tie == y->tie && x->act == y->act && x->pad == y->pad,
          "config Vs=%d Vt=%d len=%d enc=%d dec=%d NH=%d C=%d F=%d "
          "dropout=%a bias=%d tie=%d act=%d pad=%d came back as Vs=%d "
          "Vt=%d len=%d enc=%d dec=%d NH=%d C=%d F=%d dropout=%a bias=%d "
          "tie=%d act=%d pad=%d", x->src_vocab, x->tgt_vocab, x->max_len,
          x->n_enc, x->n_dec, x->n_head, x->n_embd, x->n_ffn,
          (double)x->dropout, x->bias, x->tie, (int)x->act, x->pad,
          y->src_vocab, y->tgt_vocab, y->max_len, y->n_enc, y->n_dec,
          y->n_head, y->n_embd, y->n_ffn, (double)y->dropout, y->bias,
          y->tie, (int)y->act, y->pad);
}

START_TEST(seq2seq_checkpoint_random_round_trip) {
    TmpDir d;
    tmpdir_make(&d);
    char path[128];
    snprintf(path, sizeof path, "%s/model.safetensors", d.path);
    int first, n = case_range(n_cases(300), &first);
    for (int i = first; i < n; i++) {
        Rng r;
        case_start(&r, "seq2seq checkpoint round trip", S2S_SEED, i);
        Seq2SeqConfig cfg = rand_s2s_config(&r);
        Seq2Seq m, back;
        Error err;
        CHECK(seq2seq_create(&m, &cfg, &err) == 0, "seq2seq_create: %s",
              err.msg);
        rand_floats(&r, m.params, m.num_params, true);
        int step = rand_step(&r), got = -7;
        char *vocab = coin(&r, 3) ? NULL : rand_utf8(&r), *got_vocab = NULL;
        CHECK(seq2seq_save(path, &m, step, vocab, &err) == 0, "saving: %s",
              err.msg);
        CHECK(seq2seq_load(path, &back, &got, &got_vocab, &err) == 0,
              "loading: %s", err.msg);
        s2s_config_same(&m.cfg, &back.cfg);
        CHECK(back.num_params == m.num_params, "%zu parameters, saved %zu",
              back.num_params, m.num_params);
        long k = first_diff(m.params, back.params, m.num_params);
        CHECK(k < 0, "parameter %ld (of %zu): bits %08x, saved %08x", k,
              m.num_params, float_bits(back.params[k < 0 ? 0 : k]),
              float_bits(m.params[k < 0 ? 0 : k]));
        CHECK(got == (step < 0 ? 0 : step), "step %d, saved %d", got, step);
        char s1[256], s2[256];
        CHECK(vocab ? got_vocab && strcmp(vocab, got_vocab) == 0
                    : got_vocab == NULL, "vocab \"%s\", saved \"%s\"",
              got_vocab ? show(got_vocab, s1) : "(none)",
              vocab ? show(vocab, s2) : "(none)");
        free(vocab), free(got_vocab);
        seq2seq_free(&m), seq2seq_free(&back);
    }
    tmpdir_remove(&d);
}
END_TEST

Suite *roundtrip_suite(void) {
    Suite *s = suite_create("roundtrip");
    TCase *tc = tcase_new("formats", "common");
    tcase_add_unchecked_fixture(tc, base_dir_make, base_dir_remove);
    tcase_add_test(tc, st_random_round_trip);
    tcase_add_test(tc, st_random_refusals);
    tcase_add_test(tc, json_random_round_trip);
    suite_add_tcase(s, tc);
    tc = tcase_new("checkpoints", "ch5 ch6 ch7");
    tcase_add_unchecked_fixture(tc, base_dir_make, base_dir_remove);
    tcase_add_test(tc, gpt_checkpoint_random_round_trip);
    tcase_add_test(tc, train_state_random_round_trip);
    tcase_add_test(tc, bpe_random_round_trip);
    tcase_add_test(tc, seq2seq_checkpoint_random_round_trip);
    suite_add_tcase(s, tc);
    return s;
}
