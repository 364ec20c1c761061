#!/usr/bin/env python3
"""Benchmark tfprof-shell against TensorFlow's C++ tfprof engine, side by side.

For each profile, in separate processes, ``--runs`` times (default 5), our
process and the engine's taking turns (ours, engine, ours, engine, ...) so a
slow spell of the machine hits both; every figure is the median of the runs:
  * one-shot: a whole `tfprof --profile_path=P scope` process (start-up, load,
    the full default scope table, exit), wall time and peak RSS;
  * session: load time, then the latency of each view command, its first
    run and a repeat, then a later command on each view with other options
    (same step and accounting, other depth, columns and order), and the
    process's peak RSS. Our session runs with the garbage collector on after
    loading, as the interactive shell does;
  * the same work through the real engine when a Python with TensorFlow is
    available (--engine-python, default: this Python if it has TensorFlow);
    the engine cannot read TF2 .xplane.pb profiles, so those rows are ours only.
Prints one table per profile: ours, engine, ours/engine, and whether the ratio
meets the target (--target, default 0.5) for each time measure; the spread of
the ratios over the runs says how noisy the machine was.

Profiles: "sample" (tiny_mlp), "medium", "large", "large_tf", "nodes_tf",
"large_synthetic", "xplane" or paths. "large_tf" is a 54k-node, 10-step TF1
training profile that TensorFlow records through the engine Python
(bench/make_large_tf_profile.py, a few minutes on first use): step-heavy;
"nodes_tf" is the same model with 2 traced steps, half the size: node-heavy,
where building the nodes outweighs reading the steps; "large_synthetic" is a
50k-node, 10-step ProfileProto built with our own schemas
(bench/make_large_profile.py) whose random call stacks make a very large code
view. "large" is all three when there is an engine Python, else the synthetic
one. Generated profiles are cached in bench/.cache/.

With --xprof-python (a Python with the xprof package), the TF2 comparisons of
bench/bench_xprof.py (op statistics) and bench/bench_memory.py (memory) run too and
their tables are printed after ours; with
--hta-python (a Python with HolisticTraceAnalysis), bench/bench_torch.py
compares the PyTorch route with HTA and shows its growth at 1x/2x/4x steps; with
--parallel-copies N, bench/bench_parallel.py then loads N copies of the large
TF2 and ProfileProto profiles with 1, 2 and all cores. So one run reports every
ratio of the guide's Performance page (docs/performance.md):

    python bench/bench.py --profiles large --engine-python PY_TF --xprof-python PY_XPROF \
        --hta-python PY_HTA --parallel-copies 4

    python bench/bench.py                       # sample + medium + large + xplane
    python bench/bench.py --profiles large --runs 5 --engine-python /path/to/python
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from typing import Optional

import installed

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ENGINE_DRIVER = os.path.join(ROOT, "tests", "golden", "tfprof_engine.py")
CACHE = os.path.join(HERE, ".cache")

#: Typical commands, one per view, timed inside one session.
COMMANDS = [
    "scope -max_depth 4 -select micros,bytes -order_by micros",
    "graph -max_depth 4 -select micros",
    "op -select micros,bytes,occurrence -order_by micros",
    "code -max_depth 6 -select micros -order_by micros",
    "advise",
]
#: A later command per view, after all of the above: other options, same accounting.
LATER = [
    "scope -max_depth 6 -select bytes,params,micros -order_by bytes",
    "graph -max_depth 6 -select bytes,micros -order_by bytes",
    "op -select micros,occurrence -order_by name",
    "code -max_depth 4 -select micros,bytes -order_by bytes",
]


def profile_paths(names: list[str], engine_py: Optional[str] = None) -> dict[str, str]:
    """Label -> profile path; generated profiles are cached on first use.

    "large" is "large_tf" (recorded by TensorFlow through `engine_py`) when a
    Python with TensorFlow is given, else "large_synthetic"; the label says which.
    """
    paths = {}
    for name in names:
        if name == "sample":
            paths[name] = os.path.join(ROOT, "sample_profiles", "tiny_mlp", "profile")
        elif name == "medium":
            p = os.path.join(ROOT, "..", "shared", "conformance", "profiles", "medium", "profile")
            if os.path.exists(p):
                paths[name] = os.path.abspath(p)
        elif (name == "large" and engine_py) or name in ("large_tf", "nodes_tf"):
            if not engine_py:
                raise SystemExit("%s needs --engine-python (a Python with TensorFlow)" % name)
            if name != "nodes_tf":
                paths["large_tf: recorded with TensorFlow, 10 steps"] = large_tf_profile(engine_py)
            if name != "large_tf":
                paths["nodes_tf: recorded with TensorFlow, 2 steps"] = large_tf_profile(
                    engine_py, steps=2)
            if name == "large":
                paths["large_synthetic: our schemas"] = large_synthetic_profile()
        elif name in ("large", "large_synthetic"):
            label = ("large_synthetic: our schemas (no TensorFlow)" if name == "large"
                     else "large_synthetic: our schemas")
            paths[label] = large_synthetic_profile()
        elif name == "xplane":
            p = os.path.join(CACHE, "large", "localhost.xplane.pb")
            if not os.path.exists(p):
                os.makedirs(os.path.dirname(p), exist_ok=True)
                subprocess.run([sys.executable, os.path.join(HERE, "make_large_xplane.py"), p],
                               check=True)
            paths[name] = p
        elif os.path.exists(name):
            paths[os.path.basename(name)] = name
    return paths


def large_tf_profile(engine_py: str, steps: int = 10) -> str:
    """A 54k-node training profile of ``steps`` steps recorded by TensorFlow (minutes, once):
    10 steps (``large_tf``) or 2 (``nodes_tf``)."""
    out_dir = os.path.join(CACHE, "large_tf" if steps == 10 else "nodes_tf")
    p = os.path.join(out_dir, "profile")
    if not os.path.exists(p):
        print("recording %s with TensorFlow (takes a few minutes) ..." % p, file=sys.stderr)
        subprocess.run([engine_py, os.path.join(HERE, "make_large_tf_profile.py"), out_dir,
                        "--steps", str(steps)], check=True)
    return p


def large_synthetic_profile() -> str:
    """A 50k-node, 10-step ProfileProto built with our own schemas."""
    p = os.path.join(CACHE, "large_profile")
    if not os.path.exists(p):
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run([sys.executable, os.path.join(HERE, "make_large_profile.py"), p],
                       check=True)
    return p


# -- workers (run in their own process) --------------------------------------

def worker_ours(path: str) -> dict:
    import gc
    gc.disable()
    t0 = time.perf_counter()
    from tfprof_shell.load import Inputs, load_model
    from tfprof_shell.session import Session
    model = load_model(Inputs(profile_path=path))
    session = Session(model)
    load = time.perf_counter() - t0
    gc.freeze()  # as the command line does before it starts the shell
    gc.enable()
    times = {}
    for cmd in COMMANDS + LATER:
        runs = []
        for _ in range(2 if cmd in COMMANDS else 1):
            t = time.perf_counter()
            try:
                session.execute(cmd)
            except Exception as exc:  # a missing feature must not stop the benchmark
                runs.append(float("nan"))
                print("ours: %s: %s" % (cmd, exc), file=sys.stderr)
                break
            runs.append(time.perf_counter() - t)
        times[cmd] = runs
    t = time.perf_counter()
    from tfprof_shell.commands import parse_words, split_line
    for _ in range(100):
        parse_words(split_line(COMMANDS[0]), session.options)
    parse = (time.perf_counter() - t) / 100
    # Tab completion of profile names: the first call builds the name index.
    from tfprof_shell.shell.completer import CompletionEngine
    from tfprof_shell.shell.names import NameIndex
    engine = CompletionEngine(lambda: NameIndex.from_model(model), model.steps)
    first_name = model.sorted_nodes()[0].name
    lines = ["scope -show_name_regexes " + first_name[:len(first_name) // 2],
             "scope -sel", "op -order_by ", "graph -account_type_regexes Ma"]
    t = time.perf_counter()
    engine.complete(lines[0])
    complete_first = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(10):
        for line in lines:
            engine.complete(line)
    complete = (time.perf_counter() - t) / (10 * len(lines))
    return {"load": load, "times": times, "parse": parse, "complete_first": complete_first,
            "complete": complete,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def worker_engine(path: str) -> dict:
    spec = importlib.util.spec_from_file_location("tfprof_engine", ENGINE_DRIVER)
    drv = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(drv)
    engine, options_pb2 = drv.load_engine()
    t0 = time.perf_counter()
    drv.load_inputs(engine, {"profile_path": path})
    load = time.perf_counter() - t0
    times = {}
    for cmd in COMMANDS + LATER:
        command, opts = drv.parse_line(cmd)
        runs = []
        for _ in range(2 if cmd in COMMANDS else 1):
            t = time.perf_counter()
            drv.run_command(engine, options_pb2, command, opts)
            runs.append(time.perf_counter() - t)
        times[cmd] = runs
    return {"load": load, "times": times,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


# -- the driver ----------------------------------------------------------------

def run_measured(argv: list[str]) -> tuple[float, float, str]:
    """Run argv; return (wall seconds, peak RSS MB of the child, stdout)."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out, _ = proc.communicate()
    wall = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return wall, rss, out.decode("utf-8", "replace")


