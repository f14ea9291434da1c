// Tests of chapter 9's GPT-2 tokenizer (tokenizer.c). The expected ids
// are tiktoken's (tests/reference/gen_ch9_tokenizer.py builds tiktoken's
// Encoding from the same files with GPT-2's pattern), never this code's.
// What each catches:
//
// tok_fixture_loads: the trained tokenizer's sizes, <|endoftext|>, and
//   ids 0..255 in GPT-2's order (the space is 220, '\n' 198, '!' 0).
// tok_openai_names: the same files named encoder.json and vocab.bpe (a
//   folder with both pairs reads vocab.json); a folder with neither, or
//   one file of a pair missing, is refused with one line.
// tok_catalogue: every case of the hard-text catalogue (emoji, CJK,
//   combining marks, right-to-left scripts, CRLF, tabs, spaces before a
//   word, long digit runs, contractions in capitals, other numbers and
//   spaces, control characters, <|endoftext|> allowed or not, invalid
//   UTF-8, 40 random strings) encodes to tiktoken's ids and decodes back
//   to its bytes. A scanner rule off by one character (the space a run
//   of white space leaves to the word, 'S taken as a contraction, a
//   U+00A0 or U+3000 not taken as space, a combining mark taken as a
//   letter) fails it.
// tok_corpora: all of Tiny Shakespeare and Multi30k's train.de and
//   train.en give tiktoken's ids (count, then a hash of each chunk of
//   10,000 ids: the message names the first chunk that differs) and
//   decode back byte for byte.
// tok_pieces_by_hand: the scanner's pieces of strings worked out by hand
//   from the pattern; the pieces always cover the text in order.
// tok_round_trip_bytes: random bytes of every value (invalid UTF-8 most
//   of the time) encode and decode back; each piece is then encoded
//   alone and gives the same ids (merges never cross pieces).
// tok_special: <|endoftext|> only when allowed, at the start, the end,
//   twice in a row, next to white space (the text around it is cut on
//   its own); a tokenizer without it encodes the text as ordinary.
// tok_merge_rank_api: the look-up exercise 9.2 uses, by hand.
// tok_decode_errors: an id outside the vocabulary is refused.
// tok_bad_files: missing files, not JSON, not an object, ids that are
//   not integers in [0, V) or shared, characters that stand for no byte,
//   a missing byte, merges that are malformed, name unknown tokens, make
//   tokens the vocabulary lacks or repeat: each one clear line. Then
//   every prefix of merges.txt and random byte changes of both files:
//   read or refused, never a crash.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_util.h"
#include "mem.h"
#include "rng.h"
#include "tok_fixture.h"
#include "tokenizer.h"
#include "utf8.h"

// Encodes n bytes, checks the ids against want (when not NULL) and that
// they decode back to the bytes; returns the number of ids.
static long encode_check(Gpt2Tokenizer *t, const char *what, const char *s,
                         size_t n, bool allow, const int *want, int n_want) {
    Error err;
    int *ids = xmalloc((n + 1) * sizeof *ids);
    long k = gpt2_tok_encode(t, s, n, allow, ids, &err);
    if (k < 0) ck_abort_msg("%s: %s", what, err.msg);
    if (want) {
        long i = 0;
        while (i < k && i < n_want && ids[i] == want[i]) i++;
        char g[256], w[256];
        if (i < k || i < n_want)
            ck_abort_msg("%s: ids %s, expected %s (first difference at "
                         "%ld)", what, tokfx_show(g, sizeof g, ids, (int)k),
                         tokfx_show(w, sizeof w, want, n_want), i);
    }
    size_t len;
    char *d = gpt2_tok_decode(t, ids, (size_t)k, &len, &err);
    if (!d) ck_abort_msg("%s: %s", what, err.msg);
    if (len != n || memcmp(d, s, n) != 0)
        ck_abort_msg("%s: decoding gives %zu bytes, not the %zu encoded",
                     what, len, n);
    free(d);
    free(ids);
    return k;
}

