#include "utf8.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

char *read_file(const char *path, size_t *len, Error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        error_set(err, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = xmalloc(cap + 1);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) buf = xrealloc(buf, (cap *= 2) + 1);
    }
    int failed = ferror(f) ? errno : 0;
    fclose(f);
    if (failed) {
        free(buf);
        error_set(err, "cannot read %s: %s", path, strerror(failed));
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

//> text-newlines
size_t text_newlines(char *s, size_t n) {
    const char *cr = memchr(s, '\r', n);
    size_t w = cr ? (size_t)(cr - s) : n;   // all before the first stays
    for (size_t r = w; r < n; r++) {
        if (s[r] != '\r') {
            s[w++] = s[r];
            continue;
        }
        s[w++] = '\n';                           // a line end ...
        if (r + 1 < n && s[r + 1] == '\n') r++;  // ... of one or two bytes
    }
    s[w] = '\0';
    return w;
}
//< text-newlines

char *read_text(const char *path, size_t *len, Error *err) {
    char *s = read_file(path, len, err);
    if (s) *len = text_newlines(s, *len);
    return s;
}

char *text_copy(const char *s, size_t *len) {
    size_t n = strlen(s);
    char *t = xmalloc(n + 1);
    memcpy(t, s, n + 1);
    *len = text_newlines(t, n);
    return t;
}

//> utf8-decode
long utf8_decode(const char *bytes, size_t n, uint32_t *out, Error *err) {
    const unsigned char *s = (const unsigned char *)bytes;
    long count = 0;
    size_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        int len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2
                : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
        if (len == 0)
            return error_set(err, "invalid UTF-8 at byte %zu (0x%02x starts "
                             "no character)", i, b);
        if (i + len > n)
            return error_set(err, "invalid UTF-8 at byte %zu (a %d-byte "
                             "sequence cut short)", i, len);
        uint32_t cp = len == 1 ? b : b & (0x7f >> len);
        for (int k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return error_set(err, "invalid UTF-8 at byte %zu (0x%02x "
                                 "at %zu is no continuation)", i, s[i + k],
                                 i + k);
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        static const uint32_t min_for_len[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min_for_len[len] || cp > 0x10ffff
            || (cp >= 0xd800 && cp <= 0xdfff))
            return error_set(err, "invalid UTF-8 at byte %zu (overlong, "
                             "surrogate or above U+10FFFF)", i);
        out[count++] = cp;
        i += len;
    }
    return count;
}
//< utf8-decode

int utf8_encode(uint32_t cp, char out[4]) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

void utf8_describe(uint32_t cp, char *buf, size_t size) {
    if (cp == '\n') snprintf(buf, size, "'\\n'");
    else if (cp == '\t') snprintf(buf, size, "'\\t'");
    else if (cp == '\'') snprintf(buf, size, "\"'\"");
    else if (cp >= 0x20 && cp < 0x7f) snprintf(buf, size, "'%c'", (int)cp);
    else if (cp < 0x20 || cp == 0x7f) snprintf(buf, size, "U+%04X", cp);
    else {
        char u[5] = {0};
        u[utf8_encode(cp, u)] = '\0';
        snprintf(buf, size, "'%s' (U+%04X)", u, cp);
    }
}
