#!/usr/bin/env python3
"""Writes tests/reference/st_python.safetensors, a tiny file made by the
reference implementation (safetensors.torch.save_file), so that the C reader
in common/safetensors.c is checked against a file it did not write.

    python3 tests/reference/gen_safetensors.py      # from the repository root

needs PyTorch and the safetensors package; the build and the tests never do.
The values below are chosen by hand (no random numbers) and the test
tests/test_safetensors.c (st_reads_python_file) spells the same values out;
change both together. The script prints the header it got, for reading.
"""
import json
import os
import struct

import torch
from safetensors.torch import load_file, save_file

HERE = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(HERE, "st_python.safetensors")

TENSORS = {
    # float32, 2-D: exact binary fractions, a negative zero, and 0.001
    # (rounded to the nearest float32, as the C literal 0.001f is)
    "f32": torch.tensor([[0.5, -1.25, 3.0], [0.001, -0.0, 7.75]],
                        dtype=torch.float32),
    # int64 beyond 32 bits, and a negative one
    "i64": torch.tensor([1, -2, 2**40 + 3], dtype=torch.int64),
    # float16: 1.5 is 0x3e00, -2 is 0xc000
    "h.f16": torch.tensor([1.5, -2.0], dtype=torch.float16),
    # a scalar (shape []) in float64
    "scalar": torch.tensor(3.25, dtype=torch.float64),
    # uint8, 2-D
    "u8": torch.tensor([[0, 7, 255]], dtype=torch.uint8),
}
METADATA = {"format": "pt", "note": "caf\u00e9 \"quoted\"\nsecond line"}


def main():
    save_file(TENSORS, PATH, metadata=METADATA)
    back = load_file(PATH)
    for name, t in TENSORS.items():
        assert torch.equal(back[name], t), name
    with open(PATH, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    print(json.dumps(header, indent=1, ensure_ascii=False))
    print("wrote %s (%d bytes)" % (os.path.relpath(PATH),
                                   os.path.getsize(PATH)))


if __name__ == "__main__":
    main()
