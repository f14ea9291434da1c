#include "error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The program name is the one piece of process-wide state in the core: it
// is written once at start-up and only read afterwards.
static const char *progname = "transformer";

int error_set(Error *err, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        // one line, whatever it quotes: a tensor name or an argument
        // holding a newline (or any control character) shows '?' there
        for (char *c = err->msg; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
    }
    return -1;
}

// Set by die(), whose own line is the one to show.
static bool dying;

// At exit: the report is only as good as its last write. printf's errors
// are not looked at one by one; the stream remembers them (ferror), and
// the last buffered bytes are written here (fflush).
static void check_stdout(void) {
    if (dying) return;
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout)) return;
    fprintf(stderr, "%s: error: cannot write the output%s%s\n", progname,
            errno ? ": " : "", errno ? strerror(errno) : "");
    _exit(1);
}

void error_set_progname(const char *argv0) {
    static bool registered;
    const char *slash = strrchr(argv0, '/');
    progname = slash ? slash + 1 : argv0;
    if (!registered) registered = atexit(check_stdout) == 0;
}

const char *error_progname(void) { return progname; }

static ErrorExitHook exit_hook;

void error_set_exit_hook(ErrorExitHook hook) { exit_hook = hook; }

_Noreturn void error_exit(int status, const char *line) {
    dying = true;
    fflush(stdout);
    if (exit_hook) exit_hook(status, line);
    fprintf(stderr, "%s: error: %s\n", progname, line);
    exit(status);
}

_Noreturn void die(const char *fmt, ...) {
    char line[8192];   // a path is at most 4096: room for two and the text
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    error_exit(1, line);
}
