"""`tfprof capture` and `tfprof top` against a real JAX program's profiler server.

tests/live_scripts/jax_loop.py trains a small model and starts the server with
jax.profiler.start_server(port). The captures are checked by their content
(the host plane holds the program's step annotations and jitted function) and
by their views (XLA:CPU's dot shows in op).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from conftest import ROOT, needs, run_cli

needs("jax")
needs("grpc", "jax")
pytestmark = pytest.mark.jax

from live_targets import env, free_port, serving, xplanes  # noqa: E402

from tfprof_shell.proto import xplane_pb2  # noqa: E402

SCRIPT = os.path.join(ROOT, "tests", "live_scripts", "jax_loop.py")


def _event_names(path):
    with open(path, "rb") as fh:
        space = xplane_pb2.XSpace.FromString(fh.read())
    return {m.name for plane in space.planes for m in plane.event_metadata.values()}


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("jax_target")
    with serving(SCRIPT, str(cwd)) as address:
        yield address, cwd


def test_capture_a_jax_job(target, tmp_path):
    address, target_cwd = target
    run = run_cli(["capture", address, "--duration", "1", "-o", str(tmp_path / "c"), "op"])
    assert run.code == 0, run.err
    (path,) = xplanes(tmp_path / "c")
    assert {"train", "PjitFunction(step)"} <= _event_names(path)
    assert "\ndot " in run.out
    assert os.listdir(target_cwd) == []


def test_top_on_a_jax_job_for_two_windows(target, tmp_path):
    address, _ = target
    run = run_cli(["top", address, "--interval", "0.5", "--iterations", "2",
                   "--keep", str(tmp_path / "keep")])
    assert run.code == 0, run.err
    assert run.out.count("tfprof top %s   snapshot" % address) == 2
    assert "\ndot " in run.out
    kept = xplanes(tmp_path / "keep")
    assert len(kept) == 2 and all("train" in _event_names(p) for p in kept)
    again = run_cli(["capture", address, "--duration", "0.2", "--no-shell", "-o",
                     str(tmp_path / "c")])
    assert again.code == 0, again.err


def test_record_serve_arms_an_unmodified_jax_program(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfprof_shell", "record", "--serve", str(port), "--",
         sys.executable, SCRIPT, "0", "600"], cwd=str(tmp_path), env=env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("training"), proc.stderr.read() if proc.poll() else line
        run = run_cli(["capture", "localhost:%d" % port, "--duration", "1", "--no-shell",
                       "-o", str(tmp_path / "c")])
        assert run.code == 0, run.err
        (path,) = xplanes(tmp_path / "c")
        assert "train" in _event_names(path)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert "profiler server on port %d" % port in err
    assert sorted(os.listdir(tmp_path)) == ["c"]
