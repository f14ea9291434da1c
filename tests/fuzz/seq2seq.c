// Chapter 7's translation checkpoint reader (seq2seq_load): the config in
// the metadata, every tensor, the tied copies, the step and the "vocab"
// string. As for chapter 5's checkpoints, a config larger than the
// file's tensors must be refused before the model is allocated.
#include "fuzz_util.h"
#include "seq2seq_checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[128];
    fuzz_write(path, sizeof path, fuzz_dir(), "seq2seq.safetensors", data,
               size);
    Seq2Seq m = {0};
    Error err;
    int step = -1;
    char *vocab = NULL;
    if (seq2seq_load(path, &m, &step, &vocab, &err) != 0) {
        if (strchr(err.msg, '\n')) fuzz_fail("a message of two lines");
        if (m.params || step != -1 || vocab)
            fuzz_fail("a failed load changed the caller's variables");
        return 0;
    }
    if (step < 0) fuzz_fail("a negative step, %d", step);
    if (m.num_params * sizeof(float) > size)
        fuzz_fail("%zu parameters from a file of %zu bytes", m.num_params,
                  size);
    free(vocab);
    seq2seq_free(&m);
    return 0;
}