START_TEST(tok_fixture_loads) {
    Gpt2Tokenizer t;
    tokfx_load(&t);
    Json *x = tokfx_expected();
    int64_t V, eot;
    json_int64(tokfx_get(x, "vocab_size", JSON_NUMBER), &V);
    json_int64(tokfx_get(x, "eot", JSON_NUMBER), &eot);
    ck_assert_int_eq(t.vocab_size, V);
    ck_assert_int_eq(t.eot, eot);
    ck_assert_int_eq(t.n_merges, V - 257);   // bytes, merges, <|endoftext|>
    // GPT-2's order of the bytes: the printable ones from '!' first
    ck_assert_int_eq(t.byte_id['!'], 0);
    ck_assert_int_eq(t.byte_id['A'], 'A' - '!');
    ck_assert_int_eq(t.byte_id[0xff], 187);
    ck_assert_int_eq(t.byte_id[0], 188);
    ck_assert_int_eq(t.byte_id['\n'], 198);
    ck_assert_int_eq(t.byte_id[' '], 220);
    ck_assert_int_eq(t.byte_id[0xad], 255);
    size_t len;
    const char *e = gpt2_tok_token(&t, t.eot, &len);
    ck_assert(len == 13 && memcmp(e, GPT2_EOT, 13) == 0);
    json_free(x);
    gpt2_tok_free(&t);
}
END_TEST

static void copy_file(const char *from, const char *to) {
    size_t n;
    Error err;
    char *s = read_file(from, &n, &err);
    ck_assert_msg(s, "%s", err.msg);
    FILE *f = fopen(to, "wb");
    ck_assert_msg(f && fwrite(s, 1, n, f) == n && fclose(f) == 0, "%s", to);
    free(s);
}

START_TEST(tok_openai_names) {
    char dir[] = "/tmp/ch9_tok_XXXXXX", a[128], b[128];
    ck_assert(mkdtemp(dir));
    snprintf(a, sizeof a, "%s/encoder.json", dir);
    snprintf(b, sizeof b, "%s/vocab.bpe", dir);
    Gpt2Tokenizer t, ref;
    Error err;
    ck_assert_int_eq(gpt2_tok_load_dir(&t, dir, &err), -1);
    ck_assert_msg(strstr(err.msg, "holds no GPT-2 tokenizer"), "%s",
                  err.msg);
    copy_file(TOK_DIR "/vocab.json", a);
    ck_assert_int_eq(gpt2_tok_load_dir(&t, dir, &err), -1);
    ck_assert_msg(strstr(err.msg, "vocab.bpe"), "%s", err.msg);
    copy_file(TOK_DIR "/merges.txt", b);
    ck_assert_msg(gpt2_tok_load_dir(&t, dir, &err) == 0, "%s", err.msg);
    tokfx_load(&ref);
    const char *s = "What's in a name? That which we call a rose\n";
    int want[64];
    Error e2;
    long n = gpt2_tok_encode(&ref, s, strlen(s), false, want, &e2);
    encode_check(&t, "encoder.json + vocab.bpe", s, strlen(s), false, want,
                 (int)n);
    ck_assert_int_eq(t.n_merges, ref.n_merges);
    gpt2_tok_free(&t);
    // with both pairs, vocab.json and merges.txt are read
    snprintf(a, sizeof a, "%s/merges.txt", dir);
    copy_file(TOK_DIR "/merges.txt", a);
    snprintf(a, sizeof a, "%s/vocab.json", dir);
    FILE *f = fopen(a, "w");
    fputs("[]", f);
    fclose(f);
    ck_assert_int_eq(gpt2_tok_load_dir(&t, dir, &err), -1);
    ck_assert_msg(strstr(err.msg, "vocab.json is an array"), "%s", err.msg);
    gpt2_tok_free(&ref);
    remove_tree(dir);
}
END_TEST

