// The safetensors reader (common/safetensors.c): st_load_bytes, which is
// st_load without the file, then st_find, st_meta, st_bytes and
// st_copy_f32 on every tensor and key of what loads.
#include "fuzz_util.h"
#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    StFile f;
    Error err;
    if (st_load_bytes(&f, data, size, "fuzz.safetensors", &err) != 0) {
        if (strchr(err.msg, '\n')) fuzz_fail("a message of two lines");
        st_free(&f);   // safe on a failed load too
        return 0;
    }
    size_t at = 0;
    for (int i = 0; i < f.n_tensors; i++) {
        const StTensor *t = &f.tensors[i];
        // the ranges tile the data section, in order
        if (t->begin != at || t->end < t->begin || t->end > f.data_size
            || t->end - t->begin != t->numel * t->elem_size)
            fuzz_fail("tensor %d's range [%zu, %zu) is wrong", i, t->begin,
                      t->end);
        at = t->end;
        const StTensor *found = st_find(&f, t->name);
        if (!found || strcmp(found->name, t->name) != 0)
            fuzz_fail("st_find does not find tensor %d", i);
        const uint8_t *p = st_bytes(&f, t);
        uint8_t sum = 0;   // every byte is readable (ASan watches)
        for (size_t k = t->begin; k < t->end; k++) sum ^= p[k - t->begin];
        volatile uint8_t sink = sum;
        (void)sink;
        float *out = malloc((t->numel ? t->numel : 1) * sizeof *out);
        int rc = st_copy_f32(&f, t->name, out, t->numel, &err);
        if ((rc == 0) != (strcmp(t->dtype, "F32") == 0))
            fuzz_fail("st_copy_f32 of a %s tensor returned %d", t->dtype,
                      rc);
        // a wrong count is refused
        if (st_copy_f32(&f, t->name, out, t->numel + 1, &err) == 0)
            fuzz_fail("st_copy_f32 took a count one too large");
        free(out);
    }
    if (at != f.data_size) fuzz_fail("the data section is not all used");
    for (int i = 0; i < f.n_meta; i++)
        if (!st_meta(&f, f.meta_keys[i]))
            fuzz_fail("st_meta does not find key %d", i);
    (void)st_find(&f, "");
    (void)st_meta(&f, "");
    st_free(&f);
    return 0;
}
