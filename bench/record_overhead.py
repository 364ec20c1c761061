#!/usr/bin/env python3
"""What ``tfprof record`` costs a training job, and what arming costs any Python process.

Run with a Python that has the framework and tfprof-shell::

    python bench/record_overhead.py                    # all TF kinds; 400 steps; 5 runs
    python bench/record_overhead.py --kinds tf1 --steps 1000 --runs 3
    python bench/record_overhead.py --kinds torch,torch_tiny   # PyTorch (framework_workload.py)
    python bench/record_overhead.py --kinds jax,jax_tiny       # JAX

For each training loop of bench/record_workload.py, in separate processes
taking turns (medians of --runs):

* ``plain``: the program alone;
* ``armed``: under ``tfprof record --warmup 1000000000``: every hook counts
  steps but none is ever traced (the cost of watching);
* ``record``: under ``tfprof record`` with its defaults (10 warm-up steps, 5
  traced steps, files written during the loop).

It reports medians of the loop's wall and CPU time (measured inside the
program), of the whole process's wall time, and of the time the recorder
says it spent on its own work (``recorder_seconds`` in process.json: writing
files, building the op log, starting and saving the profiler session). The ``*_tiny`` kinds run 10x the steps of a
one-op step, to show the per-call cost of watching. Then arming alone: ``python -c pass`` with and without
the armed sitecustomize (medians of 30 runs, and ``-X importtime``'s figure
for the sitecustomize module), the cost of importing the framework armed
(the recorder is set up then), and the cost of watching one call of a one-op
``Session.run`` and ``tf.function``, PyTorch optimizer update or JAX jitted
call (in one process, wrapped and unwrapped taking turns).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKLOAD = os.path.join(HERE, "record_workload.py")
FRAMEWORK_WORKLOAD = os.path.join(HERE, "framework_workload.py")
#: The kinds framework_workload.py runs (the others are record_workload.py's, TensorFlow).
FRAMEWORK_KINDS = ("torch", "torch_tiny", "jax", "jax_tiny")
sys.path.insert(0, ROOT)

from tfprof_shell.record import settings  # noqa: E402

MODES = {"plain": None, "armed": ["--warmup", "1000000000"], "record": []}


#: ``--threads N``: the framework's CPU threads (0: its default), for steadier figures on a
#: machine shared with other work.
THREADS = 0


def _env() -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", settings.ENV_VAR, "PYTHONDONTWRITEBYTECODE")}
    if THREADS:
        env["OMP_NUM_THREADS"] = str(THREADS)  # PyTorch's intra-op threads
        env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false"  # XLA's Eigen pool
    env["PYTHONPATH"] = ROOT
    # as installed, from compiled bytecode (kept outside the checkout)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "tfprof_bench_pycache")
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return env


def run_once(kind: str, steps: int, mode: str) -> tuple[float, float, float, float]:
    """(loop wall s, loop CPU s, process wall s, recorder's own s) of one run."""
    workload = FRAMEWORK_WORKLOAD if kind in FRAMEWORK_KINDS else WORKLOAD
    program = [sys.executable, workload, kind, str(steps)]
    out_dir = tempfile.mkdtemp(prefix="record_bench_")
    shutil.rmtree(out_dir)
    options = MODES[mode]
    argv = program if options is None else (
        [sys.executable, "-m", "tfprof_shell", "record", "-o", out_dir] + options + ["--"] + program)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=_env(), capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    own = 0.0
    if options is not None:
        with open(os.path.join(out_dir, "manifest.json")) as fh:
            own = sum(p.get("recorder_seconds") or 0 for p in json.load(fh)["processes"])
    shutil.rmtree(out_dir, ignore_errors=True)
    loop = json.loads(done.stdout.strip().splitlines()[-1])
    return loop["loop_seconds"], loop["loop_cpu_seconds"], wall, own


def bench_training(kinds: list[str], steps: int, runs: int) -> None:
    for kind in kinds:
        n = steps * 10 if kind.endswith("_tiny") else steps
        times: dict[str, list[tuple[float, float, float, float]]] = {m: [] for m in MODES}
        for _ in range(runs):
            for mode in MODES:  # modes take turns, so a slow spell hits each
                times[mode].append(run_once(kind, n, mode))
        base = [statistics.median(t[i] for t in times["plain"]) for i in range(3)]
        print("\n%s, %d steps, medians of %d runs" % (kind, n, runs))
        print("| mode   | loop wall (s) | vs plain | loop CPU (s) | vs plain | process wall (s) "
              "| vs plain | recorder's own work (s) |")
        print("|--------|---------------|----------|--------------|----------|------------------"
              "|----------|-------------------------|")
        for mode, rows in times.items():
            m = [statistics.median(t[i] for t in rows) for i in range(4)]
            print("| %-6s | %13.3f | %+7.1f%% | %12.3f | %+7.1f%% | %16.2f | %+7.1f%% | %23.3f |"
                  % (mode, m[0], 100 * (m[0] / base[0] - 1), m[1], 100 * (m[1] / base[1] - 1),
                     m[2], 100 * (m[2] / base[2] - 1), m[3]))


def framework_of(kind: str) -> str:
    """The framework a benchmark kind runs ("tensorflow", "torch" or "jax")."""
    return kind.split("_")[0] if kind in FRAMEWORK_KINDS else "tensorflow"


def bench_per_call(framework: str, batches: int = 300) -> None:
    if framework == "tensorflow":
        argv, whats = [WORKLOAD, "per_call", str(batches)], ("Session.run", "tf.function")
    else:
        argv = [FRAMEWORK_WORKLOAD, "per_call", framework, str(batches)]
        whats = ("optimizer step",) if framework == "torch" else ("jitted call",)
    done = subprocess.run([sys.executable] + argv, env=_env(), capture_output=True, text=True,
                          check=True)
    best = json.loads(done.stdout.strip().splitlines()[-1])
    print("\nwatching cost per call (one-op steps, fastest of %d batches of 100 calls):" % batches)
    for what in whats:
        plain, watched = best[what + " plain"], best[what + " watched"]
        print("  %-14s %6.1f us plain, %6.1f us watched: +%.1f us"
              % (what, 1e6 * plain, 1e6 * watched, 1e6 * (watched - plain)))


def bench_import(framework: str, runs: int = 9) -> None:
    """What arming costs when the framework is imported (``hooks.imported``, timed in-process)."""
    imports, arms = [], []
    for _ in range(runs):
        done = subprocess.run([sys.executable, FRAMEWORK_WORKLOAD, "import", framework],
                              env=_env(), capture_output=True, text=True, check=True)
        doc = json.loads(done.stdout.strip().splitlines()[-1])
        imports.append(doc["import_seconds"])
        arms.append(doc["arm_seconds"])
    print("\nimport %s, %d runs: the import %.0f ms (median wall); then arming the recorder "
          "%.2f ms CPU (median), %.2f ms (min)"
          % (framework, runs, 1000 * statistics.median(imports), 1000 * statistics.median(arms),
             1000 * min(arms)))


def bench_arming(runs: int = 30) -> None:
    plain = {k: v for k, v in _env().items() if k != "PYTHONPATH"}
    armed = dict(plain, PYTHONPATH=settings.ARMED_DIR,
                 TFPROF_RECORD=settings.encode(settings.Settings(dir="/nonexistent")))
    walls: dict[str, list[float]] = {"plain": [], "armed": []}
    for _ in range(runs):
        for name, env in (("plain", plain), ("armed", armed)):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
            walls[name].append(time.perf_counter() - t0)
    own = []
    for _ in range(10):
        err = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], env=armed,
                             capture_output=True, text=True, check=True).stderr
        rows = [line.split("|") for line in err.splitlines() if line.endswith("|   sitecustomize")]
        own.append(int(rows[0][1]))
    a, p = statistics.median(walls["armed"]), statistics.median(walls["plain"])
    print("\narming, `python -c pass`, medians of %d runs: plain %.1f ms, armed %.1f ms "
          "(+%.2f ms); the sitecustomize module itself (-X importtime, with the one it "
          "chains to): median %.2f ms, min %.2f ms"
          % (runs, 1000 * p, 1000 * a, 1000 * (a - p), statistics.median(own) / 1000,
             min(own) / 1000))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kinds", default="tf1,tf2,keras,tf1_tiny,tf2_tiny")
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0,
                        help="PyTorch/XLA CPU threads (default: the framework's own)")
    args = parser.parse_args()
    global THREADS
    THREADS = args.threads
    kinds = args.kinds.split(",")
    frameworks = sorted({framework_of(k) for k in kinds})
    bench_arming()
    for framework in frameworks:
        if framework != "tensorflow":
            bench_import(framework)
        bench_per_call(framework)
    bench_training(kinds, args.steps, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
