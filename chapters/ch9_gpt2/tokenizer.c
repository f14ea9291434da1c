// tokenizer.c - GPT-2's byte-level BPE: the byte characters, the
// pre-tokeniser's scanner, reading vocab.json and merges.txt, encoding
// with a cache of pieces, decoding. See tokenizer.h.
#include "tokenizer.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpe_tables.h"
#include "json.h"
#include "mem.h"
#include "unicode_classes.h"
#include "utf8.h"

// ---- GPT-2's byte characters -----------------------------------------------

//> gpt2-byte-table
// The 188 bytes that print as a character of their own ('!'..'~',
// '¡'..'¬', '®'..'ÿ') stand for themselves; the other 68 (the controls,
// the space, DEL, the no-break and soft hyphen) take the code points
// from U+0100 on, in the order of their bytes: 0x00 is U+0100, the space
// U+0120 'Ġ', '\n' U+010A 'Ċ'. Every token is then a printable string.
void gpt2_bytes_to_unicode(uint32_t cp[256]) {
    uint32_t next = 256;
    for (int b = 0; b < 256; b++) {
        bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac)
                         || (b >= 0xae && b <= 0xff);
        cp[b] = printable ? (uint32_t)b : next++;
    }
}
//< gpt2-byte-table

// The largest byte character is U+0143 (byte 0xad).
enum { BYTE_CHARS = 0x144 };

// ---- the pre-tokeniser ------------------------------------------------------

// The length of the unit of text at s[i] (i < n), and its class in *cls:
// a valid UTF-8 character, or else one byte of class UC_OTHER.
static size_t unit_at(const unsigned char *s, size_t i, size_t n, int *cls) {
    if (s[i] < 0x80) {
        *cls = uc_ascii[s[i]];
        return 1;
    }
    size_t len = s[i] < 0xe0 ? 2 : s[i] < 0xf0 ? 3 : 4;   // as the lead says
    uint32_t cp;
    if (len > n - i || utf8_decode((const char *)s + i, len, &cp, NULL) != 1) {
        *cls = UC_OTHER;   // not a character: a byte of its own
        return 1;
    }
    *cls = uc_class(cp);
    return len;
}

// The end of the run of units of class cls that starts at s[j]; *last
// gets where its last unit starts (j when the run is empty).
static size_t run_end(const unsigned char *s, size_t j, size_t n, int cls,
                      size_t *last) {
    *last = j;
    while (j < n) {
        int c;   // (ASCII, the common case, without the call)
        size_t len = s[j] < 0x80 ? (c = uc_ascii[s[j]], 1)
                                 : unit_at(s, j, n, &c);
        if (c != cls) break;
        *last = j;
        j += len;
    }
    return j;
}

// The length of the contraction 's 't 're 've 'm 'll 'd at s (n bytes),
// or 0. Lower case only, as GPT-2's pattern.
static size_t contraction(const unsigned char *s, size_t n) {
    if (n < 2 || s[0] != '\'') return 0;
    if (s[1] == 's' || s[1] == 't' || s[1] == 'm' || s[1] == 'd') return 2;
    if (n >= 3 && ((s[1] == 'r' && s[2] == 'e') || (s[1] == 'v' && s[2] == 'e')
                   || (s[1] == 'l' && s[2] == 'l')))
        return 3;
    return 0;
}

//> gpt2-pretokenize
// The pattern's alternatives, tried at s[i] in order, as a backtracking
// regex engine tries them:
//   's|'t|'re|'ve|'m|'ll|'d    a contraction, lower case only
//    ?\p{L}+   ?\p{N}+   ?[^\s\p{L}\p{N}]+
//                              an optional space, then a run of letters,
//                              of numbers, or of anything else
//   \s+(?!\S)                  white space not followed by a non-space:
//                              all of it at the end of the text, or else
//                              all but its last character, which is left
//                              to the word that follows
//   \s+                        or else that one white-space character
size_t gpt2_pretoken_end(const char *text, size_t i, size_t n) {
    const unsigned char *s = (const unsigned char *)text;
    size_t k = contraction(s + i, n - i), last;
    if (k) return i + k;
    int cls;
    if (s[i] == ' ' && i + 1 < n) {   // a space, then something else
        unit_at(s, i + 1, n, &cls);
        if (cls != UC_SPACE) return run_end(s, i + 1, n, cls, &last);
    }
    unit_at(s, i, n, &cls);
    if (cls != UC_SPACE) return run_end(s, i, n, cls, &last);
    size_t e = run_end(s, i, n, UC_SPACE, &last);
    if (e == n) return n;             // white space to the end
    return last > i ? last : e;       // all but the last one, or the one
}
//< gpt2-pretokenize

