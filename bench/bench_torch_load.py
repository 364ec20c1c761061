#!/usr/bin/env python3
"""The load of a large PyTorch trace, of three kinds, against other revisions, in CPU time.

The trace is bench/make_large_torch_trace.py's 240 copies of a real H100 step
(about 170 MB, with the step's ``[memory]`` events and the header's
``profile_memory`` flag; cached in bench/.cache/torch/, shared with
bench/bench_critpath.py). Two more are derived from it and cached beside it:

* ``nomem``: without its ``[memory]`` events and the header flag (about 153 MB);
* ``sync``: ``nomem`` with one ``cuda_sync`` event: an event calling for argument
  fields its header did not announce (``trace_events.ARG_GROUPS``), so the loader
  reads them after its first decode.

Each measure is ``load_model`` of one trace in a fresh process (CPU time of the
load alone, the garbage collector off, as the CLI loads), for the working tree
and each ``--rev`` (its ``tfprof_shell`` taken from git), taking turns; the
table gives the median and the best of ``--runs``::

    python bench/bench_torch_load.py [--runs 5] [--rev e808941] [--kinds memory,nomem,sync]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(HERE, ".cache", "torch")
STEPS = 240
#: The child: load one trace with the tfprof_shell found first on sys.path.
CHILD = ("import gc,sys,time;sys.path.insert(0,sys.argv[1]);"
         "from tfprof_shell.load import Inputs, load_model;"
         "gc.collect();gc.disable();t=time.process_time();"
         "load_model(Inputs(profile_path=sys.argv[2]));"
         "print(time.process_time()-t)")
#: The cuda_sync event added to make the ``sync`` trace (a stream waiting on an event).
SYNC_EVENT = ('{"ph":"X","cat":"cuda_sync","name":"Stream Wait Event","pid":0,"tid":7,'
              '"ts":%s,"dur":2.5,"args":{"External id":1,"cuda_sync_kind":"Stream Wait Event",'
              '"wait_on_stream":20,"wait_on_cuda_event_record_corr_id":1,'
              '"wait_on_cuda_event_id":1,"stream":7,"correlation":1,"device":0,"context":1}}')


def base_trace() -> str:
    """The cached 240-step trace (made on first use)."""
    path = os.path.join(CACHE, "critpath_%d.pt.trace.json" % STEPS)
    if not os.path.exists(path):
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make_large_torch_trace.py"), path,
                        "--steps", str(STEPS)], check=True)
    return path


def derived(kind: str) -> str:
    """The trace of ``kind`` (memory, nomem, sync), made from the base trace once."""
    base = base_trace()
    if kind == "memory":
        return base
    path = os.path.join(CACHE, "load_%s_%d.pt.trace.json" % (kind, STEPS))
    if os.path.exists(path):
        return path
    # make_large_torch_trace writes one event per line, the header on the first
    with open(base) as src, open(path + ".tmp", "w") as out:
        first = True
        for line in src:
            if first:
                line = line.replace('"profile_memory":1,', "")
                first = False
            elif '"name":"[memory]"' in line:
                continue
            elif kind == "sync" and '"cat":"kernel"' in line:
                ts = json.loads(line.rstrip().rstrip(","))["ts"]
                out.write(SYNC_EVENT % ts + ",\n")
                kind = "synced"
            out.write(line)
    os.replace(path + ".tmp", path)
    return path


def checkout(rev: str, into: str) -> str:
    """A folder holding revision ``rev``'s tfprof_shell package."""
    folder = os.path.join(into, "".join(c if c.isalnum() else "_" for c in rev))
    os.makedirs(folder)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "tfprof_shell"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    subprocess.run([sys.executable, "-m", "compileall", "-q", folder], check=True)
    return folder


def load_time(root: str, path: str) -> float:
    """CPU seconds of one load in a fresh process."""
    env = dict(os.environ, PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", CHILD, root, path], env=env, check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rev", action="append", default=[],
                        help="also time this git revision's load (a commit, tag or branch)")
    parser.add_argument("--kinds", default="memory,nomem,sync")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    paths = {kind: derived(kind) for kind in kinds}
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "tfprof_shell")],
                   check=True)
    with tempfile.TemporaryDirectory() as tmp:
        roots = {"working tree": ROOT}
        roots.update((rev, checkout(rev, tmp)) for rev in args.rev)
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.runs):
            for kind in kinds:
                for name, root in roots.items():
                    times.setdefault((kind, name), []).append(load_time(root, paths[kind]))
    print("load CPU s, %d runs taking turns (load average %.1f at the end); x: the working "
          "tree's time over the revision's, the median of the runs' ratios"
          % (args.runs, os.getloadavg()[0]))
    print("| trace | MB | revision | median | best | x |")
    print("|---|---|---|---|---|---|")
    for kind in kinds:
        size = os.path.getsize(paths[kind]) / 1e6
        ours = times[(kind, "working tree")]
        for name in roots:
            found = times[(kind, name)]
            ratio = statistics.median(a / b for a, b in zip(ours, found))
            print("| %s | %.0f | %s | %.2f | %.2f | %s |"
                  % (kind, size, name, statistics.median(found), min(found),
                     "%.3f" % ratio if name != "working tree" else ""))


if __name__ == "__main__":
    main()
