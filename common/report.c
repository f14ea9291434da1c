// report.c - see report.h.
#include "report.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

// A no-break space (U+00A0, two bytes) joins two words into one, and is
// printed as a plain space.
#define NBSP "\xc2\xa0"

// Prints the word w[0..len), its no-break spaces as spaces.
static void print_word(FILE *out, const char *w, int len) {
    for (int i = 0; i < len; i++) {
        if (i + 1 < len && strncmp(w + i, NBSP, 2) == 0) {
            fputc(' ', out);
            i++;
        } else {
            fputc(w[i], out);
        }
    }
}

// The width of the word w[0..len) in columns: its UTF-8 characters (a
// no-break space is one).
static int word_width(const char *w, int len) {
    int cols = 0;
    for (int i = 0; i < len; i++) cols += ((unsigned char)w[i] & 0xc0) != 0x80;
    return cols;
}

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
        if (!line_start && col + gap + word_width(w, len) > width) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (!line_start) {
            fprintf(out, "%*s", gap, "");
            col += gap;
        }
        print_word(out, w, len);
        col += word_width(w, len);
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