// ---- the tables -------------------------------------------------------------

#define CACHE_MAX (1 << 18)   // pieces remembered by the encoder
#define CACHE_PIECE_MAX 256   // the longest piece remembered, in bytes

struct Gpt2TokTables {
    PairMap rank;    // (a, b) -> the rank of their merge
    int *merged;     // (M,) the id that merge r makes
    IdCache cache;   // piece -> its ids
};

void gpt2_tok_free(Gpt2Tokenizer *t) {
    if (t->tab) {
        pairmap_free(&t->tab->rank);
        free(t->tab->merged);
        idcache_free(&t->tab->cache);
        free(t->tab);
    }
    free(t->bytes);
    free(t->off);
    *t = (Gpt2Tokenizer){0};
}

int gpt2_tok_merge_rank(const Gpt2Tokenizer *t, int a, int b, int *merged) {
    int r = pairmap_get(&t->tab->rank, a, b);
    if (r >= 0 && merged) *merged = t->tab->merged[r];
    return r;
}

// ---- reading the files ------------------------------------------------------

// What reading the two files needs.
typedef struct {
    Gpt2Tokenizer *t;
    StrTab index;               // a token's bytes -> its id (index k: id k)
    int byte_of[BYTE_CHARS];    // a byte character -> its byte
    const char *name;           // the file being read, for messages
    Error *err;
} Reader;

// The bytes that the n bytes of a token as the files write it stand for,
// into out (room for n); returns their number, or -1 when it holds
// invalid UTF-8 or a character that stands for no byte.
static int token_bytes(const Reader *rd, const char *s, size_t n,
                       char *out) {
    const unsigned char *u = (const unsigned char *)s;
    int len = 0;
    for (size_t i = 0; i < n;) {
        int cls;
        size_t k = unit_at(u, i, n, &cls);
        uint32_t cp = u[i];
        if (k > 1) utf8_decode(s + i, k, &cp, NULL);
        if ((k == 1 && u[i] >= 0x80) || cp >= BYTE_CHARS
            || rd->byte_of[cp] < 0)
            return -1;
        out[len++] = (char)rd->byte_of[cp];
        i += k;
    }
    return len;
}

// For messages: the n bytes at s in quotes, the first 40 of them; a byte
// that is no valid UTF-8, a control character, a quote or a backslash
// shows as \xNN, so the message stays one line of text.
static const char *quoted(char *buf, size_t size, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t at = 0, end = n < 40 ? n : 40;
    buf[at++] = '"';
    for (size_t i = 0; i < end && at + 8 < size;) {
        int cls;
        size_t k = unit_at(u, i, n, &cls);
        if (k == 1 && (u[i] < 0x20 || u[i] >= 0x7f || u[i] == '"'
                       || u[i] == '\\'))
            at += (size_t)snprintf(buf + at, size - at, "\\x%02x", u[i]);
        else if (at + k + 8 < size)
            memcpy(buf + at, s + i, k), at += k;
        i += k;
    }
    snprintf(buf + at, size - at, "%s\"", n > end ? "..." : "");
    return buf;
}

static const char *qkey(char *buf, size_t size, const char *key) {
    return quoted(buf, size, key, strlen(key));
}

