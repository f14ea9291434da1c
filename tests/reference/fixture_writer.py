"""Shared by the gen_chN.py scripts: writes the '# fixture v1' text files
that tests/fixture.c reads, and draws the random inputs they record."""
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class Writer:
    """One fixture file: a versioned header, then for every tensor a line
    'name d0 d1 ...' followed by its values, 8 per line, as %.9g."""

    def __init__(self, name, comment, script=None):
        script = script or os.path.basename(sys.argv[0])
        self.path = os.path.join(HERE, name)
        self.lines = ["# fixture v1", "# " + comment,
                      "# written by tests/reference/%s (torch %s)"
                      % (script, torch.__version__.split("+")[0])]

    def add(self, name, t):
        t = torch.as_tensor(t).detach().to(torch.float64)
        self.lines.append(" ".join([name] + [str(d) for d in t.shape]))
        vals = ["%.9g" % x for x in t.flatten().tolist()]
        for i in range(0, len(vals), 8):
            self.lines.append(" ".join(vals[i:i + 8]))

    def close(self):
        with open(self.path, "w") as f:
            f.write("\n".join(self.lines) + "\n")
        print("wrote %s (%d bytes)" % (os.path.relpath(self.path),
                                       os.path.getsize(self.path)))


def randn(*shape, std=1.0):
    """float32 draws, returned as float64 (exactly the values written)."""
    return (torch.randn(*shape) * std).to(torch.float32).to(torch.float64)