def child_rss(argv: list[str],
              env: Optional[dict[str, str]] = None) -> tuple[float, float, float]:
    """Wall time, peak RSS and CPU time (user + system) of one child, measured in a
    fresh wrapper process."""
    code = ("import resource,subprocess,sys,time,json;t=time.perf_counter();"
            "subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL);"
            "r=resource.getrusage(resource.RUSAGE_CHILDREN);"
            "print(json.dumps([time.perf_counter()-t,r.ru_maxrss/1024,r.ru_utime+r.ru_stime]))")
    out = subprocess.run([sys.executable, "-c", code] + argv, capture_output=True, text=True,
                         env=env)
    wall, rss, cpu = json.loads(out.stdout)
    return wall, rss, cpu


def has_tensorflow(python: str) -> bool:
    probe = "import importlib.util,sys;sys.exit(0 if importlib.util.find_spec('tensorflow') else 1)"
    return subprocess.run([python, "-c", probe]).returncode == 0


def median(xs: list[float]) -> float:
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def bench_profile(name: str, path: str, runs: int, engine_py: Optional[str],
                  target: float, one_shot_only: bool = False) -> list[list]:
    """The table rows of one profile (see the module docstring); with
    ``one_shot_only`` just the one-shot rows."""
    ours_cmd = [sys.executable, "-m", "tfprof_shell", "--profile_path=" + path, "scope"]
    ours_env = installed.env()
    eng_cmd = [engine_py, ENGINE_DRIVER, "--profile_path=" + path, "scope"] if engine_py else None
    rows = []
    # Ours and the engine take turns, so a slow spell of the machine hits both.
    one: list[tuple[float, float, float]] = []
    eng_one: list[tuple[float, float, float]] = []
    for _ in range(runs):
        one.append(child_rss(ours_cmd, ours_env))
        if eng_cmd:
            eng_one.append(child_rss(eng_cmd))
    rows.append(_row("one-shot scope (process)", [w for w, _, _ in one],
                     [w for w, _, _ in eng_one], target=target))
    rows.append(_row("one-shot CPU, user + system", [c for _, _, c in one],
                     [c for _, _, c in eng_one], target=target))
    rows.append(_row("one-shot peak RSS (MB)", [r for _, r, _ in one], [r for _, r, _ in eng_one],
                     unit="MB"))
    if one_shot_only:
        return rows
    sess: list[dict] = []
    eng: list[dict] = []
    for _ in range(runs):
        got = _worker(sys.executable, "ours", path)
        if got:
            sess.append(got)
        if engine_py:
            got = _worker(engine_py, "engine", path)
            if got:
                eng.append(got)
    if not sess:
        raise SystemExit("our worker failed on %s" % path)
    rows.append(_row("load", [s["load"] for s in sess], [e["load"] for e in eng], target=target))
    for cmd in COMMANDS:
        for i, label in ((0, "first"), (1, "repeat")):
            rows.append(_row("%s (%s)" % (cmd.split()[0], label), _nth(sess, cmd, i),
                             _nth(eng, cmd, i), target=target))
    for cmd in LATER:
        rows.append(_row("%s (later)" % cmd.split()[0],
                         _nth(sess, cmd, 0), _nth(eng, cmd, 0), target=target))
    rows.append(_row("option parsing", [s["parse"] for s in sess], [], unit="ms"))
    rows.append(_row("completion, name index build", [s["complete_first"] for s in sess], [],
                     unit="ms"))
    rows.append(_row("completion, each key press", [s["complete"] for s in sess], [],
                     unit="ms"))
    rows.append(_row("session peak RSS (MB)", [s["rss_mb"] for s in sess],
                     [e["rss_mb"] for e in eng], unit="MB"))
    return rows


