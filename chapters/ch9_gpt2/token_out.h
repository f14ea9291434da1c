// token_out.h - text written as a model generates it, token by token.
//
// A GPT-2 token is a string of bytes, not of characters: "é" (two bytes
// in UTF-8) may come as two tokens, and an emoji (four bytes) as up to
// four. Writing each token's bytes as it comes would put half characters
// on the screen, which a terminal shows as garbage until the rest comes,
// if it ever does. So the bytes wait here until they make a whole UTF-8
// character. Bytes that cannot (the model may well write such a
// sequence) are written as U+FFFD, the replacement character, one for
// each longest piece that starts a character and breaks off, as Python's
// decode(errors="replace") does, and so Hugging Face's and tiktoken's
// decoding: b"\xe2\x82A" is U+FFFD and "A". So is a character the text
// ends in the middle of.
#ifndef CH9_TOKEN_OUT_H
#define CH9_TOKEN_OUT_H

#include <stdio.h>

#include "tokenizer.h"

typedef struct {
    const Gpt2Tokenizer *tok;
    FILE *out;
    unsigned char held[4];   // the start of a character, waiting
    int n_held;
} TokenOut;

void token_out_init(TokenOut *o, const Gpt2Tokenizer *tok, FILE *out);

// Writes the bytes of token id that complete characters (a TokenFn of
// generate.h: ctx is the TokenOut); an id outside the vocabulary writes
// U+FFFD.
void token_out_id(int id, void *ctx);

// Writes n bytes as token_out_id writes a token's.
void token_out_bytes(TokenOut *o, const char *bytes, size_t n);

// The end of the text: a character started and not ended is written as
// U+FFFD.
void token_out_end(TokenOut *o);

// How the n bytes at s start: the length of the whole UTF-8 character
// they begin with (1 to 4); 0 when they are the start of one that needs
// more bytes; or -k when their first k bytes start one that byte k
// breaks off (k = 1: s[0] starts none, as a stray continuation byte, or
// an overlong form, a surrogate or a code point past U+10FFFF would).
int utf8_char_len(const unsigned char *s, size_t n);

#endif
