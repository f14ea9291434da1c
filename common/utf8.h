// utf8.h - reading text files and turning UTF-8 bytes into code points.
//
// A character-level model works on Unicode code points, not bytes: 'ü' in
// chapter 7's German is one character (two bytes). The decoder is strict:
// overlong forms, surrogates, values above U+10FFFF and truncated sequences
// are errors that name the byte offset, never silently replaced.
#ifndef COMMON_UTF8_H
#define COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

// Reads a whole file; the buffer gets a terminating NUL (not counted in
// *len). NULL with a message ("cannot open FILE: reason") on failure.
char *read_file(const char *path, size_t *len, Error *err);

// Decodes n bytes into out (room for n code points). Returns the number of
// code points, or -1 with a message naming the byte offset where the first
// malformed sequence starts.
long utf8_decode(const char *bytes, size_t n, uint32_t *out, Error *err);

// Writes the UTF-8 form of cp into out (at most 4 bytes); returns its length.
int utf8_encode(uint32_t cp, char out[4]);

// A printable description of a code point for messages: 'a', '\n', U+00E9.
void utf8_describe(uint32_t cp, char *buf, size_t size);

#endif