def _nth(results: list[dict], cmd: str, i: int) -> list[float]:
    """The i-th timing of ``cmd`` in each run (nan where it is missing)."""
    return [r["times"][cmd][i] if len(r["times"].get(cmd, ())) > i else float("nan")
            for r in results]


def _worker(python: str, kind: str, path: str) -> Optional[dict]:
    env = installed.env()
    out = subprocess.run([python, os.path.abspath(__file__), "--worker", kind, path],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print("%s worker failed on %s (exit %d): %s" % (kind, path, out.returncode,
                                                        out.stderr.strip()[-500:]),
              file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def _row(label: str, ours: list[float], theirs: list[float], unit: str = "s",
         target: Optional[float] = None) -> list:
    """[measure, ours, engine, ratio, ratio range over the runs, target met?]."""
    o, t = median(ours), median(theirs) if theirs else float("nan")
    ratio = o / t if theirs and t > 0 else float("nan")
    # Runs alternate, so the i-th runs of both sides ran at about the same time.
    pairs = [a / b for a, b in zip(ours, theirs) if a == a and b == b and b > 0]
    spread = "%.2f-%.2f" % (min(pairs), max(pairs)) if len(pairs) > 1 else "-"
    met = "-"
    if target is not None and ratio == ratio:
        met = "yes" if ratio <= target else "NO"
    if unit == "ms":
        o, t = o * 1000, t * 1000
    fmt = {"s": lambda v: "%.3f" % v, "ms": lambda v: "%.2f ms" % v}.get(unit, lambda v: "%.0f" % v)
    return [label, fmt(o), fmt(t) if theirs else "-", "%.2f" % ratio if ratio == ratio else "-",
            spread, met]


def _bench_module(name: str):
    """A sibling bench/NAME.py module, loaded by path (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def xprof_rows(xprof_py: str, engine_py: Optional[str], runs: int) -> Optional[list[list]]:
    """bench_xprof.py's rows (TF2 profiles against XProf), if that module is here."""
    where = os.path.join(HERE, "bench_xprof.py")
    if not os.path.exists(where):
        print("no bench/bench_xprof.py: the XProf comparison is skipped", file=sys.stderr)
        return None
    spec = importlib.util.spec_from_file_location("bench_xprof", where)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.run(argparse.Namespace(files=[], xprof_python=xprof_py, tf_python=engine_py,
                                      runs=runs))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profiles", default="sample,medium,large,xplane",
                    help="comma list: sample, medium, large (the three large profiles when "
                         "there is an engine Python, else the synthetic one), large_tf, "
                         "nodes_tf, large_synthetic, xplane (a 100 MB TF2 profile; the engine "
                         "cannot read it), or paths")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--target", type=float, default=0.5,
                    help="the ours/engine ratio each time measure should meet")
    ap.add_argument("--engine-python", default=os.environ.get("TFPROF_ENGINE_PYTHON"),
                    help="a Python with TensorFlow 2.x installed (default: this one if it has it)")
    ap.add_argument("--xprof-python",
                    help="a Python with the xprof package: also run bench/bench_xprof.py")
    ap.add_argument("--one-shot-only", action="store_true",
                    help="measure only the one-shot scope process of each profile")
    ap.add_argument("--hta-python",
                    help="a Python with HolisticTraceAnalysis: also run bench/bench_torch.py")
    ap.add_argument("--torch-steps", type=int, default=150,
                    help="steps of the 1x PyTorch trace (2x and 4x follow)")
    ap.add_argument("--parallel-copies", type=int, default=0, metavar="N",
                    help="also run bench/bench_parallel.py: N copies loaded with 1, 2, all cores")
    ap.add_argument("--worker", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        kind, path = args.worker
        result = worker_ours(path) if kind == "ours" else worker_engine(path)
        print(json.dumps(result))
        return 0
    engine_py = args.engine_python or (sys.executable if has_tensorflow(sys.executable) else None)
    if engine_py and not has_tensorflow(engine_py):
        raise SystemExit("--engine-python %s has no TensorFlow" % engine_py)
    from tabulate import tabulate
    print("machine: %d cores; runs per measure: %d, ours and the engine alternating (medians); "
          "engine: %s" % (os.cpu_count() or 0, args.runs,
                          "TensorFlow via " + engine_py if engine_py else "none"))
    for name, path in profile_paths(args.profiles.split(","), engine_py).items():
        size = os.path.getsize(path) / 1e6
        engine = engine_py if not path.endswith(".xplane.pb") else None
        rows = bench_profile(name, path, args.runs, engine, args.target, args.one_shot_only)
        print("\n%s (%s, %.1f MB)" % (name, os.path.basename(path), size))
        print(tabulate(rows, headers=["measure", "ours", "engine", "ours/engine",
                                      "range over runs", "<= %.2g" % args.target],
                       tablefmt="github"))
        sys.stdout.flush()
    if args.xprof_python:
        rows = xprof_rows(args.xprof_python, engine_py, args.runs)
        if rows:
            print("\nTF2 profiles against XProf (bench/bench_xprof.py)")
            print(tabulate(rows, headers=["profile", "measure", "ours", "XProf", "ratio"],
                           tablefmt="github"))
        rows = _bench_module("bench_memory").run(argparse.Namespace(
            files=[], xprof_python=args.xprof_python, tf_python=engine_py, runs=args.runs))
        if rows:
            print("\nTF2 memory against XProf's memory_profile (bench/bench_memory.py)")
            print(tabulate(rows, headers=["profile", "measure", "ours", "XProf", "ratio"],
                           tablefmt="github", disable_numparse=True))
        sys.stdout.flush()
    if args.hta_python:
        compare, growth = _bench_module("bench_torch").run(argparse.Namespace(
            hta_python=args.hta_python, steps=args.torch_steps, hta_sizes="1,2",
            runs=args.runs))
        print("\nPyTorch traces against HTA's TraceAnalysis load (bench/bench_torch.py)")
        print(tabulate(compare, headers=["trace", "ours s", "HTA s", "ours/HTA (wall)",
                                         "range over runs", "ours/HTA (CPU)",
                                         "peak RSS MB ours / HTA"], tablefmt="github"))
        print(tabulate(growth, headers=["trace", "ours wall s", "x 1x", "ours CPU s", "x 1x",
                                        "peak RSS MB"], tablefmt="github"))
        sys.stdout.flush()
    if args.parallel_copies:
        print("\nLoading %d profiles at once (bench/bench_parallel.py)" % args.parallel_copies)
        sys.stdout.flush()
        subprocess.run([sys.executable, os.path.join(HERE, "bench_parallel.py"),
                        "--copies", str(args.parallel_copies), "--runs", str(max(1, args.runs // 2))],
                       check=True)
    print("\n(load average at the end: %s)" % " ".join("%.1f" % x for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