START_TEST(tok_catalogue) {
    Gpt2Tokenizer t;
    tokfx_load(&t);
    Json *x = tokfx_expected();
    const Json *cases = tokfx_get(x, "cases", JSON_ARRAY);
    ck_assert_int_ge(cases->n, 60);
    for (int c = 0; c < cases->n; c++) {
        const Json *k = &cases->items[c];
        const char *name = tokfx_get(k, "name", JSON_STRING)->str;
        size_t n;
        int m, *want;
        char *s = tokfx_entry(k, &n, &want, &m);
        encode_check(&t, name, s, n, tokfx_get(k, "allow_special",
                                               JSON_BOOL)->b, want, m);
        free(want);
        free(s);
    }
    json_free(x);
    gpt2_tok_free(&t);
}
END_TEST

// FNV-1a 64 over ids as little-endian uint32, as the generator hashes.
static uint64_t fnv1a_ids(const int *ids, long n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (long i = 0; i < n; i++)
        for (int k = 0; k < 4; k++)
            h = (h ^ (((uint32_t)ids[i] >> (8 * k)) & 0xff))
                * 0x100000001b3ULL;
    return h;
}

static void check_corpus(Gpt2Tokenizer *t, const Json *c) {
    const char *path = tokfx_get(c, "path", JSON_STRING)->str;
    int64_t want_n, chunk;
    json_int64(tokfx_get(c, "ids", JSON_NUMBER), &want_n);
    json_int64(tokfx_get(c, "chunk", JSON_NUMBER), &chunk);
    const Json *hashes = tokfx_get(c, "fnv1a64", JSON_ARRAY);
    size_t n;
    Error err;
    char *s = read_file(path, &n, &err);
    ck_assert_msg(s, "%s (make data fetches it)", err.msg);
    int *ids = xmalloc((n + 1) * sizeof *ids);
    long k = gpt2_tok_encode(t, s, n, false, ids, &err);
    for (int h = 0; h < hashes->n; h++) {   // the first chunk that differs
        long lo = h * chunk, hi = lo + chunk < k ? lo + chunk : k;
        char got[17] = "(none)";
        if (lo < k)
            snprintf(got, sizeof got, "%016llx",
                     (unsigned long long)fnv1a_ids(ids + lo, hi - lo));
        if (strcmp(got, hashes->items[h].str) != 0)
            ck_abort_msg("%s: ids %ld .. %ld differ from tiktoken's (hash "
                         "%s, not %s)", path, lo, lo + chunk - 1, got,
                         hashes->items[h].str);
    }
    ck_assert_msg(k == want_n, "%s: %ld ids, tiktoken %lld", path, k,
                  (long long)want_n);
    size_t len;
    char *d = gpt2_tok_decode(t, ids, (size_t)k, &len, &err);
    ck_assert_msg(d && len == n && memcmp(d, s, n) == 0,
                  "%s does not decode back", path);
    free(d);
    free(ids);
    free(s);
}

START_TEST(tok_corpora) {
    Gpt2Tokenizer t;
    tokfx_load(&t);
    Json *x = tokfx_expected();
    const Json *corpora = tokfx_get(x, "corpora", JSON_ARRAY);
    ck_assert_int_eq(corpora->n, 3);
    for (int c = 0; c < corpora->n; c++) check_corpus(&t, &corpora->items[c]);
    json_free(x);
    gpt2_tok_free(&t);
}
END_TEST

// The pieces of s as "a|b|c" (each piece's bytes, '|' between).
static void pieces_of(const char *s, char *out, size_t size) {
    size_t n = strlen(s), at = 0;
    for (size_t i = 0, e; i < n; i = e) {
        e = gpt2_pretoken_end(s, i, n);
        ck_assert_msg(e > i && e <= n, "piece at %zu ends at %zu", i, e);
        at += (size_t)snprintf(out + at, size - at, "%s%.*s", i ? "|" : "",
                               (int)(e - i), s + i);
    }
    out[at] = '\0';
}

