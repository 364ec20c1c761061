"""`tfprof capture` and `tfprof top` against a real TensorFlow 2 program's profiler server.

tests/live_scripts/tf_loop.py trains a small model and starts the server with
tf.profiler.experimental.server.start(port). Needs TensorFlow (2.21: the
XSpace comes back in the response) and grpcio.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import ROOT, needs, run_cli

needs("tensorflow")
needs("grpc", "tensorflow")
pytestmark = pytest.mark.tensorflow

from live_targets import free_port, serving, spawn_tfprof, xplanes  # noqa: E402

SCRIPT = os.path.join(ROOT, "tests", "live_scripts", "tf_loop.py")


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("tf_target")
    with serving(SCRIPT, str(cwd)) as address:
        yield address, cwd


def test_capture_a_tensorflow_job(target, tmp_path):
    address, target_cwd = target
    t0 = time.monotonic()
    run = run_cli(["capture", address, "--duration", "1", "-o", str(tmp_path / "c"), "op",
                   "-order_by", "micros"])
    assert run.code == 0, run.err
    assert time.monotonic() - t0 < 30
    (path,) = xplanes(tmp_path / "c")
    assert os.path.getsize(path) > 10_000
    assert "MatMul" in run.out
    assert os.listdir(target_cwd) == []  # the server wrote nothing on its disk


def test_top_shows_two_windows_then_frees_the_target(target, tmp_path):
    address, _ = target
    run = run_cli(["top", address, "--interval", "0.5", "--iterations", "2",
                   "--keep", str(tmp_path / "keep")])
    assert run.code == 0, run.err
    assert run.out.count("tfprof top %s   snapshot" % address) == 2
    assert "MatMul" in run.out
    assert len(xplanes(tmp_path / "keep")) == 2
    # the continuous session was stopped: a capture may start at once
    again = run_cli(["capture", address, "--duration", "0.2", "--no-shell", "-o",
                     str(tmp_path / "c")])
    assert again.code == 0, again.err


def test_a_second_capture_meanwhile_is_refused(target, tmp_path):
    address, _ = target
    first = threading.Thread(target=run_cli, args=(["capture", address, "--duration", "3",
                                                    "--no-shell", "-o",
                                                    str(tmp_path / "a")],))
    first.start()
    time.sleep(1.5)
    second = run_cli(["capture", address, "-o", str(tmp_path / "b")])
    first.join()
    assert second.code == 1 and "another profiling session is active" in second.err
    assert len(xplanes(tmp_path / "a")) == 1


def test_ctrl_c_ends_a_long_capture_with_its_trace(target, tmp_path):
    address, _ = target
    proc = spawn_tfprof(["capture", address, "--duration", "60", "--no-shell", "-o", "c"],
                        str(tmp_path))
    time.sleep(4)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert time.monotonic() - t0 < 15
    (path,) = xplanes(tmp_path / "c")
    assert os.path.getsize(path) > 10_000


def test_record_serve_arms_an_unmodified_program(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tfprof_shell", "record", "--serve", str(port), "--",
         sys.executable, SCRIPT, "0", "600"], cwd=str(tmp_path),
        env=dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="2"),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("training"), proc.stderr.read() if proc.poll() else line
        run = run_cli(["capture", "localhost:%d" % port, "--duration", "1", "-o",
                       str(tmp_path / "c"), "op"])
        assert run.code == 0, run.err
        assert "MatMul" in run.out
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert "profiler server on port %d" % port in err
    assert sorted(os.listdir(tmp_path)) == ["c"]  # nothing traced or written until captured
