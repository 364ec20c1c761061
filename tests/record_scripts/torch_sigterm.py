"""PyTorch: a long loop printing each step, to be stopped with SIGTERM."""

import sys

import torch
from torch import nn

model = nn.Linear(32, 32)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 32)
for step in range(100000):
    model(x).square().mean().backward()
    opt.step()
    opt.zero_grad()
    print("step %d" % step, flush=True)
sys.exit(0)
