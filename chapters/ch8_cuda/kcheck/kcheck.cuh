// kcheck.cuh - every kernel of chapter 8 against the CPU function it
// replaces, on random inputs: what ./ch8 --check prints, and what the
// tests run (tests/ch8) under the emulation at several sizes.
//
// A check runs the CPU function and the kernel on the same inputs and
// compares each output tensor as a whole: its error is
//   max_i |gpu_i - cpu_i| / max_i |cpu_i|
// (so a value near zero, where rounding differs most, is not divided by
// itself), and it passes when that is at most tol: 1e-5 for fp32
// kernels, unless the check states another tolerance and why.
//
// The checks live in this folder by family (check_elementwise.cu,
// check_norms.cu, check_products.cu, check_attention.cu,
// check_tensor_cores.cu, check_loss_optim.cu, check_fused.cu,
// check_model.cu, check_graph.cu), their shared helpers in kcheck_util.cu,
// and the table of every check at its sizes in kcheck.cu.
#ifndef CH8_KCHECK_CUH
#define CH8_KCHECK_CUH

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { KCHECK_MAX = 16 };

typedef struct {
    char name[64];        // "gelu_forward_cuda: out"
    char sizes[64];       // "n=1000 exact"
    double err, tol;      // as above
    bool ok;
    bool skipped;         // not run: the GPU lacks what it needs (ok)
} KResult;

typedef struct {
    KResult r[KCHECK_MAX];
    int n;
    char sizes[64];       // the sizes of the results appended next
} KReport;

// One check: runs at sizes sz (what each number means is the check's
// own: see its table entry) with inputs drawn from seed, and appends one
// result per compared tensor to rep.
typedef void (*KCheckFn)(KReport *rep, const int sz[4], uint64_t seed);

// A row of the table: one check at one set of sizes.
typedef struct {
    const char *name;     // the CPU function's file: "activation"
    KCheckFn run;
    int sz[4];            // the sizes (odd on purpose)
    const char *dims;     // what sz means: "n kind"
    // A variant of the whole model's step, which launches no kernel that
    // a check of its own does not run: make check-tsan, whose subject is
    // the kernels' barriers, skips it (make check runs every check).
    bool model_variant;
} KCheck;

// The table's rows, in order (row i draws its inputs from a seed that
// its place gives), and how many there are.
const KCheck *kcheck_row(int i);
int kcheck_rows(void);

// Runs every row and prints a line per result; returns the number that
// failed.
int kcheck_all(bool verbose);

#ifdef __cplusplus
}
#endif

#endif
