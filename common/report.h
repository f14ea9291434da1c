// report.h - the chapter programs' report lines, at most 80 columns wide:
//
//   model       4 layers, 4 heads, 128 wide, block 128, dropout 0, bias false:
//               812288 parameters
//
// A label in a field of 12 columns, then the text, folded between words so
// that a terminal of 80 columns never wraps it in the middle of a number.
#ifndef COMMON_REPORT_H
#define COMMON_REPORT_H

#include <stdio.h>

enum { REPORT_INDENT = 12, REPORT_WIDTH = 80 };

// Prints text to out from column col, breaking between words before a word
// would pass column width (a column is a UTF-8 character); each new line
// starts with indent spaces. A newline in text also starts such a line. A
// word longer than a line is printed whole. A no-break space (U+00A0,
// "\xc2\xa0") joins two words, never broken there, and prints as a space.
// Ends with a newline.
void fold_print(FILE *out, const char *text, int col, int indent, int width);

// printf's format into "label       text", folded as above, to stdout.
void report_line(const char *label, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
