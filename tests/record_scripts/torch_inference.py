"""PyTorch: inference only (no optimizer): a large model called under no_grad, a small one too."""

import sys

import torch
from torch import nn


def main(batches):
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8)).eval()
    scaler = nn.Linear(8, 8)  # small: not the step
    x = torch.randn(16, 32)
    with torch.no_grad():
        for _ in range(batches):
            out = scaler(model(x))
    print("out %s" % (tuple(out.shape),))
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