// key_of[v]: which key of vocab.json has id v. Each id must be an
// integer in [0, V) that no other key has: V keys then use every id.
static int vocab_ids(Reader *rd, const Json *root, int *key_of) {
    int V = root->n;
    for (int v = 0; v < V; v++) key_of[v] = -1;
    char q[128], q2[128];
    for (int k = 0; k < V; k++) {
        int64_t id;
        const char *key = root->keys[k];
        if (json_int64(&root->items[k], &id) || id < 0 || id >= V)
            return error_set(rd->err, "%s: the id of %s is not an integer "
                             "in [0, %d)", rd->name,
                             qkey(q, sizeof q, key), V);
        if (key_of[id] >= 0)
            return error_set(rd->err, "%s: %s and %s have the same id %d",
                             rd->name,
                             qkey(q, sizeof q, root->keys[key_of[id]]),
                             qkey(q2, sizeof q2, key), (int)id);
        key_of[id] = k;
    }
    return 0;
}

// Fills t->bytes and t->off from vocab.json's keys, in the order of the
// ids, and the index with each id's bytes.
static int vocab_bytes(Reader *rd, const Json *root, const int *key_of) {
    Gpt2Tokenizer *t = rd->t;
    int V = root->n;
    size_t total = 0;
    for (int k = 0; k < V; k++) total += strlen(root->keys[k]);
    t->bytes = xmalloc(total + 1);   // a token's bytes are no more
    t->off = xmalloc(((size_t)V + 1) * sizeof *t->off);
    t->off[0] = 0;
    for (int v = 0; v < V; v++) {
        const char *key = root->keys[key_of[v]];
        char q[128];
        int n = token_bytes(rd, key, strlen(key), t->bytes + t->off[v]);
        if (n <= 0)
            return error_set(rd->err, "%s: token %s (id %d) %s", rd->name,
                             qkey(q, sizeof q, key), v, n == 0 ? "is empty"
                             : "holds a character that stands for no byte");
        t->off[v + 1] = t->off[v] + (size_t)n;
        strtab_add(&rd->index, t->bytes + t->off[v], n);
    }
    return 0;
}

// The one-byte tokens, and <|endoftext|>.
static int vocab_specials(Reader *rd) {
    uint32_t cp[256];
    gpt2_bytes_to_unicode(cp);
    for (int b = 0; b < 256; b++) {
        char c = (char)b, u[5] = {0};
        rd->t->byte_id[b] = strtab_find(&rd->index, &c, 1);
        utf8_encode(cp[b], u);
        if (rd->t->byte_id[b] < 0)
            return error_set(rd->err, "%s has no token for the byte 0x%02x "
                             "(\"%s\")", rd->name, b, u);
    }
    rd->t->eot = strtab_find(&rd->index, GPT2_EOT, (int)strlen(GPT2_EOT));
    return 0;
}

static int read_vocab(Reader *rd, const char *text, size_t len) {
    Error jerr;
    Json *root = json_parse(text, len, &jerr);
    if (!root) return error_set(rd->err, "%s: %s", rd->name, jerr.msg);
    int rc = -1;
    if (root->type != JSON_OBJECT)
        error_set(rd->err, "%s is %s, not a JSON object of tokens and ids",
                  rd->name, json_type_name(root->type));
    else if (root->n < 256)
        error_set(rd->err, "%s has %d tokens: fewer than the 256 bytes",
                  rd->name, root->n);
    else {
        int *key_of = xmalloc((size_t)root->n * sizeof *key_of);
        rd->t->vocab_size = root->n;
        rc = vocab_ids(rd, root, key_of);
        if (rc == 0) rc = vocab_bytes(rd, root, key_of);
        if (rc == 0) rc = vocab_specials(rd);
        free(key_of);
    }
    json_free(root);
    return rc;
}

