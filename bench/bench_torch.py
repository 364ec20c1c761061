#!/usr/bin/env python3
"""PyTorch traces: tfprof-shell against Holistic Trace Analysis (HTA), and growth with steps.

bench/make_large_torch_trace.py writes traces of 1x, 2x and 4x ``--steps``
copies of a real PyTorch step (cached in bench/.cache/torch/). For each size,
whole processes, ``--runs`` times, taking turns (ours, HTA, ours, HTA, ...):

* ours: ``python -m tfprof_shell --profile_path=F op -select micros,occurrence
  -order_by micros`` (start-up, load, the op table, exit);
* HTA: a process running ``hta.trace_analysis.TraceAnalysis(trace_dir=D)``,
  the load every HTA analysis starts with, on a folder holding only F
  (``--hta-sizes`` says at which sizes; its time grows with the file too).

Ours runs from compiled bytecode, as installed (bench/installed.py). Each
figure is the median of the runs: wall time, CPU time (user + system,
less disturbed by other work on a shared machine) and peak RSS. The growth
table divides each size's time by the 1x time: linear in events means about
2 and 4.

    python bench/bench_torch.py --hta-python PY_WITH_HTA [--steps 150] [--runs 3]

``run(args)`` returns (comparison rows, growth rows), for bench/bench.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Optional

import installed

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(HERE, ".cache", "torch")
ONE_SHOT = ["op", "-select", "micros,occurrence", "-order_by", "micros"]
HTA_CODE = "from hta.trace_analysis import TraceAnalysis; import sys; TraceAnalysis(trace_dir=sys.argv[1])"
#: Runs a command and prints [wall s, CPU s, peak RSS MB] of it as JSON.
MEASURE = ("import json,resource,subprocess,sys,time;t=time.perf_counter();"
           "p=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
           "w=time.perf_counter()-t;r=resource.getrusage(resource.RUSAGE_CHILDREN);"
           "print(json.dumps([w,r.ru_utime+r.ru_stime,r.ru_maxrss/1024,p.returncode]))")


def trace(steps: int) -> str:
    """The cached trace of ``steps`` steps, in a folder of its own (HTA reads folders)."""
    folder = os.path.join(CACHE, "steps%d" % steps)
    path = os.path.join(folder, "rank0.steps%d.pt.trace.json" % steps)
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(HERE, "make_large_torch_trace.py"), path,
                        "--steps", str(steps)], check=True)
    return path


def measure(argv: list[str], env: Optional[dict] = None) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MB) of one process; nan everywhere if it failed."""
    out = subprocess.run([sys.executable, "-c", MEASURE] + argv, capture_output=True,
                         text=True, env=env)
    wall, cpu, rss, code = json.loads(out.stdout)
    if code != 0:
        print("failed (exit %d): %s" % (code, " ".join(argv)), file=sys.stderr)
        return (float("nan"),) * 3
    return wall, cpu, rss


def median(xs: list[float]) -> float:
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def run(args: argparse.Namespace) -> tuple[list[list], list[list]]:
    """Measure every size; returns the comparison rows and the growth rows."""
    env = installed.env()
    hta_sizes = {int(x) for x in args.hta_sizes.split(",") if x}
    compare, growth, base = [], [], None
    for factor in (1, 2, 4):
        steps = args.steps * factor
        path = trace(steps)
        ours_cmd = [sys.executable, "-m", "tfprof_shell", "--profile_path=" + path] + ONE_SHOT
        hta_cmd = ([args.hta_python, "-c", HTA_CODE, os.path.dirname(path)]
                   if args.hta_python and factor in hta_sizes else None)
        ours, theirs = [], []
        for _ in range(args.runs):
            ours.append(measure(ours_cmd, env))
            if hta_cmd:
                theirs.append(measure(hta_cmd))
        o = [median([r[i] for r in ours]) for i in range(3)]
        t = [median([r[i] for r in theirs]) for i in range(3)] if theirs else None
        size = os.path.getsize(path) / 1e6
        label = "%dx: %d steps, %.0f MB" % (factor, steps, size)
        if t:
            pairs = [a[0] / b[0] for a, b in zip(ours, theirs) if b[0] == b[0] and b[0] > 0]
            compare.append([label, "%.2f" % o[0], "%.2f" % t[0], "%.3f" % (o[0] / t[0]),
                            "%.3f-%.3f" % (min(pairs), max(pairs)) if pairs else "-",
                            "%.3f" % (o[1] / t[1]), "%.0f / %.0f" % (o[2], t[2])])
        if base is None:
            base = o
        growth.append([label, "%.2f" % o[0], "%.2f" % (o[0] / base[0]), "%.2f" % o[1],
                       "%.2f" % (o[1] / base[1]), "%.0f" % o[2]])
        sys.stdout.flush()
    return compare, growth


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hta-python", help="a Python with HolisticTraceAnalysis installed")
    ap.add_argument("--steps", type=int, default=150, help="steps of the 1x trace")
    ap.add_argument("--hta-sizes", default="1,2", help="sizes (1, 2, 4) HTA also loads")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    from tabulate import tabulate
    compare, growth = run(args)
    print("machine: %d cores; %d runs per measure, alternating; medians"
          % (os.cpu_count() or 0, args.runs))
    if compare:
        print(tabulate(compare, headers=["trace", "ours s", "HTA s", "ours/HTA (wall)",
                                         "range over runs", "ours/HTA (CPU)",
                                         "peak RSS MB ours / HTA"], tablefmt="github"))
    print(tabulate(growth, headers=["trace", "ours wall s", "x 1x", "ours CPU s", "x 1x",
                                    "peak RSS MB"], tablefmt="github"))
    print("(load average at the end: %s)" % " ".join("%.1f" % x for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
