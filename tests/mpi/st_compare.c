// st_compare A B TOL - do two safetensors files hold the same tensors,
// to within TOL? Prints, for the tensor that differs most, its name and
// the largest |a - b| / (1 + |b|) over its F32 elements; exit 0 when that
// is at most TOL, 1 when it is not or the files differ in their tensors
// (names, shapes, dtypes), 2 on a usage error. tests/mpi.sh compares the
// checkpoint of a run on two processes with that of one process with it.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "safetensors.h"

int main(int argc, char **argv) {
    error_set_progname(argv[0]);
    if (argc != 4) {
        fprintf(stderr, "usage: st_compare A.safetensors B.safetensors TOL\n");
        return 2;
    }
    double tol = atof(argv[3]), worst = 0;
    const char *worst_name = "(none)";
    StFile a, b;
    Error err;
    if (st_load(&a, argv[1], &err) != 0 || st_load(&b, argv[2], &err) != 0)
        die("%s", err.msg);
    if (a.n_tensors != b.n_tensors)
        die("%s has %d tensors, %s %d", argv[1], a.n_tensors, argv[2],
            b.n_tensors);
    size_t compared = 0;
    for (int i = 0; i < a.n_tensors; i++) {
        const StTensor *ta = &a.tensors[i], *tb = st_find(&b, ta->name);
        if (!tb || tb->numel != ta->numel || tb->ndim != ta->ndim
            || strcmp(ta->dtype, tb->dtype) != 0)
            die("tensor %s: not in %s, or another shape or type", ta->name,
                argv[2]);
        if (strcmp(ta->dtype, "F32") != 0) continue;
        const unsigned char *x = st_bytes(&a, ta), *y = st_bytes(&b, tb);
        for (size_t k = 0; k < ta->numel; k++) {
            float u, v;   // the data section need not be aligned
            memcpy(&u, x + 4 * k, sizeof u);
            memcpy(&v, y + 4 * k, sizeof v);
            double d = fabs((double)u - v) / (1 + fabs((double)v));
            if (!(d <= worst)) worst = d, worst_name = ta->name;
        }
        compared += ta->numel;
    }
    printf("%zu floats: largest difference %.3g (in %s)\n", compared, worst,
           worst_name);
    st_free(&a);
    st_free(&b);
    return worst <= tol ? 0 : 1;
}