// Line no of merges.txt, "a b" (n bytes at s), the merge of rank r.
// buf has room for n bytes.
static int read_merge(Reader *rd, const char *s, size_t n, int no, int r,
                      char *buf) {
    const char *sp = memchr(s, ' ', n), *end = s + n;
    char q[128], q2[128];
    if (!sp || sp == s || sp + 1 == end
        || memchr(sp + 1, ' ', (size_t)(end - sp - 1)))
        return error_set(rd->err, "%s line %d is %s, not two tokens with "
                         "one space between", rd->name, no,
                         quoted(q, sizeof q, s, n));
    size_t la = (size_t)(sp - s), lb = n - la - 1;
    int na = token_bytes(rd, s, la, buf);
    int nb = na < 0 ? -1 : token_bytes(rd, sp + 1, lb, buf + na);
    if (na < 0 || nb < 0)
        return error_set(rd->err, "%s line %d: %s holds a character that "
                         "stands for no byte", rd->name, no,
                         quoted(q, sizeof q, s, n));
    int a = strtab_find(&rd->index, buf, na);
    int b = strtab_find(&rd->index, buf + na, nb);
    int ab = strtab_find(&rd->index, buf, na + nb);
    if (a < 0 || b < 0)
        return error_set(rd->err, "%s line %d: %s is not a token of the "
                         "vocabulary", rd->name, no, a < 0
                         ? quoted(q, sizeof q, s, la)
                         : quoted(q, sizeof q, sp + 1, lb));
    if (ab < 0)
        return error_set(rd->err, "%s line %d: %s + %s makes a token that "
                         "the vocabulary lacks", rd->name, no,
                         quoted(q, sizeof q, s, la),
                         quoted(q2, sizeof q2, sp + 1, lb));
    Gpt2TokTables *tb = rd->t->tab;
    int twin = pairmap_get(&tb->rank, a, b);
    if (twin >= 0)   // (line no is rank r: rank twin is line twin + no - r)
        return error_set(rd->err, "%s line %d repeats the merge of line %d",
                         rd->name, no, twin + no - r);
    pairmap_put(&tb->rank, a, b, r);
    tb->merged[r] = ab;
    return 0;
}

// merges.txt: an optional "#version" line, then one merge a line.
static int read_merges(Reader *rd, const char *text, size_t len) {
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        len--;   // after the last line, only line ends
    size_t lines = 1;
    for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
    Gpt2TokTables *tb = rd->t->tab;
    tb->merged = xmalloc(lines * sizeof *tb->merged);
    pairmap_init(&tb->rank, lines);
    char *buf = xmalloc(len + 1);
    int r = 0, rc = 0;
    for (size_t i = 0, no = 1; i < len && rc == 0; no++) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - text) : len, m = e - i;
        if (m > 0 && text[e - 1] == '\r') m--;   // a Windows line end
        bool header = no == 1 && m >= 8 && memcmp(text, "#version", 8) == 0;
        if (!header) rc = read_merge(rd, text + i, m, (int)no, r++, buf);
        i = e + 1;
    }
    free(buf);
    rd->t->n_merges = r;
    return rc;
}

int gpt2_tok_from_text(Gpt2Tokenizer *t, const char *vocab_json,
                       size_t vocab_len, const char *vocab_name,
                       const char *merges, size_t merges_len,
                       const char *merges_name, Error *err) {
    *t = (Gpt2Tokenizer){0};
    if (vocab_len > INT_MAX || merges_len > INT_MAX)
        return error_set(err, "%s or %s is larger than 2 GB", vocab_name,
                         merges_name);
    t->tab = xcalloc(1, sizeof *t->tab);
    Reader rd = {.t = t, .name = vocab_name, .err = err};
    for (int c = 0; c < BYTE_CHARS; c++) rd.byte_of[c] = -1;
    uint32_t cp[256];
    gpt2_bytes_to_unicode(cp);
    for (int b = 0; b < 256; b++) rd.byte_of[cp[b]] = b;
    int rc = read_vocab(&rd, vocab_json, vocab_len);
    rd.name = merges_name;
    if (rc == 0) rc = read_merges(&rd, merges, merges_len);
    strtab_free(&rd.index);
    if (rc) gpt2_tok_free(t);
    return rc;
}

int gpt2_tok_load(Gpt2Tokenizer *t, const char *vocab_path,
                  const char *merges_path, Error *err) {
    *t = (Gpt2Tokenizer){0};
    size_t nv, nm;
    char *v = read_file(vocab_path, &nv, err);
    if (!v) return -1;
    char *m = read_file(merges_path, &nm, err);
    int rc = -1;
    if (m)
        rc = gpt2_tok_from_text(t, v, nv, vocab_path, m, nm, merges_path,
                                err);
    free(v);
    free(m);
    return rc;
}

