#!/usr/bin/env python3
"""Record a small PyTorch training loop on the CPU with the installed torch, and
PyTorch's own ``key_averages`` table for the same steps.

    python record_cpu.py OUTDIR        # with a Python that has torch

Writes ``OUTDIR/recorded_torch<X.Y.Z>.pt.trace.json.gz`` (the profiler's
Chrome trace, gzipped, the recording folder's path cut from file names, the
host named ``localhost``) and
``OUTDIR/recorded_torch<X.Y.Z>.key_averages.json``: one row per name with
``count``, ``self_cpu_us``, ``cpu_total_us``, ``self_device_us`` and
``device_total_us`` summed over the active steps, as ``key_averages()``
reports them. The program: a two-block MLP (``nn.Module``s) under
``record_function("forward")``, a loss, backward and an SGD step, five
steps under the schedule wait 1 / warmup 1 / active 3 (steps 2, 3, 4 are
traced), with shapes and Python stacks.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import tempfile

import torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function, schedule


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(torch.relu(self.linear(x)))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.Sequential(Block(64), Block(64))
        self.head = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x))


def _micros(event, *names: str) -> float:
    """The first of ``names`` the event has (the attribute was renamed cuda -> device)."""
    for name in names:
        value = getattr(event, name, None)
        if value is not None:
            return float(value)
    return 0.0


def main(outdir: str) -> int:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
    tmp = tempfile.mkdtemp()
    traced: list[str] = []

    def save(prof) -> None:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        traced.append(path)

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=True,
                 schedule=schedule(wait=1, warmup=1, active=3), on_trace_ready=save) as prof:
        for _ in range(5):
            with record_function("forward"):
                loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    version = torch.__version__.split("+")[0]
    stem = os.path.join(outdir, "recorded_torch%s" % version)
    here = os.path.dirname(os.path.abspath(__file__)) + os.sep
    with open(traced[-1], encoding="utf-8") as fh:
        doc = json.loads(fh.read().replace(here, "").replace(tmp + os.sep, ""))
    if "host_name" in doc:
        doc["host_name"] = "localhost"
    with gzip.open(stem + ".pt.trace.json.gz", "wt", encoding="utf-8") as fh:
        json.dump(doc, fh)
    rows = [{"name": e.key, "count": e.count,
             "self_cpu_us": _micros(e, "self_cpu_time_total"),
             "cpu_total_us": _micros(e, "cpu_time_total"),
             "self_device_us": _micros(e, "self_device_time_total", "self_cuda_time_total"),
             "device_total_us": _micros(e, "device_time_total", "cuda_time_total")}
            for e in prof.key_averages()]
    with open(stem + ".key_averages.json", "w", encoding="utf-8") as fh:
        json.dump({"torch": torch.__version__, "device": "cpu",
                   "schedule": "wait 1, warmup 1, active 3", "key_averages": rows}, fh,
                  indent=1)
        fh.write("\n")
    print("wrote %s.pt.trace.json.gz and %s.key_averages.json" % (stem, stem))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
