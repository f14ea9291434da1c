// report.c - see report.h.
#include "report.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void fold_print(FILE *out, const char *text, int col, int indent, int width) {
    bool line_start = true;   // nothing printed on this line yet
    const char *w = text;
    while (*w) {
        if (*w == '\n') {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
            line_start = true;
            w++;
            continue;
        }
        int gap = (int)strspn(w, " ");   // kept inside a line, as written
        w += gap;
        if (!*w || *w == '\n') continue;
        int len = (int)strcspn(w, " \n");
        if (!line_start && col + gap + len > width) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (!line_start) {
            fprintf(out, "%*s", gap, "");
            col += gap;
        }
        fprintf(out, "%.*s", len, w);
        col += len;
        line_start = false;
        w += len;
    }
    fputc('\n', out);
}

void report_line(const char *label, const char *fmt, ...) {
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = malloc(n > 0 ? (size_t)n + 1 : 1);
    if (!text) {   // no memory for a line: print it unfolded
        printf("%-*s ", REPORT_INDENT - 1, label);
        vprintf(fmt, ap2);
        va_end(ap2);
        putchar('\n');
        return;
    }
    vsnprintf(text, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    int col = printf("%-*s", REPORT_INDENT, label);
    if ((int)strlen(label) >= REPORT_INDENT) {   // one space, then the text
        putchar(' ');
        col++;
    }
    fold_print(stdout, text, col, REPORT_INDENT, REPORT_WIDTH);
    free(text);
}
