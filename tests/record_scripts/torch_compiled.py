"""PyTorch: a torch.compile'd training step (forward, backward and optimizer update)."""

import sys

import torch
from torch import nn


def main(steps):
    torch.manual_seed(3)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 16)
    y = torch.randint(0, 4, (16,))

    @torch.compile(backend="eager")
    def train_step():
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    for _ in range(steps):
        loss = train_step()
    print("final loss %.4f" % float(loss))
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
