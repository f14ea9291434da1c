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

// Line ends. Unix ends a line with "\n", Windows with "\r\n", old Macs
// with a lone "\r". Every text the programs read, a file or a string from
// the command line, is taken as Python's open() reads it: each "\r\n"
// and each lone "\r" becomes "\n". A corpus read character by character
// then holds no U+000D, and a file read line by line ends its lines at
// all three; a Windows file gives what its Unix twin gives.
//
// text_newlines rewrites the n bytes of s so, in place, and returns the
// new length; s must have room for a NUL after its n bytes (one is
// written at the new end). read_text is read_file followed by it, and
// text_copy makes a rewritten copy of a NUL-terminated string (free it).
size_t text_newlines(char *s, size_t n);
char *read_text(const char *path, size_t *len, Error *err);
char *text_copy(const char *s, size_t *len);

// Decodes n bytes into out (room for n code points). Returns the number of
// code points, or -1 with a message naming the byte offset where the first
// malformed sequence starts.
long utf8_decode(const char *bytes, size_t n, uint32_t *out, Error *err);

// Writes the UTF-8 form of cp into out (at most 4 bytes); returns its length.
int utf8_encode(uint32_t cp, char out[4]);

// A printable description of a code point for messages: 'a', '\n', U+00E9.
void utf8_describe(uint32_t cp, char *buf, size_t size);

#endif
