#!/usr/bin/env python3
"""Writes tests/reference/ch9_ft/: a tiny GPT-2 in Hugging Face's folder
layout for chapter 9's program, ./ch9, to generate with and fine-tune in
the tests, the CI and tests/memory.sh, where OpenAI's weights (make gpt2)
are not:

    python3 tests/reference/gen_ch9_ft.py     # from the repository root

needs PyTorch and transformers (written with torch 2.15, transformers
5.24); the build and the tests never do. The model is transformers' own
GPT2LMHeadModel, initialised as transformers initialises one (seed 9),
untrained, with the tokenizer of tests/reference/ch9_tok/ (a GPT-2-format
BPE of 2,048 tokens trained on Tiny Shakespeare, <|endoftext|> its last
id): vocab_size 2048, n_positions 128 (so that ./ch9 --finetune's
default window of 64 fits), n_embd 16, n_head 2, n_layer 2, GPT-2's
dropouts of 0.1 and its tanh GELU. The folder then holds what ./ch9
--model DIR reads: config.json and model.safetensors as save_pretrained
writes them (its generation_config.json left out: nothing reads it), and
vocab.json and merges.txt as links to ch9_tok's.
"""
import os
import shutil

import torch
from transformers import GPT2Config, GPT2LMHeadModel

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "ch9_ft")


def main():
    torch.manual_seed(9)
    cfg = GPT2Config(vocab_size=2048, n_positions=128, n_embd=16, n_head=2,
                     n_layer=2, bos_token_id=2047, eos_token_id=2047)
    model = GPT2LMHeadModel(cfg).eval()
    shutil.rmtree(OUT, ignore_errors=True)
    model.save_pretrained(OUT)
    gen = os.path.join(OUT, "generation_config.json")
    if os.path.exists(gen):
        os.remove(gen)
    os.chmod(os.path.join(OUT, "model.safetensors"), 0o644)
    for name in ("vocab.json", "merges.txt"):
        os.symlink(os.path.join("..", "ch9_tok", name),
                   os.path.join(OUT, name))
    print("wrote", OUT, sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
