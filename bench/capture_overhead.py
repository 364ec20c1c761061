#!/usr/bin/env python3
"""What live capture costs: its latency, and the slowdown of the target while it is captured.

Run with a Python that has the framework, grpcio and tfprof-shell::

    python bench/capture_overhead.py --framework tf      # or jax; --runs 3

One target process (bench/capture_target.py: an MLP training loop with the
framework's profiler server) is captured in turns, with quiet gaps between:

* ``capture``: ``tfprof capture`` of 2 s, default tracers (probe + Profile + write);
* ``capture --python_tracer``: the same with Python calls traced;
* ``top``: a continuous session with a snapshot every second (3 snapshots).

The target records when each step ends; the step rate inside each mode's
windows is compared with the rate in the quiet gaps (the overhead). Then
``record --serve``: the target unmodified, run plain and under
``tfprof record --serve`` (server up, never captured), taking turns.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGET = os.path.join(HERE, "capture_target.py")
sys.path.insert(0, ROOT)

from tfprof_shell.capture.client import Client, parse_target  # noqa: E402
from tfprof_shell.capture.flags import Settings  # noqa: E402
from tfprof_shell.capture.grab import capture, options_of, xspace_of  # noqa: E402
from tfprof_shell.proto import profiler_service_pb2 as pb  # noqa: E402


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(argv: list[str]) -> subprocess.Popen:
    proc = subprocess.Popen(argv, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    line = proc.stdout.readline()
    if not line.startswith("training"):
        raise SystemExit("target did not start: " + proc.stderr.read()[-2000:])
    return proc


def _ends(proc: subprocess.Popen) -> list[float]:
    out, _ = proc.communicate(timeout=600)
    return json.loads(out.strip().splitlines()[-1])


def _rate(ends: list, windows: list[tuple[float, float]]) -> float:
    """Steps per second over the windows (steps ending inside them)."""
    steps = sum(1 for t, _ in ends for a, b in windows if a <= t < b)
    seconds = sum(b - a for a, b in windows)
    return steps / seconds if seconds else 0.0


def _cpu_ms(ends: list, windows: list[tuple[float, float]]) -> float:
    """The target's CPU milliseconds per step, over the steps ending inside the windows."""
    spent = [(c - ends[i - 1][1]) for i, (t, c) in enumerate(ends)
             if i and any(a <= t < b for a, b in windows)]
    return 1000 * sum(spent) / len(spent) if spent else 0.0


def captured_modes(framework: str, runs: int) -> list[dict]:
    port = _port()
    address = "localhost:%d" % port
    seconds = 6 + runs * 2 * 5.5 + 8
    proc = _start([sys.executable, TARGET, framework, str(port), str(seconds)])
    t_start = time.monotonic()
    busy: list[tuple[float, float]] = []
    rows: dict[str, dict] = {}
    time.sleep(4)
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(runs):
            for name, python in (("capture", False), ("capture --python_tracer", True)):
                settings = Settings(duration=2.0, python_tracer=python,
                                    output=os.path.join(tmp, "%s_%d" % (name[-6:], i)))
                t0 = time.monotonic()
                done = capture([address], settings)
                t1 = time.monotonic()
                busy.append((t0, t1))
                row = rows.setdefault(name, {"latency": [], "call": [], "bytes": [],
                                             "windows": []})
                row["latency"].append(t1 - t0)
                row["call"].append(done.files[0].seconds)
                row["bytes"].append(done.files[0].size)
                row["windows"].append((t0, t1))
                time.sleep(2.5)
        client = Client(parse_target(address), Settings())
        t0 = time.monotonic()
        client.call("StartContinuousProfiling", pb.ProfileRequest(opts=options_of(Settings(), 0)),
                    pb.ContinuousProfilingResponse, 10)
        row = rows.setdefault("top (1 s interval)", {"latency": [], "call": [], "bytes": [],
                                                     "windows": []})
        for _ in range(3):
            time.sleep(1.0)
            s0 = time.monotonic()
            data = xspace_of(client.call("GetSnapshot", pb.GetSnapshotRequest(),
                                         pb.ProfileResponse, 60))
            row["call"].append(time.monotonic() - s0)
            row["bytes"].append(len(data))
        client.call("StopContinuousProfiling", pb.StopContinuousProfilingRequest(),
                    pb.StopContinuousProfilingResponse, 10)
        t1 = time.monotonic()
        client.close()
        busy.append((t0, t1))
        row["windows"].append((t0, t1))
        row["latency"].append((t1 - t0) / 3)
    ends = _ends(proc)
    t_end = ends[-1][0]
    quiet, last = [], t_start + 1.0
    for a, b in sorted(busy):
        if a - 0.3 > last:
            quiet.append((last, a - 0.3))
        last = b + 0.3
    quiet.append((last, t_end))
    base, base_cpu = _rate(ends, quiet), _cpu_ms(ends, quiet)
    out = [{"mode": "no capture (quiet gaps)", "steps_per_s": base, "cpu_ms": base_cpu}]
    for name, row in rows.items():
        rate, cpu = _rate(ends, row["windows"]), _cpu_ms(ends, row["windows"])
        out.append({"mode": name, "latency_s": statistics.median(row["latency"]),
                    "rpc_s": statistics.median(row["call"]),
                    "mb": statistics.median(row["bytes"]) / 2 ** 20,
                    "steps_per_s": rate, "slowdown": 1 - rate / base if base else 0,
                    "cpu_ms": cpu, "cpu_more": cpu / base_cpu - 1 if base_cpu else 0})
    return out


def serve_mode(framework: str, runs: int, seconds: float) -> list[dict]:
    rates: dict[str, list[float]] = {"plain": [], "record --serve (never captured)": []}
    cpus: dict[str, list[float]] = {name: [] for name in rates}
    for _ in range(runs):
        for name in rates:
            target = [sys.executable, TARGET, framework, "0", str(seconds)]
            argv = target if name == "plain" else (
                [sys.executable, "-m", "tfprof_shell", "record", "--serve", str(_port()), "--"]
                + target)
            ends = _ends(_start(argv))
            rates[name].append((len(ends) - 1) / (ends[-1][0] - ends[0][0]))
            cpus[name].append(1000 * (ends[-1][1] - ends[0][1]) / (len(ends) - 1))
    base = statistics.median(rates["plain"])
    base_cpu = statistics.median(cpus["plain"])
    return [{"mode": n, "steps_per_s": statistics.median(r),
             "slowdown": 1 - statistics.median(r) / base,
             "cpu_ms": statistics.median(cpus[n]),
             "cpu_more": statistics.median(cpus[n]) / base_cpu - 1} for n, r in rates.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--framework", choices=("tf", "jax"), default="tf")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--serve_seconds", type=float, default=8.0)
    args = parser.parse_args()
    rows = captured_modes(args.framework, args.runs) + serve_mode(args.framework, args.runs,
                                                                  args.serve_seconds)
    print("| %s mode | latency s | Profile/GetSnapshot call s | MB | target steps/s | "
          "slowdown | target CPU ms/step | CPU more |" % args.framework)
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s | %.0f | %s | %.2f | %s |" % (
            r["mode"], "%.2f" % r["latency_s"] if "latency_s" in r else "",
            "%.2f" % r["rpc_s"] if "rpc_s" in r else "", "%.2f" % r["mb"] if "mb" in r else "",
            r["steps_per_s"], "%+.0f%%" % (100 * r["slowdown"]) if "slowdown" in r else "",
            r["cpu_ms"], "%+.0f%%" % (100 * r["cpu_more"]) if "cpu_more" in r else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
