#!/usr/bin/env python3
"""TF2 profiles: tfprof-shell against XProf's ``framework_op_stats`` converter.

For each ``.xplane.pb`` (by default the TensorFlow-recorded one of
bench/make_large_tf2_xplane.py, the synthetic one of bench/make_large_xplane.py
and the other recorded shapes of :data:`SHAPES`: a 40-block residual MLP with
host tracer level 3 with and without the Python tracer, a Keras fit; all
cached in bench/.cache/), whole processes,
alternating (ours, XProf, ours, XProf, ...), medians of --runs:

* one-shot: ``python -m tfprof_shell --profile_path=F op -select
  micros,occurrence -order_by micros`` against a process running XProf's
  ``raw_to_tool_data.xspace_to_tool_data([F], "framework_op_stats", ...)``
  (its saved-result cache off); wall time, CPU time and peak RSS of each,
  and (Linux) the peak memory of each process tree (ours forks a child for
  a large file); ours runs from compiled bytecode, as installed;
* session: load time, then the latency of later views (scope, op, code, graph);
* agreement: per op type, our self time and executions over all steps
  against the sum of XProf's host self time and occurrences over that type's
  ops (see :func:`agreement` for what "agrees" means and why eager ops are
  ours only). XProf's figures come from the OpStats its converter saves
  beside the file, which holds every op; its framework_op_stats table, the
  fallback, lists only the 500 ops with most time.

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

import installed

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(HERE, ".cache")
VIEWS = ["scope -max_depth 4 -select micros,occurrence",
         "op -select micros,occurrence -order_by micros",
         "code -max_depth 6 -select micros,occurrence",
         "graph -max_depth 3 -select micros"]
ONE_SHOT = ["op", "-select", "micros,occurrence", "-order_by", "micros"]


def xprof_code(tool: str) -> str:
    """A program for XProf's Python: its ``tool`` converter on the .xplane.pb argv[1]
    (the saved-result cache off), the result written to argv[2] when given."""
    return """
import json, sys
from xprof.convert import raw_to_tool_data
data, _ = raw_to_tool_data.xspace_to_tool_data(
    [sys.argv[1]], "%s", {"use_saved_result": False})
if len(sys.argv) > 2:
    with open(sys.argv[2], "w") as f:
        f.write(data if isinstance(data, str) else data.decode())
