#!/usr/bin/env python3
"""Checks the model that a fine-tuning run of ./ch9 writes in Hugging
Face's layout (OUT/hf/) against transformers:

    python3 tests/reference/check_ch9_export.py [CH9] [OUT]

CH9 is the program (default ./ch9); OUT the --out folder of a run made
by ./ch9 --finetune (default: a new run of 300 steps on the tiny model of
tests/reference/ch9_ft/, in a temporary folder). Needs PyTorch,
transformers and safetensors (torch 2.15, transformers 5.24 when
written); the build and the tests never do.

1. GPT2LMHeadModel.from_pretrained(OUT/hf) loads the folder with no
   missing and no unexpected tensor, and GPT2TokenizerFast reads its
   vocab.json and merges.txt.
2. OUT/model.safetensors, the run's own checkpoint (chapter 5's format:
   nanoGPT's names, Linear weights (out, in), the metadata key
   "tokenizer": "gpt2"), is put into a second GPT2LMHeadModel with the
   four Conv1D weights of each block transposed, as nanoGPT's
   from_pretrained does. Every parameter of the two models must be equal
   bit for bit, and so their logits on a batch of the text's tokens.
3. transformers' greedy continuation of a prompt, on OUT/hf, must be the
   text that CH9 --checkpoint OUT/model.safetensors --greedy prints: the
   C model's logits pick the same token as PyTorch's at every step. The
   same for the untrained model the run started from (its random logits
   pick other tokens than a newline).
"""
import os
import subprocess
import sys
import tempfile

import torch
from safetensors import safe_open
from transformers import GPT2LMHeadModel, GPT2TokenizerFast

CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight",
          "mlp.c_proj.weight")
PROMPT = "ROMEO:\nWhat light"
TOKENS = 24


def run(cmd):
    print("$", " ".join(cmd))
    return subprocess.run(cmd, check=True, capture_output=True,
                          text=True).stdout


def finetune(ch9, out):
    run([ch9, "--finetune", "--model", "tests/reference/ch9_ft", "--steps",
         "300", "--lr", "1e-2", "--eval-every", "100", "--eval-iters", "2",
         "--sample-tokens", "0", "--quiet", "--out", out])


def ours_as_hf(path, like):
    """Our checkpoint in a GPT2LMHeadModel of like's config."""
    model = GPT2LMHeadModel(like.config).eval()
    sd = model.state_dict()
    with safe_open(path, "pt") as f:
        meta = f.metadata()
        assert meta.get("tokenizer") == "gpt2", meta
        for name in f.keys():
            t = f.get_tensor(name)
            if name.endswith(CONV1D):
                t = t.t()
            assert sd[name].shape == t.shape, name
            sd[name] = t
    model.load_state_dict(sd)
    return model


def main():
    ch9 = sys.argv[1] if len(sys.argv) > 1 else "./ch9"
    tmp = tempfile.TemporaryDirectory()
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(tmp.name, "run")
    if len(sys.argv) <= 2:
        finetune(ch9, out)
    hf = os.path.join(out, "hf")
    model, info = GPT2LMHeadModel.from_pretrained(hf,
                                                  output_loading_info=True)
    model.eval()
    bad = {k: v for k, v in info.items() if v}
    assert not bad, f"from_pretrained: {bad}"
    tok = GPT2TokenizerFast(os.path.join(hf, "vocab.json"),
                            os.path.join(hf, "merges.txt"))
    print("1. from_pretrained loads", hf, "with no missing or unexpected "
          "tensor")

    ours = ours_as_hf(os.path.join(out, "model.safetensors"), model)
    a, b = dict(model.named_parameters()), dict(ours.named_parameters())
    for name in a:
        assert torch.equal(a[name], b[name]), name
    with open("data/tinyshakespeare.txt", encoding="utf-8") as f:
        ids = tok(f.read(4000))["input_ids"][:2 * 64]
    x = torch.tensor(ids).view(2, 64)
    with torch.no_grad():
        la, lb = model(x).logits, ours(x).logits
    assert torch.equal(la, lb)
    print(f"2. {len(a)} tensors equal, logits (2, 64, "
          f"{la.shape[-1]}) equal")

    for path, flag, what in ((hf, "--checkpoint", "the fine-tuned model"),
                             ("tests/reference/ch9_ft", "--model",
                              "the untrained one it started from")):
        m = GPT2LMHeadModel.from_pretrained(path).eval()
        with torch.no_grad():
            p = torch.tensor([tok(PROMPT)["input_ids"]])
            g = m.generate(p, max_new_tokens=TOKENS, do_sample=False,
                           pad_token_id=0)
        want = tok.decode(g[0])
        arg = (os.path.join(out, "model.safetensors")
               if flag == "--checkpoint" else path)
        got = run([ch9, flag, arg, "--prompt", PROMPT, "--greedy",
                   "--tokens", str(TOKENS), "--sample-only"])
        assert got == want + "\n", f"C: {got!r}\nPyTorch: {want!r}"
        print(f"3. {what}: the greedy continuation of {PROMPT!r}, "
              f"{TOKENS} tokens, is the same: {want[len(PROMPT):]!r}")

if __name__ == "__main__":
    main()
