"""PyTorch: a GAN-like loop with two optimizers, the critic updated 3 times per generator update."""

import sys

import torch
from torch import nn


def main(steps):
    torch.manual_seed(3)
    gen = nn.Linear(8, 16)
    critic = nn.Linear(16, 1)
    opt_g = torch.optim.Adam(gen.parameters(), lr=1e-3)
    opt_c = torch.optim.SGD(critic.parameters(), lr=1e-2)
    real = torch.randn(32, 16)
    for _ in range(steps):
        for _ in range(3):
            fake = gen(torch.randn(32, 8)).detach()
            loss_c = critic(fake).mean() - critic(real).mean()
            opt_c.zero_grad()
            loss_c.backward()
            opt_c.step()
        loss_g = -critic(gen(torch.randn(32, 8))).mean()
        opt_g.zero_grad()
        loss_g.backward()
        opt_g.step()
    print("generator updates %d" % steps)
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 6))