""" % tool


XPROF_CODE = xprof_code("framework_op_stats")


def recorded_profile(tf_python: Optional[str]) -> Optional[str]:
    """The TensorFlow-recorded ~100 MB profile (recorded once, needs TensorFlow)."""
    p = os.path.join(CACHE, "tf2", "localhost.xplane.pb")
    if not os.path.exists(p):
        if not tf_python:
            return None
        subprocess.run([tf_python, os.path.join(HERE, "make_large_tf2_xplane.py"), p],
                       check=True)
    return p


#: Other shapes of real TF2 profiles: name -> make_large_tf2_xplane.py arguments.
SHAPES = {
    "deep_py3": ["--shape", "deep", "--layers", "40", "--steps", "600", "--host-level", "3"],
    "deep_nopy": ["--shape", "deep", "--layers", "40", "--steps", "600", "--host-level", "3",
                  "--no-python-tracer"],
    "keras_fit": ["--shape", "keras", "--layers", "6", "--steps", "600", "--host-level", "2"],
    # tensors of 256 KiB or more: TensorFlow records their allocations on the CPU
    # (bench/bench_memory.py compares `memory` with XProf's memory_profile on it)
    "deep_mem": ["--shape", "deep", "--layers", "40", "--steps", "240", "--host-level", "3",
                 "--width", "512", "--batch", "256"],
}


def shape_profiles(tf_python: Optional[str]) -> list[str]:
    """The recorded shapes of :data:`SHAPES` (recording the missing ones with TensorFlow)."""
    out = []
    for name, extra in SHAPES.items():
        p = os.path.join(CACHE, "shapes", name, "localhost.xplane.pb")
        if not os.path.exists(p) and tf_python:
            subprocess.run([tf_python, os.path.join(HERE, "make_large_tf2_xplane.py"), p]
                           + extra, check=True)
        if os.path.exists(p):
            out.append(p)
    return out


def synthetic_profile() -> str:
    """The synthetic ~103 MB profile (bench/make_large_xplane.py)."""
    p = os.path.join(CACHE, "large", "localhost.xplane.pb")
    if not os.path.exists(p):
        os.makedirs(os.path.dirname(p), exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make_large_xplane.py"), p],
                       check=True)
    return p


def measured(argv: list[str], env: Optional[dict[str, str]] = None
             ) -> tuple[float, float, float]:
    """(wall seconds, peak RSS MB, CPU seconds: user + system) of one child
    process (run via a fresh shell-less wrapper so RUSAGE_CHILDREN holds just
    this child and the children it waited for). The peak RSS is that of the
    largest single process: a process that forks children (ours does, for a
    large file) is measured as a tree by :func:`tree_pss_peak`. CPU time is
    steadier than wall time on a machine shared with other work."""
    code = ("import resource, subprocess, sys, time, json\n"
            "t = time.perf_counter()\n"
            "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL,"
            " stderr=subprocess.DEVNULL)\n"
            "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print(json.dumps([time.perf_counter() - t, u.ru_maxrss / 1024,"
            " u.ru_utime + u.ru_stime]))\n")
    out = subprocess.run([sys.executable, "-c", code] + argv, check=True, env=env,
                         capture_output=True, text=True).stdout
    wall, rss, cpu = json.loads(out)
    return wall, rss, cpu


def taking_turns(ours: list[str], peer: list[str], runs: int,
                 env: Optional[dict[str, str]] = None) -> tuple[list[list[float]], list[list[float]]]:
    """:func:`measured` of ``ours`` and of ``peer``, alternating, ``runs`` times each: for
    each side its [wall s], [peak RSS MB] and [CPU s] over the runs (ours in ``env``)."""
    mine: list[list[float]] = [[], [], []]
    theirs: list[list[float]] = [[], [], []]
    for _ in range(runs):
        for side, argv, environ in ((mine, ours, env), (theirs, peer, None)):
            for column, value in zip(side, measured(argv, environ)):
                column.append(value)
    return mine, theirs


def tree_pss_peak(argv: list[str], env: Optional[dict[str, str]] = None) -> Optional[float]:
    """The peak (sampled every 10 ms) of the summed PSS (shared pages counted
    once) of a process and its descendants, MB; None where /proc lacks it."""
    if not os.path.exists("/proc/self/smaps_rollup"):
        return None

    def tree(pid: int) -> list[int]:
        try:
            with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            return [pid]
        return [pid] + [p for k in kids for p in tree(k)]

    def pss(pid: int) -> int:
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                return next((int(line.split()[1]) for line in f if line.startswith("Pss:")), 0)
        except OSError:
            return 0

    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, sum(map(pss, tree(proc.pid))))
        time.sleep(0.01)
    return peak / 1024


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
    from tfprof_shell.errors import UserError
    views = {}
    for cmd in VIEWS:
        runs = []
        for _ in range(2):
            t = time.perf_counter()
            try:
                session.execute(cmd)
            except UserError:  # e.g. no code view without the Python tracer
                break
            runs.append(time.perf_counter() - t)
        if runs:
            views[cmd.split()[0]] = runs
    return {"load": load, "views": views}


def op_type_totals(path: str) -> dict[str, tuple[int, int]]:
    """Our op view: op type -> (self time in µs, executions) over all steps; eager
    ops count as type ``"eager " + type``."""
    sys.path.insert(0, ROOT)
    from tfprof_shell.load import Inputs, load_model
    model = load_model(Inputs(profile_path=path))
    totals: dict[str, tuple[int, int]] = {}
    for node in model.nodes.values():
        if node.name == node.op:  # an eager op's node is named by its type
            node_type = "eager " + node.op
        else:
            node_type = node.op
        micros = runs = 0
        for rec in node.execs.values():
            values = rec.values()
            runs += values[0]
            micros += values[1]
        old = totals.get(node_type, (0, 0))
        totals[node_type] = (old[0] + micros, old[1] + runs)
    return totals


#: Run in XProf's Python after XPROF_CODE: its op statistics for the file, per
#: host op type (self time in µs, occurrences), from the OpStats the converter
#: saved beside the file (its table keeps only the 500 ops with most time).
XPROF_TYPES_CODE = """
import glob, json, os, sys
from xprof.protobuf import op_stats_pb2
path, since, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
found = [f for f in glob.glob(os.path.join(os.path.dirname(path), "*op_stats*.pb"))
         if os.path.getmtime(f) >= since]