START_TEST(tok_pieces_by_hand) {
    static const char *const cases[][2] = {
        {"Hello world", "Hello| world"},
        {"  hi", " | hi"},                        // a space left to the word
        {"hi  ", "hi|  "},                        // white space at the end
        {"a\n\nb", "a|\n|\n|b"},                 // \s+(?!\S), then \s+
        {"a \n b", "a| \n| b"},
        {"x\t\t y", "x|\t\t| y"},
        {"it's I'M we'll 'tis", "it|'s| I|'|M| we|'ll| '|tis"},
        {"''s x'", "''|s| x|'"},
        {"don't 've", "don|'t| '|ve"},
        {"123abc 45 6.7", "123|abc| 45| 6|.|7"},
        {"a\xc2\xa0" "b", "a|\xc2\xa0|b"},       // U+00A0 is white space
        {"\xe4\xb8\xad\xe6\x96\x87 text", "\xe4\xb8\xad\xe6\x96\x87| text"},
        {"e\xcc\x81t\xc3\xa9", "e|\xcc\x81|t\xc3\xa9"},   // a combining mark
        {"x\xe3\x80\x80\xe3\x80\x80y", "x|\xe3\x80\x80|\xe3\x80\x80|y"},
        {"ab\xff" "cd", "ab|\xff|cd"},            // an invalid byte: other
        {" \xff\xfe!x", " \xff\xfe!|x"},
        {"caf\xc3", "caf|\xc3"},                  // cut short
        {"!!! ?", "!!!| ?"},
        {"\xc2\xbd\xe2\x85\xab 2\xc2\xb2", "\xc2\xbd\xe2\x85\xab| 2\xc2\xb2"},
        {"\r\n\r\nx", "\r\n\r|\n|x"},
    };
    // a NUL is a character like any other (not a contraction's letter)
    ck_assert_int_eq(gpt2_pretoken_end("'\0!x", 0, 4), 3);
    ck_assert_int_eq(gpt2_pretoken_end("a\0b", 0, 3), 1);
    char got[256], g[200], w[200];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        pieces_of(cases[k][0], got, sizeof got);
        ck_assert_msg(strcmp(got, cases[k][1]) == 0, "case %zu: \"%s\", "
                      "expected \"%s\"", k,
                      tokfx_escape(g, sizeof g, got, strlen(got)),
                      tokfx_escape(w, sizeof w, cases[k][1],
                                   strlen(cases[k][1])));
    }
}
END_TEST

START_TEST(tok_round_trip_bytes) {
    Gpt2Tokenizer t;
    tokfx_load(&t);
    Rng rng;
    rng_seed(&rng, 9);
    char s[200];
    int ids[200], alone[200];
    for (int r = 0; r < 300; r++) {
        size_t n = 1 + rng_u32(&rng) % sizeof s;
        for (size_t i = 0; i < n; i++) {   // some ASCII, some any byte
            static const char pool[] = " a'b\n1\xc3\xa9";   // 8 bytes
            uint32_t u = rng_u32(&rng);
            s[i] = u % 3 ? pool[u % 8] : (char)(u >> 8);
        }
        long k = encode_check(&t, "random bytes", s, n, false, NULL, 0);
        Error err;
        gpt2_tok_encode(&t, s, n, false, ids, &err);
        long m = 0;
        for (size_t i = 0, e; i < n; i = e) {   // each piece alone
            e = gpt2_pretoken_end(s, i, n);
            m += gpt2_tok_encode(&t, s + i, e - i, false, alone + m, &err);
        }
        ck_assert_int_eq(m, k);
        ck_assert(memcmp(ids, alone, (size_t)k * sizeof *ids) == 0);
    }
    gpt2_tok_free(&t);
}
END_TEST

