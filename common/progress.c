#include "progress.h"

#include <unistd.h>

#include "timer.h"

void format_duration(double s, char *buf, size_t size) {
    if (s < 0) s = 0;
    if (s < 60) snprintf(buf, size, "%.1fs", s);
    else if (s < 3600) snprintf(buf, size, "%dm%02ds", (int)s / 60, (int)s % 60);
    else snprintf(buf, size, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

void progress_start(Progress *p, FILE *out, long total_steps, int every) {
    p->out = out;
    p->total_steps = total_steps;
    p->every = every > 0 ? every : 1;
    p->seconds = 0;
    p->steps = 0;
    p->tty = isatty(fileno(out));
    p->open = false;
}

void progress_update(Progress *p, long step, double tokens, double seconds,
                     const char *extra) {
    p->seconds += seconds;
    p->steps++;
    if (!p->tty && p->steps > 1 && step % p->every != 0
        && step != p->total_steps)
        return;
    char eta[32];
    format_duration(p->seconds / p->steps * (double)(p->total_steps - step),
                    eta, sizeof eta);
    if (p->tty) fputs("\r\033[K", p->out);   // back to column 0, clear line
    fprintf(p->out, "step %ld/%ld", step, p->total_steps);
    if (extra && *extra) fprintf(p->out, "  %s", extra);
    fprintf(p->out, "  %.0f tok/s  ETA %s",
            seconds > 0 ? tokens / seconds : 0.0, eta);
    if (p->tty) p->open = true;
    else fputc('\n', p->out);
    fflush(p->out);
}

void progress_end(Progress *p) {
    if (p->open) fputc('\n', p->out);
    p->open = false;
    fflush(p->out);
}
