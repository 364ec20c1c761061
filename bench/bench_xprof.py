#!/usr/bin/env python3
"""TF2 profiles: tfprof-shell against XProf's ``framework_op_stats`` converter.

For each ``.xplane.pb`` (by default the TensorFlow-recorded one of
bench/make_large_tf2_xplane.py and the synthetic one of
bench/make_large_xplane.py, both cached in bench/.cache/), whole processes,
alternating (ours, XProf, ours, XProf, ...), medians of --runs:

* one-shot: ``python -m tfprof_shell --profile_path=F op -select
  micros,occurrence -order_by micros`` against a process running XProf's
  ``raw_to_tool_data.xspace_to_tool_data([F], "framework_op_stats", ...)``
  (its saved-result cache off); wall time and peak RSS of each;
* session: load time, then the latency of later views (scope, op, code, graph);
* agreement: per op type, our total self time (µs) against the sum of XProf's
  host self time over that type's rows: how many types agree within 1%
  (XProf leaves eager ops out, so types that also ran eagerly differ).

Needs a Python with the ``xprof`` package (--xprof-python) and, to record the
TensorFlow profile on first use, one with TensorFlow (--tf-python)::

    python bench/bench_xprof.py --xprof-python PY --tf-python PY [--runs 3] [FILE ...]

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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(HERE, ".cache")
VIEWS = ["scope -max_depth 4 -select micros,occurrence",
         "op -select micros,occurrence -order_by micros",
         "code -max_depth 6 -select micros,occurrence",
         "graph -max_depth 3 -select micros"]
ONE_SHOT = ["op", "-select", "micros,occurrence", "-order_by", "micros"]
XPROF_CODE = """
import json, sys
from xprof.convert import raw_to_tool_data
data, _ = raw_to_tool_data.xspace_to_tool_data(
    [sys.argv[1]], "framework_op_stats", {"use_saved_result": False})
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        f.write(data if isinstance(data, str) else data.decode())
"""


def recorded_profile(tf_python: Optional[str]) -> Optional[str]:
    """The TensorFlow-recorded ~100 MB profile (recorded once, needs TensorFlow)."""
    p = os.path.join(CACHE, "tf2", "localhost.xplane.pb")
    if not os.path.exists(p):
        if not tf_python:
            return None
        subprocess.run([tf_python, os.path.join(HERE, "make_large_tf2_xplane.py"), p],
                       check=True)
    return p


def synthetic_profile() -> str:
    """The synthetic ~103 MB profile (bench/make_large_xplane.py)."""
    p = os.path.join(CACHE, "large", "localhost.xplane.pb")
    if not os.path.exists(p):
        os.makedirs(os.path.dirname(p), exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make_large_xplane.py"), p],
                       check=True)
    return p


def measured(argv: list[str], env: Optional[dict[str, str]] = None) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one child process (run via a fresh shell-less
    wrapper so RUSAGE_CHILDREN holds just this child)."""
    code = ("import resource, subprocess, sys, time, json\n"
            "t = time.perf_counter()\n"
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL,"
            " stderr=subprocess.DEVNULL)\n"
            "print(json.dumps([time.perf_counter() - t,"
            " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024]))\n")
    out = subprocess.run([sys.executable, "-c", code] + argv, check=True, env=env,
                         capture_output=True, text=True).stdout
    wall, rss = json.loads(out)
    return wall, rss


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def session_worker(path: str) -> dict[str, Any]:
    """In this process: load ``path``, then time each view (second run of each)."""
    import gc
    gc.disable()
    t0 = time.perf_counter()
    from tfprof_shell.load import Inputs, load_model
    from tfprof_shell.session import Session
    session = Session(load_model(Inputs(profile_path=path)))
    gc.freeze()
    load = time.perf_counter() - t0
    views = {}
    for cmd in VIEWS:
        runs = []
        for _ in range(2):
            t = time.perf_counter()
            session.execute(cmd)
            runs.append(time.perf_counter() - t)
        views[cmd.split()[0]] = runs
    return {"load": load, "views": views}


def op_type_totals(path: str) -> dict[str, int]:
    """Our op view: op type -> total self time in µs over all steps."""
    sys.path.insert(0, ROOT)
    from tfprof_shell.load import Inputs, load_model
    model = load_model(Inputs(profile_path=path))
    totals: dict[str, int] = {}
    for node in model.nodes.values():
        micros = sum(rec.cpu_micros() + rec.accelerator_micros() for rec in node.execs.values())
        totals[node.op] = totals.get(node.op, 0) + micros
    return totals


