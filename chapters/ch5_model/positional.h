// positional.h - the fixed sinusoidal position table of "Attention Is All
// You Need" (and of the course notes' model), the alternative to a
// learned wpe.
//
// For position t and channel pair i (channels 2i and 2i+1):
//   pe[t, 2i]   = sin(t * w_i)
//   pe[t, 2i+1] = cos(t * w_i),    w_i = 10000^(-2i / C)
// so each pair turns at its own speed, from one radian per position
// (i = 0) down to 1/10000 of that. With an odd C the last channel has no
// partner and gets the sine only.
#ifndef CH5_POSITIONAL_H
#define CH5_POSITIONAL_H

//> sinusoidal-api
// Fills pe (T, C). The angle t * w_i is computed in double and rounded
// once, so position 1000 is as accurate as position 1.
void sinusoidal_table(float *pe, int T, int C);
//< sinusoidal-api

#endif
