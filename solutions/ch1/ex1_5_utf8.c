// Exercise 1.5 - reference answer.
#include "ch1_exercises.h"

long ex_utf8_decode(const char *bytes, size_t n, uint32_t *out,
                    size_t *bad_offset) {
    const unsigned char *s = (const unsigned char *)bytes;
    long count = 0;
    for (size_t i = 0; i < n;) {
        unsigned char lead = s[i];
        int extra;              // continuation bytes that must follow
        uint32_t cp, min;       // min: smallest value this length may hold
        if (lead < 0x80)                { extra = 0; cp = lead; min = 0; }
        else if (lead >= 0xc2 && lead <= 0xdf)
                                        { extra = 1; cp = lead & 0x1f; min = 0x80; }
        else if ((lead & 0xf0) == 0xe0) { extra = 2; cp = lead & 0x0f; min = 0x800; }
        else if (lead >= 0xf0 && lead <= 0xf4)
                                        { extra = 3; cp = lead & 0x07; min = 0x10000; }
        else goto bad;          // 0x80-0xc1 and 0xf5-0xff never start one
        if (n - i <= (size_t)extra) goto bad;
        for (int k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xc0) != 0x80) goto bad;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            goto bad;
        out[count++] = cp;
        i += (size_t)extra + 1;
        continue;
    bad:
        *bad_offset = i;
        return -1;
    }
    return count;
}
