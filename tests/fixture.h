// fixture.h - reading the reference fixtures under tests/reference/.
//
// A fixture file holds named float tensors that a reference script (with
// PyTorch, say tests/reference/gen_ch2.py) computed; the C tests compare
// against them and never need PyTorch themselves. The format, version 1:
//
//   # fixture v1                     first line, exactly
//   # any other line starting with '#' is a comment
//   x 2 3                            a tensor: its name, then its shape
//   0.1 -2 3.5e-08                   then d0 * d1 * ... values, %.9g,
//   4 5 6                            separated by any whitespace
//   scale                            no dimensions: a scalar (one value)
//   2.5
//
// Names are [A-Za-z0-9_.] and unique in a file; a shape has at most 8
// dimensions, each >= 0 (nan, inf and -inf are allowed as values). Masks
// and other integers are stored as floats. %.9g prints every float32 so
// that it reads back exactly.
#ifndef TESTS_FIXTURE_H
#define TESTS_FIXTURE_H

#include <stddef.h>

#include "error.h"

#define FIXTURE_MAX_DIMS 8

typedef struct Fixture Fixture;

// Reads and checks a whole file. NULL with a message naming the file and
// line on any problem (missing file, bad header, too few values, ...).
Fixture *fixture_load(const char *path, Error *err);
void fixture_free(Fixture *f);

// The values of tensor name, checking its shape when shape is not NULL
// (ndim dimensions). NULL with a message when the name is missing or the
// shape differs; *n (when not NULL) gets the number of values.
const float *fixture_find(const Fixture *f, const char *name,
                          const int *shape, int ndim, size_t *n,
                          Error *err);

// The shape of tensor name into shape (room for FIXTURE_MAX_DIMS) and
// its number of dimensions; -1 when there is no such tensor.
int fixture_dims(const Fixture *f, const char *name, int *shape);

// For tests: like fixture_find, but a missing name or a wrong shape fails
// the running Check test with that message, so the result is never NULL.
const float *fixture_get(const Fixture *f, const char *name,
                         const int *shape, int ndim);

#endif
