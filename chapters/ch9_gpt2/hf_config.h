// hf_config.h - a Hugging Face GPT-2 config.json as chapter 5's GptConfig,
// and back.
//
// The keys that shape the model (transformers' GPT2Config):
//
//   vocab_size, n_embd, n_layer, n_head     V, C, L, NH (required)
//   n_positions (older files: n_ctx)         block_size, wpe's rows
//   n_inner                                  F; absent or null: 4C
//   activation_function                      "gelu_new" (GPT-2's tanh
//       form; "gelu_pytorch_tanh" too) or "gelu" (the exact one); absent:
//       gelu_new, transformers' default. Others ("relu", "gelu_fast",
//       ...) are refused.
//   layer_norm_epsilon                       must be chapter 4's 1e-5
//   resid_pdrop                              dropout (absent: 0.1); the
//       attention-weight dropout (attn_pdrop) has no place in chapter 5's
//       model and is ignored on load
//   tie_word_embeddings                      must be true (the default)
//
// and refused when set to what chapter 5's model cannot do:
// scale_attn_weights false, scale_attn_by_inverse_layer_idx true,
// add_cross_attention true, a model_type other than "gpt2". Every other
// key (token ids, summary_*, task_specific_params, ...) is ignored. A
// GPT-2 always has biases and learned positions.
#ifndef CH9_HF_CONFIG_H
#define CH9_HF_CONFIG_H

#include <stddef.h>

#include "gpt.h"
#include "json.h"

// Reads the config.json at path into cfg (checked with gpt_config_check
// too). Returns 0, or -1 with one line naming the file and the key.
int hf_config_load(const char *path, GptConfig *cfg, Error *err);

// The same on len bytes of text; path names it in messages.
int hf_config_parse(const char *text, size_t len, const char *path,
                    GptConfig *cfg, Error *err);

// Appends to b the config.json that transformers reads back as cfg
// (GPT2LMHeadModel.from_pretrained), with the keys and the formatting of
// save_pretrained's (sorted, indented by 2). -1 with a message when cfg
// is no GPT-2: without biases, or with sinusoidal positions.
int hf_config_json(StrBuf *b, const GptConfig *cfg, Error *err);

#endif
