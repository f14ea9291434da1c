// ch6 - training the GPT on Tiny Shakespeare: AdamW with warmup and a
// cosine schedule, gradient clipping, evaluation, samples, a CSV log,
// checkpoints that resume exactly, and a profile of where the time goes.
//
//   ./ch6                          the default recipe: a few minutes here
//   ./ch6 --preset notes           the course notes' run (5000 steps)
//   ./ch6 --preset nanogpt         nanoGPT's shakespeare-char recipe
//   ./ch6 --out run1 --save-every 500     checkpoints in run1/
//   ./ch6 --resume run1            continue it, bit for bit
//   ./ch6 --steps 50 --profile     time and memory by operation
//
// The program is run.c's train_main, on this CPU; ./ch8 calls the same
// function with its GPU as the backend.
#include "run.h"

int main(int argc, char **argv) {
    return train_main(argc, argv, NULL);
}
