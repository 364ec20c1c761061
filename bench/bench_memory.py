#!/usr/bin/env python3
"""TF2 memory: tfprof-shell's one-shot ``memory`` against XProf's ``memory_profile`` converter.

For each ``.xplane.pb`` (by default the ``deep_mem`` shape of bench/bench_xprof.py: a
40-block residual MLP 512 wide, batch 256, 240 steps at host tracer level 3 with the
Python tracer, about 100 MB, whose tensors are large enough for TensorFlow to record
their allocations on the CPU; recorded once with TensorFlow into bench/.cache/),
whole processes, alternating (ours, XProf, ours, XProf, ...), medians of --runs:

* one-shot: ``python -m tfprof_shell --profile_path=F memory`` against a process
  running ``raw_to_tool_data.xspace_to_tool_data([F], "memory_profile", ...)`` (its
  saved-result cache off); wall time, CPU time (user + system) and peak RSS;
* agreement: our peak against XProf's, per allocator, and what each leaves
  unexplained at the peak (XProf's "unused preallocated device memory" against our
  "allocated before the profile");
* load: in one process of ours, the share of a TF2 load's CPU time spent on memory
  events (reading them as columns, finding each allocation's op event, the op columns).

    python bench/bench_memory.py --xprof-python PY --tf-python PY [--runs 3] [FILE ...]

``run(args)`` returns the table rows, for bench/bench.py.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Optional

import installed
from bench_xprof import CACHE, SHAPES, taking_turns, xprof_code

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHAPE = "deep_mem"
XPROF_CODE = xprof_code("memory_profile")


def memory_profile(tf_python: Optional[str]) -> Optional[str]:
    """The ``deep_mem`` recording (made once with TensorFlow)."""
    p = os.path.join(CACHE, "shapes", SHAPE, "localhost.xplane.pb")
    if not os.path.exists(p) and tf_python:
        subprocess.run([tf_python, os.path.join(HERE, "make_large_tf2_xplane.py"), p]
                       + SHAPES[SHAPE], check=True)
    return p if os.path.exists(p) else None


def xprof_summary(xprof_python: str, path: str) -> dict[str, tuple[int, int]]:
    """XProf's allocator -> (peak bytes, unused preallocated bytes at the peak)."""
    out = os.path.join(CACHE, "xprof_memory_profile.json")
    os.makedirs(CACHE, exist_ok=True)
    subprocess.run([xprof_python, "-c", XPROF_CODE, path, out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        doc = json.load(f)
    result = {}
    for name, p in doc.get("memoryProfilePerAllocator", {}).items():
        unused = sum(int(s["allocationBytes"]) for s in p.get("specialAllocations", [])
                     if s.get("tfOpName") == "unused preallocated device memory")
        result[name] = (int(p["profileSummary"]["peakStats"]["peakBytesInUse"]), unused)
    return result


def ours_summary(path: str, env: dict[str, str]) -> dict[str, tuple[int, int]]:
    """Our allocator -> (peak bytes, bytes allocated before the profile at the peak)."""
    out = subprocess.run([sys.executable, "-m", "tfprof_shell", "--profile_path=" + path,
                          "memory", "-output", "json"], check=True, env=env,
                         capture_output=True, text=True).stdout
    doc = json.loads(out)
    result = {}
    for d in doc["devices"]:
        before = sum(r["bytes"] for r in d["live"]["rows"]
                     if r["key"] == "(allocated before the profile)")
        result[d["name"]] = (d["peak"]["bytes"], before)
    return result


def load_breakdown(path: str) -> dict[str, float]:
    """In this process: CPU seconds of a TF2 load (this process's: a forked picking
    child's are not counted), and of its memory parts."""
    sys.path.insert(0, ROOT)
    from tfprof_shell.load import Inputs, load_model, memory_xplane, xplane, xspace

    spent = {"read as columns": 0.0, "op event of each allocation": 0.0, "op columns": 0.0}

    def timed(owner: Any, name: str, label: str) -> None:
        real = getattr(owner, name)

        def wrapper(*a: Any, **k: Any) -> Any:
            t = time.process_time()
            try:
                return real(*a, **k)
            finally:
                spent[label] += time.process_time() - t
        setattr(owner, name, wrapper)

    timed(xspace.Host, "_read_memory_columns", "read as columns")
    timed(memory_xplane, "_exec_ends", "op event of each allocation")
    timed(xplane, "node_memory", "op columns")
    t = time.process_time()
    load_model(Inputs(profile_path=path))
    spent["load"] = time.process_time() - t
    return spent


def _fmt(values: list[float]) -> str:
    return "/".join("%.2f" % v for v in values)


def run(args: argparse.Namespace) -> list[list[Any]]:
    """Rows: [profile, measure, ours, XProf, ratio]."""
    files = list(args.files)
    if not files:
        found = memory_profile(args.tf_python)
        files = [found] if found else []
    env = installed.env()
    rows: list[list[Any]] = []
    for path in files:
        label = "%s (%.0f MB)" % (os.path.relpath(path, ROOT), os.path.getsize(path) / 1e6)
        (ours_w, ours_m, ours_c), (xp_w, xp_m, xp_c) = taking_turns(
            [sys.executable, "-m", "tfprof_shell", "--profile_path=" + path, "memory"],
            [args.xprof_python, "-c", XPROF_CODE, path], args.runs, env)
        for what, ours, theirs in (("wall s", ours_w, xp_w), ("CPU s, user + system", ours_c,
                                                               xp_c)):
            o, x = statistics.median(ours), statistics.median(theirs)
            rows.append([label, "one-shot memory, %s (runs: ours %s, XProf %s)"
                         % (what, _fmt(ours), _fmt(theirs)), "%.2f" % o, "%.2f" % x,
                         "%.2f" % (o / x)])
        o, x = statistics.median(ours_m), statistics.median(xp_m)
        rows.append([label, "one-shot memory, peak RSS MB", "%.0f" % o, "%.0f" % x,
                     "%.2f" % (o / x)])
        theirs_peaks = xprof_summary(args.xprof_python, path)
        ours_peaks = ours_summary(path, env)
        for name in sorted(set(theirs_peaks) | set(ours_peaks)):
            mine, xp = ours_peaks.get(name), theirs_peaks.get(name)
            rows.append([label, "%s: peak bytes" % name, "%d" % mine[0] if mine else "--",
                         "%d" % xp[0] if xp else "--",
                         "equal" if mine and xp and mine[0] == xp[0] else "DIFFERENT"])
            rows.append([label, "%s: bytes at the peak left unexplained (ours: allocated "
                         "before the profile; XProf: unused preallocated)" % name,
                         "%d" % mine[1] if mine else "--", "%d" % xp[1] if xp else "--", ""])
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--breakdown", path],
                             check=True, env=env, capture_output=True, text=True).stdout
        spent = json.loads(out)
        load = spent.pop("load")
        memory = sum(spent.values())
        rows.append([label, "in-process load, CPU s; of it memory events (%s)" % ", ".join(
            "%s %.2f" % kv for kv in spent.items()), "%.2f; %.2f (%.0f%%)" % (
                load, memory, 100 * memory / load), "", ""])
    return rows


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--xprof-python", help="a Python with the xprof package")
    ap.add_argument("--tf-python", help="a Python with TensorFlow (to record the profile)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--breakdown", metavar="FILE", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.breakdown:
        print(json.dumps(load_breakdown(args.breakdown)))
        return 0
    if not args.xprof_python:
        ap.error("--xprof-python is required")
    from tabulate import tabulate
    rows = run(args)
    print(tabulate(rows, headers=["profile", "measure", "ours", "XProf", "ratio"],
                   tablefmt="github", disable_numparse=True))
    print("(load average at the end: %s)" % " ".join("%.1f" % x for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
