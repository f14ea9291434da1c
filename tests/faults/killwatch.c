// killwatch.c - runs a program and sends it a signal at a chosen moment:
// a while after it starts, or when a file it writes appears in a folder
// (so that a kill lands in the middle of a save, not only between saves).
// For tests/faults.sh.
//
//   killwatch [options] -- PROGRAM ARGS...
//     --dir DIR        the folder to watch (it must exist)
//     --on EVENT:GLOB  the trigger: a name matching GLOB in DIR is
//                      created (create), renamed into DIR (moved) or
//                      closed after writing (written)
//     --nth N          the Nth such event (default 1)
//     --delay-us N     then wait N microseconds (default 0)
//     --after-ms N     no event: trigger N ms after the start
//     --signal N       the signal to send (default 9, SIGKILL)
//     --again-ms N     send it a second time N ms after the first
//     --limit-s N      kill the program (and fail) after N s (default 120)
//
// Prints one line: "exit S" or "signal S", the event that triggered (or
// "no trigger" when the program ended first), and the milliseconds from
// the (last) signal to the end; the program's output passes through.
// Exits 0, or 1 when the time limit was hit, 2 on a usage error.
#define _GNU_SOURCE
#include <errno.h>
#include <fnmatch.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void usage(const char *msg) {
    fprintf(stderr, "killwatch: %s (see tests/faults/killwatch.c)\n", msg);
    exit(2);
}

static long number(const char *s, const char *flag) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0) {
        fprintf(stderr, "killwatch: %s takes a number, got '%s'\n", flag, s);
        exit(2);
    }
    return v;
}

// True while the child runs (its end is left for the final waitpid).
static int alive(pid_t child) {
    siginfo_t info = {0};
    return waitid(P_PID, (id_t)child, &info, WEXITED | WNOHANG | WNOWAIT)
               == 0 && info.si_pid == 0;
}

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

typedef struct {
    const char *dir, *glob;
    uint32_t mask;
    long nth, delay_us, after_ms, again_ms, limit_s;
    int sig;
} Options;

static char **parse(int argc, char **argv, Options *o) {
    *o = (Options){.nth = 1, .after_ms = -1, .again_ms = -1, .sig = SIGKILL,
                   .limit_s = 120};
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *f = argv[i];
        if (i + 1 >= argc) usage("a flag without its value");
        const char *v = argv[++i];
        if (!strcmp(f, "--dir")) o->dir = v;
        else if (!strcmp(f, "--on")) {
            const char *colon = strchr(v, ':');
            if (!colon) usage("--on takes EVENT:GLOB");
            size_t k = (size_t)(colon - v);
            if (k == 6 && !strncmp(v, "create", k)) o->mask = IN_CREATE;
            else if (k == 5 && !strncmp(v, "moved", k)) o->mask = IN_MOVED_TO;
            else if (k == 7 && !strncmp(v, "written", k))
                o->mask = IN_CLOSE_WRITE;
            else usage("--on's EVENT is create, moved or written");
            o->glob = colon + 1;
        } else if (!strcmp(f, "--nth")) o->nth = number(v, f);
        else if (!strcmp(f, "--delay-us")) o->delay_us = number(v, f);
        else if (!strcmp(f, "--after-ms")) o->after_ms = number(v, f);
        else if (!strcmp(f, "--signal")) o->sig = (int)number(v, f);
        else if (!strcmp(f, "--again-ms")) o->again_ms = number(v, f);
        else if (!strcmp(f, "--limit-s")) o->limit_s = number(v, f);
        else usage("unknown flag");
    }
    if (i + 1 >= argc) usage("no program after --");
    if ((o->glob != NULL) == (o->after_ms >= 0))
        usage("give one of --on and --after-ms");
    if (o->glob && !o->dir) usage("--on needs --dir");
    return argv + i + 1;
}

// Reads inotify events until the nth match; 1 when it came, 0 when the
// child ended first (or the time limit passed: *late is set).
static int wait_event(int fd, const Options *o, pid_t child, double start,
                      char *what, size_t what_size, int *late) {
    long seen = 0;
    char buf[8192] __attribute__((aligned(8)));
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, 20);
        if (r > 0) {
            ssize_t n = read(fd, buf, sizeof buf);
            for (ssize_t off = 0; n > 0 && off < n;) {
                struct inotify_event *e = (void *)(buf + off);
                off += (ssize_t)(sizeof *e + e->len);
                if (!(e->mask & o->mask) || e->len == 0
                    || fnmatch(o->glob, e->name, 0) != 0)
                    continue;
                if (++seen == o->nth) {
                    snprintf(what, what_size, "%s", e->name);
                    return 1;
                }
            }
        }
        if (!alive(child)) return 0;
        if (now_ms() - start > o->limit_s * 1e3) {
            *late = 1;
            return 0;
        }
    }
}

int main(int argc, char **argv) {
    Options o;
    char **cmd = parse(argc, argv, &o);
    int fd = -1;
    if (o.glob) {
        fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd < 0 || inotify_add_watch(fd, o.dir, o.mask) < 0) {
            fprintf(stderr, "killwatch: cannot watch %s: %s\n", o.dir,
                    strerror(errno));
            return 2;
        }
    }
    double start = now_ms();
    pid_t child = fork();
    if (child < 0) usage("fork failed");
    if (child == 0) {
        execvp(cmd[0], cmd);
        fprintf(stderr, "killwatch: cannot run %s: %s\n", cmd[0],
                strerror(errno));
        _exit(127);
    }
    char what[300] = "";
    int late = 0, fired;
    if (o.glob) {
        fired = wait_event(fd, &o, child, start, what, sizeof what, &late);
    } else {
        while (now_ms() - start < o.after_ms && alive(child)) sleep_us(1000);
        fired = alive(child);
        snprintf(what, sizeof what, "%ld ms", o.after_ms);
    }
    double sent = 0;
    if (fired) {
        if (o.delay_us) sleep_us(o.delay_us);
        kill(child, o.sig);
        sent = now_ms();
        if (o.again_ms >= 0) {
            sleep_us(o.again_ms * 1000);
            kill(child, o.sig);
            sent = now_ms();
        }
    } else if (late) {
        kill(child, SIGKILL);
    }
    int status;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    double end = now_ms();
    if (WIFSIGNALED(status)) printf("signal %d", WTERMSIG(status));
    else printf("exit %d", WEXITSTATUS(status));
    if (fired) printf(" at %s, ended %.0f ms after the signal\n", what,
                      end - sent);
    else printf(" with no trigger%s\n", late ? " (time limit)" : "");
    return late ? 1 : 0;
}
