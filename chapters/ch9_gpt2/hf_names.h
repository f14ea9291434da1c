// hf_names.h - Hugging Face's GPT-2 tensor names against chapter 5's, and
// the transpose that its Conv1D weights need.
//
// Chapter 5 names its tensors as nanoGPT does, and nanoGPT took GPT-2's
// names: a transformers GPT2LMHeadModel holds the same tensors under the
// same names, with three differences, all handled here:
//
//   1. The prefix. model.save_pretrained(DIR) writes names under
//      "transformer." (transformer.h.0.attn.c_attn.weight), as chapter 5
//      does; the file on the Hub (openai-community/gpt2) has none
//      (h.0.attn.c_attn.weight).
//   2. Buffers. The Hub's file also holds each layer's causal mask,
//      h.N.attn.bias (1, 1, n_positions, n_positions), and in some files
//      h.N.attn.masked_bias (a scalar): constants of the old code, not
//      weights. transformers ignores them; so do we (HF_SKIP).
//   3. Conv1D. OpenAI's code stored its four projections, attn.c_attn,
//      attn.c_proj, mlp.c_fc and mlp.c_proj, as (in, out) matrices, y =
//      x @ W + b, and transformers keeps that layout (its Conv1D). A
//      Linear, chapter 2's and PyTorch's, stores (out, in): those four
//      weights are transposed on the way in and on the way out
//      (HF_TRANSPOSE). Their biases, the embeddings and the LayerNorms
//      are the same either way (HF_COPY).
//
// lm_head.weight (never prefixed), when a file has it, is the LM head,
// which GPT-2 ties to wte: it must equal wte (HF_TIED).
#ifndef CH9_HF_NAMES_H
#define CH9_HF_NAMES_H

#include <stddef.h>

typedef enum {
    HF_COPY,        // a tensor of ours, stored as we store it
    HF_TRANSPOSE,   // a Conv1D weight: ours transposed
    HF_SKIP,        // a mask buffer: not part of the model
    HF_TIED,        // lm_head.weight: must equal transformer.wte.weight
} HfRole;

// The name of the Hugging Face tensor hf in chapter 5's naming, written
// into ours (size bytes), and what to do with the tensor. For HF_COPY and
// HF_TRANSPOSE, ours is the tensor it becomes (hf with "transformer." in
// front unless it had it); for HF_TIED, "transformer.wte.weight", the
// tensor it must equal; for HF_SKIP, "". The map looks at the name alone
// (the loader then checks that ours is a tensor of the model). Returns
// the role, or -1 when ours would not fit in size bytes.
int hf_name_map(char *ours, size_t size, const char *hf);

// out = inp^T: inp (rows, cols) row-major, out (cols, rows). A Conv1D
// weight of in x out is a Linear weight of out x in, and back.
void conv1d_transpose(float *out,        // (cols, rows)
                      const float *inp,  // (rows, cols)
                      int rows, int cols);

// The layer of a name of the stack, "h.N." after the prefix: N, or -1
// when the name is not of a layer.
int hf_layer_of(const char *name);

#endif
