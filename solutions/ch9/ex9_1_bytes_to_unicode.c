// Exercise 9.1 - reference answer: mark the bytes that print as
// themselves, then number the others from 256 in the order of the bytes.
#include <stdbool.h>

#include "ch9_exercises.h"

void ex_bytes_to_unicode(uint32_t cp[256]) {
    bool itself[256] = {false};
    for (int b = '!'; b <= '~'; b++) itself[b] = true;
    for (int b = 0xa1; b <= 0xac; b++) itself[b] = true;
    for (int b = 0xae; b <= 0xff; b++) itself[b] = true;
    uint32_t others = 0;
    for (int b = 0; b < 256; b++)
        cp[b] = itself[b] ? (uint32_t)b : 256 + others++;
}