START_TEST(tok_special) {
    Gpt2Tokenizer t;
    tokfx_load(&t);
    int E = t.eot, ids[64], plain[64];
    Error err;
    const char *s = GPT2_EOT "a  " GPT2_EOT GPT2_EOT " b" GPT2_EOT;
    long k = gpt2_tok_encode(&t, s, strlen(s), true, ids, &err);
    // E, "a", "  " (white space at the end of its stretch), E, E, " b", E
    int want[64], n = 0;
    want[n++] = E;
    n += (int)gpt2_tok_encode(&t, "a", 1, false, want + n, &err);
    n += (int)gpt2_tok_encode(&t, "  ", 2, false, want + n, &err);
    want[n++] = E;
    want[n++] = E;
    n += (int)gpt2_tok_encode(&t, " b", 2, false, want + n, &err);
    want[n++] = E;
    char g[256], w[256];
    ck_assert_msg(k == n && memcmp(ids, want, (size_t)n * sizeof *ids) == 0,
                  "%s, expected %s", tokfx_show(g, sizeof g, ids, (int)k),
                  tokfx_show(w, sizeof w, want, n));
    k = gpt2_tok_encode(&t, s, strlen(s), false, plain, &err);
    for (long i = 0; i < k; i++) ck_assert_int_ne(plain[i], E);
    encode_check(&t, "not allowed", s, strlen(s), false, NULL, 0);
    encode_check(&t, "allowed", s, strlen(s), true, NULL, 0);
    gpt2_tok_free(&t);
    // without <|endoftext|> in the vocabulary, the text is ordinary
    const char *merges[] = {"a b"};
    Gpt2Tokenizer small;
    tokfx_small(&small, merges, 1, false);
    ck_assert_int_eq(small.eot, -1);
    k = gpt2_tok_encode(&small, s, strlen(s), true, ids, &err);
    ck_assert_int_eq(k, (long)strlen(s));   // no merge applies: the bytes
    for (long i = 0; i < k; i++) ck_assert_int_eq(ids[i], (unsigned char)s[i]);
    gpt2_tok_free(&small);
}
END_TEST

START_TEST(tok_merge_rank_api) {
    const char *merges[] = {"b c", "a b", "ab c", "a a"};
    Gpt2Tokenizer t;
    tokfx_small(&t, merges, 4, true);
    int m = -1;
    ck_assert_int_eq(gpt2_tok_merge_rank(&t, 'b', 'c', &m), 0);
    ck_assert_int_eq(m, 256);
    ck_assert_int_eq(gpt2_tok_merge_rank(&t, 257, 'c', &m), 2);
    ck_assert_int_eq(m, 258);
    ck_assert_int_eq(gpt2_tok_merge_rank(&t, 'c', 'b', NULL), -1);
    ck_assert_int_eq(gpt2_tok_merge_rank(&t, 'a', 'a', NULL), 3);
    ck_assert_int_eq(t.eot, 260);
    ck_assert_int_eq(t.vocab_size, 261);
    int ids[8];
    // "abc": (b, c) ranks before (a, b): a, bc; "aaa": aa, a
    ck_assert_int_eq(gpt2_tok_encode_piece(&t, "abc", 3, ids), 2);
    ck_assert(ids[0] == 'a' && ids[1] == 256);
    ck_assert_int_eq(gpt2_tok_encode_piece(&t, "aaa", 3, ids), 2);
    ck_assert(ids[0] == 259 && ids[1] == 'a');
    gpt2_tok_free(&t);
}
END_TEST

