#!/usr/bin/env python3
"""What `critpath` costs on a large PyTorch trace, against loading it, in CPU time.

The trace is bench/make_large_torch_trace.py's copies of a real H100 step
(240 steps, about 170 MB; cached in bench/.cache/torch/). Each round loads it
(the load keeps the events the critical path reads) and then runs `critpath`
as the shell does (every step's path and the text; the JSON document is built
only for -output json or the API), then, on a fresh load, `critpath -step N`. With ``--hta-python`` the
same trace is handed to Holistic Trace Analysis in that Python: its load, and
its critical path of one step::

    python bench/bench_critpath.py [--trace T] [--repeat 3] [--hta-python PY]
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from tfprof_shell.load import Inputs, load_model  # noqa: E402
from tfprof_shell.session import Session  # noqa: E402

CACHE = os.path.join(HERE, ".cache", "torch")
STEPS = 240

_HTA = r"""
import logging, sys, time, shutil, tempfile, os
logging.disable(logging.WARNING)
from hta.trace_analysis import TraceAnalysis
tmp = tempfile.mkdtemp()
shutil.copy(sys.argv[1], tmp)
t = time.process_time()
a = TraceAnalysis(trace_dir=tmp)
load = time.process_time() - t
t = time.process_time()
graph, ok = a.critical_path_analysis(rank=0, annotation=sys.argv[2], instance_id=0)
print("%.3f %.3f %s" % (load, time.process_time() - t, ok))
shutil.rmtree(tmp)
"""


def trace_path(given: str) -> str:
    if given:
        return given
    path = os.path.join(CACHE, "critpath_%d.pt.trace.json" % STEPS)
    if not os.path.exists(path):
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make_large_torch_trace.py"), path,
                        "--steps", str(STEPS)], check=True)
    return path


def one_round(path: str, step: int) -> tuple[float, float, float, float, int]:
    """(load, critpath over every step, critpath of one step, critpath again) CPU
    seconds, and the number of windows."""
    gc.collect()
    gc.disable()  # as the CLI does while it loads and runs a one-shot command
    t = time.process_time()
    model = load_model(Inputs(profile_path=path))
    load = time.process_time() - t
    session = Session(model)
    t = time.process_time()
    reply = session.execute("critpath")
    every = time.process_time() - t
    windows = len(reply.result.paths.paths)
    t = time.process_time()
    session.execute("critpath")  # again: the paths are kept
    again = time.process_time() - t
    # a fresh model: the step's own cost, its inputs and timeline included
    model = load_model(Inputs(profile_path=path))
    session = Session(model)
    t = time.process_time()
    session.execute("critpath -step %d" % step)
    one = time.process_time() - t
    del model, session, reply
    gc.enable()
    return load, every, one, again, windows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default="")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--step", type=int, default=100)
    parser.add_argument("--hta-python", default="")
    args = parser.parse_args()
    path = trace_path(args.trace)
    rounds = [one_round(path, args.step) for _ in range(args.repeat)]
    loads, every, one, again = (sorted(r[i] for r in rounds) for i in range(4))
    mid = args.repeat // 2
    print("trace: %s (%.0f MB), %d windows" % (path, os.path.getsize(path) / 1e6, rounds[0][4]))
    print("load: %.2f s CPU (median of %d)" % (loads[mid], args.repeat))
    print("critpath, every step (its events, graphs, paths, text): %.2f s = %.2f of the load"
          % (every[mid], every[mid] / loads[mid]))
    print("critpath -step %d on a fresh load: %.2f s = %.2f of the load"
          % (args.step, one[mid], one[mid] / loads[mid]))
    print("critpath again in the session: %.2f s = %.2f of the load"
          % (again[mid], again[mid] / loads[mid]))
    if args.hta_python:
        out = subprocess.run([args.hta_python, "-c", _HTA, path, "ProfilerStep#%d" % args.step],
                             check=True, capture_output=True, text=True).stdout.split()
        print("HTA %s: load %.2f s CPU, critical path of step %d %.2f s (ok=%s)"
              % (args.hta_python, float(out[0]), args.step, float(out[1]), out[2]))


if __name__ == "__main__":
    main()
