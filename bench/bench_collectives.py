#!/usr/bin/env python3
"""Benchmark `collectives` over many ranks: load (the parallel route) plus alignment.

    python bench/bench_collectives.py [--ranks 64] [--blocks 8] [--runs 3]

The ranks are generated once into bench/.cache/ranks_N by bench/make_rank_traces.py
(copies of the recorded 4-rank gloo job, one rank delayed). Printed, each the fastest
of --runs fresh processes run as an installed copy would (bench/installed.py):

* ``tfprof --profile_path=DIR collectives -output none``: start-up, loading every rank
  through the loading processes (one per core), the alignment, exit; beside it, in
  alternating runs, ``tfprof --profile_path=DIR profiles``: the same load, no alignment;
* inside one process: loading (load_many) and the alignment (align) apart, and the
  alignment on the first 8, 16, 32 and all ranks, in ns per (instance x rank): flat
  when the alignment is linear in instances x ranks;
* the size of the traces, the cores and the load average before the run (on a shared
  machine the times depend on it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(HERE, ".cache")
sys.path.insert(0, HERE)

from installed import env  # noqa: E402

INSIDE = r"""
import gc, json, sys, time
gc.disable()
from tfprof_shell.load import Inputs
from tfprof_shell.load.jobs import jobs_of
from tfprof_shell.load.parallel import load_many
from tfprof_shell.views.collectives import align
t0 = time.perf_counter()
jobs, _ = jobs_of(Inputs(profile_path=sys.argv[1]))
loaded = load_many([(j.name, j.inputs) for j in jobs])
t1 = time.perf_counter()
ranks = [(j.name, j.model.collectives()) for j in loaded]
t2 = time.perf_counter()
result = align(ranks)
t3 = time.perf_counter()
scaling = []
for n in (8, 16, 32, len(ranks)):
    if n > len(ranks):
        continue
    best = None
    for _ in range(3):
        a = time.perf_counter()
        r = align(ranks[:n])
        b = time.perf_counter()
        best = b - a if best is None else min(best, b - a)
    cells = sum(len(i.arrival) for i in r.instances)
    scaling.append({"ranks": n, "instances": len(r.instances), "seconds": best,
                    "ns_per_instance_rank": 1e9 * best / cells})
print(json.dumps({"load": t1 - t0, "calls": t2 - t1, "align": t3 - t2,
                  "instances": len(result.instances), "steps": len(result.steps),
                  "stragglers": sorted({v.straggler for v in result.steps}),
                  "causes": sorted({v.cause.region for v in result.steps if v.cause}),
                  "scaling": scaling}))
"""


def traces(ranks: int, blocks: int) -> str:
    folder = os.path.join(CACHE, "ranks_%d_%d" % (ranks, blocks))
    if not os.path.isdir(folder):
        print("generating %s ..." % folder, file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(HERE, "make_rank_traces.py"), folder,
                        "--ranks", str(ranks), "--blocks", str(blocks)], check=True)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    folder = traces(args.ranks, args.blocks)
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    ours = env()
    load_before = os.getloadavg()[0]
    walls, loads, inside = [], [], []
    for _ in range(args.runs):
        for command, times in ((["profiles"], loads),
                               (["collectives", "-output", "none"], walls)):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "tfprof_shell", "--profile_path=" + folder]
                           + command, check=True, env=ours, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
        out = subprocess.run([sys.executable, "-c", INSIDE, folder], check=True, env=ours,
                             capture_output=True, text=True).stdout
        inside.append(json.loads(out))
    best = min(inside, key=lambda r: r["load"] + r["align"])
    cores = os.cpu_count() or 1
    print("%d ranks, %d steps each, %.0f MB of traces (%.1f MB per rank); %d cores, load "
          "average %.1f before" % (args.ranks, 6 * args.blocks, size / 1e6,
                                   size / 1e6 / args.ranks, cores, load_before))
    for label, times in (("tfprof ... profiles (the same load, no alignment)", loads),
                         ("tfprof ... collectives -output none", walls)):
        print("%s: %.2f s (fastest of %d: %s)" % (label, min(times), len(times),
                                                 ", ".join("%.2f" % t for t in times)))
    print("inside: load %.2f s, calls %.3f s, align %.3f s; %d instances, %d steps; "
          "stragglers %s, causes %s" % (best["load"], best["calls"], best["align"],
                                        best["instances"], best["steps"],
                                        ", ".join(best["stragglers"]),
                                        ", ".join(best["causes"])))
    for s in best["scaling"]:
        print("  align %3d ranks x %d instances: %.3f s, %.0f ns per instance x rank"
              % (s["ranks"], s["instances"], s["seconds"], s["ns_per_instance_rank"]))


if __name__ == "__main__":
    main()
