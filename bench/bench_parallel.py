#!/usr/bin/env python3
"""Benchmark loading several profiles at once (tfprof_shell.load.parallel.load_many).

For each large profile kind, N copies (hard links to one generated file, so
the page cache holds it once, as for files read again) are loaded:
  * with 1 core: ``load_many(workers=1)``, i.e. in this process, as a single
    profile loads today (the baseline of the speed-ups);
  * through the pool with 1 process (what the summary round trip costs);
  * through the pool with 2 processes and with one per core;
each in a fresh Python process (gc off, as the CLI loads), whose peak RSS
(the shell's process, holding every loaded profile; not its loading
processes) is printed too; --runs rounds,
interleaved, and the fastest of each counts (other work on a shared machine
only adds time).
Also printed: the summary's size against the file's, the time to pack and
unpack it, what starting a loading process costs with the spawn and
forkserver start methods, and how many cores were free (on a shared machine
the speed-ups are bounded by that, not by the core count).

Profiles: "tf2" (the TensorFlow-recorded ~100 MB TF2 file of
bench/make_large_tf2_xplane.py, Python stacks included, when it has been
recorded), "xplane" (bench/make_large_xplane.py, ~100 MB, 20k ops x 20 steps),
"profile" (bench/make_large_profile.py, a ~90 MB ProfileProto, 50k nodes x
10 steps) and "profile_tf" (the ~75 MB ProfileProto TensorFlow records for
bench/bench.py's "large_tf", when it has been recorded), generated once into
bench/.cache/ as bench/bench.py does::

    python bench/bench_parallel.py --copies 4 [--profiles tf2,xplane,profile,profile_tf] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CACHE = os.path.join(HERE, ".cache")
sys.path.insert(0, ROOT)

#: kind -> (cached file, generator script, copy name pattern)
PROFILES = {
    "tf2": (os.path.join(CACHE, "tf2", "localhost.xplane.pb"), "make_large_tf2_xplane.py",
            "host%d.xplane.pb"),
    "xplane": (os.path.join(CACHE, "large", "localhost.xplane.pb"), "make_large_xplane.py",
               "host%d.xplane.pb"),
    "profile": (os.path.join(CACHE, "large_profile"), "make_large_profile.py", "profile_%d"),
    "profile_tf": (os.path.join(CACHE, "large_tf", "profile"), "make_large_tf_profile.py",
                   "profile_%d"),
}
#: Kinds recorded with TensorFlow: measured only once recorded (by another script).
RECORDED = {
    "tf2": "bench/make_large_tf2_xplane.py, with TensorFlow, or bench/bench_xprof.py "
           "--tf-python PY",
    "profile_tf": "bench/bench.py --engine-python PY, with TensorFlow",
}


def source(kind: str) -> str:
    path, script, _ = PROFILES[kind]
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        print("generating %s ..." % path, file=sys.stderr)
        subprocess.run([sys.executable, os.path.join(HERE, script), path], check=True)
    return path


def copies(kind: str, n: int) -> list[str]:
    """``n`` paths with the content of the large ``kind`` profile (hard links)."""
    original = source(kind)
    folder = os.path.join(CACHE, "copies", kind)
    os.makedirs(folder, exist_ok=True)
    paths = []
    for i in range(n):
        path = os.path.join(folder, PROFILES[kind][2] % i)
        if not os.path.exists(path):
            try:
                os.link(original, path)
            except OSError:
                os.symlink(original, path)
        paths.append(path)
    return paths


# -- in a child process ----------------------------------------------------------

def child(mode: str, paths: list[str]) -> dict:
    import gc
    gc.disable()
    from tfprof_shell.load import Inputs
    from tfprof_shell.load import parallel
    jobs = [("p%d" % i, Inputs(profile_path=p)) for i, p in enumerate(paths)]
    t = time.perf_counter()
    if mode == "pool1":
        loaded = parallel._load_in_processes(jobs, 1)
    else:
        loaded = parallel.load_many(jobs, workers=int(mode))
    wall = time.perf_counter() - t
    assert [j.name for j in loaded] == [name for name, _ in jobs]
    return {"wall": wall, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def pack_stats(path: str) -> dict:
    import gc
    gc.disable()
    from tfprof_shell.load import Inputs, load_model
    from tfprof_shell.model.summary import pack_model, unpack_model
    t = time.perf_counter()
    model = load_model(Inputs(profile_path=path))
    load = time.perf_counter() - t
    t = time.perf_counter()
    data = pack_model(model)
    pack = time.perf_counter() - t
    t = time.perf_counter()
    unpack_model(data)
    unpack = time.perf_counter() - t
    return {"load": load, "pack": pack, "unpack": unpack, "size": len(data),
            "file": os.path.getsize(path), "nodes": len(model.nodes),
            "records": sum(len(n.steps_run) for n in model.nodes.values())}


def _echo(conn) -> None:
    import tfprof_shell.load.parallel  # noqa: F401  (what a loading process imports)
    conn.send(os.getpid())


def start_methods(n: int = 6) -> dict:
    """Seconds to start a loading process and hear from it: [first, median of the rest]."""
    import multiprocessing
    from tfprof_shell.load.parallel import PRELOAD
    out = {}
    for method in ("spawn", "forkserver"):
        if method not in multiprocessing.get_all_start_methods():
            continue
        ctx = multiprocessing.get_context(method)
        if method == "forkserver":
            ctx.set_forkserver_preload(PRELOAD)
        times = []
        for _ in range(n):
            t = time.perf_counter()
            reader, writer = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_echo, args=(writer,))
            proc.start()
            writer.close()
            reader.recv()
            proc.join()
            times.append(time.perf_counter() - t)
        out[method] = [times[0], statistics.median(times[1:])]
    return out


def _spin(_: int) -> float:
    t = time.perf_counter()
    x = 0
    for i in range(20_000_000):
        x += i
    return time.perf_counter() - t


def free_cores() -> float:
    """How many cores this machine has free now: two busy processes' speed over one's.

    2.0 on an idle 2-core machine; other work (a shared machine) lowers it,
    and then no pool can reach a 2x speed-up.
    """
    import multiprocessing
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(_spin, [0, 1])  # warm up both
        t = time.perf_counter()
        pool.map(_spin, [0])
        one = time.perf_counter() - t
        t = time.perf_counter()
        pool.map(_spin, [0, 1])
        two = time.perf_counter() - t
    return 2 * one / two


def in_child(*args: str) -> dict:
    res = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"] + list(args),
                         check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", type=int, default=4, help="profiles loaded together")
    ap.add_argument("--profiles", default="tf2,xplane,profile,profile_tf")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        what, rest = args.child[0], args.child[1:]
        if what == "pack":
            print(json.dumps(pack_stats(rest[0])))
        elif what == "start":
            print(json.dumps(start_methods()))
        else:
            print(json.dumps(child(what, rest)))
        return 0

    cores = os.cpu_count() or 1
    print("%d cores, Python %s; free cores now: %.2f"
          % (cores, sys.version.split()[0], free_cores()))
    starts = in_child("start")
    for method, (first, then) in starts.items():
        print("start method %-10s first process %4.0f ms, then %4.0f ms each"
              % (method, first * 1000, then * 1000))
    for kind in args.profiles.split(","):
        if kind in RECORDED and not os.path.exists(PROFILES[kind][0]):
            print("\n%s: skipped (record it first: %s)" % (kind, RECORDED[kind]))
            continue
        paths = copies(kind, args.copies)
        p = in_child("pack", paths[0])
        print("\n%s: %.1f MB, %d nodes, %d node-step records; one load %.2f s"
              % (kind, p["file"] / 1e6, p["nodes"], p["records"], p["load"]))
        print("  summary %.2f MB (%.1f%% of the file, %.0fx smaller); pack %.2f s, "
              "unpack %.2f s" % (p["size"] / 1e6, 100.0 * p["size"] / p["file"],
                                  p["file"] / p["size"], p["pack"], p["unpack"]))
        modes = [("1", "1 core (in-process)"), ("pool1", "pool, 1 process"),
                 ("2", "pool, 2 processes")]
        if cores > 2:
            modes.append((str(cores), "pool, %d processes" % cores))
        # Runs of the modes interleave and the fastest counts: other work on the
        # machine only ever adds time.
        walls: dict[str, list[float]] = {mode: [] for mode, _ in modes}
        rss: dict[str, float] = {mode: 0.0 for mode, _ in modes}
        for _ in range(args.runs):
            for mode, _ in modes:
                r = in_child(mode, *paths)
                walls[mode].append(r["wall"])
                rss[mode] = max(rss[mode], r["rss_mb"])
        print("  %d copies             best s  speed-up  median s  peak RSS of the process "
              "holding them, MB" % args.copies)
        base = min(walls["1"])
        for mode, label in modes:
            print("  %-20s %7.2f  %7.2fx  %8.2f  %6.0f"
                  % (label, min(walls[mode]), base / min(walls[mode]),
                     statistics.median(walls[mode]), rss[mode]))
        print("  free cores after: %.2f (load average %.2f)"
              % (free_cores(), os.getloadavg()[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
