"""PyTorch: a plain training loop (``torch_loop.py STEPS [ACCUMULATE]``); exits 3.

With ACCUMULATE > 1, gradients of that many micro-batches are summed before each
optimizer update (gradient accumulation): STEPS updates, STEPS*ACCUMULATE forwards.
"""

import sys

import torch
from torch import nn


def main(steps, accumulate):
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(32, 48), nn.ReLU(), nn.Linear(48, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(64, 32)
    y = torch.randint(0, 10, (64,))
    for step in range(steps):
        for _ in range(accumulate):
            loss = nn.functional.cross_entropy(model(x), y) / accumulate
            loss.backward()
        opt.step()
        opt.zero_grad()
        if step % 4 == 0:
            with torch.no_grad():  # evaluation now and then: inside a step
                model(x).argmax(1)
    print("final loss %.4f" % float(loss))
    return 3


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 12,
                  int(sys.argv[2]) if len(sys.argv) > 2 else 1))