int gpt2_tok_load_dir(Gpt2Tokenizer *t, const char *dir, Error *err) {
    static const char *const names[2][2] = {
        {"vocab.json", "merges.txt"},     // Hugging Face's names
        {"encoder.json", "vocab.bpe"},    // OpenAI's
    };
    *t = (Gpt2Tokenizer){0};
    size_t n = strlen(dir) + 16;
    char *vocab = xmalloc(n), *merges = xmalloc(n);
    int k = 0, rc;
    for (; k < 2; k++) {   // the first pair whose vocabulary is there
        snprintf(vocab, n, "%s/%s", dir, names[k][0]);
        if (access(vocab, F_OK) == 0) break;
    }
    if (k == 2) {
        rc = error_set(err, "%s holds no GPT-2 tokenizer: neither "
                       "vocab.json and merges.txt nor encoder.json and "
                       "vocab.bpe", dir);
    } else {
        snprintf(merges, n, "%s/%s", dir, names[k][1]);
        rc = gpt2_tok_load(t, vocab, merges, err);
    }
    free(vocab);
    free(merges);
    return rc;
}

// ---- encoding and decoding --------------------------------------------------

int gpt2_tok_encode_piece(Gpt2Tokenizer *t, const char *piece, int n,
                          int *out) {
    Gpt2TokTables *tb = t->tab;
    int len = idcache_get(&tb->cache, piece, n, out);
    if (len >= 0) return len;
    for (int k = 0; k < n; k++) out[k] = t->byte_id[(unsigned char)piece[k]];
    len = bpe_merge_word(out, n, &tb->rank, tb->merged);
    if (n <= CACHE_PIECE_MAX && tb->cache.keys.n < CACHE_MAX)
        idcache_put(&tb->cache, piece, n, out, len);
    return len;
}

// Where the next "<|endoftext|>" at or after text[i] starts, or n.
static size_t find_eot(const Gpt2Tokenizer *t, const char *text, size_t i,
                       size_t n) {
    size_t k = strlen(GPT2_EOT);
    for (const char *p = text + i; t->eot >= 0 && (size_t)(p - text) + k <= n;
         p++) {
        p = memchr(p, '<', n - k + 1 - (size_t)(p - text));
        if (!p) break;
        if (memcmp(p, GPT2_EOT, k) == 0) return (size_t)(p - text);
    }
    return n;
}

//> gpt2-encode
long gpt2_tok_encode(Gpt2Tokenizer *t, const char *text, size_t n,
                     bool allow_special, int *out, Error *err) {
    if (n > INT_MAX)
        return error_set(err, "a text of %zu bytes is too long to encode "
                         "at once", n);
    size_t count = 0;
    for (size_t i = 0; i < n;) {
        // the text up to the next special token (allowed) is cut into
        // pieces on its own, then each piece is merged
        size_t stop = allow_special ? find_eot(t, text, i, n) : n;
        for (size_t e; i < stop; i = e) {
            e = gpt2_pretoken_end(text, i, stop);
            count += (size_t)gpt2_tok_encode_piece(t, text + i, (int)(e - i),
                                                   out + count);
        }
        if (stop < n) {
            out[count++] = t->eot;
            i = stop + strlen(GPT2_EOT);
        }
    }
    return (long)count;
}
//< gpt2-encode

const char *gpt2_tok_token(const Gpt2Tokenizer *t, int id, size_t *len) {
    if (id < 0 || id >= t->vocab_size) return NULL;
    *len = t->off[id + 1] - t->off[id];
    return t->bytes + t->off[id];
}

char *gpt2_tok_decode(const Gpt2Tokenizer *t, const int *ids, size_t n,
                      size_t *len, Error *err) {
    size_t total = 0, k;
    for (size_t i = 0; i < n; i++) {
        if (!gpt2_tok_token(t, ids[i], &k)) {
            error_set(err, "token %zu of %zu is id %d, outside the "
                      "vocabulary [0, %d)", i + 1, n, ids[i], t->vocab_size);
            return NULL;
        }
        total += k;
    }
    char *s = xmalloc(total + 1), *p = s;
    for (size_t i = 0; i < n; i++) {
        const char *b = gpt2_tok_token(t, ids[i], &k);
        memcpy(p, b, k);
        p += k;
    }
    *p = '\0';
    if (len) *len = total;
    return s;
}
