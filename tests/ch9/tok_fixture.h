// tok_fixture.h - what the tests of chapter 9's tokenizer and of exercises
// 9.1 and 9.2 read from tests/reference/ch9_tok/ (written by
// tests/reference/gen_ch9_tokenizer.py): the tokenizer trained on Tiny
// Shakespeare, and expected.json with tiktoken's ids. Each function fails
// the running Check test with a message when a file is missing or wrong.
#ifndef TESTS_CH9_TOK_FIXTURE_H
#define TESTS_CH9_TOK_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "tokenizer.h"

#define TOK_DIR "tests/reference/ch9_tok"

// expected.json, parsed (json_free it).
Json *tokfx_expected(void);
// The member key of obj, which must exist and have type type.
const Json *tokfx_get(const Json *obj, const char *key, JsonType type);
// The bytes of a hex string (*n of them, NUL after), to free.
char *tokfx_hex(const char *hex, size_t *n);
// A JSON array of integers as a new int array (*n of them), to free.
int *tokfx_ids(const Json *arr, int *n);
// The bytes of entry item's "hex" (*n of them, NUL after) and its "ids"
// (*ids, *n_ids of them): free both.
char *tokfx_entry(const Json *item, size_t *n, int **ids, int *n_ids);
// The Tiny Shakespeare tokenizer of TOK_DIR.
void tokfx_load(Gpt2Tokenizer *t);
// A tokenizer of the 256 bytes (byte b is id b) and n merges, given as
// merges.txt writes them ("a b", of printable ASCII): merge i makes id
// 256 + i; then <|endoftext|> when eot. The bytes' characters come from
// expected.json (Hugging Face's bytes_to_unicode), not from the chapter.
void tokfx_small(Gpt2Tokenizer *t, const char *const *merges, int n,
                 bool eot);
// The two files of that tokenizer, as text (sb_free them).
void tokfx_small_text(StrBuf *vocab, StrBuf *merges_txt,
                      const char *const *merges, int n, bool eot);
// The n bytes at s for a message (at most 40, cut short with "..."):
// ASCII as it is, a control character or any byte from 0x7f as \xNN,
// so that the message is plain ASCII whatever the bytes.
const char *tokfx_escape(char *buf, size_t size, const char *s, size_t n);
// "[1, 2, 3]" (at most the first 24) into buf, for messages.
const char *tokfx_show(char *buf, size_t size, const int *ids, int n);

#endif
