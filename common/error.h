// error.h - reporting errors: one clear line, then a non-zero exit.
//
// Two styles, for two kinds of code:
//  * Library code that can fail on user input (a bad file, a character that
//    is not in the vocabulary) fills an Error and returns -1 (or NULL), so a
//    caller or a test can look at the message.
//  * Programs call die() with that message: "ch1: error: ...", exit 1.
// assert() is kept for programmer errors only, never for user input.
#ifndef COMMON_ERROR_H
#define COMMON_ERROR_H

typedef struct {
    char msg[512];
} Error;

// Formats the message into err (when err is not NULL); always returns -1 so
// that library code can write `return error_set(err, "...", ...);`. The
// message stays one line: a control character in it (a newline inside a
// name it quotes) becomes '?'.
int error_set(Error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// Name printed in front of every message ("ch1"); set once by main().
// It also arranges that a program whose report could not be written
// (standard output on a full disk, or /dev/full) ends with one error line
// and status 1 rather than 0.
void error_set_progname(const char *argv0);
const char *error_progname(void);

// Prints "<prog>: error: <message>" on stderr and exits with status 1.
// (Chapter 8's CUDA files, which are C++, include this header too.)
#ifdef __cplusplus
[[noreturn]]
#else
_Noreturn
#endif
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

// Every error exit (die, and flags_fail of flags.h with status 2) ends
// here: prints "<prog>: error: <line>" on stderr and exits with status.
#ifdef __cplusplus
[[noreturn]]
#else
_Noreturn
#endif
void error_exit(int status, const char *line);

// A program that runs as several cooperating processes (chapter 6 under
// MPI) must end all of them on an error, and print the message once, not
// once per process. It sets a hook: error_exit then calls hook(status,
// line) instead, which must not return.
typedef void (*ErrorExitHook)(int status, const char *line);
void error_set_exit_hook(ErrorExitHook hook);

#endif