types = None
if len(found) == 1:
    with open(found[0], "rb") as f:
        stats = op_stats_pb2.OpStats.FromString(f.read())
    types = {}
    for m in stats.host_op_metrics_db.metrics_db:
        if m.category != "IDLE":
            old = types.get(m.category, (0.0, 0))
            types[m.category] = (old[0] + m.self_time_ps / 1e6, old[1] + m.occurrences)
with open(out, "w") as f:
    json.dump(types, f)
"""


def xprof_type_totals(xprof_python: str, path: str) -> tuple[dict[str, tuple[float, int]], str]:
    """XProf's op statistics: op type -> (host self time in µs, occurrences), and
    where they were read: every op from the OpStats that framework_op_stats saves,
    else its table (the 500 ops with most time only)."""
    out = os.path.join(CACHE, "xprof_op_stats.json")
    types_out = os.path.join(CACHE, "xprof_op_types.json")
    os.makedirs(CACHE, exist_ok=True)
    since = time.time() - 1
    subprocess.run([xprof_python, "-c", XPROF_CODE, path, out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run([xprof_python, "-c", XPROF_TYPES_CODE, path, str(since), types_out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(types_out) as f:
        saved = json.load(f)
    if saved is not None:
        return {t: (v[0], v[1]) for t, v in saved.items()}, "its saved OpStats, every op"
    with open(out) as f:
        tables = json.load(f)
    totals: dict[str, tuple[float, int]] = {}
    rows = 0
    for table in tables if isinstance(tables, list) else [tables]:
        cols = [c["id"] for c in table["cols"]]
        if "type" not in cols or "host_or_device" not in cols:
            continue
        t_col, hd, self_col, occ = (cols.index("type"), cols.index("host_or_device"),
                                    cols.index("total_self_time"), cols.index("occurrences"))
        for row in table["rows"]:
            cells = [c["v"] for c in row["c"]]
            if cells[hd] != "Host" or cells[t_col] == "IDLE":
                continue
            old = totals.get(cells[t_col], (0.0, 0))
            totals[cells[t_col]] = (old[0] + float(cells[self_col]), old[1] + int(cells[occ]))
        rows = len(table["rows"])
        break
    return totals, "its framework_op_stats table, %d rows (it keeps the top 500)" % rows


def agreement(ours: dict[str, tuple[int, int]],
              theirs: dict[str, tuple[float, int]]) -> dict[str, Any]:
    """How our per-type totals compare with XProf's.

    A type agrees when its time is within 1% of XProf's or within 1 µs per
    execution (tfprof keeps whole microseconds per execution, XProf
    nanoseconds), and its executions equal XProf's occurrences. Types only we
    have are eager ops: XProf's framework_op_stats leaves them out of its host
    table. Executions outside every step marker are left out of a tfprof
    model, so a type run there too has fewer executions than XProf counts.
    """
    both = sorted(set(ours) & set(theirs))
    time_ok = [t for t in both if abs(ours[t][0] - theirs[t][0])
               <= max(0.01 * theirs[t][0], ours[t][1], 1.0)]
    runs_ok = [t for t in both if ours[t][1] == theirs[t][1]]
    total_ours = sum(ours[t][0] for t in both)
    total_theirs = sum(theirs[t][0] for t in both)
    return {"both": len(both), "time_ok": len(time_ok), "runs_ok": len(runs_ok),
            "ours_only": sorted(set(ours) - set(theirs)),
            "xprof_only": sorted(set(theirs) - set(ours)),
            "total": (total_ours, total_theirs),
            "worst": sorted(((abs(ours[t][0] - theirs[t][0]) / max(theirs[t][0], 1.0), t)
                             for t in both), reverse=True)[:3]}


def run(args: argparse.Namespace) -> list[list[Any]]:
    """Rows: [profile, measure, ours, XProf, ratio]."""
    files = list(args.files)
    if not files:
        rec = recorded_profile(args.tf_python)
        files = ([rec] if rec else []) + [synthetic_profile()] + shape_profiles(args.tf_python)
    env = installed.env()
    rows: list[list[Any]] = []
    for path in files:
        label = "%s (%.0f MB)" % (os.path.relpath(path, ROOT), os.path.getsize(path) / 1e6)
        (ours_w, ours_m, ours_c), (xp_w, xp_m, xp_c) = taking_turns(
            [sys.executable, "-m", "tfprof_shell", "--profile_path=" + path] + ONE_SHOT,
            [args.xprof_python, "-c", XPROF_CODE, path], args.runs, env)
        ow, xw = statistics.median(ours_w), statistics.median(xp_w)
        om, xm = statistics.median(ours_m), statistics.median(xp_m)
        oc, xc = statistics.median(ours_c), statistics.median(xp_c)
        rows.append([label, "one-shot op, wall s (runs: ours %s, XProf %s)"
                     % (_fmt(ours_w), _fmt(xp_w)), "%.2f" % ow, "%.2f" % xw, "%.2f" % (ow / xw)])
        rows.append([label, "one-shot op, CPU s, user + system (runs: ours %s, XProf %s)"
                     % (_fmt(ours_c), _fmt(xp_c)), "%.2f" % oc, "%.2f" % xc, "%.2f" % (oc / xc)])
        rows.append([label, "one-shot op, peak RSS MB", "%.0f" % om, "%.0f" % xm,
                     "%.2f" % (om / xm)])
        ours_tree = tree_pss_peak([sys.executable, "-m", "tfprof_shell",
                                   "--profile_path=" + path] + ONE_SHOT, env)
        xp_tree = tree_pss_peak([args.xprof_python, "-c", XPROF_CODE, path])
        if ours_tree and xp_tree:
            rows.append([label, "one-shot op, peak PSS MB of the process tree (one run)",
                         "%.0f" % ours_tree, "%.0f" % xp_tree, "%.2f" % (ours_tree / xp_tree)])
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--session", path],
                             check=True, env=env, capture_output=True, text=True).stdout
        sess = json.loads(out)
        rows.append([label, "session: load s", "%.2f" % sess["load"], "", ""])
        for view, times in sess["views"].items():
            rows.append([label, "session: later %s, s (first / repeated)" % view,
                         "%.3f / %.3f" % (times[0], times[1]), "", ""])
        theirs, source = xprof_type_totals(args.xprof_python, path)
        agree = agreement(op_type_totals(path), theirs)
        rows.append([label, "op types in both: time within 1% or 1 us/run; same run count",
                     "%d of %d; %d of %d" % (agree["time_ok"], agree["both"],
                                             agree["runs_ok"], agree["both"]),
                     "from " + source, ""])
        rows.append([label, "self time of the types in both, ms", "%.1f" % (agree["total"][0] / 1e3),
                     "%.1f" % (agree["total"][1] / 1e3),
                     "%.3f" % (agree["total"][0] / max(agree["total"][1], 1.0))])
        rows.append([label, "types only ours (eager ops) / only XProf's",
                     "%d: %s" % (len(agree["ours_only"]), " ".join(agree["ours_only"][:6])),
                     "%d: %s" % (len(agree["xprof_only"]), " ".join(agree["xprof_only"][:6])), ""])
        rows.append([label, "largest relative differences", ", ".join(
            "%s %.1f%%" % (t, 100 * d) for d, t in agree["worst"]), "", ""])
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
