"""Helpers of the live-capture tests: start a target program, find free ports and written files."""

from __future__ import annotations

import glob
import os
import socket
import subprocess
import sys
from contextlib import contextmanager
from typing import Iterator, Sequence

from conftest import ROOT


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def env() -> dict:
    """The environment for child processes: this checkout first, quiet TensorFlow."""
    return dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2")


def start_target(argv: Sequence[str], cwd: str) -> subprocess.Popen:
    """Start a target program and wait until it prints its "training" line."""
    proc = subprocess.Popen(list(argv), cwd=cwd, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("training"):
        proc.kill()
        raise RuntimeError("the target did not start: %s" % proc.stderr.read()[-2000:])
    return proc


@contextmanager
def serving(script: str, cwd: str) -> Iterator[str]:
    """Run ``script PORT 600`` (a training loop with the profiler server on PORT) in
    ``cwd`` while the block runs; yields its address."""
    port = free_port()
    proc = start_target([sys.executable, script, str(port), "600"], cwd)
    try:
        yield "localhost:%d" % port
    finally:
        proc.kill()
        proc.wait()


def spawn_tfprof(args: Sequence[str], cwd: str) -> subprocess.Popen:
    """``python -m tfprof_shell ARGS`` as a child (to send it signals)."""
    return subprocess.Popen([sys.executable, "-m", "tfprof_shell"] + list(args), cwd=cwd,
                            env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def xplanes(folder) -> list:
    """The .xplane.pb files under ``folder``."""
    return sorted(glob.glob(os.path.join(str(folder), "**", "*.xplane.pb"), recursive=True))
