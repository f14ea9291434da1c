// ch7 - the encoder-decoder translation model. A placeholder for now: the
// chapter's program is being written; its loss is in smoothing.c.
#include <stdio.h>

int main(void) {
    puts("chapter 7: coming");
    return 0;
}