START_TEST(tok_decode_errors) {
    Gpt2Tokenizer t;
    tokfx_load(&t);
    Error err;
    int ids[] = {0, 5, t.vocab_size};
    ck_assert_ptr_null(gpt2_tok_decode(&t, ids, 3, NULL, &err));
    ck_assert_msg(strstr(err.msg, "token 3 of 3 is id 2048"), "%s", err.msg);
    ids[2] = -1;
    ck_assert_ptr_null(gpt2_tok_decode(&t, ids, 3, NULL, &err));
    size_t len;
    ck_assert_ptr_null(gpt2_tok_token(&t, -1, &len));
    char *d = gpt2_tok_decode(&t, ids, 0, &len, &err);
    ck_assert(d && len == 0 && d[0] == '\0');
    free(d);
    gpt2_tok_free(&t);
}
END_TEST

// Replaces the first "from" in b with "to" (which must be there).
static void sb_replace(StrBuf *b, const char *from, const char *to) {
    char *at = strstr(b->s, from);
    ck_assert_msg(at, "no %s in the text", from);
    StrBuf out = {0};
    sb_append(&out, b->s, (size_t)(at - b->s));
    sb_append(&out, to, strlen(to));
    sb_append(&out, at + strlen(from), strlen(at + strlen(from)));
    sb_free(b);
    *b = out;
}

// Loads the two texts: 0, or -1 with the message in err, which must be
// one line, and t left empty.
static int try_load(const char *v, size_t nv, const char *m, size_t nm,
                    Error *err) {
    Gpt2Tokenizer t;
    strcpy(err->msg, "");
    int rc = gpt2_tok_from_text(&t, v, nv, "vocab.json", m, nm, "merges.txt",
                                err);
    if (rc == 0) {
        gpt2_tok_free(&t);
        return 0;
    }
    ck_assert_int_eq(rc, -1);
    ck_assert_msg(err->msg[0] && !strchr(err->msg, '\n'), "%s", err->msg);
    ck_assert(t.tab == NULL && t.bytes == NULL && t.off == NULL);
    return -1;
}

START_TEST(tok_bad_files) {
    static const char *const merges[] = {"a b", "ab c"};
    static const struct {
        const char *from, *to;   // in vocab.json (v) or merges.txt (m)
        char file;
        const char *want;        // in the message
    } cases[] = {
        {"{", "[", 'v', "vocab.json: JSON"},
        {"\"ab\":256", "\"ab\":\"256\"", 'v', "id of \"ab\" is not an "
         "integer in [0, 259)"},
        {"\"ab\":256", "\"ab\":259", 'v', "not an integer in [0, 259)"},
        {"\"ab\":256", "\"ab\":-1", 'v', "not an integer"},
        {"\"ab\":256", "\"ab\":256.0", 'v', "not an integer"},
        {"\"ab\":256", "\"ab\":0", 'v', "have the same id 0"},
        {"\"ab\":256", "\"ab\":256,\"ab\":256", 'v', "duplicate key"},
        {"\"ab\":256", "\"a\\u0400\":256", 'v', "stands for no byte"},
        {"\"ab\":256", "\"\xc5\x84\":256", 'v', "stands for no byte"},
        {"\"ab\":256", "\"\":256", 'v', "token \"\" (id 256) is empty"},
        {"\"a\":97", "\"aa\":97", 'v', "no token for the byte 0x61 (\"a\")"},
        {"a b\n", "ab\n", 'm', "line 2 is \"ab\", not two tokens"},
        {"a b\n", "a  b\n", 'm', "line 2 is"},
        {"a b\n", " a b\n", 'm', "line 2 is"},
        {"a b\n", "a b \n", 'm', "line 2 is"},
        {"ab c\n", "ab zq\n", 'm', "line 3: \"zq\" is not a token"},
        {"ab c\n", "c ab\n", 'm', "line 3: \"c\" + \"ab\" makes a token "
         "that the vocabulary lacks"},
        {"ab c\n", "a b\n", 'm', "line 3 repeats the merge of line 2"},
        {"ab c\n", "ab \xff\n", 'm', "line 3: \"ab \\xff\" holds"},
        {"ab c\n", "ab \xc5\x84\n", 'm', "stands for no byte"},
        {"ab c\n", "\nab c\n", 'm', "line 3 is \"\", not two tokens"},
    };
    Error err;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        StrBuf v, m;
        tokfx_small_text(&v, &m, merges, 2, true);
        sb_replace(cases[k].file == 'v' ? &v : &m, cases[k].from,
                   cases[k].to);
        ck_assert_msg(try_load(v.s, v.len, m.s, m.len, &err) == -1,
                      "case %zu loads", k);
        ck_assert_msg(strstr(err.msg, cases[k].want), "case %zu: \"%s\" "
                      "does not say \"%s\"", k, err.msg, cases[k].want);
        sb_free(&v);
        sb_free(&m);
    }
    // not errors: Windows line ends, blank lines at the end, no header
    StrBuf v, m;
    tokfx_small_text(&v, &m, merges, 2, true);
    sb_replace(&m, "a b\n", "a b\r\n");
    sb_replace(&m, "ab c\n", "ab c\n\n\r\n");
    ck_assert_msg(try_load(v.s, v.len, m.s, m.len, &err) == 0, "%s",
                  err.msg);
    sb_replace(&m, "#version: 0.2\n", "");
    ck_assert_msg(try_load(v.s, v.len, m.s, m.len, &err) == 0, "%s",
                  err.msg);
    sb_free(&v);
    sb_free(&m);
    Gpt2Tokenizer t;
    ck_assert_int_eq(gpt2_tok_load(&t, "/no/such/vocab.json", TOK_DIR
                                   "/merges.txt", &err), -1);
    ck_assert_msg(strstr(err.msg, "cannot open /no/such/vocab.json"), "%s",
                  err.msg);
}
END_TEST

