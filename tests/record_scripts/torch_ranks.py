"""PyTorch: a launcher starting two DDP worker processes (gloo) with RANK set, as torchrun does.

``torch_ranks.py STEPS``: each worker trains STEPS steps; the launcher exits with the
sum of the workers' exit statuses.
"""

import os
import socket
import subprocess
import sys


def worker(steps):
    import torch
    import torch.distributed as dist
    from torch import nn

    dist.init_process_group("gloo")
    torch.manual_seed(dist.get_rank())
    model = nn.parallel.DistributedDataParallel(nn.Linear(16, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 16)
    for _ in range(steps):
        opt.zero_grad()
        model(x).square().mean().backward()
        opt.step()
    dist.barrier()
    # one write per line: the two workers share the pipe (print writes the newline apart)
    sys.stdout.write("rank %d done\n" % dist.get_rank())
    sys.stdout.flush()
    dist.destroy_process_group()
    return 0


def launch(steps):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen([sys.executable, __file__, "worker", str(steps)], env=env))
    return sum(p.wait() for p in procs)


if __name__ == "__main__":
    if sys.argv[1] == "worker":
        sys.exit(worker(int(sys.argv[2])))
    sys.exit(launch(int(sys.argv[1])))
