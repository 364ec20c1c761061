"""Record the 4-rank DistributedDataParallel samples (PyTorch on CPU, gloo).

    python sample_profiles/make_torch_ddp_samples.py OUT_DIR [--delay-ms 30] [--outside] [--steps 6]

Four processes (``torch.multiprocessing.spawn``) train a small MLP with
``DistributedDataParallel`` over the gloo backend on one machine. A tiny
``bucket_cap_mb`` makes backward all-reduce the gradients in several buckets.
Each step starts with a ``record_function("load_batch")`` region that makes
the batch; with ``--delay-ms N`` rank 3 also sleeps N ms in that region (the
injected straggler), or, with ``--outside``, right after it, in no region at
all. ``torch.profiler`` traces with a schedule (wait 1, warmup 1, then
``--steps`` active steps) and ``tensorboard_trace_handler`` writes one gzipped
trace per rank, named ``rank<R>.<time>.pt.trace.json.gz``.
Shapes are recorded (``record_shapes=True``): the ``c10d::allreduce_`` ops
then carry the tensor sizes. Afterwards each trace's ``host_name`` becomes
``localhost`` and its ``traceName`` loses its temporary folder (nothing
else changes; all ranks ran on one host).

Needs torch (CPU is enough). Each process uses one intra-op thread.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import json
import os
import time

WORLD = 4
STRAGGLER = 3


def _worker(rank: int, out_dir: str, delay_ms: float, steps: int, port: int,
            outside: bool) -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel
    from torch.profiler import ProfilerActivity, profile, record_function, schedule
    from torch.profiler import tensorboard_trace_handler

    torch.set_num_threads(1)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    torch.manual_seed(0)
    layers = [torch.nn.Linear(32, 64), torch.nn.ReLU()]
    for _ in range(4):
        layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(64, 8))
    # 15 KB buckets: each 64x64 weight (16 KB) closes one, so backward
    # all-reduces five buckets per step
    ddp = DistributedDataParallel(model, bucket_cap_mb=0.015)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(rank)

    def step() -> None:
        with record_function("load_batch"):
            x = torch.randn(64, 32, generator=gen)
            y = torch.randn(64, 8, generator=gen)
            if rank == STRAGGLER and delay_ms > 0 and not outside:
                time.sleep(delay_ms / 1000.0)
        if rank == STRAGGLER and delay_ms > 0 and outside:
            time.sleep(delay_ms / 1000.0)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()

    dist.barrier()
    handler = tensorboard_trace_handler(out_dir, worker_name="rank%d" % rank, use_gzip=True)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=1, warmup=1, active=steps, repeat=1),
                 on_trace_ready=handler) as prof:
        for _ in range(steps + 2):
            step()
            prof.step()
    dist.barrier()
    dist.destroy_process_group()


def scrub(out_dir: str) -> None:
    """Name the recording machine nowhere: host_name -> localhost, traceName -> its base name."""
    for path in sorted(glob.glob(os.path.join(out_dir, "*.pt.trace.json.gz"))):
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            doc = json.load(fh)
        doc["host_name"] = "localhost"
        if isinstance(doc.get("traceName"), str):
            doc["traceName"] = os.path.basename(doc["traceName"])
        with open(path, "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as fh:
                fh.write(json.dumps(doc).encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--delay-ms", type=float, default=0.0,
                        help="rank 3 sleeps this long in load_batch each step (0: none)")
    parser.add_argument("--outside", action="store_true",
                        help="the delay sleeps after load_batch, outside any region")
    parser.add_argument("--steps", type=int, default=6, help="active (traced) steps")
    parser.add_argument("--port", type=int, default=29511)
    args = parser.parse_args()
    import torch.multiprocessing as mp
    os.makedirs(args.out_dir, exist_ok=True)
    mp.spawn(_worker, args=(args.out_dir, args.delay_ms, args.steps, args.port, args.outside),
             nprocs=WORLD, join=True)
    scrub(args.out_dir)


if __name__ == "__main__":
    main()