// Prefixes and random byte changes of the real files: read or refused
// with a line, never a crash (and no leak, under valgrind or ASan).
START_TEST(tok_bad_files_random) {
    size_t nv, nm;
    Error err;
    char *v = read_file(TOK_DIR "/vocab.json", &nv, &err);
    char *m = read_file(TOK_DIR "/merges.txt", &nm, &err);
    ck_assert_msg(v && m, "%s", err.msg);
    int loaded = 0;
    for (size_t n = 0; n < nm; n += n < 64 ? 1 : 97)
        loaded += try_load(v, nv, m, n, &err) == 0;
    ck_assert_int_gt(loaded, 10);   // a prefix of whole lines is fine
    for (size_t n = 0; n < nv; n += n < 64 ? 1 : 199)
        ck_assert_int_eq(try_load(v, n, m, nm, &err), -1);
    Rng rng;
    rng_seed(&rng, 99);
    for (int r = 0; r < 200; r++) {
        char *s = r % 2 ? v : m;
        size_t n = r % 2 ? nv : nm, at = rng_below(&rng, (uint32_t)n);
        char was = s[at];
        s[at] = (char)rng_u32(&rng);
        try_load(v, nv, m, nm, &err);
        s[at] = was;
    }
    free(v);
    free(m);
}
END_TEST

Suite *ch9_tokenizer_suite(void) {
    Suite *s = suite_create("ch9_tokenizer");
    TCase *tc = tcase_new("tokenizer", "ch9");
    tcase_add_test(tc, tok_fixture_loads);
    tcase_add_test(tc, tok_openai_names);
    tcase_add_test(tc, tok_catalogue);
    tcase_add_test(tc, tok_corpora);
    tcase_add_test(tc, tok_pieces_by_hand);
    tcase_add_test(tc, tok_round_trip_bytes);
    tcase_add_test(tc, tok_special);
    tcase_add_test(tc, tok_merge_rank_api);
    tcase_add_test(tc, tok_decode_errors);
    tcase_add_test(tc, tok_bad_files);
    tcase_add_test(tc, tok_bad_files_random);
    suite_add_tcase(s, tc);
    return s;
}
