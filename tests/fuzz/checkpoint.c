// Chapter 5's checkpoint reader (checkpoint_load_step): the safetensors
// file, the model config in its metadata, every tensor against that
// config, the step and the vocabulary. A config that asks for a larger
// model than the file's tensors hold must be refused before anything of
// that size is allocated (run.sh sets libFuzzer's -malloc_limit_mb).
#include "checkpoint.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[128];
    fuzz_write(path, sizeof path, fuzz_dir(), "model.safetensors", data,
               size);
    Gpt m;
    Vocab vocab;
    Error err;
    int step = -1;
    if (checkpoint_load_step(path, &m, &vocab, &step, &err) != 0) {
        if (strchr(err.msg, '\n')) fuzz_fail("a message of two lines");
        if (m.params || vocab.chars) fuzz_fail("half a model left behind");
        return 0;
    }
    if (step < 0) fuzz_fail("a negative step, %d", step);
    if (vocab.size != m.cfg.vocab_size)
        fuzz_fail("a vocabulary of %d for a model of %d", vocab.size,
                  m.cfg.vocab_size);
    if (m.num_params * sizeof(float) > size)
        fuzz_fail("%zu parameters from a file of %zu bytes", m.num_params,
                  size);
    for (int i = 1; i < vocab.size; i++)
        if (vocab.chars[i] <= vocab.chars[i - 1])
            fuzz_fail("the vocabulary is not ascending");
    gpt_free(&m);
    vocab_free(&vocab);
    return 0;
}
