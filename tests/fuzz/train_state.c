// Chapter 6's training state reader (train_state_load): the input is
// written as DIR/state-7.safetensors and loaded as step 7, so the
// train_state metadata (JSON: the step, the training config, both
// generators) and the moments' file are what it checks.
#include "checkpoint_state.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[128];
    fuzz_write(path, sizeof path, fuzz_dir(), "state-7.safetensors", data,
               size);
    TrainState s;
    Error err;
    if (train_state_load(&s, fuzz_dir(), 7, &err) != 0) {
        if (strchr(err.msg, '\n')) fuzz_fail("a message of two lines");
        return 0;
    }
    if (s.step != 7) fuzz_fail("loaded step %d as step 7", s.step);
    for (int i = 0; i < 2; i++) {
        const Rng *r = i ? &s.drop_rng : &s.data_rng;
        if (r->next < 0 || r->next > RNG_N)
            fuzz_fail("a generator's next is %d", r->next);
    }
    // the moments, as trainer_restore takes them
    const StTensor *t = st_find(&s.file, "adamw.m");
    if (t && strcmp(t->dtype, "F32") == 0) {
        float *m = malloc((t->numel ? t->numel : 1) * sizeof *m);
        if (st_copy_f32(&s.file, "adamw.m", m, t->numel, &err) != 0)
            fuzz_fail("adamw.m: %s", err.msg);
        free(m);
    }
    train_state_free(&s);
    return 0;
}
