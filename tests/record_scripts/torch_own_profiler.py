"""PyTorch: a loop that runs its own torch.profiler twice (loop steps 1-2 and 7-8).

``torch_own_profiler.py OUTDIR``: the program's own traces go to OUTDIR/first.json
and OUTDIR/second.json.
"""

import os
import sys

import torch
from torch import nn
from torch.profiler import profile


def main(out):
    model = nn.Linear(16, 16)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 16)
    own = None
    for step in range(10):
        if step in (1, 7):
            own = profile()
            own.__enter__()
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad()
        if step in (2, 8):
            own.__exit__(None, None, None)
            own.export_chrome_trace(os.path.join(out, "first.json" if step == 2 else "second.json"))
    print("own traces written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
