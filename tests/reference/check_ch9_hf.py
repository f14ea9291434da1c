#!/usr/bin/env python3
"""Checks that transformers loads a model that chapter 9's C code wrote in
Hugging Face's format (gpt2_save, chapters/ch9_gpt2/gpt2_model.h):

    CH9_HF_WRITE=/tmp/c_gpt2 CK_RUN_SUITE=ch9_model \\
        build/cc/ex/*/run_tests                     # the C side writes it
    python3 tests/reference/check_ch9_hf.py /tmp/c_gpt2

needs PyTorch and transformers (the build and the tests never do). The C
test save_writes_what_save_pretrained_wrote loads the Hub-layout fixture
of gen_ch9.py and, with CH9_HF_WRITE set, saves it into that folder. Here
GPT2LMHeadModel.from_pretrained must load the folder with no missing and
no unexpected tensor, hold exactly the weights of the save_pretrained
fixture (tests/reference/ch9_model/pretrained), and, in float64, give
the fixture's logits on its batch (reference.txt).
"""
import os
import sys

import torch
from transformers import GPT2LMHeadModel

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.join(HERE, "ch9_model")


def read_fixture(path):
    """The tensors of a '# fixture v1' file (tests/fixture.h), by name."""
    out, name, shape, vals = {}, None, None, []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            parts = line.split()
            if parts and parts[0][0].isalpha():
                if name is not None:
                    out[name] = torch.tensor(vals, dtype=torch.float64)
                    out[name] = out[name].reshape(shape)
                name, shape, vals = parts[0], [int(d) for d in parts[1:]], []
            else:
                vals += [float(v) for v in parts]
    out[name] = torch.tensor(vals, dtype=torch.float64).reshape(shape)
    return out


def load(folder):
    model, info = GPT2LMHeadModel.from_pretrained(
        folder, attn_implementation="eager", output_loading_info=True)
    return model, info


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    ours, info = load(sys.argv[1])
    bad = {k: v for k, v in info.items() if v}
    if bad:
        sys.exit("FAILED: transformers reports %s" % bad)
    theirs, _ = load(os.path.join(REF, "pretrained"))
    a, b = ours.state_dict(), theirs.state_dict()
    if sorted(a) != sorted(b):
        sys.exit("FAILED: tensors differ: %s" % sorted(set(a) ^ set(b)))
    for k in a:
        if not torch.equal(a[k], b[k]):
            sys.exit("FAILED: %s differs from save_pretrained's" % k)
    print("ok: %d tensors, equal to save_pretrained's" % len(a))
    ref = read_fixture(os.path.join(REF, "reference.txt"))
    model = ours.double().eval()
    with torch.no_grad():
        logits = model(ref["idx"].long()).logits
    err = ((logits - ref["logits"]).abs().max()
           / ref["logits"].abs().max()).item()
    print("logits against the fixture: max error %.2e of the largest" % err)
    if err > 1e-7:
        sys.exit("FAILED: logits differ")
    print("ok: transformers runs the C-written model")


if __name__ == "__main__":
    main()
