#include "token_out.h"

#include <string.h>

static const char REPLACEMENT[] = "\xef\xbf\xbd";   // U+FFFD

void token_out_init(TokenOut *o, const Gpt2Tokenizer *tok, FILE *out) {
    memset(o, 0, sizeof *o);
    o->tok = tok;
    o->out = out;
}

//> utf8-char-len
int utf8_char_len(const unsigned char *s, size_t n) {
    if (n == 0) return 0;
    unsigned b = s[0];
    int len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2
              : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : -1;
    if (len < 0) return -1;   // a continuation byte, 0xc0, 0xc1, 0xf5..
    // the second byte's range rules out overlong forms, the surrogates
    // (0xed 0xa0..) and code points past U+10FFFF (0xf4 0x90..)
    unsigned lo = b == 0xe0 ? 0xa0 : b == 0xf0 ? 0x90 : 0x80;
    unsigned hi = b == 0xed ? 0x9f : b == 0xf4 ? 0x8f : 0xbf;
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n) return 0;   // a whole start: wait for the rest
        unsigned c = s[i];
        if (c < (i == 1 ? lo : 0x80) || c > (i == 1 ? hi : 0xbf)) return -i;
    }
    return len;
}
//< utf8-char-len

// Writes the characters that the held bytes complete, and keeps the start
// of one that is not whole yet.
static void flush_whole(TokenOut *o) {
    int k = 0;
    while (k < o->n_held) {
        int len = utf8_char_len(o->held + k, (size_t)(o->n_held - k));
        if (len == 0) break;   // wait for more
        if (len < 0) fputs(REPLACEMENT, o->out), len = -len;
        else fwrite(o->held + k, 1, (size_t)len, o->out);
        k += len;
    }
    memmove(o->held, o->held + k, (size_t)(o->n_held - k));
    o->n_held -= k;
}

void token_out_bytes(TokenOut *o, const char *bytes, size_t n) {
    for (size_t i = 0; i < n; i++) {
        // (held never reaches 4: a 4-byte start is whole or invalid)
        o->held[o->n_held++] = (unsigned char)bytes[i];
        flush_whole(o);
    }
}

void token_out_id(int id, void *ctx) {
    TokenOut *o = ctx;
    size_t len;
    const char *bytes = gpt2_tok_token(o->tok, id, &len);
    if (bytes) token_out_bytes(o, bytes, len);
    else fputs(REPLACEMENT, o->out);
    fflush(o->out);   // each token seen as it comes
}

void token_out_end(TokenOut *o) {
    if (o->n_held > 0) fputs(REPLACEMENT, o->out);   // a character cut short
    o->n_held = 0;
    fflush(o->out);
}
