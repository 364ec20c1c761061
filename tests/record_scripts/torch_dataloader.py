"""PyTorch: a loop fed by a DataLoader with two spawned worker processes."""

import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main(epochs):
    torch.manual_seed(3)
    data = TensorDataset(torch.randn(96, 16), torch.randint(0, 4, (96,)))
    loader = DataLoader(data, batch_size=8, num_workers=2, multiprocessing_context="spawn")
    model = nn.Linear(16, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    updates = 0
    for _ in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            updates += 1
    print("updates %d" % updates)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1))
