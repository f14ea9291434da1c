// peak - runs a command and prints its peak resident memory.
//
//   peak PROG ARGS...
//
// Runs PROG with ARGS, waits for it, prints "peak_kib N" on stderr (the
// high-water mark of its resident memory, VmHWM, in KiB, as the kernel
// reports it to wait4) and exits with PROG's status (128 + N for a
// signal N). tests/memory.sh holds the programs' memory estimates
// against it. What the child held before exec, a copy of this small
// program, counts too: well under a MiB.
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: peak PROG ARGS...\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("peak: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[1], argv + 1);
        perror(argv[1]);
        _exit(127);
    }
    int status;
    struct rusage use;
    if (wait4(pid, &status, 0, &use) < 0) {
        perror("peak: wait4");
        return 2;
    }
    fprintf(stderr, "peak_kib %ld\n", use.ru_maxrss);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