def xprof_type_totals(xprof_python: str, path: str) -> dict[str, float]:
    """XProf's framework_op_stats: op type -> summed host self time in µs."""
    out = os.path.join(CACHE, "xprof_op_stats.json")
    subprocess.run([xprof_python, "-c", XPROF_CODE, path, out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        tables = json.load(f)
    totals: dict[str, float] = {}
    for table in tables if isinstance(tables, list) else [tables]:
        cols = [c["id"] for c in table["cols"]]
        if "type" not in cols or "host_or_device" not in cols:
            continue
        t_col, hd, self_col = cols.index("type"), cols.index("host_or_device"), \
            cols.index("total_self_time")
        for row in table["rows"]:
            cells = [c["v"] for c in row["c"]]
            if cells[hd] != "Host" or cells[t_col] == "IDLE":
                continue
            totals[cells[t_col]] = totals.get(cells[t_col], 0.0) + float(cells[self_col])
        break
    return totals


def agreement(ours: dict[str, int], theirs: dict[str, float]) -> tuple[int, int, int]:
    """(types in both, of those within 1% of XProf's total, types in one only).

    XProf's framework_op_stats leaves eager ops out of its host table, so types
    that also ran eagerly have larger totals here (and eager-only types are ours only).
    """
    both = set(ours) & set(theirs)
    close = sum(1 for t in both if abs(ours[t] - theirs[t]) <= 0.01 * max(theirs[t], 1.0))
    return len(both), close, len(set(ours) ^ set(theirs))


def run(args: argparse.Namespace) -> list[list[Any]]:
    """Rows: [profile, measure, ours, XProf, ratio]."""
    files = list(args.files)
    if not files:
        rec = recorded_profile(args.tf_python)
        files = ([rec] if rec else []) + [synthetic_profile()]
    env = _env()
    rows: list[list[Any]] = []
    for path in files:
        label = "%s (%.0f MB)" % (os.path.relpath(path, ROOT), os.path.getsize(path) / 1e6)
        ours_w, ours_m, xp_w, xp_m = [], [], [], []
        for _ in range(args.runs):
            w, m = measured([sys.executable, "-m", "tfprof_shell", "--profile_path=" + path]
                            + ONE_SHOT, env)
            ours_w.append(w)
            ours_m.append(m)
            w, m = measured([args.xprof_python, "-c", XPROF_CODE, path])
            xp_w.append(w)
            xp_m.append(m)
        ow, xw = statistics.median(ours_w), statistics.median(xp_w)
        om, xm = statistics.median(ours_m), statistics.median(xp_m)
        rows.append([label, "one-shot op, wall s (runs: ours %s, XProf %s)"
                     % (_fmt(ours_w), _fmt(xp_w)), "%.2f" % ow, "%.2f" % xw, "%.2f" % (ow / xw)])
        rows.append([label, "one-shot op, peak RSS MB", "%.0f" % om, "%.0f" % xm,
                     "%.2f" % (om / xm)])
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--session", path],
                             check=True, env=env, capture_output=True, text=True).stdout
        sess = json.loads(out)
        rows.append([label, "session: load s", "%.2f" % sess["load"], "", ""])
        for view, times in sess["views"].items():
            rows.append([label, "session: later %s, s (first / repeated)" % view,
                         "%.3f / %.3f" % (times[0], times[1]), "", ""])
        both, close, only = agreement(op_type_totals(path),
                                      xprof_type_totals(args.xprof_python, path))
        rows.append([label, "op types: in both / of those within 1% / in one only",
                     "%d / %d / %d" % (both, close, only), "", ""])
    return rows


def _fmt(xs: list[float]) -> str:
    return " ".join("%.1f" % x for x in xs)


def main(argv: Optional[list[str]] = None) -> int:
    """Print the table (markdown)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--session"]:
        sys.path.insert(0, ROOT)
        print(json.dumps(session_worker(argv[1])))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", help=".xplane.pb files (default: recorded + synthetic)")
    ap.add_argument("--xprof-python", required=True, help="a Python with the xprof package")
    ap.add_argument("--tf-python", help="a Python with TensorFlow (to record the profile)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args(argv)
    print("| profile | measure | ours | XProf | ratio |\n|---|---|---|---|---|")
    for row in run(args):
        print("| " + " | ".join(str(c) for c in row) + " |")
    print("(load average at the end: %s; cores: %d)"
          % (" ".join("%.1f" % x for x in os.getloadavg()), os.cpu_count() or 0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
